/* cuda_shim_cuda.c: driver-API calls through the runtime's entry point table; see cuda_shim.h. */
#include "mem/cuda_shim.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

/* The driver function symbol as of the CUDA version whose ABI matches the typedef used, or NULL with
 * *res_p saying why (the runtime could not reach the driver, or the driver lacks the function). */
static void *cudrv_fn(const char *symbol, unsigned int cuda_version, CUresult *res_p)
{
	enum cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
	void *fn = NULL;
	cudaError_t err;

	err = cudaGetDriverEntryPointByVersion(symbol, &fn, cuda_version, cudaEnableDefault, &status);
	if (err != cudaSuccess) {
		*res_p = CUDA_ERROR_NOT_INITIALIZED;
		return NULL;
	}
	if (!fn || status != cudaDriverEntryPointSuccess) {
		*res_p = CUDA_ERROR_NOT_FOUND;
		return NULL;
	}
	*res_p = CUDA_SUCCESS;
	return fn;
}

CUresult rp_cudrv_attr_get(int *value_p, CUdevice_attribute attr, int device)
{
	CUresult res;
	PFN_cuDeviceGetAttribute_v2000 fn = (PFN_cuDeviceGetAttribute_v2000)cudrv_fn("cuDeviceGetAttribute", 2000, &res);

	return fn ? fn(value_p, attr, (CUdevice)device) : res;
}

CUresult rp_cudrv_dmabuf_get(int *fd_p, CUdeviceptr dptr, size_t size)
{
	CUresult res;
	PFN_cuMemGetHandleForAddressRange_v11070 fn =
		(PFN_cuMemGetHandleForAddressRange_v11070)cudrv_fn("cuMemGetHandleForAddressRange", 11070, &res);

	return fn ? fn(fd_p, dptr, size, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) : res;
}

CUresult rp_cudrv_sync_memops_set(CUdeviceptr dptr)
{
	unsigned int on = 1;
	CUresult res;
	PFN_cuPointerSetAttribute_v6000 fn = (PFN_cuPointerSetAttribute_v6000)cudrv_fn("cuPointerSetAttribute", 6000, &res);

	return fn ? fn(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, dptr) : res;
}

const char *rp_cudrv_strerror(CUresult res, char *buf, size_t size)
{
	CUresult ignored;
	PFN_cuGetErrorName_v6000 name_fn = (PFN_cuGetErrorName_v6000)cudrv_fn("cuGetErrorName", 6000, &ignored);
	PFN_cuGetErrorString_v6000 str_fn = (PFN_cuGetErrorString_v6000)cudrv_fn("cuGetErrorString", 6000, &ignored);
	const char *name = NULL, *text = NULL;

	if (name_fn && name_fn(res, &name) != CUDA_SUCCESS)
		name = NULL;
	if (str_fn && str_fn(res, &text) != CUDA_SUCCESS)
		text = NULL;
	if (name && text)
		snprintf(buf, size, "%s: %s", name, text);
	else if (res == CUDA_ERROR_NOT_INITIALIZED)
		snprintf(buf, size, "CUDA_ERROR_NOT_INITIALIZED: the CUDA runtime could not reach the driver");
	else if (res == CUDA_ERROR_NOT_FOUND)
		snprintf(buf, size, "CUDA_ERROR_NOT_FOUND: this NVIDIA driver lacks the function");
	else
		snprintf(buf, size, "CUDA driver error %d", (int)res);
	return buf;
}
