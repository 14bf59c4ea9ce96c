/* gpucheck.c: the GPU host check's program (scripts/gpu-host-check.sh; `make build/gpucheck`).
 *
 * On a host with an NVIDIA GPU and no RDMA adapter it proves the CUDA backend end to end: allocate
 * through rp_mem_cuda_ops, export the buffer as a dma-buf (cuMemGetHandleForAddressRange), fill and
 * verify the pattern through the ops (with a deliberate corruption that must be found), and, if a
 * verbs device happens to exist, register the buffer and say by which path. One "key: value" line
 * per fact on stdout; exit 0 all good, 1 a check failed, 2 usage, 3 no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HAVE_CUDA
int main(void)
{
	printf("result: FAIL this rdmaprobe was built without CUDA (is nvcc/CUDA_HOME there? see make features)\n");
	return 3;
}
#else

#include <ctype.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mem/cuda_shim.h"
#include "health/gpudirect.h"
#include "base/log.h"
#include "mem/mem.h"
#include "base/util.h"

static int failures;

static void check(bool ok, const char *what, const char *detail)
{
	printf("%s: %s%s%s\n", what, ok ? "ok" : "FAIL", detail && *detail ? " " : "", detail ? detail : "");
	if (!ok)
		failures++;
}

/* The GPU's identity and where it sits on PCI. */
static void report_gpu(int device)
{
	struct cudaDeviceProp prop;
	char bus[32], sys[128], real[PATH_MAX];

	if (cudaGetDeviceProperties(&prop, device) == cudaSuccess)
		printf("gpu_name: %s\ngpu_memory_bytes: %zu\ngpu_cc: %d.%d\n", prop.name, prop.totalGlobalMem,
		       prop.major, prop.minor);
	if (cudaDeviceGetPCIBusId(bus, sizeof(bus), device) != cudaSuccess) {
		check(false, "gpu_pci", "cudaDeviceGetPCIBusId failed");
		return;
	}
	for (char *p = bus; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	printf("gpu_pci: %s\n", bus);
	snprintf(sys, sizeof(sys), "/sys/bus/pci/devices/%s", bus);
	printf("gpu_pci_path: %s\n", realpath(sys, real) ? real : "(not in sysfs)");
}

/* Export the buffer's range as a dma-buf and say what the kernel thinks it is. */
static void check_dmabuf(struct rp_mem_buf *buf, int device)
{
	char text[160], fdinfo[64], line[256], detail[384];
	int supported = 0, fd = -1;
	CUresult res;
	FILE *f;

	res = rp_cudrv_attr_get(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device);
	printf("dmabuf_supported_attr: %s\n", res == CUDA_SUCCESS ? (supported ? "1" : "0")
		: rp_cudrv_strerror(res, text, sizeof(text)));
	res = rp_cudrv_dmabuf_get(&fd, (CUdeviceptr)(uintptr_t)buf->addr, buf->alloc_len);
	if (res != CUDA_SUCCESS) {
		snprintf(detail, sizeof(detail), "cuMemGetHandleForAddressRange(DMA_BUF_FD, %zu bytes): %s%s",
			 buf->alloc_len, rp_cudrv_strerror(res, text, sizeof(text)),
			 supported ? "" : " (the driver reports no dma-buf support: proprietary kernel module?)");
		check(false, "dmabuf_export", detail);
		return;
	}
	snprintf(detail, sizeof(detail), "fd %d for %zu bytes at a host-page-aligned address", fd, buf->alloc_len);
	check(fd >= 0, "dmabuf_export", detail);
	snprintf(fdinfo, sizeof(fdinfo), "/proc/self/fdinfo/%d", fd);
	f = fopen(fdinfo, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "exp_name:", 9) == 0 || strncmp(line, "size:", 5) == 0)
			printf("dmabuf_%s", line);
	if (f)
		fclose(f);
	close(fd);
}

