/* test_cmd_topology.c: --topology as a user meets it (the built binary, RP_TEST_BIN), over the
 * simulated fat tree: a dead leaf-spine link is the first suspect in the text and the JSON and drains
 * nothing; without the file its failures are still reported; a bad file exits 2 naming its line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "sim/sim_fabric.h"
#include "sim/sim_model.h"
#include "testutil.h"

static char out[1 << 18];

/* 16 nodes x 1 adapter, 4-port leaves (4 leaves), 2 spines, D-mod-K; one uplink dead. */
static const char model[] = "nodes 16\nadapters 1\nrate 100\nbandwidth 100\nlatency 0\nsetup 10ms\n"
			    "round-overhead 5ms\nfabric 4 2 dmodk\nfault uplink leaf0-1:spine1 dead\n";

static void files_put(char *mpath, char *tpath, size_t len)
{
	struct rp_sim_model m;
	struct rp_sim_error err;
	FILE *f;

	snprintf(mpath, len, "%s/fat.model", rp_test_tmpdir());
	snprintf(tpath, len, "%s/fat.topo", rp_test_tmpdir());
	f = fopen(mpath, "w");
	assert_non_null(f);
	fputs(model, f);
	fclose(f);
	assert_int_equal(rp_sim_model_parse(model, strlen(model), &m, &err), 0);
	f = fopen(tpath, "w");
	assert_non_null(f);
	assert_int_equal(rp_sim_fabric_write_topology(&m, f), 0);
	fclose(f);
	rp_sim_model_fini(&m);
}

static void test_uplink_suspect(void **state)
{
	char mpath[512], tpath[512], jpath[600];
	json_error_t jerr;
	json_t *root, *verdict, *s0, *nodes, *nd;
	size_t i;

	(void)state;
	files_put(mpath, tpath, sizeof(mpath));
	snprintf(jpath, sizeof(jpath), "%s/fat.json", rp_test_tmpdir());
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --topology '%s' "
					 "--json '%s' 2>/dev/null", mpath, tpath, jpath), 1);
	assert_non_null(strstr(out, "\nsuspects (most likely first):\n  1. uplink leaf0-1 - spine1: "));
	assert_non_null(strstr(out, "not an adapter: nothing drained for it"));
	assert_null(strstr(out, "drain: mlx5"));
	root = json_load_file(jpath, 0, &jerr);
	assert_non_null(root);
	verdict = rp_test_key(root, "verdict");
	s0 = json_array_get(rp_test_key(verdict, "suspects"), 0);
	assert_non_null(s0);
	assert_string_equal(json_string_value(rp_test_key(s0, "kind")), "uplink");
	assert_string_equal(json_string_value(rp_test_key(s0, "name")), "leaf0-1 - spine1");
	assert_int_equal(json_integer_value(rp_test_key(s0, "failed")), json_integer_value(rp_test_key(s0, "measured")));
	assert_true(json_is_false(rp_test_key(s0, "drain")));
	assert_true(json_is_object(rp_test_key(verdict, "path_faults")));
	nodes = rp_test_key(root, "nodes");
	json_array_foreach(nodes, i, nd)
		assert_int_equal(json_array_size(rp_test_key(nd, "drain")), 0);
	assert_int_equal(i, 16);
	json_decref(root);

	/* without the file: the failures are there; suspects are adapters, if any, and the path faults */
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' 2>/dev/null",
					 mpath), 1);
	assert_null(strstr(out, "uplink leaf0-1"));
	assert_true(strstr(out, "path faults: ") || strstr(out, "drain: mlx5_0:1"));
}

static void test_bad_topology(void **state)
{
	char mpath[512], tpath[512];
	FILE *f;

	(void)state;
	files_put(mpath, tpath, sizeof(mpath));
	f = fopen(tpath, "w");
	assert_non_null(f);
	fputs("route dmodk\nadapter node00/mlx5_0 leaf0-0\n", f);
	fclose(f);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --topology '%s' 2>&1",
					 mpath, tpath), 2);
	assert_non_null(strstr(out, "--topology: "));
	assert_non_null(strstr(out, "fat.topo line 2: adapter takes NODE/DEVICE[:PORT] LEAF LEAF_PORT"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --topology "
					 "/nonexistent/topo 2>&1", mpath), 3);
	assert_non_null(strstr(out, "open /nonexistent/topo: No such file or directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uplink_suspect),
		cmocka_unit_test(test_bad_topology),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
