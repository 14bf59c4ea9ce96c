/* cuda_shim.h: the few CUDA driver-API calls the CUDA backend needs (private to lib/ and its tests).
 *
 * The binary links the CUDA runtime statically and never links libcuda, so that one rdmaprobe runs on
 * hosts with and without the NVIDIA driver. The driver functions are reached through the runtime's
 * entry point table (cudaGetDriverEntryPointByVersion) at each call. Each function returns the
 * driver's CUresult (CUDA_SUCCESS = 0); when the runtime cannot reach the driver the result is
 * CUDA_ERROR_NOT_INITIALIZED, and when the driver lacks the function it is CUDA_ERROR_NOT_FOUND.
 * Nothing here logs: the caller knows what the call was for.
 *
 * The functions live in their own object (cuda_shim_cuda.c) so that tests can replace them with
 * -Wl,--wrap=rp_cudrv_... .
 */
#ifndef RP_CUDA_SHIM_H
#define RP_CUDA_SHIM_H

#include <cuda.h>
#include <stddef.h>

/* cuDeviceGetAttribute(value_p, attr, device). */
CUresult rp_cudrv_attr_get(int *value_p, CUdevice_attribute attr, int device);
/* cuMemGetHandleForAddressRange(fd_p, dptr, size, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0): a dma-buf
 * file descriptor for [dptr, dptr + size), both host-page-aligned. The caller closes *fd_p. */
CUresult rp_cudrv_dmabuf_get(int *fd_p, CUdeviceptr dptr, size_t size);
/* cuPointerSetAttribute(&1, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, dptr). */
CUresult rp_cudrv_sync_memops_set(CUdeviceptr dptr);
/* The driver's name and text for res ("CUDA_ERROR_NOT_SUPPORTED: operation not supported") into buf;
 * "CUDA driver error N" when the driver cannot say. Returns buf. */
const char *rp_cudrv_strerror(CUresult res, char *buf, size_t size);

#endif
