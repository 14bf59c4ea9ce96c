/* test_mx_sweep.c: the reachability sweep (lib/matrix/mx_sweep.h, lib/matrix/mx_run_sweep.c).
 *
 * Its schedule: sweep round k is planned rounds [k W, (k + 1) W) (every pair once, at most W of an
 * endpoint's at once); the second pass packs at most W probes per endpoint per round; marks merge
 * and apply to a planned round's jobs.
 * Its run, ranks as threads over the in-process transport (tests/mx_tcomm) with a stand-in that
 * fails every direction of one endpoint (dead) or only its first try (flaky):
 * - dead: found in the sweep, probed again at NCCL's ACK timeout, kept with both attempts and the
 *   "reachability sweep: " reason, never measured in a bandwidth round, not retested again; every
 *   direction has exactly one result; the healthy pairs are measured once each;
 * - flaky: the second probe passes, the bandwidth round measures it at NCCL's timeout and that
 *   measurement is the direction's last attempt (ok, three attempts: never a plain pass);
 * - --retest 0: no second pass, the failures are left out unconfirmed.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "matrix/mx_run.h"
#include "matrix/mx_sweep.h"
#include "mx_tcomm.h"
#include "verdict/retest.h"
#include "base/util.h"

#define N 4

/* ---- the schedule ---- */

/* scratch for results rank 0 keeps as records (lib/matrix/mx_results.h) */
static struct rp_pair_result rtmp_;
/* --hold for every run of the bench: the second group runs every case again holding the sweep's
 * connections, and each must end the same (results, attempts, probes, bandwidth measurements) */
static bool hold_;

static struct rp_sched *full(size_t n)
{
	struct rp_sched_ep se[16];
	struct rp_pattern pat;
	struct rp_sched *s = NULL;

	for (size_t e = 0; e < n; e++)
		se[e] = (struct rp_sched_ep){ .node = (uint32_t)e, .rail = 0 };
	assert_int_equal(rp_pattern_parse("full", &pat), 0);
	assert_int_equal(rp_sched_create(se, n, &pat, 1, &s), 0);
	return s;
}

static void test_rounds_cover_every_pair_once(void **state)
{
	struct rp_sched *s = full(9);   /* 9 rounds of 4 pairs */
	struct rp_sched_pair scratch[8];
	struct mx_job jobs[64];
	unsigned seen[9][9] = { { 0 } };
	size_t n;

	(void)state;
	assert_int_equal(mx_sweep_n_rounds(s, 4), 3);   /* 9 rounds, 4 at a time */
	for (size_t k = 0; k < 3; k++) {
		unsigned per_ep[9] = { 0 };

		unsigned writes[9] = { 0 }, takes[9] = { 0 };

		assert_int_equal(mx_sweep_round_jobs(s, 4, k, scratch, jobs, 64, &n), 0);
		for (size_t i = 0; i < n; i++) {
			uint32_t src = jobs[i].dirs == 1 ? jobs[i].a : jobs[i].b, dst = jobs[i].dirs == 1 ? jobs[i].b : jobs[i].a;

			assert_true(jobs[i].a < jobs[i].b);
			assert_true(jobs[i].dirs == 1 || jobs[i].dirs == 2);   /* one probe per direction */
			seen[src][dst]++;
			per_ep[src]++;
			per_ep[dst]++;
			writes[src]++;
			takes[dst]++;
		}
		for (int e = 0; e < 9; e++)
			assert_true(per_ep[e] <= 8 && writes[e] <= 4 && takes[e] <= 4);
	}
	for (int a = 0; a < 9; a++)
		for (int b = 0; b < 9; b++)
			assert_int_equal(seen[a][b], a != b);
	assert_int_equal(mx_sweep_round_jobs(s, 4, 3, scratch, jobs, 64, &n), -EINVAL);
	assert_int_equal(mx_sweep_round_jobs(s, 4, 0, scratch, jobs, 9, &n), -ENOBUFS);
	rp_sched_destroy(s);
}

