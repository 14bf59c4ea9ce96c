/* engine_pair.c: one side of a pair as a sequence of phases over one context; see engine.h.
 *
 *   phase_conn     the writer's connection info first (the target adopts its measure part), then the
 *                  target's; the endpoint is created in between (engine_pair_conn.c)
 *   (counters)     each side's "before" snapshot of its own port counters, before READY
 *   phase_connect  INIT/RTR/RTS (or librdmacm), the target's receive, READY both ways (engine_pair_conn.c)
 *   (counters)     the "after" snapshot when the run ends; delta and judgement (--max-errors) in res
 *   phase_run      the writer writes (reporting progress), the target waits and checks
 *   phase_results  the writer's measurement and the target's verification (and each side's counters),
 *                  both ways
 *   finish         the first cause: the pair's status is what failed first, whichever side saw it
 *
 * Every message carries the sender's OWN view (what it saw itself); each side keeps its own in res
 * and the peer's in the context until finish() combines them, so both sides reach the same verdict.
 */
#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine/engine_pair_int.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/sanitize.h"
#include "base/stop.h"
#include "base/util.h"

/* Remember a failure the peer reported (its own view). */
void rp_side_note_peer(struct pair_ctx *c, const struct rp_engine_msg *m)
{
	if (m->status == RP_ST_OK || c->peer_failed)
		return;
	c->peer_failed = true;
	c->peer_status = (enum rp_status)m->status;
	rp_strlcpy(c->peer_reason, m->reason, sizeof(c->peer_reason));
}

/* Either side failed so far. */
bool rp_side_failed(const struct pair_ctx *c)
{
	return rp_engine_res_failed(c->res) || c->peer_failed;
}

/* Receive the peer's message of mine's type (PROGRESS reports left over from the run are skipped). */
static int recv_msg(struct pair_ctx *c, enum rp_msg_type type, double deadline, char *why, size_t why_len)
{
	for (;;) {
		int rc = rp_oob_recv(c->oob, &c->theirs, sizeof(c->theirs), deadline);

		if (rc)
			return rc;
		rc = rp_engine_msg_validate(&c->theirs, sizeof(c->theirs), type, why, why_len);
		if (rc)
			return rc == -ETIMEDOUT ? -EBADMSG : rc;
		if (c->theirs.type != RP_MSG_PROGRESS)
			return 0;
	}
}

/* Send mine (when send), then receive the peer's message of the same type (when recv). A broken
 * channel is PEER_LOST, unless a side failed before: then the failure is the result and the peer
 * may have gone because of it. */
int rp_side_exchange(struct pair_ctx *c, const struct rp_engine_msg *mine, bool send, bool recv, double deadline)
{
	char why[160] = "";
	bool failed_before = rp_side_failed(c);
	int rc = 0, src = 0;

	if (send)
		src = rp_oob_send(c->oob, mine, sizeof(*mine), deadline);
	/* even when the send failed, the peer's message may be waiting (it said why it went) */
	if (recv)
		rc = recv_msg(c, (enum rp_msg_type)mine->type, deadline, why, sizeof(why));
	if (!rc && recv)
		rp_side_note_peer(c, &c->theirs);
	if (!rc)
		rc = src;
	if (!rc || failed_before || (recv && c->peer_failed))
		return rc;
	if (rp_stop_requested()) {
		/* a wait cut short by this process's own stop says nothing about the peer */
		rp_pair_result_fail(c->res, RP_ST_INTERRUPTED, "stopped by signal %d while waiting for %s",
				    rp_stop_signal(), c->oob->peer);
		return rc;
	}
	if (why[0])
		rp_pair_result_fail(c->res, RP_ST_PEER_LOST, "bad message from %s: %s", c->oob->peer, why);
	else if (rc == -ETIMEDOUT)
		rp_pair_result_fail(c->res, RP_ST_PEER_LOST, "peer %s did not answer within the deadline", c->oob->peer);
	else
		rp_pair_result_fail(c->res, RP_ST_PEER_LOST, "side channel to %s: %s", c->oob->peer, strerror(-rc));
	rp_error(rc, "%s", c->res->reason);
	return rc;
}

