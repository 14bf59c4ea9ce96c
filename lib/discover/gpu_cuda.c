/* gpu_cuda.c: the GPUs the CUDA runtime (linked statically) reports; see gpu.h. */
#include "discover/gpu.h"

#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "base/log.h"
#include "discover/sysfs.h"
#include "base/util.h"

int rp_gpu_cuda_list(struct rp_gpu **gpus_p, size_t *n_p)
{
	struct rp_gpu *gpus;
	int count = 0;
	cudaError_t err;

	err = cudaGetDeviceCount(&count);
	if (err != cudaSuccess || count <= 0) {
		rp_debug("cudaGetDeviceCount: %s: no GPU from the CUDA runtime",
			 err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
		return -ENODEV;
	}
	gpus = calloc((size_t)count, sizeof(*gpus));
	if (!gpus)
		return rp_error(-ENOMEM, "allocate %d GPU entries: out of memory", count);
	for (int i = 0; i < count; i++) {
		struct cudaDeviceProp prop;
		char bus_id[32];

		gpus[i].index = i;
		gpus[i].numa_node = -1;
		err = cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), i);
		if (err != cudaSuccess || rp_sysfs_parse_pci(bus_id, gpus[i].pci))
			rp_warn("cudaDeviceGetPCIBusId for GPU %d: %s", i,
				err != cudaSuccess ? cudaGetErrorString(err) : "unexpected bus id");
		if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) {
			prop.name[sizeof(prop.name) - 1] = '\0';
			rp_strlcpy(gpus[i].name, prop.name, sizeof(gpus[i].name));
		}
	}
	*gpus_p = gpus;
	*n_p = (size_t)count;
	return 0;
}
