/* test_gpudirect.c: gpudirect.h against the real (unwrapped) world: NCCL's GDR level test, the
 * nvidia-peermem probe on fixture trees, the real CUDA runtime's answer on this host, and the real
 * binary's `--mem cuda` on a host without a GPU (exit 3 with a clear message).
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "health/gpudirect.h"
#include "base/log.h"
#include "testutil.h"

static char last_warning[1024], last_error[1024];

static void capture_log(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == RP_LOG_WARN)
		snprintf(last_warning, sizeof(last_warning), "%s", msg);
	else if (level == RP_LOG_ERROR)
		snprintf(last_error, sizeof(last_error), "%s", msg);
}

/* path <= NCCL_NET_GDR_LEVEL, for every pair. */
static void test_gdr_used(void **state)
{
	(void)state;
	for (int level = RP_PATH_PIX; level <= RP_PATH_SYS; level++)
		for (int path = RP_PATH_PIX; path <= RP_PATH_SYS; path++)
			assert_int_equal(rp_gdr_used((enum rp_path)path, (enum rp_path)level), path <= level);
	/* NCCL's default level is PXB: one switch or several is fine, the root complex is not */
	assert_true(rp_gdr_used(RP_PATH_PXB, RP_PATH_PXB));
	assert_false(rp_gdr_used(RP_PATH_PHB, RP_PATH_PXB));
}

static void test_gdr_warn_unused(void **state)
{
	(void)state;
	rp_log_set_sink(capture_log, NULL);
	last_warning[0] = '\0';
	assert_false(rp_gdr_warn_unused("cuda:0", "mlx5_0", RP_PATH_PIX, RP_PATH_PXB));
	assert_string_equal(last_warning, "");
	assert_true(rp_gdr_warn_unused("cuda:3", "mlx5_1", RP_PATH_SYS, RP_PATH_PXB));
	assert_non_null(strstr(last_warning, "cuda:3"));
	assert_non_null(strstr(last_warning, "mlx5_1"));
	assert_non_null(strstr(last_warning, "path is SYS"));
	assert_non_null(strstr(last_warning, "NCCL_NET_GDR_LEVEL=PXB"));
	rp_log_set_sink(NULL, NULL);
}

static void make_path(const char *root, const char *rel, bool file)
{
	char path[512], *slash;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*slash = '/';
	}
	if (file) {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs("1.1\n", f);
		fclose(f);
	} else {
		assert_int_equal(mkdir(path, 0755), 0);
	}
}

/* Either sysfs mark of nvidia-peermem counts; neither means not loaded. */
static void test_peermem_loaded(void **state)
{
	char a[] = "/tmp/rp-peermem-XXXXXX", b[] = "/tmp/rp-peermem-XXXXXX", c[] = "/tmp/rp-peermem-XXXXXX";
	char cmd[256];

	(void)state;
	assert_non_null(mkdtemp(a));
	assert_non_null(mkdtemp(b));
	assert_non_null(mkdtemp(c));
	make_path(a, "module/nvidia", false);
	assert_false(rp_gdr_peermem_loaded(a));
	make_path(a, "module/nvidia_peermem", false);
	assert_true(rp_gdr_peermem_loaded(a));
	make_path(b, "kernel/mm/memory_peers/nv_mem/version", true);
	assert_true(rp_gdr_peermem_loaded(b));
	make_path(c, "kernel/mm/memory_peers/other/version", true);
	assert_false(rp_gdr_peermem_loaded(c));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s'", a, b, c);
	assert_int_equal(system(cmd), 0);
}

/* The real runtime on this host: either a device, or a reason in cudaGetDeviceCount's words. */
static void test_cuda_present_real(void **state)
{
	char why[256] = "unset";
	int n = -1;

	(void)state;
	if (rp_cuda_present(&n, why, sizeof(why))) {
		assert_true(n > 0);
		print_message("this host has %d CUDA device(s)\n", n);
		return;
	}
	assert_int_equal(n, 0);
	print_message("no GPU here: %s\n", why);
#ifdef HAVE_CUDA
	assert_non_null(strstr(why, "no CUDA device (cudaGetDeviceCount: "));
	rp_log_set_sink(capture_log, NULL);
	assert_int_equal(rp_cuda_device_check(0), -ENODEV);
	rp_log_set_sink(NULL, NULL);
	assert_non_null(strstr(last_error, "cuda:0: no CUDA device (cudaGetDeviceCount: "));
#else
	assert_string_equal(why, "this rdmaprobe was built without CUDA");
#endif
}

/* Run "$RP_TEST_BIN args" (60 s at most) with stdout and stderr into out; returns the exit status or -1. */
static int run_bin(const char *bin, const char *args, char *out, size_t out_size)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "timeout 60 '%s' %s 2>&1", bin, args);
	return rp_test_run(cmd, out, out_size);
}

/* The real binary, asked for GPU memory it cannot have: exit 3 and say why. On a host without a GPU
 * that is any cuda buffer; on a host with N GPUs it is cuda:N, one past the last. Usage errors (an
 * unknown --gpu, --gpu nearest in the matrix) are exit 2 either way. Nothing here may skip: both kinds
 * of host have a case that must hold. */
static void test_mem_cuda_unavailable_exits_3(void **state)
{
	const char *bin;
	char out[8192], why[256], args[64];
	int rc, n;

	(void)state;
	bin = rp_test_bin();
	if (rp_cuda_present(&n, why, sizeof(why))) {
		snprintf(args, sizeof(args), "loopback --mem cuda:%d", n);
		rc = run_bin(bin, args, out, sizeof(out));
		print_message("%s (this host has %d CUDA devices): exit %d: %s", args, n, rc, out);
		assert_int_equal(rc, 3);
		snprintf(args, sizeof(args), "cuda:%d", n);
		assert_non_null(strstr(out, args));
	} else {
		rc = run_bin(bin, "loopback --mem cuda", out, sizeof(out));
		print_message("loopback --mem cuda: exit %d: %s", rc, out);
		assert_int_equal(rc, 3);
		assert_non_null(strstr(out, "cuda"));
#ifdef HAVE_CUDA
		assert_non_null(strstr(out, "no CUDA device (cudaGetDeviceCount: "));
#else
		assert_non_null(strstr(out, "built without CUDA"));
#endif
		/* --gpu nearest is accepted and needs a GPU like any cuda buffer: environment, not usage */
		rc = run_bin(bin, "loopback --mem cuda --gpu nearest", out, sizeof(out));
		assert_int_equal(rc, 3);
	}
	rc = run_bin(bin, "loopback --mem cuda --gpu farthest", out, sizeof(out));
	assert_int_equal(rc, 2);
	rc = run_bin(bin, "matrix --gpu nearest --plan", out, sizeof(out));
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "--per-gpu"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gdr_used),
		cmocka_unit_test(test_gdr_warn_unused),
		cmocka_unit_test(test_peermem_loaded),
		cmocka_unit_test(test_cuda_present_real),
		cmocka_unit_test(test_mem_cuda_unavailable_exits_3),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
