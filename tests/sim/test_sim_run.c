/* test_sim_run.c: the matrix over a simulated 4 x 2 fabric with one dead link, through the real
 * schedule, mx_run and mx_round: every scheduled direction comes back once, the dead pair's two
 * directions end retry_exceeded (the engine's status for an unreachable peer at the default ACK
 * timeout) and every other one ok at the model's rate; the projected time equals the sum over the
 * rounds of the slowest endpoint plus the round overhead, computed here from the schedule; a retest
 * round measures the dead pair again, with the retest's ACK timeout, and adds its own time. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim/sim_run.h"

/* scratch for results rank 0 keeps as records (lib/matrix/mx_results.h) */
static struct rp_pair_result rtmp_;

static const char model_text[] = "nodes 4\nadapters 2\nrate 100\nbandwidth 100\nlatency 0\nsetup 10ms\n"
				 "round-overhead 5ms\ndead node1/mlx5_0 node2/mlx5_0\n";
#define DEAD_A 2u   /* node1/mlx5_0 */
#define DEAD_B 4u   /* node2/mlx5_0 */

struct world {
	struct rp_sim_model m;
	struct rp_engine_cfg cfg;
	struct rp_verdict_cfg vcfg;
	struct rp_sim_run S;
	size_t hook_calls;
};

static void hook(void *arg, bool retest, size_t k, size_t n_rounds)
{
	struct world *W = arg;

	(void)retest, (void)k, (void)n_rounds;
	W->hook_calls++;
}

static void world_run(struct world *W, const char *pattern, unsigned retest)
{
	struct rp_sim_error err;

	memset(W, 0, sizeof(*W));
	assert_int_equal(rp_sim_model_parse(model_text, strlen(model_text), &W->m, &err), 0);
	rp_engine_cfg_default(&W->cfg);
	W->cfg.meas.msg_size = 65536;
	W->cfg.meas.iters = 1000;
	W->cfg.meas.warmup_iters = 16;
	W->cfg.meas.duration_s = 0;
	rp_verdict_cfg_default(&W->vcfg);
	W->vcfg.retest = retest;
	W->S = (struct rp_sim_run){ .model = &W->m, .cfg = &W->cfg, .vcfg = &W->vcfg, .seed = 1,
				    .hooks = { .round_done = hook, .arg = W } };
	mx_settings_init(&W->S.settings, &W->cfg, false, 0, false, retest);
	assert_int_equal(rp_pattern_parse(pattern, &W->S.pattern), 0);
	assert_int_equal(rp_sim_run_init(&W->S), 0);
	assert_int_equal(rp_sim_run_rounds(&W->S), 0);
}

/* The full pattern over the model, set up and not run (engine defaults, --sweep sweep, --hold). */
static void world_start_held(struct world *W, unsigned sweep, bool hold)
{
	struct rp_sim_error err;

	memset(W, 0, sizeof(*W));
	assert_int_equal(rp_sim_model_parse(model_text, strlen(model_text), &W->m, &err), 0);
	rp_engine_cfg_default(&W->cfg);
	W->cfg.meas.duration_s = 0;
	rp_verdict_cfg_default(&W->vcfg);
	W->S = (struct rp_sim_run){ .model = &W->m, .cfg = &W->cfg, .vcfg = &W->vcfg, .seed = 1 };
	mx_settings_init(&W->S.settings, &W->cfg, false, sweep, hold, 0);
	assert_int_equal(rp_pattern_parse("full", &W->S.pattern), 0);
	assert_int_equal(rp_sim_run_init(&W->S), 0);
}

static void world_start(struct world *W, unsigned sweep)
{
	world_start_held(W, sweep, false);
}

static void world_fini(struct world *W)
{
	rp_sim_run_fini(&W->S);
	rp_sim_model_fini(&W->m);
}

static double t_ok(const struct world *W)
{
	return W->m.setup_s + 65536.0 * (1000 + 16) / (100e9 / 8);
}

static double t_dead(const struct world *W, int qp_timeout)
{
	struct rp_engine_cfg c = W->cfg;
	enum rp_status st;

	c.qp.qp_timeout = qp_timeout;
	return rp_sim_dead_time(&W->m, &c, &st);
}

/* The planned rounds: each job measures a -> b then b -> a in one thread, so an endpoint's time in
 * its round is both directions'. */
