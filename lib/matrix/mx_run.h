/* mx_run.h: the matrix's rounds from first to last, on every rank: the planned rounds of the
 * schedule, then up to `set.retest` sets of extra rounds over the pairs that failed or were judged slow
 * (planned by rank 0: lib/matrix/mx_retest.h, and sent to the others).
 *
 * With a sweep (mx_sweep.h) its two passes come first; with --hold (mx_hold.h) its first pass and
 * the planned rounds interleave, and late rounds follow the second pass (mx_run_sweep_held).
 *
 * Rank 0 keeps every result (mx_results) and calls hooks.round_done after each round, with the
 * round's results folded in. A planned round (without concurrent_rails) is kept while the next one
 * runs: rank 0 releases the ranks into round k + 1 as soon as round k's reports are in (mx_round_go),
 * then, once its own sides of round k + 1 are started (mx_ctx.between), keeps round k and calls the
 * hook; the last round of a batch (mx_run_scheduled) is kept before anything else runs. Every other
 * round (sweep, confirmation, late, retest, concurrent) is kept and hooked before its go. So the front
 * end writes its files from the hook while the fabric measures, a rank never waits on rank 0's
 * keeping or writing of a planned round, and the files on disk hold every round but at most the
 * one before the round in progress (a stop writes them again with everything: mx_ctx.flush runs
 * after the keeping).
 *
 * set.concurrent_rails (matrix --concurrent-rails, the rail pattern only: lib/matrix/mx_conc.h): each planned
 * round r becomes one solo round per rail (rail g's pairs of round r alone), then round r whole (all
 * rails at once); the solo results are mr's, the concurrent ones conc's, each naming its solo
 * result. Without it, a rail round already runs every rail's pairs at once (one thread a job), with
 * no solo figure beside them.
 */
#ifndef RP_MX_RUN_H
#define RP_MX_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "matrix/mx_conc.h"
#include "matrix/mx_results.h"
#include "matrix/mx_retest.h"
#include "matrix/mx_round.h"
#include "matrix/mx_sweep.h"
#include "job/mx_schedule.h"
#include "job/mx_settings.h"
#include "verdict/verdict.h"

struct mx_run_hooks {
	/* Rank 0, after round k of n_rounds (retest: of the current retest set). May be NULL. */
	void (*round_done)(void *arg, bool retest, size_t k, size_t n_rounds);
	/* Rank 0: n pairs are measured again in n_rounds extra rounds. May be NULL. */
	void (*retest_scheduled)(void *arg, size_t n, size_t n_rounds);
	/* Rank 0, after sweep round k of n_rounds of pass 1 or 2 (mx_sweep.h), touched set. May be NULL. */
	void (*sweep_done)(void *arg, int pass, size_t k, size_t n_rounds);
	/* Rank 0, around the verdict that plans a set of retests (start: before it; then after the
	 * plan): every rank waits meanwhile. May be NULL. */
	void (*judging)(void *arg, bool start);
	/* Rank 0: a dead-endpoint confirmation's sides started beside the rounds that follow
	 * (mx_run_epdead); its sweep_done (pass 3) comes when it is finished. May be NULL. */
	void (*confirm_started)(void *arg);
	/* Rank 0: pass 2's first round's sides started beside the rounds that follow
	 * (mx_run_sweep_held); its sweep_done (pass 4) comes when it is finished. May be NULL. */
	void (*beside_started)(void *arg);
	void *arg;
};

