/* mx_plan.h: the matrix's time model (matrix --plan, --budget, --calibrate-from): how long a schedule
 * takes and why, what fits a time budget, and what a run covered.
 *
 * The model (struct mx_plan_model; every figure carries where it came from, so the plan can say what
 * it assumed):
 *   wall        = start-up + planned rounds + sweep rounds
 *   start-up    = startup_s + startup_per_ep_s x E (every rank's discovery and the start-up exchange)
 *   a round     = its slowest pair + round_overhead_s (lock-step rounds wait for their slowest pair;
 *                 the overhead is rank 0's collection, its report writes and the "go")
 *   a pair      = its two directions one after the other (--bidir: both at once, one direction's time)
 *   a direction = setup_s + the bytes (iters + warm-up, x msg_size) at rate_frac x the lower link rate
 *                 of its two endpoints; with a duration (-D) setup_s + the duration
 *   --concurrent-rails: each round is also played rail by rail first (a rail's solo round lasts its
 *                 slowest pair + the overhead), then whole
 *   --sweep W:  ceil(rounds / W) probe rounds first; sweep round k holds planned rounds [k W, (k + 1) W),
 *                 and its busiest endpoint is in n_k probes (2 per pair of it there: writer and
 *                 target). Calibrated, a round lasts n_k x sweep_probe_s: an endpoint's probes share
 *                 its CPU and adapter, so a round of 7 rounds' probes is not one of 1 round's (the VM:
 *                 0.37 s at n 2, 2.1-3.8 s at n 14). Uncalibrated, setup_s + the overhead (a probe
 *                 moves a few KiB: its set-up is its cost; assumed all at once, whatever n_k)
 *   --retest:   no extra rounds: they measure again what failed or was slow
 *   --plan-dead D: beside the healthy estimate, its worst case with D dead endpoints (mx_plan_faults);
 *                 --budget fits the worst case
 *   --budget:   the pattern and message size that fit (mx_plan_budget below)
 * Uncalibrated figures are assumptions (mx_plan_model_default); mx_plan_calibrate() fits them from a
 * previous run's JSON report (lib/plan/mx_plan_cal.c).
 *
 * Nothing here prints or exits; errors are 0 or a negative errno.
 */
#ifndef RP_MX_PLAN_H
#define RP_MX_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job/mx_schedule.h"
#include "job/mx_settings.h"

#define MX_PLAN_SRC 192           /* room for a figure's provenance */

/* The default assumptions (no calibration). */
#define MX_PLAN_SETUP_S 0.05      /* set-up of one direction: QPs, connection, exchange */
#define MX_PLAN_RATE_FRAC 1.0     /* transfers at the link rate */
#define MX_PLAN_ROUND_S 0.05      /* per-round overhead beyond the slowest pair */
#define MX_PLAN_STARTUP_S 5.0     /* start-up, whatever the size */

struct mx_plan_model {
	double setup_s;               /* per direction */
	double rate_frac;             /* fraction of the lower link rate a transfer runs at, (0, 1] or more */
	double round_overhead_s;      /* per round */
	double startup_s;             /* start-up, fixed part */
	double startup_per_ep_s;      /* start-up, per endpoint */
	double sweep_probe_s;         /* a sweep round per probe of its busiest endpoint; 0: derived
	                               * (a round is setup_s + round_overhead_s) */
	char setup_src[MX_PLAN_SRC];  /* "assumed, no calibration", "median of 56 directions in m.json" */
	char rate_src[MX_PLAN_SRC];
	char round_src[MX_PLAN_SRC];
	char startup_src[MX_PLAN_SRC];
	char sweep_src[MX_PLAN_SRC];
	bool calibrated;              /* any figure came from a file */
};

/* The default assumptions above, each with its source "assumed, no calibration". */
void mx_plan_model_default(struct mx_plan_model *m);