static double scheduled_expected(const struct world *W)
{
	struct rp_sched_pair pairs[8];
	double sum = 0;

	for (size_t r = 0; r < rp_sched_n_rounds(W->S.sched); r++) {
		size_t n = 0;
		double slowest = 0;

		assert_int_equal(rp_sched_round(W->S.sched, r, pairs, 8, &n), 0);
		for (size_t i = 0; i < n; i++) {
			bool dead = pairs[i].a == DEAD_A && pairs[i].b == DEAD_B;
			double t = 2 * (dead ? t_dead(W, W->cfg.qp.qp_timeout) : t_ok(W));

			slowest = t > slowest ? t : slowest;
		}
		sum += slowest + W->m.round_overhead_s;
	}
	return sum;
}

static void test_dead_link_full(void **state)
{
	struct world W;
	const struct mx_results *mr;
	bool seen[8][8] = { { false } };
	size_t dead = 0;

	(void)state;
	world_run(&W, "full", 0);
	mr = &W.S.run.mr;
	assert_int_equal(rp_sched_n_rounds(W.S.sched), 7);
	assert_int_equal(W.S.run.rounds_done, 7);
	assert_int_equal(W.S.run.retest_rounds, 0);
	assert_int_equal(W.hook_calls, 7);
	assert_int_equal(mr->n, 56);                    /* 28 pairs, both directions */
	for (size_t i = 0; i < mr->n; i++) {
		uint32_t s = mr->pair_eps[2 * i], d = mr->pair_eps[2 * i + 1];
		const struct rp_pair_result *r = mx_results_get(mr, i, &rtmp_);
		bool is_dead = (s == DEAD_A && d == DEAD_B) || (s == DEAD_B && d == DEAD_A);

		assert_false(seen[s][d]);
		seen[s][d] = true;
		assert_string_equal(r->src.node, W.S.eps[s].ep.node);
		assert_string_equal(r->dst.device, W.S.eps[d].ep.device);
		if (is_dead) {
			assert_int_equal(r->status, RP_ST_RETRY_EXCEEDED);
			dead++;
		} else {
			assert_int_equal(r->status, RP_ST_OK);
			assert_true(r->gbps == 100 && r->verified);
		}
	}
	assert_int_equal(dead, 2);
	assert_int_equal(W.S.run.failed, 2);
	assert_int_equal(W.S.n_round_s, 7);
	assert_true(fabs(W.S.rounds_s - scheduled_expected(&W)) < 1e-9);
	assert_true(fabs(W.S.vclock - W.S.rounds_s) < 1e-12);   /* nothing else advanced the clock */
	/* rank 0's collection was timed (real seconds), each round's within the total, off the clock */
	assert_true(W.S.collect_s > 0 && W.S.collect_last_s > 0 && W.S.collect_last_s <= W.S.collect_s);
	/* the dead pair's round is the slow one */
	assert_true(fabs(W.S.rounds_s - (6 * (2 * t_ok(&W) + 0.005) + 2 * t_dead(&W, 14) + 0.005)) < 1e-9);
	rp_sim_run_advance(&W.S, 1.5);
	assert_true(fabs(W.S.vclock - W.S.rounds_s - 1.5) < 1e-12);
	world_fini(&W);
}

static void test_dead_link_retest(void **state)
{
	struct world W;
	const struct mx_results *mr;
	int qpt = -1;

	(void)state;
	world_run(&W, "full", 1);
	mr = &W.S.run.mr;
	assert_int_equal(W.S.run.rounds_done, 7);
	assert_int_equal(W.S.run.retest_rounds, 1);
	assert_int_equal(W.S.n_round_s, 8);
	for (size_t i = 0; i < mr->n; i++) {
		if (mx_results_get(mr, i, &rtmp_)->status == RP_ST_OK)
			continue;
		assert_int_equal(mx_results_get(mr, i, &rtmp_)->n_attempts, 2);
		assert_int_equal(mx_results_get(mr, i, &rtmp_)->attempts[0].status, RP_ST_RETRY_EXCEEDED);
		qpt = mx_results_get(mr, i, &rtmp_)->attempts[1].qp_timeout;
	}
	assert_true(qpt > W.cfg.qp.qp_timeout);          /* the retest waits longer per try */
	assert_true(fabs(W.S.round_s[7] - (2 * t_dead(&W, qpt) + 0.005)) < 1e-9);
	assert_true(fabs(W.S.rounds_s - (scheduled_expected(&W) + W.S.round_s[7])) < 1e-9);
	world_fini(&W);
}

