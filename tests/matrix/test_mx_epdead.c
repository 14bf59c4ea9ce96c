/* test_mx_epdead.c: dead endpoints decided during the sweep (lib/matrix/mx_sweep.h "dead endpoints",
 * lib/matrix/mx_run_epdead.c), ranks as threads over the in-process transport (tests/mx_tcomm), 10
 * endpoints (one a rank), the full pattern (9 rounds of 5 pairs), sweep width 4, --retest 1.
 * - a dead endpoint costs its first sweep round's probes and one confirmation (4 probes at NCCL's
 *   ACK timeout with peers it had not tried), never a second pass nor a bandwidth round: each of its
 *   18 directions has one result, endpoint_dead, confirmed, and the verdict drains it alone (its
 *   directions that were probed say so in their reason);
 * - the confirmation runs beside the rounds that follow it (other directions are measured while its
 *   probes are in progress); a second dead endpoint found in a later sweep round waits for the first
 *   one's confirmation, then gets its own; a confirmation whose probes all lost their peer's rank
 *   decides nothing;
 * - a healthy endpoint whose first four peers are behind dead links is suspected, passes its
 *   confirmation with untried peers and is spared: the dead links are judged as before (confirmed
 *   failures), everything else it has is measured;
 * - dead links scattered over the fabric make no suspect at all;
 * - with every peer in the first round (width 16) the confirmation probes failed pairs again;
 * - a screen's failure is in the results (what a report holds) before its second probe, --hold or not;
 * - with --hold a dead link's second probe runs beside the planned rounds after its screen, beside a
 *   confirmation too.
 * Each case runs with and without --hold.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
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
#include "base/stop.h"
#include "base/util.h"
#include "verdict/verdict.h"

#define N 10
#define W 4

static struct rp_pair_result rtmp_;
static bool hold_;
static int want_rc_;             /* what every rank's run returns in the next run_world */
static unsigned width_ = W;      /* the sweep's width of the next run */

struct bench {
	struct mx_measure m;
	struct mxt_fake fake;
	int bad;                      /* every direction of it fails; -1 none */
	bool dead_link[N][N];         /* both directions of the pair fail */
	bool also_bad[N];             /* more endpoints whose every direction fails */
	bool stop_at_sweep_1;         /* rank 0 asks the process to stop (SIGTERM) as the second
	                               * first-pass sweep round ends, before its go: the confirmation
	                               * the first one started is running, no other side is */
	int confirm_lost;             /* __atomic: so many of the first probes at the confirmation's
	                               * settings (the confirmation's: pass 2 comes after it) end
	                               * peer_lost (their peer's rank gone) */
	unsigned probes[N][N], confirm[N][N], bw[N][N];
	unsigned small[N][N];         /* small writes (mx_job.small: a confirmation's MTU probe halves) */
	bool blackhole[N];            /* every direction of these fails but their small writes */
	unsigned confirm_mtucheck;    /* __atomic: confirmation probes that would run the engine's MTU
	                               * probe after a failure (their small writes run beside them) */
	const struct mx_run *run0;    /* rank 0's run, for the hook */
	/* test_confirmation_beside_the_rounds: a confirmation probe's writer stays (up to 1 s) until a
	 * measurement without the bad endpoint begins meanwhile (beside); each such takes 5 ms */
	bool linger;
	int in_confirm;               /* __atomic: confirmation writers in progress */
	unsigned beside;              /* __atomic */
	/* test_dead_link_second_probe_beside: a probe at NCCL's timeout of a pair without the bad
	 * endpoint (a second probe, not a confirmation) stays (up to 1 s) until a bandwidth
	 * measurement begins meanwhile (bw_beside counts them) */
	bool linger_bw;
	unsigned bw_beside;           /* __atomic */
	size_t failed_at_last;        /* rank 0's failed results when the last planned round ended */
};

/* Rank 0 after a bandwidth round: what a report written now would hold. */
static void round_done(void *arg, bool retest, size_t k, size_t n_rounds)
{
	struct bench *B = arg;

	if (!retest && !B->run0->in_late && k + 1 == n_rounds)
		B->failed_at_last = mx_results_failed(&B->run0->mr);
}

