/* test_mx_retest.c: which pairs the matrix measures again and in which extra rounds, and how the
 * final judgement treats them: a pair that passes on retest is flaky (not drained), one that cannot
 * be measured again (its rank gone) is unconfirmed, a pair with an endpoint without a port is
 * confirmed without a retest. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "matrix/mx_results.h"
#include "matrix/mx_retest.h"
#include "verdict/retest.h"

#define N_EPS 4

static struct rp_endpoint eps[N_EPS];

static void eps_init(void)
{
	for (int e = 0; e < N_EPS; e++) {
		memset(&eps[e], 0, sizeof(eps[e]));
		snprintf(eps[e].node, sizeof(eps[e].node), "node%d", e);
		snprintf(eps[e].device, sizeof(eps[e].device), "rxe%d", e);
		eps[e].port = 1;
		eps[e].link_gbps = 100;
	}
}

static void set(struct rp_pair_result *r, uint32_t *pe, uint32_t s, uint32_t d, enum rp_status st, double gbps)
{
	rp_pair_result_init(r, &eps[s], &eps[d]);
	r->status = st;
	r->gbps = gbps;
	r->verified = st == RP_ST_OK;
	if (st != RP_ST_OK)
		snprintf(r->reason, sizeof(r->reason), "%s", rp_status_code(st));
	pe[0] = s;
	pe[1] = d;
}

static void test_plan_groups_packs_and_skips(void **state)
{
	struct rp_engine_cfg base;
	struct rp_pair_result res[8];
	uint32_t pe[16];
	bool gone[N_EPS] = { false, false, false, true };   /* endpoint 3's rank died */
	struct mx_retest_job *plan = NULL;
	size_t n_jobs = 0, n_rounds = 0;

	(void)state;
	eps_init();
	memset(&base, 0, sizeof(base));
	base.qp.qp_timeout = 14;
	set(&res[0], &pe[0], 0, 1, RP_ST_OK, 90);
	set(&res[1], &pe[2], 1, 0, RP_ST_RETRY_EXCEEDED, 0);        /* retest with NCCL's ACK timeout */
	set(&res[2], &pe[4], 0, 2, RP_ST_BELOW_THRESHOLD, 10);      /* judged slow: retest */
	set(&res[3], &pe[6], 2, 0, RP_ST_DATA_MISMATCH, 90);        /* retest, same pair as res[2] */
	set(&res[4], &pe[8], 1, 2, RP_ST_OK, 90);
	set(&res[5], &pe[10], 3, 1, RP_ST_PEER_LOST, 0);            /* rank gone: no retest */
	set(&res[6], &pe[12], 2, 1, RP_ST_NO_PORT, 0);              /* no port: never retested */
	set(&res[7], &pe[14], 1, 2, RP_ST_SETUP, 0);
	res[7].n_attempts = 2;                                       /* already retested once */
	assert_int_equal(mx_retest_jobs(&base, pe, &(struct rp_result_seq){ .n = 8, .arr = res }, gone, N_EPS, 1, NULL, &plan, &n_jobs, &n_rounds, NULL), 0);
	assert_int_equal(n_jobs, 2);
	assert_int_equal(n_rounds, 2);                               /* both pairs hold endpoint 0 */
	assert_int_equal(plan[0].a, 0);
	assert_int_equal(plan[0].b, 1);
	assert_int_equal(plan[0].dirs, 2);                           /* only 1->0 */
	assert_int_equal(plan[0].res[1], 1);
	assert_true(plan[0].res[0] == SIZE_MAX);
	assert_int_equal(plan[0].qp_timeout, RP_RETEST_NCCL_QP_TIMEOUT);
	assert_int_equal(plan[1].a, 0);
	assert_int_equal(plan[1].b, 2);
	assert_int_equal(plan[1].dirs, 3);
	assert_int_equal(plan[1].res[0], 2);
	assert_int_equal(plan[1].res[1], 3);
	/* below threshold and data mismatch are no ACK-timeout failures: the probe's timeout again
	 * (lib/verdict/retest.c: a longer timeout only slows a lossy link's retransmissions) */
	assert_int_equal(plan[1].qp_timeout, 14);
	assert_true(plan[0].round != plan[1].round);
	free(plan);
	/* --retest 0: one sample decides */
	assert_int_equal(mx_retest_jobs(&base, pe, &(struct rp_result_seq){ .n = 8, .arr = res }, gone, N_EPS, 0, NULL, &plan, &n_jobs, &n_rounds, NULL), 0);
	assert_int_equal(n_jobs, 0);
	assert_int_equal(n_rounds, 0);
	assert_null(plan);
	/* an endpoint number out of range */
	pe[15] = N_EPS;
	assert_int_equal(mx_retest_jobs(&base, pe, &(struct rp_result_seq){ .n = 8, .arr = res }, gone, N_EPS, 1, NULL, &plan, &n_jobs, &n_rounds, NULL), -EINVAL);
}