static void test_pack_marks_apply(void **state)
{
	struct mx_sweep sw = { .width = 2 };
	struct mx_job jobs[8];
	uint32_t round_of[8];
	unsigned count[2 * N];
	size_t nj = 0;
	struct rp_sched_pair pairs[3] = { { 0, 1 }, { 1, 3 }, { 2, 3 } };
	struct mx_job planned[3];

	(void)state;
	/* endpoint 3 failed with all three peers, 0-1 one way: 3's three probes need two rounds */
	mx_sweep_mark(&sw, 2, 3)->failed = 3;
	mx_sweep_mark(&sw, 0, 3)->failed = 3;
	mx_sweep_mark(&sw, 1, 3)->failed = 1;
	mx_sweep_mark(&sw, 1, 3)->failed |= 2;   /* the same mark (last added) */
	mx_sweep_mark(&sw, 0, 1)->failed = 2;
	mx_sweep_mark(&sw, 2, 3)->dead = 1;      /* added again: merged by the sort */
	mx_sweep_sort(&sw);
	assert_int_equal(sw.n, 4);
	assert_int_equal(mx_sweep_find(&sw, 2, 3)->failed, 3);
	assert_int_equal(mx_sweep_find(&sw, 2, 3)->dead, 1);
	assert_null(mx_sweep_find(&sw, 0, 2));
	/* seven failed directions, 2 -> 3 already dead (decided in pass 1: not probed again); 3 writes 3
	 * probes: with 2 per round, two rounds */
	assert_int_equal(mx_sweep_pack(&sw, 2, N, jobs, round_of, &nj, count), 2);
	assert_int_equal(nj, 6);
	for (size_t i = 0; i < nj; i++)
		assert_false(jobs[i].a == 2 && jobs[i].b == 3 && jobs[i].dirs == 1);
	for (uint32_t r = 0; r < 2; r++) {
		unsigned writes[N] = { 0 }, takes[N] = { 0 };

		for (size_t i = 0; i < nj; i++) {
			if (round_of[i] != r)
				continue;
			writes[jobs[i].dirs == 1 ? jobs[i].a : jobs[i].b]++;
			takes[jobs[i].dirs == 1 ? jobs[i].b : jobs[i].a]++;
		}
		for (int e = 0; e < N; e++)
			assert_true(writes[e] <= 2 && takes[e] <= 2);
	}
	for (size_t i = 0; i < nj; i++) {
		const struct mx_sweep_mark *m = mx_sweep_find(&sw, jobs[i].a, jobs[i].b);

		assert_true(jobs[i].dirs == 1 || jobs[i].dirs == 2);
		assert_true(m && (m->failed & jobs[i].dirs));
		assert_true(round_of[i] < 2);
		assert_int_equal(jobs[i].qp_timeout, RP_RETEST_NCCL_QP_TIMEOUT);
	}
	/* apply: 2-3 both dead (dropped), 1-3 one way dead, 0-1 flaky one way */
	((struct mx_sweep_mark *)mx_sweep_find(&sw, 2, 3))->dead = 3;
	((struct mx_sweep_mark *)mx_sweep_find(&sw, 1, 3))->dead = 1;
	((struct mx_sweep_mark *)mx_sweep_find(&sw, 0, 1))->flaky = 2;
	for (int i = 0; i < 3; i++)
		planned[i] = (struct mx_job){ .a = pairs[i].a, .b = pairs[i].b, .dirs = 3 };
	assert_int_equal(mx_sweep_apply(&sw, planned, pairs, 3, false), 2);
	assert_int_equal(planned[0].a, 0);
	assert_int_equal(planned[0].dirs, 3);
	assert_int_equal(planned[0].qp_timeout, RP_RETEST_NCCL_QP_TIMEOUT);
	assert_int_equal(planned[1].a, 1);
	assert_int_equal(planned[1].b, 3);
	assert_int_equal(pairs[1].b, 3);
	assert_int_equal(planned[1].dirs, 2);
	assert_int_equal(planned[1].qp_timeout, 0);
	mx_sweep_fini(&sw);
}

/* mx_sweep_find against a search of every mark, for every pair of 300 endpoints, over marks sorted
 * (where it looks among the first endpoint's marks only) and then with marks added since the sort
 * (where it searches them all, sorted or not as bsearch needs: the added one is the largest). */
static void test_find_every_pair(void **state)
{
	struct mx_sweep sw = { .width = 2 };
	uint64_t x = 12345;

	(void)state;
	for (int k = 0; k < 2000; k++) {
		uint32_t a, b;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		a = (uint32_t)(x >> 33) % 250;               /* no a from 250 on: find's "above every a" */
		b = a + 1 + (uint32_t)(x >> 13) % (299 - a);
		assert_non_null(mx_sweep_mark(&sw, a, b));
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0)
			mx_sweep_sort(&sw);
		else
			mx_sweep_mark(&sw, 298, 299)->failed = 1;   /* after the sort */
		for (uint32_t a = 0; a < 300; a++)
			for (uint32_t b = a + 1; b < 300; b++) {
				const struct mx_sweep_mark *m = mx_sweep_find(&sw, a, b), *want = NULL;

				for (size_t i = 0; i < sw.n && !want; i++)
					if (sw.marks[i].a == a && sw.marks[i].b == b)
						want = &sw.marks[i];
				assert_ptr_equal(m, want);
			}
	}
	mx_sweep_fini(&sw);
}

static void test_probe_cfg(void **state)
{
	struct rp_engine_cfg c, p;

	(void)state;
	rp_engine_cfg_default(&c);
	c.meas.msg_size = 1 << 20;
	c.meas.iters = 5000;
	c.meas.duration_s = 3;
	c.meas.bidir = 1;
	assert_true(mx_sweep_cfg(&c, false, &p) == 0);
	assert_int_equal(p.meas.msg_size, MX_SWEEP_MSG_MAX);
	assert_int_equal(p.meas.iters, MX_SWEEP_ITERS);
	assert_int_equal(p.meas.warmup_iters, 0);
	assert_true(p.meas.duration_s == 0);
	assert_int_equal(p.meas.bidir, 0);
	assert_int_equal(p.meas.verify, 1);
	assert_true(p.meas.tx_depth <= MX_SWEEP_ITERS);
	assert_int_equal(p.qp.qp_timeout, c.qp.qp_timeout);
	assert_true(p.timeout_s == c.timeout_s);
	assert_false(p.no_mtucheck);
	/* the screen: a shorter window and no MTU probe, said by the return */
	assert_true(mx_sweep_cfg(&c, true, &p) == MX_SWEEP_SCREEN_TIMEOUT_S);
	assert_true(p.timeout_s == MX_SWEEP_SCREEN_TIMEOUT_S);
	assert_true(p.no_mtucheck);
	assert_int_equal(p.meas.iters, MX_SWEEP_ITERS);
	/* --timeout not above the screen's window: the screen is a full probe */
	c.timeout_s = 2;
	assert_true(mx_sweep_cfg(&c, true, &p) == 0);
	assert_true(p.timeout_s == 2);
	assert_false(p.no_mtucheck);
	c.meas.msg_size = 64;
	mx_sweep_cfg(&c, false, &p);
	assert_int_equal(p.meas.msg_size, 64);
	assert_true(mx_sweep_inconclusive(RP_ST_TIMEOUT) && mx_sweep_inconclusive(RP_ST_PEER_LOST));
	assert_false(mx_sweep_inconclusive(RP_ST_RETRY_EXCEEDED) || mx_sweep_inconclusive(RP_ST_RESOLVE) ||
		     mx_sweep_inconclusive(RP_ST_OK));
}

