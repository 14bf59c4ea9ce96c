/* mx_round.h: one round of the matrix on every rank, and the retest plan's distribution.
 *
 * Per round: every rank runs its sides of the round's jobs in threads (each direction a job asks
 * for), reports them to rank 0 and waits for rank 0's "go", which names the ranks that stopped
 * answering (nobody waits on them again) and whether the run stops (a signal on any rank: reports
 * carry the sender's, the go carries the run's). Only point-to-point messages over the ctx's
 * communicator (lib/mx_comm.h), each wait against a deadline: a dead rank costs a deadline, never a
 * hang. A rank asked to stop (lib/stop.h) measures nothing more: the jobs it has not started end
 * RP_ST_INTERRUPTED.
 */
#ifndef RP_MX_ROUND_H
#define RP_MX_ROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "mx_comm.h"
#include "mx_table.h"
#include "mx_wire.h"
#include "result.h"

#define MX_TAG_REPORT 11
#define MX_TAG_GO 12
#define MX_TAG_PLAN 13

/* How a side is measured: the engine (rp_engine_pair_run, rp_engine_loopback_run) unless a test
 * stands in. */
struct mx_measure {
	int (*pair)(void *arg, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		    const struct rp_engine_port *local, struct rp_oob *oob, struct rp_pair_result *res);
	int (*loopback)(void *arg, const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			const struct rp_engine_port *dst, struct rp_pair_result *res);
	void *arg;
};

/* What every rank knows during the run. */
struct mx_ctx {
	struct mx_comm *comm;
	const struct rp_engine_cfg *cfg;
	const struct mx_ep *eps;
	size_t n_eps;
	int rank, n_ranks;            /* the comm's */
	bool *dead;                   /* ranks that stopped answering (n_ranks) */
	size_t max_pairs;             /* the most jobs a round has (spreads tags) */
	double budget;                /* how long rank 0 waits for a round's reports */
	double go_slack;              /* how much longer than 2 x budget the others wait for rank 0 (0: 10 s) */
	int stop_sig;                 /* the signal that stops the run (this rank's, or told by rank 0); 0 none */
	void (*flush)(void *arg);     /* rank 0: write the files now (a stop arrived mid-round); may be NULL */
	void *flush_arg;
	bool hold_go;                 /* rank 0: mx_round() leaves the go to mx_round_go(), so that the
	                               * files are written before the ranks start the next round */
	const struct mx_measure *measure;   /* NULL: the engine */
};

/* Round `round` (a number for the whole run: planned rounds, then retest rounds) over jobs[0..n),
 * on every rank: run this rank's sides, then rank 0 collects (got[2*i+dir]; unused on the others)
 * and tells every rank to go on or stop; ranks that sent no report by the deadline are dead from
 * then on and their pairs RP_ST_PEER_LOST. 0 go on, 1 stop (c->stop_sig says why), -ETIMEDOUT rank
 * 0 is gone, -ECANCELED rank 0 gave up on this rank, -ENOMEM, or the transport's error. */
int mx_round(struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n, struct rp_pair_result *got);
/* How long a non-zero rank waits for rank 0 from the start of a round or a plan wait. */
double mx_ctx_go_wait(const struct mx_ctx *c);
/* Rank 0 with hold_go: release the ranks into the next round (the go of round). 0 go on, 1 stop. */
int mx_round_go(struct mx_ctx *c, size_t round);
/* Rank 0: the next retest plan (n == 0: no more) to every live rank. */
void mx_plan_send(struct mx_ctx *c, size_t round, const struct mx_job *jobs, const uint32_t *round_of, size_t n);
/* Others: wait for it; *jobs_p (malloc'd), *round_of_p (malloc'd: each job's retest round), *n_p.
 * 0, -EPROTO (an impossible plan), or the transport's error; nothing allocated on error. */
int mx_plan_wait(struct mx_ctx *c, size_t round, struct mx_job **jobs_p, uint32_t **round_of_p, size_t *n_p,
		 double deadline);

#endif
