/* test_mx_run.c: the matrix's rounds from first to last (lib/mx_run) between ranks as threads over
 * the in-process transport (tests/mx_tcomm), with the stand-in measurement of tests/mx_tcomm.h.
 *
 * - Rank 0's round_done hook (where the front end writes its files) runs before any rank is released
 *   into the next round: every go of round k, and every rank's report of round k + 1, comes after
 *   the hook of round k (events numbered by one counter).
 * - A rank that stops answering after its first round: every later pair with its endpoint ends
 *   RP_ST_PEER_LOST (by the round deadline), every other pair is collected ok, every planned pair has
 *   a result, and the live ranks finish the run.
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
#include <cmocka.h>

#include "mx_run.h"
#include "mx_tcomm.h"
#include "util.h"

#define MAX_RANKS 4
#define MAX_EV 256

struct world {
	struct mxt_world *w;
	int n;
	struct mxt_fake fake;
	struct mx_ep eps[MAX_RANKS];
	struct rp_endpoint rep_eps[MAX_RANKS];
	struct rp_engine_cfg cfg;
	struct rp_verdict_cfg vcfg;
	struct rp_sched *sched;
	/* event numbers */
	unsigned long done_seq[MAX_EV];
	size_t n_done;
	unsigned long go_seq[MAX_EV];
	size_t n_go;
	unsigned long report_seq[MAX_RANKS][MAX_EV];
	size_t n_report[MAX_RANKS];
	int silent_rank;              /* drops everything it sends after its first report; -1 none */
};

struct rank {
	struct world *W;
	struct mx_comm comm;
	struct mx_run run;
	bool dead[MAX_RANKS];
	pthread_t thread;
	int rc;
};

static int events(void *arg, const struct mxt_event *ev, double *delay_s)
{
	struct world *W = arg;

	(void)delay_s;
	if (ev->op != MXT_SEND)
		return MXT_DELIVER;
	if (ev->chan == MX_CHAN_CTL && ev->tag == MX_TAG_GO && ev->rank == 0 && W->n_go < MAX_EV)
		W->go_seq[W->n_go++] = ev->seq;     /* only rank 0's thread sends these */
	if (ev->rank == W->silent_rank && W->n_report[ev->rank] > 0)
		return MXT_DROP;
	if (ev->chan == MX_CHAN_CTL && ev->tag == MX_TAG_REPORT && W->n_report[ev->rank] < MAX_EV)
		W->report_seq[ev->rank][W->n_report[ev->rank]++] = ev->seq;   /* each rank's own slot */
	return MXT_DELIVER;
}

static void round_done(void *arg, bool retest, size_t k, size_t n_rounds)
{
	struct world *W = arg;

	(void)retest;
	(void)k;
	(void)n_rounds;
	if (W->n_done < MAX_EV)
		W->done_seq[W->n_done++] = mxt_seq(W->w);
}

static void *rank_main(void *arg)
{
	struct rank *R = arg;

	R->rc = mx_run_rounds(&R->run);
	return NULL;
}

static void world_init(struct world *W, int n)
{
	struct rp_sched_ep se[MAX_RANKS];
	struct rp_pattern pat;

	memset(W, 0, sizeof(*W));
	W->n = n;
	W->silent_rank = -1;
	W->w = mxt_world_new(n, 1, 32767);
	assert_non_null(W->w);
	mxt_set_fault(W->w, events, W);
	mxt_fake_init(&W->fake);
	mxt_eps(W->eps, (size_t)n);
	for (int e = 0; e < n; e++) {
		W->rep_eps[e] = W->eps[e].ep;
		se[e] = (struct rp_sched_ep){ .node = (uint32_t)e, .rail = 0 };
	}
	rp_engine_cfg_default(&W->cfg);
	W->cfg.timeout_s = 0.3;
	rp_verdict_cfg_default(&W->vcfg);
	W->vcfg.min_bw = 0;           /* the stand-in's rates are counters, not Gb/s */
	W->vcfg.outlier = 0;
	W->vcfg.interval_drop = 0;
	assert_int_equal(rp_pattern_parse("full", &pat), 0);
	assert_int_equal(rp_sched_create(se, (size_t)n, &pat, 1, &W->sched), 0);
}

