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

#include "health/counters.h"
#include "verdict/retest.h"
#include "verdict/verdict.h"

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

/* --- shared fixture builders ------------------------------------------------------------------ */

/* Endpoints "node/device", port 1, at link Gb/s each, in order; the list ends with NULL. */
static void eps_add(struct fixture *f, double link, ...)
{
	va_list ap;
	const char *nd;

	va_start(ap, link);
	while ((nd = va_arg(ap, const char *)) != NULL) {
		const char *slash = strchr(nd, '/');
		char node[RP_NAME_MAX];

		assert_non_null(slash);
		snprintf(node, sizeof(node), "%.*s", (int)(slash - nd), nd);
		assert_true(f->n_eps < MAX_EPS);
		ep_add(f, node, slash + 1, link);
	}
	va_end(ap);
}

/* Every ordered pair of the endpoints (self pairs too when self), ok at gbps, source-major. */
static void mesh(struct fixture *f, bool self, double gbps)
{
	for (uint32_t a = 0; a < f->n_eps; a++)
		for (uint32_t b = 0; b < f->n_eps; b++)
			if (self || a != b)
				pair_add(f, a, b, RP_ST_OK, gbps);
}

/* The index of pair a -> b (the first one). */
static size_t pair_of(const struct fixture *f, uint32_t a, uint32_t b)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->pair_eps[2 * i] == a && f->pair_eps[2 * i + 1] == b)
			return i;
	fail_msg("no pair %u -> %u", a, b);
	return 0;
}

/* Pair a -> b failed with st, as pair_add() makes a failed pair. */
static void fail_pair(struct fixture *f, uint32_t a, uint32_t b, enum rp_status st)
{
	struct rp_pair_result *r = &f->res[pair_of(f, a, b)];

	r->verified = false;
	rp_pair_result_fail(r, st, "synthetic %s", rp_status_code(st));
}

/* Every pair with endpoint e at either end failed with st. */
static void fail_touching(struct fixture *f, uint32_t e, enum rp_status st)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->pair_eps[2 * i] == e || f->pair_eps[2 * i + 1] == e)
			fail_pair(f, f->pair_eps[2 * i], f->pair_eps[2 * i + 1], st);
}

/* The verdict over the fixture's endpoints and pairs. */
static int judge(const struct rp_verdict_cfg *c, struct fixture *f, struct rp_verdict *v)
{
	return rp_verdict_apply(c, f->eps, f->n_eps, f->pair_eps, f->res, f->n, v);
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
	eps_add(&f, 100, "a/mlx5_0", "b/mlx5_0", NULL);
	eps_add(&f, 0, "c/mlx5_0", NULL);    /* rate unknown: a fraction cannot apply */
	pair_add(&f, 0, 1, RP_ST_OK, 95);
	pair_add(&f, 1, 0, RP_ST_OK, 85);
	pair_add(&f, 0, 2, RP_ST_OK, 5);
	assert_int_equal(rp_verdict_min_bw_parse("0.9", &c), 0);
	assert_int_equal(judge(&c, &f, &v), 0);
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
	assert_int_equal(judge(&c, &f, &v), 0);
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
	eps_add(&f, 200, "n0/mlx5_0", "n1/mlx5_0", "n2/mlx5_0", "n3/mlx5_0", NULL);
	mesh(&f, false, 100);
	for (uint32_t a = 0; a < 3; a++)
		f.res[pair_of(&f, a, 3)].gbps = 30;
	c.outlier = 0.5;
	assert_int_equal(judge(&c, &f, &v), 0);
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
	eps_add(&f, 10, "node0/rxe0", "node1/rxe1", "node2/rxe2", "node3/rxe3", NULL);
	mesh(&f, false, 0.2);
	fail_touching(&f, 3, RP_ST_RTR);
	assert_int_equal(judge(&c, &f, &v), 0);
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
	eps_add(&f, 400, "a/mlx5_0", "a/mlx5_1", "b/mlx5_0", "b/mlx5_1", NULL);
	mesh(&f, false, 350);
	for (uint32_t x = 0; x < 4; x++)
		for (uint32_t y = 0; y < 4; y++)
			if (x % 2 != y % 2)
				fail_pair(&f, x, y, RP_ST_RETRY_EXCEEDED);
	assert_int_equal(judge(&c, &f, &v), 0);
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
	eps_add(&f, 400, "a/mlx5_0", "a/mlx5_1", "a/mlx5_10", "b/mlx5_0", "b/mlx5_1", "b/mlx5_10", NULL);
	for (uint32_t x = 0; x < 6; x++)
		for (uint32_t y = 0; y < 6; y++)
			if (x != y)
				pair_add(&f, x, y, (x == 4 || y == 4) ? RP_ST_TIMEOUT : RP_ST_OK, 380);
	/* one good direction for mlx5_1 of b, so it is not "reached no peer", but it failed with every peer,
	 * each of which reaches the others */
	f.res[f.n - 1].status = RP_ST_OK;
	assert_int_equal(f.pair_eps[2 * (f.n - 1)], 5);
	assert_int_equal(f.pair_eps[2 * (f.n - 1) + 1], 4);
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	for (int e = 0; e < 6; e++)
		assert_int_equal(v.eps[e].drain, e == 4);
	assert_non_null(strstr(v.eps[4].why, "failed with all 5 peers"));
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
	eps_add(&f, 10, "a/rxe0", "b/rxe0", NULL);
	pair_add(&f, 0, 1, RP_ST_OK, 9.5);
	pair_add(&f, 1, 0, RP_ST_OK, 9.4);
	assert_int_equal(judge(&c, &f, &v), 0);
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
	eps_add(&f, 10, "a/rxe0", "b/rxe0", NULL);
	pair_add(&f, 0, 1, RP_ST_OK, 9.5);
	f.pair_eps[1] = 7;
	assert_int_equal(judge(&c, &f, &v), -EINVAL);
	rp_verdict_fini(&v);
}

