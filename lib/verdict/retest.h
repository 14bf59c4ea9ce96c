/* retest.h: one sample is not a verdict. Every pair that failed, or fell below the verdict's
 * threshold or outlier rule, is measured again before the verdict (--retest N, default 1), and how it
 * held up is recorded on the pair (rp_pair_result.confirm, .attempts[]).
 *
 * The sequence every front end follows (loopback and pair right away, the matrix in extra
 * contention-free rounds at the end):
 *   1. measure; rp_engine_pair_run() / rp_engine_loopback_run() record the attempt themselves
 *      (rp_pair_result_record_attempt with the qp_timeout used; a front end records it when the
 *      engine did not, n_attempts == 0)
 *   2. rp_verdict_apply() with cfg.retest = N marks threshold failures (BELOW_THRESHOLD) and
 *      classifies every pair (rp_retest_classify): a failure not yet measured again is UNCONFIRMED
 *   3. for every pair with rp_retest_wanted(): measure again with rp_retest_cfg()'s configuration
 *      and fold the new measurement in with rp_retest_merge() (not when the new measurement was
 *      interrupted: the pair then stays UNCONFIRMED); repeat 2-3 until no pair is wanted. Every pair
 *      is measured again at most N times, so the sets end; the later ones are for pairs that fell
 *      below the outlier rule only once earlier retests had moved their row's or column's median
 *      (a retested pair's new rate raises them, and a pair in line before falls below half)
 *   4. rp_verdict_apply() again: the thresholds and the outlier rule judge the new measurement
 *      (an outlier seen under CPU contention is cleared when its retest is in line), then every pair
 *      is FLAKY (passed on a retest: a warning, not a failure), CONFIRMED (failed every attempt) or
 *      UNCONFIRMED; only CONFIRMED failures are ever drained.
 * A pair that could not be measured again (interrupted, a rank gone) is UNCONFIRMED: reported, never
 * drained.
 *
 * Which ACK timeout decided: a pair that failed in a way the probe's short ACK timeout
 * (--qp-timeout 14, ~67 ms) can cause on a healthy but busy link (retry exceeded, timed out, peer
 * lost, flushed, a remote invalid request: see retest.c) is retested with NCCL's
 * (RP_RETEST_NCCL_QP_TIMEOUT, ~4.3 s); every attempt records
 * the exponent it ran with, and rp_retest_describe() names the one of the deciding attempt. A pair
 * below the threshold keeps the probe's timeout: on a lossy link a longer ACK timeout only makes
 * each retransmission slower, it does not decide whether the link is healthy.
 */
#ifndef RP_RETEST_H
#define RP_RETEST_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/engine.h"
#include "base/result.h"

#define RP_RETEST_DEFAULT 1
#define RP_RETEST_MAX (RP_MAX_ATTEMPTS - 1)
/* NCCL's default ACK timeout exponent (NCCL_IB_TIMEOUT): a failure under the probe's shorter
 * timeout is retested with this one before it is condemned. */
#define RP_RETEST_NCCL_QP_TIMEOUT 20

/* True when r did not pass (any status but OK or INTERRUPTED), fewer than max_retest retests were
 * done, and its endpoint's sample did not confirm it (RP_CONFIRM_BY_ENDPOINT). */
bool rp_retest_wanted(const struct rp_pair_result *r, unsigned max_retest);
/* Whether a pair of status st can be wanted at all (rp_retest_wanted's test of the status alone: OK,
 * INTERRUPTED, NO_PORT and ENDPOINT_DEAD never are), for a pass that peeks before it builds a pair. */
bool rp_retest_status_wanted(enum rp_status st);

/* The configuration of r's next attempt: base, with the ACK timeout raised to NCCL's when the
 * failure may come from the probe's short timeout (transport errors, time-outs) and base's is
 * shorter. */
void rp_retest_cfg(const struct rp_engine_cfg *base, const struct rp_pair_result *r,
		   struct rp_engine_cfg *next_p);

/* Fold a new measurement of the same pair into r: r's last attempt keeps the verdict r had (a
 * BELOW_THRESHOLD is a failed attempt although the engine measured it ok), r's measurement becomes
 * again's (except an endpoint again does not name: a retest that failed before the peer sent its
 * endpoint keeps the earlier attempt's), r's attempt history gains again's attempts. A measurement without a recorded attempt
 * (n_attempts 0) is recorded first, with qp_timeout -1 (unknown). */
void rp_retest_merge(struct rp_pair_result *r, const struct rp_pair_result *again);

/* After the final verdict: FLAKY (warning bit set) when an earlier attempt failed and the last one
 * passed; CONFIRMED when every attempt failed and at least one retest was done, or max_retest is 0;
 * BY_ENDPOINT kept when it failed once and its endpoint's sample confirmed it (the retest planner's
 * mark: lib/matrix/mx_retest.h); else UNCONFIRMED when it failed once and was never measured again
 * although max_retest > 0. The last
 * attempt takes r's status and reason (the verdict's judgement). rp_verdict_apply() calls it on every
 * pair; calling it again with the same max_retest changes nothing. */
void rp_retest_classify(struct rp_pair_result *r, unsigned max_retest);

/* One line on how r held up, for a person: "confirmed: failed 2 of 2 attempts (retry_exceeded with
 * --qp-timeout 14; retry_exceeded with --qp-timeout 20, NCCL's: decided it)", "flaky: ...", "" when
 * r passed the first time. Returns buf. */
const char *rp_retest_describe(const struct rp_pair_result *r, char *buf, size_t len);

#endif
