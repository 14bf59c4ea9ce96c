/* engine_pair_conn.c: a pair side's connection (engine_pair_int.h): the CONN exchange, with the
 * offer of a held endpoint and its answer, and the connect that follows. */
#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine/engine_pair_int.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

/* The target: receive the writer's CONN and adopt its measure part, after the same validation as a
 * local configuration. -ECANCELED when the writer reported a failure, another negative errno when
 * this side failed (res says why; the writer is told). */
static int conn_receive_writer(struct pair_ctx *c)
{
	struct rp_engine_msg ask = { .type = RP_MSG_CONN };
	int rc = rp_side_exchange(c, &ask, false, true, rp_now() + c->cfg.timeout_s);

	if (c->peer_failed)
		return -ECANCELED;
	if (rc)
		return rc;
	rp_engine_meas_adopt(&c->cfg, &c->theirs.u.conn.meas);
	c->cfg.cm = c->theirs.u.conn.cm != 0;
	if (rp_engine_cfg_validate(&c->cfg)) {
		rp_pair_result_fail(c->res, RP_ST_SETUP, "the writer's settings are not valid here");
		return -EINVAL;
	}
	rp_engine_conn_endpoint(&c->theirs.u.conn, &c->res->src);
	if (c->cfg.meas.bidir && !c->mux)
		return rp_side_reverse_start(c);   /* this side writes too: the reverse direction's writer */
	return 0;
}

/* The held endpoint, taken out of the hold: NULL when there is none or it cannot run this sequence
 * (then it is released). */
static struct rp_engine_ep *held_take(struct pair_ctx *c)
{
	struct rp_engine_ep *h = c->hold ? c->hold->ep : NULL;

	if (!h)
		return NULL;
	c->hold->ep = NULL;
	if (!rp_engine_ep_fits(h, &c->cfg, c->role, c->local)) {
		rp_engine_ep_destroy(h);
		return NULL;
	}
	return h;
}

/* Is peer's info the other end of h's connection, and does it name h as its own (engine.h)? */
static bool held_match(const struct rp_engine_ep *h, const struct rp_conn_info *peer)
{
	if (!peer->held_qpn || peer->held_qpn != h->qps[0]->qp_num || peer->held_psn != h->psn[0] ||
	    peer->n_qps != h->n_qps || peer->n_qps != h->peer.n_qps)
		return false;
	for (uint32_t i = 0; i < peer->n_qps; i++)
		if (peer->qpn[i] != h->peer.qpn[i] || peer->psn[i] != h->peer.psn[i])
			return false;
	return true;
}

/* This side's CONN from its endpoint; for a held one (reused), naming the peer's QP it is connected to. */
static void conn_mine(struct pair_ctx *c, struct rp_engine_msg *mine, bool held)
{
	rp_engine_msg_init(mine, RP_MSG_CONN, c->res);
	if (!c->ep)
		return;
	rp_engine_ep_endpoint(c->ep, c->writer ? &c->res->src : &c->res->dst);
	rp_engine_ep_info(c->ep, c->cfg.meas.seed, &mine->u.conn);
	mine->u.conn.pass = c->pass;
	if (held) {
		mine->u.conn.held_qpn = c->ep->peer.qpn[0];
		mine->u.conn.held_psn = c->ep->peer.psn[0];
	}
}

/* The writer offers its held endpoint h: 1 the target accepted (c->ep is h), 0 it declined (h
 * released; its fresh info is in c->theirs), -ECANCELED a side failed. */
static int writer_offer(struct pair_ctx *c, struct rp_engine_ep *h)
{
	struct rp_engine_msg mine;

	rp_engine_ep_rearm(h, &c->cfg);
	c->ep = h;
	conn_mine(c, &mine, true);
	if (rp_side_exchange(c, &mine, true, true, rp_now() + c->cfg.timeout_s) || rp_side_failed(c))
		return -ECANCELED;   /* h is c->ep: the sequence's teardown releases it */
	if (held_match(h, &c->theirs.u.conn)) {
		c->reused = true;
		return 1;
	}
	c->ep = NULL;
	rp_engine_ep_destroy(h);
	return 0;
}

/* The target answers a writer's offer: accepted when its held endpoint h is the other end (c->ep is
 * h, 1), else declined (h released, 0). */
static int target_answer(struct pair_ctx *c, struct rp_engine_ep *h, const struct rp_conn_info *writer)
{
	if (!h)
		return 0;
	if (writer->held_qpn && held_match(h, writer)) {
		rp_engine_ep_rearm(h, &c->cfg);
		c->ep = h;
		c->reused = true;
		return 1;
	}
	rp_engine_ep_destroy(h);
	return 0;
}

static const struct rp_engine_meas *room(const struct pair_ctx *c)
{
	return c->hold && c->hold->keep ? c->hold->room : NULL;
}

/* The target's side of the CONN exchange: the writer's first (a fresh endpoint's, or an offer of
 * a held one), then its own; after an offer it declines, the writer's fresh one follows. */
