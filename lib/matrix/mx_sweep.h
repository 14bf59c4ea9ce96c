/* mx_sweep.h: the matrix's reachability sweep (matrix --sweep W): reachability first, then bandwidth.
 *
 * Lock-step bandwidth rounds wait for their slowest pair, and a pair that cannot reach its peer is
 * the slowest there is (its deadlines, then the MTU probe). Before the bandwidth rounds, the sweep
 * probes every scheduled direction with a few small verified writes (mx_sweep_cfg), each direction
 * its own probe: sweep round k is planned rounds [k W, (k + 1) W), so an endpoint writes in at most
 * W probes and is the target of at most W at a time, and every unreachable pair of the whole run is
 * found in about ceil(rounds / W) probe deadlines, not one per round. Bandwidth is not judged from a
 * probe (they share the adapter); reachability is.
 *
 * With --retest, pass 1 only screens: its "no progress" window is at most
 * MX_SWEEP_SCREEN_TIMEOUT_S (not the full --timeout) and it runs no MTU probe; a screen failure is
 * never a result by itself. The directions that failed it are probed again (pass 2) with the full
 * --timeout, the MTU probe and NCCL's ACK timeout (lib/verdict/retest.h's rule), each endpoint again in at
 * most W as writer and W as target per round:
 *   - failed again: "dead": both attempts are the direction's result (confirmed, drained as any
 *     confirmed failure), and the bandwidth rounds leave it out;
 *   - passed, after a screen failure that a shorter window can cause (timed_out, peer_lost: a
 *     deadline of the screen's own, mx_sweep_inconclusive()): "cleared": the screen proved nothing,
 *     the direction is measured in the bandwidth rounds as if never screened (not flaky: a slow or
 *     busy healthy link must not be reported as having failed);
 *   - passed, after any other failure (retry_exceeded, a refused connection, ...: the window plays
 *     no part): "flaky": measured in the bandwidth rounds with NCCL's ACK timeout, that measurement
 *     folded into the sweep's result as its last attempt (never a plain pass: it ends flaky, or
 *     failed).
 * When --timeout is not above the screen's window, pass 1 runs at --timeout with the MTU probe and
 * every failure is conclusive (nothing is cleared). Without --retest pass 1 is not a screen (full
 * --timeout, MTU probe) and every failed direction is dead (unconfirmed). A screen failure that pass
 * 2 did not decide (its probe interrupted) is kept as it was observed: a first failure, left out,
 * that the retest rounds measure again (after a stop: unconfirmed). Each failed probe's
 * reason starts "reachability sweep: " ("reachability screen (N s): " for a screen's). Rank 0 decides
 * and sends the marks to every rank (two plans over the retest plan's message), so every rank builds
 * the same bandwidth jobs.
 *
 * With --hold (lib/matrix/mx_hold.h, mx_run_sweep_held) the order changes, not the decisions: sweep round k
 * of pass 1 (its probes' connections kept), rank 0 sends the directions that failed it (into every
 * rank's marks' failed bits), planned rounds [k W, (k + 1) W) measure what passed on those
 * connections and leave out what failed (mx_sweep_apply's left_failed); after the last, pass 2 over
 * every failed direction as above, and the directions it found flaky or cleared are measured in late
 * rounds (mx_sweep_late), as they would have been in their planned round. When sweep round k's
 * failures are shared and pass 2 has no round beside the rounds yet, its first round over what is
 * undecided then (mx_sweep_pack's round 0; but the directions of an endpoint that passed no probe
 * yet or is suspected: they wait for the dead-endpoint decision) starts beside the planned rounds
 * that follow (mx_round_start, slot MX_SLOT_BESIDE; a confirmation has its own) and is finished,
 * and decided as pass 2 decides, after the last of them (mx_run_beside_finish): a dead link found
 * early costs its --timeout beside the bandwidth rounds; pass 2 then probes what is left.
 *
 * Dead endpoints (with --retest; lib/matrix/mx_run_epdead.c). A dead adapter fails every direction it is
 * in, and judged direction by direction it costs a screen deadline in every first-pass round and a
 * full one in each of ceil(2 x peers / W) second-pass rounds: its peer count, not one deadline.
 * So after each first-pass round rank 0 looks for endpoints that passed no probe at all and whose
 * failed pairs include at least MX_EPDEAD_PEERS distinct peers that passed with others (what the
 * peers or random dead links explain is not evidence: a peer that passed nothing counts for
 * nothing, and one passing direction spares the endpoint). Each such suspect is confirmed in one
 * extra round: MX_EPDEAD_CONFIRM_PAIRS pairs with peers it has not been probed with yet (both
 * directions, as pass 2 probes: the full --timeout, NCCL's ACK timeout, the MTU probe), so a
 * healthy endpoint that only met dead links passes them, and one the screen's short window failed
 * (a starved host) gets pass 2's window before anything is decided; when no untried peer is left,
 * its failed pairs are probed again. Every confirmation probe failed: the endpoint is dead, and every scheduled
 * direction it is in becomes RP_ST_ENDPOINT_DEAD (its reason says what was and was not probed),
 * never probed or measured again; one passed: spared, judged direction by direction as before
 * (never suspected again); a probe whose peer's rank was lost (or a stop cut short) says nothing,
 * and with no other evidence the suspect is undecided, judged direction by direction. The confirmation runs beside the rounds that follow (mx_round_start):
 * every rank leaves the suspects out of every round (MX_EP_OUT) until it is finished, after the
 * first pass's last round; then the dead list goes to every rank (a plan), which leaves those
 * directions out of every later round, and what a spared suspect was left out of is measured: with
 * --hold in the late rounds (its marks' late bits), without it in its bandwidth rounds, which come
 * after both passes. One confirmation at a time: suspects found while one runs wait for it to
 * finish, then start theirs. A node whose every adapter is dead is so by the same rule,
 * adapter by adapter, in the same rounds (the reason says the node is dead).
 */
