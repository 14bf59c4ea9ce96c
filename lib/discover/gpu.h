/* gpu.h: the node's GPUs (lib/discover/node_gpus.c), and GPUs as the CUDA runtime sees them
 * (lib/discover/gpu_cuda.c, built only with CUDA).
 *
 * Without CUDA, or with CUDA but no usable GPU/driver, rp_gpu_cuda_list() returns -ENODEV and the
 * caller (rp_node_discover) falls back to a PCI scan of sysfs. A failing cudaGetDeviceCount() just
 * means "no GPU": it is not logged as an error.
 *
 * Memory: on success *gpus_p is a calloc'ed array of *n_p entries that the caller frees with free().
 * Each entry has index, pci (lowercase "dddd:bb:dd.f") and name filled; pci_path and numa_node are
 * left for the caller (-1 / "") since they come from sysfs.
 */
#ifndef RP_GPU_H
#define RP_GPU_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "discover/node.h"

/* The node's GPUs into node->gpus (gpu_source "cuda", "pci-scan" or "none"): the CUDA runtime's list
 * unless fixture (a sysfs fixture has no CUDA), else NVIDIA display and 3D controllers found in
 * bus/pci/devices; every entry's PCI path and NUMA node from sysfs. 0 or -ENOMEM. */
int rp_node_find_gpus(struct rp_node *node, bool fixture);

#ifdef HAVE_CUDA
int rp_gpu_cuda_list(struct rp_gpu **gpus_p, size_t *n_p);
#else
static inline int rp_gpu_cuda_list(struct rp_gpu **gpus_p, size_t *n_p)
{
	(void)gpus_p;
	(void)n_p;
	return -ENODEV;
}
#endif

#endif