/* Full mesh over 3 endpoints plus 3 -> 0: 1->2 failed first and passed on retest; 3's pairs failed
 * once and were never measured again (rank gone); 0->3 had no port. */
static void test_judge_flaky_unconfirmed_confirmed(void **state)
{
	struct rp_verdict_cfg cfg = { .min_bw = 0, .outlier = 0 };
	struct rp_pair_result res[8], again;
	uint32_t pe[16];
	struct rp_verdict v;
	int k = 0;

	(void)state;
	eps_init();
	for (uint32_t s = 0; s < 3; s++)
		for (uint32_t d = 0; d < 3; d++)
			if (s != d) {
				set(&res[k], &pe[2 * k], s, d, s == 1 && d == 2 ? RP_ST_RETRY_EXCEEDED : RP_ST_OK, 90);
				k++;
			}
	set(&res[6], &pe[12], 3, 0, RP_ST_PEER_LOST, 0);
	set(&res[7], &pe[14], 0, 3, RP_ST_NO_PORT, 0);
	/* res[3] is 1->2: measured again, ok this time */
	assert_int_equal(pe[6], 1);
	assert_int_equal(pe[7], 2);
	set(&again, (uint32_t[2]){ 0 }, 1, 2, RP_ST_OK, 88);
	mx_retest_fold(&res[3], RP_ST_RETRY_EXCEEDED, 14, &again, 20);
	assert_int_equal(res[3].n_attempts, 2);
	assert_int_equal(res[3].attempts[0].qp_timeout, 14);
	assert_int_equal(res[3].attempts[1].qp_timeout, 20);
	assert_int_equal(res[3].status, RP_ST_OK);
	assert_int_equal(mx_judge(&cfg, eps, N_EPS, pe, &(struct rp_result_seq){ .n = 8, .arr = res }, 1, &v), 0);
	assert_int_equal(res[3].confirm, RP_CONFIRM_FLAKY);
	assert_true(res[3].warnings & (1u << RP_WARN_FLAKY));
	assert_int_equal(res[0].confirm, RP_CONFIRM_NONE);
	assert_int_equal(res[6].confirm, RP_CONFIRM_UNCONFIRMED);
	assert_int_equal(res[7].confirm, RP_CONFIRM_CONFIRMED);
	/* the retested pair's endpoints are not drained: it passed */
	assert_false(v.eps[1].drain);
	assert_false(v.eps[2].drain);
	assert_int_equal(v.n_failed, 2);
	rp_verdict_fini(&v);
}

/* A first sample judged below threshold counts as a failed attempt: passing on retest is flaky. */
static void test_fold_keeps_judged_status(void **state)
{
	struct rp_pair_result kept, again;
	uint32_t pe[2];

	(void)state;
	eps_init();
	set(&kept, pe, 0, 1, RP_ST_OK, 5);          /* the engine said ok; the verdict said too slow */
	set(&again, pe, 0, 1, RP_ST_OK, 95);
	mx_retest_fold(&kept, RP_ST_BELOW_THRESHOLD, 14, &again, 20);
	assert_int_equal(kept.attempts[0].status, RP_ST_BELOW_THRESHOLD);
	assert_true(kept.gbps > 90);
	rp_retest_classify(&kept, 1);
	assert_int_equal(kept.confirm, RP_CONFIRM_FLAKY);
}