#ifndef RP_MX_SWEEP_H
#define RP_MX_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "base/result_pack.h"
#include "job/mx_wire.h"
#include "job/mx_schedule.h"

#define MX_SWEEP_ITERS 8          /* writes per probe */
#define MX_SWEEP_MSG_MAX 4096     /* bytes per probe write, at most (the run's -s when smaller) */
#define MX_SWEEP_SCREEN_TIMEOUT_S 3.0 /* pass 1's "no progress" window when it screens (--retest) */

/* A pair the sweep found failing in at least one direction (bit 0: a->b, bit 1: b->a). */
struct mx_sweep_mark {
	uint32_t a, b;                /* a < b */
	uint32_t failed;              /* failed the first probe */
	uint32_t dead;                /* left out of the bandwidth rounds */
	uint32_t flaky;               /* failed the first probe, passed the second: NCCL's ACK timeout */
	uint32_t cleared;             /* failed the screen inconclusively, passed the second probe */
	size_t res[2];                /* rank 0: the direction's index in the results; SIZE_MAX none */
	size_t first[2];              /* rank 0, while screening: the failed screen's index in
	                               * mx_sweep.pending; SIZE_MAX none */
	uint32_t epdead;              /* rank 0: left out because an endpoint of it is dead (in dead too) */
	uint32_t late;                /* rank 0: left out of its bandwidth round while an end of it was
	                               * being confirmed, then spared: measured in the late rounds */
};

#define MX_EPDEAD_PEERS 4         /* distinct failed peers (that passed with others) for a suspect */
#define MX_EPDEAD_CONFIRM_PAIRS 2 /* pairs probed (both directions) to confirm a suspect */

/* mx_sweep.ep[] bits */
enum {
	MX_EP_PASSED = 1,             /* rank 0: a first probe of it passed */
	MX_EP_DEAD = 2,               /* every rank: decided dead */
	MX_EP_SPARED = 4,             /* rank 0: a confirmation passed: never suspected again */
	MX_EP_SUSPECT = 8,            /* rank 0, during a confirmation */
	MX_EP_NEW = 16,               /* rank 0, while a decision is recorded */
	MX_EP_OUT = 32,               /* every rank: a suspect whose confirmation runs beside the rounds,
	                               * left out of every round until it is decided */
};