/* The loss-5% scene in loopback: two soft ports, self pairs clean at 0.27 Gb/s, both cross pairs
 * through the lossy link at 0.014. */
static void loopback_scene(struct fixture *f, double cross01, double cross10)
{
	memset(f, 0, sizeof(*f));
	eps_add(f, 10, "vm/rxe0", "vm/rxe1", NULL);
	f->eps[0].soft = f->eps[1].soft = true;
	pair_add(f, 0, 0, RP_ST_OK, 0.27);
	pair_add(f, 0, 1, RP_ST_OK, cross01);
	pair_add(f, 1, 0, RP_ST_OK, cross10);
	pair_add(f, 1, 1, RP_ST_OK, 0.26);
	for (size_t i = 0; i < f->n; i++) {
		f->res[i].gbps_min = f->res[i].gbps;
		rp_pair_result_record_attempt(&f->res[i], 14);
	}
}

/* The default --min-bw 0.9 is a fraction of the link rate; rxe's 10 Gb/s is nominal, so healthy
 * 0.27 Gb/s pairs must not fail as below_threshold (the old verdict failed all of them): they carry
 * the nominal_link_rate warning and the verdict counts them. An absolute threshold still applies. */
static void test_soft_device_fraction_not_applied(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c;
	struct rp_verdict v;
	char text[256];

	(void)state;
	rp_verdict_cfg_default(&c);
	loopback_scene(&f, 0.25, 0.24);
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_true(v.pass);
	assert_int_equal(v.n_nominal, 4);
	for (size_t i = 0; i < f.n; i++) {
		assert_int_equal(f.res[i].status, RP_ST_OK);
		assert_true(f.res[i].warnings & (1u << RP_WARN_NOMINAL_RATE));
	}
	assert_non_null(strstr(rp_verdict_warning_text(&f.res[0], RP_WARN_NOMINAL_RATE, text, sizeof(text)), "nominal"));
	rp_verdict_fini(&v);

	/* an absolute --min-bw judges soft devices like any other, and sets no nominal warning */
	assert_int_equal(rp_verdict_min_bw_parse("0.26G", &c), 0);
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_int_equal(v.n_nominal, 0);
	assert_int_equal(f.res[0].status, RP_ST_OK);
	assert_int_equal(f.res[1].status, RP_ST_BELOW_THRESHOLD);
	assert_int_equal(f.res[2].status, RP_ST_BELOW_THRESHOLD);
	assert_int_equal(f.res[3].status, RP_ST_OK);
	assert_false(f.res[1].warnings & (1u << RP_WARN_NOMINAL_RATE));
	rp_verdict_fini(&v);

	/* one soft end is enough: a hardware port's rate does not make a soft pair's fraction meaningful */
	f.eps[0].soft = false;
	for (size_t i = 0; i < f.n; i++)
		f.res[i].src.soft = f.res[i].dst.soft = false;
	f.res[1].dst.soft = true;
	rp_verdict_cfg_default(&c);
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_int_equal(f.res[1].status, RP_ST_OK);
	assert_int_equal(f.res[0].status, RP_ST_BELOW_THRESHOLD);   /* hardware at 0.27 of 10: a real failure */
	rp_verdict_fini(&v);
}

/* Issue 26 item 7: loopback -d =rxe0,rxe1 --no-self with 5% loss on one: 0.003 Gb/s one way and
 * 0.224 the other was PASS (soft devices get no --min-bw fraction, and two pairs are too few for
 * the outlier medians). A direction under 0.1 x the reverse of the same link is below_threshold,
 * naming the reverse; the reverse stays ok; TCG's healthy 2-3x spread does not trip it; --outlier 0
 * turns it off with the other relative rule. */