/* --sweep's text: auto (the default width), off or 0, a width in range; anything else refused and
 * the width left as it was. */
static void test_parse(void **state)
{
	unsigned w = 7;
	bool a = true;

	(void)state;
	assert_int_equal(mx_sweep_parse("auto", &w, &a), 0);
	assert_true(w == MX_SWEEP_AUTO_WIDTH && a);
	assert_int_equal(mx_sweep_parse("off", &w, &a), 0);
	assert_true(w == 0 && !a);
	w = 7;
	assert_int_equal(mx_sweep_parse("0", &w, &a), 0);
	assert_true(w == 0 && !a);
	assert_int_equal(mx_sweep_parse("16", &w, &a), 0);
	assert_true(w == 16 && !a);
	assert_int_equal(mx_sweep_parse("4096", &w, &a), 0);
	assert_int_equal(w, 4096);
	const char *bad[] = { "4097", "-1", "", "1x", "0x10", "AUTO", "auto ", " 8", "99999999999999999999", NULL };
	for (size_t i = 0; bad[i]; i++) {
		w = 7;
		assert_int_equal(mx_sweep_parse(bad[i], &w, &a), -EINVAL);
		assert_int_equal(w, 7);
	}
	assert_int_equal(mx_sweep_parse(NULL, &w, &a), -EINVAL);
}

/* ---- the run ---- */

/* The stand-in over mxt_fake: the writer's result fails for every direction touching `bad`, and
 * for those touching `flaky` on their first try; it counts probes and bandwidth measurements per
 * direction, and the ACK timeout of each bandwidth one. */
struct bench {
	struct mx_measure m;
	struct mxt_fake fake;
	int bad, flaky;
	enum rp_status flaky_st;      /* how the flaky endpoint's first try fails (0: timed_out) */
	enum rp_status bad_st;        /* how the bad endpoint's directions fail (0: timed_out) */
	bool pass2_cut;               /* every probe after the first ends interrupted, as a stop leaves it */
	unsigned tries[N][N], probes[N][N], bw[N][N];
	unsigned bw_held[N][N];       /* bandwidth measurements on a held connection (--hold) */
	unsigned seq, probe_seq[N][N], bw_seq[N][N];   /* the order: first probe, bandwidth (from 1) */
	int bw_qp[N][N];
	double bw_delay_s;            /* each bandwidth measurement's writer takes this long */
	double budget;                /* rank 0's wait for a round's reports (0: 1 s) */
	double probe_to[N][N][2];     /* each of the first two probes: its timeout_s, */
	bool probe_nomtu[N][N][2];    /* and whether it ran without the MTU probe */
	bool rates;                   /* the verdict's outlier rule on, and every bandwidth measurement at
	                               * rate[s][d][k] for its k-th (0: 100 Gb/s) */
	double rate[N][N][3];
	bool retest_cut;              /* every bandwidth measurement after a direction's first ends
	                               * interrupted, as a stop leaves it */
};

static int devnum(const char *d)
{
	int n = -1;

	return sscanf(d, "dev%d", &n) == 1 && n >= 0 && n < N ? n : -1;
}

static void writer_faults(struct bench *B, const struct rp_engine_cfg *cfg, bool held, struct rp_pair_result *res);

static int bench_pair(void *arg, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		      const struct rp_engine_port *local, struct rp_oob *oob, struct mx_hold_side *hold,
		      struct rp_pair_result *res)
{
	struct bench *B = arg;
	bool was_held = hold && hold->held;
	int rc = B->fake.measure.pair(B->fake.measure.arg, cfg, role, local, oob, hold, res);

	if (role == RP_ROLE_WRITER && cfg->meas.iters != MX_SWEEP_ITERS && B->bw_delay_s > 0)
		nanosleep(&(struct timespec){ .tv_nsec = (long)(B->bw_delay_s * 1e9) }, NULL);
	if (role == RP_ROLE_WRITER)
		writer_faults(B, cfg, was_held, res);
	if (hold) {
		/* as the engine leaves a hold (the stand-in holds nothing real) */
		hold->eng.reused = was_held;
		hold->held = hold->eng.keep && res->status == RP_ST_OK;
	}
	return rc;
}