/* Rank 0 after a sweep round, before its go. */
static void sweep_done(void *arg, int pass, size_t k, size_t n_rounds)
{
	struct bench *B = arg;

	(void)n_rounds;
	if (B->stop_at_sweep_1 && pass == 1 && k == 1)
		rp_stop_request(SIGTERM);
}

static int devnum(const char *d)
{
	int n = -1;

	return sscanf(d, "dev%d", &n) == 1 && n >= 0 && n < N ? n : -1;
}

static int bench_pair(void *arg, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		      const struct rp_engine_port *local, struct rp_oob *oob, struct mx_hold_side *hold,
		      struct rp_pair_result *res)
{
	struct bench *B = arg;
	bool was_held = hold && hold->held;
	int rc = B->fake.measure.pair(B->fake.measure.arg, cfg, role, local, oob, hold, res);
	int s = devnum(res->src.device), d = devnum(res->dst.device);

	if (role == RP_ROLE_WRITER && s >= 0 && d >= 0) {
		bool small = cfg->meas.iters == 1 && cfg->meas.msg_size == RP_ENGINE_MTUCHECK_SMALL;

		__atomic_add_fetch(small ? &B->small[s][d] : cfg->meas.iters != MX_SWEEP_ITERS ? &B->bw[s][d] : &B->probes[s][d], 1,
				   __ATOMIC_SEQ_CST);
		if (res->status == RP_ST_OK && (B->blackhole[s] || B->blackhole[d]) && !small)
			rp_pair_result_fail(res, RP_ST_TIMEOUT, "stand-in: no completion (only small packets pass)");
		if (B->linger_bw && cfg->meas.iters != MX_SWEEP_ITERS && !small &&
		    __atomic_load_n(&B->in_confirm, __ATOMIC_SEQ_CST) > 0)
			__atomic_add_fetch(&B->bw_beside, 1, __ATOMIC_SEQ_CST);
		if (B->linger && s != B->bad && d != B->bad) {
			if (__atomic_load_n(&B->in_confirm, __ATOMIC_SEQ_CST) > 0)
				__atomic_add_fetch(&B->beside, 1, __ATOMIC_SEQ_CST);
			nanosleep(&(struct timespec){ 0, 5000000L }, NULL);
		}
		if (res->status == RP_ST_OK && (s == B->bad || d == B->bad || B->also_bad[s] || B->also_bad[d] ||
						B->dead_link[s][d]))
			rp_pair_result_fail(res, RP_ST_TIMEOUT, "stand-in: no completion");
	}
	if (hold) {
		hold->eng.reused = was_held;
		hold->held = hold->eng.keep && res->status == RP_ST_OK;
	}
	return rc;
}

/* A probe at NCCL's ACK timeout and the full --timeout (20 s here; pass 1 screens at 3 s): a
 * confirmation's, or pass 2's (the cases tell them apart). */
static int confirm_probe(void *arg, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
			 const struct rp_engine_port *local, struct rp_oob *oob, struct mx_hold_side *hold,
			 struct rp_pair_result *res)
{
	struct bench *B = arg;
	int rc = bench_pair(arg, cfg, role, local, oob, hold, res);
	int s = devnum(res->src.device), d = devnum(res->dst.device);

	if (role == RP_ROLE_WRITER && s >= 0 && d >= 0 && cfg->meas.iters == MX_SWEEP_ITERS &&
	    cfg->qp.qp_timeout == RP_RETEST_NCCL_QP_TIMEOUT && cfg->timeout_s == 20) {
		bool lingers = B->linger || (B->linger_bw && s != B->bad && d != B->bad);

		__atomic_add_fetch(&B->confirm[s][d], 1, __ATOMIC_SEQ_CST);
		if (!cfg->no_mtucheck)
			__atomic_add_fetch(&B->confirm_mtucheck, 1, __ATOMIC_SEQ_CST);
		if (__atomic_sub_fetch(&B->confirm_lost, 1, __ATOMIC_SEQ_CST) >= 0)
			rp_pair_result_fail(res, RP_ST_PEER_LOST, "stand-in: the peer's rank stopped answering");
		if (lingers) {
			unsigned *seen = B->linger ? &B->beside : &B->bw_beside;

			__atomic_add_fetch(&B->in_confirm, 1, __ATOMIC_SEQ_CST);
			for (int i = 0; i < 200 && !__atomic_load_n(seen, __ATOMIC_SEQ_CST); i++)
				nanosleep(&(struct timespec){ 0, 5000000L }, NULL);
			__atomic_sub_fetch(&B->in_confirm, 1, __ATOMIC_SEQ_CST);
		}
	}
	return rc;
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

static struct rp_sched *full(void)
{
	struct rp_sched_ep se[N];
	struct rp_pattern pat;
	struct rp_sched *s = NULL;