/* Rank 0's retest plans are on the clock: the rounds and the plans, nothing else (the caller adds its
 * collection and writes), to the rounding of one sum. Before, the plans were on no clock. */
static void test_retest_plan_on_the_clock(void **state)
{
	struct world W;

	(void)state;
	world_run(&W, "full", 1);
	assert_true(W.S.run.retest_plan_s > 0);
	assert_true(fabs(W.S.vclock - (W.S.rounds_s + W.S.run.retest_plan_s)) < 1e-12);
	world_fini(&W);
	world_run(&W, "full", 0);                       /* no retest: no plan */
	assert_true(W.S.run.retest_plan_s == 0 && W.S.vclock == W.S.rounds_s);
	world_fini(&W);
}

/* rail over 4 x 2: only same-rail pairs, and the dead one among them. */
static void test_rail(void **state)
{
	struct world W;
	size_t dead = 0;

	(void)state;
	world_run(&W, "rail", 0);
	assert_int_equal(W.S.run.mr.n, 2 * 2 * 6);      /* 2 rails x 6 node pairs x 2 directions */
	for (size_t i = 0; i < W.S.run.mr.n; i++) {
		assert_int_equal(W.S.run.mr.pair_eps[2 * i] % 2, W.S.run.mr.pair_eps[2 * i + 1] % 2);
		dead += mx_results_get(&W.S.run.mr, i, &rtmp_)->status == RP_ST_RETRY_EXCEEDED;
	}
	assert_int_equal(dead, 2);
	assert_true(fabs(W.S.rounds_s - scheduled_expected(&W)) < 1e-9);
	world_fini(&W);
}

/* One process drives every endpoint, more than a rank's offer on the wire may hold (MX_MAX_LOCAL):
 * 16 nodes x 8 adapters are all in the table and all measured (rail: 8 rails of 16 x 15 directions).
 * Failed when the one rank's table went through the start-up exchange: its offer was cut at 64. */
static void test_one_rank_many_endpoints(void **state)
{
	static const char big[] = "nodes 16\nadapters 8\nrate 100\nbandwidth 100\nlatency 0\nsetup 10ms\n";
	struct rp_sim_model m;
	struct rp_sim_error err;
	struct rp_engine_cfg cfg;
	struct rp_verdict_cfg vcfg;
	struct rp_sim_run S;

	(void)state;
	assert_int_equal(rp_sim_model_parse(big, strlen(big), &m, &err), 0);
	rp_engine_cfg_default(&cfg);
	cfg.meas.duration_s = 0;
	rp_verdict_cfg_default(&vcfg);
	S = (struct rp_sim_run){ .model = &m, .cfg = &cfg, .vcfg = &vcfg, .seed = 1 };
	assert_int_equal(rp_pattern_parse("rail", &S.pattern), 0);
	assert_int_equal(rp_sim_run_init(&S), 0);
	assert_int_equal(S.n_eps, 128);
	assert_int_equal(rp_sim_run_rounds(&S), 0);
	assert_int_equal(S.run.mr.n, 8 * 16 * 15);
	assert_int_equal(S.run.failed, 0);
	rp_sim_run_fini(&S);
	rp_sim_model_fini(&m);
}

/* With one rank every side is answered on the calling thread (mx_measure.inline_sides): a sweep
 * round at 1,024 x 8 would otherwise create a thread for each of its 131,072 probes. Failed when
 * every job of a round had a thread of its own. */
static struct mx_measure orig_;
static pthread_t main_;
static size_t calls_, elsewhere_;

static int on_thread(void *arg, const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
		     const struct rp_engine_port *dst, struct mx_hold_side *hw, struct mx_hold_side *ht,
		     struct rp_pair_result *res)
{
	__atomic_add_fetch(&calls_, 1, __ATOMIC_SEQ_CST);
	if (!pthread_equal(pthread_self(), main_))
		__atomic_add_fetch(&elsewhere_, 1, __ATOMIC_SEQ_CST);
	return orig_.loopback(arg, cfg, src, dst, hw, ht, res);
}

