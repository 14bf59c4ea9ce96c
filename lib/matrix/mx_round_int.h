/* mx_round_int.h: what mx_round.c (a round's sides, its results, the plan) and mx_round_tree.c (the
 * reports up the tree, the go down it) share; see mx_round.h. */
#ifndef RP_MX_ROUND_INT_H
#define RP_MX_ROUND_INT_H

#include <pthread.h>

#include "matrix/mx_round.h"
#include "job/mx_tree.h"

struct mx_task {
	const struct mx_ctx *ctx;
	size_t round, idx;
	uint32_t ord;                 /* the job's number among the round's jobs between this rank and its
	                               * peer's (0 for a job of this rank alone): its side channels' tags */
	struct mx_job job;
	const struct rp_engine_cfg *cfg;   /* the ctx's at its start (a started round's: its own copy) */
	bool brief;                   /* the ctx's at its start */
	bool later;                   /* a started round's (mx_round_start): no held connection, no look at
	                               * the dead ranks (the main thread writes them meanwhile), tags of
	                               * its own */
	unsigned slot;                /* 0, or the started round's slot (1..MX_STARTED_SLOTS): its tags */
	pthread_t thread;
	bool threaded;
	int done;                     /* __atomic: the thread is finished */
	bool have[2];                 /* the job asks for this direction: side[dir] holds this rank's view */
	uint8_t *side[2];             /* its record as a REPORT carries it (mx_wire.h), malloc'd; NULL with
	                               * have set: no memory was left to keep it (the round ends -ENOMEM) */
	size_t side_len[2];
};

/* Rank 0: this round's reports into got (its own sides first), through the tree, then by
 * asking the missing ranks directly; the ranks that neither brought are marked dead. 0 or a
 * transport's error or -ENOMEM. */
int mx_tree_collect(struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n_jobs,
		    const struct mx_task *tasks, size_t n_tasks, double start, struct mx_got *got);
/* The others: this rank's report (with its subtree's) up the tree, then the go (answering rank 0's
 * ask meanwhile). mx_round()'s return for these ranks. */
int mx_tree_follow(struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n_jobs,
		   const struct mx_task *tasks, size_t n_tasks, double start);
/* Rank 0: the go of round down the tree. */
void mx_tree_go(struct mx_ctx *c, size_t round);
/* buf[0..len) on (MX_CHAN_CTL, tag, round) to this rank's children in the tree of c->dead as it is
 * now; a child the send fails to is passed over for its own children (its subtree still gets it). */
void mx_tree_bcast_now(struct mx_ctx *c, int tag, size_t round, const void *buf, size_t len);

#endif
