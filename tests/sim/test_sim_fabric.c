/* test_sim_fabric.c: the simulated fat tree (lib/sim/sim_fabric.h): its lines and their errors, the route of
 * a direction, faults by component, and its topology file read back by lib/fabtopo. */
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

#include "discover/fabtopo.h"
#include "sim/sim_fabric.h"
#include "sim/sim_model.h"

static int parse(const char *text, struct rp_sim_model *m, struct rp_sim_error *err)
{
	return rp_sim_model_parse(text, strlen(text), m, err);
}

/* 8 nodes x 2 rails, 4-port leaves (2 leaves a rail), 2 spines. */
#define BASE "nodes 8\nadapters 2\nfabric 4 2 dmodk\n"

static void test_routes(void **state)
{
	struct rp_sim_model m;
	struct rp_sim_error err;
	double loss;

	(void)state;
	assert_int_equal(parse(BASE, &m, &err), 0);
	assert_non_null(m.fabric);
	assert_int_equal(m.fabric->leaves_per_rail, 2);
	/* endpoint = node x 2 + rail; leaf = rail x 2 + node / 4 */
	assert_int_equal(rp_sim_fabric_leaf(&m, 0), 0);
	assert_int_equal(rp_sim_fabric_leaf(&m, 2 * 5 + 1), 3);
	assert_int_equal(rp_sim_fabric_spine(&m, 0, 2 * 5), 5 % 2);   /* dmodk: the destination node */
	assert_int_equal(rp_sim_fabric_spine(&m, 2 * 5, 0), 0);
	assert_false(rp_sim_fabric_dir(&m, 0, 10, &loss));
	assert_true(loss == 0);
	rp_sim_model_fini(&m);
}

/* Each fault kills or slows exactly the directions whose route crosses its component. */
static void test_faults(void **state)
{
	struct rp_sim_model m;
	struct rp_sim_error err;
	double loss;

	(void)state;
	assert_int_equal(parse(BASE "fault uplink leaf0-0:spine1 dead\n", &m, &err), 0);
	for (uint32_t a = 0; a < 16; a += 2)
		for (uint32_t b = 0; b < 16; b += 2) {
			bool cross = (a / 2) / 4 != (b / 2) / 4;
			uint32_t s = (b / 2) % 2;
			bool want = a != b && cross && s == 1;   /* rail 0: leaf0-0 is one end of every cross pair */

			assert_int_equal(rp_sim_fabric_dir(&m, a, b, &loss), a != b && want);
		}
	rp_sim_model_fini(&m);

	assert_int_equal(parse(BASE "fault leaf leaf1-1 lossy:0.5\nfault cable node0/mlx5_0 dead\n", &m, &err), 0);
	assert_false(rp_sim_fabric_dir(&m, 2 * 4 + 1, 2 * 5 + 1, &loss));   /* both on leaf1-1 */
	assert_true(loss > 0.49 && loss < 0.51);
	assert_false(rp_sim_fabric_dir(&m, 1, 3, &loss));                   /* leaf1-0 */
	assert_true(loss == 0);
	assert_true(rp_sim_fabric_dir(&m, 2, 0, &loss));                    /* into the dead cable */
	assert_false(rp_sim_fabric_dir(&m, 2, 4, &loss));
	rp_sim_model_fini(&m);

	assert_int_equal(parse(BASE "fault spine spine0 flaky:0.5\nrandom-dead 0 3\n", &m, &err), 0);
	{
		size_t dead = 0, through = 0;

		for (uint32_t a = 0; a < 16; a++)
			for (uint32_t b = 0; b < 16; b++) {
				if (a == b || rp_sim_fabric_leaf(&m, a) == rp_sim_fabric_leaf(&m, b) ||
				    rp_sim_fabric_spine(&m, a, b) != 0)
					continue;
				through++;
				dead += rp_sim_fabric_dir(&m, a, b, &loss);
			}
		assert_true(through > 40 && dead > through / 5 && dead < through * 4 / 5);
	}
	rp_sim_model_fini(&m);
}