/* The one stop check between phases. */
bool rp_side_stop_check(struct pair_ctx *c)
{
	if (!rp_stop_requested())
		return false;
	if (!rp_engine_res_failed(c->res))
		rp_pair_result_fail(c->res, RP_ST_INTERRUPTED, "stopped by signal %d before the pair finished",
				    rp_stop_signal());
	return true;
}

static int pair_run_side(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
			 struct rp_oob *oob, unsigned pass, struct rp_pair_result *res, struct rp_engine_mux *mux,
			 unsigned dir, struct rp_engine_side_info *info, struct rp_engine_hold *hold);

/* --bidir: the reverse direction of this side (the target of the reverse on the writer's side, its
 * writer on the target's side), a whole pair sequence in a thread of its own on channel 1. */
struct reverse_dir {
	struct rp_engine_cfg cfg;
	enum rp_engine_role role;
	const struct rp_engine_port *local;
	struct rp_engine_mux *mux;
	unsigned pass;
	struct rp_pair_result res;
	pthread_t tid;
};

static void *reverse_main(void *arg)
{
	struct reverse_dir *r = arg;

	pair_run_side(&r->cfg, r->role, r->local, rp_engine_mux_chan(r->mux, 1), r->pass, &r->res, r->mux, 1, NULL, NULL);
	rp_engine_mux_gone(r->mux, 1);
	return NULL;
}

/* Put the side channel behind the multiplexer (this direction on channel 0) and start the reverse.
 * The reverse is not bidir itself, reads no port counters (the forward one reads them for both) and
 * uses this side's memory kind for its buffer. 0, or a negative errno with res failed. */
int rp_side_reverse_start(struct pair_ctx *c)
{
	struct reverse_dir *r;
	int rc = rp_engine_mux_open(c->oob, &c->mux);

	if (rc) {
		rp_pair_result_fail(c->res, RP_ST_SETUP, "--bidir: side channel for the reverse direction: %s",
				    strerror(-rc));
		return rc;
	}
	c->oob = rp_engine_mux_chan(c->mux, 0);
	c->dir = 0;
	r = calloc(1, sizeof(*r));
	if (!r) {
		rp_pair_result_fail(c->res, RP_ST_SETUP, "--bidir: out of memory for the reverse direction");
		return rp_error(-ENOMEM, "%s", c->res->reason);
	}
	r->cfg = c->cfg;
	r->cfg.meas.bidir = 0;
	r->cfg.sysfs_root = "";
	if (c->writer)
		r->cfg.dst_mem = c->cfg.src_mem;
	else
		r->cfg.src_mem = c->cfg.dst_mem;
	r->role = c->writer ? RP_ROLE_TARGET : RP_ROLE_WRITER;
	r->local = c->local;
	r->mux = c->mux;
	r->pass = c->pass;
	rc = pthread_create(&r->tid, NULL, reverse_main, r);
	if (rc) {
		free(r);
		rp_pair_result_fail(c->res, RP_ST_SETUP, "--bidir: pthread_create for the reverse direction: %s",
				    strerror(rc));
		return rp_error(-rc, "%s", c->res->reason);
	}
	c->rev = r;
	return 0;
}

/* The forward direction ended: wait for the reverse, keep its outcome in res->reverse, fold. */
static void reverse_end(struct pair_ctx *c)
{
	if (!c->mux || c->dir != 0)
		return;
	rp_engine_mux_gone(c->mux, 0);
	if (c->rev) {
		pthread_join(c->rev->tid, NULL);
		rp_pair_reverse_store(c->res, &c->rev->res);
		rp_pair_reverse_fold(c->res);
		free(c->rev);
		c->rev = NULL;
	}
	rp_engine_mux_free(c->mux);
	c->mux = NULL;
}

/* Port counters around the run: this side's own port (each side reads its own; the target's travel
 * back in RESULT). Heap storage: two snapshots and a delta are ~50 KiB. */
struct ctr_watch {
	struct rp_ctr_snapshot before, after;
	struct rp_ctr_delta delta;
	struct rp_ctr_judgement j;
};