	for (size_t e = 0; e < N; e++)
		se[e] = (struct rp_sched_ep){ .node = (uint32_t)e, .rail = 0 };
	assert_int_equal(rp_pattern_parse("full", &pat), 0);
	assert_int_equal(rp_sched_create(se, N, &pat, 1, &s), 0);
	return s;
}

static struct rp_endpoint rep_[N];
static struct rp_verdict_cfg vcfg_;

static void run_world(struct bench *B, struct rank *ranks, struct mxt_world **w_p, struct rp_sched *s)
{
	static struct mx_ep eps[N];
	static struct rp_engine_cfg cfg;
	struct mxt_world *w = mxt_world_new(N, 1, 32767);

	assert_non_null(w);
	mxt_fake_init(&B->fake);
	B->m = (struct mx_measure){ .pair = confirm_probe, .arg = B };
	mxt_eps(eps, N);
	for (int e = 0; e < N; e++)
		rep_[e] = eps[e].ep;
	rp_engine_cfg_default(&cfg);
	cfg.timeout_s = 20;       /* above the screen's window: pass 1 screens, pass 2 runs at 20 s */
	rp_verdict_cfg_default(&vcfg_);
	vcfg_.min_bw = 0;
	vcfg_.outlier = 0;
	vcfg_.interval_drop = 0;
	for (int r = 0; r < N; r++) {
		struct rank *R = &ranks[r];

		memset(R, 0, sizeof(*R));
		mxt_comm(w, r, &R->comm);
		mx_comm_set_run(&R->comm, 0x5eed);
		R->run.ctx = (struct mx_ctx){ .comm = &R->comm, .cfg = &cfg, .eps = eps, .n_eps = N, .rank = r,
					      .n_ranks = N, .dead = R->dead, .round_wait_s = 2.0, .go_slack = 1.0,
					      .measure = &B->m };
		R->run.sched = s;
		R->run.vcfg = &vcfg_;
		R->run.rep_eps = rep_;
		R->run.set.retest = 1;
		R->run.set.sweep = width_;
		R->run.set.hold = hold_;
		if (r == 0) {
			B->run0 = &R->run;
			R->run.hooks = (struct mx_run_hooks){ .round_done = round_done, .sweep_done = sweep_done, .arg = B };
		}
		assert_int_equal(mx_run_init(&R->run), 0);
	}
	for (int r = 0; r < N; r++)
		assert_int_equal(pthread_create(&ranks[r].thread, NULL, rank_main, &ranks[r]), 0);
	for (int r = 0; r < N; r++)
		pthread_join(ranks[r].thread, NULL);
	for (int r = 0; r < N; r++)
		assert_int_equal(ranks[r].rc, want_rc_);
	*w_p = w;
}

static void world_done(struct rank *ranks, struct mxt_world *w, struct rp_sched *s)
{
	for (int r = 0; r < N; r++)
		mx_run_fini(&ranks[r].run);
	rp_sched_destroy(s);
	mxt_world_free(w);
}

/* Every direction has exactly one result. */
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

/* The peers endpoint e is probed with in the first sweep round. */
static unsigned first_round_peers(struct rp_sched *s, uint32_t e, uint32_t *peers)
{
	struct rp_sched_pair scratch[N];
	struct mx_job jobs[4 * N * W];
	size_t n = 0;
	unsigned m = 0;

	assert_int_equal(mx_sweep_round_jobs(s, W, 0, scratch, jobs, 4 * N * W, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (jobs[i].dirs == 1 && (jobs[i].a == e || jobs[i].b == e))
			peers[m++] = jobs[i].a == e ? jobs[i].b : jobs[i].a;
	return m;
}

static void test_dead_endpoint_one_deadline(void **state)
{
	struct bench B = { .bad = 7 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;
	unsigned first = 0, confirm = 0, later = 0;
	uint32_t peers[N];
	unsigned n_first = first_round_peers(s, 7, peers);
	struct rp_verdict v;
	struct rp_result_seq ps;

	(void)state;
	assert_int_equal(n_first, W);
	run_world(&B, ranks, &w, s);
	one_result_each(R);
	/* its cost: the first round's probes (4 peers, both ways), one confirmation round of 4 probes,
	 * nothing else: no second pass (it would probe all 18 of its directions again at 20 s), no
	 * screen of it in the later first-pass rounds, no bandwidth round */
	for (int p = 0; p < N; p++) {
		if (p == 7)
			continue;
		first += B.probes[7][p] + B.probes[p][7] - B.confirm[7][p] - B.confirm[p][7];
		confirm += B.confirm[7][p] + B.confirm[p][7];
		assert_int_equal(B.bw[7][p] + B.bw[p][7], 0);
	}
	for (unsigned i = 0; i < n_first; i++)
		later += B.confirm[7][peers[i]] + B.confirm[peers[i]][7];
	assert_int_equal(first, 2 * W);
	assert_int_equal(confirm, 2 * MX_EPDEAD_CONFIRM_PAIRS);
	assert_int_equal(later, 0);            /* the confirmation tried peers it had not tried */
	/* one deadline: each probe's MTU probe, its small write, runs beside it, not after it */
	assert_int_equal(__atomic_load_n(&B.confirm_mtucheck, __ATOMIC_SEQ_CST), 0);
	for (int a = 0; a < N; a++)
		for (int b = 0; b < N; b++)
			assert_int_equal(B.small[a][b], a == 7 || b == 7 ? B.confirm[a][b] : 0);
	assert_int_equal(R->sweep.n_ep_dead, 1);
	assert_int_equal(R->sweep.n_confirm, 1);
	assert_int_equal(R->sweep.n_ep_dirs, 2 * (N - 1));
	assert_int_equal(R->sweep.rounds, 3 + 1);   /* ceil(9 / 4) first-pass rounds, the confirmation */
	assert_int_equal(R->retest_rounds, 0);
	/* every rank knows: no side channel waited for it */
	for (int r = 0; r < N; r++)
		assert_true(mx_sweep_ep_dead(&ranks[r].run.sweep, 7));
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		if (a == 7 || b == 7) {
			assert_int_equal(r->status, RP_ST_ENDPOINT_DEAD);
			assert_non_null(strstr(r->reason, "endpoint n7/dev7:1 is dead"));
			assert_false(rp_retest_wanted(r, 1));
		} else {
			assert_int_equal(r->status, RP_ST_OK);
			assert_int_equal(B.bw[a][b], 1);
		}
	}
	ps = mx_results_pairs((struct mx_results *)&R->mr);
	assert_int_equal(rp_verdict_judge(&vcfg_, rep_, N, R->mr.pair_eps, &ps, &v), 0);
	for (int e = 0; e < N; e++)
		assert_int_equal(v.eps[e].drain, e == 7);
	assert_int_equal(v.n_confirmed, 2 * (N - 1));
	assert_false(v.pass);
	rp_verdict_fini(&v);
	world_done(ranks, w, s);
}

/* An endpoint whose small packets get through and whose probes' do not (a path MTU below its port's):
 * dead as before, the small writes beside its confirmation probes say so in the reason, and nothing
 * waits for an MTU probe after a probe. */
static void test_dead_endpoint_small_writes_arrive(void **state)
{
	struct bench B = { .bad = -1 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;
	unsigned small = 0;

	(void)state;
	B.blackhole[7] = true;
	run_world(&B, ranks, &w, s);
	one_result_each(R);
	for (int p = 0; p < N; p++)
		small += B.small[7][p] + B.small[p][7];
	assert_int_equal(small, 2 * MX_EPDEAD_CONFIRM_PAIRS);
	assert_int_equal(__atomic_load_n(&B.confirm_mtucheck, __ATOMIC_SEQ_CST), 0);
	assert_int_equal(R->sweep.n_ep_dead, 1);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		if (a == 7 || b == 7) {
			assert_int_equal(r->status, RP_ST_ENDPOINT_DEAD);
			assert_non_null(strstr(r->reason, "4 64-byte writes beside them arrived"));
		} else {
			assert_int_equal(r->status, RP_ST_OK);
		}
	}
	world_done(ranks, w, s);
}

/* The confirmation runs beside the rounds that follow it: while its probes are in progress (each
 * writer stays until then, at most 1 s, within the 2 s a round may take), other directions are
 * measured; the outcome is the one-deadline case's. */
static void test_confirmation_beside_the_rounds(void **state)
{
	struct bench B = { .bad = 7, .linger = true };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;

	(void)state;
	run_world(&B, ranks, &w, s);
	one_result_each(R);
	assert_true(B.beside > 0);
	assert_int_equal(R->sweep.n_confirm, 1);
	assert_int_equal(R->sweep.n_ep_dead, 1);
	assert_int_equal(R->sweep.n_ep_dirs, 2 * (N - 1));
	for (int r = 0; r < N; r++) {
		assert_true(mx_sweep_ep_dead(&ranks[r].run.sweep, 7));
		assert_int_equal(ranks[r].run.sweep.n_ep_out, 0);
	}
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		assert_int_equal(r->status, a == 7 || b == 7 ? RP_ST_ENDPOINT_DEAD : RP_ST_OK);
		if (a != 7 && b != 7)
			assert_int_equal(B.bw[a][b], 1);
	}
	world_done(ranks, w, s);
}

/* Two dead endpoints found in different sweep rounds: 7 in the first; 9 only in the second, since one
 * of its first peers (p) passed nothing there (dead links to its other first peers), so counts for
 * nothing. 9's confirmation waits for 7's to finish, then runs: both are decided as a whole. */
static void test_second_suspect_while_one_confirms(void **state)
{
	struct bench B = { .bad = 7 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;
	uint32_t p7[N], p9[N], pp[N];
	unsigned n7 = first_round_peers(s, 7, p7), n9 = first_round_peers(s, 9, p9), np;
	uint32_t p = UINT32_MAX;

	(void)state;
	B.also_bad[9] = true;
	for (unsigned i = 0; i < n7; i++)
		assert_true(p7[i] != 9);     /* the schedule this case needs: 7 and 9 meet later */
	for (unsigned i = 0; i < n9 && p == UINT32_MAX; i++) {
		bool of7 = false;

		for (unsigned j = 0; j < n7; j++)
			of7 |= p7[j] == p9[i];
		if (!of7)
			p = p9[i];
	}
	assert_true(p != UINT32_MAX);
	np = first_round_peers(s, p, pp);
	for (unsigned i = 0; i < np; i++)
		if (pp[i] != 9)
			B.dead_link[p][pp[i]] = B.dead_link[pp[i]][p] = true;
	run_world(&B, ranks, &w, s);
	one_result_each(R);
	assert_int_equal(R->sweep.n_confirm, 2);
	assert_int_equal(R->sweep.n_ep_dead, 2);
	assert_int_equal(R->sweep.n_ep_dirs, 2 * (N - 1) + 2 * (N - 2));
	for (int r = 0; r < N; r++) {
		assert_true(mx_sweep_ep_dead(&ranks[r].run.sweep, 7));
		assert_true(mx_sweep_ep_dead(&ranks[r].run.sweep, 9));
		assert_int_equal(ranks[r].run.sweep.n_ep_out, 0);
	}
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		if (a == 7 || b == 7 || a == 9 || b == 9)
			assert_int_equal(r->status, RP_ST_ENDPOINT_DEAD);
		else if (B.dead_link[a][b])
			assert_int_not_equal(r->status, RP_ST_OK);
		else
			assert_int_equal(r->status, RP_ST_OK);
	}
	world_done(ranks, w, s);
}

/* A confirmation whose every probe lost its peer's rank says nothing of the suspect: it is not
 * decided dead (its directions are judged one by one, failed), and what it was left out of while
 * the confirmation ran is measured all the same. */
static void test_confirmation_peers_lost_decides_nothing(void **state)
{
	struct bench B = { .bad = 7, .confirm_lost = 2 * MX_EPDEAD_CONFIRM_PAIRS };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;

	(void)state;
	run_world(&B, ranks, &w, s);
	one_result_each(R);
	assert_int_equal(R->sweep.n_confirm, 1);
	assert_int_equal(R->sweep.n_ep_dead, 0);
	assert_int_equal(R->sweep.n_ep_dirs, 0);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		if (a == 7 || b == 7) {
			assert_int_not_equal(r->status, RP_ST_OK);
			assert_int_not_equal(r->status, RP_ST_ENDPOINT_DEAD);
			assert_int_not_equal(r->status, RP_ST_PEER_LOST);
		} else {
			assert_int_equal(r->status, RP_ST_OK);
		}
	}
	world_done(ranks, w, s);
}

/* A stop while the confirmation runs beside the rounds (asked as the next sweep round ends): every
 * rank returns MX_STOPPED (no finish: the confirmation's sides are waited for and dropped), nothing
 * is decided, and no rank leaves an endpoint out any more. */
static void test_stop_while_confirming(void **state)
{
	struct bench B = { .bad = 7, .stop_at_sweep_1 = true };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;

	(void)state;
	want_rc_ = MX_STOPPED;
	run_world(&B, ranks, &w, s);
	want_rc_ = 0;
	rp_stop_reset();
	assert_int_equal(R->sweep.n_confirm, 0);
	assert_int_equal(R->sweep.n_ep_dead, 0);
	assert_int_equal(R->sweep.n_ep_dirs, 0);
	for (int r = 0; r < N; r++) {
		assert_int_equal(ranks[r].run.sweep.n_ep_out, 0);
		assert_false(mx_sweep_ep_dead(&ranks[r].run.sweep, 7));
		assert_null(ranks[r].run.epdead);
	}
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);

