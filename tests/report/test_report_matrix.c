/* test_report_matrix.c: the matrix report's keys beside its pairs and the run's pass rule
 * (lib/report/report_matrix.h): a round that did not happen is never reported as passed, the nodes'
 * drains and unusable adapters with their reasons, a name that is not UTF-8, the sweep's keys, the NCCL
 * release mismatch, the notable report's sample of passes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/util.h"
#include "matrix/mx_run.h"
#include "matrix/mx_sweep.h"
#include "nccl/nccl_rules.h"
#include "nccl/nccl_version.h"
#include "report/report_matrix.h"
#include "verdict/result_seq.h"

/* Two nodes of two adapters each; node b's second name is not UTF-8. */
struct fixture {
	struct mx_ep eps[4];
	struct rp_verdict_ep veps[4];
	struct rp_verdict_node nodes[2];
	struct rp_verdict v;
	struct rp_verdict_cfg vcfg;
	struct rp_matrix_facts f;
};

static void ep_set(struct mx_ep *x, const char *node, const char *dev, int owner)
{
	memset(x, 0, sizeof(*x));
	rp_strlcpy(x->ep.node, node, sizeof(x->ep.node));
	rp_strlcpy(x->ep.device, dev, sizeof(x->ep.device));
	x->ep.port = 1;
	x->ep.link_gbps = 400;
	x->owner = owner;
}

/* A complete run of 5 rounds whose verdict passes; tests change what they test. */
static void fixture_build(struct fixture *fx)
{
	memset(fx, 0, sizeof(*fx));
	ep_set(&fx->eps[0], "a", "mlx5_0", 0);
	ep_set(&fx->eps[1], "a", "mlx5_1", 0);
	ep_set(&fx->eps[2], "b", "mlx5_0", 1);
	ep_set(&fx->eps[3], "b", "mlx5_1", 1);
	for (size_t e = 0; e < 4; e++)
		fx->veps[e] = (struct rp_verdict_ep){ .pairs = 6, .measured = true, .worked = true, .peers = 3 };
	fx->nodes[0] = (struct rp_verdict_node){ .first_ep = 0, .n_eps = 2, .recommended = "=mlx5_0:1,mlx5_1:1" };
	fx->nodes[1] = (struct rp_verdict_node){ .first_ep = 2, .n_eps = 2, .recommended = "=mlx5_0:1,mlx5_1:1" };
	fx->v = (struct rp_verdict){ .n_pairs = 12, .n_ok = 12, .pass = true, .eps = fx->veps, .n_eps = 4,
				     .nodes = fx->nodes, .n_nodes = 2 };
	rp_verdict_cfg_default(&fx->vcfg);
	fx->f = (struct rp_matrix_facts){ .pattern = "full", .seed = 7, .eps = fx->eps, .n_eps = 4, .n_rounds = 5,
					  .rounds_done = 5, .rounds_run = 5, .n_results = 12, .vcfg = &fx->vcfg,
					  .elapsed_s = 1.5 };
}

/* The report's root after rp_matrix_report_json, which must succeed. */
static json_t *report(const struct fixture *fx, size_t n_listed)
{
	json_t *root = json_object();

	assert_non_null(root);
	assert_null(rp_matrix_report_json(root, &fx->f, &fx->v, n_listed));
	return root;
}

static json_t *at(json_t *o, const char *a, const char *b)
{
	json_t *j = json_object_get(o, a);

	if (b)
		j = json_object_get(j, b);
	assert_non_null(j);
	return j;
}

static void test_pass_needs_every_round(void **state)
{
	struct fixture fx;

	(void)state;
	fixture_build(&fx);
	assert_true(rp_matrix_passed(&fx.f, &fx.v));
	fx.f.rounds_done = 4;          /* a round not run: its pairs were never measured */
	assert_false(rp_matrix_passed(&fx.f, &fx.v));
	fixture_build(&fx);
	fx.f.stop_sig = 15;
	assert_false(rp_matrix_passed(&fx.f, &fx.v));
	fixture_build(&fx);
	fx.f.conc = true;
	fx.f.conc_sum.n_failed = 1;
	assert_false(rp_matrix_passed(&fx.f, &fx.v));
	fixture_build(&fx);
	fx.v.pass = false;
	assert_false(rp_matrix_passed(&fx.f, &fx.v));
}