static void test_one_rank_answers_inline(void **state)
{
	struct world W;

	(void)state;
	world_start(&W, 2);
	orig_ = W.S.measure;
	W.S.measure.loopback = on_thread;
	main_ = pthread_self();
	calls_ = elsewhere_ = 0;
	assert_int_equal(rp_sim_run_rounds(&W.S), 0);
	/* 28 pairs: 56 directions in the bandwidth rounds, the sweep's 56 probes before them, the
	 * dead pair's two directions left out of the bandwidth rounds */
	assert_int_equal(calls_, 56 + 56 - 2);
	assert_int_equal(elsewhere_, 0);
	assert_int_equal(W.S.run.failed, 2);   /* the dead pair's two directions */
	world_fini(&W);
}

/* With one rank, rank 0 checks the sides it takes as it checks a REPORT's (mx_measure.check_own_sides):
 * the work a real rank 0 does for every side of the ranks below it, and a simulated side it would
 * refuse stops the run. Failed when the one rank took its own sides unchecked. */
static int bad_third(void *arg, const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
		     const struct rp_engine_port *dst, struct mx_hold_side *hw, struct mx_hold_side *ht,
		     struct rp_pair_result *res)
{
	int rc = orig_.loopback(arg, cfg, src, dst, hw, ht, res);

	if (__atomic_add_fetch(&calls_, 1, __ATOMIC_SEQ_CST) == 3)
		memset(res->reason, 'x', sizeof(res->reason));   /* no terminator: no REPORT passes with it */
	return rc;
}

static void test_one_rank_checks_its_sides(void **state)
{
	struct world W;

	(void)state;
	world_start(&W, 0);
	assert_true(W.S.measure.check_own_sides);
	orig_ = W.S.measure;
	W.S.measure.loopback = bad_third;
	calls_ = 0;
	assert_int_equal(rp_sim_run_rounds(&W.S), -EPROTO);
	assert_true(W.S.run.mr.n < 4);                 /* stopped in the round of the bad side */
	world_fini(&W);
}

static bool near(double x, double y)
{
	return x - y < 1e-9 && y - x < 1e-9;
}

/* Direction a -> b in W's results (into *tmp). */
static const struct rp_pair_result *result_in(const struct world *W, uint32_t a, uint32_t b, struct rp_pair_result *tmp)
{
	for (size_t i = 0; i < W->S.run.mr.n; i++)
		if (W->S.run.mr.pair_eps[2 * i] == a && W->S.run.mr.pair_eps[2 * i + 1] == b)
			return mx_results_get(&W->S.run.mr, i, tmp);
	fail_msg("direction %u -> %u not in the results", a, b);
	return NULL;
}

/* --hold: the same results (the dead link's directions left out and reported once), each measured
 * direction without its set-up, so every bandwidth round is two set-ups shorter on the clock; the
 * sweep's rounds take as long as without. */
static void test_held_sweep(void **state)
{
	struct world off, on;

	(void)state;
	world_start_held(&off, 2, false);
	world_start_held(&on, 2, true);
	assert_int_equal(rp_sim_run_rounds(&off.S), 0);
	assert_int_equal(rp_sim_run_rounds(&on.S), 0);
	assert_int_equal(on.S.run.mr.n, off.S.run.mr.n);
	assert_int_equal(on.S.run.mr.n, 8 * 7);
	assert_int_equal(on.S.run.holds.reused, 8 * 7 - 2);   /* all but the dead link's two directions */
	assert_int_equal(on.S.run.holds.fresh, 0);
	assert_int_equal(off.S.run.holds.reused, 0);
	for (size_t i = 0; i < on.S.run.mr.n; i++) {
		struct rp_pair_result held, fresh;
		uint32_t a = on.S.run.mr.pair_eps[2 * i], b = on.S.run.mr.pair_eps[2 * i + 1];
		bool dead = (a == DEAD_A && b == DEAD_B) || (a == DEAD_B && b == DEAD_A);

		result_in(&on, a, b, &held);
		result_in(&off, a, b, &fresh);
		assert_int_equal(held.status, fresh.status);
		assert_int_equal(held.status != RP_ST_OK, dead);
		assert_int_equal(held.n_attempts, fresh.n_attempts);
		assert_true(near(held.elapsed_s, dead ? fresh.elapsed_s : fresh.elapsed_s - on.m.setup_s));
	}
	/* a held pass is a plain pass (its attempt's time its own): kept as a record, not whole */
	assert_int_equal(mx_results_n_whole(&on.S.run.mr), mx_results_n_whole(&off.S.run.mr));
	assert_true(near(on.S.sweep_s, off.S.sweep_s));
	assert_true(near(off.S.rounds_s - on.S.rounds_s,
			    (double)rp_sched_n_rounds(on.S.sched) * 2 * on.m.setup_s));
	world_fini(&off);
	world_fini(&on);
}