struct mx_sweep {
	unsigned width;               /* 0: no sweep */
	struct mx_sweep_mark *marks;  /* sorted by (a, b) */
	size_t n, cap;
	size_t *by_a;                 /* as mx_sweep_sort left them: marks [by_a[a], by_a[a + 1]) have
	                               * that a (a < by_a_len - 1); valid while by_a_n == n */
	size_t by_a_len, by_a_n;
	size_t rounds;                /* sweep rounds run, both passes */
	double elapsed_s;             /* rank 0: the time of those rounds, each from its start to its go
	                               * (with --hold, not the planned rounds run between them) */
	size_t n_dead, n_flaky;       /* directions */
	size_t n_cleared;             /* directions whose screen failure pass 2 cleared */
	double screen_s;              /* pass 1's window when it screened; 0: it did not */
	struct mx_sweep_pending *pending; /* rank 0: the failed screens, until pass 2 decides */
	size_t n_pending, cap_pending;
	/* dead endpoints (with --retest; NULL ep: not looked for) */
	uint8_t *ep;                  /* per endpoint, MX_EP_* bits */
	uint32_t *ep_failed;          /* rank 0, per endpoint: its pairs that failed a first probe */
	size_t n_eps;
	size_t n_ep_dead;             /* endpoints decided dead */
	size_t n_ep_out;              /* endpoints MX_EP_OUT now */
	size_t n_ep_dirs;             /* rank 0: directions recorded RP_ST_ENDPOINT_DEAD */
	size_t n_confirm;             /* confirmation rounds run */
};

/* A failed screen (rank 0), until pass 2 decides what it was. The failure itself is the direction's
 * result from its round on (mx_sweep_mark.res); this keeps only what pass 2 asks of it, its status:
 * with --hold the screens of the whole run wait through the bandwidth rounds beside the growing
 * results, and a copy of each (a few hundred bytes packed) doubled what a fabric's failures cost
 * rank 0 until then. */
struct mx_sweep_pending {
	uint32_t a, b;                /* the pair (a < b); the direction is d */
	uint8_t d;
	uint8_t status;               /* the screen's (enum rp_status) */
	bool used;                    /* pass 2 decided it */
};

/* --sweep's default width. An endpoint holds at most 2 W probes at once (W as writer, W as target:
 * QPs, buffers and, in the engine, a thread each), and its peers are probed in ceil(peers / W)
 * deadlines: 1,023 peers (rail over 1,024 nodes) in 16. */
#define MX_SWEEP_AUTO_WIDTH 64
#define MX_SWEEP_MAX_WIDTH 4096

/* --sweep's text: "auto" (the default: MX_SWEEP_AUTO_WIDTH, *auto_p true), "off" or "0" (no sweep),
 * or a width in [1, MX_SWEEP_MAX_WIDTH]. 0, or -EINVAL with *width_p untouched. */
int mx_sweep_parse(const char *s, unsigned *width_p, bool *auto_p);

/* Sweep rounds of the first pass over sched with width W (>= 1). */
size_t mx_sweep_n_rounds(const struct rp_sched *sched, unsigned width);
/* The jobs of first-pass round k: the pairs of planned rounds [k W, (k + 1) W), one job per
 * direction (dirs 1, then 2). scratch holds rp_sched_max_round_pairs() pairs; jobs has room for cap.
 * 0, -EINVAL (k out of range), -ENOBUFS (cap too small). */
int mx_sweep_round_jobs(const struct rp_sched *sched, unsigned width, size_t k, struct rp_sched_pair *scratch,
			struct mx_job *jobs, size_t cap, size_t *n_p);
/* The probe's configuration: cfg measuring MX_SWEEP_ITERS verified writes of at most
 * MX_SWEEP_MSG_MAX bytes, no warm-up, no duration, no latency, no bidir. screen: pass 1 with
 * --retest: timeout_s at most MX_SWEEP_SCREEN_TIMEOUT_S, and no MTU probe when that shortened it.
 * Returns the screen's window when it is shorter than cfg's timeout_s (its failures can be
 * inconclusive), else 0. */
