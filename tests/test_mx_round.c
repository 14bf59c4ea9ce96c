/* test_mx_round.c: the matrix's round protocol (lib/mx_round) between ranks as threads over the
 * in-process transport (tests/mx_tcomm), with the stand-in measurement of tests/mx_tcomm.h.
 *
 * - Every message is duplicated and preceded by a replay of the sender's previous message on the
 *   same tag (an earlier round's report or go, another pair's side-channel message: tags wrap at 2):
 *   every round still collects exactly the values its writers measured.
 * - Every error path frees what it allocated: a failing send or take (a take fails after the match:
 *   a transport failing mid-receive), a corrupted report, go or plan, on each rank; counted by a
 *   wrapping allocator (tests/test_mx_round.wrap) and checked to come back to zero.
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

#include "mx_round.h"
#include "mx_tcomm.h"
#include "util.h"

/* --- a counting allocator --------------------------------------------------------------------------- */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);

static long live;

void *__wrap_malloc(size_t size)
{
	void *p = __real_malloc(size);

	if (p)
		__atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
	return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
	void *p = __real_calloc(n, size);

	if (p)
		__atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
	return p;
}

void *__wrap_realloc(void *p, size_t size)
{
	void *q = __real_realloc(p, size);

	if (q && !p)
		__atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
	return q;
}

void __wrap_free(void *p)
{
	if (p)
		__atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
	__real_free(p);
}

/* --- ranks as threads ----------------------------------------------------------------------------- */

#define N_RANKS 3
#define MAX_ROUNDS 4

struct world {
	struct mxt_world *w;
	struct mxt_fake fake;
	struct mx_ep eps[N_RANKS];
	struct rp_engine_cfg cfg;
	struct mx_job jobs[MAX_ROUNDS][1];
	size_t n_rounds;
	bool plan;                    /* after the rounds: rank 0 sends a retest plan, the others wait */
	double seen[MAX_ROUNDS][2];   /* rank 0: the writers' values when the round was collected */
};

struct rank {
	struct world *W;
	struct mx_comm comm;
	struct mx_ctx ctx;
	bool dead[N_RANKS];
	pthread_t thread;
	int rc[MAX_ROUNDS + 1];
	struct rp_pair_result got[MAX_ROUNDS][2];
};

static void *rank_main(void *arg)
{
	struct rank *R = arg;
	struct world *W = R->W;
	size_t r;

	for (r = 0; r < W->n_rounds; r++) {
		const struct mx_job *j = &W->jobs[r][0];

		R->rc[r] = mx_round(&R->ctx, r, W->jobs[r], 1, R->got[r]);
		if (R->ctx.rank == 0 && R->rc[r] >= 0) {
			W->seen[r][0] = W->fake.written[j->a][j->b];
			W->seen[r][1] = W->fake.written[j->b][j->a];
			R->rc[r] = mx_round_go(&R->ctx, r);
		}
		if (R->rc[r] != 0)
			return NULL;
	}
	if (!W->plan)
		return NULL;
	if (R->ctx.rank == 0) {
		mx_plan_send(&R->ctx, r, W->jobs[0], &(uint32_t){ 0 }, 1);
	} else {
		struct mx_job *jobs = NULL;
		uint32_t *round_of = NULL;
		size_t n = 0;

		R->rc[r] = mx_plan_wait(&R->ctx, r, &jobs, &round_of, &n, rp_now() + mx_ctx_go_wait(&R->ctx));
		free(jobs);
		free(round_of);
	}
	return NULL;
}

static void world_init(struct world *W, int tag_ub)
{
	memset(W, 0, sizeof(*W));
	W->w = mxt_world_new(N_RANKS, 1, tag_ub);
	assert_non_null(W->w);
	mxt_fake_init(&W->fake);
	mxt_eps(W->eps, N_RANKS);
	rp_engine_cfg_default(&W->cfg);
	W->cfg.timeout_s = 0.5;
	/* every pair of three endpoints, then the first again */
	W->jobs[0][0] = (struct mx_job){ .a = 0, .b = 1, .dirs = 3 };
	W->jobs[1][0] = (struct mx_job){ .a = 0, .b = 2, .dirs = 3 };
	W->jobs[2][0] = (struct mx_job){ .a = 1, .b = 2, .dirs = 3 };
	W->jobs[3][0] = (struct mx_job){ .a = 0, .b = 1, .dirs = 3 };
	W->n_rounds = MAX_ROUNDS;
}

static void ranks_run(struct world *W, struct rank *ranks)
{
	for (int r = 0; r < N_RANKS; r++) {
		struct rank *R = &ranks[r];

		memset(R, 0, sizeof(*R));
		R->W = W;
		mxt_comm(W->w, r, &R->comm);
		mx_comm_set_run(&R->comm, 0xabc);
		R->ctx = (struct mx_ctx){ .comm = &R->comm, .cfg = &W->cfg, .eps = W->eps, .n_eps = N_RANKS, .rank = r,
					  .n_ranks = N_RANKS, .dead = R->dead, .max_pairs = 1, .budget = 0.5,
					  .go_slack = 0.5, .hold_go = r == 0, .measure = &W->fake.measure };
	}
	for (int r = 0; r < N_RANKS; r++)
		assert_int_equal(pthread_create(&ranks[r].thread, NULL, rank_main, &ranks[r]), 0);
	for (int r = 0; r < N_RANKS; r++)
		pthread_join(ranks[r].thread, NULL);
}