/* Verdicts of a store equal in what the reports and the drain read. */
static void same_verdict(const struct rp_verdict *a, const struct rp_verdict *b)
{
	assert_int_equal(a->n_pairs, b->n_pairs);
	assert_int_equal(a->n_ok, b->n_ok);
	assert_int_equal(a->n_failed, b->n_failed);
	assert_int_equal(a->n_confirmed, b->n_confirmed);
	assert_int_equal(a->pass, b->pass);
	assert_int_equal(a->n_eps, b->n_eps);
	for (size_t e = 0; e < a->n_eps; e++) {
		assert_int_equal(a->eps[e].pairs, b->eps[e].pairs);
		assert_int_equal(a->eps[e].failed, b->eps[e].failed);
		assert_int_equal(a->eps[e].drain, b->eps[e].drain);
	}
}

/* Rank 0 judges every result to plan the retests, and again for the reports. The second takes the
 * first's verdict only while it is the same judgement: the store unchanged since (a put, an add:
 * judged afresh), the same retest, configuration and endpoints; what it takes is what judging
 * afresh gives. A mismatch leaves the kept verdict for a later match. */
static void test_kept_judgement(void **state)
{
	struct rp_verdict_cfg cfg = { .min_bw = 0, .outlier = 0.5, .retest = 1, .alpha = RP_VERDICT_ALPHA_DEFAULT };
	struct rp_endpoint other[N_EPS];
	struct mx_judged kept = { 0 };
	struct mx_results mr;
	struct rp_pair_result r, tmp;
	struct rp_verdict v, fresh;
	uint32_t pe[2];
	bool taken;

	(void)state;
	eps_init();
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	for (uint32_t s = 0; s < 3; s++)
		for (uint32_t d = 0; d < 3; d++)
			if (s != d) {
				set(&r, pe, s, d, RP_ST_OK, 90);
				rp_pair_result_record_attempt(&r, 14);
				assert_int_equal(mx_results_add(&mr, &r, s, d), 0);
			}
	mx_results_settle(&mr);

	/* unchanged: taken (the kept one emptied), and it is the fresh judgement */
	assert_int_equal(mx_judge_keep(&kept, &cfg, eps, N_EPS, &mr, 1), 0);
	assert_true(kept.valid);
	assert_int_equal(mx_judge_results(&kept, &cfg, eps, N_EPS, &mr, 1, &v, &taken), 0);
	assert_true(taken);
	assert_false(kept.valid);
	assert_int_equal(mx_judge_results(NULL, &cfg, eps, N_EPS, &mr, 1, &fresh, &taken), 0);
	assert_false(taken);
	same_verdict(&v, &fresh);
	assert_true(v.pass);
	rp_verdict_fini(&v);
	rp_verdict_fini(&fresh);

	/* a retest folded in since (a put): judged afresh, its failure seen */
	assert_int_equal(mx_judge_keep(&kept, &cfg, eps, N_EPS, &mr, 1), 0);
	r = *mx_results_get(&mr, 0, &tmp);
	rp_pair_result_fail(&r, RP_ST_RETRY_EXCEEDED, "again");
	assert_int_equal(mx_results_put(&mr, 0, &r), 0);
	assert_int_equal(mx_judge_results(&kept, &cfg, eps, N_EPS, &mr, 1, &v, &taken), 0);
	assert_false(taken);
	assert_int_equal(v.n_failed, 1);
	rp_verdict_fini(&v);

	/* a result added since: afresh */
	assert_int_equal(mx_judge_keep(&kept, &cfg, eps, N_EPS, &mr, 1), 0);
	set(&r, pe, 0, 3, RP_ST_TIMEOUT, 0);
	assert_int_equal(mx_results_add(&mr, &r, 0, 3), 0);
	assert_int_equal(mx_judge_results(&kept, &cfg, eps, N_EPS, &mr, 1, &v, &taken), 0);
	assert_false(taken);
	assert_int_equal(v.n_pairs, 7);
	rp_verdict_fini(&v);

	/* another retest, configuration or endpoints: afresh. A judgement in place that changed no result
	 * (other link rates, no --min-bw) leaves the kept verdict for its match; one that did (another
	 * retest reclassifies the failures) is a change like any other */
	memcpy(other, eps, sizeof(other));
	other[2].link_gbps = 200;
	assert_int_equal(mx_judge_keep(&kept, &cfg, eps, N_EPS, &mr, 1), 0);
	assert_int_equal(mx_judge_results(&kept, &cfg, other, N_EPS, &mr, 1, &v, &taken), 0);
	assert_false(taken);
	rp_verdict_fini(&v);
	cfg.outlier = 0.4;
	assert_int_equal(mx_judge_results(&kept, &cfg, eps, N_EPS, &mr, 1, &v, &taken), 0);
	assert_false(taken);
	rp_verdict_fini(&v);
	cfg.outlier = 0.5;
	assert_true(kept.valid);
	assert_int_equal(mx_judge_results(&kept, &cfg, eps, N_EPS, &mr, 1, &v, &taken), 0);
	assert_true(taken);
	assert_int_equal(v.n_pairs, 7);
	rp_verdict_fini(&v);
	assert_int_equal(mx_judge_keep(&kept, &cfg, eps, N_EPS, &mr, 1), 0);
	assert_int_equal(mx_judge_results(&kept, &cfg, eps, N_EPS, &mr, 0, &v, &taken), 0);
	assert_false(taken);
	rp_verdict_fini(&v);
	assert_int_equal(mx_judge_results(&kept, &cfg, eps, N_EPS, &mr, 1, &v, &taken), 0);
	assert_false(taken);          /* the judgement with no retest put its classification */
	rp_verdict_fini(&v);
	mx_judged_fini(&kept);
	mx_results_fini(&mr);
}

