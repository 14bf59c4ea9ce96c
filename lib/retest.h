/* retest.h: one sample is not a verdict. Every pair that failed, or fell below the verdict's
 * threshold or outlier rule, is measured again before the verdict (--retest N, default 1), and how it
 * held up is recorded on the pair (rp_pair_result.confirm, .attempts[]).
 *
 * The sequence every front end follows (loopback and pair right away, the matrix in extra
 * contention-free rounds at the end):
 *   1. measure; rp_engine_pair_run() / rp_engine_loopback_run() record the attempt themselves
 *      (rp_pair_result_record_attempt with the qp_timeout used)
 *   2. rp_verdict_apply() marks threshold failures (BELOW_THRESHOLD)
 *   3. for every pair with rp_retest_wanted(): measure again with rp_retest_cfg()'s configuration
 *      and fold the new measurement in with rp_retest_merge()
 *   4. rp_verdict_apply() again, then rp_retest_classify() on every pair
 * A pair that could not be measured again (interrupted, a rank gone) is UNCONFIRMED: reported, never
 * drained.
 */
#ifndef RP_RETEST_H
#define RP_RETEST_H

#include <stdbool.h>

#include "engine.h"
#include "result.h"

#define RP_RETEST_DEFAULT 1
#define RP_RETEST_MAX (RP_MAX_ATTEMPTS - 1)
/* NCCL's default ACK timeout exponent (NCCL_IB_TIMEOUT): a failure under the probe's shorter
 * timeout is retested with this one before it is condemned. */
#define RP_RETEST_NCCL_QP_TIMEOUT 20

/* True when r did not pass (any status but OK) and fewer than max_retest retests were done. */
bool rp_retest_wanted(const struct rp_pair_result *r, unsigned max_retest);

/* The configuration of r's next attempt: base, with the ACK timeout raised to NCCL's when the
 * failure may come from the probe's short timeout (transport errors, time-outs) and base's is
 * shorter. */
void rp_retest_cfg(const struct rp_engine_cfg *base, const struct rp_pair_result *r,
		   struct rp_engine_cfg *next_p);

/* Fold a new measurement of the same pair into r: r's measurement becomes again's, r's attempt
 * history gains again's attempts. */
void rp_retest_merge(struct rp_pair_result *r, const struct rp_pair_result *again);

/* After the final verdict: FLAKY (warning bit set) when an earlier attempt failed and the last one
 * passed; CONFIRMED when every attempt failed and at least one retest was done, or max_retest is 0;
 * UNCONFIRMED when it failed once and was never measured again although max_retest > 0. */
void rp_retest_classify(struct rp_pair_result *r, unsigned max_retest);

#endif
