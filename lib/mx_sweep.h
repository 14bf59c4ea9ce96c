/* mx_sweep.h: the matrix's reachability sweep (matrix --sweep W): reachability first, then bandwidth.
 *
 * Lock-step bandwidth rounds wait for their slowest pair, and a pair that cannot reach its peer is
 * the slowest there is (its deadlines, then the MTU probe). Before the bandwidth rounds, the sweep
 * probes every scheduled pair with a few small verified writes (mx_sweep_cfg), up to W of an
 * endpoint's pairs at once: sweep round k is planned rounds [k W, (k + 1) W), so an endpoint is in at
 * most W probes at a time and every unreachable pair of the whole run is found in about
 * ceil(rounds / W) probe deadlines, not one per round. Bandwidth is not judged from a probe (they
 * share the adapter); reachability is.
 *
 * Then, with --retest, the directions that failed are probed again the same way with NCCL's ACK
 * timeout (lib/retest.h's rule), up to W per endpoint at once:
 *   - failed again: "dead": the sweep's result, with both attempts, is the direction's result
 *     (confirmed, drained as any confirmed failure), and the bandwidth rounds leave it out;
 *   - passed: "flaky": measured in the bandwidth rounds with NCCL's ACK timeout, that measurement
 *     folded into the sweep's result as its last attempt (so a pair that failed once is never a
 *     plain pass: it ends flaky, or failed).
 * Without --retest every failed direction is dead (unconfirmed). Each failed probe's reason starts
 * "reachability sweep: ". Rank 0 decides and sends the marks to every rank (two plans over the
 * retest plan's message), so every rank builds the same bandwidth jobs.
 */
#ifndef RP_MX_SWEEP_H
#define RP_MX_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "mx_wire.h"
#include "schedule.h"

#define MX_SWEEP_ITERS 8          /* writes per probe */
#define MX_SWEEP_MSG_MAX 4096     /* bytes per probe write, at most (the run's -s when smaller) */

/* A pair the sweep found failing in at least one direction (bit 0: a->b, bit 1: b->a). */
struct mx_sweep_mark {
	uint32_t a, b;                /* a < b */
	uint32_t failed;              /* failed the first probe */
	uint32_t dead;                /* left out of the bandwidth rounds */
	uint32_t flaky;               /* failed the first probe, passed the second: NCCL's ACK timeout */
	size_t res[2];                /* rank 0: the direction's index in the results; SIZE_MAX none */
};

struct mx_sweep {
	unsigned width;               /* 0: no sweep */
	struct mx_sweep_mark *marks;  /* sorted by (a, b) */
	size_t n, cap;
	size_t rounds;                /* sweep rounds run, both passes */
	size_t n_dead, n_flaky;       /* directions */
};

/* Sweep rounds of the first pass over sched with width W (>= 1). */
size_t mx_sweep_n_rounds(const struct rp_sched *sched, unsigned width);
/* The jobs of first-pass round k: the pairs of planned rounds [k W, (k + 1) W), both directions.
 * scratch holds rp_sched_max_round_pairs() pairs; jobs has room for cap. 0, -EINVAL (k out of
 * range), -ENOBUFS (cap too small). */
int mx_sweep_round_jobs(const struct rp_sched *sched, unsigned width, size_t k, struct rp_sched_pair *scratch,
			struct mx_job *jobs, size_t cap, size_t *n_p);
/* The probe's configuration: cfg measuring MX_SWEEP_ITERS verified writes of at most
 * MX_SWEEP_MSG_MAX bytes, no warm-up, no duration, no latency, no bidir. */
void mx_sweep_cfg(const struct rp_engine_cfg *cfg, struct rp_engine_cfg *out);
/* Pack the marked pairs' failed directions into second-pass rounds, at most width probes per
 * endpoint per round: jobs (n_marks entries), round_of[i] its round. Returns the rounds used. */
size_t mx_sweep_pack(const struct mx_sweep *s, unsigned width, size_t n_eps, struct mx_job *jobs, uint32_t *round_of,
		     unsigned *count_scratch);

/* The mark of (a, b), a < b, added (zeroed, res SIZE_MAX) when absent. NULL: out of memory. Marks
 * must be added in any order; call mx_sweep_sort() before mx_sweep_find(). */
struct mx_sweep_mark *mx_sweep_mark(struct mx_sweep *s, uint32_t a, uint32_t b);
void mx_sweep_sort(struct mx_sweep *s);
const struct mx_sweep_mark *mx_sweep_find(const struct mx_sweep *s, uint32_t a, uint32_t b);
/* A planned round's jobs as the sweep leaves them: dead directions cleared, jobs left with none
 * dropped (pairs[] kept parallel), a job with a flaky direction at NCCL's ACK timeout. Returns the
 * number of jobs left. */
size_t mx_sweep_apply(const struct mx_sweep *s, struct mx_job *jobs, struct rp_sched_pair *pairs, size_t n);
void mx_sweep_fini(struct mx_sweep *s);

#endif
