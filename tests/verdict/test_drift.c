/* test_drift.c: drift across a cluster (lib/verdict/drift.h): one odd firmware among four nodes, a 2:2
 * split with no side blamed, models never compared with each other, node fields counted once per
 * node, unknown values left out, the JSON, and the description of a fixture endpoint. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "verdict/drift.h"
#include "fixture.h"
#include "fixture_health.h"
#include "base/log.h"
#include "discover/node.h"
#include "testutil.h"

/* An endpoint of model "pci 0x15b3:0x1021" with every field set to a healthy value. */
static void ep_set(struct rp_drift_ep *e, const char *node, const char *dev, int port)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->node, sizeof(e->node), "%s", node);
	snprintf(e->device, sizeof(e->device), "%s", dev);
	e->port = port;
	snprintf(e->model, sizeof(e->model), "pci 0x15b3:0x1021");
	snprintf(e->value[RP_DF_FIRMWARE], RP_DRIFT_VALUE, "28.40.1000");
	snprintf(e->value[RP_DF_RATE], RP_DRIFT_VALUE, "4X NDR 400 Gb/s");
	snprintf(e->value[RP_DF_MTU], RP_DRIFT_VALUE, "4096");
	snprintf(e->value[RP_DF_LINK_LAYER], RP_DRIFT_VALUE, "InfiniBand");
	snprintf(e->value[RP_DF_GID_INDEX], RP_DRIFT_VALUE, "0");
	snprintf(e->value[RP_DF_PCIE], RP_DRIFT_VALUE, "Gen5 x16");
	snprintf(e->value[RP_DF_DRIVER], RP_DRIFT_VALUE, "mlx5_core 24.10-1.1.4");
	snprintf(e->value[RP_DF_RDMA_CORE], RP_DRIFT_VALUE, "50.0");
	snprintf(e->value[RP_DF_NCCL], RP_DRIFT_VALUE, "2.28.9");
}

/* Four nodes of two ports each. */
static void cluster(struct rp_drift_ep eps[8])
{
	static const char *const nodes[] = { "gpu01", "gpu02", "gpu03", "gpu04" };

	for (size_t i = 0; i < 8; i++)
		ep_set(&eps[i], nodes[i / 2], i % 2 ? "mlx5_1" : "mlx5_0", 1);
}

static void test_clean_cluster_no_warning(void **state)
{
	struct rp_drift_ep eps[8];
	struct rp_drift d;

	(void)state;
	cluster(eps);
	assert_int_equal(rp_drift_find(eps, 8, &d), 0);
	assert_int_equal(d.n_warnings, 0);
	rp_drift_fini(&d);
	rp_drift_fini(&d);   /* safe twice */
	assert_int_equal(rp_drift_find(eps, 0, &d), 0);
	assert_int_equal(d.n_warnings, 0);
	rp_drift_fini(&d);
}

/* gpu03 runs older firmware on both ports, and gpu02's mlx5_1 trained at HDR. */
static void test_odd_ones_out(void **state)
{
	struct rp_drift_ep eps[8];
	struct rp_drift d;

	(void)state;
	cluster(eps);
	snprintf(eps[4].value[RP_DF_FIRMWARE], RP_DRIFT_VALUE, "28.39.1002");
	snprintf(eps[5].value[RP_DF_FIRMWARE], RP_DRIFT_VALUE, "28.39.1002");
	snprintf(eps[3].value[RP_DF_RATE], RP_DRIFT_VALUE, "4X HDR 200 Gb/s");
	assert_int_equal(rp_drift_find(eps, 8, &d), 0);
	assert_int_equal(d.n_warnings, 2);
	assert_int_equal(d.warnings[0].field, RP_DF_FIRMWARE);
	assert_string_equal(d.warnings[0].value, "28.39.1002");
	assert_string_equal(d.warnings[0].majority, "28.40.1000");
	assert_string_equal(d.warnings[0].nodes, "gpu03 (mlx5_0:1, mlx5_1:1)");
	assert_int_equal(d.warnings[0].n_odd, 2);
	assert_string_equal(d.warnings[0].message, "firmware 28.39.1002 on gpu03 (mlx5_0:1, mlx5_1:1); the other 6 "
			    "endpoints of model pci 0x15b3:0x1021 have 28.40.1000");
	assert_int_equal(d.warnings[1].field, RP_DF_RATE);
	assert_string_equal(d.warnings[1].nodes, "gpu02 (mlx5_1:1)");
	assert_string_equal(d.warnings[1].majority, "4X NDR 400 Gb/s");
	rp_drift_fini(&d);
}