static int conn_target(struct pair_ctx *c, struct rp_conn_info *writer_info)
{
	struct rp_engine_msg mine;
	bool offered, declined;
	int rc = conn_receive_writer(c);

	if (rc) {
		rp_engine_hold_release(c->hold);
		if (rc == -ECANCELED)
			return rc;
	}
	*writer_info = c->theirs.u.conn;
	offered = rc == 0 && writer_info->held_qpn != 0;
	/* whether the held endpoint fits is judged on the writer's settings, as adopted */
	if (rc == 0 && target_answer(c, held_take(c), writer_info) == 0)
		rc = rp_engine_ep_create_room(&c->cfg, c->role, c->local, room(c), c->res, &c->ep);
	if (!rc && c->cfg.cm)
		rc = rp_engine_cm_listen(c->ep, c->res);
	conn_mine(c, &mine, c->reused);
	declined = offered && !c->reused;
	if (rp_side_exchange(c, &mine, true, false, rp_now() + c->cfg.timeout_s) || rp_side_failed(c))
		return -ECANCELED;
	if (declined) {
		/* the writer drops its held endpoint and sends a fresh one's info, with the same settings
		 * (this side's endpoint was made for the offer's) */
		struct rp_engine_meas offer = writer_info->meas;

		if (conn_receive_writer(c))
			return -ECANCELED;
		if (c->theirs.u.conn.held_qpn || memcmp(&offer, &c->theirs.u.conn.meas, sizeof(offer)) != 0) {
			rp_pair_result_fail(c->res, RP_ST_PEER_LOST, "bad message from %s: a second offer, or settings "
					    "other than its first connection info's", c->oob->peer);
			rp_error(-EBADMSG, "%s", c->res->reason);
			return -ECANCELED;
		}
		*writer_info = c->theirs.u.conn;
	}
	return 0;
}

/* The writer's side: an offer of its held endpoint when it has one that fits; its fresh endpoint's
 * info otherwise or when the target declined, then the target's. */
static int conn_writer(struct pair_ctx *c)
{
	struct rp_engine_ep *h = held_take(c);
	struct rp_engine_msg mine;
	bool have_target = false;
	int rc = 0;

	if (h) {
		rc = writer_offer(c, h);
		if (rc < 0)
			return rc;
		if (rc == 1)
			return 0;
		have_target = true;   /* the target's fresh info came with its decline */
	}
	rc = rp_engine_ep_create_room(&c->cfg, c->role, c->local, room(c), c->res, &c->ep);
	conn_mine(c, &mine, false);
	if (rp_side_exchange(c, &mine, true, !have_target && !rc, rp_now() + c->cfg.timeout_s) || rp_side_failed(c))
		return -ECANCELED;
	return 0;
}

int rp_side_phase_conn(struct pair_ctx *c)
{
	struct rp_conn_info writer_info;
	int rc = c->writer ? conn_writer(c) : conn_target(c, &writer_info);

	if (rc)
		return rc;
	if (c->writer) {
		rp_engine_conn_endpoint(&c->theirs.u.conn, &c->res->dst);
		/* report progress often enough for the target's --timeout too (a quarter of it) */
		if (c->theirs.u.conn.progress_s > 0 && c->theirs.u.conn.progress_s < c->ep->progress_s)
			c->ep->progress_s = c->theirs.u.conn.progress_s;
	} else {
		c->theirs.u.conn = writer_info;
	}
	/* both sides derive the same seed: the writer's base and pass, both endpoints */
	c->ep->seed = rp_engine_seed(c->writer ? c->cfg.meas.seed : writer_info.meas.seed, &c->res->src, &c->res->dst,
				     c->writer ? c->pass : writer_info.pass);
	return 0;
}

int rp_side_phase_connect(struct pair_ctx *c)
{
	struct rp_engine_msg mine;
	const struct rp_conn_info *peer = &c->theirs.u.conn;
	struct rp_engine_ep *ep = c->ep;
	double ready_wait;
	int rc;

	if (c->reused)
		rc = 0;   /* connected to this very peer QP since the held sequence (held_match) */
	else if (!c->cfg.cm)
		rc = rp_engine_ep_connect(ep, peer, c->res);
	else if (c->writer)
		rc = rp_engine_cm_connect(ep, peer, c->oob, rp_now() + c->cfg.timeout_s, &c->pending, &c->have_pending,
					  c->res);
	else
		/* a second longer than the writer's own waits: when the writer's CM stalls, its time-out
		 * (the first cause) reaches the target before the target's wait for a request runs out */
		rc = rp_engine_cm_accept(ep, peer, c->oob, rp_now() + c->cfg.timeout_s + 1, &c->pending, &c->have_pending,
					 c->res);
	if (rc == RP_ENGINE_PEER_FAILED)
		rc = 0;   /* the peer failed to connect and said so while we waited: its message is pending */
	ep->peer = *peer;
	if (!rc && !c->writer && !(c->have_pending && c->pending.status != RP_ST_OK))
		rc = rp_engine_target_prepare(ep, c->res);
	rp_side_stop_check(c);
	rp_engine_msg_init(&mine, RP_MSG_READY, c->res);
	/* after a CM connect the target may still wait for ESTABLISHED until its own deadline, a second
	 * past the writer's: the writer waits a second more, so that the target's time-out (the first
	 * cause) reaches it rather than the writer's own silence ending first */
	ready_wait = c->cfg.timeout_s + (c->cfg.cm && c->writer ? 2 : 1);
	if (c->have_pending) {
		c->have_pending = false;
		rp_side_note_peer(c, &c->pending);
		rc = rp_side_exchange(c, &mine, true, false, rp_now() + ready_wait);
	} else {
		rc = rp_side_exchange(c, &mine, true, true, rp_now() + ready_wait);
	}
	return rc || rp_side_failed(c) ? -ECANCELED : 0;
}
