/* test_mem_cuda.c: the CUDA memory backend with the CUDA runtime, the driver shim and the verbs
 * registration calls replaced (-Wl,--wrap, see test_mem_cuda.wrap).
 *
 * The replacements model the real APIs: "device memory" is real host memory at a deliberately
 * non-page-aligned address, cudaMemcpy/cudaMemset refuse ranges outside a live allocation
 * (cudaErrorInvalidValue), cuMemGetHandleForAddressRange refuses ranges that are not host-page-aligned
 * or not inside an allocation (CUDA_ERROR_INVALID_VALUE) and hands out a real file descriptor,
 * ibv_reg_dmabuf_mr refuses a closed fd (EBADF), and failures set errno the way libibverbs does.
 * Any call can be made to fail after N calls, SQLite-style, to drive every cleanup path.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* calloc/free are wrapped in every build (the .wrap file is shared): pass-through with bookkeeping. */
void *__real_calloc(size_t n, size_t size);
void __real_free(void *p);
void *__wrap_calloc(size_t n, size_t size);
void __wrap_free(void *p);

#ifdef HAVE_CUDA
static bool calloc_fallible;
static bool fail_now(void);
static void tracked_add(void *p);
static void tracked_del(void *p);
#endif

void *__wrap_calloc(size_t n, size_t size)
{
	void *p;

#ifdef HAVE_CUDA
	if (calloc_fallible && fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
#endif
	p = __real_calloc(n, size);
#ifdef HAVE_CUDA
	if (calloc_fallible && p)
		tracked_add(p);
#endif
	return p;
}

void __wrap_free(void *p)
{
#ifdef HAVE_CUDA
	tracked_del(p);
#endif
	__real_free(p);
}

#ifndef HAVE_CUDA
static void test_skipped_without_cuda(void **state)
{
	(void)state;
	print_message("test_mem_cuda: SKIPPED: this build has no CUDA (make CUDA=0 or no toolkit found); "
		      "the CUDA backend's tests need the CUDA headers and runtime to link\n");
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_skipped_without_cuda) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "mem/cuda_shim.h"
#include "health/gpudirect.h"
#include "base/log.h"
#include "mem/mem.h"

#define PAGE 4096UL
#define MISALIGN 0x200UL      /* fake cudaMalloc results sit this far past a page boundary */
#define MAX_ALLOCS 16
#define MAX_FDS 16
#define MAX_TRACKED 16

struct fake_alloc {
	uint8_t *mem;             /* what malloc returned */
	uintptr_t dptr;           /* the "device" address handed out */
	size_t len;
	bool live;
};

/* Everything the replacements are told and record; reset before each test. */
static struct {
	/* behaviour */
	cudaError_t count_err;
	int device_count;
	CUresult attr_res;
	int dmabuf_attr;
	CUresult dmabuf_get_res;
	int dmabuf_reg_errno;     /* 0: ibv_reg_dmabuf_mr succeeds */
	int peermem_errno;        /* 0: ibv_reg_mr succeeds */
	int fail_at;              /* -1: no injected failure; else the fallible call number that fails */
	/* bookkeeping */
	int calls;
	bool injected;
	struct fake_alloc allocs[MAX_ALLOCS];
	int n_malloc, n_free;
	int fds[MAX_FDS];
	int n_fds;
	int live_mrs;
	int n_dmabuf_get, n_reg_dmabuf, n_reg_mr, n_sync_memops;
	uintptr_t sync_memops_ptr;
	uintptr_t dmabuf_start;
	size_t dmabuf_size;
	uint64_t reg_offset, reg_iova;
	size_t reg_len;
	int reg_fd, reg_access;
	void *mr_addr;
	void *tracked[MAX_TRACKED];
	char last_error[1024];
	char last_info[1024];
} t;

static bool fail_now(void)
{
	if (t.fail_at < 0)
		return false;
	if (t.calls++ != t.fail_at)
		return false;
	t.injected = true;
	return true;
}

static void tracked_add(void *p)
{
	for (int i = 0; i < MAX_TRACKED; i++) {
		if (!t.tracked[i]) {
			t.tracked[i] = p;
			return;
		}
	}
}

static void tracked_del(void *p)
{
	for (int i = 0; p && i < MAX_TRACKED; i++)
		if (t.tracked[i] == p)
			t.tracked[i] = NULL;
}

static int tracked_live(void)
{
	int n = 0;

	for (int i = 0; i < MAX_TRACKED; i++)
		n += t.tracked[i] != NULL;
	return n;
}

/* The live fake allocation holding [p, p + len), or NULL. */
static struct fake_alloc *fake_find(uintptr_t p, size_t len)
{
	for (int i = 0; i < MAX_ALLOCS; i++) {
		struct fake_alloc *a = &t.allocs[i];

		if (a->live && p >= a->dptr && p - a->dptr <= a->len && len <= a->len - (p - a->dptr))
			return a;
	}
	return NULL;
}

/* --- CUDA runtime --- */
cudaError_t __wrap_cudaGetDeviceCount(int *count);
cudaError_t __wrap_cudaSetDevice(int device);
cudaError_t __wrap_cudaMalloc(void **p, size_t size);
cudaError_t __wrap_cudaFree(void *p);
cudaError_t __wrap_cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind);
cudaError_t __wrap_cudaMemset(void *p, int value, size_t n);
cudaError_t __wrap_cudaDeviceSynchronize(void);