		assert_int_not_equal(r->status, RP_ST_ENDPOINT_DEAD);
	}
	world_done(ranks, w, s);
}

/* Dead links to all four of its first peers: a suspect, but its untried peers pass: spared. */
static void test_healthy_behind_dead_links_spared(void **state)
{
	struct bench B = { .bad = -1 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;
	uint32_t peers[N];
	unsigned n_first = first_round_peers(s, 7, peers), confirm = 0;

	(void)state;
	for (unsigned i = 0; i < n_first; i++)
		B.dead_link[7][peers[i]] = B.dead_link[peers[i]][7] = true;
	run_world(&B, ranks, &w, s);
	one_result_each(R);
	for (int p = 0; p < N; p++)   /* (the dead links' own are pass 2's) */
		confirm += B.dead_link[7][p] ? 0 : B.confirm[7][p] + B.confirm[p][7];
	assert_int_equal(confirm, 2 * MX_EPDEAD_CONFIRM_PAIRS);   /* suspected, confirmed... */
	assert_int_equal(R->sweep.n_ep_dead, 0);                   /* ...and spared */
	assert_int_equal(R->sweep.n_ep_dirs, 0);
	assert_int_equal(R->sweep.n_dead, 2 * n_first);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		if (B.dead_link[a][b]) {
			assert_int_equal(r->status, RP_ST_TIMEOUT);
			assert_int_equal(r->n_attempts, 2);
		} else {
			assert_int_equal(r->status, RP_ST_OK);
			assert_int_equal(B.bw[a][b], 1);
		}
	}
	world_done(ranks, w, s);
}

