/* test_verdict.c: thresholds, outliers, which adapters are drained and the NCCL_IB_HCA recommended. */
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

#include "verdict.h"

#define MAX_EPS 8
#define MAX_PAIRS (MAX_EPS * MAX_EPS)

struct fixture {
	struct rp_endpoint eps[MAX_EPS];
	size_t n_eps;
	struct rp_pair_result res[MAX_PAIRS];
	uint32_t pair_eps[2 * MAX_PAIRS];
	size_t n;
};

static void ep_add(struct fixture *f, const char *node, const char *dev, double link)
{
	struct rp_endpoint *e = &f->eps[f->n_eps++];

	memset(e, 0, sizeof(*e));
	snprintf(e->node, sizeof(e->node), "%s", node);
	snprintf(e->device, sizeof(e->device), "%s", dev);
	e->port = 1;
	e->link_gbps = link;
}

/* Add the directed pair a->b: ok at gbps, or failed with st. */
static void pair_add(struct fixture *f, uint32_t a, uint32_t b, enum rp_status st, double gbps)
{
	struct rp_pair_result *r = &f->res[f->n];

	rp_pair_result_init(r, &f->eps[a], &f->eps[b]);
	r->status = RP_ST_OK;
	r->gbps = gbps;
	r->verified = st == RP_ST_OK;
	if (st != RP_ST_OK)
		rp_pair_result_fail(r, st, "synthetic %s", rp_status_code(st));
	f->pair_eps[2 * f->n] = a;
	f->pair_eps[2 * f->n + 1] = b;
	f->n++;
}

static struct rp_verdict_cfg cfg_none(void)
{
	return (struct rp_verdict_cfg){ .min_bw = 0, .outlier = 0 };
}

static void test_min_bw_parse(void **state)
{
	struct rp_verdict_cfg c;

	(void)state;
	rp_verdict_cfg_default(&c);
	assert_false(c.min_bw_absolute);
	assert_true(c.min_bw > 0.89 && c.min_bw < 0.91);
	assert_int_equal(rp_verdict_min_bw_parse("0.75", &c), 0);
	assert_false(c.min_bw_absolute);
	assert_true(c.min_bw > 0.749 && c.min_bw < 0.751);
	assert_int_equal(rp_verdict_min_bw_parse("80%", &c), 0);
	assert_true(c.min_bw > 0.799 && c.min_bw < 0.801);
	assert_int_equal(rp_verdict_min_bw_parse("180G", &c), 0);
	assert_true(c.min_bw_absolute);
	assert_true(c.min_bw > 179.9 && c.min_bw < 180.1);
	assert_int_equal(rp_verdict_min_bw_parse("12.5gbps", &c), 0);
	assert_true(c.min_bw_absolute);
	assert_int_equal(rp_verdict_min_bw_parse("0", &c), 0);
	assert_true(c.min_bw == 0);
	/* A bare number above 1 is ambiguous: rejected, not guessed. */
	assert_int_equal(rp_verdict_min_bw_parse("180", &c), -ERANGE);
	assert_int_equal(rp_verdict_min_bw_parse("150%", &c), -ERANGE);
	assert_int_equal(rp_verdict_min_bw_parse("", &c), -EINVAL);
	assert_int_equal(rp_verdict_min_bw_parse("G", &c), -EINVAL);
	assert_int_equal(rp_verdict_min_bw_parse("90Mb", &c), -EINVAL);
	assert_int_equal(rp_verdict_min_bw_parse("-1", &c), -EINVAL);
}

static void test_fraction_and_absolute_thresholds(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	ep_add(&f, "a", "mlx5_0", 100);
	ep_add(&f, "b", "mlx5_0", 100);
	ep_add(&f, "c", "mlx5_0", 0);        /* rate unknown: a fraction cannot apply */
	pair_add(&f, 0, 1, RP_ST_OK, 95);
	pair_add(&f, 1, 0, RP_ST_OK, 85);
	pair_add(&f, 0, 2, RP_ST_OK, 5);
	assert_int_equal(rp_verdict_min_bw_parse("0.9", &c), 0);
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_int_equal(f.res[0].status, RP_ST_OK);
	assert_int_equal(f.res[1].status, RP_ST_BELOW_THRESHOLD);
	assert_non_null(strstr(f.res[1].reason, "link rate"));
	assert_int_equal(f.res[2].status, RP_ST_OK);
	assert_int_equal(v.n_below, 1);
	assert_false(v.pass);
	rp_verdict_fini(&v);

	/* The same rates against an absolute 90 Gb/s: the unknown-rate pair now fails too. */
	for (size_t i = 0; i < f.n; i++)
		f.res[i].status = RP_ST_OK;
	assert_int_equal(rp_verdict_min_bw_parse("90G", &c), 0);
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_int_equal(f.res[0].status, RP_ST_OK);
	assert_int_equal(f.res[1].status, RP_ST_BELOW_THRESHOLD);
	assert_int_equal(f.res[2].status, RP_ST_BELOW_THRESHOLD);
	assert_non_null(strstr(f.res[2].reason, "--min-bw"));
	rp_verdict_fini(&v);
}