static void test_direction_far_below_its_reverse(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c;
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	ep_add(&f, "vm", "rxe0", 10);
	ep_add(&f, "vm", "rxe3", 10);
	f.eps[0].soft = f.eps[1].soft = true;
	pair_add(&f, 0, 1, RP_ST_OK, 0.003);
	pair_add(&f, 1, 0, RP_ST_OK, 0.224);
	for (size_t i = 0; i < f.n; i++) {
		f.res[i].gbps_min = f.res[i].gbps;
		rp_pair_result_record_attempt(&f.res[i], 14);
	}
	rp_verdict_cfg_default(&c);
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_false(v.pass);
	assert_int_equal(f.res[0].status, RP_ST_BELOW_THRESHOLD);
	if (!strstr(f.res[0].reason, "0.003 Gb/s is below 0.10 x the reverse direction of the same link (rxe3:1 -> rxe0:1, "
		    "0.224 Gb/s)"))
		fail_msg("reason: %s", f.res[0].reason);
	assert_int_equal(f.res[1].status, RP_ST_OK);
	rp_verdict_fini(&v);

	/* a healthy soft link's spread (0.09 against 0.25) passes */
	f.res[0].gbps = f.res[0].gbps_min = 0.09;
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_true(v.pass);
	assert_int_equal(f.res[0].status, RP_ST_OK);
	rp_verdict_fini(&v);

	/* --outlier 0: no relative rule */
	f.res[0].gbps = f.res[0].gbps_min = 0.003;
	c.outlier = 0;
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_int_equal(f.res[0].status, RP_ST_OK);
	rp_verdict_fini(&v);
}

/* The reverse-direction rule over several links at once, the slow directions far apart in the
 * sequence and in another order than their lower endpoints': each fails naming its own reverse,
 * nothing else does (the rule keeps a note per pair it could fail, made endpoint by endpoint and read
 * back in pair order: every note must reach its pair, none another's). */
static void test_reverse_rule_over_several_links(void **state)
{
	static struct fixture f;
	static const struct { int s, d; double g; } p[] = {
		{ 0, 1, 10 }, { 4, 5, 0.001 }, { 1, 0, 10 }, { 2, 3, 0.005 }, { 3, 2, 5 }, { 5, 4, 9 }, { 6, 7, 1 }, { 7, 6, 1 },
	};
	struct rp_verdict_cfg c;
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	for (int e = 0; e < 8; e++) {
		char dev[16];

		snprintf(dev, sizeof(dev), "rxe%d", e);
		ep_add(&f, "vm", dev, 10);
		f.eps[e].soft = true;
	}
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		pair_add(&f, p[i].s, p[i].d, RP_ST_OK, p[i].g);
	for (size_t i = 0; i < f.n; i++) {
		f.res[i].gbps_min = f.res[i].gbps;
		rp_pair_result_record_attempt(&f.res[i], 14);
	}
	rp_verdict_cfg_default(&c);
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	for (size_t i = 0; i < f.n; i++)
		assert_int_equal(f.res[i].status, i == 1 || i == 3 ? RP_ST_BELOW_THRESHOLD : RP_ST_OK);
	if (!strstr(f.res[1].reason, "(rxe5:1 -> rxe4:1, 9.000 Gb/s)") ||
	    !strstr(f.res[3].reason, "(rxe3:1 -> rxe2:1, 5.000 Gb/s)"))
		fail_msg("reasons: %s | %s", f.res[1].reason, f.res[3].reason);
	rp_verdict_fini(&v);
}

/* The reverse of a direction is the first pair of the other direction, at the same message size,
 * that the bandwidth rules judge: one that failed to measure is passed over, a later measurement of
 * the same direction is not the one compared, and another message size's rates never are. */