cudaError_t __wrap_cudaGetDeviceCount(int *count)
{
	if (t.count_err != cudaSuccess)
		return t.count_err;      /* the runtime leaves *count alone on error */
	*count = t.device_count;
	return cudaSuccess;
}

cudaError_t __wrap_cudaSetDevice(int device)
{
	if (fail_now())
		return cudaErrorDevicesUnavailable;
	if (device < 0 || device >= t.device_count)
		return cudaErrorInvalidDevice;
	return cudaSuccess;
}

cudaError_t __wrap_cudaMalloc(void **p, size_t size)
{
	if (fail_now())
		return cudaErrorMemoryAllocation;
	for (int i = 0; i < MAX_ALLOCS; i++) {
		struct fake_alloc *a = &t.allocs[i];

		if (a->live)
			continue;
		a->mem = malloc(size + PAGE + MISALIGN);
		if (!a->mem)
			return cudaErrorMemoryAllocation;
		a->dptr = (((uintptr_t)a->mem + PAGE - 1) & ~(PAGE - 1)) + MISALIGN;
		a->len = size;
		a->live = true;
		t.n_malloc++;
		*p = (void *)a->dptr;
		return cudaSuccess;
	}
	return cudaErrorMemoryAllocation;
}

cudaError_t __wrap_cudaFree(void *p)
{
	struct fake_alloc *a = fake_find((uintptr_t)p, 0);

	if (!p)
		return cudaSuccess;
	if (!a || a->dptr != (uintptr_t)p)
		return cudaErrorInvalidValue;
	free(a->mem);
	a->live = false;
	t.n_free++;
	return cudaSuccess;
}

cudaError_t __wrap_cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
	if (fail_now())
		return cudaErrorLaunchFailure;
	if (kind == cudaMemcpyHostToDevice && !fake_find((uintptr_t)dst, n))
		return cudaErrorInvalidValue;
	if (kind == cudaMemcpyDeviceToHost && !fake_find((uintptr_t)src, n))
		return cudaErrorInvalidValue;
	if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost)
		return cudaErrorInvalidMemcpyDirection;
	memcpy(dst, src, n);
	return cudaSuccess;
}

cudaError_t __wrap_cudaMemset(void *p, int value, size_t n)
{
	if (fail_now())
		return cudaErrorLaunchFailure;
	if (!fake_find((uintptr_t)p, n))
		return cudaErrorInvalidValue;
	memset(p, value, n);
	return cudaSuccess;
}

cudaError_t __wrap_cudaDeviceSynchronize(void)
{
	return fail_now() ? cudaErrorLaunchFailure : cudaSuccess;
}