/* 2:2: no majority, both sides named, neither taken as the reference. */
static void test_tie_blames_nobody(void **state)
{
	struct rp_drift_ep eps[4];
	struct rp_drift d;

	(void)state;
	ep_set(&eps[0], "a", "rxe0", 1);
	ep_set(&eps[1], "b", "rxe0", 1);
	ep_set(&eps[2], "c", "rxe0", 1);
	ep_set(&eps[3], "d", "rxe0", 1);
	snprintf(eps[2].value[RP_DF_MTU], RP_DRIFT_VALUE, "1024");
	snprintf(eps[3].value[RP_DF_MTU], RP_DRIFT_VALUE, "1024");
	assert_int_equal(rp_drift_find(eps, 4, &d), 0);
	assert_int_equal(d.n_warnings, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(d.warnings[i].field, RP_DF_MTU);
		assert_string_equal(d.warnings[i].majority, "");
		assert_int_equal(d.warnings[i].n_odd, 2);
	}
	assert_string_equal(d.warnings[0].nodes, "a (rxe0:1), b (rxe0:1)");
	assert_string_equal(d.warnings[1].nodes, "c (rxe0:1), d (rxe0:1)");
	assert_string_equal(d.warnings[1].message, "active MTU 1024 on c (rxe0:1), d (rxe0:1); no majority among the 4 "
			    "endpoints of model pci 0x15b3:0x1021 (2 each at 4096 and 1024): none is taken as the reference");
	rp_drift_fini(&d);
}

/* Another model is its own group: its firmware and rate differ from the first model's by design. */
static void test_models_apart(void **state)
{
	struct rp_drift_ep eps[6];
	struct rp_drift d;

	(void)state;
	for (size_t i = 0; i < 6; i++)
		ep_set(&eps[i], i < 3 ? "x" : "y", i % 3 == 2 ? "bnxt_re0" : "mlx5_0", 1);
	for (size_t i = 2; i < 6; i += 3) {
		snprintf(eps[i].model, sizeof(eps[i].model), "pci 0x14e4:0x1750");
		snprintf(eps[i].value[RP_DF_FIRMWARE], RP_DRIFT_VALUE, "227.1.111.0");
		snprintf(eps[i].value[RP_DF_RATE], RP_DRIFT_VALUE, "200 Gb/s");
	}
	assert_int_equal(rp_drift_find(eps, 6, &d), 0);
	assert_int_equal(d.n_warnings, 0);
	rp_drift_fini(&d);
	/* One of the second model then differs from its only peer: a 1:1 split within that model. */
	snprintf(eps[5].value[RP_DF_FIRMWARE], RP_DRIFT_VALUE, "230.0.1.0");
	assert_int_equal(rp_drift_find(eps, 6, &d), 0);
	assert_int_equal(d.n_warnings, 2);
	assert_string_equal(d.warnings[0].model, "pci 0x14e4:0x1750");
	assert_string_equal(d.warnings[0].majority, "");
	rp_drift_fini(&d);
}

/* Node fields count nodes, not ports: gpu01's 4 ports at NCCL 2.27.3 are one node against two. */
static void test_node_fields_count_nodes(void **state)
{
	struct rp_drift_ep eps[6];
	struct rp_drift d;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		char dev[16];

		snprintf(dev, sizeof(dev), "mlx5_%zu", i);
		ep_set(&eps[i], "gpu01", dev, 1);
		snprintf(eps[i].value[RP_DF_NCCL], RP_DRIFT_VALUE, "2.27.3");
	}
	ep_set(&eps[4], "gpu02", "mlx5_0", 1);
	ep_set(&eps[5], "gpu03", "mlx5_0", 1);
	assert_int_equal(rp_drift_find(eps, 6, &d), 0);
	assert_int_equal(d.n_warnings, 1);
	assert_int_equal(d.warnings[0].field, RP_DF_NCCL);
	assert_string_equal(d.warnings[0].value, "2.27.3");
	assert_string_equal(d.warnings[0].majority, "2.28.9");
	assert_string_equal(d.warnings[0].nodes, "gpu01");
	assert_int_equal(d.warnings[0].n_known, 3);
	assert_string_equal(d.warnings[0].message, "NCCL 2.27.3 on gpu01; the other 2 nodes of model pci 0x15b3:0x1021 "
			    "have 2.28.9");
	rp_drift_fini(&d);
}

/* An unknown value is no vote and no outlier; a third value makes "k of the other n". */
static void test_unknown_and_three_values(void **state)
{
	struct rp_drift_ep eps[8];
	struct rp_drift d;

	(void)state;
	cluster(eps);
	eps[0].value[RP_DF_PCIE][0] = '\0';
	eps[1].value[RP_DF_PCIE][0] = '\0';
	assert_int_equal(rp_drift_find(eps, 8, &d), 0);
	assert_int_equal(d.n_warnings, 0);
	rp_drift_fini(&d);
	snprintf(eps[2].value[RP_DF_PCIE], RP_DRIFT_VALUE, "Gen4 x16");
	snprintf(eps[7].value[RP_DF_PCIE], RP_DRIFT_VALUE, "Gen5 x8");
	assert_int_equal(rp_drift_find(eps, 8, &d), 0);
	assert_int_equal(d.n_warnings, 2);
	assert_string_equal(d.warnings[0].message, "PCIe link Gen4 x16 on gpu02 (mlx5_0:1); 4 of the other 5 endpoints "
			    "of model pci 0x15b3:0x1021 have Gen5 x16");
	assert_string_equal(d.warnings[1].nodes, "gpu04 (mlx5_1:1)");
	rp_drift_fini(&d);
}