static void test_reverse_is_the_first_judged_of_its_size(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c;
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	ep_add(&f, "vm", "rxe0", 10);
	ep_add(&f, "vm", "rxe1", 10);
	f.eps[0].soft = f.eps[1].soft = true;
	pair_add(&f, 0, 1, RP_ST_OK, 0.003);        /* 0: judged against 0.224 */
	pair_add(&f, 1, 0, RP_ST_TIMEOUT, 0);       /* 1: no rate: passed over */
	pair_add(&f, 1, 0, RP_ST_OK, 0.224);        /* 2: the reverse of 0 */
	pair_add(&f, 1, 0, RP_ST_OK, 0.002);        /* 3: a later one, not compared with 0 */
	pair_add(&f, 0, 1, RP_ST_OK, 0.5);          /* 4: another size: against 100, not 0.224 */
	pair_add(&f, 1, 0, RP_ST_OK, 100);          /* 5 */
	for (size_t i = 0; i < f.n; i++) {
		f.res[i].msg_size = i < 4 ? 65536 : 8;
		f.res[i].gbps_min = f.res[i].gbps;
		rp_pair_result_record_attempt(&f.res[i], 14);
	}
	rp_verdict_cfg_default(&c);
	c.outlier = 1e-6;                           /* the reverse rule alone: no median in reach */
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_int_equal(f.res[0].status, RP_ST_BELOW_THRESHOLD);
	if (!strstr(f.res[0].reason, "(rxe1:1 -> rxe0:1, 0.224 Gb/s)"))
		fail_msg("pair 0's reason: %s", f.res[0].reason);
	assert_int_equal(f.res[2].status, RP_ST_OK);   /* 0.224 against 0.003: not below */
	assert_int_equal(f.res[3].status, RP_ST_OK);   /* 0.002 against the first of 0 -> 1, 0.003 */
	assert_int_equal(f.res[4].status, RP_ST_BELOW_THRESHOLD);
	if (!strstr(f.res[4].reason, "(rxe1:1 -> rxe0:1, 100.000 Gb/s)"))
		fail_msg("pair 4's reason: %s", f.res[4].reason);
	assert_int_equal(f.res[5].status, RP_ST_OK);
	rp_verdict_fini(&v);
}

/* The loopback: 0.014 Gb/s against 0.27 for its neighbours was PASS. Under the default rule
 * both lossy pairs are outliers, and with --retest 1 not yet done they are unconfirmed: the run
 * fails, nothing is drained. */
static void test_loopback_lossy_pair_is_outlier_unconfirmed(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c;
	struct rp_verdict v;

	(void)state;
	rp_verdict_cfg_default(&c);
	loopback_scene(&f, 0.014, 0.015);
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_false(v.pass);
	assert_int_equal(v.n_below, 2);
	assert_int_equal(v.n_unconfirmed, 2);
	assert_int_equal(v.n_confirmed, 0);
	assert_int_equal(f.res[1].status, RP_ST_BELOW_THRESHOLD);
	assert_non_null(strstr(f.res[1].reason, "outlier"));
	assert_int_equal(f.res[1].confirm, RP_CONFIRM_UNCONFIRMED);
	assert_int_equal(f.res[0].confirm, RP_CONFIRM_NONE);
	assert_false(v.eps[0].drain);
	assert_false(v.eps[1].drain);
	assert_string_equal(v.nodes[0].recommended, "=rxe0:1,rxe1:1");
	rp_verdict_fini(&v);
}

/* A new measurement of pair i at gbps (status st), folded in as a retest would. */
static void retest_with(struct fixture *f, size_t i, enum rp_status st, double gbps, int qp_timeout)
{
	struct rp_pair_result again;

	rp_pair_result_init(&again, &f->res[i].src, &f->res[i].dst);
	again.status = RP_ST_OK;
	again.gbps = again.gbps_min = gbps;
	again.msg_size = f->res[i].msg_size;
	if (st != RP_ST_OK)
		rp_pair_result_fail(&again, st, "synthetic %s again", rp_status_code(st));
	rp_pair_result_record_attempt(&again, qp_timeout);
	rp_retest_merge(&f->res[i], &again);
}

/* Issue 26 item 20: an adapter whose one pair (with itself) failed, confirmed: drained with a reason
 * that counts one pair. Failed before: "reached no peer: all 2 pairs failed" (a self pair counted
 * once per side). */
static void test_self_pair_counted_once(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	ep_add(&f, "vm", "rxe3", 10);
	pair_add(&f, 0, 0, RP_ST_TIMEOUT, 0);
	rp_pair_result_record_attempt(&f.res[0], 14);
	retest_with(&f, 0, RP_ST_TIMEOUT, 0, 20);
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_int_equal(f.res[0].confirm, RP_CONFIRM_CONFIRMED);
	assert_int_equal(v.eps[0].pairs, 1);
	assert_int_equal(v.eps[0].failed, 1);
	assert_true(v.eps[0].drain);
	assert_string_equal(v.eps[0].why, "reached no peer: its only pair failed");
	rp_verdict_fini(&v);
}

/* Under CPU contention one sample of a healthy pair came out an outlier; its retest is in line, the
 * outlier rule judged again on the new measurement clears it: ok, flaky (a warning with both
 * results), the run passes, nothing drained. */