/* The writer's side: counts, order, and the faults the bench injects. */
static void writer_faults(struct bench *B, const struct rp_engine_cfg *cfg, bool held, struct rp_pair_result *res)
{
	int s, d;
	unsigned try;

	res->src.soft = res->dst.soft = true;   /* as the engine says of rxe: the collection must keep it */
	s = devnum(res->src.device);
	d = devnum(res->dst.device);
	if (s < 0 || d < 0)
		return;
	try = __atomic_add_fetch(&B->tries[s][d], 1, __ATOMIC_SEQ_CST);
	if (cfg->meas.iters == MX_SWEEP_ITERS) {
		unsigned k = __atomic_add_fetch(&B->probes[s][d], 1, __ATOMIC_SEQ_CST);

		if (k == 1)
			B->probe_seq[s][d] = __atomic_add_fetch(&B->seq, 1, __ATOMIC_SEQ_CST);
		if (k >= 2 && B->pass2_cut) {
			rp_pair_result_fail(res, RP_ST_INTERRUPTED, "stand-in: not measured: stopped");
			return;
		}
		if (k <= 2) {
			B->probe_to[s][d][k - 1] = cfg->timeout_s;
			B->probe_nomtu[s][d][k - 1] = cfg->no_mtucheck;
		}
	} else {
		unsigned k = __atomic_add_fetch(&B->bw[s][d], 1, __ATOMIC_SEQ_CST);

		if (B->rates && res->status == RP_ST_OK)
			res->gbps = res->gbps_min = k <= 3 && B->rate[s][d][k - 1] > 0 ? B->rate[s][d][k - 1] : 100;
		if (B->retest_cut && k > 1)
			rp_pair_result_fail(res, RP_ST_INTERRUPTED, "stand-in: not measured: stopped");
		__atomic_add_fetch(&B->bw_held[s][d], held, __ATOMIC_SEQ_CST);
		B->bw_seq[s][d] = __atomic_add_fetch(&B->seq, 1, __ATOMIC_SEQ_CST);
		B->bw_qp[s][d] = cfg->qp.qp_timeout;
	}
	if (res->status == RP_ST_OK && (s == B->bad || d == B->bad))
		rp_pair_result_fail(res, B->bad_st ? B->bad_st : RP_ST_TIMEOUT, "stand-in: no completion on dev%d for 0.3 s", s);
	else if (res->status == RP_ST_OK && (s == B->flaky || d == B->flaky) && try == 1)
		rp_pair_result_fail(res, B->flaky_st ? B->flaky_st : RP_ST_TIMEOUT, "stand-in: first try of dev%d fails", s);
}

struct rank {
	struct mx_comm comm;
	struct mx_run run;
	bool dead[N];
	pthread_t thread;
	int rc;
};

static void *rank_main(void *arg)
{
	struct rank *R = arg;

	R->rc = mx_run_rounds(&R->run);
	return NULL;
}

/* N ranks, one endpoint each, the full pattern (3 rounds of 2 pairs), sweep width 2. */
static void run_world_to(struct bench *B, unsigned retest, double timeout_s, struct rank *ranks,
			 struct mxt_world **w_p, struct rp_sched **s_p)
{
	static struct mx_ep eps[N];
	static struct rp_endpoint rep[N];
	static struct rp_engine_cfg cfg;
	static struct rp_verdict_cfg vcfg;
	struct mxt_world *w = mxt_world_new(N, 1, 32767);

	assert_non_null(w);
	mxt_fake_init(&B->fake);
	B->m = (struct mx_measure){ .pair = bench_pair, .arg = B };
	mxt_eps(eps, N);
	for (int e = 0; e < N; e++)
		rep[e] = eps[e].ep;
	rp_engine_cfg_default(&cfg);
	cfg.timeout_s = timeout_s;
	rp_verdict_cfg_default(&vcfg);
	vcfg.min_bw = 0;
	vcfg.outlier = B->rates ? RP_VERDICT_OUTLIER_DEFAULT : 0;
	vcfg.interval_drop = 0;
	*s_p = full(N);
	for (int r = 0; r < N; r++) {
		struct rank *R = &ranks[r];

		memset(R, 0, sizeof(*R));
		mxt_comm(w, r, &R->comm);
		mx_comm_set_run(&R->comm, 0x5eed);
		R->run.ctx = (struct mx_ctx){ .comm = &R->comm, .cfg = &cfg, .eps = eps, .n_eps = N, .rank = r,
					      .n_ranks = N, .dead = R->dead, .round_wait_s = B->budget > 0 ? B->budget : 1.0,
					      .go_slack = 0.5,
					      .measure = &B->m };
		R->run.sched = *s_p;
		R->run.vcfg = &vcfg;
		R->run.rep_eps = rep;
		R->run.set.retest = retest;
		R->run.set.sweep = 2;
		R->run.set.hold = hold_;
		assert_int_equal(mx_run_init(&R->run), 0);
	}
	for (int r = 0; r < N; r++)
		assert_int_equal(pthread_create(&ranks[r].thread, NULL, rank_main, &ranks[r]), 0);
	for (int r = 0; r < N; r++)
		pthread_join(ranks[r].thread, NULL);
	for (int r = 0; r < N; r++)
		assert_int_equal(ranks[r].rc, 0);
	*w_p = w;
}

/* --timeout 0.3: not above the screen's window, so pass 1 is a full probe (no screening) */
static void run_world(struct bench *B, unsigned retest, struct rank *ranks, struct mxt_world **w_p,
		      struct rp_sched **s_p)
{
	run_world_to(B, retest, 0.3, ranks, w_p, s_p);
}

static void world_done(struct rank *ranks, struct mxt_world *w, struct rp_sched *s)
{
	for (int r = 0; r < N; r++)
		mx_run_fini(&ranks[r].run);
	rp_sched_destroy(s);
	mxt_world_free(w);
}

/* Every direction has exactly one result (a sweep result and a bandwidth one would be two). */
static void one_result_each(const struct mx_run *R)
{
	unsigned seen[N][N] = { { 0 } };

	assert_int_equal(R->mr.n, N * (N - 1));
	for (size_t i = 0; i < R->mr.n; i++)
		seen[R->mr.pair_eps[2 * i]][R->mr.pair_eps[2 * i + 1]]++;
	for (int s = 0; s < N; s++)
		for (int d = 0; d < N; d++)
			assert_int_equal(seen[s][d], s != d);
}

