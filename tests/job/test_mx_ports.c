/* test_mx_ports.c: the ports a matrix rank offers (lib/mx_ports), on fixture sysfs trees with the
 * CUDA runtime's GPU list wrapped (tests/job/test_mx_ports.wrap: what CUDA_VISIBLE_DEVICES would show).
 *
 * --per-gpu picks the GPU by the documented rule in both layouts: one GPU visible per task (srun
 * --gpus-per-task=1, CUDA_VISIBLE_DEVICES=N: CUDA index 0 whatever the local rank; before, local
 * rank 2 failed with "has no GPU") and every GPU visible to every rank (the local rank's); an
 * ambiguous layout is a clear error. The adapters are the chosen GPU's nearest (NCCL's rule), found
 * through its bus id in sysfs. Without --per-gpu every selected ACTIVE port is offered; a -d naming
 * no adapter gives the one MX_EP_NO_PORT entry named after it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#ifdef HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "fixture.h"
#include "fixture_health.h"
#include "job/mx_ports.h"
#include "nccl/nccl_rules.h"
#include "testutil.h"

/* The GPUs CUDA lists: bus ids in CUDA index order. */
static const char *visible[8];
static int n_visible;

#ifdef HAVE_CUDA
cudaError_t __wrap_cudaGetDeviceCount(int *count);
cudaError_t __wrap_cudaDeviceGetPCIBusId(char *bus, int len, int device);
cudaError_t __wrap_cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);

cudaError_t __wrap_cudaGetDeviceCount(int *count)
{
	if (n_visible == 0)
		return cudaErrorNoDevice;
	*count = n_visible;
	return cudaSuccess;
}

cudaError_t __wrap_cudaDeviceGetPCIBusId(char *bus, int len, int device)
{
	if (device < 0 || device >= n_visible)
		return cudaErrorInvalidDevice;
	snprintf(bus, (size_t)len, "%s", visible[device]);
	return cudaSuccess;
}

cudaError_t __wrap_cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
	memset(prop, 0, sizeof(*prop));
	snprintf(prop->name, sizeof(prop->name), "Test GPU %d", device);
	return cudaSuccess;
}
#endif

/* The DGX-H100 fixture's GPUs in PCI order. */
static const char *const dgx_gpus[8] = { "0000:03:00.0", "0000:04:00.0", "0000:23:00.0", "0000:24:00.0",
					 "0000:83:00.0", "0000:84:00.0", "0000:a3:00.0", "0000:a4:00.0" };

static struct rp_fx fx;