static void test_outlier_cleared_by_retest(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c;
	struct rp_verdict v;
	char text[512];

	(void)state;
	rp_verdict_cfg_default(&c);
	loopback_scene(&f, 0.05, 0.26);
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_int_equal(f.res[1].status, RP_ST_BELOW_THRESHOLD);
	assert_true(rp_retest_wanted(&f.res[1], c.retest));
	assert_false(rp_retest_wanted(&f.res[2], c.retest));
	rp_verdict_fini(&v);
	retest_with(&f, 1, RP_ST_OK, 0.25, 14);
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_true(v.pass);
	assert_int_equal(v.n_flaky, 1);
	assert_int_equal(f.res[1].status, RP_ST_OK);
	assert_int_equal(f.res[1].confirm, RP_CONFIRM_FLAKY);
	assert_true(f.res[1].warnings & (1u << RP_WARN_FLAKY));
	assert_int_equal(f.res[1].n_attempts, 2);
	assert_int_equal(f.res[1].attempts[0].status, RP_ST_BELOW_THRESHOLD);
	assert_int_equal(f.res[1].attempts[1].status, RP_ST_OK);
	rp_verdict_warning_text(&f.res[1], RP_WARN_FLAKY, text, sizeof(text));
	assert_non_null(strstr(text, "flaky"));
	assert_non_null(strstr(text, "below_threshold 0.050 Gb/s"));
	assert_non_null(strstr(text, "ok 0.250 Gb/s"));
	assert_false(rp_retest_wanted(&f.res[1], c.retest));
	for (size_t e = 0; e < f.n_eps; e++)
		assert_false(v.eps[e].drain);
	rp_verdict_fini(&v);
}

/* The retest is as slow as the first sample: confirmed. One failed pair is no evidence against
 * either of its ends: nothing is drained, the failure is counted as ambiguous. A second confirmed
 * failure through rxe1 pins it on rxe1. */
static void test_confirmed_outlier_drains(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c;
	struct rp_verdict v;

	(void)state;
	rp_verdict_cfg_default(&c);
	loopback_scene(&f, 0.014, 0.26);
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_false(v.eps[0].drain || v.eps[1].drain);
	rp_verdict_fini(&v);
	retest_with(&f, 1, RP_ST_OK, 0.013, 14);
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_false(v.pass);
	assert_int_equal(f.res[1].status, RP_ST_BELOW_THRESHOLD);
	assert_int_equal(f.res[1].confirm, RP_CONFIRM_CONFIRMED);
	assert_int_equal(v.n_confirmed, 1);
	assert_int_equal(v.n_unconfirmed, 0);
	assert_false(v.eps[0].drain || v.eps[1].drain);
	assert_int_equal(v.n_ambiguous, 1);
	assert_int_equal(v.eps[0].ambiguous, 1);
	assert_int_equal(v.eps[1].ambiguous, 1);
	rp_verdict_fini(&v);
}

/* The e2e loss scene on three soft ports: failures only between rxe1 and rxe2 (both directions)
 * cannot tell which end is bad: the old tie rule drained rxe2, the later one, although rxe1 had the
 * loss. Now neither is drained. With a third failure through rxe1 the evidence is clear: rxe1 only. */
static void test_tie_drains_nobody(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	eps_add(&f, 10, "vm/rxe0", "vm/rxe1", "vm/rxe2", NULL);
	mesh(&f, true, 0.1);
	fail_pair(&f, 1, 2, RP_ST_RETRY_EXCEEDED);
	fail_pair(&f, 2, 1, RP_ST_RETRY_EXCEEDED);
	assert_int_equal(judge(&c, &f, &v), 0);
	for (size_t e = 0; e < f.n_eps; e++)
		assert_false(v.eps[e].drain);
	assert_int_equal(v.n_ambiguous, 2);
	assert_int_equal(v.eps[1].ambiguous, 2);
	assert_int_equal(v.eps[2].ambiguous, 2);
	assert_int_equal(v.eps[0].ambiguous, 0);
	rp_verdict_fini(&v);

	rp_pair_result_fail(&f.res[1], RP_ST_RETRY_EXCEEDED, "0 -> 1");   /* pair 0 -> 1 */
	assert_int_equal(f.pair_eps[2], 0);
	assert_int_equal(f.pair_eps[3], 1);
	assert_int_equal(judge(&c, &f, &v), 0);
	for (size_t e = 0; e < f.n_eps; e++)
		assert_int_equal(v.eps[e].drain, e == 1);
	assert_int_equal(v.n_ambiguous, 0);
	rp_verdict_fini(&v);
}

/* A survivor pair that ended peer_lost once (a rank died) and was never measured again is reported
 * and fails the run, but drains nobody; the same failure confirmed by a retest does. Also an
 * endpoint whose every pair failed, unconfirmed, is not "reached no peer". */
