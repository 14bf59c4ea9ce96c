/* engine_ep.c: one endpoint (device, PD, CQs, RC QPs, buffer), its connection by hand (INIT, RTR,
 * RTS), and the checks every wait makes while nothing happens (stop request, port state); see
 * engine.h. Least privilege: the target's MR and QPs grant remote WRITE only, the writer's none (its
 * buffer is only read by its own adapter), except in the ping-pong where both sides are written. */
#include "engine/engine.h"
#include "engine/engine_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "discover/node.h"
#include "base/sanitize.h"
#include "base/stop.h"
#include "base/util.h"
#include "engine/verbs_ops.h"

/* Vendor ids of the software RDMA devices, whose port rate is nominal. */
#define RXE_VENDOR_ID 0xffffff
#define SIW_VENDOR_ID 0x626d74

static int mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

static enum ibv_mtu mtu_enum(uint32_t bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

static const char *role_name(enum rp_engine_role role)
{
	return role == RP_ROLE_WRITER ? "writer" : "target";
}

/* Find device by name and open it. NULL with res filled when it cannot. */
static struct ibv_context *open_device(const char *name, struct rp_pair_result *res)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0, i;

	list = ibv_get_device_list(&n);
	if (!list) {
		int err = errno ? errno : ENODEV;

		rp_error(-err, "ibv_get_device_list: %s", strerror(err));
		rp_pair_result_fail(res, RP_ST_SETUP, "ibv_get_device_list: %s", strerror(err));
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			break;
	if (i == n) {
		rp_error(-ENODEV, "no RDMA device '%s'", name);
		rp_pair_result_fail(res, RP_ST_SETUP, "no RDMA device '%s'", name);
	} else {
		ctx = ibv_open_device(list[i]);
		if (!ctx) {
			int err = errno ? errno : ENODEV;

			rp_error(-err, "ibv_open_device %s: %s", name, strerror(err));
			rp_pair_result_fail(res, RP_ST_SETUP, "ibv_open_device %s: %s", name, strerror(err));
		}
	}
	ibv_free_device_list(list);
	return ctx;
}

int rp_engine_ep_fail(struct rp_engine_ep *ep, struct rp_pair_result *res, enum rp_status st, int err,
		      const char *what)
{
	rp_error(err, "%s on %s port %d: %s", what, ep->device, ep->port, strerror(-err));
	rp_pair_result_fail(res, st, "%s on %s port %d: %s", what, ep->device, ep->port, strerror(-err));
	return err;
}

/* Is the port still ACTIVE? True also when it cannot be asked. */
static bool port_active(struct rp_engine_ep *ep, enum ibv_port_state *state_p)
{
	struct ibv_port_attr pa;

	memset(&pa, 0, sizeof(pa));
	if (rp_verbs_query_port(ep->ctx, (uint8_t)ep->port, &pa) != 0)
		return true;
	*state_p = pa.state;
	return pa.state == IBV_PORT_ACTIVE;
}

int rp_engine_wc_fail(struct rp_engine_ep *ep, const struct ibv_wc *wc, struct rp_pair_result *res)
{
	enum ibv_port_state state = IBV_PORT_ACTIVE;

	/* a port that went down explains the transport errors and flushes that follow */
	if (!port_active(ep, &state))
		rp_pair_result_fail(res, RP_ST_PORT_DOWN, "%s port %d left ACTIVE during the pair (state %s; completion on qp 0x%x: %s)",
				    ep->device, ep->port, ibv_port_state_str(state), wc->qp_num,
				    ibv_wc_status_str(wc->status));
	else
		rp_pair_result_fail(res, rp_engine_wc_status(wc->status),
				    "completion on qp 0x%x on %s port %d: %s (vendor error 0x%x)", wc->qp_num, ep->device,
				    ep->port, ibv_wc_status_str(wc->status), wc->vendor_err);
	rp_error(-EIO, "%s", res->reason);
	return -EIO;
}

int rp_engine_post_fail(struct rp_engine_ep *ep, int rc, const char *what, struct rp_pair_result *res)
{
	int err = rc > 0 ? rc : (rc < 0 ? -rc : EINVAL);

	return rp_engine_ep_fail(ep, res, RP_ST_SETUP, -err, what);
}

static int errno_or(int fallback)
{
	return errno ? -errno : fallback;
}

/* A software device (rxe, siw): by its vendor id, or, since kernels differ in the vendor id rxe
 * reports, by sysfs under root ("/sys" when NULL, "" = none): a device that sysfs lists without a
 * "device" link has no bus function behind it. A device that can say neither is taken as hardware. */
static bool is_soft_device(struct ibv_context *ctx, const char *name, const char *root)
{
	struct ibv_device_attr da;
	char path[PATH_MAX];
	struct stat st;

	memset(&da, 0, sizeof(da));
	if (ibv_query_device(ctx, &da) == 0 && (da.vendor_id == RXE_VENDOR_ID || da.vendor_id == SIW_VENDOR_ID))
		return true;
	if (!root)
		root = "/sys";
	if (!root[0])
		return false;
	snprintf(path, sizeof(path), "%s/class/infiniband/%s", root, name);
	if (stat(path, &st) != 0)
		return false;
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/device", root, name);
	return lstat(path, &st) != 0 && errno == ENOENT;
}

/* The port's attributes, link layer, rate, GID, and that the message fits its max_msg_sz. */
static int ep_query_port(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	int rc = rp_verbs_query_port(ep->ctx, (uint8_t)ep->port, &ep->pattr);

	if (rc)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc > 0 ? -rc : -EINVAL, "ibv_query_port");
	if (ep->pattr.state != IBV_PORT_ACTIVE) {
		rp_pair_result_fail(res, RP_ST_NO_PORT, "%s port %d is not ACTIVE (state %d)", ep->device, ep->port,
				    (int)ep->pattr.state);
		return rp_error(-ENETDOWN, "%s", res->reason);
	}
	if (ep->pattr.max_msg_sz && ep->cfg.meas.msg_size > ep->pattr.max_msg_sz) {
		rp_pair_result_fail(res, RP_ST_SETUP, "message size %llu exceeds the largest message of %s port %d (%u bytes)",
				    (unsigned long long)ep->cfg.meas.msg_size, ep->device, ep->port, ep->pattr.max_msg_sz);
		return rp_error(-EMSGSIZE, "%s", res->reason);
	}
	ep->link_gbps = rp_port_data_rate(ep->pattr.active_width, ep->pattr.active_speed, NULL, 0);
	ep->soft = is_soft_device(ep->ctx, ep->device, ep->cfg.sysfs_root);
	if (ep->pattr.link_layer == IBV_LINK_LAYER_INFINIBAND) {
		ep->gid_index = 0;   /* LID routed; the GID is sent but not used */
		if (ep->pattr.lid == 0) {
			rp_pair_result_fail(res, RP_ST_RESOLVE, "%s port %d has no LID (is a subnet manager running?)",
					    ep->device, ep->port);
			return rp_error(-EADDRNOTAVAIL, "%s", res->reason);
		}
	} else if (ep->gid_index < 0) {
		rp_pair_result_fail(res, RP_ST_RESOLVE, "%s port %d has no usable RoCE GID (NCCL's rule found none)",
				    ep->device, ep->port);
		return rp_error(-EADDRNOTAVAIL, "%s", res->reason);
	}
	if (ibv_query_gid(ep->ctx, (uint8_t)ep->port, ep->gid_index, &ep->gid)) {
		errno = errno ? errno : EINVAL;
		return rp_engine_ep_fail(ep, res, RP_ST_RESOLVE, -errno, "ibv_query_gid");
	}
	return 0;
}

