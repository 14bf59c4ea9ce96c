/* mem_cuda.c: CUDA memory backend: GPU buffers in 64 KiB granules, registered with the adapter through
 * dmabuf or nvidia-peermem (see gpudirect.h), filled and checked through host-side staging copies.
 *
 * The pattern is generated and compared on the host and moved with cudaMemcpy, so the build needs no
 * nvcc step and no device code; a GPU buffer costs one extra copy per fill or check, which is not on
 * the measured path. Driver-API calls go through cuda_shim.h (no libcuda link).
 */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem/cuda_shim.h"
#include "health/gpudirect.h"
#include "base/log.h"
#include "mem/mem.h"
#include "base/util.h"

#define CUDA_GRANULE (64UL << 10)
#define STAGING_CHUNK (1UL << 20)

/* Backend state behind buf->priv. alloc_len is len rounded up to 64 KiB; cudaMalloc gets one host
 * page more, and buf->addr is raw rounded up to a host page, so the registered range
 * [addr, addr + alloc_len) is host-page-aligned and inside the allocation, as dmabuf export requires
 * (cudaMalloc promises only 256-byte alignment). */
struct cuda_priv {
	int device;
	enum rp_gpu_reg gpu_reg;
	void *raw;                    /* what cudaMalloc returned; cudaFree takes this */
};

static size_t host_page(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}

/* Append a hint when the NVIDIA kernel driver is clearly absent: the runtime's own text for that case
 * ("CUDA driver version is insufficient") sends people looking for the wrong thing. */
static const char *driver_hint(cudaError_t err)
{
	if (err == cudaErrorInsufficientDriver && access("/proc/driver/nvidia/version", F_OK) != 0)
		return "; the NVIDIA kernel driver is not loaded (no /proc/driver/nvidia/version)";
	return "";
}

bool rp_cuda_present(int *count_p, char *why, size_t why_size)
{
	int n = 0;
	cudaError_t err = cudaGetDeviceCount(&n);

	*count_p = 0;
	if (err != cudaSuccess) {
		snprintf(why, why_size, "no CUDA device (cudaGetDeviceCount: %s%s)", cudaGetErrorString(err),
			 driver_hint(err));
		return false;
	}
	if (n <= 0) {
		snprintf(why, why_size, "no CUDA device (cudaGetDeviceCount: 0 devices)");
		return false;
	}
	*count_p = n;
	if (why_size)
		why[0] = '\0';
	return true;
}

int rp_cuda_device_check(int device)
{
	char why[256];
	int n;

	if (!rp_cuda_present(&n, why, sizeof(why)))
		return rp_error(-ENODEV, "cuda:%d: %s", device, why);
	if (device < 0 || device >= n)
		return rp_error(-ENODEV, "cuda:%d: this host has %d CUDA device%s (cuda:0..cuda:%d)", device, n,
				n == 1 ? "" : "s", n - 1);
	return 0;
}

/* Map a runtime error to a negative errno for the caller. */
static int cuda_errno(cudaError_t err)
{
	switch (err) {
	case cudaErrorMemoryAllocation:
		return -ENOMEM;
	case cudaErrorInvalidValue:
		return -EINVAL;
	case cudaErrorNoDevice:
	case cudaErrorInvalidDevice:
	case cudaErrorInsufficientDriver:
		return -ENODEV;
	default:
		return -EIO;
	}
}

static struct cuda_priv *cuda_priv(struct rp_mem_buf *buf)
{
	return buf->priv;
}

/* Make the buffer's GPU current for the calls that follow. */
static int cuda_enter(struct rp_mem_buf *buf)
{
	struct cuda_priv *priv = cuda_priv(buf);
	cudaError_t err = cudaSetDevice(priv->device);

	if (err != cudaSuccess)
		return rp_error(cuda_errno(err), "cudaSetDevice(%d): %s", priv->device, cudaGetErrorString(err));
	return 0;
}

/* Deregister and free; accepts a half-built buffer and may be called twice. */
static void cuda_free(struct rp_mem_buf *buf)
{
	struct cuda_priv *priv = cuda_priv(buf);

	if (buf->mr) {
		int rc = ibv_dereg_mr(buf->mr);

		if (rc)
			rp_error(-rc, "ibv_dereg_mr of %s memory: %s", buf->label, strerror(rc));
		buf->mr = NULL;
	}
	if (priv && priv->raw) {
		cudaError_t err = cudaFree(priv->raw);

		if (err != cudaSuccess)
			rp_error(cuda_errno(err), "cudaFree on %s: %s", buf->label, cudaGetErrorString(err));
		priv->raw = NULL;
	}
	free(priv);
	buf->priv = NULL;
	buf->addr = NULL;
	buf->alloc_len = 0;
	buf->reg_method[0] = '\0';
}