struct mx_plan_est {
	size_t rounds;                /* planned rounds (concurrent_rails: solo and whole) */
	size_t sweep_rounds;
	uint64_t sweep_probes;        /* the sum over the sweep rounds of their busiest endpoint's probes */
	size_t sweep_probes_max;      /* the most probes one endpoint is in in one sweep round */
	uint64_t pairs;               /* unordered; each measured both ways */
	size_t max_round_pairs;
	double startup_s, rounds_s, sweep_s, total_s;   /* total_s: a healthy fabric */
	size_t dead;                  /* the worst case's dead endpoints (run->plan_dead) */
	double faults_s, worst_s;     /* what they add at worst (mx_plan_faults), total_s + that */
};

/* The worst case of `dead` dead endpoints (issue 29). With a sweep and --retest the run decides
 * endpoints (mx_sweep.h "dead endpoints"): each costs the screen's deadline in the sweep round where
 * it shows MX_EPDEAD_PEERS failed peers and one confirmation (its window plus the MTU probe), and
 * endpoints found in the same round share both: the worst D are those found in the most distinct
 * rounds (rail, full: all in the first), the latest first. The confirmations run one at a time
 * beside the rounds that follow the first of them, which room_s prices (the healthy estimate's
 * rounds that can run meanwhile, all of them: with --hold the sweep's and the planned ones, else the
 * sweep's; taken as spread evenly over the sweep's first-pass rounds): only what they take beyond
 * those rounds is added. Else every round a dead endpoint is in waits a full deadline. */
struct mx_plan_faults {
	size_t dead;
	size_t confirm_rounds;        /* distinct detection rounds among the worst D */
	double per_s;                 /* one detection round's cost (or, direction by direction, a dead
	                               * endpoint's) */
	double faults_s;
};
int mx_plan_faults(const struct rp_sched *sched, size_t n_eps, const struct mx_settings *run, size_t dead,
		   double room_s, struct mx_plan_faults *f);
/* --plan-dead's default: 1% of the endpoints, at least one. */
size_t mx_plan_dead_default(size_t n_eps);

/* A sweep round whose busiest endpoint is in n probes under m: n x sweep_probe_s, or (derived)
 * setup_s + round_overhead_s. */
double mx_plan_sweep_round_s(const struct mx_plan_model *m, uint64_t n);
/* The sweep over sched at width W on n_eps endpoints: its rounds, the sum over them of the most
 * probes one endpoint is in (writer and target: 2 per pair), and the largest of those. 0, -EINVAL
 * (W 0) or -ENOMEM. */
int mx_plan_sweep_load(const struct rp_sched *sched, size_t n_eps, unsigned width, size_t *rounds_p, uint64_t *probes_p,
		       size_t *max_p);
/* One direction at gbps (the lower link rate of its endpoints, Gb/s > 0). */
double mx_plan_dir_s(const struct mx_plan_model *m, const struct mx_settings *run, double gbps);
/* A round of pairs[0..n) over endpoints at ep_gbps[]: its slowest pair plus the overhead (n == 0:
 * the overhead alone). */
double mx_plan_round_s(const struct mx_plan_model *m, const struct mx_settings *run, const double *ep_gbps,
		       const struct rp_sched_pair *pairs, size_t n);
/* Walk every round of sched (E = n_eps endpoints at ep_gbps[], each > 0) under the model into *est.
 * 0, -EINVAL (a rate not > 0, concurrent_rails on a pattern without groups; not logged: the caller
 * checks its input) or -ENOMEM. */
int mx_plan_estimate(const struct rp_sched *sched, const double *ep_gbps, size_t n_eps, const struct mx_plan_model *m,
		     const struct mx_settings *run, struct mx_plan_est *est_p);

/* --- calibration (mx_plan_cal.c) ------------------------------------------------------------------ */