/* Width 16: every pair in the first sweep round, no untried peer left for the confirmation: the
 * suspect's failed pairs are probed again (2 of them, both ways), and it is dead all the same. */
static void test_dead_endpoint_no_untried_peer(void **state)
{
	struct bench B = { .bad = 7 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;
	unsigned confirm = 0;

	(void)state;
	width_ = 16;
	run_world(&B, ranks, &w, s);
	width_ = W;
	one_result_each(R);
	for (int p = 0; p < N; p++)
		confirm += B.confirm[7][p] + B.confirm[p][7];
	assert_int_equal(confirm, 2 * MX_EPDEAD_CONFIRM_PAIRS);
	assert_int_equal(R->sweep.n_ep_dead, 1);
	assert_int_equal(R->sweep.rounds, 1 + 1);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		assert_int_equal(r->status, a == 7 || b == 7 ? RP_ST_ENDPOINT_DEAD : RP_ST_OK);
		if ((a == 7 || b == 7) && B.confirm[a][b])
			assert_non_null(strstr(r->reason, "peers it had failed with"));
	}
	world_done(ranks, w, s);
}

/* Dead links scattered (no endpoint with more than two): nobody is even suspected. */
static void test_scattered_dead_links_no_suspect(void **state)
{
	static const int links[][2] = { { 0, 3 }, { 1, 7 }, { 2, 9 }, { 4, 7 }, { 5, 8 }, { 6, 0 } };
	struct bench B = { .bad = -1 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;

	(void)state;
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		B.dead_link[links[i][0]][links[i][1]] = B.dead_link[links[i][1]][links[i][0]] = true;
	run_world(&B, ranks, &w, s);
	one_result_each(R);
	assert_int_equal(R->sweep.n_confirm, 0);
	assert_int_equal(R->sweep.n_ep_dead, 0);
	assert_int_equal(R->sweep.n_dead, 2 * 6);
	world_done(ranks, w, s);
}

/* Issue 26 item 4: a screen's failure is a finding from its round on. With --hold its second probe
 * may end after the bandwidth rounds; a report written after the last of them (and a run killed
 * then) must hold it already, unconfirmed, as --hold off's does. */
static void test_screen_failures_in_report(void **state)
{
	struct bench B = { .bad = -1 };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;

	(void)state;
	B.dead_link[0][3] = B.dead_link[3][0] = true;
	B.dead_link[2][5] = true;
	run_world(&B, ranks, &w, s);
	one_result_each(R);
	assert_int_equal(B.failed_at_last, 3);
	assert_int_equal(R->failed, 3);
	world_done(ranks, w, s);
}

/* One dead link found in the first sweep round, between two endpoints that reach everyone else:
 * with --hold its second probe (pass 2: NCCL's ACK timeout, the full --timeout) runs beside the
 * planned rounds that follow, not after the last of them (before: the run's last --timeout and MTU
 * probe came after every bandwidth round), and decides as pass 2 does: both directions confirmed
 * failures (the screen, then the second probe), never measured for bandwidth, probed again by
 * nothing, a path fault that drains no one. Without --hold pass 2 comes before the bandwidth
 * rounds, as before. */
static void test_dead_link_second_probe_beside(void **state)
{
	struct bench B = { .bad = -1, .linger_bw = true };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;
	uint32_t peers[N];
	unsigned n0 = first_round_peers(s, 0, peers);
	uint32_t b = peers[0];
	struct rp_verdict v;
	struct rp_result_seq ps;

	(void)state;
	assert_true(n0 > 0);
	B.dead_link[0][b] = B.dead_link[b][0] = true;
	run_world(&B, ranks, &w, s);
	one_result_each(R);
	if (hold_)
		assert_true(__atomic_load_n(&B.bw_beside, __ATOMIC_SEQ_CST) > 0);
	else
		assert_int_equal(__atomic_load_n(&B.bw_beside, __ATOMIC_SEQ_CST), 0);
	assert_int_equal(R->sweep.n_confirm, 0);
	assert_int_equal(R->sweep.n_dead, 2);
	assert_int_equal(R->sweep.n_flaky + R->sweep.n_cleared, 0);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t x = R->mr.pair_eps[2 * i], y = R->mr.pair_eps[2 * i + 1];

		if (B.dead_link[x][y]) {
			assert_int_equal(r->status, RP_ST_TIMEOUT);
			assert_int_equal(r->n_attempts, 2);
			assert_int_equal(r->attempts[1].qp_timeout, RP_RETEST_NCCL_QP_TIMEOUT);
			assert_int_equal(B.probes[x][y], 2);    /* the screen, the second probe: no third */
			assert_int_equal(B.confirm[x][y], 1);
			assert_int_equal(B.bw[x][y], 0);
		} else {
			assert_int_equal(r->status, RP_ST_OK);
			assert_int_equal(B.bw[x][y], 1);
		}
	}
	ps = mx_results_pairs((struct mx_results *)&R->mr);
	assert_int_equal(rp_verdict_judge(&vcfg_, rep_, N, R->mr.pair_eps, &ps, &v), 0);
	for (int e = 0; e < N; e++)
		assert_false(v.eps[e].drain);
	assert_int_equal(v.n_paths, 1);
	assert_int_equal(v.n_confirmed, 2);
	rp_verdict_fini(&v);
	world_done(ranks, w, s);
}

