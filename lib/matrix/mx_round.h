/* mx_round.h: one round of the matrix on every rank, and the retest plan's distribution.
 *
 * Per round: every rank runs its sides of the round's jobs in threads (each direction a job asks
 * for), reports them up a tree to rank 0 and waits for rank 0's "go", which comes down the same
 * tree, names the ranks that stopped answering (nobody waits on them again) and whether the run
 * stops (a signal on any rank: every rank's report carries its own, the go carries the run's). Only
 * point-to-point messages over the ctx's communicator (lib/job/mx_comm.h), each wait against a deadline:
 * a dead rank costs a deadline, never a hang. A rank asked to stop (lib/base/stop.h) measures nothing
 * more: the jobs it has not started end RP_ST_INTERRUPTED.
 *
 * The tree (lib/job/mx_tree.h): the binomial tree over the ranks still alive, in rank order, as the last
 * go named them (every rank that got that go computes the same tree). Rank 0 receives one message
 * a round from each of its children and sends one to each: ceil(log2(live ranks)) each way, not
 * ranks - 1; no rank sends or receives more. Why not per-node leaders: a leader per node still
 * leaves rank 0 one message per node (1,024) unless the leaders form a tree, which is this one;
 * and with mpirun's and srun's block placement the binomial tree's small aligned subtrees are a
 * node's own ranks already, with no node map to agree on (a rank that dies reshapes one tree, not
 * two levels).
 *  - Up: a rank takes its children's reports (each one message carrying its whole subtree's sides,
 *    rank by rank, mx_wire.h's REPORT) until every child has sent or its own deadline, start +
 *    round_wait_s - depth x hop (hop = min(round_wait_s / 64, 0.25 s), depth = hops to rank 0, so that what a
 *    rank forwards at its deadline reaches its parent before the parent's), and forwards its own
 *    sides and what came as one message to its parent (to rank 0 directly when that send fails). A
 *    report is bounded before it is allocated: at most the sides the ranks of the sender's subtree
 *    drive this round (the transport refuses a longer one unread); one that names a rank outside
 *    the sender's subtree, more sides than a rank drives, or a side its rank does not drive is
 *    ignored whole.
 *  - The rule for a rank that dies or stops answering (interior or leaf): its subtree's reports do
 *    not come up. Rank 0 waits for the tree until all of its children sent or the round's deadline
 *    (its start + round_wait_s, as before), then asks every live rank whose sides it does not have to send
 *    them directly (an ASK, carrying the dead ranks; a rank waiting for its go answers with its own
 *    report at once), and waits go_slack / 2 (5 s by default) for the answers. A rank is dead only when
 *    neither the tree nor the direct ask brought its report: the healthy ranks under a dead interior
 *    rank answer and stay alive, their pairs kept; only the dead rank's pairs end RP_ST_PEER_LOST.
 *    Only rank 0, here, declares a rank dead (a failed send does not), so that the dead set and the
 *    tree stay the same on every rank.
 *  - A rank that dies after it forwarded its subtree's reports leaves its subtree without the go:
 *    they are still waiting for the go of round k when rank 0, missing them in round k + 1, asks
 *    them. A rank waiting for go k takes an ask of round k + 1 as its go (the round it names
 *    ended: the ask carries the dead ranks, and the go of k said go on, or there would be no round
 *    k + 1), does not measure round k + 1 (its peers have given up on it: its sides end
 *    RP_ST_PEER_LOST, "not measured") and answers at once: its pairs of that one round are lost,
 *    it is not. (A rank dying so after the last round leaves its subtree to time out: the run's
 *    results are all in by then.)
 *  - Down: the go (and the retest plan) goes to each child, which passes it on to its own children
 *    in the tree of the ranks alive after it; a child the send fails to is passed over for its
 *    children, so its subtree still gets it. A rank takes the go from whichever rank sends it (it is
 *    rank 0's), and waits for it until mx_ctx_go_wait() after its own start of the round.
 */