/* Sampled retest (mx_retest.h): endpoint 0 ran at 40 of 100 Gb/s with each of its 40 peers, which
 * pass with each other. Its 80 directions are below --min-bw 0.9. */
#define S_EPS 41
#define S_PEERS (S_EPS - 1)

static struct rp_endpoint s_eps[S_EPS];

static void slow_store(struct mx_results *mr)
{
	struct rp_pair_result r;

	for (int e = 0; e < S_EPS; e++) {
		memset(&s_eps[e], 0, sizeof(s_eps[e]));
		snprintf(s_eps[e].node, sizeof(s_eps[e].node), "node%02d", e);
		snprintf(s_eps[e].device, sizeof(s_eps[e].device), "mlx5_0");
		s_eps[e].port = 1;
		s_eps[e].link_gbps = 100;
	}
	assert_int_equal(mx_results_init(mr, S_EPS), 0);
	for (uint32_t s = 0; s < S_EPS; s++)
		for (uint32_t d = 0; d < S_EPS; d++) {
			if (s == d || (s && d && (d != s % S_PEERS + 1)))   /* endpoint 0's pairs, and a ring of the peers */
				continue;
			rp_pair_result_init(&r, &s_eps[s], &s_eps[d]);
			r.status = RP_ST_OK;
			r.verified = true;
			r.gbps = s == 0 || d == 0 ? 40 : 95;
			rp_pair_result_record_attempt(&r, 14);
			assert_int_equal(mx_results_add(mr, &r, s, d), 0);
		}
	mx_results_settle(mr);
}

static const struct rp_verdict_cfg s_cfg = { .min_bw = 0.9, .retest = 1, .alpha = RP_VERDICT_ALPHA_DEFAULT };