/* A dead adapter (7) and a dead link between two others, all found in the first sweep round: the
 * link's second probe runs beside the rounds while 7's confirmation does (each started round in a
 * slot of its own; before: the confirmation's place made the link wait for the last planned round).
 * 7 is decided as a whole, the link as two confirmed failures; 7 alone is drained. */
static void test_dead_link_beside_a_confirmation(void **state)
{
	struct bench B = { .bad = 7, .linger_bw = true };
	struct rank ranks[N];
	struct mxt_world *w;
	struct rp_sched *s = full();
	const struct mx_run *R = &ranks[0].run;
	uint32_t peers[N], x = 0, y = UINT32_MAX;
	unsigned n0 = first_round_peers(s, x, peers);
	struct rp_verdict v;
	struct rp_result_seq ps;

	(void)state;
	for (unsigned i = 0; i < n0 && y == UINT32_MAX; i++)
		if (peers[i] != 7)
			y = peers[i];
	assert_true(y != UINT32_MAX);
	B.dead_link[x][y] = B.dead_link[y][x] = true;
	run_world(&B, ranks, &w, s);
	one_result_each(R);
	if (hold_)
		assert_true(__atomic_load_n(&B.bw_beside, __ATOMIC_SEQ_CST) > 0);
	assert_int_equal(R->sweep.n_ep_dead, 1);
	assert_int_equal(R->sweep.n_ep_dirs, 2 * (N - 1));
	assert_int_equal(R->sweep.n_dead, 2);
	for (size_t i = 0; i < R->mr.n; i++) {
		const struct rp_pair_result *r = mx_results_get(&R->mr, i, &rtmp_);
		uint32_t a = R->mr.pair_eps[2 * i], b = R->mr.pair_eps[2 * i + 1];

		if (a == 7 || b == 7) {
			assert_int_equal(r->status, RP_ST_ENDPOINT_DEAD);
		} else if (B.dead_link[a][b]) {
			assert_int_equal(r->status, RP_ST_TIMEOUT);
			assert_int_equal(r->n_attempts, 2);
			assert_int_equal(B.confirm[a][b], 1);
		} else {
			assert_int_equal(r->status, RP_ST_OK);
			assert_int_equal(B.bw[a][b], 1);
		}
	}
	ps = mx_results_pairs((struct mx_results *)&R->mr);
	assert_int_equal(rp_verdict_judge(&vcfg_, rep_, N, R->mr.pair_eps, &ps, &v), 0);
	for (int e = 0; e < N; e++)
		assert_int_equal(v.eps[e].drain, e == 7);
	rp_verdict_fini(&v);
	world_done(ranks, w, s);
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

int main(void)
{
	const struct CMUnitTest runs[] = {
		cmocka_unit_test(test_dead_endpoint_one_deadline),
		cmocka_unit_test(test_dead_endpoint_small_writes_arrive),
		cmocka_unit_test(test_confirmation_beside_the_rounds),
		cmocka_unit_test(test_second_suspect_while_one_confirms),
		cmocka_unit_test(test_confirmation_peers_lost_decides_nothing),
		cmocka_unit_test(test_stop_while_confirming),
		cmocka_unit_test(test_healthy_behind_dead_links_spared),
		cmocka_unit_test(test_scattered_dead_links_no_suspect),
		cmocka_unit_test(test_dead_endpoint_no_untried_peer),
		cmocka_unit_test(test_screen_failures_in_report),
		cmocka_unit_test(test_dead_link_second_probe_beside),
		cmocka_unit_test(test_dead_link_beside_a_confirmation),
	};
	int rc = cmocka_run_group_tests_name("dead endpoints", runs, hold_off, hold_off);

	return rc | cmocka_run_group_tests_name("dead endpoints held", runs, hold_on, hold_off);
}