static int stale_and_dup(void *arg, const struct mxt_event *ev, double *delay_s)
{
	(void)arg;
	(void)delay_s;
	return ev->op == MXT_SEND ? MXT_STALE_FIRST | MXT_DUP : MXT_DELIVER;
}

static void test_stale_and_duplicates_never_taken(void **state)
{
	struct world W;
	struct rank ranks[N_RANKS];

	(void)state;
	world_init(&W, 2);
	mxt_set_fault(W.w, stale_and_dup, NULL);
	ranks_run(&W, ranks);
	for (size_t r = 0; r < W.n_rounds; r++) {
		for (int k = 0; k < N_RANKS; k++)
			assert_int_equal(ranks[k].rc[r], 0);
		for (int d = 0; d < 2; d++) {
			const struct rp_pair_result *g = &ranks[0].got[r][d];

			if (g->status != RP_ST_OK)
				fail_msg("round %zu dir %d: %s: %s", r, d, rp_status_code(g->status), g->reason);
			assert_true(g->gbps > 0);
			assert_true(g->gbps == W.seen[r][d]);
		}
	}
	assert_true(mx_comm_dropped(&ranks[0].comm) > 0);
	assert_true(mx_comm_dropped(&ranks[1].comm) > 0);
	mxt_world_free(W.w);
}

/* --- error paths ------------------------------------------------------------------------------------ */

struct fault_point {
	enum mxt_op op;
	int rank;
	enum mx_chan chan;
	int tag;                      /* -1: any */
	int action;
	const char *what;
};

static const struct fault_point *point;
static int point_hits;

static int at_point(void *arg, const struct mxt_event *ev, double *delay_s)
{
	(void)arg;
	(void)delay_s;
	if (ev->op != point->op || ev->rank != point->rank || ev->chan != point->chan ||
	    (point->tag >= 0 && ev->tag != point->tag))
		return MXT_DELIVER;
	__atomic_add_fetch(&point_hits, 1, __ATOMIC_RELAXED);
	return point->action;
}

static void test_error_paths_free_everything(void **state)
{
	static const struct fault_point points[] = {
		{ MXT_TAKE, 0, MX_CHAN_CTL, MX_TAG_REPORT, MXT_FAIL, "rank 0's report receive fails mid-receive" },
		{ MXT_SEND, 1, MX_CHAN_CTL, MX_TAG_REPORT, MXT_FAIL, "rank 1's report send fails" },
		{ MXT_SEND, 1, MX_CHAN_CTL, MX_TAG_REPORT, MXT_CORRUPT, "rank 1's report is malformed" },
		{ MXT_TAKE, 1, MX_CHAN_CTL, MX_TAG_GO, MXT_FAIL, "rank 1's go receive fails mid-receive" },
		{ MXT_SEND, 0, MX_CHAN_CTL, MX_TAG_GO, MXT_FAIL, "rank 0's go send fails" },
		{ MXT_SEND, 0, MX_CHAN_CTL, MX_TAG_GO, MXT_CORRUPT, "rank 0's go is malformed" },
		{ MXT_SEND, 0, MX_CHAN_CTL, MX_TAG_PLAN, MXT_CORRUPT, "rank 0's plan is malformed" },
		{ MXT_TAKE, 2, MX_CHAN_CTL, MX_TAG_PLAN, MXT_FAIL, "rank 2's plan receive fails mid-receive" },
		{ MXT_SEND, 1, MX_CHAN_PAIR, -1, MXT_FAIL, "rank 1's side-channel send fails" },
		{ MXT_TAKE, 2, MX_CHAN_PAIR, -1, MXT_FAIL, "rank 2's side-channel receive fails mid-receive" },
	};

	(void)state;
	for (size_t i = 0; i < RP_ARRAY_SIZE(points); i++) {
		struct world W;
		struct rank *ranks = __real_calloc(N_RANKS, sizeof(*ranks));
		long before = __atomic_load_n(&live, __ATOMIC_RELAXED);

		world_init(&W, 32767);
		W.n_rounds = 2;
		W.plan = true;
		point = &points[i];
		point_hits = 0;
		mxt_set_fault(W.w, at_point, NULL);
		ranks_run(&W, ranks);
		mxt_world_free(W.w);
		if (point_hits == 0)
			fail_msg("%s: the fault was never reached", points[i].what);
		if (__atomic_load_n(&live, __ATOMIC_RELAXED) != before)
			fail_msg("%s: %ld allocations left", points[i].what, __atomic_load_n(&live, __ATOMIC_RELAXED) - before);
		__real_free(ranks);
	}
	/* the failures came back as errors where they should */
	assert_true(point_hits > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_and_duplicates_never_taken),
		cmocka_unit_test(test_error_paths_free_everything),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