static void test_dead_endpoint_left_out(void **state)
{
	struct bench B = { .bad = 3, .flaky = -1 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s;
	const struct mx_run *R = &ranks[0].run;

	(void)state;
	run_world(&B, 1, ranks, &w, &s);
	one_result_each(R);
	assert_int_equal(R->rounds_done, 3);
	assert_int_equal(R->retest_rounds, 0);     /* the sweep's second probe was the retest */
	assert_int_equal(R->sweep.rounds, 2 + 2);  /* pass 1: ceil(3 / 2); pass 2: 3's three pairs, 2 at a time */
	assert_int_equal(R->sweep.n_dead, 6);
	assert_int_equal(R->sweep.n_flaky, 0);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		if (a == 3 || b == 3) {
			assert_int_equal(r->status, RP_ST_TIMEOUT);
			assert_int_equal(r->n_attempts, 2);
			assert_int_equal(r->attempts[1].qp_timeout, RP_RETEST_NCCL_QP_TIMEOUT);
			assert_non_null(strstr(r->reason, "reachability sweep: stand-in: no completion"));
			assert_int_equal(B.probes[a][b], 2);
			assert_int_equal(B.bw[a][b], 0);   /* never in a bandwidth round */
		} else {
			assert_int_equal(r->status, RP_ST_OK);
			assert_true(r->n_attempts <= 1);
			assert_int_equal(B.probes[a][b], 1);
			assert_int_equal(B.bw[a][b], 1);
		}
	}
	/* every rank left the same jobs out: no side channel went unanswered */
	for (size_t i = 0; i < R->mr.n; i++)
		assert_int_not_equal(mx_results_get(&R->mr, i, &rtmp_)->status, RP_ST_PEER_LOST);
	/* what the engine learned of the endpoints survives rank 0's collection (mx_round ep_merge) */
	for (size_t i = 0; i < R->mr.n; i++)
		assert_true(mx_results_get(&R->mr, i, &rtmp_)->src.soft && mx_results_get(&R->mr, i, &rtmp_)->dst.soft);
	world_done(ranks, w, s);
}

/* The flaky endpoint's first probe fails with first_st, its second passes: flaky, measured in the
 * bandwidth rounds at NCCL's timeout and folded (three attempts), never a plain pass. */
static void check_flaky_in(struct bench *bp, double timeout_s, enum rp_status first_st, size_t *n_late)
{
	struct bench B = { .bad = -1, .flaky = 3, .flaky_st = first_st };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s;
	const struct mx_run *R = &ranks[0].run;

	run_world_to(&B, 1, timeout_s, ranks, &w, &s);
	*n_late = R->late_run == R->n_late ? R->n_late : SIZE_MAX;
	one_result_each(R);
	assert_int_equal(R->sweep.n_dead, 0);
	assert_int_equal(R->sweep.n_flaky, 6);
	assert_int_equal(R->sweep.n_cleared, 0);
	assert_int_equal(R->failed, 0);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		assert_int_equal(r->status, RP_ST_OK);
		assert_int_equal(B.bw[a][b], 1);
		if (a == 3 || b == 3) {
			assert_int_equal(r->n_attempts, 3);     /* probe failed, probe ok, the measurement */
			assert_int_equal(r->attempts[0].status, first_st);
			assert_int_equal(B.bw_qp[a][b], RP_RETEST_NCCL_QP_TIMEOUT);
		}
	}
	world_done(ranks, w, s);
	*bp = B;
}

static void check_flaky(double timeout_s, enum rp_status first_st)
{
	struct bench B;
	size_t n_late;

	check_flaky_in(&B, timeout_s, first_st, &n_late);
}

/* A full first probe (--timeout 0.3: no screen) that timed out: any failure of it counts */
static void test_flaky_measured_and_folded(void **state)
{
	(void)state;
	check_flaky(0.3, RP_ST_TIMEOUT);
}

