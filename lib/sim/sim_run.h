/* sim_run.h: the matrix over a simulated fabric (matrix --transport sim).
 *
 * The ranks are one process (no communicator given: one rank owns every endpoint of the model) or
 * the ranks of an MPI job (the caller's communicator, lib/job/oob_mpi.h: rank r owns the adapters of the
 * model's nodes k with k % ranks == r, at most MX_MAX_LOCAL endpoints a rank). Either way the REAL
 * matrix code runs: under MPI the start-up exchange (mx_table_gather: each rank offers its
 * endpoints, the table and the run's nonce come back; one rank builds the table from its own
 * offer), the schedule (lib/schedule), lib/mx_run's planned rounds, retest plan (the verdict) and
 * retest rounds, and lib/mx_round's rounds: a thread per job and its directions under MPI (one rank:
 * every side is answered at once on the calling thread, mx_measure.inline_sides), the collection of
 * every side into the round's results and the go. A communicator of one rank (mx_comm ops that
 * carry nothing: with one rank no message is due) stands in for MPI, and an mx_measure answers
 * every side from the model (rp_sim_dir) instead of the engine. 8,192 ranks as threads or
 * processes do not fit one small machine (every round would create and join a thread per rank);
 * with one rank the report/go messages, the per-rank message validation (each side is still checked
 * as a REPORT's: mx_measure.check_own_sides), the side channels and the dead-rank handling are NOT
 * exercised (under MPI they are: a side whose peer is on another rank
 * tells it its endpoint over the pair's side channel, and both answer from the model), while every
 * other step of rank 0 is, on every pair (in one process the sides' threads of all ranks run there:
 * their CPU time is in rank 0's, more than a real rank 0 spends).
 *
 * The clock is virtual: nothing sleeps. Rounds are lock-step as today's scheduler's: a round's
 * virtual time is its slowest endpoint's (the sum of its directions in the round, from the elapsed
 * times of the round's results as rank 0 collected them: mx_run's round_got) plus the model's round
 * overhead. Rank 0's own work between rounds (collecting the round, measured in real seconds as
 * collect_s; the caller's hook, e.g. writing the reports), during which the other ranks wait for
 * the go, is added by the caller with rp_sim_run_advance. A planned round kept after its go
 * (lib/matrix/mx_run.h) counts its collection before the go, and its keeping only where that took
 * longer than the round it ran beside (all of it when kept at a batch's end). With one rank the
 * collection is rank 0's alone; under MPI it also holds the wait for the other ranks' sides on this
 * host.
 */
#ifndef RP_SIM_RUN_H
#define RP_SIM_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "matrix/mx_run.h"
#include "job/mx_schedule.h"
#include "job/mx_settings.h"
#include "sim/sim_model.h"
#include "verdict/verdict.h"

struct rp_sim_run {
	/* the caller's */
	const struct rp_sim_model *model;
	const struct rp_engine_cfg *cfg;
	const struct rp_verdict_cfg *vcfg;
	struct rp_pattern pattern;
	uint64_t seed;
	struct mx_settings settings;  /* the run's, whole (lib/job/mx_settings.h), as a real run's: retest, the
	                               * sweep's width, hold (with the sweep, when mx_hold_allowed()),
	                               * concurrent_rails; what a direction measures is cfg's */
	struct mx_run_hooks hooks;    /* called after the simulation's own (the round's time is known then) */
	struct mx_comm *c;            /* the ranks (MPI); NULL: one rank (comm below) */
	uint32_t nccl_version;        /* offered at start-up, as a real rank's release */
	/* the run's */
	struct mx_table table;        /* the start-up exchange's */
	struct mx_ep *eps;            /* = table.eps: the model's endpoints, in (node, device, port) order */
	struct rp_endpoint *rep_eps;
	uint32_t *table_of;           /* the model's endpoint number -> the table's */
	size_t n_eps, n_nodes;
	struct rp_sched *sched;
	struct mx_comm comm;
	bool *dead;                   /* per rank */
	struct mx_measure measure;
	struct mx_run run;
	/* the virtual clock */
	pthread_mutex_t lock;
	double *busy;                 /* rank 0, per endpoint: its directions' time in the round just ended */
	double vclock;                /* seconds: the rounds so far plus what rp_sim_run_advance added */
	double rounds_s;              /* the rounds' share of vclock (sweep rounds included) */
	double sweep_s;               /* the sweep rounds' share of rounds_s */
	double *round_s;              /* every finished round's time (slowest + overhead) */
	double collect_s;             /* REAL seconds rank 0 spent between its sides' end of a round and
	                               * the round's go, the hooks' time taken out (collecting the sides,
	                               * keeping the results, settling them), every round so far; not on
	                               * the virtual clock (the caller adds it) */
	double collect_last_s;        /* what collect_s grew by at the hook just called: this round's
	                               * collection and the previous round's part after its hook */
	double collect_tail_s;        /* after the rounds: the last round's part after its hook (in
	                               * collect_s, in no collect_last_s); rank 0's retest plans are apart
	                               * (run.retest_plan_s), on the clock already */
	double hook_end;              /* rp_now() as the last hook returned; 0 none yet */
	double confirm_at;            /* vclock when the running dead-endpoint confirmation started beside
	                               * the rounds (its finish waits only for what is left of it) */
	double beside_at;             /* vclock when pass 2's first round started beside the rounds */
	unsigned keep_seen;           /* run.keep_seq as last counted (keep_charge) */
	size_t n_round_s, cap_round_s;
	size_t sides;                 /* __atomic: directions answered from the model by this rank's sides */
};

/* Build the endpoints, the schedule and the run (the caller's fields set). 0, -EINVAL (logged: the
 * pattern cannot apply), -ENOMEM. */
int rp_sim_run_init(struct rp_sim_run *S);
/* Every round (mx_run_rounds), and rank 0's retest plans (run.retest_plan_s) onto the clock: every rank
 * waits for them. 0, or its status. */
int rp_sim_run_rounds(struct rp_sim_run *S);
/* Rank 0's work between rounds: the other ranks wait for it, so it adds to the projected time. */
void rp_sim_run_advance(struct rp_sim_run *S, double seconds);
void rp_sim_run_fini(struct rp_sim_run *S);

/* The communicator of a single rank: rank 0 of 1; sends and takes fail (no peer exists), the
 * start-up collective returns this rank's bytes. */
void rp_sim_comm_init(struct mx_comm *c);

#endif