/* Every buffer gets SYNC_MEMOPS, not only targets: the adapter writes targets behind CUDA's back, and
 * a fill's cudaMemcpy from pageable memory may return before the bytes land in a source the adapter
 * is about to read. With the attribute set, synchronous copies on the range complete before return. */
static int cuda_alloc(struct rp_mem_buf *buf, const struct rp_mem_spec *spec, size_t len)
{
	size_t page = host_page();
	struct cuda_priv *priv;
	cudaError_t err;
	CUresult res;
	int rc;

	if (len == 0)
		return rp_error(-EINVAL, "cuda buffer of 0 bytes");
	if (len > SIZE_MAX - CUDA_GRANULE - page)
		return rp_error(-EINVAL, "cuda buffer of %zu bytes: too large", len);
	rc = rp_cuda_device_check(spec->device);
	if (rc)
		return rc;
	priv = calloc(1, sizeof(*priv));
	if (!priv)
		return rp_error(-ENOMEM, "cuda buffer state: %s", strerror(ENOMEM));
	priv->device = spec->device;
	priv->gpu_reg = spec->gpu_reg;
	buf->priv = priv;
	snprintf(buf->label, sizeof(buf->label), "cuda:%d", spec->device);

	rc = cuda_enter(buf);
	if (rc)
		goto fail;
	buf->alloc_len = (len + CUDA_GRANULE - 1) / CUDA_GRANULE * CUDA_GRANULE;
	err = cudaMalloc(&priv->raw, buf->alloc_len + page);
	if (err != cudaSuccess) {
		priv->raw = NULL;
		rc = rp_error(cuda_errno(err), "cudaMalloc %zu bytes on %s: %s", buf->alloc_len + page, buf->label,
			      cudaGetErrorString(err));
		goto fail;
	}
	buf->addr = (void *)(((uintptr_t)priv->raw + page - 1) & ~(uintptr_t)(page - 1));
	buf->len = len;

	res = rp_cudrv_sync_memops_set((CUdeviceptr)(uintptr_t)priv->raw);
	if (res != CUDA_SUCCESS) {
		char text[160];

		rc = rp_error(-EIO, "cuPointerSetAttribute(SYNC_MEMOPS) on %s memory: %s", buf->label,
			      rp_cudrv_strerror(res, text, sizeof(text)));
		goto fail;
	}
	return 0;

fail:
	cuda_free(buf);
	return rc;
}

/* dmabuf registration. Returns 0, -EOPNOTSUPP with why filled (not logged: in auto mode the caller
 * falls back), or another negative errno (logged). The fd is closed in every case. */
static int reg_dmabuf(struct rp_mem_buf *buf, struct ibv_pd *pd, int access, char *why, size_t why_size)
{
	struct cuda_priv *priv = cuda_priv(buf);
	const char *dev = ibv_get_device_name(pd->context->device);
	size_t page = host_page();
	uintptr_t addr = (uintptr_t)buf->addr;
	uintptr_t start = addr & ~(uintptr_t)(page - 1);
	uintptr_t end = (addr + buf->alloc_len + page - 1) & ~(uintptr_t)(page - 1);
	char text[160];
	struct ibv_mr *mr;
	int supported = 0, fd = -1, err;
	CUresult res;

	res = rp_cudrv_attr_get(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, priv->device);
	if (res == CUDA_ERROR_NOT_FOUND || res == CUDA_ERROR_NOT_SUPPORTED || res == CUDA_ERROR_INVALID_VALUE) {
		snprintf(why, why_size, "the NVIDIA driver cannot report dma-buf support for %s (%s)", buf->label,
			 rp_cudrv_strerror(res, text, sizeof(text)));
		return -EOPNOTSUPP;
	}
	if (res != CUDA_SUCCESS)
		return rp_error(-EIO, "cuDeviceGetAttribute(DMA_BUF_SUPPORTED) on %s: %s", buf->label,
				rp_cudrv_strerror(res, text, sizeof(text)));
	if (!supported) {
		snprintf(why, why_size, "the NVIDIA driver reports no dma-buf support on %s "
			 "(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0; it needs the open GPU kernel modules)", buf->label);
		return -EOPNOTSUPP;
	}

	res = rp_cudrv_dmabuf_get(&fd, (CUdeviceptr)start, end - start);
	if (res == CUDA_ERROR_NOT_SUPPORTED) {
		snprintf(why, why_size, "cuMemGetHandleForAddressRange(DMA_BUF_FD) on %s: %s", buf->label,
			 rp_cudrv_strerror(res, text, sizeof(text)));
		return -EOPNOTSUPP;
	}
	if (res != CUDA_SUCCESS)
		return rp_error(-EIO, "cuMemGetHandleForAddressRange(DMA_BUF_FD) of %zu bytes on %s: %s",
				(size_t)(end - start), buf->label, rp_cudrv_strerror(res, text, sizeof(text)));

	mr = ibv_reg_dmabuf_mr(pd, addr - start, buf->alloc_len, addr, fd, access);
	err = mr ? 0 : errno ? errno : ENOMEM;
	close(fd); /* the MR holds its own reference to the dma-buf */
	if (!mr) {
		if (err == EOPNOTSUPP || err == EPROTONOSUPPORT) {
			snprintf(why, why_size, "ibv_reg_dmabuf_mr of %s memory on %s: %s: the kernel (Linux >= 5.12), "
				 "rdma-core (>= 34) or the adapter's driver does not support dma-buf memory regions",
				 buf->label, dev, strerror(err));
			return -EOPNOTSUPP;
		}
		return rp_error(-err, "ibv_reg_dmabuf_mr of %zu bytes of %s memory on %s: %s", buf->alloc_len,
				buf->label, dev, strerror(err));
	}
	buf->mr = mr;
	rp_strlcpy(buf->reg_method, "dmabuf", sizeof(buf->reg_method));
	return 0;
}

