/* topo.h: PCI distance and path bandwidth between a GPU and an adapter, as NCCL 2.30.7 computes them
 * (src/graph/xml.cc, topo.cc, paths.cc; the details, including adapters not on PCI, the merged
 * NIC bus id and numa_node -1, are at the head of topo.c).
 *
 * Memory: nothing is allocated or kept; the node is only read (its sysfs_root too, for numa_node and
 * switch ids along the PCI paths).
 */
#ifndef RP_TOPO_H
#define RP_TOPO_H

#include <stdbool.h>
#include <stdint.h>

#include "discover/node.h"
#include "discover/topo_cpu.h"

/* Ordered from best to worst, so "path <= gdr_level" reads as NCCL's test. RP_PATH_LOC is only a
 * NCCL_NET_GDR_LEVEL value (LOC, NVL, NVB, C2C or 0: no PCI path qualifies, GPUDirect is never used);
 * rp_topo_path() never returns it. */
enum rp_path { RP_PATH_LOC = -1, RP_PATH_PIX = 0, RP_PATH_PXB, RP_PATH_PHB, RP_PATH_SYS };

const char *rp_path_str(enum rp_path p);              /* "LOC", "PIX", "PXB", "PHB", "SYS" */
/* Parse a NCCL_NET_GDR_LEVEL value: a name (PIX, PXB, PHB, SYS, and LOC/NVL/NVB/C2C/PXN as NCCL
 * accepts them: the first four as RP_PATH_LOC, PXN as PXB since no GPU-NIC PCI path is of type PXN)
 * or NCCL's old integer form (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and above SYS). Returns 0 or -EINVAL;
 * does not log. */
int rp_path_parse(const char *s, enum rp_path *path_p);

/* How NCCL merges a NIC's bus id before its topology sees it (ncclIbGetPciPath; nccl.h derives it
 * per release: rp_nccl_topo_merge()). */
struct rp_topo_merge {
	bool off;                     /* 2.24.3 to 2.26.6: the real bus id */
	bool one_digit;               /* 2.18.1: only the last device digit is zeroed */
	bool vfs;                     /* NCCL_IB_MERGE_VFS (default 1): zero the device digits at all */
	/* And the release's other topology rules: */
	bool gpu_link_nvml;           /* 2.30.7: a GPU's own link from NVML's current generation and width */
	uint32_t version;             /* the release, for the CPU classes (topo_cpu.h); 0: the newest */
};
extern const struct rp_topo_merge rp_topo_merge_newest;   /* 2.30.7 with NCCL_IB_MERGE_VFS=1 */

/* The path type between a GPU and an adapter of the node. Reads numa_node files under
 * node->sysfs_root along the PCI paths (as NCCL does); never fails: what cannot be read counts as
 * NCCL counts it (see topo.c). */
enum rp_path rp_topo_path(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_hca *hca);
/* The same under a given merge (rp_topo_path() uses rp_topo_merge_newest). */
enum rp_path rp_topo_path_m(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_hca *hca,
			    const struct rp_topo_merge *m);

/* The bandwidth NCCL gives the path between a GPU and an adapter, GB/s: the narrowest of the PCI
 * links on the way (each width * per-lane rate from max_link_width/max_link_speed, as NCCL reads
 * them; since 2.30.7 the GPU's own link from NVML's current generation and width, which sysfs has
 * as current_link_speed/width), the adapter's fastest ACTIVE port, and across CPUs NCCL's
 * inter-CPU figure for the machine's CPU (topo_cpu.h). */
float rp_topo_path_bw(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_hca *hca);
float rp_topo_path_bw_m(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_hca *hca,
			const struct rp_topo_merge *m);

/* The adapters nearest to gpu as NCCL picks them (ncclTopoGetLocal): the widest path
 * (rp_topo_path_bw) first, then the smallest path type, over the adapters that are usable (no
 * unusable_reason; all of them when none is usable), ties all listed in node order. Writes up to max
 * indexes into node->hcas to idx_out and returns how many there are (may exceed max). */
size_t rp_topo_nearest(const struct rp_node *node, const struct rp_gpu *gpu, size_t *idx_out, size_t max);
/* The same under a given merge (rp_topo_nearest() uses rp_topo_merge_newest). */
size_t rp_topo_nearest_m(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_topo_merge *m,
			 size_t *idx_out, size_t max);

/* The GPU nearest to hca among those with a CUDA index (widest path, then smallest path type,
 * lowest CUDA index on a tie), for placing a buffer next to the adapter under test (--gpu nearest): its position in
 * node->gpus, or -1 when no GPU has a CUDA index. *path_p gets its path type when not NULL. */
int rp_topo_nearest_gpu(const struct rp_node *node, const struct rp_hca *hca, enum rp_path *path_p);
/* The same under a given merge (rp_topo_nearest_gpu() uses rp_topo_merge_newest). */
int rp_topo_nearest_gpu_m(const struct rp_node *node, const struct rp_hca *hca, const struct rp_topo_merge *m,
			  enum rp_path *path_p);

#endif
