/* engine_cm.c: connection set-up with librdmacm (pair --cm, like perftest -R); see engine_int.h.
 *
 * The QPs stay the engine's own (created on its device context); librdmacm resolves the address and
 * route, carries the QP numbers in the CM exchange (conn_param.qp_num), and rdma_init_qp_attr()
 * gives the RTR and RTS attributes, which the engine applies with its own timeout and retry count.
 * Every wait polls the event channel's descriptor with a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine_int.h"
#include "base/log.h"
#include "base/stop.h"
#include "base/util.h"

#define CM_RESOLVE_MS 2000
#define OOB_PEEK_S 0.02

/* The IP address of a GID: IPv4-mapped GIDs give AF_INET, others AF_INET6. */
static void gid_sockaddr(const uint8_t gid[16], uint16_t port, struct sockaddr_storage *ss)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memset(ss, 0, sizeof(*ss));
	if (memcmp(gid, v4mapped, sizeof(v4mapped)) == 0) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, gid + 12, 4);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, gid, 16);
	}
}

static enum rp_status event_status(enum rdma_cm_event_type t)
{
	switch (t) {
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		return RP_ST_RESOLVE;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return RP_ST_RTR;
	case RDMA_CM_EVENT_DISCONNECTED:
		return RP_ST_PEER_LOST;
	default:
		return RP_ST_SETUP;
	}
}

static int cm_channel(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	int flags;

	if (ep->cm_ch)
		return 0;
	ep->cm_ch = rdma_create_event_channel();
	if (!ep->cm_ch)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, errno ? -errno : -ENODEV, "rdma_create_event_channel");
	flags = fcntl(ep->cm_ch->fd, F_GETFL);
	if (flags < 0 || fcntl(ep->cm_ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, -errno, "make the CM channel non-blocking");
	return 0;
}

/* Wait for the next CM event until deadline; it must be want. *ev_p is to be acked by the caller.
 * With oob, a message from the peer (kept in *pending) that reports a failure ends the wait (1). */
static int cm_wait(struct rp_engine_ep *ep, enum rdma_cm_event_type want, double deadline, struct rp_oob *oob,
		   struct rp_engine_msg *pending, bool *have_pending, struct rdma_cm_event **ev_p,
		   struct rp_pair_result *res)
{
	*ev_p = NULL;
	for (;;) {
		struct pollfd pfd = { .fd = ep->cm_ch->fd, .events = POLLIN };
		double left = deadline - rp_now();
		int ms = left <= 0 ? 0 : (int)((left < OOB_PEEK_S ? left : OOB_PEEK_S) * 1000) + 1;

		if (rdma_get_cm_event(ep->cm_ch, ev_p) == 0) {
			struct rdma_cm_event *ev = *ev_p;

			if (ev->event == want)
				return 0;
			rp_pair_result_fail(res, event_status(ev->event), "rdma_cm on %s port %d: %s (status %d%s%s), expected %s",
					    ep->device, ep->port, rdma_event_str(ev->event), ev->status,
					    ev->status < 0 ? ": " : "", ev->status < 0 ? strerror(-ev->status) : "",
					    rdma_event_str(want));
			rdma_ack_cm_event(ev);
			*ev_p = NULL;
			return rp_error(-ECONNREFUSED, "%s", res->reason);
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, -errno, "rdma_get_cm_event");
		if (rp_stop_requested()) {
			rp_pair_result_fail(res, RP_ST_INTERRUPTED, "stopped by signal %d on %s port %d while waiting for %s",
					    rp_stop_signal(), ep->device, ep->port, rdma_event_str(want));
			return rp_error(-EINTR, "%s", res->reason);
		}
		if (oob && !*have_pending) {
			int rc = rp_engine_peek_oob(oob, RP_MSG_READY, 0, pending, res);

			if (rc < 0)
				return rc;
			if (rc == 1) {
				*have_pending = true;
				if (pending->status != RP_ST_OK)
					return RP_ENGINE_PEER_FAILED;
			}
		}
		if (left <= 0) {
			rp_pair_result_fail(res, RP_ST_TIMEOUT, "rdma_cm on %s port %d: no %s within the deadline",
					    ep->device, ep->port, rdma_event_str(want));
			return rp_error(-ETIMEDOUT, "%s", res->reason);
		}
		poll(&pfd, 1, ms);
	}
}