static const char *ctr_root(const struct pair_ctx *c)
{
	return c->cfg.sysfs_root ? c->cfg.sysfs_root : "/sys";
}

/* Take the "before" snapshot; NULL when there is nothing to read (no sysfs, no such port: the
 * side's counters stay "not measured"). */
static struct ctr_watch *ctr_begin(const struct pair_ctx *c)
{
	struct ctr_watch *w;

	if (!ctr_root(c)[0])
		return NULL;
	w = malloc(sizeof(*w));
	if (!w) {
		rp_error(-ENOMEM, "port counters of %s port %d: out of memory", c->local->device, c->local->port);
		return NULL;
	}
	if (rp_ctr_snapshot(ctr_root(c), c->local->device, c->local->port, &w->before) != 0) {
		free(w);
		return NULL;
	}
	return w;
}

/* The payload the measurement put on this side's port: the writer's measured bytes (or what it was
 * told to write), warm-up included; twice that when both ends are this port. */
static uint64_t ctr_expected(const struct pair_ctx *c, uint64_t *judged)
{
	const struct rp_engine_meas *m = &c->cfg.meas;
	uint64_t planned = m->msg_size * (m->iters + m->warmup_iters);
	uint64_t bytes = c->writer && c->res->bytes ? c->res->bytes + m->msg_size * m->warmup_iters : planned;
	bool same = strcmp(c->res->src.device, c->res->dst.device) == 0 && c->res->src.port == c->res->dst.port &&
		    strcmp(c->res->src.node, c->res->dst.node) == 0;

	*judged = c->writer && c->res->bytes ? c->res->bytes : m->msg_size * m->iters;
	if (m->bidir) {
		/* both directions cross the port at once, as much again (the reverse's is the same plan) */
		bytes *= 2;
		*judged *= 2;
	}
	return m->mode == RP_MODE_BW ? (same ? 2 * bytes : bytes) : 0;
}

/* Take the "after" snapshot, compare, judge, and keep the compact form in this side's result. */
static void ctr_end(struct pair_ctx *c, struct ctr_watch *w)
{
	struct rp_pair_ctr_side *side = c->writer ? &c->res->counters.src : &c->res->counters.dst;
	uint64_t judged, expected;

	if (!w)
		return;
	expected = ctr_expected(c, &judged);
	if (rp_ctr_snapshot(ctr_root(c), c->local->device, c->local->port, &w->after) == 0 &&
	    rp_ctr_delta(&w->before, &w->after, expected, &w->delta) == 0) {
		rp_ctr_judge(&w->delta, judged, &c->cfg.ctr_limits, &w->j);
		rp_ctr_side_fill(&w->delta, &w->j, side);
	}
	free(w);
}

static void phase_run(struct pair_ctx *c)
{
	struct rp_engine_ep *ep = c->ep;
	int rc;

	ep->oob = c->oob;
	ep->pending = &c->pending;
	ep->have_pending = &c->have_pending;
	/* --bidir: the writer starts when this side's other direction is connected too (the target
	 * only says it is) */
	if (c->mux)
		rp_engine_mux_gate(c->mux, c->dir, c->writer ? rp_now() + c->cfg.timeout_s : 0);
	if (rp_side_stop_check(c))
		return;
	if (c->writer)
		rc = rp_engine_run_writer(ep, ep->seed, c->res);
	else
		rc = rp_engine_target_run(ep, ep->seed, c->oob, 0, c->res);
	ctr_end(c, c->ctr);
	c->ctr = NULL;
	if (rc == RP_ENGINE_PEER_FAILED)
		rp_side_note_peer(c, &c->pending);   /* the peer failed and said why; answer all the same */
	else if (rc == 0)
		c->res->status = RP_ST_OK;
}

/* The result fields that travel, and which side measured them: the writer the rates and latency,
 * the target the verification. One table for both directions. */
enum result_source { FROM_WRITER, FROM_TARGET };