/* peermem registration: plain ibv_reg_mr on the device pointer, which only nvidia-peermem makes work.
 * dmabuf_why (or NULL) says why dmabuf was not used, for the error text. */
static int reg_peermem(struct rp_mem_buf *buf, struct ibv_pd *pd, int access, const char *dmabuf_why)
{
	const char *dev = ibv_get_device_name(pd->context->device);
	char also[320] = "";
	struct ibv_mr *mr;
	int err;

	/* The exported function, not the macro that may pick ibv_reg_mr_iova2: same semantics, one name
	 * for tests to wrap. */
	mr = (ibv_reg_mr)(pd, buf->addr, buf->alloc_len, access);
	if (mr) {
		buf->mr = mr;
		rp_strlcpy(buf->reg_method, "peermem", sizeof(buf->reg_method));
		return 0;
	}
	err = errno ? errno : ENOMEM;
	if (dmabuf_why)
		snprintf(also, sizeof(also), "; dmabuf was not usable either: %s", dmabuf_why);
	if (err == EFAULT && !rp_gdr_peermem_loaded("/sys"))
		return rp_error(-err, "ibv_reg_mr of %zu bytes of %s memory on %s: %s: nvidia-peermem is not loaded "
				"(no /sys/module/nvidia_peermem, no /sys/kernel/mm/memory_peers/nv_mem/version): "
				"load it with 'modprobe nvidia-peermem'%s", buf->alloc_len, buf->label, dev,
				strerror(err), also);
	if (err == EFAULT)
		return rp_error(-err, "ibv_reg_mr of %zu bytes of %s memory on %s: %s although nvidia-peermem is "
				"loaded (see dmesg for nvidia-peermem or the adapter's driver)%s", buf->alloc_len,
				buf->label, dev, strerror(err), also);
	return rp_error(-err, "ibv_reg_mr of %zu bytes of %s memory on %s (nvidia-peermem): %s%s", buf->alloc_len,
			buf->label, dev, strerror(err), also);
}

/* Register buf with pd by the method the spec asked for (auto: dmabuf, then peermem). */
static int cuda_reg(struct rp_mem_buf *buf, struct ibv_pd *pd, int access)
{
	struct cuda_priv *priv = cuda_priv(buf);
	const char *dev = ibv_get_device_name(pd->context->device);
	char why[384];
	int rc;

	if (buf->mr)
		return rp_error(-EBUSY, "%s buffer is already registered (%s)", buf->label, buf->reg_method);
	rc = cuda_enter(buf);
	if (rc)
		return rc;
	switch (priv->gpu_reg) {
	case RP_GPU_REG_PEERMEM:
		return reg_peermem(buf, pd, access, NULL);
	case RP_GPU_REG_DMABUF:
		rc = reg_dmabuf(buf, pd, access, why, sizeof(why));
		if (rc == -EOPNOTSUPP)
			return rp_error(rc, "dmabuf registration of %s memory on %s was asked for (gpu-reg dmabuf) "
					"but is not supported: %s; use gpu-reg peermem or auto", buf->label, dev, why);
		return rc;
	case RP_GPU_REG_AUTO:
	default:
		rc = reg_dmabuf(buf, pd, access, why, sizeof(why));
		if (rc != -EOPNOTSUPP)
			return rc;
		rp_info("%s on %s: dmabuf not supported (%s): registering through nvidia-peermem", buf->label, dev, why);
		return reg_peermem(buf, pd, access, why);
	}
}

/* Copy n host bytes to the buffer at off (the device is already current). 0 or negative errno, logged. */
static int copy_to_gpu(struct rp_mem_buf *buf, size_t off, const void *src, size_t n)
{
	cudaError_t err = cudaMemcpy((uint8_t *)buf->addr + off, src, n, cudaMemcpyHostToDevice);

	if (err != cudaSuccess)
		return rp_error(cuda_errno(err), "cudaMemcpy %zu bytes to %s at offset %zu: %s", n, buf->label, off,
				cudaGetErrorString(err));
	return 0;
}