/* Move qp to state with librdmacm's attributes; the ACK timeout and retry count are the probe's. */
static int cm_move_qp(struct rp_engine_ep *ep, struct rdma_cm_id *id, struct ibv_qp *qp, enum ibv_qp_state state,
		      struct rp_pair_result *res)
{
	struct ibv_qp_attr attr = { .qp_state = state };
	int mask = 0, rc;
	char what[96];

	snprintf(what, sizeof(what), "rdma_init_qp_attr for qp 0x%x (%s)", qp->qp_num, state == IBV_QPS_RTR ? "RTR" : "RTS");
	if (rdma_init_qp_attr(id, &attr, &mask) != 0)
		return rp_engine_ep_fail(ep, res, state == IBV_QPS_RTR ? RP_ST_RTR : RP_ST_RTS, -errno, what);
	if (state == IBV_QPS_RTS) {
		attr.timeout = (uint8_t)ep->cfg.qp.qp_timeout;
		attr.retry_cnt = (uint8_t)ep->cfg.qp.retry_cnt;
		attr.rnr_retry = (uint8_t)ep->cfg.qp.rnr_retry;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY;
	} else {
		attr.min_rnr_timer = 12;
		mask |= IBV_QP_MIN_RNR_TIMER;
	}
	rc = ibv_modify_qp(qp, &attr, mask);
	if (rc) {
		snprintf(what, sizeof(what), "modify qp 0x%x to %s (rdma_cm attributes)", qp->qp_num,
			 state == IBV_QPS_RTR ? "RTR" : "RTS");
		return rp_engine_ep_fail(ep, res, state == IBV_QPS_RTR ? RP_ST_RTR : RP_ST_RTS, -rc, what);
	}
	return 0;
}

int rp_engine_cm_listen(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	struct sockaddr_storage ss;
	int rc = cm_channel(ep, res);

	if (rc)
		return rc;
	if (rdma_create_id(ep->cm_ch, &ep->cm_listen, ep, RDMA_PS_TCP) != 0)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, -errno, "rdma_create_id");
	gid_sockaddr(ep->gid.raw, 0, &ss);
	if (rdma_bind_addr(ep->cm_listen, (struct sockaddr *)&ss) != 0)
		return rp_engine_ep_fail(ep, res, RP_ST_RESOLVE, -errno, "rdma_bind_addr to the port's GID address");
	if (rdma_listen(ep->cm_listen, RP_ENGINE_MAX_QPS) != 0)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, -errno, "rdma_listen");
	ep->cm_port = ntohs(rdma_get_src_port(ep->cm_listen));
	return 0;
}