/* Fit m from a previous matrix run's JSON report at path (the one rdmaprobe matrix --json wrote):
 *   setup_s           median over its ok directions of elapsed_s - the bytes moved (warm-up
 *                     included) at the measured rate (-D: elapsed_s - duration_s), at least 0;
 *   rate_frac         median over the same directions of gbps / the lower link rate of the two;
 *   round_overhead_s  (matrix.elapsed_s - the sum over its rounds of the model's slowest pair, from
 *                     the two figures above and each direction's bytes and link rate) / rounds, at
 *                     least 0: what its rounds took beyond the model (collection, report writes, and
 *                     the slowest pair's distance from the median), so the model reproduces the
 *                     report's own rounds; the rounds rebuilt from its endpoints, pattern and seed;
 *                     only from a complete run without retest, late or concurrent rounds and whose
 *                     sweep left every pair in its planned round (else kept, and its source says why);
 *   startup_per_ep_s  matrix.startup_s / its endpoints (assumed proportional to the endpoints;
 *                     startup_s 0); kept when the report has no startup_s (older writers);
 *   sweep_probe_s     matrix.sweep.elapsed_s (the time of the sweep's own rounds) / the sum over its
 *                     rounds of their busiest endpoint's probes (mx_plan_sweep_load on the rebuilt
 *                     schedule at matrix.sweep.width), from a sweep that found nothing (no unreachable,
 *                     flaky or cleared direction: a failing probe waits out its deadline, which the
 *                     plan, assuming a healthy fabric, does not count) and ran the rounds its schedule
 *                     makes; else kept, and its source says why.
 * Each source names the file and how many directions or rounds the figure comes from. 0; -ENOENT or
 * -EACCES (cannot read it), -EINVAL (not JSON, not a matrix report, or no ok direction to fit from),
 * -ENOMEM; every error logged once naming the file and what is wrong, m left untouched. */
int mx_plan_calibrate(const char *path, struct mx_plan_model *m);
/* The same; a simulated run's report (its top-level "simulated": true: the model's figures, not a
 * fabric's) is refused with -EINVAL (logged, naming --allow-simulated) unless allow_simulated.
 * mx_plan_calibrate refuses it. */
int mx_plan_calibrate_opts(const char *path, bool allow_simulated, struct mx_plan_model *m);

/* --- the budget (mx_plan_budget.c) ---------------------------------------------------------------- */

/* The smallest message size the budget chooses: 1 MiB, or the requested size when that is smaller
 * (the budget never makes a message larger). The model has no per-message cost (a direction is its
 * set-up plus its bytes at a fraction of the link rate, whatever the size), so it cannot say where a
 * link stops reaching its rate; 1 MiB is where it still does on any adapter: one write lasts 21 us
 * even at 400 Gb/s, many times the per-write cost of posting and completing it, and a pair moves
 * at least tens of MiB (-n writes of it) at each interval of the minimum Gb/s. Below the floor a
 * bandwidth figure would measure the per-write cost, not the link, so the budget samples instead. */
#define MX_PLAN_MSG_FLOOR (1ULL << 20)

struct mx_plan_choice {
	struct rp_pattern pattern;    /* what fits: the requested pattern, or sample:K */
	bool reduced;                 /* pattern is a smaller sample than the one requested */
	uint64_t msg_size;            /* the size that fits: the requested one, or a smaller one */
	uint64_t msg_size_requested;
	uint64_t floor_size;          /* the smallest size it may choose (the requested one: none smaller) */
	double requested_s;           /* the requested pattern's estimate at the requested size */
	double floor_s;               /* the requested pattern's estimate at floor_size, when floor_tried */
	bool floor_tried;             /* it was needed: the requested pattern did not fit above the floor */
	double budget_s;
	struct mx_plan_est est;       /* the chosen pattern's, at the chosen size */
};

/* What fits budget_s over eps[0..n_eps) (canonical order, as rp_sched_create) at ep_gbps[], in the
 * order an operator gives things up: coverage before message size, message size before nothing.
 *   1. the requested pattern at the requested size (run->msg_size), when its estimate fits;
 *   2. else the requested pattern at the largest of the sizes size/2, size/4, ... down to the floor
 *      (MX_PLAN_MSG_FLOOR; the floor itself the last one tried) that fits; no smaller sizes with -D
 *      (the duration, not the size, sets a direction's time) or -l (the size is what is measured);
 *   3. else (full, shift and sample:K, whose pairs are any two endpoints) sample:K with the largest
 *      K that fits at the floor (below the requested K for sample:K; searched by halving: the estimate
 *      grows with K), then at the largest size of step 2's that still fits with that K.
 * 0 with *c (c->msg_size what every rank then measures with); -ENOSPC nothing fits, not even sample:1
 * at the floor (c->requested_s, c->floor_s set; c->est is sample:1's at the floor); -EDOM rail or
 * intra does not fit even at the floor (their pairs are restricted; a sample is not: c->requested_s
 * and c->floor_s set); -EINVAL a bad input (not logged), -ENOMEM. */