/* Fill, verify, clear, and find a planted corruption: the ops the engine's verification uses. */
static void check_pattern(struct rp_mem_buf *buf)
{
	const size_t bad_at = buf->len > 12345 ? 12345 : buf->len - 1;
	uint8_t bytes[64], flip;
	char detail[128];
	int64_t bad = -2;
	bool same = true;

	check(buf->ops->fill(buf, 0x5eed) == 0 && buf->ops->check(buf, 0x5eed, &bad) == 0 && bad == -1,
	      "pattern_fill_check", NULL);
	check(buf->ops->read(buf, 0, bytes, sizeof(bytes)) == 0, "pattern_read", NULL);
	for (size_t i = 0; i < sizeof(bytes); i++)
		same &= bytes[i] == rp_pattern_byte(0x5eed, i);
	check(same, "pattern_read_matches", NULL);
	flip = (uint8_t)(rp_pattern_byte(0x5eed, bad_at) ^ 0xff);
	bad = -2;
	check(cudaMemcpy((uint8_t *)buf->addr + bad_at, &flip, 1, cudaMemcpyHostToDevice) == cudaSuccess &&
	      buf->ops->check(buf, 0x5eed, &bad) == 0 && bad == (int64_t)bad_at, "pattern_corruption_found",
	      (snprintf(detail, sizeof(detail), "planted at %zu, found at %lld", bad_at, (long long)bad), detail));
	bad = -2;
	check(buf->ops->set(buf, 0) == 0 && buf->ops->check(buf, 0x5eed, &bad) == 0 && bad >= 0,
	      "pattern_cleared_target_mismatches", NULL);
}

/* With a verbs device (not expected on the GPU-only host), register the buffer and say how. */
static void check_registration(struct rp_mem_buf *buf)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd = NULL;
	char detail[128];
	int n = 0, rc;

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		printf("registration: skipped (no verbs device on this host)\n");
		if (list)
			ibv_free_device_list(list);
		return;
	}
	ctx = ibv_open_device(list[0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		check(false, "registration", "could not open the first verbs device or allocate a PD");
	} else {
		rc = buf->ops->reg(buf, pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		snprintf(detail, sizeof(detail), "on %s: %s", ibv_get_device_name(list[0]),
			 rc ? strerror(-rc) : buf->reg_method);
		check(rc == 0, "registration", detail);
	}
	rp_mem_free(buf); /* deregisters before the PD goes */
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(list);
}

int main(int argc, char **argv)
{
	struct rp_mem_spec spec = { .kind = "cuda", .device = 0, .gpu_reg = RP_GPU_REG_AUTO };
	struct rp_mem_buf buf;
	uint64_t size = 64ULL << 20;
	char why[256];
	int n;

	if (argc > 3 || (argc > 1 && rp_parse_int(argv[1], 0, 1023, &spec.device)) ||
	    (argc > 2 && rp_parse_size(argv[2], 1, 1ULL << 36, &size))) {
		fprintf(stderr, "usage: gpucheck [DEVICE [SIZE]]   (defaults: 0 64M)\n");
		return 2;
	}
	rp_log_set_level(RP_LOG_INFO);
	if (!rp_cuda_present(&n, why, sizeof(why))) {
		printf("result: FAIL %s\n", why);
		return 3;
	}
	printf("cuda_devices: %d\ngpu: cuda:%d\n", n, spec.device);
	report_gpu(spec.device);
	printf("peermem_loaded: %s\n", rp_gdr_peermem_loaded("/sys") ? "yes" : "no");
	if (rp_mem_alloc(&buf, &spec, size) != 0) {
		printf("result: FAIL allocation through rp_mem_cuda_ops (see the message above)\n");
		return 1;
	}
	printf("alloc: ok %zu bytes (%zu allocated, 64 KiB granules) at %p\n", buf.len, buf.alloc_len, buf.addr);
	check(buf.alloc_len % (64 << 10) == 0 && ((uintptr_t)buf.addr % (uintptr_t)sysconf(_SC_PAGESIZE)) == 0,
	      "alloc_granule_and_alignment", NULL);
	check_dmabuf(&buf, spec.device);
	check_pattern(&buf);
	check_registration(&buf);
	rp_mem_free(&buf);
	printf("result: %s (%d failed check%s)\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
#endif
