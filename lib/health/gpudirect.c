/* gpudirect.c: the GPUDirect facts that need no CUDA: NCCL's GDR level test and nvidia-peermem. */
#include "health/gpudirect.h"

#include <stdio.h>
#include <unistd.h>

#include "base/log.h"

/* The path type's name as NCCL prints it. */
static const char *gdr_path_name(enum rp_path p)
{
	static const char *const names[] = { "PIX", "PXB", "PHB", "SYS" };

	return (unsigned)p < RP_ARRAY_SIZE(names) ? names[p] : "?";
}

bool rp_gdr_warn_unused(const char *gpu_label, const char *hca_name, enum rp_path path,
			enum rp_path gdr_level)
{
	if (rp_gdr_used(path, gdr_level))
		return false;
	rp_warn("NCCL would not use GPUDirect RDMA between %s and %s: their path is %s, worse than "
		"NCCL_NET_GDR_LEVEL=%s, so NCCL stages through host memory; this test's GPU buffers measure a "
		"path NCCL will not take", gpu_label, hca_name, gdr_path_name(path), gdr_path_name(gdr_level));
	return true;
}

bool rp_gdr_peermem_loaded(const char *sysfs_root)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/module/nvidia_peermem", sysfs_root);
	if (access(path, F_OK) == 0)
		return true;
	snprintf(path, sizeof(path), "%s/kernel/mm/memory_peers/nv_mem/version", sysfs_root);
	return access(path, F_OK) == 0;
}