int rp_engine_idle_check(struct rp_engine_ep *ep, double *next_check, struct rp_pair_result *res)
{
	double now;

	if (rp_stop_requested()) {
		rp_pair_result_fail(res, RP_ST_INTERRUPTED, "stopped by signal %d on %s port %d before the pair finished",
				    rp_stop_signal(), ep->device, ep->port);
		return rp_error(-EINTR, "%s", res->reason);
	}
	now = rp_now();
	if (*next_check == 0) {
		*next_check = now + ep->cfg.timeout_s / 4;
		return 0;
	}
	if (now < *next_check)
		return 0;
	*next_check = now + ep->cfg.timeout_s / 4;
	return rp_engine_port_check(ep, res);
}

/* Async events since the last look (the descriptor is non-blocking): a PORT_ERR on this port is a
 * port that went down, even when it is back up by now (a flap). True when one was seen. */
static bool port_error_event(struct rp_engine_ep *ep)
{
	struct pollfd pfd = { .fd = ep->ctx->async_fd, .events = POLLIN };
	bool seen = false;

	if (pfd.fd < 0)
		return false;
	while (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN)) {
		struct ibv_async_event ev;

		if (ibv_get_async_event(ep->ctx, &ev) != 0)
			break;
		if (ev.event_type == IBV_EVENT_PORT_ERR && ev.element.port_num == ep->port)
			seen = true;
		else
			rp_debug("%s: async event %s", ep->device, ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	return seen;
}

int rp_engine_port_check(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	enum ibv_port_state state = IBV_PORT_ACTIVE;

	if (port_error_event(ep)) {
		rp_pair_result_fail(res, RP_ST_PORT_DOWN, "%s port %d went down during the pair (async event %s)",
				    ep->device, ep->port, ibv_event_type_str(IBV_EVENT_PORT_ERR));
		return rp_error(-ENETDOWN, "%s", res->reason);
	}
	if (port_active(ep, &state))
		return 0;   /* or it cannot tell: the wait's own deadline decides */
	rp_pair_result_fail(res, RP_ST_PORT_DOWN, "%s port %d left ACTIVE during the pair (state %s)", ep->device,
			    ep->port, ibv_port_state_str(state));
	return rp_error(-ENETDOWN, "%s", res->reason);
}

/* Remote access the role's QPs and buffer need: the target is written, the writer is not (except in
 * the ping-pong). Nobody reads remotely. */
static int remote_access(enum rp_engine_role role, uint32_t mode)
{
	bool written = role == RP_ROLE_TARGET || mode == RP_MODE_LAT;

	return written ? IBV_ACCESS_REMOTE_WRITE : 0;
}

/* What the endpoint is made for: the sequence's measure part, or the larger of it and room (a
 * later sequence on the held endpoint, engine.h) when room has the same QP count and its message
 * fits the port. */
static void ep_size(struct rp_engine_ep *ep, const struct rp_engine_meas *room)
{
	const struct rp_engine_meas *m = &ep->cfg.meas;

	ep->made.msg_size = m->msg_size;
	ep->made.tx_depth = m->tx_depth;
	ep->made.access = remote_access(ep->role, m->mode);
	if (!room || room->n_qps != m->n_qps || (ep->pattr.max_msg_sz && room->msg_size > ep->pattr.max_msg_sz))
		return;
	if (room->msg_size > ep->made.msg_size)
		ep->made.msg_size = room->msg_size;
	if (room->tx_depth > ep->made.tx_depth)
		ep->made.tx_depth = room->tx_depth;
	ep->made.access |= remote_access(ep->role, room->mode);
}

static int ep_create_qps(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	const struct rp_engine_meas *m = &ep->cfg.meas;
	struct ibv_qp_init_attr qia = {
		.send_cq = ep->send_cq,
		.recv_cq = ep->recv_cq,
		.cap = { .max_send_wr = ep->made.tx_depth + 1, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)ep->port,
		.qp_access_flags = (unsigned)ep->made.access,
	};

	for (unsigned i = 0; i < m->n_qps; i++) {
		int rc;

		ep->qps[i] = ibv_create_qp(ep->pd, &qia);
		if (!ep->qps[i])
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, errno_or(-ENOMEM), "ibv_create_qp");
		ep->n_qps = i + 1;
		ep->psn[i] = (uint32_t)(rp_engine_mix64(((uint64_t)getpid() << 20) ^ ep->qps[i]->qp_num ^
							(uint64_t)rp_now()) & 0xffffff);
		rc = ibv_modify_qp(ep->qps[i], &init,
				   IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
		if (rc) {
			char what[64];

			snprintf(what, sizeof(what), "modify qp 0x%x to INIT", ep->qps[i]->qp_num);
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, -rc, what);
		}
	}
	return 0;
}

