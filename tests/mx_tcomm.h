/* mx_tcomm.h: an in-process transport for lib/job/mx_comm.h (ranks as threads of one test), with faults.
 *
 * Messages go into one queue per world; a take finds the first due message of its (chan, dst, src,
 * tag), in send order (MPI's non-overtaking rule), and waits on a condition variable until the
 * deadline. A fault hook sees every send and every take that found a message and decides what
 * happens to it: delivered (after an optional delay), dropped, duplicated, preceded by a replay of
 * the sender's previous message on the same (chan, dst, tag) (a stale message: an earlier round's or
 * pair's), corrupted (the payload's first byte flipped), grown (mxt_set_grow's bytes appended: a
 * peer sending more than it may), or the call fails with -EIO (a take fails after the
 * message was matched and taken off the queue: a transport failing in the middle of a receive).
 * A take that refuses a message over its max_len is counted (mxt_refused).
 * Every event gets a number from one counter (mxt_seq), so tests can check the order of events.
 */
#ifndef RP_TESTS_MX_TCOMM_H
#define RP_TESTS_MX_TCOMM_H

#include <stddef.h>
#include <stdint.h>

#include "job/mx_comm.h"

struct mxt_world;

enum mxt_op { MXT_SEND, MXT_TAKE };

/* What to do with a message: MXT_DELIVER, or a combination of the others. */
enum mxt_action {
	MXT_DELIVER = 0,
	MXT_DROP = 1,
	MXT_DUP = 2,
	MXT_STALE_FIRST = 4,
	MXT_CORRUPT = 8,
	MXT_FAIL = 16,
	MXT_GROW = 32,
};

struct mxt_event {
	enum mxt_op op;
	int rank;                     /* the caller */
	int peer;                     /* send: dst; take: the message's src */
	enum mx_chan chan;
	int tag;
	size_t len;
	unsigned long seq;            /* the event's number */
};

/* Decide on one event; *delay_s (send only) delays delivery. Called without the world's lock. */
typedef int (*mxt_fault_fn)(void *arg, const struct mxt_event *ev, double *delay_s);

/* A world of n ranks, ranks_per_node per node (local rank = rank % ranks_per_node), tags up to tag_ub. */
struct mxt_world *mxt_world_new(int n, int ranks_per_node, int tag_ub);
void mxt_world_free(struct mxt_world *w);
void mxt_set_fault(struct mxt_world *w, mxt_fault_fn fn, void *arg);
/* Rank r's communicator. */
void mxt_comm(struct mxt_world *w, int r, struct mx_comm *c);
/* The next event number (shared with the hook's events). */
unsigned long mxt_seq(struct mxt_world *w);
/* Messages still queued. */
size_t mxt_queued(struct mxt_world *w);
/* How many bytes MXT_GROW appends (zeros; the envelope's length is not changed). */
void mxt_set_grow(struct mxt_world *w, size_t bytes);
/* Takes that refused a message longer than their max_len. */
unsigned long mxt_refused(struct mxt_world *w);

/* --- a stand-in measurement (struct mx_measure) and endpoint table for the protocol's tests ------- */

#include "matrix/mx_round.h"

#define MXT_MAX_EPS 72

/* Writer: sends a fresh value V, then 2V+1, over the pair's side channel; the target answers V (0
 * when the second is not 2V+1: a duplicate or stale message was taken) and its device;
 * the writer's result is ok at V Gb/s, recorded in written[src][dst] (so a result that reaches rank
 * 0 from another pair, round or run shows). A side channel that fails: RP_ST_PEER_LOST. */
struct mxt_fake {
	struct mx_measure measure;
	unsigned long next_v;
	double written[MXT_MAX_EPS][MXT_MAX_EPS];
};

void mxt_fake_init(struct mxt_fake *f);
/* n endpoints, endpoint e on node "n<e>", device "dev<e>" port 1, owned by rank e. */
void mxt_eps(struct mx_ep *eps, size_t n);

#endif