static void test_errors(void **state)
{
	static const struct { const char *text, *want; } bad[] = {
		{ "nodes 8\nadapters 2\nfault leaf leaf0-0 dead\n", "line 3: fault: needs a 'fabric' line" },
		{ "nodes 8\nadapters 2\nfabric 0 2 dmodk\n", "line 3: fabric: leaf ports '0'" },
		{ "nodes 8\nadapters 2\nfabric 4 2 lft\n", "routing 'lft' is not dmodk or ecmp" },
		{ BASE "fault leaf leaf2-0 dead\n", "line 4: fault: no leaf 'leaf2-0'" },
		{ BASE "fault uplink leaf0-0 dead\n", "is not leafR-K:spineS" },
		{ BASE "fault uplink leaf0-0:spine2 dead\n", "no uplink 'leaf0-0:spine2'" },
		{ BASE "fault spine spine0 lossy:1\n", "the fraction is not in (0, 1)" },
		{ BASE "fault spine spine0 broken\n", "mode 'broken'" },
		{ BASE "fault switch spine0 dead\n", "'switch' is not adapter, cable" },
		{ BASE "fault adapter node09/mlx5_0 dead\n", "no endpoint node09/mlx5_0" },
		{ BASE "fault spine spine1 dead\nfault spine spine1 flaky:0.1\n", "line 5: fault: spine spine1 already has a fault" },
		{ BASE "fabric 4 2 dmodk\n", "line 4: fabric is set twice" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rp_sim_model m;
		struct rp_sim_error err;
		char got[400];

		assert_int_equal(parse(bad[i].text, &m, &err), -EINVAL);
		snprintf(got, sizeof(got), "line %u: %s", err.line, err.msg);
		if (!strstr(got, bad[i].want))
			fail_msg("got '%s', want '%s'", got, bad[i].want);
	}
}

/* The topology file the simulator writes, read back: every endpoint on the leaf and port the simulator
 * uses, every direction's spine the simulator's. */
static void test_topology_round_trip(void **state)
{
	struct rp_sim_model m;
	struct rp_sim_error err;
	struct rp_fabtopo *t;
	struct rp_fabtopo_map mp;
	struct rp_endpoint eps[40];
	char *buf = NULL, e_text[256], leaf[64];
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(parse("nodes 10\nadapters 4\nfabric 4 3 dmodk\n", &m, &err), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(rp_sim_fabric_write_topology(&m, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rp_fabtopo_parse("sim", buf, len, &t, e_text, sizeof(e_text)), 0);
	free(buf);
	assert_true(t->dmodk);
	assert_int_equal(t->n_spines, 3);
	assert_int_equal(t->n_up, 4 * 3 * 3);
	for (uint32_t e = 0; e < 40; e++) {
		memset(&eps[e], 0, sizeof(eps[e]));
		rp_sim_ep_names(&m, e, eps[e].node, sizeof(eps[e].node), eps[e].device, sizeof(eps[e].device));
		eps[e].port = 1;
	}
	assert_int_equal(rp_fabtopo_map_build(t, eps, 40, &mp), 0);
	assert_int_equal(mp.n_unknown, 0);
	for (uint32_t a = 0; a < 40; a++) {
		rp_sim_fabric_leaf_name(&m, rp_sim_fabric_leaf(&m, a), leaf, sizeof(leaf));
		assert_string_equal(mp.leaf_names[mp.leaf[a]], leaf);
		assert_int_equal(mp.leaf_port[a], (a / 4) % 4 + 1);
		for (uint32_t b = 0; b < 40; b++) {
			uint32_t s = rp_fabtopo_map_spine(&mp, a, b);

			if (rp_sim_fabric_leaf(&m, a) == rp_sim_fabric_leaf(&m, b))
				assert_int_equal(s, RP_FABTOPO_NONE);
			else {
				snprintf(leaf, sizeof(leaf), "spine%u", rp_sim_fabric_spine(&m, a, b));
				assert_string_equal(mp.spine_names[s], leaf);
			}
		}
	}
	rp_fabtopo_map_fini(&mp);
	rp_fabtopo_destroy(t);
	rp_sim_model_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_topology_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
