/* nccl.h: NCCL's rules, exactly (../shared/notes/nccl-semantics.md): which (device, port) pairs
 * NCCL_IB_HCA selects, which GID index a RoCE port uses, and whether a GPU would use GPUDirect RDMA.
 * Pure functions over struct rp_node: no I/O beyond reading the environment in rp_nccl_env_load().
 *
 * (The selection, warnings and recommendation API is added below by the NCCL rules module.)
 */
#ifndef RP_NCCL_H
#define RP_NCCL_H

#include <stdbool.h>

#include "node.h"
#include "topo.h"

/* The NCCL variables that change the answer. */
struct rp_nccl_env {
	const char *ib_hca;           /* NCCL_IB_HCA; NULL when unset */
	int gid_index;                /* NCCL_IB_GID_INDEX; -1 = automatic (NCCL >= 2.21 default) */
	int addr_family;              /* NCCL_IB_ADDR_FAMILY: AF_INET (default) or AF_INET6 */
	const char *addr_range;       /* NCCL_IB_ADDR_RANGE "addr/len"; NULL when unset */
	int roce_version;             /* NCCL_IB_ROCE_VERSION_NUM: 2 (default) or 1 */
	enum rp_path gdr_level;       /* NCCL_NET_GDR_LEVEL: default PXB */
};

/* Defaults, as NCCL has them with no variable set. */
void rp_nccl_env_default(struct rp_nccl_env *env);
/* Defaults overridden by the process environment. A malformed value is an error (-EINVAL, logged
 * naming the variable), not silently ignored. */
int rp_nccl_env_load(struct rp_nccl_env *env);

/* The GID index NCCL uses on this port: the override or the automatic rule on Ethernet (RoCE);
 * 0 on InfiniBand; -1 when the automatic rule finds no usable GID. */
int rp_nccl_gid_index(const struct rp_port *port, const struct rp_nccl_env *env);

#endif