/* Judge the store, then plan its next retest set with the samples sm. */
static void s_plan(struct mx_results *mr, struct mx_retest_samples *sm, unsigned retest, struct mx_retest_job **plan,
		   size_t *n_jobs, size_t *n_rounds, size_t *n_marked)
{
	struct rp_verdict_cfg cfg = s_cfg;
	struct rp_result_seq ps = mx_results_pairs(mr);
	struct rp_verdict v;

	cfg.retest = retest;
	assert_int_equal(mx_judge(&cfg, s_eps, S_EPS, mr->pair_eps, &ps, retest, &v), 0);
	rp_verdict_fini(&v);
	assert_int_equal(mx_retest_jobs(&(struct rp_engine_cfg){ .qp.qp_timeout = 14 }, mr->pair_eps, &ps, NULL, S_EPS,
					retest, sm, plan, n_jobs, n_rounds, n_marked), 0);
}

/* Measure direction idx again at gbps. */
static void s_again(struct mx_results *mr, size_t idx, double gbps)
{
	struct rp_pair_result kept, again, tmp;

	kept = *mx_results_get(mr, idx, &tmp);
	again = kept;
	again.n_attempts = 0;
	again.status = RP_ST_OK;
	again.reason[0] = '\0';
	again.gbps = gbps;
	mx_retest_fold(&kept, kept.status, 14, &again, 14);
	assert_int_equal(mx_results_put(mr, idx, &kept), 0);
}

/* Measure the plan's pairs again: each at 40 Gb/s, except the pair with peer pass_peer at 95 and
 * the one with skip_peer not at all (interrupted). */
static void s_measure(struct mx_results *mr, const struct mx_retest_job *plan, size_t n_jobs, uint32_t pass_peer,
		      uint32_t skip_peer)
{
	for (size_t j = 0; j < n_jobs; j++)
		for (int d = 0; d < 2; d++)
			if ((plan[j].dirs & (1u << d)) && plan[j].b != skip_peer)
				s_again(mr, plan[j].res[d], plan[j].b == pass_peer ? 95 : 40);
}

static size_t count_confirm(struct mx_results *mr, enum rp_confirm c)
{
	struct rp_pair_result tmp;
	size_t n = 0;

	for (size_t i = 0; i < mr->n; i++)
		n += mx_results_get(mr, i, &tmp)->confirm == c;
	return n;
}

/* The first set: endpoint 0's sample of 8 peers, evenly spread (8 rounds, not 40). */
static void s_first_set(struct mx_results *mr, struct mx_retest_samples *sm, unsigned retest, struct mx_retest_job **plan,
			size_t *n_jobs)
{
	size_t n_rounds, n_marked;

	slow_store(mr);
	assert_int_equal(mx_retest_samples_init(sm, S_EPS), 0);
	s_plan(mr, sm, retest, plan, n_jobs, &n_rounds, &n_marked);
	assert_int_equal(*n_jobs, MX_RETEST_SAMPLE);
	assert_int_equal(n_rounds, MX_RETEST_SAMPLE);
	assert_int_equal(n_marked, 0);
	for (size_t j = 0; j < *n_jobs; j++) {
		assert_int_equal((*plan)[j].a, 0);
		assert_int_equal((*plan)[j].b, 1 + 5 * j);   /* every fifth of its 40 peers */
		assert_int_equal((*plan)[j].dirs, 3);
	}
	assert_int_equal(sm->state[0], MX_SAMPLE_TAKEN);
	assert_int_equal(sm->n, 2 * MX_RETEST_SAMPLE);
	assert_int_equal(count_confirm(mr, RP_CONFIRM_UNCONFIRMED), 2 * S_PEERS);
}

/* Its sample failed again, so its other 64 directions are confirmed by it, never measured, and the
 * adapter is drained. */