static void test_json_incomplete_run_fails(void **state)
{
	struct fixture fx;
	json_t *root;

	(void)state;
	fixture_build(&fx);
	fx.f.rounds_done = 3;
	fx.f.rounds_run = 3;
	root = report(&fx, 12);        /* every pair measured passed, but two rounds never ran */
	assert_true(json_is_false(at(root, "verdict", "pass")));
	assert_true(json_is_false(at(root, "matrix", "complete")));
	assert_true(json_is_false(at(root, "matrix", "interrupted")));
	json_decref(root);

	fx.f.rounds_run = 4;           /* round 4 cut short by the stop */
	fx.f.stop_sig = 2;
	root = report(&fx, 12);
	assert_true(json_is_false(at(root, "verdict", "pass")));
	assert_true(json_is_true(at(root, "matrix", "interrupted")));
	assert_int_equal(json_integer_value(at(root, "matrix", "signal")), 2);
	assert_int_equal(json_integer_value(at(root, "matrix", "rounds_done")), 3);
	assert_int_equal(json_integer_value(at(root, "matrix", "rounds_run")), 4);
	assert_int_equal(json_integer_value(at(root, "matrix", "rounds")), 5);
	json_decref(root);

	fixture_build(&fx);
	root = report(&fx, 12);
	assert_true(json_is_true(at(root, "verdict", "pass")));
	assert_true(json_is_true(at(root, "matrix", "complete")));
	assert_true(json_is_null(at(root, "matrix", "signal")));
	assert_true(json_is_null(at(root, "matrix", "sweep")));
	assert_null(json_object_get(at(root, "matrix", NULL), "startup_s"));   /* not known: left out */
	json_decref(root);
}

static void test_json_nodes(void **state)
{
	struct fixture fx;
	json_t *root, *nodes, *a, *b;

	(void)state;
	fixture_build(&fx);
	fx.veps[0].drain = true;
	rp_strlcpy(fx.veps[0].why, "reached no peer that the others reach", sizeof(fx.veps[0].why));
	fx.veps[3].unusable = true;
	rp_strlcpy(fx.veps[3].why, "its leaf explains its failures", sizeof(fx.veps[3].why));
	fx.nodes[0] = (struct rp_verdict_node){ .first_ep = 0, .n_eps = 2, .n_drain = 1, .recommended = "=mlx5_1:1" };
	fx.nodes[1] = (struct rp_verdict_node){ .first_ep = 2, .n_eps = 2, .n_unusable = 1, .recommended = NULL };
	rp_strlcpy(fx.eps[3].ep.device, "mlx5_\xff", sizeof(fx.eps[3].ep.device));   /* not UTF-8 */
	fx.v.pass = false;
	root = report(&fx, 12);
	nodes = at(root, "nodes", NULL);
	assert_int_equal(json_array_size(nodes), 2);
	a = json_array_get(nodes, 0);
	b = json_array_get(nodes, 1);
	assert_string_equal(json_string_value(at(a, "node", NULL)), "a");
	assert_int_equal(json_array_size(at(a, "drain", NULL)), 1);
	assert_string_equal(json_string_value(json_array_get(at(a, "drain", NULL), 0)), "mlx5_0:1");
	assert_string_equal(json_string_value(at(a, "drain_reasons", "mlx5_0:1")), "reached no peer that the others reach");
	assert_string_equal(json_string_value(at(a, "recommended_nccl_ib_hca", NULL)), "=mlx5_1:1");
	assert_int_equal(json_array_size(at(b, "drain", NULL)), 0);
	assert_int_equal(json_array_size(at(b, "unusable", NULL)), 1);
	assert_string_equal(json_string_value(json_array_get(at(b, "unusable", NULL), 0)), "mlx5_?:1");
	assert_string_equal(json_string_value(at(b, "unusable_reasons", "mlx5_?:1")), "its leaf explains its failures");
	assert_true(json_is_null(at(b, "recommended_nccl_ib_hca", NULL)));
	assert_string_equal(json_string_value(json_object_get(json_array_get(at(root, "matrix", "endpoints"), 3),
							       "device")), "mlx5_?");
	json_decref(root);
}