/* --- the driver shim --- */
CUresult __wrap_rp_cudrv_attr_get(int *value_p, CUdevice_attribute attr, int device);
CUresult __wrap_rp_cudrv_dmabuf_get(int *fd_p, CUdeviceptr dptr, size_t size);
CUresult __wrap_rp_cudrv_sync_memops_set(CUdeviceptr dptr);
const char *__wrap_rp_cudrv_strerror(CUresult res, char *buf, size_t size);

CUresult __wrap_rp_cudrv_attr_get(int *value_p, CUdevice_attribute attr, int device)
{
	if (fail_now())
		return CUDA_ERROR_UNKNOWN;
	if (device < 0 || device >= t.device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	if (attr != CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED)
		return CUDA_ERROR_INVALID_VALUE;
	if (t.attr_res != CUDA_SUCCESS)
		return t.attr_res;
	*value_p = t.dmabuf_attr;
	return CUDA_SUCCESS;
}

CUresult __wrap_rp_cudrv_dmabuf_get(int *fd_p, CUdeviceptr dptr, size_t size)
{
	int fd;

	t.n_dmabuf_get++;
	if (fail_now())
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (t.dmabuf_get_res != CUDA_SUCCESS)
		return t.dmabuf_get_res;
	if (dptr % PAGE || size % PAGE || size == 0 || !fake_find((uintptr_t)dptr, size))
		return CUDA_ERROR_INVALID_VALUE;
	fd = eventfd(0, EFD_CLOEXEC);
	if (fd < 0 || t.n_fds == MAX_FDS)
		return CUDA_ERROR_OUT_OF_MEMORY;
	t.fds[t.n_fds++] = fd;
	t.dmabuf_start = (uintptr_t)dptr;
	t.dmabuf_size = size;
	*fd_p = fd;
	return CUDA_SUCCESS;
}

CUresult __wrap_rp_cudrv_sync_memops_set(CUdeviceptr dptr)
{
	if (fail_now())
		return CUDA_ERROR_UNKNOWN;
	if (!fake_find((uintptr_t)dptr, 1))
		return CUDA_ERROR_INVALID_VALUE;
	t.n_sync_memops++;
	t.sync_memops_ptr = (uintptr_t)dptr;
	return CUDA_SUCCESS;
}

const char *__wrap_rp_cudrv_strerror(CUresult res, char *buf, size_t size)
{
	snprintf(buf, size, "CUDA driver error %d", (int)res);
	return buf;
}

/* --- verbs --- */
struct ibv_mr *__wrap_ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
					int fd, int access);
struct ibv_mr *__wrap_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
int __wrap_ibv_dereg_mr(struct ibv_mr *mr);

static struct ibv_mr *fake_mr(struct ibv_pd *pd, void *addr, size_t length)
{
	struct ibv_mr *mr = malloc(sizeof(*mr));

	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	memset(mr, 0, sizeof(*mr));
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->lkey = mr->rkey = 0x1234;
	t.live_mrs++;
	t.mr_addr = addr;
	return mr;
}

struct ibv_mr *__wrap_ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
					int fd, int access)
{
	t.n_reg_dmabuf++;
	t.reg_offset = offset;
	t.reg_len = length;
	t.reg_iova = iova;
	t.reg_fd = fd;
	t.reg_access = access;
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	if (fcntl(fd, F_GETFD) < 0) {
		errno = EBADF;
		return NULL;
	}
	if (t.dmabuf_reg_errno) {
		errno = t.dmabuf_reg_errno;
		return NULL;
	}
	return fake_mr(pd, (void *)(uintptr_t)iova, length);
}

struct ibv_mr *__wrap_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	t.n_reg_mr++;
	t.reg_len = length;
	t.reg_access = access;
	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	if (t.peermem_errno) {
		errno = t.peermem_errno;
		return NULL;
	}
	return fake_mr(pd, addr, length);
}

int __wrap_ibv_dereg_mr(struct ibv_mr *mr)
{
	t.live_mrs--;
	free(mr);
	return 0;
}

/* --- helpers --- */
static struct ibv_device fake_dev;
static struct ibv_context fake_ctx;
static struct ibv_pd fake_pd;