/* PD, CQs, QPs. The send CQ holds an error flush of every QP (tx_depth + 1 each) and the final write. */
static int ep_create_verbs(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	const struct rp_engine_meas *m = &ep->cfg.meas;
	int send_cqe = (int)((ep->made.tx_depth + 1) * m->n_qps + 1);

	ep->pd = ibv_alloc_pd(ep->ctx);
	if (!ep->pd)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, errno_or(-ENOMEM), "ibv_alloc_pd");
	ep->send_cq = ibv_create_cq(ep->ctx, send_cqe, NULL, NULL, 0);
	if (!ep->send_cq)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, errno_or(-ENOMEM), "ibv_create_cq (send)");
	ep->recv_cq = ibv_create_cq(ep->ctx, (int)(2 * m->n_qps + 2), NULL, NULL, 0);
	if (!ep->recv_cq)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, errno_or(-ENOMEM), "ibv_create_cq (recv)");
	return ep_create_qps(ep, res);
}

/* The role's buffer, registered with the access it needs. */
static int ep_create_buffer(struct rp_engine_ep *ep, const struct rp_mem_spec *spec, struct rp_pair_result *res)
{
	int rc = rp_mem_alloc(&ep->buf, spec, ep->made.msg_size);

	ep->buf_alloced = true;
	if (rc) {
		rp_pair_result_fail(res, RP_ST_REGISTRATION, "allocate %llu bytes of %s memory for the %s: %s",
				    (unsigned long long)ep->made.msg_size, spec->kind, role_name(ep->role),
				    strerror(-rc));
		return rc;
	}
	/* the usable length is the sequence's message (what is filled, cleared, checked and offered to
	 * the peer); a later sequence on the held endpoint sets its own, up to made.msg_size */
	ep->buf.len = (size_t)ep->cfg.meas.msg_size;
	rc = ep->buf.ops->reg(&ep->buf, ep->pd, IBV_ACCESS_LOCAL_WRITE | ep->made.access);
	if (rc)
		rp_pair_result_fail(res, RP_ST_REGISTRATION, "register %zu bytes of %s memory on %s: %s",
				    ep->buf.alloc_len, ep->buf.label, ep->device, strerror(-rc));
	return rc;
}