#define WIRE_SIZE(f) sizeof(((struct rp_wire_result *)0)->f)
#define RES_SIZE(f) sizeof(((struct rp_pair_result *)0)->f)
/* the size, and a compile error (an array of size -1) when the two fields differ in size */
#define RESULT_FIELD(wire, res, from) \
	{ offsetof(struct rp_wire_result, wire), offsetof(struct rp_pair_result, res), \
	  WIRE_SIZE(wire) * sizeof(char[WIRE_SIZE(wire) == RES_SIZE(res) ? 1 : -1]), from }
static const struct result_field {
	size_t wire_off, res_off, size;
	enum result_source from;
} result_fields[] = {
	RESULT_FIELD(gbps, gbps, FROM_WRITER),
	RESULT_FIELD(gbps_min, gbps_min, FROM_WRITER),
	RESULT_FIELD(gbps_min_at_s, gbps_min_at_s, FROM_WRITER),
	RESULT_FIELD(bytes, bytes, FROM_WRITER),
	RESULT_FIELD(iters, iters, FROM_WRITER),
	RESULT_FIELD(lat_measured, lat.measured, FROM_WRITER),
	RESULT_FIELD(lat_samples, lat.samples, FROM_WRITER),
	RESULT_FIELD(lat_min_us, lat.min_us, FROM_WRITER),
	RESULT_FIELD(lat_median_us, lat.median_us, FROM_WRITER),
	RESULT_FIELD(lat_p99_us, lat.p99_us, FROM_WRITER),
	RESULT_FIELD(lat_max_us, lat.max_us, FROM_WRITER),
	RESULT_FIELD(verified, verified, FROM_TARGET),
	RESULT_FIELD(bad_offset, bad_offset, FROM_TARGET),
	RESULT_FIELD(ctr_src, counters.src, FROM_WRITER),
	RESULT_FIELD(ctr_dst, counters.dst, FROM_TARGET),
};
#undef RESULT_FIELD
#undef RES_SIZE
#undef WIRE_SIZE

/* This side's result into the wire form (every field: the peer takes what this side measured). */
static void wire_from_result(const struct rp_pair_result *r, struct rp_wire_result *w)
{
	for (size_t i = 0; i < RP_ARRAY_SIZE(result_fields); i++)
		memcpy((char *)w + result_fields[i].wire_off, (const char *)r + result_fields[i].res_off,
		       result_fields[i].size);
}

/* Take from the peer's result what the peer measured. */
static void merge_results(const struct pair_ctx *c, const struct rp_wire_result *peer)
{
	enum result_source theirs = c->writer ? FROM_TARGET : FROM_WRITER;

	if (c->writer && peer->bad_offset >= (int64_t)c->cfg.meas.msg_size)
		return;   /* an offset outside the buffer: nothing of it can be trusted */
	for (size_t i = 0; i < RP_ARRAY_SIZE(result_fields); i++)
		if (result_fields[i].from == theirs)
			memcpy((char *)c->res + result_fields[i].res_off, (const char *)peer + result_fields[i].wire_off,
			       result_fields[i].size);
}

static void phase_results(struct pair_ctx *c)
{
	struct rp_engine_msg mine;
	/* the writer's result goes out when its final write completed; the target may still wait up to its
	 * --timeout for that write's receive, then answers: the writer waits for that too, at most twice
	 * its own --timeout (a peer cannot make it wait longer) */
	double peer_t = c->writer ? 4 * c->ep->peer.progress_s : 0;
	double wait = c->cfg.timeout_s + (peer_t < c->cfg.timeout_s ? peer_t : c->cfg.timeout_s);
	int rc;

	rp_engine_msg_init(&mine, RP_MSG_RESULT, c->res);
	wire_from_result(c->res, &mine.u.result);
	if (c->writer)
		mine.u.result.completed = c->ep->done;
	if (c->have_pending) {
		c->theirs = c->pending;
		c->have_pending = false;
		rc = rp_side_exchange(c, &mine, true, false, rp_now() + wait);
	} else {
		rc = rp_side_exchange(c, &mine, true, true, rp_now() + wait);
	}
	if (rc)
		return;
	rp_side_note_peer(c, &c->theirs);
	if (!c->writer && c->info) {
		c->info->completed = c->theirs.u.result.completed;
		c->info->completed_known = true;
	}
	if (c->theirs.status == RP_ST_OK || c->theirs.status == RP_ST_DATA_MISMATCH)
		merge_results(c, &c->theirs.u.result);
}