static void test_no_drain_on_unconfirmed(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	c.retest = 1;
	memset(&f, 0, sizeof(f));
	eps_add(&f, 400, "n0/mlx5_0", "n1/mlx5_0", "n2/mlx5_0", NULL);
	pair_add(&f, 0, 1, RP_ST_OK, 380);
	pair_add(&f, 1, 0, RP_ST_OK, 380);
	pair_add(&f, 0, 2, RP_ST_PEER_LOST, 0);
	pair_add(&f, 2, 0, RP_ST_PEER_LOST, 0);
	pair_add(&f, 1, 2, RP_ST_PEER_LOST, 0);
	pair_add(&f, 2, 1, RP_ST_PEER_LOST, 0);
	for (size_t i = 0; i < f.n; i++)
		rp_pair_result_record_attempt(&f.res[i], 14);
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_false(v.pass);
	assert_int_equal(v.n_unconfirmed, 4);
	for (size_t e = 0; e < f.n_eps; e++)
		assert_false(v.eps[e].drain);
	assert_string_equal(v.nodes[2].recommended, "=mlx5_0:1");
	rp_verdict_fini(&v);

	for (size_t i = 2; i < f.n; i++)
		retest_with(&f, i, RP_ST_RETRY_EXCEEDED, 0, RP_RETEST_NCCL_QP_TIMEOUT);
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_int_equal(v.n_confirmed, 4);
	assert_true(v.eps[2].drain);
	assert_false(v.eps[0].drain || v.eps[1].drain);
	assert_non_null(strstr(v.eps[2].why, "reached no peer"));
	rp_verdict_fini(&v);
}

/* A link down for 3 s mid-pair passed on its average; now the slowest interval under 0.1 x the
 * average is a warning (not a failure), with the interval's time in the run. */
/* One side's counters as the engine fills them: a delta of one counter judged with the defaults. */
static void side_judged(struct rp_pair_ctr_side *side, const char *name, uint64_t delta, uint64_t bytes)
{
	static struct rp_ctr_delta d;
	struct rp_ctr_limits lim;
	struct rp_ctr_judgement j;

	memset(&d, 0, sizeof(d));
	snprintf(d.device, sizeof(d.device), "rxe1");
	d.port = 1;
	d.n = 1;
	snprintf(d.changes[0].name, sizeof(d.changes[0].name), "%s", name);
	d.changes[0].source = RP_CTR_HW_PORT;
	d.changes[0].cls = rp_ctr_classify_name(name);
	d.changes[0].kind = RP_CK_EXACT;
	d.changes[0].delta = delta;
	rp_ctr_limits_default(&lim);
	rp_ctr_judge(&d, bytes, &lim, &j);
	rp_ctr_side_fill(&d, &j, side);
}

/* Port counters decide with bandwidth passed: retransmissions above 10/GB are the lossy warning (the
 * pair stays ok), a link flap fails the pair as link_errors naming the side and counter; a clean
 * delta gives neither. Fails before the counters were wired (no such warning, status, fields). */
static void test_counters_lossy_and_link_errors(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;
	char text[512];

	(void)state;
	loopback_scene(&f, 0.25, 0.24);
	side_judged(&f.res[1].counters.src, "rcvd_seq_err", 40, 4096000);          /* 40 gaps/GB: lossy */
	side_judged(&f.res[1].counters.dst, "rcvd_pkts", 1000, 4096000);           /* other: reported */
	side_judged(&f.res[2].counters.dst, "link_downed", 1, 4096000);
	side_judged(&f.res[3].counters.src, "rcvd_seq_err", 5, 4096000);           /* 5/GB: under the rate */
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_int_equal(f.res[0].status, RP_ST_OK);
	assert_int_equal(f.res[0].warnings, 0);
	assert_int_equal(f.res[1].status, RP_ST_OK);
	assert_true(f.res[1].warnings & (1u << RP_WARN_LOSSY));
	assert_string_equal(rp_pair_warning_code(RP_WARN_LOSSY), "lossy");
	rp_verdict_warning_text(&f.res[1], RP_WARN_LOSSY, text, sizeof(text));
	assert_non_null(strstr(text, "src rxe0:1"));
	assert_non_null(strstr(text, "rcvd_seq_err +40"));
	assert_non_null(strstr(text, "the link drops packets"));
	assert_int_equal(f.res[2].status, RP_ST_LINK_ERRORS);
	assert_string_equal(rp_status_code(RP_ST_LINK_ERRORS), "link_errors");
	assert_non_null(strstr(f.res[2].reason, "dst rxe0:1"));
	assert_non_null(strstr(f.res[2].reason, "link_downed +1"));
	assert_int_equal(f.res[3].status, RP_ST_OK);
	assert_false(f.res[3].warnings & (1u << RP_WARN_LOSSY));
	assert_int_equal(v.n_lossy, 1);
	assert_int_equal(v.n_failed, 1);
	assert_false(v.pass);
	rp_verdict_fini(&v);
	/* judged afresh: the same input gives the same verdict (link_errors back to ok, then again) */
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_int_equal(f.res[2].status, RP_ST_LINK_ERRORS);
	assert_int_equal(v.n_lossy, 1);
	rp_verdict_fini(&v);
}