#ifndef RP_MX_ROUND_H
#define RP_MX_ROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "job/mx_comm.h"
#include "matrix/mx_got.h"
#include "matrix/mx_hold.h"
#include "job/mx_table.h"
#include "job/mx_wire.h"
#include "base/result.h"

/* How a side is measured: the engine (rp_engine_pair_run, rp_engine_loopback_run) unless a test
 * stands in. */
struct mx_measure {
	/* hold: this side's held connection (mx_hold.h; NULL when the run holds none), armed for the
	 * round: the stand-in sets hold->held and hold->eng.reused as the engine would */
	int (*pair)(void *arg, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		    const struct rp_engine_port *local, struct rp_oob *oob, struct mx_hold_side *hold,
		    struct rp_pair_result *res);
	int (*loopback)(void *arg, const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			const struct rp_engine_port *dst, struct mx_hold_side *hold_w, struct mx_hold_side *hold_t,
			struct rp_pair_result *res);
	void *arg;
	/* The sides answer at once, waiting on nothing and no one (a simulation in one process, every
	 * endpoint its own): a round runs its jobs one after the other on the calling thread instead of
	 * a thread each (hundreds of thousands of threads a sweep round at 1,024 x 8). False for
	 * anything that talks to a peer. */
	bool inline_sides;
	/* Rank 0 checks its own sides as it checks a REPORT's (unpacked, mx_side_ok): a simulation in
	 * one process, whose rank 0 holds every side, does the work a real rank 0 does for the sides of
	 * the ranks below it. */
	bool check_own_sides;
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
	size_t max_retest_jobs;              /* the most jobs a plan from rank 0 may hold: a longer one is refused
	                               * before anything is allocated (0: 2 x n_eps x n_eps) */
	double round_wait_s;          /* how long rank 0 waits for a round's reports */
	double go_slack;              /* how much longer than 2 x round_wait_s the others wait for rank 0 (0: 10 s) */
	int stop_sig;                 /* the signal that stops the run (this rank's, or told by rank 0); 0 none */
	void (*flush)(void *arg);     /* rank 0: write the files now (a stop arrived mid-round); may be NULL */
	void *flush_arg;
	bool hold_go;                 /* rank 0: mx_round() leaves the go to mx_round_go(), so that the
	                               * caller decides whether it keeps the round before the go or
	                               * after (lib/matrix/mx_run.h) */
	size_t late_round;            /* the others: 1 + the round this rank does not measure (its previous
	                               * go came by rank 0's ask at that round's end); 0 none */
	const struct mx_measure *measure;   /* NULL: the engine */
	double sides_end;             /* rank 0: rp_now() when its sides of the last round ended; what
	                               * follows until its go is rank 0's own work (collecting, keeping,
	                               * writing), every other rank waiting */
	double go_sent;               /* rank 0: rp_now() when it sent the last round's go */
	struct mx_task *spent;        /* rank 0 with hold_go: the last round's sides, collected, freed once
	                               * its go is sent (mx_round_go), so that the ranks never wait on the
	                               * frees (a simulation's rank 0 holds every rank's sides: half a million
	                               * a sweep round at 1,024 x 8); see mx_round_spent_free */
	size_t n_spent;
	struct mx_holds *holds;       /* the sweep's held connections (mx_hold.h); NULL or mode OFF: none */
	bool brief;                   /* set alike on every rank for a round whose passes rank 0 needs nothing
	                               * of but that they passed and how long they took (a sweep's first
	                               * pass): a side that passed is sent as a brief pass (mx_wire.h), and
	                               * one in any other round is refused as a malformed report */
	/* rank 0: called once in every round, after its own sides started and before it waits for them
	 * (mx_run keeps the previous round's results there, while this one runs); NULL none */
	void (*between)(void *arg);
	void *between_arg;
};

/* What a round, a pass of rounds or the whole run came to when no error ended it: each function of
 * mx_round.h and mx_run.h that runs rounds returns one of these, or a negative errno. */