/* Four endpoints at 100 Gb/s, but writes into endpoint 3 run at 30: outliers against the source
 * rows' medians; endpoint 3 gets the blame and is drained. */
static void test_outliers_blame_the_slow_adapter(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	for (int i = 0; i < 4; i++) {
		char node[8];

		snprintf(node, sizeof(node), "n%d", i);
		ep_add(&f, node, "mlx5_0", 200);
	}
	for (uint32_t a = 0; a < 4; a++)
		for (uint32_t b = 0; b < 4; b++)
			if (a != b)
				pair_add(&f, a, b, RP_ST_OK, b == 3 ? 30 : 100);
	c.outlier = 0.5;
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	for (size_t i = 0; i < f.n; i++) {
		bool into3 = f.pair_eps[2 * i + 1] == 3;

		assert_int_equal(f.res[i].status, into3 ? RP_ST_BELOW_THRESHOLD : RP_ST_OK);
		if (into3)
			assert_non_null(strstr(f.res[i].reason, "outlier"));
	}
	assert_int_equal(v.n_below, 3);
	for (int e = 0; e < 4; e++)
		assert_int_equal(v.eps[e].drain, e == 3);
	assert_string_equal(v.nodes[0].recommended, "=mlx5_0:1");
	assert_null(v.nodes[3].recommended);
	rp_verdict_fini(&v);
}

/* The VM scenario: nodes 0-2 on one fabric, node 3 on another. */
static void test_unreachable_adapter_drained(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	for (int i = 0; i < 4; i++) {
		char node[8], dev[8];

		snprintf(node, sizeof(node), "node%d", i);
		snprintf(dev, sizeof(dev), "rxe%d", i);
		ep_add(&f, node, dev, 10);
	}
	for (uint32_t a = 0; a < 4; a++)
		for (uint32_t b = 0; b < 4; b++)
			if (a != b)
				pair_add(&f, a, b, (a == 3 || b == 3) ? RP_ST_RTR : RP_ST_OK, 0.2);
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_false(v.pass);
	assert_int_equal(v.n_ok, 6);
	assert_int_equal(v.n_failed, 6);
	for (int e = 0; e < 4; e++) {
		char want[16];

		assert_int_equal(v.eps[e].drain, e == 3);
		assert_int_equal(v.nodes[e].n_eps, 1);
		snprintf(want, sizeof(want), "=rxe%d:1", e);
		if (e < 3)
			assert_string_equal(v.nodes[e].recommended, want);
	}
	assert_non_null(strstr(v.eps[3].why, "reached no peer"));
	assert_null(v.nodes[3].recommended);
	assert_int_equal(v.eps[0].fabric, v.eps[2].fabric);
	assert_true(v.eps[3].fabric != v.eps[0].fabric);
	rp_verdict_fini(&v);
}

/* Two nodes with two rails on separate fabrics, measured with full: cross-rail pairs fail, which
 * is the design, not a broken adapter: nothing is drained (the run still fails). */
static void test_separate_rails_not_drained(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	ep_add(&f, "a", "mlx5_0", 400);
	ep_add(&f, "a", "mlx5_1", 400);
	ep_add(&f, "b", "mlx5_0", 400);
	ep_add(&f, "b", "mlx5_1", 400);
	for (uint32_t x = 0; x < 4; x++)
		for (uint32_t y = 0; y < 4; y++)
			if (x != y)
				pair_add(&f, x, y, (x % 2 == y % 2) ? RP_ST_OK : RP_ST_RETRY_EXCEEDED, 350);
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_false(v.pass);
	for (int e = 0; e < 4; e++)
		assert_false(v.eps[e].drain);
	assert_int_equal(v.n_nodes, 2);
	assert_string_equal(v.nodes[0].recommended, "=mlx5_0:1,mlx5_1:1");
	assert_string_equal(v.nodes[1].recommended, "=mlx5_0:1,mlx5_1:1");
	rp_verdict_fini(&v);
}

/* Three adapters per node on one fabric; mlx5_1 of node b fails with everyone: only it is drained,
 * and b's recommendation lists the other two with exact names and ports. */
