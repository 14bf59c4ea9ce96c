/* gpudirect.h: what the front ends need about GPUDirect RDMA beyond the memory ops: is a CUDA device
 * there, is a GPU index valid, would NCCL use GPUDirect RDMA at a given distance, is nvidia-peermem
 * loaded. GPU buffers themselves are the rp_mem_ops backend "cuda" (mem_cuda.c, see mem.h).
 *
 * Registration of a GPU buffer (rp_mem_ops.reg, spec->gpu_reg):
 *   RP_GPU_REG_AUTO     dmabuf when the driver, the kernel and the adapter support it, else peermem
 *   RP_GPU_REG_DMABUF   dmabuf only: fails (-EOPNOTSUPP, explained) where it is not supported
 *   RP_GPU_REG_PEERMEM  plain ibv_reg_mr on the device pointer (needs the nvidia-peermem module)
 * buf->reg_method says which one was used: "dmabuf" or "peermem".
 */
#ifndef RP_GPUDIRECT_H
#define RP_GPUDIRECT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/log.h"
#include "discover/topo.h"
#include "base/util.h"

/* NCCL's test: GPUDirect RDMA between a GPU and an adapter is used when path <= NCCL_NET_GDR_LEVEL. */
static inline bool rp_gdr_used(enum rp_path path, enum rp_path gdr_level)
{
	return path <= gdr_level;
}

/* Warn (rp_warn) when NCCL would not use GPUDirect RDMA between gpu_label ("cuda:0") and hca_name at
 * this path type under gdr_level; returns true when it warned. */
bool rp_gdr_warn_unused(const char *gpu_label, const char *hca_name, enum rp_path path,
			enum rp_path gdr_level);

/* Whether nvidia-peermem is loaded under sysfs_root ("/sys" or a test fixture):
 * <root>/module/nvidia_peermem or <root>/kernel/mm/memory_peers/nv_mem/version exists. */
bool rp_gdr_peermem_loaded(const char *sysfs_root);

#ifdef HAVE_CUDA
/* Whether at least one CUDA device is usable; *count_p gets the count (0 when none). When none, why
 * says so for a person: "no CUDA device (cudaGetDeviceCount: <runtime's text>)" plus a hint when the
 * NVIDIA kernel driver is not loaded. Does not log. */
bool rp_cuda_present(int *count_p, char *why, size_t why_size);
/* 0 when device is a valid CUDA index on this host; else a negative errno, logged ("cuda:3: this host
 * has 2 CUDA devices (cuda:0..cuda:1)"). */
int rp_cuda_device_check(int device);
#else
static inline bool rp_cuda_present(int *count_p, char *why, size_t why_size)
{
	*count_p = 0;
	rp_strlcpy(why, "this rdmaprobe was built without CUDA", why_size);
	return false;
}

static inline int rp_cuda_device_check(int device)
{
	return rp_error(-EOPNOTSUPP, "cuda:%d: this rdmaprobe was built without CUDA", device);
}
#endif

#endif