static void capture_log(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == RP_LOG_ERROR)
		snprintf(t.last_error, sizeof(t.last_error), "%s", msg);
	else if (level == RP_LOG_INFO)
		snprintf(t.last_info, sizeof(t.last_info), "%s", msg);
}

static int setup(void **state)
{
	(void)state;
	memset(&t, 0, sizeof(t));
	t.count_err = cudaSuccess;
	t.device_count = 1;
	t.attr_res = CUDA_SUCCESS;
	t.dmabuf_attr = 1;
	t.dmabuf_get_res = CUDA_SUCCESS;
	t.fail_at = -1;
	t.reg_fd = -1;
	snprintf(fake_dev.name, sizeof(fake_dev.name), "mlx5_7");
	fake_ctx.device = &fake_dev;
	fake_pd.context = &fake_ctx;
	rp_log_set_sink(capture_log, NULL);
	rp_log_set_level(RP_LOG_INFO);
	return 0;
}

/* Nothing may outlive a freed buffer: GPU memory, MRs, dma-buf fds, backend state. */
static void assert_all_released(void)
{
	assert_int_equal(t.n_malloc, t.n_free);
	assert_int_equal(t.live_mrs, 0);
	for (int i = 0; i < t.n_fds; i++) {
		errno = 0;
		assert_int_equal(fcntl(t.fds[i], F_GETFD), -1);
		assert_int_equal(errno, EBADF);
	}
	assert_int_equal(tracked_live(), 0);
}

static int teardown(void **state)
{
	(void)state;
	rp_log_set_sink(NULL, NULL);
	rp_log_set_level(RP_LOG_WARN);
	for (int i = 0; i < t.n_fds; i++)
		close(t.fds[i]); /* only matters when a test failed */
	return 0;
}

static struct rp_mem_spec cuda_spec(enum rp_gpu_reg reg)
{
	struct rp_mem_spec spec = { .kind = "cuda", .device = 0, .gpu_reg = reg };

	return spec;
}

#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* --- tests --- */