static void test_json(void **state)
{
	struct rp_drift_ep eps[3];
	struct rp_drift d;
	json_t *j, *w;

	(void)state;
	ep_set(&eps[0], "a", "mlx5_0", 1);
	ep_set(&eps[1], "b", "mlx5_0", 1);
	ep_set(&eps[2], "c", "mlx5_0", 1);
	snprintf(eps[1].value[RP_DF_RDMA_CORE], RP_DRIFT_VALUE, "44.0");
	assert_int_equal(rp_drift_find(eps, 3, &d), 0);
	j = rp_drift_to_json(&d);
	assert_non_null(j);
	assert_int_equal(json_array_size(j), 1);
	w = json_array_get(j, 0);
	assert_string_equal(json_string_value(rp_test_key(w, "code")), "drift");
	assert_string_equal(json_string_value(rp_test_key(w, "field")), "rdma_core");
	assert_string_equal(json_string_value(rp_test_key(w, "value")), "44.0");
	assert_string_equal(json_string_value(rp_test_key(w, "majority")), "50.0");
	assert_string_equal(json_string_value(rp_test_key(w, "nodes")), "b");
	assert_int_equal(json_integer_value(rp_test_key(w, "n_known")), 3);
	json_decref(j);
	rp_drift_fini(&d);
	assert_string_equal(rp_drift_field_str(RP_DF_COUNT_), "");
	for (int f = 0; f < RP_DF_COUNT_; f++)
		assert_true(rp_drift_field_str(f)[0] != '\0');
}

/* What a rank would send for mlx5_0 of the clean fixture machine; the driver from its module's
 * version file. The host is not probed (no uname, no libibverbs name). */
static void test_describe_fixture(void **state)
{
	struct rp_drift_ep e;
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	rp_test_discover(&fx, rp_fxh_machine_clean, &node);
	rp_drift_describe(&node, &node.hcas[0], &node.hcas[0].ports[0], "gpu01", 0, "2.28.9", false, &e);
	assert_string_equal(e.node, "gpu01");
	assert_string_equal(e.device, "mlx5_0");
	assert_int_equal(e.port, 1);
	assert_string_equal(e.model, "pci 0x15b3:0x1021");
	assert_string_equal(e.value[RP_DF_FIRMWARE], "28.39.1002");
	assert_string_equal(e.value[RP_DF_RATE], "4X NDR 400 Gb/s");
	assert_string_equal(e.value[RP_DF_MTU], "");   /* no verbs on a fixture, InfiniBand: unknown */
	assert_string_equal(e.value[RP_DF_LINK_LAYER], "InfiniBand");
	assert_string_equal(e.value[RP_DF_GID_INDEX], "0");
	assert_string_equal(e.value[RP_DF_PCIE], "Gen5 x16");
	assert_string_equal(e.value[RP_DF_DRIVER], "");
	assert_string_equal(e.value[RP_DF_RDMA_CORE], "");
	assert_string_equal(e.value[RP_DF_NCCL], "2.28.9");
	assert_int_equal(rp_fx_mkdir(&fx, "bus/pci/drivers/mlx5_core"), 0);
	{
		/* driver -> ../ as many times as the function is deep, then bus/pci/drivers/mlx5_core */
		char rel[RP_PATHBUF + 16], target[256] = "";

		for (const char *c = node.hcas[0].pci_path; *c; c++)
			if (*c == '/' || c == node.hcas[0].pci_path)
				strcat(target, "../");
		strcat(target, "bus/pci/drivers/mlx5_core");
		snprintf(rel, sizeof(rel), "%s/driver", node.hcas[0].pci_path);
		assert_int_equal(rp_fx_symlink(&fx, rel, target), 0);
	}
	assert_int_equal(rp_fx_write(&fx, "module/mlx5_core/version", "24.10-1.1.4\n"), 0);
	rp_drift_describe(&node, &node.hcas[0], &node.hcas[0].ports[0], "gpu01", 0, "2.28.9", false, &e);
	assert_string_equal(e.value[RP_DF_DRIVER], "mlx5_core 24.10-1.1.4");
	rp_test_discover_done(&fx, &node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_cluster_no_warning),
		cmocka_unit_test(test_odd_ones_out),
		cmocka_unit_test(test_tie_blames_nobody),
		cmocka_unit_test(test_models_apart),
		cmocka_unit_test(test_node_fields_count_nodes),
		cmocka_unit_test(test_unknown_and_three_values),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_describe_fixture),
	};

	return cmocka_run_group_tests_name("drift", tests, quiet, NULL);
}
