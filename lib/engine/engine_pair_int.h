/* engine_pair_int.h: one side of a pair, shared by its phases (engine_pair.c, engine_pair_conn.c);
 * private to lib/engine. */
#ifndef RP_ENGINE_PAIR_INT_H
#define RP_ENGINE_PAIR_INT_H

#include <stdbool.h>

#include "engine/engine.h"
#include "engine/engine_int.h"

struct ctr_watch;
struct reverse_dir;

struct pair_ctx {
	struct rp_engine_cfg cfg;         /* the target's adopts the writer's measure part */
	enum rp_engine_role role;
	bool writer;
	const struct rp_engine_port *local;
	struct rp_oob *oob;
	unsigned pass;
	struct rp_pair_result *res;       /* this side's own view until finish() */
	struct rp_engine_ep *ep;
	struct rp_engine_msg theirs;      /* the peer's last message */
	struct rp_engine_msg pending;     /* a message the peer sent while this side waited */
	bool have_pending;
	bool peer_failed;                 /* the peer reported a failure it saw itself */
	enum rp_status peer_status;
	char peer_reason[256];
	struct ctr_watch *ctr;            /* port counters: the "before" snapshot, taken before READY */
	/* --bidir: the multiplexer both directions share (NULL otherwise), this direction's channel (0
	 * forward, 1 reverse) and, in the forward one, the reverse direction's thread */
	struct rp_engine_mux *mux;
	unsigned dir;
	struct reverse_dir *rev;
	struct rp_engine_side_info *info; /* what the MTU probe needs to know of this sequence */
	struct rp_engine_hold *hold;      /* a connection held before or to hold after (NULL none) */
	bool reused;                      /* this sequence runs on the held endpoint */
};

/* engine_pair.c. The peer's message m, when it reports a failure the peer saw itself: kept as its view. */
void rp_side_note_peer(struct pair_ctx *c, const struct rp_engine_msg *m);
/* Either side failed so far. */
bool rp_side_failed(const struct pair_ctx *c);
/* Send mine (when send), then receive the peer's message of the same type (when recv) into
 * c->theirs, by deadline. A broken channel is PEER_LOST in c->res, unless a side failed before. */
int rp_side_exchange(struct pair_ctx *c, const struct rp_engine_msg *mine, bool send, bool recv, double deadline);
/* The one stop check between phases: true (and c->res INTERRUPTED unless failed) after a stop. */
bool rp_side_stop_check(struct pair_ctx *c);
/* --bidir, on the side that learns it writes too: the side channel behind a multiplexer and the
 * reverse direction started. 0, or a negative errno with c->res failed. */
int rp_side_reverse_start(struct pair_ctx *c);

/* engine_pair_conn.c. CONN both ways (the writer's first: the target adopts its measure part; a
 * held endpoint offered and accepted, or a fresh one created), then the seed both sides derive. 0,
 * or negative when a side failed (c->res, or the peer's view, says why). */
int rp_side_phase_conn(struct pair_ctx *c);
/* INIT/RTR/RTS (or librdmacm; nothing on a held endpoint), the target's receive, READY both ways.
 * 0, or -ECANCELED when a side failed. */
int rp_side_phase_connect(struct pair_ctx *c);

#endif
