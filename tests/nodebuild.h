/* nodebuild.h: nodes built in memory for the tests of NCCL's rules (test_nccl.c, test_nccl_rules.c):
 * an rp_node as discovery would fill it, adapter by adapter, port by port, GID by GID, without a
 * fixture tree. Every function asserts (cmocka) that its allocation worked; rp_test_node_free()
 * releases what they added. */
#ifndef RP_TESTS_NODEBUILD_H
#define RP_TESTS_NODEBUILD_H

#include "discover/node.h"

/* Append adapter `name` (a CA, not in verbs' list as far as anyone knows, NUMA node -1). pci_path:
 * the function's path under the sysfs root ("devices/pci0000:00/0000:00:01.0/0000:3b:00.0"), whose
 * last component becomes the PCI address; NULL: no PCI device (a soft device). */
struct rp_hca *rp_test_hca(struct rp_node *n, const char *name, const char *pci_path);
/* Append port num in `state` (ACTIVE: physical state LinkUp, else Disabled) on link layer ll. */
struct rp_port *rp_test_port(struct rp_hca *h, int num, int state, enum rp_link_layer ll);
/* Append the next GID entry; text in any inet_pton(AF_INET6) form, NULL for an empty entry. */
void rp_test_gid(struct rp_port *p, const char *text, enum rp_gid_type type);
/* The usual mlx5 RoCE table: 0 fe80 v1, 1 fe80 v2, 2 addr v1, 3 addr v2, then 4 and 5 empty.
 * addr in IPv6 text ("::ffff:10.0.0.1" for IPv4). */
void rp_test_gid_table(struct rp_port *p, const char *addr);
/* Append an InfiniBand port whose GID 0 is gid0 (subnet prefix + GUID). */
struct rp_port *rp_test_ib_port(struct rp_hca *h, int num, int state, const char *gid0);
/* A node of count IB adapters mlx5_0..mlx5_<count-1>, one ACTIVE port each, one subnet. */
void rp_test_ib_node(struct rp_node *n, int count);
/* Free every adapter, port, GID and GPU added, and clear *n. */
void rp_test_node_free(struct rp_node *n);

#endif