/* dmabuf supported: 64 KiB granules, SYNC_MEMOPS, a page-aligned export, the fd closed, "dmabuf". */
static void test_dmabuf_supported(void **state)
{
	struct rp_mem_spec spec = cuda_spec(RP_GPU_REG_AUTO);
	struct rp_mem_buf buf;
	uintptr_t addr;

	(void)state;
	calloc_fallible = true;  /* tracked, never failed (fail_at = -1) */
	assert_int_equal(rp_mem_alloc(&buf, &spec, 100000), 0);
	calloc_fallible = false;
	assert_string_equal(buf.label, "cuda:0");
	assert_int_equal(buf.len, 100000);
	assert_int_equal(buf.alloc_len, 131072);
	addr = (uintptr_t)buf.addr;
	assert_int_equal(addr % PAGE, 0);
	assert_non_null(fake_find(addr, buf.alloc_len));
	assert_int_equal(t.n_sync_memops, 1);
	assert_non_null(fake_find(t.sync_memops_ptr, 1));
	assert_ptr_equal(fake_find(t.sync_memops_ptr, 1), fake_find(addr, 1));

	assert_int_equal(buf.ops->reg(&buf, &fake_pd, ACCESS), 0);
	assert_string_equal(buf.reg_method, "dmabuf");
	assert_int_equal(t.n_reg_dmabuf, 1);
	assert_int_equal(t.n_reg_mr, 0);
	/* the exported range is host-page-aligned and covers the registered one */
	assert_int_equal(t.dmabuf_start % PAGE, 0);
	assert_int_equal(t.dmabuf_size % PAGE, 0);
	assert_true(t.dmabuf_start + t.reg_offset == addr);
	assert_true(t.reg_offset + t.reg_len <= t.dmabuf_size);
	assert_int_equal(t.reg_len, buf.alloc_len);
	assert_true(t.reg_iova == addr);
	assert_int_equal(t.reg_access, ACCESS);
	/* the fd was closed once the MR held it */
	errno = 0;
	assert_int_equal(fcntl(t.reg_fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
	assert_non_null(buf.mr);
	assert_ptr_equal(buf.mr->addr, buf.addr);

	assert_int_equal(buf.ops->reg(&buf, &fake_pd, ACCESS), -EBUSY);
	rp_mem_free(&buf);
	assert_null(buf.mr);
	assert_null(buf.addr);
	assert_all_released();
	rp_mem_free(&buf);      /* twice is fine */
	assert_all_released();
}

/* ibv_reg_dmabuf_mr EOPNOTSUPP (kernel or adapter without dma-buf MRs): auto falls back to peermem. */
static void test_dmabuf_eopnotsupp_falls_back(void **state)
{
	static const int errs[] = { EOPNOTSUPP, EPROTONOSUPPORT };

	(void)state;
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		struct rp_mem_spec spec = cuda_spec(RP_GPU_REG_AUTO);
		struct rp_mem_buf buf;

		setup(NULL);
		t.dmabuf_reg_errno = errs[i];
		assert_int_equal(rp_mem_alloc(&buf, &spec, 4096), 0);
		assert_int_equal(buf.alloc_len, 65536);
		assert_int_equal(buf.ops->reg(&buf, &fake_pd, ACCESS), 0);
		assert_string_equal(buf.reg_method, "peermem");
		assert_int_equal(t.n_reg_dmabuf, 1);
		assert_int_equal(t.n_reg_mr, 1);
		assert_ptr_equal(t.mr_addr, buf.addr);
		assert_int_equal(t.reg_len, buf.alloc_len);
		assert_non_null(strstr(t.last_info, "dmabuf not supported"));
		assert_non_null(strstr(t.last_info, strerror(errs[i])));
		assert_string_equal(t.last_error, "");
		rp_mem_free(&buf);
		assert_all_released();  /* includes the fd of the failed dmabuf attempt */
	}
}

/* The device attribute says no (proprietary kernel module): no export is attempted, peermem is used. */
static void test_attr_no_dmabuf_falls_back(void **state)
{
	struct rp_mem_spec spec = cuda_spec(RP_GPU_REG_AUTO);
	struct rp_mem_buf buf;

	(void)state;
	t.dmabuf_attr = 0;
	assert_int_equal(rp_mem_alloc(&buf, &spec, 1), 0);
	assert_int_equal(buf.ops->reg(&buf, &fake_pd, ACCESS), 0);
	assert_string_equal(buf.reg_method, "peermem");
	assert_int_equal(t.n_dmabuf_get, 0);
	assert_int_equal(t.n_reg_dmabuf, 0);
	assert_non_null(strstr(t.last_info, "DMA_BUF_SUPPORTED = 0"));
	rp_mem_free(&buf);
	assert_all_released();
}

/* peermem EFAULT: the error names nvidia-peermem and says how to load it. */
static void test_peermem_efault_message(void **state)
{
	struct rp_mem_spec spec = cuda_spec(RP_GPU_REG_AUTO);
	struct rp_mem_buf buf;

	(void)state;
	t.dmabuf_attr = 0;
	t.peermem_errno = EFAULT;
	assert_int_equal(rp_mem_alloc(&buf, &spec, 1 << 20), 0);
	assert_int_equal(buf.ops->reg(&buf, &fake_pd, ACCESS), -EFAULT);
	assert_null(buf.mr);
	assert_string_equal(buf.reg_method, "");
	assert_non_null(strstr(t.last_error, "ibv_reg_mr"));
	assert_non_null(strstr(t.last_error, "cuda:0"));
	assert_non_null(strstr(t.last_error, "mlx5_7"));
	assert_non_null(strstr(t.last_error, strerror(EFAULT)));
	if (rp_gdr_peermem_loaded("/sys")) {
		print_message("note: nvidia-peermem is loaded on this host: checking the 'loaded' wording\n");
		assert_non_null(strstr(t.last_error, "although nvidia-peermem is loaded"));
	} else {
		assert_non_null(strstr(t.last_error, "nvidia-peermem is not loaded"));
		assert_non_null(strstr(t.last_error, "modprobe nvidia-peermem"));
	}
	/* auto mode also says why dmabuf was not used */
	assert_non_null(strstr(t.last_error, "dmabuf was not usable either"));
	rp_mem_free(&buf);
	assert_all_released();

	/* forced peermem: dmabuf is never tried, and the text does not blame dmabuf */
	setup(NULL);
	spec = cuda_spec(RP_GPU_REG_PEERMEM);
	t.peermem_errno = EFAULT;
	assert_int_equal(rp_mem_alloc(&buf, &spec, 1), 0);
	assert_int_equal(buf.ops->reg(&buf, &fake_pd, ACCESS), -EFAULT);
	assert_int_equal(t.n_dmabuf_get, 0);
	assert_int_equal(t.n_reg_dmabuf, 0);
	assert_null(strstr(t.last_error, "dmabuf"));
	rp_mem_free(&buf);
	assert_all_released();
}

/* Forced dmabuf on a device or kernel without it fails, with no silent fallback to peermem. */
static void test_forced_dmabuf_unsupported_fails(void **state)
{
	struct rp_mem_spec spec = cuda_spec(RP_GPU_REG_DMABUF);
	struct rp_mem_buf buf;

	(void)state;
	t.dmabuf_attr = 0;
	assert_int_equal(rp_mem_alloc(&buf, &spec, 1), 0);
	assert_int_equal(buf.ops->reg(&buf, &fake_pd, ACCESS), -EOPNOTSUPP);
	assert_int_equal(t.n_reg_mr, 0);
	assert_null(buf.mr);
	assert_non_null(strstr(t.last_error, "gpu-reg dmabuf"));
	assert_non_null(strstr(t.last_error, "DMA_BUF_SUPPORTED = 0"));
	rp_mem_free(&buf);
	assert_all_released();

	setup(NULL);
	t.dmabuf_reg_errno = EOPNOTSUPP;
	assert_int_equal(rp_mem_alloc(&buf, &spec, 1), 0);
	assert_int_equal(buf.ops->reg(&buf, &fake_pd, ACCESS), -EOPNOTSUPP);
	assert_int_equal(t.n_reg_dmabuf, 1);
	assert_int_equal(t.n_reg_mr, 0);
	assert_non_null(strstr(t.last_error, "ibv_reg_dmabuf_mr"));
	assert_non_null(strstr(t.last_error, "mlx5_7"));
	rp_mem_free(&buf);
	assert_all_released();

	/* the driver cannot export the range */
	setup(NULL);
	t.dmabuf_get_res = CUDA_ERROR_NOT_SUPPORTED;
	assert_int_equal(rp_mem_alloc(&buf, &spec, 1), 0);
	assert_int_equal(buf.ops->reg(&buf, &fake_pd, ACCESS), -EOPNOTSUPP);
	assert_int_equal(t.n_reg_dmabuf, 0);
	assert_int_equal(t.n_reg_mr, 0);
	assert_non_null(strstr(t.last_error, "cuMemGetHandleForAddressRange"));
	rp_mem_free(&buf);
	assert_all_released();
}

/* A real dmabuf error (not "unsupported") is reported as is; auto does not paper over it. */
static void test_dmabuf_other_error_no_fallback(void **state)
{
	struct rp_mem_spec spec = cuda_spec(RP_GPU_REG_AUTO);
	struct rp_mem_buf buf;

	(void)state;
	t.dmabuf_reg_errno = EINVAL;
	assert_int_equal(rp_mem_alloc(&buf, &spec, 1), 0);
	assert_int_equal(buf.ops->reg(&buf, &fake_pd, ACCESS), -EINVAL);
	assert_int_equal(t.n_reg_mr, 0);
	assert_non_null(strstr(t.last_error, "ibv_reg_dmabuf_mr"));
	rp_mem_free(&buf);
	assert_all_released();
}

/* No device, no driver, a bad index: -ENODEV with cudaGetDeviceCount's own words; nothing allocated. */
static void test_no_device(void **state)
{
	struct rp_mem_spec spec = cuda_spec(RP_GPU_REG_AUTO);
	struct rp_mem_buf buf;
	char why[256];
	int n = -1;

	(void)state;
	t.count_err = cudaErrorNoDevice;
	assert_false(rp_cuda_present(&n, why, sizeof(why)));
	assert_int_equal(n, 0);
	assert_non_null(strstr(why, "no CUDA device (cudaGetDeviceCount: "));
	assert_non_null(strstr(why, cudaGetErrorString(cudaErrorNoDevice)));
	assert_int_equal(rp_mem_alloc(&buf, &spec, 4096), -ENODEV);
	assert_non_null(strstr(t.last_error, "cudaGetDeviceCount"));
	assert_int_equal(t.n_malloc, 0);
	assert_null(buf.priv);
	rp_mem_free(&buf);

	setup(NULL);
	t.count_err = cudaErrorInsufficientDriver;
	assert_false(rp_cuda_present(&n, why, sizeof(why)));
	assert_non_null(strstr(why, cudaGetErrorString(cudaErrorInsufficientDriver)));

	setup(NULL);
	t.device_count = 0;
	assert_false(rp_cuda_present(&n, why, sizeof(why)));
	assert_non_null(strstr(why, "0 devices"));

	setup(NULL);
	t.device_count = 2;
	assert_true(rp_cuda_present(&n, why, sizeof(why)));
	assert_int_equal(n, 2);
	spec.device = 2;
	assert_int_equal(rp_mem_alloc(&buf, &spec, 4096), -ENODEV);
	assert_non_null(strstr(t.last_error, "cuda:2: this host has 2 CUDA devices (cuda:0..cuda:1)"));
	assert_int_equal(t.n_malloc, 0);
	spec.device = 1;
	assert_int_equal(rp_mem_alloc(&buf, &spec, 4096), 0);
	assert_string_equal(buf.label, "cuda:1");
	rp_mem_free(&buf);
	assert_all_released();

	assert_int_equal(rp_mem_alloc(&buf, &spec, 0), -EINVAL);
}

/* fill/check/set/read move real bytes and find a corrupted byte where it is. */
static void test_fill_check_set_read(void **state)
{
	struct rp_mem_spec spec = cuda_spec(RP_GPU_REG_AUTO);
	const size_t len = (3UL << 20) + 777;   /* several staging chunks and a ragged tail */
	struct rp_mem_buf buf;
	uint8_t bytes[16];
	int64_t bad;

	(void)state;
	assert_int_equal(rp_mem_alloc(&buf, &spec, len), 0);
	assert_int_equal(buf.ops->fill(&buf, 42), 0);
	assert_int_equal(buf.ops->check(&buf, 42, &bad), 0);
	assert_int_equal(bad, -1);
	assert_int_equal(buf.ops->check(&buf, 43, &bad), 0);
	assert_true(bad >= 0 && bad < 8);
	((volatile uint8_t *)buf.addr)[len - 5] ^= 0x01;          /* as if the adapter wrote a bad byte */
	assert_int_equal(buf.ops->check(&buf, 42, &bad), 0);
	assert_int_equal(bad, (int64_t)(len - 5));
	((volatile uint8_t *)buf.addr)[(2UL << 20) + 3] ^= 0x80;  /* an earlier one wins */
	assert_int_equal(buf.ops->check(&buf, 42, &bad), 0);
	assert_int_equal(bad, (int64_t)((2UL << 20) + 3));

	assert_int_equal(buf.ops->read(&buf, 100, bytes, sizeof(bytes)), 0);
	for (size_t i = 0; i < sizeof(bytes); i++)
		assert_int_equal(bytes[i], rp_pattern_byte(42, 100 + i));
	assert_int_equal(buf.ops->set(&buf, 0xab), 0);
	assert_int_equal(buf.ops->read(&buf, len - sizeof(bytes), bytes, sizeof(bytes)), 0);
	for (size_t i = 0; i < sizeof(bytes); i++)
		assert_int_equal(bytes[i], 0xab);
	assert_int_equal(buf.ops->read(&buf, len - 4, bytes, 8), -EINVAL);
	assert_int_equal(buf.ops->read(&buf, len + 1, bytes, 0), -EINVAL);

	/* write lands exactly where asked (latency mode's sequence byte), and is bounded like read */
	const uint8_t seq[3] = { 0x11, 0x22, 0x33 };
	assert_int_equal(buf.ops->write(&buf, len - 3, seq, sizeof(seq)), 0);
	assert_int_equal(buf.ops->read(&buf, len - 4, bytes, 4), 0);
	assert_int_equal(bytes[0], 0xab);
	assert_memory_equal(bytes + 1, seq, sizeof(seq));
	assert_int_equal(buf.ops->write(&buf, len - 2, seq, sizeof(seq)), -EINVAL);

	/* a copy that fails is reported, not taken for a mismatch */
	t.calls = 0;
	t.fail_at = 1;     /* cudaSetDevice is call 0, the first copy call 1 */
	assert_int_equal(buf.ops->check(&buf, 42, &bad), -EIO);
	assert_non_null(strstr(t.last_error, "cudaMemcpy"));
	t.fail_at = -1;
	rp_mem_free(&buf);
	assert_all_released();
}

/* One alloc + reg + fill + check with the call numbered fail_at failing; returns whether a failure was
 * injected. Whatever happened, free must release everything. */
static bool run_failing_at(int fail_at, enum rp_gpu_reg reg, int dmabuf_reg_errno, int *steps_p)
{
	struct rp_mem_spec spec = cuda_spec(reg);
	struct rp_mem_buf buf;
	int64_t bad = -1;
	int rc;

	setup(NULL);
	t.dmabuf_reg_errno = dmabuf_reg_errno;
	t.fail_at = fail_at;
	calloc_fallible = true;
	rc = rp_mem_alloc(&buf, &spec, 200000);
	calloc_fallible = false;
	if (rc) {
		/* a failed alloc leaves nothing behind, even before free is called */
		assert_all_released();
		assert_null(buf.priv);
		assert_null(buf.addr);
	}
	if (rc == 0) {
		rc = buf.ops->reg(&buf, &fake_pd, ACCESS);
		if (rc) {
			/* a failed reg leaves no MR and no dma-buf fd, and the buffer usable */
			assert_int_equal(t.live_mrs, 0);
			assert_null(buf.mr);
			assert_string_equal(buf.reg_method, "");
			for (int i = 0; i < t.n_fds; i++)
				assert_int_equal(fcntl(t.fds[i], F_GETFD), -1);
			assert_non_null(buf.addr);
		}
	}
	if (rc == 0)
		rc = buf.ops->fill(&buf, 7);
	if (rc == 0)
		rc = buf.ops->check(&buf, 7, &bad);
	if (t.injected) {
		assert_int_not_equal(rc, 0);
		assert_true(rc < 0);
		assert_string_not_equal(t.last_error, "");
	} else {
		assert_int_equal(rc, 0);
		assert_int_equal(bad, -1);
		*steps_p = t.calls;
	}
	rp_mem_free(&buf);
	assert_all_released();
	rp_mem_free(&buf);
	assert_all_released();
	return t.injected;
}

/* Allocation or registration failing at every step cleans up (SQLite-style: fail call N, for every N). */
static void test_fail_every_step(void **state)
{
	static const struct { enum rp_gpu_reg reg; int dmabuf_errno; const char *what; } paths[] = {
		{ RP_GPU_REG_AUTO, 0, "dmabuf" },
		{ RP_GPU_REG_AUTO, EOPNOTSUPP, "dmabuf refused, peermem" },
		{ RP_GPU_REG_PEERMEM, 0, "peermem" },
	};

	(void)state;
	for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
		int n, steps = -1;

		for (n = 0; n < 100 && run_failing_at(n, paths[p].reg, paths[p].dmabuf_errno, &steps); n++)
			;
		/* the success run counted every fallible call: each of them was made to fail once */
		assert_int_equal(steps, n);
		print_message("%s: %d failure points, each cleaned up\n", paths[p].what, n);
		/* setdevice, calloc, setdevice, cudaMalloc, sync_memops, setdevice, reg ... */
		assert_true(n >= 8);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dmabuf_supported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dmabuf_eopnotsupp_falls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attr_no_dmabuf_falls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_peermem_efault_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forced_dmabuf_unsupported_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dmabuf_other_error_no_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fill_check_set_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fail_every_step, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
