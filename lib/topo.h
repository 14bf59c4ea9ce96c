/* topo.h: PCI distance between a GPU and an adapter, exactly as NCCL computes it
 * (../shared/notes/nccl-semantics.md, "GPU to NIC distance").
 */
#ifndef RP_TOPO_H
#define RP_TOPO_H

#include "node.h"

/* Ordered from best to worst, so "path <= gdr_level" reads as NCCL's test. */
enum rp_path { RP_PATH_PIX = 0, RP_PATH_PXB, RP_PATH_PHB, RP_PATH_SYS };

const char *rp_path_str(enum rp_path p);              /* "PIX", "PXB", "PHB", "SYS" */
/* Parse a NCCL_NET_GDR_LEVEL value: a name (PIX, PXB, PHB, SYS, and LOC/NVL/... as NCCL accepts)
 * or NCCL's integer form. Returns 0 or -EINVAL. */
int rp_path_parse(const char *s, enum rp_path *path_p);

/* The path type between a GPU and an adapter of the node. */
enum rp_path rp_topo_path(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_hca *hca);

#endif