int rp_engine_ep_create(const struct rp_engine_cfg *cfg, enum rp_engine_role role,
			const struct rp_engine_port *local, struct rp_pair_result *res, struct rp_engine_ep **ep_p)
{
	return rp_engine_ep_create_room(cfg, role, local, NULL, res, ep_p);
}

int rp_engine_ep_create_room(const struct rp_engine_cfg *cfg, enum rp_engine_role role,
			     const struct rp_engine_port *local, const struct rp_engine_meas *room,
			     struct rp_pair_result *res, struct rp_engine_ep **ep_p)
{
	struct rp_engine_ep *ep;
	int rc;

	*ep_p = NULL;
	ep = calloc(1, sizeof(*ep));
	if (!ep) {
		rp_pair_result_fail(res, RP_ST_SETUP, "out of memory");
		return rp_error(-ENOMEM, "engine endpoint: out of memory");
	}
	ep->cfg = *cfg;
	ep->role = role;
	ep->port = local->port;
	ep->gid_index = local->gid_index;
	ep->progress_s = cfg->timeout_s / 4;
	rp_strlcpy(ep->device, local->device, sizeof(ep->device));
	if (local->node)
		rp_str_sanitize_copy(ep->node, sizeof(ep->node), local->node);   /* --node: cut at a character */
	else if (gethostname(ep->node, sizeof(ep->node) - 1) != 0)
		rp_strlcpy(ep->node, "localhost", sizeof(ep->node));

	ep->ctx = open_device(local->device, res);
	rc = ep->ctx ? 0 : -ENODEV;
	if (!rc && ep->ctx->async_fd >= 0) {
		/* async events are read without waiting, at the port checks of every wait */
		int fl = fcntl(ep->ctx->async_fd, F_GETFL);

		if (fl < 0 || fcntl(ep->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) < 0)
			rp_debug("%s: async events cannot be made non-blocking: %s", ep->device, strerror(errno));
	}
	if (!rc)
		rc = ep_query_port(ep, res);
	if (!rc) {
		ep_size(ep, room);
		rc = ep_create_verbs(ep, res);
	}
	if (!rc)
		rc = ep_create_buffer(ep, role == RP_ROLE_WRITER ? &cfg->src_mem : &cfg->dst_mem, res);
	if (rc) {
		rp_engine_ep_destroy(ep);
		return rc;
	}
	*ep_p = ep;
	return 0;
}

static bool mem_same(const struct rp_mem_spec *a, const struct rp_mem_spec *b)
{
	return a->kind && b->kind && strcmp(a->kind, b->kind) == 0 && a->device == b->device &&
	       a->hugepages == b->hugepages && a->gpu_reg == b->gpu_reg;
}