/* A failure that follows from another: a flushed queue, a side channel that broke. */
static bool is_consequence(enum rp_status st)
{
	return st == RP_ST_FLUSHED || st == RP_ST_PEER_LOST;
}

/* A transport error the writer sees when the target's QP went away (torn down after its failure). */
static bool is_transport(enum rp_status st)
{
	switch (st) {
	case RP_ST_RETRY_EXCEEDED: case RP_ST_RNR_RETRY: case RP_ST_REMOTE_ACCESS: case RP_ST_REMOTE_INVALID:
	case RP_ST_REMOTE_OP: case RP_ST_REMOTE_ABORT: case RP_ST_BAD_RESPONSE: case RP_ST_COMPLETION_ERROR:
		return true;
	default:
		return false;
	}
}

bool rp_engine_target_first(enum rp_status w, enum rp_status t)
{
	if (is_consequence(w) != is_consequence(t))
		return is_consequence(w);
	if ((w == RP_ST_PORT_DOWN) != (t == RP_ST_PORT_DOWN))
		return t == RP_ST_PORT_DOWN;   /* a port that went down explains the other side's time-out */
	return is_transport(w) && !is_transport(t);
}

/* The first cause wins: combine this side's view (res) with the peer's into the pair's result. */
static void finish(struct pair_ctx *c)
{
	struct rp_pair_result *res = c->res;
	bool mine = rp_engine_res_failed(res);
	enum rp_side me = c->writer ? RP_SIDE_SRC : RP_SIDE_DST, them = c->writer ? RP_SIDE_DST : RP_SIDE_SRC;
	bool peer_first;

	res->secondary.status = RP_ST_OK;
	res->secondary.reason[0] = '\0';
	res->cause_side = RP_SIDE_NONE;
	if (!mine && !c->peer_failed) {
		res->status = RP_ST_OK;
		res->reason[0] = '\0';
		return;
	}
	if (mine && !c->peer_failed) {
		res->cause_side = me;
		return;
	}
	peer_first = !mine || (c->writer ? rp_engine_target_first(res->status, c->peer_status)
					 : !rp_engine_target_first(c->peer_status, res->status));
	if (!peer_first) {
		res->cause_side = me;
		res->secondary.status = c->peer_status;
		rp_str_sanitize_copy(res->secondary.reason, sizeof(res->secondary.reason), c->peer_reason);
		return;
	}
	if (mine) {
		res->secondary.status = res->status;
		rp_str_sanitize_copy(res->secondary.reason, sizeof(res->secondary.reason), res->reason);
	}
	res->status = c->peer_status;
	rp_strlcpy(res->reason, c->peer_reason, sizeof(res->reason));
	res->cause_side = them;
}

/* This side's endpoint as far as it is known before the device opens. */
static void local_endpoint(const struct rp_engine_port *local, struct rp_endpoint *me)
{
	memset(me, 0, sizeof(*me));
	rp_str_sanitize_copy(me->device, sizeof(me->device), local->device);
	if (local->node)
		rp_str_sanitize_copy(me->node, sizeof(me->node), local->node);
	else if (gethostname(me->node, sizeof(me->node) - 1) != 0)
		rp_strlcpy(me->node, "localhost", sizeof(me->node));
	else
		rp_str_sanitize(me->node);
	me->port = local->port;
	me->gid_index = local->gid_index;
}

/* After the sequence: its endpoint held for the next one when asked and the pair passed, else
 * released (and so is a held one the sequence did not use). */
static void hold_end(struct pair_ctx *c)
{
	if (!c->hold) {
		rp_engine_ep_destroy(c->ep);
		return;
	}
	rp_engine_hold_release(c->hold);
	c->hold->reused = c->reused;
	if (c->hold->keep && c->ep && c->res->status == RP_ST_OK && !c->cfg.meas.bidir && !c->cfg.cm)
		c->hold->ep = c->ep;
	else
		rp_engine_ep_destroy(c->ep);
	c->ep = NULL;
}

