/* pairset_sweep.h: the reachability sweep of one node's directions (loopback; issue 29).
 *
 * One pair at a time, a node with a dead adapter out of 8 waits a deadline for each of its 14
 * directions, and again for each retest: minutes in series. So before any bandwidth run, every
 * direction is probed at once, one thread a direction (ports shared: a probe is MX_SWEEP_ITERS
 * verified writes of at most 4 KiB), as the matrix's sweep screens (lib/matrix/mx_sweep.h: a window
 * of at most 3 s, no MTU probe, when --timeout is longer), with at most RP_PAIRSET_SCREEN_RETRY_MAX
 * transport retries; the directions that failed are probed again, all at once, as its second pass
 * (the full --timeout, NCCL's ACK timeout, the run's retry count, and the MTU probe beside the probe,
 * cfg.mtucheck_beside: a dead direction costs the one --timeout, engine.h). Then:
 *   - failed again: RP_REACH_DEAD: both attempts are the direction's result (the reason starts
 *     "reachability sweep: "), no bandwidth run: a dead adapter costs one screen and one
 *     confirmation, whatever the node's size;
 *   - passed after a failure the screen's short window can cause (timed_out, peer_lost): RP_REACH_OK,
 *     measured as if never screened;
 *   - passed after any other failure: RP_REACH_FLAKY: measured at NCCL's ACK timeout, its screen's
 *     failure the first attempt (never a plain pass);
 *   - a probe a stop cut short: RP_REACH_OK (measured, or interrupted, as without the sweep).
 * Without --retest (one sample decides) the one pass is not a screen: every direction at once with
 * the full --timeout and the MTU probe beside it (its own ACK timeout), and a failure is
 * RP_REACH_DEAD with that one attempt (unconfirmed), as the matrix's sweep without --retest
 * (mx_sweep.h).
 * Policy only: the probes run through `run` (rp_engine_loopback_run, or a test's stand-in).
 */
#ifndef RP_PAIRSET_SWEEP_H
#define RP_PAIRSET_SWEEP_H

#include <stddef.h>

#include "engine/engine_concurrent.h"

/* A screen's transport retries at most (the run's --retry-cnt otherwise, NCCL's 7 by default): a dead
 * path's screen ends when its QP gives up, after retries + 1 ACK timeouts (7 x 67 ms at the probe's
 * ACK timeout 14), on every provider. rxe reads a retry count of 7 as "for ever" (as the spec reads
 * an RNR retry count of 7), so at 7 its screen waited out the whole window instead. A screen's QP is
 * not kept for the bandwidth run (the loopback holds no connection), so the run's own retry count
 * is untouched; the second pass probes with it. */
#define RP_PAIRSET_SCREEN_RETRY_MAX 6

enum rp_reach { RP_REACH_OK = 0, RP_REACH_DEAD, RP_REACH_FLAKY };

typedef int (*rp_reach_run_fn)(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			       const struct rp_engine_port *dst, unsigned pass, struct rp_pair_result *res);

/* Probe jobs[0..n) (each direction's bandwidth settings, src -> dst), retest the run's --retest (0:
 * one pass at the full settings, above). reach[i] what it found; res[i] for DEAD the direction's
 * result, for FLAKY its screen's failure (fold the measurement into it: rp_retest_merge), untouched
 * for OK. *rounds_p: probe rounds run (1 or 2). 0, or -ENOMEM (nothing decided: every reach[i] OK). */
int rp_pairset_reach(const struct rp_concurrent_job *jobs, size_t n, unsigned retest, rp_reach_run_fn run,
		     enum rp_reach *reach, struct rp_pair_result *res, unsigned *rounds_p);

#endif