bool rp_engine_ep_fits(const struct rp_engine_ep *ep, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		       const struct rp_engine_port *local)
{
	const struct rp_engine_meas *m = &cfg->meas;
	bool writer = role == RP_ROLE_WRITER;
	int access = remote_access(role, m->mode);

	if (ep->role != role || strcmp(ep->device, local->device) != 0 || ep->port != local->port ||
	    (ep->pattr.link_layer != IBV_LINK_LAYER_INFINIBAND && ep->gid_index != local->gid_index))
		return false;
	if (m->n_qps != ep->n_qps || m->msg_size > ep->made.msg_size || m->tx_depth > ep->made.tx_depth ||
	    (access & ~ep->made.access) || m->bidir || ep->cfg.meas.bidir || cfg->cm || ep->cfg.cm)
		return false;
	if (cfg->qp.qp_timeout != ep->cfg.qp.qp_timeout || cfg->qp.retry_cnt != ep->cfg.qp.retry_cnt ||
	    cfg->qp.rnr_retry != ep->cfg.qp.rnr_retry || cfg->qp.traffic_class != ep->cfg.qp.traffic_class ||
	    cfg->qp.sl != ep->cfg.qp.sl)
		return false;
	return writer ? mem_same(&cfg->src_mem, &ep->cfg.src_mem) : mem_same(&cfg->dst_mem, &ep->cfg.dst_mem);
}

void rp_engine_ep_rearm(struct rp_engine_ep *ep, const struct rp_engine_cfg *cfg)
{
	ep->cfg = *cfg;
	ep->buf.len = (size_t)cfg->meas.msg_size;   /* <= made.msg_size: rp_engine_ep_fits */
	ep->progress_s = cfg->timeout_s / 4;
	ep->next_progress = 0;
	ep->done = ep->done_reported = 0;
	ep->run_t0 = 0;
	ep->lat_outstanding = 0;
	ep->oob = NULL;
	ep->pending = NULL;
	ep->have_pending = NULL;
}

void rp_engine_ep_destroy(struct rp_engine_ep *ep)
{
	int rc;

	if (!ep)
		return;
	rp_engine_cm_destroy(ep);
	for (unsigned i = ep->n_qps; i-- > 0;) {
		if (ep->qps[i] && (rc = ibv_destroy_qp(ep->qps[i])) != 0)
			rp_error(-rc, "ibv_destroy_qp on %s: %s", ep->device, strerror(rc));
		ep->qps[i] = NULL;
	}
	if (ep->buf_alloced)
		rp_mem_free(&ep->buf);   /* deregisters, then frees */
	if (ep->recv_cq && (rc = ibv_destroy_cq(ep->recv_cq)) != 0)
		rp_error(-rc, "ibv_destroy_cq on %s: %s", ep->device, strerror(rc));
	if (ep->send_cq && (rc = ibv_destroy_cq(ep->send_cq)) != 0)
		rp_error(-rc, "ibv_destroy_cq on %s: %s", ep->device, strerror(rc));
	if (ep->pd && (rc = ibv_dealloc_pd(ep->pd)) != 0)
		rp_error(-rc, "ibv_dealloc_pd on %s: %s", ep->device, strerror(rc));
	if (ep->ctx && ibv_close_device(ep->ctx) != 0)
		rp_error(-EIO, "ibv_close_device %s: %s", ep->device, strerror(errno));
	free(ep);
}

/* An RTR failure whose errno says the peer's address could not be resolved (no neighbour, no route). */
static bool is_resolution_errno(int err)
{
	return err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH || err == EADDRNOTAVAIL ||
	       err == ENODATA || err == EHOSTDOWN;
}

/* A RoCE GID no router takes: link-local fe80::/10 or all zero (a port with no address at all). */
static bool gid_unroutable(const uint8_t *raw)
{
	static const uint8_t zero[16];

	return (raw[0] == 0xfe && (raw[1] & 0xc0) == 0x80) || memcmp(raw, zero, sizeof(zero)) == 0;
}

/* The peer's info fits this endpoint: same QP count and link layer, a buffer where one is written. */
static int connect_check(struct rp_engine_ep *ep, const struct rp_conn_info *peer, struct rp_pair_result *res)
{
	bool writes_peer = ep->role == RP_ROLE_WRITER || ep->cfg.meas.mode == RP_MODE_LAT;

	if (peer->n_qps != ep->n_qps) {
		rp_pair_result_fail(res, RP_ST_SETUP, "peer has %u QPs, this side %u", peer->n_qps, ep->n_qps);
		return rp_error(-EPROTO, "%s", res->reason);
	}
	if (peer->link_layer != ep->pattr.link_layer) {
		rp_pair_result_fail(res, RP_ST_RESOLVE, "link layers differ (InfiniBand and Ethernet cannot talk)");
		return rp_error(-EPROTO, "%s", res->reason);
	}
	if (writes_peer && peer->buf_len < ep->cfg.meas.msg_size) {
		rp_pair_result_fail(res, RP_ST_SETUP, "peer's buffer of %llu bytes is shorter than a message (%llu)",
				    (unsigned long long)peer->buf_len, (unsigned long long)ep->cfg.meas.msg_size);
		return rp_error(-EPROTO, "%s", res->reason);
	}
	return 0;
}