static void test_no_retest_leaves_out_unconfirmed(void **state)
{
	struct bench B = { .bad = 3, .flaky = -1 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s;
	const struct mx_run *R = &ranks[0].run;

	(void)state;
	run_world(&B, 0, ranks, &w, &s);
	one_result_each(R);
	assert_int_equal(R->sweep.rounds, 2);
	assert_int_equal(R->sweep.n_dead, 6);
	for (size_t i = 0; i < R->mr.n; i++) {
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		if (a == 3 || b == 3) {
			assert_int_equal(B.probes[a][b], 1);
			assert_int_equal(B.bw[a][b], 0);
			assert_true(mx_results_get(&R->mr, i, &rtmp_)->n_attempts <= 1);
		}
	}
	world_done(ranks, w, s);
}

/* --timeout 10 with --retest: pass 1 screens (3 s, no MTU probe), pass 2 confirms at the full
 * timeout with the MTU probe; the dead endpoint's directions end as before: both attempts kept,
 * left out of the bandwidth rounds, one result each. */
static void test_screen_then_confirm_dead(void **state)
{
	struct bench B = { .bad = 3, .flaky = -1 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s;
	const struct mx_run *R = &ranks[0].run;

	(void)state;
	run_world_to(&B, 1, 10, ranks, &w, &s);
	one_result_each(R);
	assert_true(R->sweep.screen_s == MX_SWEEP_SCREEN_TIMEOUT_S);
	assert_int_equal(R->sweep.n_dead, 6);
	assert_int_equal(R->sweep.n_cleared, 0);
	assert_int_equal(R->sweep.n_pending, 0);
	assert_int_equal(R->retest_rounds, 0);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		assert_true(B.probe_to[a][b][0] == MX_SWEEP_SCREEN_TIMEOUT_S && B.probe_nomtu[a][b][0]);
		if (a == 3 || b == 3) {
			assert_int_equal(r->status, RP_ST_TIMEOUT);
			assert_int_equal(r->n_attempts, 2);
			assert_int_equal(r->attempts[1].qp_timeout, RP_RETEST_NCCL_QP_TIMEOUT);
			assert_non_null(strstr(r->reason, "reachability sweep: stand-in"));
			assert_int_equal(B.probes[a][b], 2);
			assert_true(B.probe_to[a][b][1] == 10 && !B.probe_nomtu[a][b][1]);
			assert_int_equal(B.bw[a][b], 0);
		} else {
			assert_int_equal(r->status, RP_ST_OK);
			assert_int_equal(B.probes[a][b], 1);
			assert_int_equal(B.bw[a][b], 1);
		}
	}
	assert_int_equal(R->failed, 6);
	world_done(ranks, w, s);
}

/* A direction with no usable port fails the same at any window and any timeout: pass 1 decides
 * it (dead, its one probe the result), pass 2 does not probe it again, as the retest rounds never
 * measure it again; with and without a screen. Failed before: every such direction was probed twice. */
static void test_no_port_decided_at_once(void **state)
{
	static const double timeouts[] = { 10, 0.3 };   /* a screen; a full first probe */

	(void)state;
	for (size_t t = 0; t < 2; t++) {
		struct bench B = { .bad = 3, .flaky = -1, .bad_st = RP_ST_NO_PORT };
		struct rank ranks[N];
		struct mxt_world *w;
		struct rp_sched *s;
		const struct mx_run *R = &ranks[0].run;

		run_world_to(&B, 1, timeouts[t], ranks, &w, &s);
		one_result_each(R);
		assert_int_equal(R->sweep.rounds, 2);      /* pass 1 alone: ceil(3 / 2) */
		assert_int_equal(R->sweep.n_dead, 6);
		assert_int_equal(R->retest_rounds, 0);
		for (size_t i = 0; i < R->mr.n; i++) {
			const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
			uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

			assert_int_equal(B.probes[a][b], 1);
			if (a == 3 || b == 3) {
				assert_int_equal(r->status, RP_ST_NO_PORT);
				assert_true(r->n_attempts <= 1);
				assert_non_null(strstr(r->reason, "stand-in: no completion"));
				assert_int_equal(B.bw[a][b], 0);
			} else {
				assert_int_equal(r->status, RP_ST_OK);
				assert_int_equal(B.bw[a][b], 1);
			}
		}
		assert_int_equal(R->failed, 6);
		world_done(ranks, w, s);
	}
}

/* Pass 2 cut short (its probes interrupted, as a stop leaves them: they say nothing): the screen
 * failures it did not decide are kept as they were observed (first failures, left out of the
 * bandwidth rounds), and the retest rounds measure them again like any first failure; nothing is
 * reported as passed, nothing is condemned on the screen alone. */
static void test_screen_undecided_kept(void **state)
{
	struct bench B = { .bad = 3, .flaky = -1, .pass2_cut = true };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s;
	const struct mx_run *R = &ranks[0].run;

	(void)state;
	run_world_to(&B, 1, 10, ranks, &w, &s);
	one_result_each(R);
	assert_int_equal(R->sweep.n_pending, 0);
	assert_int_equal(R->sweep.n_dead, 6);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		if (a != 3 && b != 3)
			continue;
		/* the screen's failure, then the retest round's measurement at NCCL's timeout */
		assert_int_equal(r->status, RP_ST_TIMEOUT);
		assert_int_equal(r->n_attempts, 2);
		assert_int_equal(r->attempts[0].qp_timeout, 14);
		assert_int_equal(r->attempts[1].qp_timeout, RP_RETEST_NCCL_QP_TIMEOUT);
		assert_int_equal(B.bw[a][b], 1);
	}
	assert_int_equal(R->failed, 6);
	world_done(ranks, w, s);
}

/* A screen that timed out (its own short window may be why) and a confirmation that passes: the
 * direction is cleared, not flaky: measured once in the bandwidth rounds at the configured ACK
 * timeout, a plain pass with no failed attempt (before: flaky, three attempts, a healthy link
 * reported as having failed). */
static void test_screen_timeout_cleared(void **state)
{
	struct bench B = { .bad = -1, .flaky = 3 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s;
	const struct mx_run *R = &ranks[0].run;

	(void)state;
	run_world_to(&B, 1, 10, ranks, &w, &s);
	one_result_each(R);
	assert_int_equal(R->sweep.n_dead, 0);
	assert_int_equal(R->sweep.n_flaky, 0);
	assert_int_equal(R->sweep.n_cleared, 6);
	assert_int_equal(R->failed, 0);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		assert_int_equal(r->status, RP_ST_OK);
		assert_true(r->n_attempts <= 1);
		assert_int_equal(B.bw[a][b], 1);
		assert_int_equal(B.bw_qp[a][b], ranks[0].run.ctx.cfg->qp.qp_timeout);
		assert_int_equal(B.probes[a][b], a == 3 || b == 3 ? 2 : 1);
	}
	world_done(ranks, w, s);
}

/* A screen that failed for a reason its window plays no part in (retry exceeded), then passed:
 * flaky, as after a full first probe. */
static void test_screen_retry_flaky(void **state)
{
	(void)state;
	check_flaky(10, RP_ST_RETRY_EXCEEDED);
}

/* --hold: each sweep round's planned rounds measure right after it, on the probes' connections
 * (before the next sweep round probes anything), and nothing stays held. */