/* Two ends at different active MTUs: mtu_mismatch on that pair only, naming both MTUs; an unknown
 * MTU (0) is no mismatch. */
static void test_mtu_mismatch(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;
	char text[256];

	(void)state;
	loopback_scene(&f, 0.25, 0.24);
	f.res[0].src.mtu = f.res[0].dst.mtu = 1024;
	f.res[1].src.mtu = 1024;
	f.res[1].dst.mtu = 4096;
	f.res[2].src.mtu = 4096;      /* dst unknown */
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_false(f.res[0].warnings & (1u << RP_WARN_MTU_MISMATCH));
	assert_true(f.res[1].warnings & (1u << RP_WARN_MTU_MISMATCH));
	assert_false(f.res[2].warnings & (1u << RP_WARN_MTU_MISMATCH));
	assert_int_equal(f.res[1].status, RP_ST_OK);
	assert_int_equal(v.n_mtu_mismatch, 1);
	rp_verdict_warning_text(&f.res[1], RP_WARN_MTU_MISMATCH, text, sizeof(text));
	assert_non_null(strstr(text, "rxe0:1 runs at an active MTU of 1024, rxe1:1 at 4096"));
	rp_verdict_fini(&v);
}

static void test_interval_drop_warns(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c;
	struct rp_verdict v;
	char text[256];

	(void)state;
	rp_verdict_cfg_default(&c);
	loopback_scene(&f, 0.25, 0.24);
	f.res[1].gbps_min = 0.0018;
	f.res[1].gbps_min_at_s = 3.2;
	f.res[2].gbps_min = 0.2;       /* a normal wobble */
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_true(v.pass);
	assert_int_equal(v.n_interval_drop, 1);
	assert_int_equal(f.res[1].status, RP_ST_OK);
	assert_true(f.res[1].warnings & (1u << RP_WARN_INTERVAL_DROP));
	assert_false(f.res[2].warnings & (1u << RP_WARN_INTERVAL_DROP));
	rp_verdict_warning_text(&f.res[1], RP_WARN_INTERVAL_DROP, text, sizeof(text));
	assert_non_null(strstr(text, "0.0018 Gb/s"));
	assert_non_null(strstr(text, "3.2 s into the run"));
	rp_verdict_fini(&v);

	c.interval_drop = 0;           /* off */
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_int_equal(v.n_interval_drop, 0);
	assert_false(f.res[1].warnings & (1u << RP_WARN_INTERVAL_DROP));
	rp_verdict_fini(&v);
}

/* -a sweeps sizes: a 2-byte pair is slow because it is small, not an outlier among 64 KiB pairs;
 * medians are per message size. Latency pairs carry no bandwidth and are not judged on it. */
static void test_outlier_medians_per_size_and_latency(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	c.outlier = 0.5;
	c.min_bw = 0.9;
	memset(&f, 0, sizeof(f));
	eps_add(&f, 100, "a/mlx5_0", "a/mlx5_1", NULL);
	for (int big = 0; big < 2; big++) {
		pair_add(&f, 0, 1, RP_ST_OK, big ? 95 : 0.5);
		pair_add(&f, 1, 0, RP_ST_OK, big ? 96 : 0.5);
		pair_add(&f, 0, 0, RP_ST_OK, big ? 97 : 0.5);
		for (size_t i = f.n - 3; i < f.n; i++)
			f.res[i].msg_size = big ? 65536 : 2;
	}
	c.min_bw = 0;
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_true(v.pass);
	rp_verdict_fini(&v);

	for (size_t i = 0; i < f.n; i++) {
		f.res[i].gbps = 0;
		f.res[i].lat.measured = true;
	}
	c.min_bw = 0.9;
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_true(v.pass);
	rp_verdict_fini(&v);
}

/* Calling the verdict twice on the same results gives the same statuses (a below_threshold pair is
 * judged again on its measurement, not frozen or double-counted). */
static void test_apply_is_idempotent(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c;
	struct rp_verdict v;

	(void)state;
	rp_verdict_cfg_default(&c);
	loopback_scene(&f, 0.014, 0.26);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(judge(&c, &f, &v), 0);
		assert_int_equal(v.n_below, 1);
		assert_int_equal(f.res[1].status, RP_ST_BELOW_THRESHOLD);
		assert_int_equal(f.res[1].n_attempts, 1);
		rp_verdict_fini(&v);
	}
	/* the relative rules turned off after the fact clear it (0.014 is also under 0.1 x its reverse
	 * 0.26: a lower --outlier alone would not) */
	c.outlier = 0;
	assert_int_equal(rp_verdict_apply(&c, f.eps, f.n_eps, f.pair_eps, f.res, f.n, &v), 0);
	assert_true(v.pass);
	assert_int_equal(f.res[1].status, RP_ST_OK);
	assert_string_equal(f.res[1].reason, "");
	rp_verdict_fini(&v);
}