/* RTR then RTS on QP i toward the peer's QP i. */
static int connect_qp(struct rp_engine_ep *ep, unsigned i, const struct rp_conn_info *peer, uint32_t mtu,
		      struct rp_pair_result *res)
{
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu_enum(mtu),
		.dest_qp_num = peer->qpn[i],
		.rq_psn = peer->psn[i],
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .port_num = (uint8_t)ep->port, .sl = (uint8_t)ep->cfg.qp.sl },
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS,
		.timeout = (uint8_t)ep->cfg.qp.qp_timeout,
		.retry_cnt = (uint8_t)ep->cfg.qp.retry_cnt,
		.rnr_retry = (uint8_t)ep->cfg.qp.rnr_retry,
		.sq_psn = ep->psn[i],
		.max_rd_atomic = 1,
	};
	char what[64];
	int rc;

	if (ep->pattr.link_layer == IBV_LINK_LAYER_INFINIBAND) {
		rtr.ah_attr.dlid = (uint16_t)peer->lid;
	} else {
		rtr.ah_attr.is_global = 1;
		memcpy(rtr.ah_attr.grh.dgid.raw, peer->gid, 16);
		rtr.ah_attr.grh.sgid_index = (uint8_t)ep->gid_index;
		rtr.ah_attr.grh.hop_limit = 255;
		rtr.ah_attr.grh.traffic_class = (uint8_t)ep->cfg.qp.traffic_class;
	}
	rc = ibv_modify_qp(ep->qps[i], &rtr,
			   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc) {
		bool resolve = is_resolution_errno(rc);
		const uint8_t *bad = ep->pattr.link_layer == IBV_LINK_LAYER_INFINIBAND ? NULL :
				     gid_unroutable(ep->gid.raw) ? ep->gid.raw : gid_unroutable(peer->gid) ? peer->gid : NULL;

		if (bad) {
			char addr[INET6_ADDRSTRLEN] = "";

			inet_ntop(AF_INET6, bad, addr, sizeof(addr));
			rp_pair_result_fail(res, RP_ST_RTR, "no routable GID: %s port %d uses GID %s (%s), which RoCE cannot "
					    "route: give its netdev an IPv4 or global IPv6 address ('rdmaprobe nccl' lists "
					    "the GIDs); modify qp 0x%x to RTR: %s", bad == ep->gid.raw ? ep->device : peer->device,
					    bad == ep->gid.raw ? ep->port : peer->port, addr,
					    bad[0] ? "link-local" : "all zero", ep->qps[i]->qp_num, strerror(rc));
			return rp_error(-rc, "%s", res->reason);
		}
		rp_pair_result_fail(res, resolve ? RP_ST_RESOLVE : RP_ST_RTR,
				    "modify qp 0x%x on %s port %d to RTR toward %s port %d%s: %s", ep->qps[i]->qp_num,
				    ep->device, ep->port, peer->device, peer->port,
				    resolve ? " (address resolution)" : "", strerror(rc));
		return rp_error(-rc, "%s", res->reason);
	}
	rc = ibv_modify_qp(ep->qps[i], &rts,
			   IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			   IBV_QP_MAX_QP_RD_ATOMIC);
	if (rc) {
		snprintf(what, sizeof(what), "modify qp 0x%x to RTS", ep->qps[i]->qp_num);
		return rp_engine_ep_fail(ep, res, RP_ST_RTS, -rc, what);
	}
	return 0;
}

int rp_engine_ep_connect(struct rp_engine_ep *ep, const struct rp_conn_info *peer, struct rp_pair_result *res)
{
	uint32_t mtu = (uint32_t)mtu_bytes(ep->pattr.active_mtu);
	int rc = connect_check(ep, peer, res);

	if (rc)
		return rc;
	ep->peer = *peer;
	if (peer->mtu < mtu)
		mtu = peer->mtu;
	for (unsigned i = 0; i < ep->n_qps; i++) {
		rc = connect_qp(ep, i, peer, mtu, res);
		if (rc)
			return rc;
	}
	return 0;
}