struct mx_run {
	/* the caller's: */
	struct mx_ctx ctx;            /* comm, cfg, eps, n_eps, rank, n_ranks, dead, budget, flush, measure */
	const struct rp_sched *sched;
	const struct rp_verdict_cfg *vcfg;   /* rank 0: the verdict that picks what to retest */
	const struct rp_endpoint *rep_eps;   /* the endpoints as the verdict sees them (n_eps) */
	struct mx_settings set;       /* the run's settings, whole (lib/job/mx_settings.h): set.retest sets of
	                               * extra rounds at most; set.concurrent_rails solo rounds per rail, then
	                               * each round whole; set.sweep the sweep's width (0: none); set.hold (with
	                               * a sweep; not with concurrent_rails, and only when mx_hold_allowed()):
	                               * the sweep's connections held for the bandwidth rounds (mx_hold.h), the
	                               * sweep's rounds and the planned ones interleaved, then the late rounds
	                               * (mx_run_sweep_held). What a direction measures is ctx.cfg's. */
	struct mx_sweep sweep;        /* the sweep's marks (width: set.sweep, from mx_run_init) */
	struct mx_run_hooks hooks;
	/* the run's (rank 0's results; read them in the hooks and after): */
	struct mx_results mr;
	size_t failed;                /* rank 0: results not ok so far */
	struct mx_conc conc;          /* rank 0: concurrent_rails's concurrent results */
	size_t n_scheduled;             /* planned rounds (concurrent_rails: solo and concurrent rounds) */
	size_t rounds_done;           /* planned rounds finished: run, and no stop left a direction of them
	                               * unmeasured (a round a stop cut short ran but is not done) */
	size_t scheduled_run;           /* planned rounds run, cut short or not (the hook's k) */
	size_t retest_rounds;         /* extra rounds finished */
	size_t retest_by_endpoint;    /* rank 0: failed directions its endpoint's sample confirmed, not measured
	                               * again themselves (mx_retest.h, "Sampled retest") */
	struct mx_retest_samples samples;  /* rank 0: the samples taken, from one retest set to the next */
	struct mx_judged judged;      /* rank 0: the last retest plan's verdict, kept for the final one
	                               * (mx_judge_results: taken when no result changed since) */
	double retest_plan_s;         /* rank 0: real seconds spent planning the retest sets (the verdict over
	                               * every kept result, then the jobs sent), every other rank waiting */
	size_t next_round;            /* the run-wide number of the next round */
	struct mx_holds holds;        /* this rank's held connections; holds.made/reused/fresh its counts */
	void *epdead;                 /* every rank, while a dead-endpoint confirmation runs: it (its
	                               * jobs, its started sides, rank 0's suspects) */
	void *beside;                 /* every rank, while pass 2's first round runs beside the rounds
	                               * (mx_run_sweep_held): its jobs and started sides */
	struct mx_started *started;   /* the started sides, while their pass-3 or pass-4 round finishes them */
	size_t n_late, late_run;      /* late rounds planned, run (mx_run_sweep_held) */
	bool in_late;                 /* rank 0, in round_done: the round is a late one (k of n_late) */
	/* rank 0, in round_done/sweep_done: the round that just ended, every job and both directions' raw
	 * results (round_got's slot 2 * i + d, lib/matrix/mx_got.h; a direction the job did not ask for is empty) */
	const struct mx_job *round_jobs;
	const struct mx_got *round_got;
	size_t round_n;
	size_t *touched;              /* rank 0, in round_done/sweep_done: the indexes into mr of the */
	size_t n_touched;             /* results the round added or changed; none for concurrent rounds */
	size_t touched_cap;
	/* rank 0: a planned round released before it was kept (above): its jobs, pairs and results,
	 * kept in the next round's ctx.between or at the end of mx_run_scheduled */
	bool pending;
	struct mx_job *pend_jobs;
	struct rp_sched_pair *pend_pairs;
	struct mx_got pend_got;
	size_t pend_n, pend_round;
	double pend_collect_s;        /* its collection: from its sides' end to its go (real seconds); the
	                               * hook of a round kept after its go (hook_deferred) reads it there */
	int keep_rc;                  /* a keeping's error (-ENOMEM), returned by the next round */
	/* rank 0, in round_done/sweep_done: */
	size_t hook_round;            /* the run-wide number of the round the hook (round_done, sweep_done) is given */
	bool hook_deferred;           /* that round was kept after its go (above: pend_collect_s its
	                               * collection before the go) */
	/* rank 0: the last round kept after its go, for a clock that prices it (lib/sim) */
	double keep_s;                /* its keeping's real seconds, the hook's taken out */
	bool keep_overlapped;         /* kept while the next round's sides ran (not at a batch's end) */
	unsigned keep_seq;            /* + 1 for every such keeping */
	/* scratch */
	struct mx_job *jobs;
	struct mx_got got;            /* a planned or retest round's results */
	uint8_t *ep_table;            /* rank 0, per endpoint: 0 not known yet, 1 the results keep it as
	                               * the table's but for what an engine learns, 2 not so */
	struct rp_sched_pair *pairs;
	int64_t *kept;                /* per direction of a round's jobs: its index in mr, -1 not kept */
	int64_t *solo;                /* concurrent_rails: per direction of round r's pairs, its solo result */
	struct rp_sched_pair *spairs; /* sweep: a planned round's pairs that are left */
};

/* Allocate what the rounds need (after ctx and sched are set; sets ctx.max_pairs, n_scheduled, and
 * ctx.hold_go on rank 0). 0, -EINVAL (concurrent_rails with a pattern that has no groups; not
 * logged: the front end refuses it first) or -ENOMEM. */
int mx_run_init(struct mx_run *R);
/* Every round. MX_GO_ON all ran, MX_STOPPED (a signal: R->ctx.stop_sig), or mx_round's negative errno. */
int mx_run_rounds(struct mx_run *R);
/* The sweep's two passes (mx_run_sweep.c), before the planned rounds: MX_GO_ON, MX_STOPPED, negative errno. */
int mx_run_sweep(struct mx_run *R);
/* With hold: for each sweep round k of pass 1 (its probes' connections held), planned rounds
 * [k W, (k + 1) W) next, measuring on them what passed its probe (what failed it waits: left out),
 * then what is still held released; then pass 2 over every failed direction as mx_run_sweep's, and
 * the late rounds: what pass 2 found flaky (at NCCL's ACK timeout, folded into its sweep result) or
 * cleared, each endpoint in one measurement at a time. MX_GO_ON, MX_STOPPED, negative errno. */