static void test_json_sweep(void **state)
{
	struct fixture fx;
	struct mx_sweep sw = { .width = 4, .rounds = 3, .n_dead = 2, .n_ep_dead = 1, .n_ep_dirs = 6, .n_confirm = 1 };
	struct mx_run run;
	json_t *root, *s;

	(void)state;
	memset(&run, 0, sizeof(run));
	run.n_late = 2;
	run.holds.reused = 9;
	fixture_build(&fx);
	fx.f.sweep = &sw;
	fx.f.sweep_s = 0.5;
	root = report(&fx, 12);   /* without the run: the sweep's own counts only */
	s = at(root, "matrix", "sweep");
	assert_int_equal(json_integer_value(at(s, "width", NULL)), 4);
	assert_int_equal(json_integer_value(at(s, "unreachable", NULL)), 2);
	assert_true(json_is_null(at(s, "screen_s", NULL)));
	assert_null(json_object_get(s, "dead_endpoints"));
	json_decref(root);

	fx.f.run = &run;
	fx.f.hold = true;
	root = report(&fx, 12);
	s = at(root, "matrix", "sweep");
	assert_true(json_is_true(at(s, "hold", NULL)));
	assert_int_equal(json_integer_value(at(s, "dead_endpoints", NULL)), 1);
	assert_int_equal(json_integer_value(at(s, "endpoint_dead_directions", NULL)), 6);
	assert_int_equal(json_integer_value(at(s, "late_rounds", NULL)), 2);
	assert_int_equal(json_integer_value(at(s, "rank0_writes_on_held", NULL)), 9);
	assert_true(json_is_null(at(s, "hold_off", NULL)));
	json_decref(root);
}

static void test_json_listed_and_nccl(void **state)
{
	struct fixture fx;
	struct rp_nccl_rank_version rv[2] = { { .rank = 0, .node = "a" }, { .rank = 1, .node = "b" } };
	json_t *root, *pl, *w;

	(void)state;
	assert_int_equal(rp_nccl_version_parse("2.30.7", &rv[0].version), 0);
	assert_int_equal(rp_nccl_version_parse("2.18.6", &rv[1].version), 0);
	fixture_build(&fx);
	fx.f.list_notable = true;
	fx.f.jsonl = "every.jsonl";
	fx.f.rank_ver = rv;
	fx.f.n_rank_ver = 2;
	root = report(&fx, 3);
	pl = at(root, "matrix", "pairs_listed");
	assert_string_equal(json_string_value(at(pl, "which", NULL)), "notable");
	assert_int_equal(json_integer_value(at(pl, "listed", NULL)), 3);
	assert_int_equal(json_integer_value(at(pl, "not_listed", NULL)), 9);
	assert_string_equal(json_string_value(at(pl, "every_pair_in", NULL)), "every.jsonl");
	assert_int_equal(json_array_size(at(root, "nccl_versions", NULL)), 2);
	assert_string_equal(json_string_value(at(json_array_get(at(root, "nccl_versions", NULL), 1), "version", NULL)),
			    "2.18.6");
	w = at(root, "warnings", NULL);
	assert_int_equal(json_array_size(w), 1);
	assert_string_equal(json_string_value(at(json_array_get(w, 0), "code", NULL)), "nccl_version_mismatch");
	json_decref(root);

	rv[1].version = rv[0].version;   /* one release: no warning */
	root = report(&fx, 3);
	assert_int_equal(json_array_size(at(root, "warnings", NULL)), 0);
	json_decref(root);
}

/* The notable report's sample of plain passes goes under matrix.pairs_listed; without that key there
 * is nowhere to put it, and the call says so instead of dropping it. */
static void test_ok_sample(void **state)
{
	struct rp_pair_result res[3];
	struct rp_endpoint s = { .port = 1 }, d = { .port = 1 };
	struct rp_result_seq seq;
	struct fixture fx;
	json_t *root, *sample;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		rp_pair_result_init(&res[i], &s, &d);
		res[i].status = RP_ST_OK;
		res[i].gbps = 100;
	}
	res[1].status = RP_ST_TIMEOUT;   /* a failure is listed, never a sample of passes */
	seq = rp_result_seq_array(res, 3);
	root = json_object();
	assert_int_equal(rp_matrix_ok_sample_json(root, &seq), -ENOMEM);
	json_decref(root);
	fixture_build(&fx);
	root = report(&fx, 1);
	assert_int_equal(rp_matrix_ok_sample_json(root, &seq), 0);
	sample = at(at(root, "matrix", "pairs_listed"), "ok_sample", NULL);
	assert_int_equal(json_array_size(sample), 2);
	json_decref(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_needs_every_round),
		cmocka_unit_test(test_json_incomplete_run_fails),
		cmocka_unit_test(test_json_nodes),
		cmocka_unit_test(test_json_sweep),
		cmocka_unit_test(test_json_listed_and_nccl),
		cmocka_unit_test(test_ok_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