static void ranks_run(struct world *W, struct rank *ranks)
{
	for (int r = 0; r < W->n; r++) {
		struct rank *R = &ranks[r];

		memset(R, 0, sizeof(*R));
		R->W = W;
		mxt_comm(W->w, r, &R->comm);
		mx_comm_set_run(&R->comm, 0x5eed);
		R->run.ctx = (struct mx_ctx){ .comm = &R->comm, .cfg = &W->cfg, .eps = W->eps, .n_eps = (size_t)W->n,
					      .rank = r, .n_ranks = W->n, .dead = R->dead, .budget = 1.0, .go_slack = 0.5,
					      .measure = &W->fake.measure };
		R->run.sched = W->sched;
		R->run.vcfg = &W->vcfg;
		R->run.rep_eps = W->rep_eps;
		R->run.retest = 1;
		if (r == 0)
			R->run.hooks = (struct mx_run_hooks){ .round_done = round_done, .arg = W };
		assert_int_equal(mx_run_init(&R->run), 0);
	}
	for (int r = 0; r < W->n; r++)
		assert_int_equal(pthread_create(&ranks[r].thread, NULL, rank_main, &ranks[r]), 0);
	for (int r = 0; r < W->n; r++)
		pthread_join(ranks[r].thread, NULL);
}

static void world_fini(struct world *W, struct rank *ranks)
{
	for (int r = 0; r < W->n; r++)
		mx_run_fini(&ranks[r].run);
	rp_sched_destroy(W->sched);
	mxt_world_free(W->w);
}

static void test_files_written_before_any_rank_goes_on(void **state)
{
	struct world W;
	struct rank ranks[3];
	size_t n_rounds;

	(void)state;
	world_init(&W, 3);
	n_rounds = rp_sched_n_rounds(W.sched);
	ranks_run(&W, ranks);
	for (int r = 0; r < 3; r++)
		assert_int_equal(ranks[r].rc, 0);
	assert_int_equal(ranks[0].run.rounds_done, n_rounds);
	assert_int_equal(W.n_done, n_rounds);
	assert_int_equal(W.n_go, 2 * n_rounds);
	for (size_t k = 0; k < n_rounds; k++) {
		for (int i = 0; i < 2; i++)
			if (W.go_seq[2 * k + i] < W.done_seq[k])
				fail_msg("round %zu: a go was sent (event %lu) before the files were written (event %lu)", k + 1,
					 W.go_seq[2 * k + i], W.done_seq[k]);
		for (int r = 1; r < 3 && k + 1 < n_rounds; r++)
			if (W.report_seq[r][k + 1] < W.done_seq[k])
				fail_msg("rank %d reported round %zu (event %lu) before rank 0 wrote round %zu (event %lu)", r,
					 k + 2, W.report_seq[r][k + 1], k + 1, W.done_seq[k]);
	}
	world_fini(&W, ranks);
}

static void test_silent_rank_pairs_end_peer_lost(void **state)
{
	struct world W;
	struct rank ranks[4];
	struct rp_sched_pair pairs[8];
	size_t first = 0, n_lost = 0;

	(void)state;
	world_init(&W, 4);
	W.silent_rank = 3;
	rp_sched_round(W.sched, 0, pairs, RP_ARRAY_SIZE(pairs), &first);
	ranks_run(&W, ranks);
	for (int r = 0; r < 3; r++)
		assert_int_equal(ranks[r].rc, 0);
	assert_true(ranks[3].rc == -ETIMEDOUT || ranks[3].rc == -ECANCELED);
	assert_true(ranks[0].run.ctx.dead[3]);
	const struct mx_results *mr = &ranks[0].run.mr;

	assert_int_equal(mr->n, 2 * rp_sched_n_pairs(W.sched));
	for (size_t i = 0; i < mr->n; i++) {
		bool with3 = mr->pair_eps[2 * i] == 3 || mr->pair_eps[2 * i + 1] == 3;
		enum rp_status want = with3 && i >= 2 * first ? RP_ST_PEER_LOST : RP_ST_OK;

		if (mr->res[i].status != want)
			fail_msg("result %zu (%u -> %u): %s (%s), want %s", i, mr->pair_eps[2 * i], mr->pair_eps[2 * i + 1],
				 rp_status_code(mr->res[i].status), mr->res[i].reason, rp_status_code(want));
		n_lost += want == RP_ST_PEER_LOST;
	}
	assert_true(n_lost > 0);
	world_fini(&W, ranks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files_written_before_any_rank_goes_on),
		cmocka_unit_test(test_silent_rank_pairs_end_peer_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