enum mx_outcome {
	MX_GO_ON = 0,                 /* every round asked for ran (or: go on to the next) */
	MX_STOPPED = 1,               /* a stop (a signal on a rank, c->stop_sig) ended it: the rounds
	                               * after it did not run, and their directions are not measured */
};

/* Round `round` (a number for the whole run: planned rounds, then retest rounds) over jobs[0..n),
 * on every rank: run this rank's sides, then rank 0 collects (got's slot 2*i+dir; unused on the others)
 * and tells every rank to go on or stop; ranks whose report neither the tree nor rank 0's direct
 * ask brought are dead from then on and their pairs RP_ST_PEER_LOST. MX_GO_ON, MX_STOPPED (c->stop_sig says why), -ETIMEDOUT rank
 * 0 is gone, -ECANCELED rank 0 gave up on this rank, -ENOMEM, or the transport's error. */
int mx_round(struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n, struct mx_got *got);
/* A round started in the background: its sides run beside the rounds that follow, and it is reported
 * later, as a round of its own (a dead-endpoint confirmation: lib/matrix/mx_run_epdead.c). Every rank
 * starts it alike (side_round: the run-wide number its side channels are addressed by) and finishes
 * it alike. Its sides run at the ctx's cfg as it is at the start (a copy), with no held connection,
 * and their side channels use tags no other round uses, those of its slot: one started round a slot
 * at a time (a dead-endpoint confirmation in slot MX_SLOT_CONFIRM, pass 2's round beside the rounds
 * in MX_SLOT_BESIDE). A rank asked to stop meanwhile still measures them (their deadlines bound
 * them). */
#define MX_STARTED_SLOTS 2
enum { MX_SLOT_CONFIRM = 1, MX_SLOT_BESIDE = 2 };
struct mx_started;
struct mx_task;
/* Start this rank's sides of jobs[0..n) in slot (1..MX_STARTED_SLOTS; the caller keeps jobs until
 * the finish). 0, -EINVAL (no such slot) or -ENOMEM. */
int mx_round_start(struct mx_ctx *c, size_t side_round, unsigned slot, const struct mx_job *jobs, size_t n,
		   struct mx_started **st_p);
/* Wait for this rank's sides of st, then report them as round `round` (a run-wide number of its
 * own, taken now) exactly as mx_round() reports its sides, and the go. Frees st. mx_round()'s returns. */
int mx_round_finish(struct mx_ctx *c, size_t round, struct mx_started *st, struct mx_got *got);
/* A run that ends before st's finish: wait for this rank's sides (their deadlines bound the wait) and
 * drop them. NULL: nothing. */
void mx_round_abandon(const struct mx_ctx *c, struct mx_started *st);
/* How long a non-zero rank waits for rank 0 from the start of a round or a plan wait. */
double mx_ctx_go_wait(const struct mx_ctx *c);
/* Rank 0 with hold_go: release the ranks into the next round (the go of round), then free that
 * round's sides. MX_GO_ON, MX_STOPPED. */
int mx_round_go(struct mx_ctx *c, size_t round);
/* Free the sides a round left to its go (c->spent): a run that ends without that go calls it. */
void mx_round_spent_free(struct mx_ctx *c);
/* The heap those sides hold now (malloc's usable bytes): what a simulation's rank 0 holds for the
 * other nodes until the go. 0 when none. */
size_t mx_round_spent_bytes(const struct mx_ctx *c);
/* Rank 0: the next retest plan (n == 0: no more) to every live rank. */
void mx_jobs_send(struct mx_ctx *c, size_t round, const struct mx_job *jobs, const uint32_t *round_of, size_t n);
/* Others: wait for it; *jobs_p (malloc'd), *round_of_p (malloc'd: each job's retest round), *n_p.
 * 0, -EPROTO (an impossible plan), -EMSGSIZE (more than c->max_retest_jobs jobs: refused unread), or the
 * transport's error; nothing allocated on error. */
int mx_jobs_wait(struct mx_ctx *c, size_t round, struct mx_job **jobs_p, uint32_t **round_of_p, size_t *n_p,
		 double deadline);

#endif