/* Copy n bytes at off of the buffer to host memory (the device is already current). */
static int copy_from_gpu(struct rp_mem_buf *buf, size_t off, void *dst, size_t n)
{
	cudaError_t err = cudaMemcpy(dst, (const uint8_t *)buf->addr + off, n, cudaMemcpyDeviceToHost);

	if (err != cudaSuccess)
		return rp_error(cuda_errno(err), "cudaMemcpy %zu bytes from %s at offset %zu: %s", n, buf->label, off,
				cudaGetErrorString(err));
	return 0;
}

/* Fill [0, len) with the pattern: generated on the host in staging-sized chunks, copied to the GPU. */
static int cuda_fill(struct rp_mem_buf *buf, uint64_t seed)
{
	size_t chunk = buf->len < STAGING_CHUNK ? buf->len : STAGING_CHUNK;
	uint8_t *stage;
	int rc = cuda_enter(buf);

	if (rc)
		return rc;
	stage = malloc(chunk);
	if (!stage)
		return rp_error(-ENOMEM, "staging buffer of %zu bytes for %s: %s", chunk, buf->label, strerror(ENOMEM));
	for (size_t off = 0; off < buf->len && rc == 0; off += chunk) {
		size_t n = buf->len - off < chunk ? buf->len - off : chunk;

		for (size_t i = 0; i < n; i++)
			stage[i] = rp_pattern_byte(seed, off + i);
		rc = copy_to_gpu(buf, off, stage, n);
	}
	free(stage);
	return rc;
}

/* Check [0, len): copied back to the host in staging-sized chunks and compared there. */
static int cuda_check(struct rp_mem_buf *buf, uint64_t seed, int64_t *bad_offset_p)
{
	size_t chunk = buf->len < STAGING_CHUNK ? buf->len : STAGING_CHUNK;
	uint8_t *stage;
	int rc = cuda_enter(buf);

	*bad_offset_p = -1;
	if (rc)
		return rc;
	stage = malloc(chunk);
	if (!stage)
		return rp_error(-ENOMEM, "staging buffer of %zu bytes for %s: %s", chunk, buf->label, strerror(ENOMEM));
	for (size_t off = 0; off < buf->len && rc == 0 && *bad_offset_p < 0; off += chunk) {
		size_t n = buf->len - off < chunk ? buf->len - off : chunk;

		rc = copy_from_gpu(buf, off, stage, n);
		if (rc)
			break;
		for (size_t i = 0; i < n; i++) {
			if (stage[i] != rp_pattern_byte(seed, off + i)) {
				*bad_offset_p = (int64_t)(off + i);
				break;
			}
		}
	}
	free(stage);
	return rc;
}

/* Set [0, len) to byte, finished before return. */
static int cuda_set(struct rp_mem_buf *buf, uint8_t byte)
{
	cudaError_t err;
	int rc = cuda_enter(buf);

	if (rc)
		return rc;
	err = cudaMemset(buf->addr, byte, buf->len);
	if (err != cudaSuccess)
		return rp_error(cuda_errno(err), "cudaMemset %zu bytes of %s: %s", buf->len, buf->label,
				cudaGetErrorString(err));
	/* cudaMemset is asynchronous for device memory: the target must be clear before the adapter writes. */
	err = cudaDeviceSynchronize();
	if (err != cudaSuccess)
		return rp_error(cuda_errno(err), "cudaDeviceSynchronize after clearing %s: %s", buf->label,
				cudaGetErrorString(err));
	return 0;
}

/* Copy len bytes at off back to host memory dst. */
static int cuda_read(struct rp_mem_buf *buf, size_t off, void *dst, size_t len)
{
	int rc;

	if (off > buf->len || len > buf->len - off)
		return -EINVAL;
	rc = cuda_enter(buf);
	if (rc)
		return rc;
	return copy_from_gpu(buf, off, dst, len);
}

/* Copy len bytes from host memory src to off (latency mode's sequence byte). */
static int cuda_write(struct rp_mem_buf *buf, size_t off, const void *src, size_t len)
{
	int rc;

	if (off > buf->len || len > buf->len - off)
		return -EINVAL;
	rc = cuda_enter(buf);
	if (rc)
		return rc;
	return copy_to_gpu(buf, off, src, len);
}

const struct rp_mem_ops rp_mem_cuda_ops = {
	.name = "cuda",
	.alloc = cuda_alloc,
	.reg = cuda_reg,
	.fill = cuda_fill,
	.check = cuda_check,
	.set = cuda_set,
	.read = cuda_read,
	.write = cuda_write,
	.free = cuda_free,
};