static void test_held_interleaved(void **state)
{
	struct bench B = { .bad = -1, .flaky = -1 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s;
	struct rp_sched_pair pr[N];
	size_t reused = 0, fresh = 0, got;
	unsigned last_bw = 0, first_probe = ~0u;

	(void)state;
	hold_ = true;
	run_world(&B, 1, ranks, &w, &s);
	hold_ = false;
	one_result_each(&ranks[0].run);
	for (int a = 0; a < N; a++)
		for (int b = 0; b < N; b++)
			if (a != b) {
				assert_int_equal(B.bw_held[a][b], 1);
				assert_true(B.probe_seq[a][b] < B.bw_seq[a][b]);
			}
	/* sweep round 0 covers planned rounds 0 and 1 (width 2), sweep round 1 planned round 2 */
	for (size_t r = 0; r < 3; r++) {
		assert_int_equal(rp_sched_round(s, r, pr, N, &got), 0);
		for (size_t i = 0; i < got; i++)
			for (int d = 0; d < 2; d++) {
				uint32_t x = d ? pr[i].b : pr[i].a, y = d ? pr[i].a : pr[i].b;

				if (r < 2)
					last_bw = B.bw_seq[x][y] > last_bw ? B.bw_seq[x][y] : last_bw;
				else
					first_probe = B.probe_seq[x][y] < first_probe ? B.probe_seq[x][y] : first_probe;
			}
	}
	assert_true(last_bw < first_probe);
	for (int r = 0; r < N; r++) {
		reused += ranks[r].run.holds.reused;
		fresh += ranks[r].run.holds.fresh;
		assert_int_equal(ranks[r].run.holds.n, 0);
		assert_int_equal(ranks[r].run.n_late, 0);
	}
	assert_int_equal(reused, N * (N - 1));
	assert_int_equal(fresh, 0);
	world_done(ranks, w, s);
}

/* --hold: the sweep's time (mx_sweep.elapsed_s) is its own rounds', not the planned rounds run
 * between them. Every planned round lasts at least one writer's delay, and on rank 0's clock the
 * sweep's rounds and the 3 planned ones do not overlap, so their sum fits in the run's wall time.
 * Failed before: the front end took the sweep's time as the time from the end of start-up to the
 * end of the last sweep round (planned rounds 0 and 1 ran before sweep round 1), and calibrating the
 * plan from such a run fitted a sweep round of 2 planned rounds and almost no per-round overhead. */
static void test_held_sweep_time_its_own(void **state)
{
	struct bench B = { .bad = -1, .flaky = -1, .bw_delay_s = 0.25, .budget = 5 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s;
	double t0 = rp_now(), wall;

	(void)state;
	hold_ = true;
	run_world(&B, 1, ranks, &w, &s);
	hold_ = false;
	wall = rp_now() - t0;
	assert_int_equal(ranks[0].run.sweep.rounds, 2);
	assert_true(ranks[0].run.sweep.elapsed_s > 0);
	if (!(ranks[0].run.sweep.elapsed_s + 3 * B.bw_delay_s <= wall))
		fail_msg("sweep %.3f s + 3 planned rounds of at least %.2f s > the run's %.3f s",
			 ranks[0].run.sweep.elapsed_s, B.bw_delay_s, wall);
	world_done(ranks, w, s);
}

/* --hold, a flaky endpoint: its directions wait for pass 2 and are measured in late rounds (fresh
 * connections, NCCL's timeout, folded as without holds: check_flaky's outcomes); the others on their
 * probe's connection. */
static void test_held_flaky_late(void **state)
{
	struct bench B;
	size_t n_late;

	(void)state;
	hold_ = true;
	check_flaky_in(&B, 0.3, RP_ST_TIMEOUT, &n_late);
	hold_ = false;
	assert_true(n_late >= 3 && n_late != SIZE_MAX);   /* 3's three pairs, one at a time, all run */
	for (int a = 0; a < N; a++)
		for (int b = 0; b < N; b++)
			if (a != b)
				assert_int_equal(B.bw_held[a][b], a == 3 || b == 3 ? 0 : 1);
}

/* The late rounds: what failed its probe and is not dead, each endpoint in one job a round. */
static void test_late_pack(void **state)
{
	struct mx_sweep sw = { .width = 2 };
	struct mx_job jobs[8];
	uint32_t round_of[8];
	uint64_t scratch[12];
	size_t n = 0, rounds;
	unsigned in[8][6] = { { 0 } };

	(void)state;
	mx_sweep_mark(&sw, 0, 1)->failed = 3;               /* flaky both ways */
	mx_sweep_mark(&sw, 0, 1)->flaky = 3;
	mx_sweep_mark(&sw, 0, 2)->failed = 1;               /* cleared */
	mx_sweep_mark(&sw, 1, 2)->failed = 2;
	mx_sweep_mark(&sw, 1, 2)->dead = 2;                 /* dead: not measured */
	mx_sweep_mark(&sw, 3, 4)->failed = 2;
	mx_sweep_mark(&sw, 3, 4)->cleared = 2;
	mx_sweep_mark(&sw, 2, 3)->failed = 1;
	mx_sweep_sort(&sw);
	rounds = mx_sweep_late(&sw, 6, jobs, round_of, &n, scratch);
	assert_int_equal(n, 4);
	/* first fit: (0,1) 0, (0,2) 1, (2,3) 0, (3,4) 1; after both ends' last round it would take 4 */
	assert_int_equal(rounds, 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(++in[round_of[i]][jobs[i].a], 1);
		assert_int_equal(++in[round_of[i]][jobs[i].b], 1);
		if (jobs[i].a == 0 && jobs[i].b == 1)
			assert_true(jobs[i].dirs == 3 && jobs[i].qp_timeout == RP_RETEST_NCCL_QP_TIMEOUT);
		else
			assert_int_equal(jobs[i].qp_timeout, 0);
		assert_false(jobs[i].a == 1 && jobs[i].b == 2);
	}
	mx_sweep_fini(&sw);
}

static int hold_on(void **state)
{
	(void)state;
	hold_ = true;
	return 0;
}

static int hold_off(void **state)
{
	(void)state;
	hold_ = false;
	return 0;
}

/* The run's final judgement, as the front end makes it after the retests (its results judged in
 * place): whether it passed. */
static bool final_pass(struct mx_run *R)
{
	struct rp_result_seq ps = mx_results_pairs(&R->mr);
	struct rp_verdict v;
	bool pass;

	assert_int_equal(mx_judge(R->vcfg, R->rep_eps, N, R->mr.pair_eps, &ps, 1, &v), 0);
	pass = v.pass;
	rp_verdict_fini(&v);
	return pass;
}

/* Pairs the retests made slow are measured again before they are condemned, however many sets that
 * takes. 0 -> 1 is slow once (10 Gb/s against 100): an outlier, measured again at 100. That raises
 * column 1's median from 45 to 100, and 2 -> 1 (45 Gb/s, in line with the medians of 45 before)
 * falls below half of it: measured again (100). That raises row 2's median from 45 to 100, and
 * 2 -> 3 (40 Gb/s, in line with its column's 70 until then) falls below half of it: measured again
 * (100). Each ends flaky, not an unconfirmed failure it was never measured again for; 0 -> 3 and
 * 1 -> 3 stay at 70, in line throughout, never measured again. */
static void test_retest_what_the_retests_made_slow(void **state)
{
	struct bench B = { .bad = -1, .flaky = -1, .rates = true };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s;
	struct mx_run *R = &ranks[0].run;

	(void)state;
	B.rate[0][1][0] = 10;
	B.rate[2][1][0] = 45;
	B.rate[2][3][0] = 40;
	for (int k = 0; k < 3; k++)
		B.rate[0][3][k] = B.rate[1][3][k] = 70;
	run_world(&B, 1, ranks, &w, &s);
	one_result_each(R);
	assert_int_equal(B.bw[0][1], 2);
	assert_int_equal(B.bw[2][1], 2);
	assert_int_equal(B.bw[2][3], 2);
	assert_int_equal(R->retest_rounds, 3);     /* a set each: 0 -> 1, 2 -> 1, 2 -> 3 */
	assert_true(final_pass(R));
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];
		bool again = ((a == 0 || a == 2) && b == 1) || (a == 2 && b == 3);

		if (r->status != RP_ST_OK)
			fail_msg("%u -> %u: %s: %s", a, b, rp_status_code(r->status), r->reason);
		assert_int_equal(r->confirm == RP_CONFIRM_FLAKY, again);
		assert_int_equal(B.bw[a][b], again ? 2 : 1);
	}
	world_done(ranks, w, s);
}

