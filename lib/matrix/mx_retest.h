/* mx_retest.h: the matrix's retest rounds and final judgement (lib/verdict/retest.h's sequence over a
 * whole matrix).
 *
 * After the planned rounds, every directed pair that rp_retest_wanted() (failed, or marked below
 * threshold / outlier by rp_verdict_apply) is measured again in extra rounds, both of its endpoints
 * measurable (their ranks alive, a port each), grouped by unordered pair and packed into
 * contention-free rounds (rp_sched_pack: no endpoint in two measurements at once). Pairs that
 * cannot be measured again stay UNCONFIRMED (never drained); a pair with an endpoint that has no
 * port (RP_ST_NO_PORT) is a fact about that endpoint, not a sample: CONFIRMED without a retest.
 *
 * Sampled retest. Contention-free rounds hold an endpoint in one pair at a time, so an endpoint that
 * failed with P peers costs P rounds: an adapter slow with each of its 1,023 peers, 1,023 rounds
 * (results/scale-time.md). An endpoint with more than MX_RETEST_SAMPLE_OVER distinct peers whose
 * pairs want their first retest is sampled instead:
 *   1. its pairs with MX_RETEST_SAMPLE of those peers, evenly spread in peer order, are measured
 *      again; its other pairs wait (as a pair of two endpoints does when it is in neither's sample);
 *   2. when every direction of the sample failed again (none passed, none left to measure again),
 *      the endpoint's failure held up: its waiting pairs are marked
 *      RP_CONFIRM_BY_ENDPOINT in the store (counted confirmed by the verdict, never measured again,
 *      the reports say which) without a round each;
 *   3. when a pair of the sample passed on its retest, or could not be measured again (interrupted, a
 *      rank gone), its waiting pairs are measured again one by one, as every pair was before.
 * Each endpoint is sampled once. The sample is its own evidence: which directions it holds is kept
 * from one set to the next (struct mx_retest_samples), and their results decide, not other retests
 * of the endpoint (the sweep's, an earlier set's) that measured another failure of it.
 */
#ifndef RP_MX_RETEST_H
#define RP_MX_RETEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "verdict/result_seq.h"
#include "base/result.h"
#include "verdict/verdict.h"
#include "matrix/mx_results.h"

/* One unordered pair to measure again. */
struct mx_retest_job {
	uint32_t a, b;                /* endpoint numbers, a < b */
	uint32_t dirs;                /* bit 0: a->b, bit 1: b->a */
	int qp_timeout;               /* ACK timeout both directions run with (rp_retest_cfg's, the larger) */
	uint32_t round;               /* extra round it runs in, 0-based */
	size_t res[2];                /* index in res[] of a->b and b->a; SIZE_MAX when not retested */
};

#define MX_RETEST_SAMPLE 8         /* peers of a sampled endpoint measured again */
#define MX_RETEST_SAMPLE_OVER 16   /* an endpoint is sampled past this many peers wanting a retest */

/* The samples taken (above), kept by the caller from one retest set's plan to the next: which
 * directions each sampled endpoint's sample holds, and what became of it. */
enum mx_sample_state { MX_SAMPLE_NONE = 0, MX_SAMPLE_TAKEN, MX_SAMPLE_HELD, MX_SAMPLE_FAILED };
struct mx_sample_dir {
	uint32_t ep;                  /* the sampled endpoint */
	size_t idx;                   /* a direction of its sample: its index in the results */
};
struct mx_retest_samples {
	size_t n_eps;
	uint8_t *state;               /* per endpoint: enum mx_sample_state */
	struct mx_sample_dir *dir;    /* every sample's directions, n of them (cap allocated) */
	size_t n, cap;
};
/* Empty, for n_eps endpoints. 0 or -ENOMEM. */
int mx_retest_samples_init(struct mx_retest_samples *sm, size_t n_eps);
void mx_retest_samples_fini(struct mx_retest_samples *sm);

/* Plan the next retest rounds over the pairs res (lib/verdict/result_seq.h) as judged by rp_verdict_apply (pair_eps[2i], [2i+1]:
 * src and dst endpoint of res[i]); unavailable[e] marks endpoints that cannot be measured (NULL:
 * none). sm: the samples taken by the sets before, updated (NULL: no sampling, every pair measured
 * again). *retest_p (malloc'd, caller frees; NULL when empty), *n_jobs_p pairs, *n_rounds_p rounds;
 * the pairs a held sample confirms are marked in res (above), *n_marked_p of them (NULL: not told;
 * set on an error too: marks stay). 0, -EINVAL (an endpoint out of range, sm for another number of
 * endpoints), -ENOMEM. */
int mx_retest_jobs(const struct rp_engine_cfg *base, const uint32_t *pair_eps, const struct rp_result_seq *res,
		      const bool *unavailable, size_t n_eps, unsigned max_retest, struct mx_retest_samples *sm,
		      struct mx_retest_job **retest_p, size_t *n_jobs_p, size_t *n_rounds_p, size_t *n_marked_p);

/* Fold a retest measurement into the kept (unjudged) result: the earlier attempt keeps the status
 * the verdict gave it (judged_status: a below-threshold first sample is a failed attempt), the
 * new one is appended (either recorded with its ACK timeout when the engine did not record it). */
void mx_retest_fold(struct rp_pair_result *kept, enum rp_status judged_status, int kept_qp_timeout,
		       struct rp_pair_result *again, int again_qp_timeout);

/* The final judgement of the pairs res, in place: rp_verdict_judge with cfg's retest set
 * to max_retest, which classifies every pair (rp_retest_classify: NO_PORT is CONFIRMED) before its
 * drain decisions, so they see how each failure held up. Arguments as rp_verdict_apply's; *v filled (call rp_verdict_fini). */
int mx_judge(const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps, size_t n_eps,
		const uint32_t *pair_eps, const struct rp_result_seq *res, unsigned max_retest, struct rp_verdict *v);

/* A judgement of a store kept for its next one. A verdict is a function of the configuration, the
 * endpoints and the results alone, and judging afresh is idempotent (verdict.h): while the store has
 * not changed since (its generation, mx_results.gen) and the same configuration and endpoints are
 * asked for, byte for byte, the kept verdict is that judgement. Rank 0 judges every result to plan the
 * retests and again for the reports; when the plan found nothing to measure again, the second is the
 * first (8 million results at 1,024 x 8: seconds, every rank waiting). A mismatch, or a store changed
 * by as much as a put, judges afresh: needless at worst, never stale. */
struct mx_judged {
	bool valid;
	uint64_t gen;                 /* the store's generation after it was judged */
	struct rp_verdict_cfg cfg;    /* as judged (its retest the max_retest asked for) */
	const struct rp_endpoint *eps;   /* as judged: the caller's, kept until the verdict is taken */
	size_t n_eps;
	struct rp_verdict v;
};

/* mx_judge of the whole store mr, in place, its verdict kept in *kept (what it held freed). 0 or as
 * mx_judge (nothing kept). */
int mx_judge_keep(struct mx_judged *kept, const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps,
		  size_t n_eps, struct mx_results *mr, unsigned max_retest);
/* mx_judge of the whole store mr into *v, or the verdict *kept holds (kept NULL: none) when it is the
 * same judgement (above): then it is handed over and *kept emptied, and *taken_p (NULL: not told) set.
 * 0 or as mx_judge. */
int mx_judge_results(struct mx_judged *kept, const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps,
		     size_t n_eps, struct mx_results *mr, unsigned max_retest, struct rp_verdict *v, bool *taken_p);
void mx_judged_fini(struct mx_judged *kept);

#endif