static int setup(void **state)
{
	(void)state;
	if (rp_fx_create(&fx) != 0 || rp_fx_machine_dgx_h100(&fx) != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rp_fx_destroy(&fx);
	return 0;
}

static struct mx_port_opts opts(bool per_gpu, int local_rank, int local_size)
{
	return (struct mx_port_opts){ .node_name = "nodeA", .nccl_version = RP_NCCL_VERSION_NEWEST, .per_gpu = per_gpu,
				      .local_rank = local_rank, .local_size = local_size, .sysfs_root = fx.root };
}

static void assert_devices(const struct mx_ports *p, const char *a, const char *b)
{
	if (p->n != 2 || strcmp(p->eps[0].device, a) != 0 || strcmp(p->eps[1].device, b) != 0)
		fail_msg("want %s and %s, got %zu port(s): %s%s%s (%s)", a, b, p->n, p->n ? p->eps[0].device : "",
			 p->n > 1 ? ", " : "", p->n > 1 ? p->eps[1].device : "", p->why);
	assert_int_equal(p->eps[0].port, 1);
	assert_string_equal(p->eps[0].node, "nodeA");
	assert_int_equal(p->eps[0].flags, 0);
}

static void need_cuda(void)
{
#ifndef HAVE_CUDA
	fprintf(stderr, "SKIP: built without CUDA: --per-gpu needs it (the rule itself is tested without)\n");
	skip();
#endif
}

static void test_rule(void **state)
{
	char why[256] = "";

	(void)state;
	assert_int_equal(mx_gpu_rule(1, 5, 8, why, sizeof(why)), 0);     /* one GPU per task */
	assert_int_equal(mx_gpu_rule(8, 5, 8, why, sizeof(why)), 5);     /* every GPU visible */
	assert_int_equal(mx_gpu_rule(8, 1, 2, why, sizeof(why)), 1);     /* fewer ranks than GPUs */
	assert_int_equal(mx_gpu_rule(2, 5, 8, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "local rank 5 of 8 sees 2 GPUs"));
	assert_int_equal(mx_gpu_rule(0, 0, 1, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "sees no GPU"));
}

static void test_one_gpu_per_task(void **state)
{
	struct mx_port_opts o = opts(true, 2, 8);
	struct mx_ports p;

	(void)state;
	need_cuda();
	visible[0] = dgx_gpus[2];          /* CUDA_VISIBLE_DEVICES=2: the task sees one GPU, index 0 */
	n_visible = 1;
	assert_int_equal(mx_ports_select(&o, &p), 0);
	assert_int_equal(p.gpu, 0);
	assert_string_equal(p.gpu_pci, "0000:23:00.0");
	assert_devices(&p, "mlx5_2", "mlx5_3");
	/* the last local rank too */
	visible[0] = dgx_gpus[7];
	o.local_rank = 7;
	assert_int_equal(mx_ports_select(&o, &p), 0);
	assert_int_equal(p.gpu, 0);
	assert_devices(&p, "mlx5_6", "mlx5_7");
}

static void test_every_gpu_visible(void **state)
{
	struct mx_port_opts o = opts(true, 5, 8);
	struct mx_ports p;

	(void)state;
	need_cuda();
	memcpy(visible, dgx_gpus, sizeof(visible));
	n_visible = 8;
	assert_int_equal(mx_ports_select(&o, &p), 0);
	assert_int_equal(p.gpu, 5);
	assert_string_equal(p.gpu_pci, "0000:84:00.0");
	assert_devices(&p, "mlx5_4", "mlx5_5");
}

static void test_ambiguous_or_missing_gpu(void **state)
{
	struct mx_port_opts o = opts(true, 5, 8);
	struct mx_ports p;

	(void)state;
	need_cuda();
	visible[0] = dgx_gpus[0];
	visible[1] = dgx_gpus[1];
	n_visible = 2;
	assert_int_equal(mx_ports_select(&o, &p), -ENODEV);
	assert_non_null(strstr(p.why, "sees 2 GPUs"));
	visible[0] = "0000:ee:00.0";       /* CUDA names a GPU sysfs does not have */
	n_visible = 1;
	assert_int_equal(mx_ports_select(&o, &p), -ENODEV);
	assert_non_null(strstr(p.why, "0000:ee:00.0"));
}

/* The GPU's nearest adapters as the release merges bus ids (tests/fixture_health.h's VF machine):
 * under 2.24.3 the VF keeps its real bus id and is nearest to the GPU beside it, so the rank offers
 * it; under 2.30.7 its id merges into 0000:03:00.0, which does not exist, and only the PF is offered.
 * (Release-blind code gives one answer for both.) */
static void test_nearest_per_release(void **state)
{
	struct rp_fx vf;
	struct mx_ports p;
	struct mx_port_opts o = { .node_name = "nodeA", .per_gpu = true, .local_rank = 0, .local_size = 1 };
	bool has_vf;

	(void)state;
	need_cuda();
	assert_int_equal(rp_fx_create(&vf), 0);
	assert_int_equal(rp_fxh_machine_vf(&vf), 0);
	o.sysfs_root = vf.root;
	visible[0] = "0000:04:00.0";
	n_visible = 1;
	o.nccl_version = RP_NCCL_V(2, 24, 3);
	assert_int_equal(mx_ports_select(&o, &p), 0);
	has_vf = false;
	for (size_t i = 0; i < p.n; i++)
		has_vf |= strcmp(p.eps[i].device, "mlx5_vf") == 0;
	if (!has_vf)
		fail_msg("2.24.3: the VF beside the GPU is not offered (%zu port(s), first %s)", p.n, p.n ? p.eps[0].device : "");
	o.nccl_version = RP_NCCL_V(2, 30, 7);
	assert_int_equal(mx_ports_select(&o, &p), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.eps[0].device, "mlx5_pf");
	rp_fx_destroy(&vf);
}

static void test_without_per_gpu(void **state)
{
	struct mx_port_opts o = opts(false, 3, 8);
	struct mx_ports p;

	(void)state;
	assert_int_equal(mx_ports_select(&o, &p), 0);
	assert_int_equal(p.n, 8);
	assert_int_equal(p.gpu, -1);
	assert_string_equal(p.eps[0].device, "mlx5_0");
	assert_int_equal(p.eps[0].link_gbps, 400);
	o.dev_spec = "=mlx5_9";
	assert_int_equal(mx_ports_select(&o, &p), 0);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.eps[0].flags, MX_EP_NO_PORT);
	assert_string_equal(p.eps[0].device, "mlx5_9");
	assert_non_null(strstr(p.why, "selects no active port"));
	/* an exact selection reads only its adapters; the order is still the node's (NCCL's) */
	o.dev_spec = "=mlx5_3,mlx5_1";
	assert_int_equal(mx_ports_select(&o, &p), 0);
	assert_devices(&p, "mlx5_1", "mlx5_3");
	/* the node's one whole read (the node-local leader's, for its other checks): every adapter */
	{
		struct rp_node node;

		assert_int_equal(mx_ports_select_node(&o, &p, &node), 0);
		assert_devices(&p, "mlx5_1", "mlx5_3");
		assert_true(node.n_hcas >= 8);
		rp_node_fini(&node);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule),
		cmocka_unit_test(test_one_gpu_per_task),
		cmocka_unit_test(test_every_gpu_visible),
		cmocka_unit_test(test_ambiguous_or_missing_gpu),
		cmocka_unit_test(test_without_per_gpu),
		cmocka_unit_test(test_nearest_per_release),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