static void test_sampled_retest_holds(void **state)
{
	struct mx_results mr;
	struct mx_retest_samples sm;
	struct mx_retest_job *plan = NULL;
	size_t n_jobs, n_rounds, n_marked;
	struct rp_result_seq ps;
	struct rp_verdict v;
	char text[512];

	(void)state;
	s_first_set(&mr, &sm, 1, &plan, &n_jobs);
	s_measure(&mr, plan, n_jobs, UINT32_MAX, UINT32_MAX);
	free(plan);

	s_plan(&mr, &sm, 1, &plan, &n_jobs, &n_rounds, &n_marked);
	assert_int_equal(n_jobs, 0);
	assert_null(plan);
	assert_int_equal(sm.state[0], MX_SAMPLE_HELD);
	assert_int_equal(n_marked, 2 * (S_PEERS - MX_RETEST_SAMPLE));
	assert_int_equal(count_confirm(&mr, RP_CONFIRM_BY_ENDPOINT), 2 * (S_PEERS - MX_RETEST_SAMPLE));
	s_plan(&mr, &sm, 1, &plan, &n_jobs, &n_rounds, &n_marked);   /* nothing left: the marks stay, none added */
	assert_int_equal(n_jobs, 0);
	assert_int_equal(n_marked, 0);

	ps = mx_results_pairs(&mr);
	assert_int_equal(mx_judge(&s_cfg, s_eps, S_EPS, mr.pair_eps, &ps, 1, &v), 0);
	assert_int_equal(count_confirm(&mr, RP_CONFIRM_CONFIRMED), 2 * MX_RETEST_SAMPLE);
	assert_int_equal(count_confirm(&mr, RP_CONFIRM_BY_ENDPOINT), 2 * (S_PEERS - MX_RETEST_SAMPLE));
	assert_int_equal(v.n_confirmed, 2 * S_PEERS);
	assert_int_equal(v.n_unconfirmed, 0);
	assert_true(v.eps[0].drain);
	for (size_t e = 1; e < S_EPS; e++)
		assert_false(v.eps[e].drain);
	rp_verdict_fini(&v);
	for (size_t i = 0; i < mr.n; i++) {
		struct rp_pair_result tmp, *r = mx_results_get(&mr, i, &tmp);

		if (r->confirm == RP_CONFIRM_BY_ENDPOINT) {
			assert_int_equal(r->n_attempts, 1);
			assert_int_equal(r->status, RP_ST_BELOW_THRESHOLD);
			assert_non_null(strstr(rp_retest_describe(r, text, sizeof(text)), "a sample of its endpoint's"));
			break;
		}
	}
	mx_retest_samples_fini(&sm);
	mx_results_fini(&mr);
}

/* A pair of the sample passed on its retest, or was not measured again: the endpoint's failure did
 * not hold up, so its other 32 pairs are measured again one by one, as without a sample, and it is
 * never sampled again. */
static void test_sampled_retest_falls_back(void **state)
{
	struct mx_results mr;
	struct mx_retest_samples sm;
	struct mx_retest_job *plan = NULL;
	size_t n_jobs, n_rounds, n_marked;

	(void)state;
	for (int passed = 1; passed >= 0; passed--) {
		s_first_set(&mr, &sm, 1, &plan, &n_jobs);
		s_measure(&mr, plan, n_jobs, passed ? 11 : UINT32_MAX, passed ? UINT32_MAX : 36);
		free(plan);
		s_plan(&mr, &sm, 1, &plan, &n_jobs, &n_rounds, &n_marked);
		assert_int_equal(n_marked, 0);
		assert_int_equal(sm.state[0], MX_SAMPLE_FAILED);
		/* the 32 others, and the interrupted one again */
		assert_int_equal(n_jobs, S_PEERS - MX_RETEST_SAMPLE + !passed);
		assert_int_equal(n_rounds, n_jobs);
		for (size_t j = 0; j < n_jobs; j++)
			assert_true(plan[j].b % 5 != 1 || plan[j].b == 36);
		free(plan);
		assert_int_equal(count_confirm(&mr, RP_CONFIRM_BY_ENDPOINT), 0);
		mx_retest_samples_fini(&sm);
		mx_results_fini(&mr);
	}
}