/* One adapter at 40 of 100 Gb/s with each of its 39 peers (slow-endpoint), the rest at full rate,
 * --min-bw 0.9: through mx_run's retest sets, a sample of 8 of its peers is measured again (8 retest
 * rounds, not 39), and when it fails again its other 62 directions are confirmed by it; the verdict
 * drains that adapter alone. */
static void test_slow_endpoint_sampled(void **state)
{
	static const char text[] = "nodes 40\nadapters 1\nrate 100\nbandwidth 100\nlatency 0\nsetup 10ms\n"
				   "round-overhead 5ms\nslow-endpoint node00/mlx5_0 40\n";
	struct world W;
	struct rp_sim_error err;
	struct rp_result_seq ps;
	struct rp_verdict v;
	size_t by_ep = 0, retested = 0;

	(void)state;
	memset(&W, 0, sizeof(W));
	assert_int_equal(rp_sim_model_parse(text, strlen(text), &W.m, &err), 0);
	rp_engine_cfg_default(&W.cfg);
	W.cfg.meas.msg_size = 65536;
	W.cfg.meas.iters = 100;
	W.cfg.meas.warmup_iters = 4;
	W.cfg.meas.duration_s = 0;
	rp_verdict_cfg_default(&W.vcfg);
	W.vcfg.retest = 1;
	W.vcfg.min_bw = 0.9;
	W.S = (struct rp_sim_run){ .model = &W.m, .cfg = &W.cfg, .vcfg = &W.vcfg, .seed = 1 };
	mx_settings_init(&W.S.settings, &W.cfg, false, 0, false, 1);
	assert_int_equal(rp_pattern_parse("full", &W.S.pattern), 0);
	assert_int_equal(rp_sim_run_init(&W.S), 0);
	assert_int_equal(rp_sim_run_rounds(&W.S), 0);
	assert_int_equal(W.S.run.retest_rounds, MX_RETEST_SAMPLE);
	assert_int_equal(W.S.run.retest_by_endpoint, 2 * (39 - MX_RETEST_SAMPLE));
	for (size_t i = 0; i < W.S.run.mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&W.S.run.mr, i, &rtmp_);

		by_ep += r->confirm == RP_CONFIRM_BY_ENDPOINT;
		retested += r->n_attempts == 2;
		if (r->confirm == RP_CONFIRM_BY_ENDPOINT || r->n_attempts == 2)
			assert_true(W.S.run.mr.pair_eps[2 * i] == 0 || W.S.run.mr.pair_eps[2 * i + 1] == 0);
	}
	assert_int_equal(by_ep, 2 * (39 - MX_RETEST_SAMPLE));
	assert_int_equal(retested, 2 * MX_RETEST_SAMPLE);
	ps = mx_results_pairs(&W.S.run.mr);
	assert_int_equal(mx_judge(&W.vcfg, W.S.rep_eps, W.S.n_eps, W.S.run.mr.pair_eps, &ps, 1, &v), 0);
	assert_int_equal(v.n_confirmed, 2 * 39);
	assert_true(v.eps[0].drain);
	for (size_t e = 1; e < v.n_eps; e++)
		assert_false(v.eps[e].drain);
	rp_verdict_fini(&v);
	world_fini(&W);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dead_link_full),
		cmocka_unit_test(test_dead_link_retest),
		cmocka_unit_test(test_retest_plan_on_the_clock),
		cmocka_unit_test(test_rail),
		cmocka_unit_test(test_one_rank_many_endpoints),
		cmocka_unit_test(test_one_rank_answers_inline),
		cmocka_unit_test(test_one_rank_checks_its_sides),
		cmocka_unit_test(test_held_sweep),
		cmocka_unit_test(test_slow_endpoint_sampled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