double mx_sweep_cfg(const struct rp_engine_cfg *cfg, bool screen, struct rp_engine_cfg *out);
/* A small write's configuration (mx_job.small), in place: one verified write of
 * RP_ENGINE_MTUCHECK_SMALL bytes, one QP, no warm-up, no duration, no MTU probe of its own (it is the
 * small half of one), at cfg's deadline and ACK timeout. */
void mx_small_write_cfg(struct rp_engine_cfg *cfg);
/* A screen failure with this status may be the screen's own short window: timed_out, peer_lost. */
bool mx_sweep_inconclusive(enum rp_status st);
/* Pack the marked pairs' failed directions (but those pass 1 already found dead: a failure no
 * second probe changes, rp_retest_wanted, or an endpoint dead; and those a confirmation already
 * decided flaky or cleared) into second-pass rounds, one job per direction, each
 * endpoint the writer of at most width and the target of at most width per round: jobs (room for
 * 2 x s->n), round_of[i] its round, *n_jobs the jobs made; count_scratch holds 2 x n_eps. Returns
 * the rounds used. */
size_t mx_sweep_pack(const struct mx_sweep *s, unsigned width, size_t n_eps, struct mx_job *jobs, uint32_t *round_of,
		     size_t *n_jobs, unsigned *count_scratch);

/* The mark of (a, b), a < b, added (zeroed, res SIZE_MAX) when absent. NULL: out of memory. Marks
 * must be added in any order; call mx_sweep_sort() before mx_sweep_find(). */
struct mx_sweep_mark *mx_sweep_mark(struct mx_sweep *s, uint32_t a, uint32_t b);
void mx_sweep_sort(struct mx_sweep *s);
const struct mx_sweep_mark *mx_sweep_find(const struct mx_sweep *s, uint32_t a, uint32_t b);
/* A planned round's jobs as the sweep leaves them: dead directions and those of dead endpoints cleared (with left_failed, every
 * direction that failed its first probe: a held sweep's batch, before pass 2 decides), jobs left
 * with none dropped (pairs[] kept parallel), a job with a flaky direction at NCCL's ACK timeout.
 * Returns the number of jobs left. */
size_t mx_sweep_apply(const struct mx_sweep *s, struct mx_job *jobs, struct rp_sched_pair *pairs, size_t n,
		      bool left_failed);
/* The late rounds of a held sweep (mx_run.h): the directions that failed their first probe and are
 * not dead (flaky, cleared), and those a spared suspect was left out of (late), one job per pair, packed so that an endpoint is in at most one job a
 * round, each job in the first round where both its endpoints are free (past 64 rounds: after both
 * ends' last): jobs (room for s->n), round_of[i] its round, *n_jobs; scratch holds 2 x n_eps. A job
 * with a flaky direction runs at NCCL's ACK timeout. Returns the rounds used. */
size_t mx_sweep_late(const struct mx_sweep *s, size_t n_eps, struct mx_job *jobs, uint32_t *round_of,
		     size_t *n_jobs, uint64_t *scratch);
/* Look for dead endpoints among n_eps (mx_run_init does, with --retest). 0 or -ENOMEM. */
int mx_sweep_ep_init(struct mx_sweep *s, size_t n_eps);
/* Is endpoint e decided dead (false when not looked for)? */
bool mx_sweep_ep_dead(const struct mx_sweep *s, uint32_t e);
/* Is endpoint e left out of the rounds: dead, or a suspect being confirmed (MX_EP_OUT)? */
bool mx_sweep_ep_out(const struct mx_sweep *s, uint32_t e);
/* jobs[0..n) less those with an end left out (mx_sweep_ep_out); the number left. */
size_t mx_sweep_drop_dead(const struct mx_sweep *s, struct mx_job *jobs, size_t n);
void mx_sweep_fini(struct mx_sweep *s);

#endif