static void test_recommendation_skips_drained(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	ep_add(&f, "a", "mlx5_0", 400);
	ep_add(&f, "a", "mlx5_1", 400);
	ep_add(&f, "a", "mlx5_10", 400);
	ep_add(&f, "b", "mlx5_0", 400);
	ep_add(&f, "b", "mlx5_1", 400);
	ep_add(&f, "b", "mlx5_10", 400);
	for (uint32_t x = 0; x < 6; x++)
		for (uint32_t y = 0; y < 6; y++)
			if (x != y)
				pair_add(&f, x, y, (x == 4 || y == 4) ? RP_ST_TIMEOUT : RP_ST_OK, 380);
	/* one good pair for mlx5_1 of b, so it is not "reached no peer" but blamed by the cover */
	f.res[f.n - 1].status = RP_ST_OK;
	assert_int_equal(f.pair_eps[2 * (f.n - 1)], 5);
	assert_int_equal(f.pair_eps[2 * (f.n - 1) + 1], 4);
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	for (int e = 0; e < 6; e++)
		assert_int_equal(v.eps[e].drain, e == 4);
	assert_non_null(strstr(v.eps[4].why, "failed on its fabric"));
	assert_string_equal(v.nodes[0].recommended, "=mlx5_0:1,mlx5_1:1,mlx5_10:1");
	assert_string_equal(v.nodes[1].recommended, "=mlx5_0:1,mlx5_10:1");
	assert_int_equal(v.nodes[1].n_drain, 1);
	rp_verdict_fini(&v);
}

static void test_all_ok_passes(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c;
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	rp_verdict_cfg_default(&c);
	ep_add(&f, "a", "rxe0", 10);
	ep_add(&f, "b", "rxe0", 10);
	pair_add(&f, 0, 1, RP_ST_OK, 9.5);
	pair_add(&f, 1, 0, RP_ST_OK, 9.4);
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_true(v.pass);
	assert_int_equal(v.n_ok, 2);
	assert_false(v.eps[0].drain);
	assert_false(v.eps[1].drain);
	rp_verdict_fini(&v);
}

/* 16 nodes x 8 adapters, every ordered pair: two adapters fail with everyone but one peer. Exactly
 * those two are drained (by the cover, since each moved data with someone). */
static void test_cover_at_scale(void **state)
{
	size_t n_eps = 128, n = 0;
	struct rp_endpoint *eps = calloc(n_eps, sizeof(*eps));
	struct rp_pair_result *res = calloc(n_eps * n_eps, sizeof(*res));
	uint32_t *pe = calloc(2 * n_eps * n_eps, sizeof(*pe));
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	assert_non_null(eps);
	assert_non_null(res);
	assert_non_null(pe);
	for (size_t e = 0; e < n_eps; e++) {
		snprintf(eps[e].node, sizeof(eps[e].node), "n%02zu", e / 8);
		snprintf(eps[e].device, sizeof(eps[e].device), "mlx5_%zu", e % 8);
		eps[e].port = 1;
		eps[e].link_gbps = 400;
	}
	for (uint32_t a = 0; a < n_eps; a++) {
		for (uint32_t b = 0; b < n_eps; b++) {
			bool bad = (a == 5 || b == 5 || a == 77 || b == 77) && !(a + b == 11 || a + b == 155);

			if (a == b)
				continue;
			rp_pair_result_init(&res[n], &eps[a], &eps[b]);
			res[n].status = bad ? RP_ST_RETRY_EXCEEDED : RP_ST_OK;
			res[n].gbps = 380;
			pe[2 * n] = a;
			pe[2 * n + 1] = b;
			n++;
		}
	}
	assert_int_equal(rp_verdict_apply(&c, eps, n_eps, pe, res, n, &v), 0);
	for (size_t e = 0; e < n_eps; e++)
		assert_int_equal(v.eps[e].drain, e == 5 || e == 77);
	assert_string_equal(v.nodes[0].recommended, "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_6:1,mlx5_7:1");
	assert_int_equal(v.nodes[9].n_drain, 1);
	/* 2 x 127 directed pairs each, less the two good ones each, less the 5<->77 pairs counted twice */
	assert_int_equal(v.n_failed, 2 * (2 * (n_eps - 1) - 2) - 2);
	rp_verdict_fini(&v);
	free(eps);
	free(res);
	free(pe);
}

static void test_bad_endpoint_number(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	ep_add(&f, "a", "rxe0", 10);
	ep_add(&f, "b", "rxe0", 10);
	pair_add(&f, 0, 1, RP_ST_OK, 9.5);
	f.pair_eps[1] = 7;
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), -EINVAL);
	rp_verdict_fini(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_min_bw_parse),
		cmocka_unit_test(test_fraction_and_absolute_thresholds),
		cmocka_unit_test(test_outliers_blame_the_slow_adapter),
		cmocka_unit_test(test_unreachable_adapter_drained),
		cmocka_unit_test(test_separate_rails_not_drained),
		cmocka_unit_test(test_recommendation_skips_drained),
		cmocka_unit_test(test_all_ok_passes),
		cmocka_unit_test(test_cover_at_scale),
		cmocka_unit_test(test_bad_endpoint_number),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