int mx_plan_budget(const struct rp_sched_ep *eps, size_t n_eps, const double *ep_gbps, const struct rp_pattern *pat,
		   uint64_t seed, const struct mx_plan_model *m, const struct mx_settings *run, double budget_s,
		   struct mx_plan_choice *c);

/* What the budget changed and why, one line (no newline) for stderr and the reports, e.g.
 * "-s 8M -> 2M to fit 10m: full needs ~812.0 s at -s 8M; ~540.1 s at 2M" or
 * "full at -s 64K fits 10m (~412.3 s)". requested: the pattern asked for. Cut to len. */
void mx_plan_choice_str(const struct mx_plan_choice *c, const struct rp_pattern *requested, char *buf, size_t len);
/* A size as -s takes it: "8M", "64K", "1G", else bytes ("1250000"). */
void mx_plan_size_str(uint64_t bytes, char *buf, size_t len);
/* A duration as --budget takes it: "10m", "1h", "90s", "5.5s". */
void mx_plan_dur_str(double s, char *buf, size_t len);

/* --- coverage (mx_plan_cov.c) ---------------------------------------------------------------------- */

/* What a run measured against what its requested pattern allows. The pairs the requested pattern
 * allows: full, shift and sample:K any two endpoints; rail two endpoints of the same rail (index
 * within the node) on different nodes; intra two endpoints of the same node. A (rail, rail)
 * combination is unordered, (r, s) with r <= s. */
struct mx_coverage {
	uint32_t peers_min, peers_max;          /* distinct peers measured per endpoint */
	uint64_t ordered_allowed, ordered_measured;
	uint64_t combos_allowed, combos_covered;
	double fraction;                        /* ordered_measured / ordered_allowed (1 when none allowed) */
	/* what was measured with (mx_coverage_set_run; mx_coverage_compute leaves them 0: not stated) */
	uint64_t msg_size_requested, msg_size_run;
	char budget_choice[320];                /* --budget: mx_plan_choice_str; "" without */
};

/* Coverage of the first sched_rounds_done rounds of sched (the schedule that ran) over eps[0..n_eps),
 * against the pairs `requested` allows (only those count). 0, -EINVAL (n_eps 0, rounds out of range)
 * or -ENOMEM. */
int mx_coverage_compute(const struct rp_sched_ep *eps, size_t n_eps, const struct rp_pattern *requested,
			const struct rp_sched *sched, size_t sched_rounds_done, struct mx_coverage *cov);
/* The sizes the run was asked for and measured with, and with --budget (c not NULL) its choice and
 * why (mx_plan_choice_str against requested). */
void mx_coverage_set_run(struct mx_coverage *cov, uint64_t msg_size_requested, uint64_t msg_size_run,
			 const struct mx_plan_choice *c, const struct rp_pattern *requested);
/* The schedule's rounds whose pairs are measured after scheduled_done planned rounds (concurrent_rails:
 * a round's pairs are measured once its solo rounds are, mx_run.h). */
size_t mx_coverage_sched_rounds(const struct rp_sched *sched, bool concurrent_rails, size_t scheduled_done);

/* What makes a rank's schedule (every rank must run the same one, or pairs meet no peer): the
 * requested pattern and seed, what each direction measures (run), and with --budget (budget_s > 0)
 * the budget and the model that chooses within it (m: a --calibrate-from file read on each node).
 * A digest of them for the start-up exchange, which refuses a rank whose digest is not rank 0's:
 * equal inputs give equal digests on every host; any input changed changes it. */
uint32_t mx_plan_digest(const char *pattern, uint64_t seed, const struct mx_settings *run, double budget_s,
			const struct mx_plan_model *m);

#endif