/* --retest 2: the sample is measured again twice before it decides; the others wait meanwhile. */
static void test_sampled_retest_waits(void **state)
{
	struct mx_results mr;
	struct mx_retest_samples sm;
	struct mx_retest_job *plan = NULL;
	size_t n_jobs, n_rounds, n_marked;

	(void)state;
	s_first_set(&mr, &sm, 2, &plan, &n_jobs);
	s_measure(&mr, plan, n_jobs, UINT32_MAX, UINT32_MAX);
	free(plan);
	s_plan(&mr, &sm, 2, &plan, &n_jobs, &n_rounds, &n_marked);
	assert_int_equal(n_jobs, MX_RETEST_SAMPLE);   /* the sample's second retest, nothing else */
	assert_int_equal(n_marked, 0);
	assert_int_equal(sm.state[0], MX_SAMPLE_TAKEN);
	s_measure(&mr, plan, n_jobs, UINT32_MAX, UINT32_MAX);
	free(plan);
	s_plan(&mr, &sm, 2, &plan, &n_jobs, &n_rounds, &n_marked);
	assert_int_equal(n_jobs, 0);
	assert_int_equal(n_marked, 2 * (S_PEERS - MX_RETEST_SAMPLE));
	mx_retest_samples_fini(&sm);
	mx_results_fini(&mr);
}

/* An endpoint failing with 16 peers or fewer is measured again pair by pair: a sample would not save
 * rounds enough to stand for the rest. And other retests of an endpoint are not its sample: with 10
 * of its pairs measured again and failed again already (by the sweep, say), its other 30 pairs are
 * still sampled before any is confirmed by it. */
static void test_sampled_retest_small_and_own(void **state)
{
	struct mx_results mr;
	struct mx_retest_samples sm;
	struct mx_retest_job *plan = NULL;
	size_t n_jobs, n_rounds, n_marked;
	struct rp_pair_result tmp, r;

	(void)state;
	slow_store(&mr);
	assert_int_equal(mx_retest_samples_init(&sm, S_EPS), 0);
	/* endpoint 0 runs at full rate with all but its first 16 peers */
	for (size_t i = 0; i < mr.n; i++) {
		uint32_t s = mr.pair_eps[2 * i], d = mr.pair_eps[2 * i + 1];

		if ((s == 0 && d > MX_RETEST_SAMPLE_OVER) || (d == 0 && s > MX_RETEST_SAMPLE_OVER)) {
			r = *mx_results_get(&mr, i, &tmp);
			r.gbps = 95;
			assert_int_equal(mx_results_put(&mr, i, &r), 0);
		}
	}
	s_plan(&mr, &sm, 1, &plan, &n_jobs, &n_rounds, &n_marked);
	assert_int_equal(n_jobs, MX_RETEST_SAMPLE_OVER);
	assert_int_equal(n_marked, 0);
	assert_int_equal(sm.state[0], MX_SAMPLE_NONE);
	free(plan);
	mx_retest_samples_fini(&sm);
	mx_results_fini(&mr);

	slow_store(&mr);
	assert_int_equal(mx_retest_samples_init(&sm, S_EPS), 0);
	s_plan(&mr, NULL, 1, &plan, &n_jobs, &n_rounds, &n_marked);   /* no sampling: all 40 */
	assert_int_equal(n_jobs, S_PEERS);
	for (size_t j = 0; j < 10; j++)
		for (int d = 0; d < 2; d++)
			s_again(&mr, plan[j].res[d], 40);
	free(plan);
	s_plan(&mr, &sm, 1, &plan, &n_jobs, &n_rounds, &n_marked);
	assert_int_equal(n_marked, 0);
	assert_int_equal(n_jobs, MX_RETEST_SAMPLE);
	assert_int_equal(sm.state[0], MX_SAMPLE_TAKEN);
	free(plan);
	mx_retest_samples_fini(&sm);
	mx_results_fini(&mr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_groups_packs_and_skips),
		cmocka_unit_test(test_judge_flaky_unconfirmed_confirmed),
		cmocka_unit_test(test_fold_keeps_judged_status),
		cmocka_unit_test(test_kept_judgement),
		cmocka_unit_test(test_sampled_retest_holds),
		cmocka_unit_test(test_sampled_retest_falls_back),
		cmocka_unit_test(test_sampled_retest_waits),
		cmocka_unit_test(test_sampled_retest_small_and_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