/* A set of retests that measured nothing again (its directions interrupted, the run not stopped)
 * changed no pair's count of retests: no set follows it (the next would be the same, and the next),
 * and the slow pair stays an unconfirmed failure. */
static void test_retests_end_when_a_set_measures_nothing(void **state)
{
	struct bench B = { .bad = -1, .flaky = -1, .rates = true, .retest_cut = true };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s;
	struct mx_run *R = &ranks[0].run;

	(void)state;
	B.rate[0][1][0] = 10;
	run_world(&B, 1, ranks, &w, &s);
	assert_int_equal(B.bw[0][1], 2);
	assert_int_equal(R->retest_rounds, 1);
	assert_false(final_pass(R));
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		bool slow = R->mr.pair_eps[2 * i] == 0 && R->mr.pair_eps[2 * i + 1] == 1;

		assert_int_equal(r->status, slow ? RP_ST_BELOW_THRESHOLD : RP_ST_OK);
		if (slow)
			assert_int_equal(r->confirm, RP_CONFIRM_UNCONFIRMED);
	}
	world_done(ranks, w, s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_rounds_cover_every_pair_once),
		cmocka_unit_test(test_pack_marks_apply),
		cmocka_unit_test(test_find_every_pair),
		cmocka_unit_test(test_probe_cfg),
		cmocka_unit_test(test_held_interleaved),
		cmocka_unit_test(test_held_flaky_late),
		cmocka_unit_test(test_late_pack),
		cmocka_unit_test(test_held_sweep_time_its_own),
	};
	/* the run's cases, without holds, then again holding the sweep's connections: the same outcomes */
	const struct CMUnitTest runs[] = {
		cmocka_unit_test(test_no_port_decided_at_once),
		cmocka_unit_test(test_dead_endpoint_left_out),
		cmocka_unit_test(test_flaky_measured_and_folded),
		cmocka_unit_test(test_no_retest_leaves_out_unconfirmed),
		cmocka_unit_test(test_screen_then_confirm_dead),
		cmocka_unit_test(test_screen_timeout_cleared),
		cmocka_unit_test(test_screen_retry_flaky),
		cmocka_unit_test(test_screen_undecided_kept),
		cmocka_unit_test(test_retest_what_the_retests_made_slow),
		cmocka_unit_test(test_retests_end_when_a_set_measures_nothing),
	};
	int rc = cmocka_run_group_tests_name("sweep", tests, NULL, NULL);

	rc |= cmocka_run_group_tests_name("sweep runs", runs, hold_off, hold_off);
	return rc | cmocka_run_group_tests_name("sweep runs held", runs, hold_on, hold_off);
}