/* --bidir: each direction is judged on its own. A pair whose forward passes and whose reverse runs
 * below --min-bw fails as a pair (the reverse's status folded in, the forward's own kept as
 * forward ok), the reverse's interval drop is counted; judging again gives the same, and a threshold
 * lowered after the fact clears the fold. A reverse that failed to measure fails the pair with its
 * status. (Before: the reverse was not judged and a slow reverse passed.) */
static void test_bidir_each_direction_judged(void **state)
{
	static struct fixture f;
	struct rp_verdict_cfg c = cfg_none();
	struct rp_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	eps_add(&f, 100, "a/mlx5_0", "b/mlx5_0", NULL);
	pair_add(&f, 0, 1, RP_ST_OK, 95);
	f.res[0].gbps_min = 90;
	f.res[0].reverse = (struct rp_pair_reverse){ .measured = true, .status = RP_ST_OK, .gbps = 40, .gbps_min = 1,
						     .verified = true, .bad_offset = -1 };
	pair_add(&f, 1, 0, RP_ST_OK, 95);   /* a one-way pair beside it: judged as before */
	f.res[1].gbps_min = 90;
	c.interval_drop = 0.1;
	assert_int_equal(rp_verdict_min_bw_parse("0.9", &c), 0);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(judge(&c, &f, &v), 0);
		assert_int_equal(f.res[0].reverse.status, RP_ST_BELOW_THRESHOLD);
		assert_non_null(strstr(f.res[0].reverse.reason, "40.000 Gb/s is below"));
		assert_true(f.res[0].reverse.warnings & (1u << RP_WARN_INTERVAL_DROP));
		assert_int_equal(f.res[0].status, RP_ST_BELOW_THRESHOLD);
		assert_true(f.res[0].reverse.folded);
		assert_non_null(strstr(f.res[0].reason, "reverse direction mlx5_0:1 -> mlx5_0:1: 40.000 Gb/s"));
		assert_int_equal(f.res[0].cause_side, RP_SIDE_NONE);
		assert_int_equal(f.res[1].status, RP_ST_OK);
		assert_int_equal(v.n_below, 1);
		assert_int_equal(v.n_interval_drop, 1);
		assert_false(v.pass);
		rp_verdict_fini(&v);
	}
	c.min_bw = 0.3;
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_int_equal(f.res[0].status, RP_ST_OK);
	assert_string_equal(f.res[0].reason, "");
	assert_int_equal(f.res[0].reverse.status, RP_ST_OK);
	assert_false(f.res[0].reverse.folded);
	assert_true(v.pass);
	rp_verdict_fini(&v);
	/* the reverse timed out: the pair fails with it, blamed on the reverse's writer (the pair's dst) */
	f.res[0].reverse.status = RP_ST_TIMEOUT;
	f.res[0].reverse.cause_side = RP_SIDE_DST;
	snprintf(f.res[0].reverse.reason, sizeof(f.res[0].reverse.reason), "no completion");
	assert_int_equal(judge(&c, &f, &v), 0);
	assert_int_equal(f.res[0].status, RP_ST_TIMEOUT);
	assert_int_equal(f.res[0].cause_side, RP_SIDE_DST);
	assert_false(v.pass);
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
		cmocka_unit_test(test_soft_device_fraction_not_applied),
		cmocka_unit_test(test_loopback_lossy_pair_is_outlier_unconfirmed),
		cmocka_unit_test(test_outlier_cleared_by_retest),
		cmocka_unit_test(test_confirmed_outlier_drains),
		cmocka_unit_test(test_tie_drains_nobody),
		cmocka_unit_test(test_no_drain_on_unconfirmed),
		cmocka_unit_test(test_interval_drop_warns),
		cmocka_unit_test(test_counters_lossy_and_link_errors),
		cmocka_unit_test(test_mtu_mismatch),
		cmocka_unit_test(test_outlier_medians_per_size_and_latency),
		cmocka_unit_test(test_apply_is_idempotent),
		cmocka_unit_test(test_bidir_each_direction_judged),
		cmocka_unit_test(test_direction_far_below_its_reverse),
		cmocka_unit_test(test_reverse_rule_over_several_links),
		cmocka_unit_test(test_reverse_is_the_first_judged_of_its_size),
		cmocka_unit_test(test_self_pair_counted_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