void rp_engine_hold_release(struct rp_engine_hold *hold)
{
	if (!hold)
		return;
	rp_engine_ep_destroy(hold->ep);
	hold->ep = NULL;
}

/* The phases of one side, without the attempt record. mux/dir: a direction of a --bidir pair (the
 * reverse's thread); NULL/0 otherwise, and the forward direction of a bidir pair makes its own. */
static int pair_run_side(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
			 struct rp_oob *oob, unsigned pass, struct rp_pair_result *res, struct rp_engine_mux *mux,
			 unsigned dir, struct rp_engine_side_info *info, struct rp_engine_hold *hold)
{
	struct pair_ctx c = { .cfg = *cfg, .role = role, .writer = role == RP_ROLE_WRITER, .local = local,
			      .oob = oob, .pass = pass, .res = res, .mux = mux, .dir = dir, .info = info,
			      .hold = hold };
	double t0 = rp_now();
	bool ran = false;

	rp_pair_result_init(res, NULL, NULL);
	if (info)
		memset(info, 0, sizeof(*info));
	local_endpoint(local, c.writer ? &res->src : &res->dst);
	if (c.writer && c.cfg.meas.bidir && !mux)
		rp_side_reverse_start(&c);
	/* the "before" snapshot precedes READY: no write of this pair has been posted by either side yet */
	if (!rp_side_stop_check(&c) && rp_side_phase_conn(&c) == 0 && (c.ctr = ctr_begin(&c), rp_side_phase_connect(&c) == 0)) {
		ran = true;
		phase_run(&c);
		phase_results(&c);
	}
	free(c.ctr);
	if (info) {
		info->meas = c.cfg.meas;
		/* only a pair whose QPs connected and whose run started can be a black hole: one that never
		 * connected (no CM event, no READY) is not probed, on either side (the target learns the
		 * count only from RESULT, after the run) */
		if (c.writer && c.ep && ran) {
			info->completed = c.ep->done;
			info->completed_known = true;
		}
	}
	finish(&c);
	hold_end(&c);
	reverse_end(&c);
	res->elapsed_s = rp_now() - t0;
	return res->status == RP_ST_OK ? 0 : 1;
}

int rp_engine_side_run(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
		       struct rp_oob *oob, unsigned pass, struct rp_engine_hold *hold, struct rp_pair_result *res,
		       struct rp_engine_side_info *info)
{
	return pair_run_side(cfg, role, local, oob, pass, res, NULL, 0, info, hold);
}

/* One side (on a held connection when hold allows), then the MTU probe when the pair moved nothing
 * (engine_mtucheck.c: fresh sequences of its own). */
int rp_engine_side_run_mtucheck(const struct rp_engine_cfg *cfg, enum rp_engine_role role,
			      const struct rp_engine_port *local, struct rp_oob *oob, unsigned pass,
			      struct rp_engine_hold *hold, struct rp_pair_result *res)
{
	struct rp_engine_side_info info;
	double t0 = rp_now();
	int rc = rp_engine_side_run(cfg, role, local, oob, pass, hold, res, &info);

	if (!cfg->no_mtucheck && rp_engine_mtucheck_wanted(res, &info)) {
		rc = rp_engine_mtucheck_run(cfg, role, local, oob, pass, res);
		res->elapsed_s = rp_now() - t0;   /* the probe is part of the pair's time */
	}
	return rc;
}

int rp_engine_pair_run_held(const struct rp_engine_cfg *cfg, enum rp_engine_role role,
			    const struct rp_engine_port *local, struct rp_oob *oob, unsigned pass,
			    struct rp_engine_hold *hold, struct rp_pair_result *res)
{
	int rc = rp_engine_side_run_mtucheck(cfg, role, local, oob, pass, hold, res);

	rp_pair_result_record_attempt(res, cfg->qp.qp_timeout);
	return rc;
}

int rp_engine_pair_run(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
		       struct rp_oob *oob, unsigned pass, struct rp_pair_result *res)
{
	return rp_engine_pair_run_held(cfg, role, local, oob, pass, NULL, res);
}