int mx_run_sweep_held(struct mx_run *R);
/* One sweep round over jobs[0..n) on every rank (mx_run_sweep.c): pass 1 (rank 0 keeps its
 * failures), 2 (folds the second probes), 3 (a dead-endpoint confirmation, started before
 * (R->started) and finished now: rank 0 decides from got, mx_run_epdead_keep), 4 (pass 2's round
 * started beside the rounds, R->started, finished now: folded as pass 2's); the sweep_done hook,
 * then the go. MX_GO_ON, MX_STOPPED, negative errno. */
int mx_run_sweep_round(struct mx_run *R, const struct mx_job *jobs, size_t n, struct mx_got *got, int pass,
		       size_t k, size_t n_rounds, const struct rp_engine_cfg *probe);
/* After first-pass sweep round k of n_rounds, on every rank: rank 0 picks the suspects (mx_sweep.h,
 * "dead endpoints") and sends them and their confirmation's jobs; every rank leaves the suspects out
 * of every round from now on (MX_EP_OUT) and starts its sides of the confirmation at full's settings
 * (NCCL's ACK timeout, the full --timeout and the MTU probe, as pass 2) beside the rounds that follow
 * (mx_round_start, slot MX_SLOT_CONFIRM). One runs at a time: with new suspects, the one running is
 * finished first (mx_run_epdead_finish; held: the planned rounds before batch k have run). Nothing
 * to do (no --retest, no suspect): nothing sent after the plan. 0, MX_STOPPED (the finish),
 * negative errno. */
int mx_run_epdead(struct mx_run *R, size_t k, size_t n_rounds, const struct rp_engine_cfg *full, bool held);
/* After the first pass's last round (rc: how the rounds before ended), on every rank: the running
 * confirmation finished as a sweep round of pass 3 (rank 0 records the dead ones' directions), the
 * dead list to every rank, the suspects no longer left out; held: rank 0 sends what one not decided
 * dead (spared, or undecided: its probes' peers lost) was left out of to the late rounds
 * (mx_sweep_mark.late). rc not 0 (a stop, an error): its sides waited
 * for and dropped, nothing decided, rc returned. None running: rc. MX_GO_ON, MX_STOPPED, negative errno. */
int mx_run_epdead_finish(struct mx_run *R, int rc, bool held);
/* Pass 2's round started beside the rounds (mx_run_sweep_held, after a first-pass sweep round whose
 * failures it probes; slot MX_SLOT_BESIDE), on every rank: finished as a sweep round of pass 4
 * (rank 0 folds the second probes: dead, flaky or cleared, as pass 2 decides them, which then
 * probes only what is left). rc not 0 (a stop, an error): its sides waited for and dropped,
 * nothing decided, rc returned. None running: rc. MX_GO_ON, MX_STOPPED, negative errno. */
int mx_run_beside_finish(struct mx_run *R, int rc);
/* Rank 0, in a confirmation round before its hook: decide, and record the dead endpoints'
 * directions (touched). 0 or -ENOMEM. */
int mx_run_epdead_keep(struct mx_run *R, const struct mx_job *jobs, size_t n, const struct mx_got *got);
/* Planned rounds [from, to) (mx_run_sweep_held's batches; mx_run_rounds runs them all). */
int mx_run_scheduled(struct mx_run *R, size_t from, size_t to);
/* One late round over jobs[0..n) (at most the planned rounds' jobs). */
int mx_run_late_round(struct mx_run *R, const struct mx_job *jobs, size_t n);
/* Rank 0: fold `again` into result k as its next attempt (mx_retest_fold: k's earlier attempt
 * keeps the status k has now, the last verdict's: results are judged in place), the failed count
 * kept right, k touched. 0 or -ENOMEM (the touch, or keeping k). */
int mx_run_fold(struct mx_run *R, size_t k, int kept_qp, struct rp_pair_result *again, int again_qp);
/* Rank 0: result k replaced by r (the failed count kept right, k touched). 0 or -ENOMEM. */
int mx_run_replace(struct mx_run *R, size_t k, const struct rp_pair_result *r);
/* Rank 0: note result idx as changed this round (grows touched). 0 or -ENOMEM. */
int mx_run_touch(struct mx_run *R, size_t idx);
/* The planned rounds sched and concurrent_rails make (what mx_run_init sets n_scheduled to). */
size_t mx_run_scheduled_rounds(const struct rp_sched *sched, bool concurrent_rails);
void mx_run_fini(struct mx_run *R);

#endif