int rp_engine_cm_connect(struct rp_engine_ep *ep, const struct rp_conn_info *peer, struct rp_oob *oob,
			 double deadline, struct rp_engine_msg *pending, bool *have_pending, struct rp_pair_result *res)
{
	struct sockaddr_storage src, dst;
	int rc = cm_channel(ep, res);

	if (rc)
		return rc;
	if (peer->cm_port == 0) {
		rp_pair_result_fail(res, RP_ST_SETUP, "the peer does not listen for rdma_cm (no --cm there?)");
		return rp_error(-EPROTO, "%s", res->reason);
	}
	ep->peer = *peer;
	gid_sockaddr(ep->gid.raw, 0, &src);
	gid_sockaddr(peer->gid, (uint16_t)peer->cm_port, &dst);
	for (unsigned i = 0; i < ep->n_qps; i++) {
		struct rdma_conn_param param = {
			.responder_resources = 1, .initiator_depth = 1, .retry_count = (uint8_t)ep->cfg.qp.retry_cnt,
			.rnr_retry_count = (uint8_t)ep->cfg.qp.rnr_retry, .qp_num = ep->qps[i]->qp_num,
		};
		uint8_t idx = (uint8_t)i;
		struct rdma_cm_event *ev;

		param.private_data = &idx;
		param.private_data_len = 1;
		if (rdma_create_id(ep->cm_ch, &ep->cm_ids[i], ep, RDMA_PS_TCP) != 0)
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, -errno, "rdma_create_id");
		if (rdma_resolve_addr(ep->cm_ids[i], (struct sockaddr *)&src, (struct sockaddr *)&dst, CM_RESOLVE_MS) != 0)
			return rp_engine_ep_fail(ep, res, RP_ST_RESOLVE, -errno, "rdma_resolve_addr");
		rc = cm_wait(ep, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, oob, pending, have_pending, &ev, res);
		if (rc)
			return rc;
		rdma_ack_cm_event(ev);
		if (rdma_resolve_route(ep->cm_ids[i], CM_RESOLVE_MS) != 0)
			return rp_engine_ep_fail(ep, res, RP_ST_RESOLVE, -errno, "rdma_resolve_route");
		rc = cm_wait(ep, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, oob, pending, have_pending, &ev, res);
		if (rc)
			return rc;
		rdma_ack_cm_event(ev);
		if (rdma_connect(ep->cm_ids[i], &param) != 0)
			return rp_engine_ep_fail(ep, res, RP_ST_RTR, -errno, "rdma_connect");
		rc = cm_wait(ep, RDMA_CM_EVENT_CONNECT_RESPONSE, deadline, oob, pending, have_pending, &ev, res);
		if (rc)
			return rc;
		rdma_ack_cm_event(ev);
		rc = cm_move_qp(ep, ep->cm_ids[i], ep->qps[i], IBV_QPS_RTR, res);
		if (!rc)
			rc = cm_move_qp(ep, ep->cm_ids[i], ep->qps[i], IBV_QPS_RTS, res);
		if (rc)
			return rc;
		if (rdma_establish(ep->cm_ids[i]) != 0)
			return rp_engine_ep_fail(ep, res, RP_ST_RTS, -errno, "rdma_establish");
	}
	return 0;
}

int rp_engine_cm_accept(struct rp_engine_ep *ep, const struct rp_conn_info *peer, struct rp_oob *oob,
			double deadline, struct rp_engine_msg *pending, bool *have_pending, struct rp_pair_result *res)
{
	ep->peer = *peer;
	for (unsigned n = 0; n < ep->n_qps; n++) {
		struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1, .rnr_retry_count = 7 };
		struct rdma_cm_event *ev;
		struct rdma_cm_id *id;
		unsigned idx;
		int rc = cm_wait(ep, RDMA_CM_EVENT_CONNECT_REQUEST, deadline, oob, pending, have_pending, &ev, res);

		if (rc)
			return rc;
		id = ev->id;
		idx = ev->param.conn.private_data_len >= 1 ? *(const uint8_t *)ev->param.conn.private_data : 255;
		rdma_ack_cm_event(ev);
		if (idx >= ep->n_qps || ep->cm_ids[idx]) {
			rdma_reject(id, NULL, 0);
			rdma_destroy_id(id);
			rp_pair_result_fail(res, RP_ST_SETUP, "rdma_cm connection request for QP %u of %u", idx, ep->n_qps);
			return rp_error(-EPROTO, "%s", res->reason);
		}
		ep->cm_ids[idx] = id;
		rc = cm_move_qp(ep, id, ep->qps[idx], IBV_QPS_RTR, res);
		if (!rc)
			rc = cm_move_qp(ep, id, ep->qps[idx], IBV_QPS_RTS, res);
		if (rc)
			return rc;
		param.qp_num = ep->qps[idx]->qp_num;
		if (rdma_accept(id, &param) != 0)
			return rp_engine_ep_fail(ep, res, RP_ST_RTR, -errno, "rdma_accept");
		rc = cm_wait(ep, RDMA_CM_EVENT_ESTABLISHED, deadline, oob, pending, have_pending, &ev, res);
		if (rc)
			return rc;
		rdma_ack_cm_event(ev);
	}
	return 0;
}

void rp_engine_cm_destroy(struct rp_engine_ep *ep)
{
	for (unsigned i = 0; i < RP_ENGINE_MAX_QPS; i++) {
		if (ep->cm_ids[i]) {
			rdma_destroy_id(ep->cm_ids[i]);
			ep->cm_ids[i] = NULL;
		}
	}
	if (ep->cm_listen) {
		rdma_destroy_id(ep->cm_listen);
		ep->cm_listen = NULL;
	}
	if (ep->cm_ch) {
		rdma_destroy_event_channel(ep->cm_ch);
		ep->cm_ch = NULL;
	}
}
