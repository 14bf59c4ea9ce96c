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
	assert_int_equal(mx_retest_jobs(&base, pe, &(struct rp_result_seq){ .n = 8, .arr = res }, gone, N_EPS, 1, &plan, &n_jobs, &n_rounds), 0);
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
	assert_int_equal(mx_retest_jobs(&base, pe, &(struct rp_result_seq){ .n = 8, .arr = res }, gone, N_EPS, 0, &plan, &n_jobs, &n_rounds), 0);
	assert_int_equal(n_jobs, 0);
	assert_int_equal(n_rounds, 0);
	assert_null(plan);
	/* an endpoint number out of range */
	pe[15] = N_EPS;
	assert_int_equal(mx_retest_jobs(&base, pe, &(struct rp_result_seq){ .n = 8, .arr = res }, gone, N_EPS, 1, &plan, &n_jobs, &n_rounds), -EINVAL);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_groups_packs_and_skips),
		cmocka_unit_test(test_judge_flaky_unconfirmed_confirmed),
		cmocka_unit_test(test_fold_keeps_judged_status),
		cmocka_unit_test(test_kept_judgement),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
