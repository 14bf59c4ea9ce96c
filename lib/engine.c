/* engine.c: the RC QP engine: endpoints, connection, RDMA WRITE bandwidth and latency, verification,
 * and the per-side pair sequence; see engine.h.
 *
 * Inline verbs calls go through verbs_ops.c so tests can wrap them; every other verbs call is an
 * exported libibverbs function and can be wrapped directly.
 */
#include "engine.h"
#include "engine_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"
#include "verbs_ops.h"

#define POLL_BATCH 16
#define FINAL_WR_ID UINT64_MAX
#define FINAL_IMM 0x52504649u   /* "RPFI" */
#define IDLE_WAIT_S 0.002       /* a passive target sleeps this long between looks at its CQ */


/* ---------------------------------------------------------------------------------------------- */
/* configuration */

void rp_engine_cfg_default(struct rp_engine_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->meas.mode = RP_MODE_BW;
	cfg->meas.msg_size = 65536;
	cfg->meas.iters = 1000;
	cfg->meas.warmup_iters = 16;
	cfg->meas.tx_depth = 128;
	cfg->meas.n_qps = 1;
	cfg->meas.cq_mod = 16;
	cfg->meas.interval_s = 0.1;
	cfg->meas.seed = 0x5250;
	cfg->meas.verify = true;
	cfg->qp.qp_timeout = 14;      /* 4.096 us * 2^14 = 67 ms per try: a probe, not NCCL's 20 */
	cfg->qp.retry_cnt = 7;
	cfg->qp.rnr_retry = 7;
	cfg->qp.traffic_class = 0;
	cfg->qp.sl = 0;
	cfg->timeout_s = 10;
	cfg->run_limit_s = 0;
	cfg->src_mem.kind = "host";
	cfg->dst_mem.kind = "host";
}

int rp_engine_cfg_validate(const struct rp_engine_cfg *cfg)
{
	const typeof(cfg->meas) *m = &cfg->meas;

	if (m->mode != RP_MODE_BW && m->mode != RP_MODE_LAT)
		return rp_error(-EINVAL, "mode %d: neither bandwidth nor latency", (int)m->mode);
	if (m->msg_size == 0 || m->msg_size > (1ULL << 32))
		return rp_error(-EINVAL, "message size %zu: must be 1 byte to 4 GiB", m->msg_size);
	if (m->iters == 0 && m->duration_s <= 0)
		return rp_error(-EINVAL, "neither iterations nor a duration given");
	if (m->duration_s > 0 && m->mode == RP_MODE_LAT)
		return rp_error(-EINVAL, "latency mode counts round trips: give iterations, not a duration");
	if (m->tx_depth == 0 || m->tx_depth > 8192)
		return rp_error(-EINVAL, "tx depth %u: must be 1 to 8192", m->tx_depth);
	if (m->n_qps == 0 || m->n_qps > RP_ENGINE_MAX_QPS)
		return rp_error(-EINVAL, "%u QPs: must be 1 to %d", m->n_qps, RP_ENGINE_MAX_QPS);
	if (m->cq_mod == 0 || m->cq_mod > m->tx_depth)
		return rp_error(-EINVAL, "completion moderation %u: must be 1 to the tx depth (%u)", m->cq_mod,
				m->tx_depth);
	if (m->interval_s <= 0)
		return rp_error(-EINVAL, "interval %g s: must be positive", m->interval_s);
	if (cfg->qp.qp_timeout < 0 || cfg->qp.qp_timeout > 31)
		return rp_error(-EINVAL, "QP timeout %d: must be 0 to 31", cfg->qp.qp_timeout);
	if (cfg->qp.retry_cnt < 0 || cfg->qp.retry_cnt > 7 || cfg->qp.rnr_retry < 0 || cfg->qp.rnr_retry > 7)
		return rp_error(-EINVAL, "retry counts must be 0 to 7");
	if (cfg->qp.traffic_class < 0 || cfg->qp.traffic_class > 255 || cfg->qp.sl < 0 || cfg->qp.sl > 15)
		return rp_error(-EINVAL, "traffic class must be 0 to 255 and SL 0 to 15");
	if (cfg->timeout_s <= 0)
		return rp_error(-EINVAL, "timeout %g s: must be positive", cfg->timeout_s);
	if (!cfg->src_mem.kind || !cfg->dst_mem.kind)
		return rp_error(-EINVAL, "memory kind not set");
	return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* arithmetic */

double rp_engine_gbps(uint64_t bytes, double seconds)
{
	if (seconds <= 0)
		return 0;
	return (double)bytes * 8.0 / seconds / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void rp_engine_lat_stats(double *samples, size_t n, struct rp_latency *lat)
{
	memset(lat, 0, sizeof(*lat));
	if (n == 0)
		return;
	qsort(samples, n, sizeof(*samples), cmp_double);
	lat->measured = true;
	lat->samples = n;
	lat->min_us = samples[0];
	lat->max_us = samples[n - 1];
	/* median: the middle sample, or the mean of the two middle ones */
	lat->median_us = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	/* p99: nearest rank, ceil(0.99 n) */
	lat->p99_us = samples[(size_t)ceil(0.99 * (double)n) - 1];
}

enum rp_status rp_engine_wc_status(int st)
{
	switch (st) {
	case IBV_WC_SUCCESS:
		return RP_ST_OK;
	case IBV_WC_RETRY_EXC_ERR:
		return RP_ST_RETRY_EXCEEDED;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return RP_ST_RNR_RETRY;
	case IBV_WC_REM_ACCESS_ERR:
		return RP_ST_REMOTE_ACCESS;
	case IBV_WC_LOC_PROT_ERR:
		return RP_ST_LOCAL_PROT;
	case IBV_WC_WR_FLUSH_ERR:
		return RP_ST_PEER_LOST;   /* the QP went to error earlier; the first error says why */
	default:
		return RP_ST_SETUP;
	}
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = mix64(h ^ (uint8_t)*s);
	return mix64(h ^ 0xff);
}

uint64_t rp_engine_seed(uint64_t base, const struct rp_endpoint *src, const struct rp_endpoint *dst, unsigned pass)
{
	uint64_t h = mix64(base + 1);

	h = hash_str(h, src->node);
	h = hash_str(h, src->device);
	h = mix64(h ^ (uint64_t)(unsigned)src->port);
	h = hash_str(h, dst->node);
	h = hash_str(h, dst->device);
	h = mix64(h ^ (uint64_t)(unsigned)dst->port);
	return mix64(h ^ pass);
}

/* ---------------------------------------------------------------------------------------------- */
/* wire messages */

static bool str_terminated(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

static bool mtu_valid(uint32_t mtu)
{
	return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

int rp_engine_msg_validate(const struct rp_engine_msg *msg, size_t len, enum rp_msg_type want, char *why,
			   size_t why_len)
{
	char dummy[8];

	if (!why) {
		why = dummy;
		why_len = sizeof(dummy);
	}
	if (len != sizeof(*msg)) {
		snprintf(why, why_len, "message of %zu bytes, expected %zu", len, sizeof(*msg));
		return -EBADMSG;
	}
	if (msg->magic == __builtin_bswap32(RP_MSG_MAGIC)) {
		snprintf(why, why_len, "peer uses the other byte order");
		return -EPROTO;
	}
	if (msg->magic != RP_MSG_MAGIC) {
		snprintf(why, why_len, "bad magic 0x%08x: not an rdmaprobe peer", msg->magic);
		return -EBADMSG;
	}
	if (msg->version != RP_MSG_VERSION) {
		snprintf(why, why_len, "peer speaks protocol version %u, this rdmaprobe %u", msg->version,
			 RP_MSG_VERSION);
		return -EPROTO;
	}
	if (msg->length != sizeof(*msg)) {
		snprintf(why, why_len, "length field %u, expected %zu", msg->length, sizeof(*msg));
		return -EBADMSG;
	}
	if (msg->type != want) {
		snprintf(why, why_len, "message type %u, expected %u", msg->type, (unsigned)want);
		return -EBADMSG;
	}
	if (msg->status >= RP_ST_COUNT_ || !str_terminated(msg->reason, sizeof(msg->reason))) {
		snprintf(why, why_len, "bad status %u or unterminated reason", msg->status);
		return -EBADMSG;
	}
	if (msg->status != RP_ST_OK)
		return 0;   /* a failure report carries no body */
	if (want == RP_MSG_CONN) {
		const struct rp_conn_info *c = &msg->u.conn;

		if (c->n_qps == 0 || c->n_qps > RP_ENGINE_MAX_QPS || !mtu_valid(c->mtu) ||
		    (c->mode != RP_MODE_BW && c->mode != RP_MODE_LAT) || c->msg_size == 0 ||
		    c->buf_len < c->msg_size || c->tx_depth == 0 || c->tx_depth > 8192 || c->cm_port > 65535 ||
		    !str_terminated(c->node, sizeof(c->node)) || !str_terminated(c->device, sizeof(c->device)) ||
		    !str_terminated(c->mem, sizeof(c->mem)) || !str_terminated(c->mem_reg, sizeof(c->mem_reg))) {
			snprintf(why, why_len, "connection info out of range (QPs %u, MTU %u, size %llu)", c->n_qps,
				 c->mtu, (unsigned long long)c->msg_size);
			return -EBADMSG;
		}
		for (uint32_t i = 0; i < c->n_qps; i++) {
			if (c->qpn[i] == 0 || c->qpn[i] > 0xffffff || c->psn[i] > 0xffffff) {
				snprintf(why, why_len, "QP number or PSN %u out of range", i);
				return -EBADMSG;
			}
		}
	}
	return 0;
}

/* Has res failed already? (rp_pair_result_init's SETUP with no reason means "nothing yet".) */
static bool res_failed(const struct rp_pair_result *res)
{
	return res->status != RP_ST_OK && !(res->status == RP_ST_SETUP && res->reason[0] == '\0');
}

static void msg_init(struct rp_engine_msg *msg, enum rp_msg_type type, const struct rp_pair_result *res)
{
	memset(msg, 0, sizeof(*msg));
	msg->magic = RP_MSG_MAGIC;
	msg->version = RP_MSG_VERSION;
	msg->type = (uint16_t)type;
	msg->length = sizeof(*msg);
	msg->status = res_failed(res) ? (uint32_t)res->status : RP_ST_OK;
	rp_strlcpy(msg->reason, res->reason, sizeof(msg->reason));
}

/* ---------------------------------------------------------------------------------------------- */
/* endpoint */

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

/* The port's rate from width and speed codes (ibv_port_attr), Gb/s; 0 unknown. */
static double port_gbps(const struct ibv_port_attr *a)
{
	static const int widths[] = { [1] = 1, [2] = 4, [4] = 8, [8] = 12, [16] = 2 };
	double lane;
	int w = a->active_width < RP_ARRAY_SIZE(widths) ? widths[a->active_width] : 0;

	switch (a->active_speed) {
	case 1: lane = 2.5; break;
	case 2: lane = 5.0; break;
	case 4: case 8: lane = 10.0; break;
	case 16: lane = 14.0625; break;
	case 32: lane = 25.78125; break;
	case 64: lane = 53.125; break;
	case 128: lane = 106.25; break;
	default: lane = 0; break;
	}
	return w * lane;
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

/* Fail res with st and a reason, log it once, and return err. */
int rp_engine_ep_fail(struct rp_engine_ep *ep, struct rp_pair_result *res, enum rp_status st, int err,
		      const char *what)
{
	rp_error(err, "%s on %s port %d: %s", what, ep->device, ep->port, strerror(-err));
	rp_pair_result_fail(res, st, "%s on %s port %d: %s", what, ep->device, ep->port, strerror(-err));
	return err;
}

static int errno_or(int fallback)
{
	return errno ? -errno : fallback;
}

/* The port's attributes, link layer and GID. */
static int ep_query_port(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	int rc = rp_verbs_query_port(ep->ctx, (uint8_t)ep->port, &ep->pattr);

	if (rc)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc > 0 ? -rc : -EINVAL, "ibv_query_port");
	if (ep->pattr.state != IBV_PORT_ACTIVE) {
		rp_pair_result_fail(res, RP_ST_SETUP, "%s port %d is not ACTIVE (state %d)", ep->device, ep->port,
				    (int)ep->pattr.state);
		return rp_error(-ENETDOWN, "%s", res->reason);
	}
	ep->link_gbps = port_gbps(&ep->pattr);
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

static int ep_create_qps(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	const typeof(ep->cfg.meas) *m = &ep->cfg.meas;
	struct ibv_qp_init_attr qia = {
		.send_cq = ep->send_cq,
		.recv_cq = ep->recv_cq,
		.cap = { .max_send_wr = m->tx_depth + 1, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)ep->port,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE,
	};

	for (unsigned i = 0; i < m->n_qps; i++) {
		int rc;

		ep->qps[i] = ibv_create_qp(ep->pd, &qia);
		if (!ep->qps[i])
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, errno_or(-ENOMEM), "ibv_create_qp");
		ep->n_qps = i + 1;
		ep->psn[i] = (uint32_t)(mix64(((uint64_t)getpid() << 20) ^ ep->qps[i]->qp_num ^ (uint64_t)rp_now()) &
					0xffffff);
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

int rp_engine_ep_create(const struct rp_engine_cfg *cfg, enum rp_engine_role role,
			const struct rp_engine_port *local, struct rp_pair_result *res, struct rp_engine_ep **ep_p)
{
	struct rp_engine_ep *ep;
	const struct rp_mem_spec *spec = role == RP_ROLE_WRITER ? &cfg->src_mem : &cfg->dst_mem;
	int cqe = (int)(cfg->meas.tx_depth * cfg->meas.n_qps + 8), rc;

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
	rp_strlcpy(ep->device, local->device, sizeof(ep->device));
	if (local->node)
		rp_strlcpy(ep->node, local->node, sizeof(ep->node));
	else if (gethostname(ep->node, sizeof(ep->node) - 1) != 0)
		rp_strlcpy(ep->node, "localhost", sizeof(ep->node));

	ep->ctx = open_device(local->device, res);
	if (!ep->ctx) {
		rc = -ENODEV;
		goto unwind;
	}
	rc = ep_query_port(ep, res);
	if (rc)
		goto unwind;
	ep->pd = ibv_alloc_pd(ep->ctx);
	if (!ep->pd) {
		rc = rp_engine_ep_fail(ep, res, RP_ST_SETUP, errno_or(-ENOMEM), "ibv_alloc_pd");
		goto unwind;
	}
	ep->send_cq = ibv_create_cq(ep->ctx, cqe, NULL, NULL, 0);
	if (!ep->send_cq) {
		rc = rp_engine_ep_fail(ep, res, RP_ST_SETUP, errno_or(-ENOMEM), "ibv_create_cq (send)");
		goto unwind;
	}
	ep->recv_cq = ibv_create_cq(ep->ctx, (int)(2 * cfg->meas.n_qps + 2), NULL, NULL, 0);
	if (!ep->recv_cq) {
		rc = rp_engine_ep_fail(ep, res, RP_ST_SETUP, errno_or(-ENOMEM), "ibv_create_cq (recv)");
		goto unwind;
	}
	rc = ep_create_qps(ep, res);
	if (rc)
		goto unwind;
	rc = rp_mem_alloc(&ep->buf, spec, cfg->meas.msg_size);
	ep->buf_alloced = true;
	if (rc) {
		rp_pair_result_fail(res, RP_ST_REGISTRATION, "allocate %zu bytes of %s memory for the %s: %s",
				    cfg->meas.msg_size, spec->kind, role_name(role), strerror(-rc));
		goto unwind;
	}
	rc = ep->buf.ops->reg(&ep->buf, ep->pd,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (rc) {
		rp_pair_result_fail(res, RP_ST_REGISTRATION, "register %zu bytes of %s memory on %s: %s",
				    ep->buf.alloc_len, ep->buf.label, ep->device, strerror(-rc));
		goto unwind;
	}
	*ep_p = ep;
	return 0;
unwind:
	rp_engine_ep_destroy(ep);
	return rc;
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

void rp_engine_ep_info(const struct rp_engine_ep *ep, uint64_t seed, struct rp_conn_info *c)
{
	const typeof(ep->cfg.meas) *m = &ep->cfg.meas;

	memset(c, 0, sizeof(*c));
	c->n_qps = ep->n_qps;
	for (unsigned i = 0; i < ep->n_qps; i++) {
		c->qpn[i] = ep->qps[i]->qp_num;
		c->psn[i] = ep->psn[i];
	}
	memcpy(c->gid, ep->gid.raw, sizeof(c->gid));
	c->lid = ep->pattr.lid;
	c->mtu = (uint32_t)mtu_bytes(ep->pattr.active_mtu);
	c->link_layer = ep->pattr.link_layer;
	c->link_mbps = (uint32_t)(ep->link_gbps * 1000);
	c->gid_index = ep->gid_index;
	c->port = ep->port;
	c->rkey = ep->buf.mr ? ep->buf.mr->rkey : 0;
	c->addr = (uint64_t)(uintptr_t)ep->buf.addr;
	c->buf_len = ep->buf.len;
	c->mode = m->mode;
	c->verify = m->verify;
	c->cm = ep->cfg.cm;
	c->cm_port = ep->cm_port;
	c->tx_depth = m->tx_depth;
	c->msg_size = m->msg_size;
	c->iters = m->iters;
	c->warmup_iters = m->warmup_iters;
	c->seed = seed;
	rp_strlcpy(c->node, ep->node, sizeof(c->node));
	rp_strlcpy(c->device, ep->device, sizeof(c->device));
	rp_strlcpy(c->mem, ep->buf.label, sizeof(c->mem));
	rp_strlcpy(c->mem_reg, ep->buf.reg_method, sizeof(c->mem_reg));
}

void rp_engine_ep_endpoint(const struct rp_engine_ep *ep, struct rp_endpoint *out)
{
	memset(out, 0, sizeof(*out));
	rp_strlcpy(out->node, ep->node, sizeof(out->node));
	rp_strlcpy(out->device, ep->device, sizeof(out->device));
	out->port = ep->port;
	out->gid_index = ep->pattr.link_layer == IBV_LINK_LAYER_INFINIBAND ? -1 : ep->gid_index;
	out->mtu = mtu_bytes(ep->pattr.active_mtu);
	out->link_gbps = ep->link_gbps;
	rp_strlcpy(out->mem, ep->buf.label, sizeof(out->mem));
	rp_strlcpy(out->mem_reg, ep->buf.reg_method, sizeof(out->mem_reg));
}

static void info_endpoint(const struct rp_conn_info *c, struct rp_endpoint *out)
{
	memset(out, 0, sizeof(*out));
	rp_strlcpy(out->node, c->node, sizeof(out->node));
	rp_strlcpy(out->device, c->device, sizeof(out->device));
	out->port = c->port;
	out->gid_index = c->link_layer == IBV_LINK_LAYER_INFINIBAND ? -1 : c->gid_index;
	out->mtu = (int)c->mtu;
	out->link_gbps = c->link_mbps / 1000.0;
	rp_strlcpy(out->mem, c->mem, sizeof(out->mem));
	rp_strlcpy(out->mem_reg, c->mem_reg, sizeof(out->mem_reg));
}

/* ---------------------------------------------------------------------------------------------- */
/* connect */

/* An RTR failure whose errno says the peer's address could not be resolved (no neighbour, no route). */
static bool is_resolution_errno(int err)
{
	return err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH || err == EADDRNOTAVAIL ||
	       err == ENODATA || err == EHOSTDOWN;
}

int rp_engine_ep_connect(struct rp_engine_ep *ep, const struct rp_conn_info *peer, struct rp_pair_result *res)
{
	uint32_t mtu = (uint32_t)mtu_bytes(ep->pattr.active_mtu);

	if (peer->n_qps != ep->n_qps) {
		rp_pair_result_fail(res, RP_ST_SETUP, "peer has %u QPs, this side %u", peer->n_qps, ep->n_qps);
		return rp_error(-EPROTO, "%s", res->reason);
	}
	if (peer->link_layer != ep->pattr.link_layer) {
		rp_pair_result_fail(res, RP_ST_RESOLVE, "link layers differ (InfiniBand and Ethernet cannot talk)");
		return rp_error(-EPROTO, "%s", res->reason);
	}
	ep->peer = *peer;
	if (peer->mtu < mtu)
		mtu = peer->mtu;
	for (unsigned i = 0; i < ep->n_qps; i++) {
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
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* data path */

/* Fail res from a completion with an error status. */
static int wc_fail(struct rp_engine_ep *ep, const struct ibv_wc *wc, struct rp_pair_result *res)
{
	rp_pair_result_fail(res, rp_engine_wc_status(wc->status), "completion on qp 0x%x on %s port %d: %s (vendor error 0x%x)",
			    wc->qp_num, ep->device, ep->port, ibv_wc_status_str(wc->status), wc->vendor_err);
	rp_error(-EIO, "%s", res->reason);
	return -EIO;
}

static int post_fail(struct rp_engine_ep *ep, int rc, const char *what, struct rp_pair_result *res)
{
	int err = rc > 0 ? rc : (rc < 0 ? -rc : EINVAL);

	return rp_engine_ep_fail(ep, res, RP_ST_SETUP, -err, what);
}

/* Post one RDMA WRITE of the whole buffer on qp (WITH IMM when imm). */
static int post_write(struct rp_engine_ep *ep, unsigned qpi, uint64_t wr_id, bool signaled, bool imm,
		      struct rp_pair_result *res)
{
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)ep->buf.addr,
		.length = (uint32_t)ep->cfg.meas.msg_size,
		.lkey = ep->buf.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { .remote_addr = ep->peer.addr, .rkey = ep->peer.rkey },
	};
	struct ibv_send_wr *bad = NULL;
	int rc;

	if (imm)
		wr.imm_data = htonl(FINAL_IMM);
	rc = rp_verbs_post_send(ep->qps[qpi], &wr, &bad);
	if (rc)
		return post_fail(ep, rc, "ibv_post_send", res);
	return 0;
}

struct bw_state {
	uint64_t posted, completed;       /* writes */
	unsigned outstanding[RP_ENGINE_MAX_QPS];
	unsigned unsignaled[RP_ENGINE_MAX_QPS];
	double last_progress;
	double t_first_post, t_last_completion;
	/* interval minimum */
	double cp_time;
	uint64_t cp_done;
	double gbps_min;
	bool have_interval;
};

/* Poll the send CQ once; account completions. 0, or negative on a completion error or timeout. */
static int bw_poll(struct rp_engine_ep *ep, struct bw_state *s, bool measuring, struct rp_pair_result *res)
{
	struct ibv_wc wc[POLL_BATCH];
	int n = rp_verbs_poll_cq(ep->send_cq, POLL_BATCH, wc);
	double now = rp_now();

	if (n < 0)
		return post_fail(ep, n, "ibv_poll_cq", res);
	for (int i = 0; i < n; i++) {
		unsigned qpi = (unsigned)(wc[i].wr_id >> 32);
		unsigned covered = (unsigned)(wc[i].wr_id & 0xffffffffu);

		if (wc[i].status != IBV_WC_SUCCESS)
			return wc_fail(ep, &wc[i], res);
		if (qpi >= ep->n_qps || covered > ep->cfg.meas.tx_depth || covered > s->outstanding[qpi]) {
			rp_pair_result_fail(res, RP_ST_SETUP, "completion with unknown wr_id 0x%llx",
					    (unsigned long long)wc[i].wr_id);
			return rp_error(-EPROTO, "%s", res->reason);
		}
		s->outstanding[qpi] -= covered;
		s->completed += covered;
	}
	if (n > 0) {
		s->last_progress = now;
		s->t_last_completion = now;
		if (measuring && now - s->cp_time >= ep->cfg.meas.interval_s) {
			double g = rp_engine_gbps((s->completed - s->cp_done) * ep->cfg.meas.msg_size, now - s->cp_time);

			if (!s->have_interval || g < s->gbps_min)
				s->gbps_min = g;
			s->have_interval = true;
			s->cp_time = now;
			s->cp_done = s->completed;
		}
	} else if (now - s->last_progress > ep->cfg.timeout_s) {
		rp_pair_result_fail(res, RP_ST_TIMEOUT, "no completion on %s port %d for %.1f s (%llu of %llu writes done)",
				    ep->device, ep->port, ep->cfg.timeout_s, (unsigned long long)s->completed,
				    (unsigned long long)s->posted);
		return rp_error(-ETIMEDOUT, "%s", res->reason);
	}
	return 0;
}

/* Stream `total` writes (or until stop_at when total is 0) round robin over the QPs, tx_depth deep,
 * signalling one in cq_mod and the last on each QP, and wait for all completions. */
static int bw_stream(struct rp_engine_ep *ep, uint64_t total, double duration, bool measuring, struct bw_state *s,
		     struct rp_pair_result *res)
{
	const typeof(ep->cfg.meas) *m = &ep->cfg.meas;
	double stop_at = 0;
	bool stopping = false;
	int rc;

	memset(s, 0, sizeof(*s));
	s->last_progress = rp_now();
	for (;;) {
		/* post as much as the queues take */
		while (!stopping) {
			unsigned qpi = (unsigned)(s->posted % ep->n_qps);
			bool last, sig;

			if (total && s->posted >= total) {
				stopping = true;
				break;
			}
			if (duration > 0 && s->posted > 0 && rp_now() >= stop_at) {
				stopping = true;
				break;
			}
			if (s->outstanding[qpi] >= m->tx_depth)
				break;
			last = total && s->posted + ep->n_qps >= total;
			sig = last || s->unsignaled[qpi] + 1 >= m->cq_mod;
			rc = post_write(ep, qpi, ((uint64_t)qpi << 32) | (s->unsignaled[qpi] + 1), sig, false, res);
			if (rc)
				return rc;
			if (s->posted == 0) {
				s->t_first_post = rp_now();
				s->cp_time = s->t_first_post;
				stop_at = s->t_first_post + duration;
			}
			s->posted++;
			s->outstanding[qpi]++;
			s->unsignaled[qpi] = sig ? 0 : s->unsignaled[qpi] + 1;
		}
		if (stopping) {
			/* duration mode: a QP whose last writes were unsignaled gets one signalled write */
			for (unsigned q = 0; q < ep->n_qps; q++) {
				if (s->unsignaled[q] == 0)
					continue;
				if (s->outstanding[q] >= m->tx_depth + 1)
					continue;   /* cannot happen: max_send_wr is tx_depth + 1 */
				rc = post_write(ep, q, ((uint64_t)q << 32) | (s->unsignaled[q] + 1), true, false, res);
				if (rc)
					return rc;
				s->posted++;
				s->outstanding[q]++;
				s->unsignaled[q] = 0;
			}
			if (s->completed >= s->posted)
				return 0;
		}
		rc = bw_poll(ep, s, measuring, res);
		if (rc)
			return rc;
	}
}

/* Post the final WRITE WITH IMM of the whole (patterned) buffer and wait for its completion. */
static int send_final(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	double deadline = rp_now() + ep->cfg.timeout_s;
	int rc = post_write(ep, 0, FINAL_WR_ID, true, true, res);

	if (rc)
		return rc;
	for (;;) {
		struct ibv_wc wc;
		int n = rp_verbs_poll_cq(ep->send_cq, 1, &wc);

		if (n < 0)
			return post_fail(ep, n, "ibv_poll_cq", res);
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				return wc_fail(ep, &wc, res);
			if (wc.wr_id == FINAL_WR_ID)
				return 0;
			continue;
		}
		if (rp_now() > deadline) {
			rp_pair_result_fail(res, RP_ST_TIMEOUT, "final write from %s port %d not completed in %.1f s",
					    ep->device, ep->port, ep->cfg.timeout_s);
			return rp_error(-ETIMEDOUT, "%s", res->reason);
		}
	}
}

/* Reap send completions without waiting (latency mode signals every write). */
static int reap_send(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	struct ibv_wc wc[POLL_BATCH];
	int n = rp_verbs_poll_cq(ep->send_cq, POLL_BATCH, wc);

	if (n < 0)
		return post_fail(ep, n, "ibv_poll_cq", res);
	for (int i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			return wc_fail(ep, &wc[i], res);
	return n;
}

/* Wait until the last byte of the own buffer equals want (the peer's write landed). */
static int wait_byte(struct rp_engine_ep *ep, uint8_t want, struct rp_pair_result *res)
{
	size_t last = ep->cfg.meas.msg_size - 1;
	double deadline = 0;
	unsigned spins = 0;

	for (;;) {
		uint8_t b;
		int rc = ep->buf.ops->read(&ep->buf, last, &b, 1);

		if (rc)
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "read the sequence byte");
		if (b == want)
			return 0;
		if (++spins % 1024 == 0) {
			double now = rp_now();

			rc = reap_send(ep, res);
			if (rc < 0)
				return rc;
			if (deadline == 0) {
				deadline = now + ep->cfg.timeout_s;
			} else if (now > deadline) {
				rp_pair_result_fail(res, RP_ST_TIMEOUT, "ping-pong on %s port %d: no answer in %.1f s",
						    ep->device, ep->port, ep->cfg.timeout_s);
				return rp_error(-ETIMEDOUT, "%s", res->reason);
			}
		}
	}
}

/* One latency write: put seq in the last byte, write the buffer, signalled. */
static int lat_send(struct rp_engine_ep *ep, uint8_t seq, struct rp_pair_result *res)
{
	int rc = ep->buf.ops->write(&ep->buf, ep->cfg.meas.msg_size - 1, &seq, 1);

	if (rc)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "write the sequence byte");
	rc = reap_send(ep, res);
	if (rc < 0)
		return rc;
	return post_write(ep, 0, 1, true, false, res);
}

/* Round i's sequence byte: the writer sends 1..127, the target echoes it with the top bit set, so a
 * side never mistakes the byte it put in its own buffer (to send it) for the peer's answer, and
 * neither value is 0, which both buffers start with. */
static uint8_t seq_of(uint64_t i)
{
	return (uint8_t)(i % 127 + 1);
}

#define ECHO_BIT 0x80

/* The latency ping-pong on QP 0; the writer measures half the round trip per iteration. */
static int lat_pingpong(struct rp_engine_ep *ep, bool writer, struct rp_pair_result *res)
{
	const typeof(ep->cfg.meas) *m = &ep->cfg.meas;
	uint64_t total = m->warmup_iters + m->iters;
	double *samples = NULL;
	int rc = 0;

	if (!ep->buf.ops->write) {
		rp_pair_result_fail(res, RP_ST_SETUP, "latency mode: %s memory cannot be written from the host",
				    ep->buf.label);
		return rp_error(-ENOTSUP, "%s", res->reason);
	}
	if (writer) {
		samples = calloc(m->iters ? m->iters : 1, sizeof(*samples));
		if (!samples) {
			rp_pair_result_fail(res, RP_ST_SETUP, "out of memory for %llu samples", (unsigned long long)m->iters);
			return rp_error(-ENOMEM, "%s", res->reason);
		}
	}
	for (uint64_t i = 0; i < total && !rc; i++) {
		uint8_t seq = seq_of(i);

		if (writer) {
			double t0 = rp_now();

			rc = lat_send(ep, seq, res);
			if (!rc)
				rc = wait_byte(ep, seq | ECHO_BIT, res);
			if (!rc && i >= m->warmup_iters)
				samples[i - m->warmup_iters] = (rp_now() - t0) * 1e6 / 2;
		} else {
			rc = wait_byte(ep, seq, res);
			if (!rc)
				rc = lat_send(ep, seq | ECHO_BIT, res);
		}
	}
	if (!rc && writer)
		rp_engine_lat_stats(samples, m->iters, &res->lat);
	free(samples);
	/* let the last signalled writes complete before the buffers are reused */
	for (double deadline = rp_now() + ep->cfg.timeout_s; !rc;) {
		struct ibv_wc wc;
		int n = rp_verbs_poll_cq(ep->send_cq, 1, &wc);

		if (n < 0)
			return post_fail(ep, n, "ibv_poll_cq", res);
		if (n == 1 && wc.status != IBV_WC_SUCCESS)
			return wc_fail(ep, &wc, res);
		if (n == 0 && rp_now() > deadline) {
			rp_pair_result_fail(res, RP_ST_TIMEOUT, "latency writes on %s port %d not completed", ep->device,
					    ep->port);
			return rp_error(-ETIMEDOUT, "%s", res->reason);
		}
		if (n == 0)
			break;   /* the CQ is empty: every write signalled so far was reaped */
	}
	return rc;
}

int rp_engine_run_writer(struct rp_engine_ep *ep, uint64_t seed, struct rp_pair_result *res)
{
	const typeof(ep->cfg.meas) *m = &ep->cfg.meas;
	struct bw_state s;
	int rc;

	if (m->mode == RP_MODE_LAT) {
		/* the target writes back only after the first ping, so clearing here is in time */
		rc = ep->buf.ops->set(&ep->buf, 0);
		if (rc)
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "clear the buffer");
		rc = lat_pingpong(ep, true, res);
		if (rc)
			return rc;
		res->iters = m->iters;
		res->bytes = m->iters * m->msg_size;
		res->msg_size = m->msg_size;
	} else {
		rc = ep->buf.ops->fill(&ep->buf, seed);
		if (rc)
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "fill the source buffer");
		if (m->warmup_iters) {
			rc = bw_stream(ep, m->warmup_iters, 0, false, &s, res);
			if (rc)
				return rc;
		}
		rc = bw_stream(ep, m->duration_s > 0 ? 0 : m->iters, m->duration_s, true, &s, res);
		if (rc)
			return rc;
		res->iters = s.completed;
		res->bytes = s.completed * m->msg_size;
		res->msg_size = m->msg_size;
		res->gbps = rp_engine_gbps(res->bytes, s.t_last_completion - s.t_first_post);
		res->gbps_min = s.have_interval && s.gbps_min < res->gbps ? s.gbps_min : res->gbps;
	}
	if (m->mode == RP_MODE_LAT || m->verify) {
		rc = ep->buf.ops->fill(&ep->buf, seed);
		if (rc)
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "fill the source buffer");
	}
	return send_final(ep, res);
}

int rp_engine_target_prepare(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	struct ibv_recv_wr wr = { .wr_id = FINAL_WR_ID, .sg_list = NULL, .num_sge = 0 };
	struct ibv_recv_wr *bad = NULL;
	/* a value the pattern rarely has at offset 0, so a write that never landed shows at once */
	uint8_t clear = (uint8_t)~rp_pattern_byte(ep->seed, 0);
	int rc;

	rc = ep->buf.ops->set(&ep->buf, ep->cfg.meas.mode == RP_MODE_LAT ? 0 : clear);
	if (rc)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "clear the target buffer");
	rc = rp_verbs_post_recv(ep->qps[0], &wr, &bad);
	if (rc)
		return post_fail(ep, rc, "ibv_post_recv", res);
	ep->recv_posted = true;
	return 0;
}

/* Look at the side channel without waiting: a message from the writer is kept in *pending.
 * 1 when one arrived, 0 when none, negative when the channel broke (res filled). */
int rp_engine_peek_oob(struct rp_oob *oob, enum rp_msg_type want, double wait_s, struct rp_engine_msg *pending,
		       struct rp_pair_result *res)
{
	char why[160];
	int rc = rp_oob_recv(oob, pending, sizeof(*pending), rp_now() + wait_s);

	if (rc == -ETIMEDOUT)
		return 0;
	if (rc) {
		rp_pair_result_fail(res, RP_ST_PEER_LOST, "side channel to %s: %s", oob->peer, strerror(-rc));
		return rc;
	}
	rc = rp_engine_msg_validate(pending, sizeof(*pending), want, why, sizeof(why));
	if (rc) {
		rp_pair_result_fail(res, RP_ST_PEER_LOST, "bad message from %s: %s", oob->peer, why);
		return rp_error(rc, "%s", res->reason);
	}
	return 1;
}

/* The target's wait for the final WRITE WITH IMM. pending/have_pending: a writer message seen meanwhile. */
static int target_wait_final(struct rp_engine_ep *ep, struct rp_oob *oob, double deadline,
			     struct rp_engine_msg *pending, bool *have_pending, struct rp_pair_result *res)
{
	double imm_deadline = 0;   /* once the writer said it is done, the IMM must follow quickly */

	for (;;) {
		struct ibv_wc wc;
		int n = rp_verbs_poll_cq(ep->recv_cq, 1, &wc);
		double now;

		if (n < 0)
			return post_fail(ep, n, "ibv_poll_cq", res);
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				return wc_fail(ep, &wc, res);
			if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || ntohl(wc.imm_data) != FINAL_IMM) {
				rp_pair_result_fail(res, RP_ST_SETUP, "unexpected receive completion (opcode %d)",
						    (int)wc.opcode);
				return rp_error(-EPROTO, "%s", res->reason);
			}
			return 0;
		}
		/* Nothing yet. The target is passive in bandwidth mode: rather than spin (and take a CPU
		 * from the adapter or a software RDMA device), wait a little on the side channel, where a
		 * failure report from the writer would arrive. */
		if (oob && !*have_pending) {
			int rc = rp_engine_peek_oob(oob, RP_MSG_RESULT, IDLE_WAIT_S, pending, res);

			if (rc < 0)
				return rc;
			if (rc == 1) {
				*have_pending = true;
				if (pending->status != RP_ST_OK)
					return 1;   /* the writer failed: its message says why */
				imm_deadline = rp_now() + ep->cfg.timeout_s;
			}
		} else {
			struct timespec ts = { 0, (long)(IDLE_WAIT_S * 1e9) };

			nanosleep(&ts, NULL);
		}
		now = rp_now();
		if (now > deadline || (imm_deadline && now > imm_deadline)) {
			rp_pair_result_fail(res, RP_ST_TIMEOUT, "final write into %s port %d did not arrive in time",
					    ep->device, ep->port);
			return rp_error(-ETIMEDOUT, "%s", res->reason);
		}
	}
}

/* Target side of a run; see engine.h. Returns 1 (not an error of its own) when the writer reported a
 * failure through the side channel; the message is then in *pending. */
static int target_run(struct rp_engine_ep *ep, uint64_t seed, struct rp_oob *oob, double deadline,
		      struct rp_engine_msg *pending, bool *have_pending, struct rp_pair_result *res)
{
	int rc;

	if (ep->cfg.meas.mode == RP_MODE_LAT) {
		rc = lat_pingpong(ep, false, res);
		if (rc)
			return rc;
	}
	rc = target_wait_final(ep, oob, deadline, pending, have_pending, res);
	if (rc)
		return rc;
	ep->recv_posted = false;
	res->msg_size = ep->cfg.meas.msg_size;
	if (!ep->peer.verify && ep->cfg.meas.mode != RP_MODE_LAT)
		return 0;
	rc = ep->buf.ops->check(&ep->buf, seed, &res->bad_offset);
	if (rc)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "check the target buffer");
	if (res->bad_offset >= 0) {
		uint8_t got = 0;

		ep->buf.ops->read(&ep->buf, (size_t)res->bad_offset, &got, 1);
		rp_pair_result_fail(res, RP_ST_DATA_MISMATCH, "data mismatch at offset %lld of %zu: 0x%02x, expected 0x%02x",
				    (long long)res->bad_offset, ep->cfg.meas.msg_size, got,
				    rp_pattern_byte(seed, (uint64_t)res->bad_offset));
		rp_error(-EIO, "%s on %s port %d", res->reason, ep->device, ep->port);
		return -EIO;
	}
	res->verified = true;
	return 0;
}

int rp_engine_run_target(struct rp_engine_ep *ep, uint64_t seed, struct rp_oob *oob, double deadline,
			 struct rp_pair_result *res)
{
	struct rp_engine_msg pending;
	bool have = false;
	int rc = target_run(ep, seed, oob, deadline, &pending, &have, res);

	if (rc == 1) {
		rp_pair_result_fail(res, (enum rp_status)pending.status, "%s", pending.reason);
		return -ECANCELED;
	}
	return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* the pair sequence */

/* Send mine, then receive and validate the peer's message of the same type (or use *pending).
 * On a channel failure res says PEER_LOST / TIMEOUT and a negative errno returns. */
static int exchange(struct rp_oob *oob, const struct rp_engine_msg *mine, struct rp_engine_msg *theirs,
		    bool send, bool recv, double deadline, struct rp_pair_result *res)
{
	char why[160];
	bool failed_before = res_failed(res);
	int rc = 0;

	if (send)
		rc = rp_oob_send(oob, mine, sizeof(*mine), deadline);
	if (!rc && recv)
		rc = rp_oob_recv(oob, theirs, sizeof(*theirs), deadline);
	if (rc && failed_before)
		return rc;   /* the first failure is the result; the peer may have gone because of it */
	if (rc == -ETIMEDOUT) {
		rp_pair_result_fail(res, RP_ST_PEER_LOST, "peer %s did not answer within the deadline", oob->peer);
		rp_error(rc, "%s", res->reason);
		return rc;
	}
	if (rc) {
		rp_pair_result_fail(res, RP_ST_PEER_LOST, "side channel to %s: %s", oob->peer, strerror(-rc));
		return rc;
	}
	if (recv) {
		rc = rp_engine_msg_validate(theirs, sizeof(*theirs), (enum rp_msg_type)mine->type, why, sizeof(why));
		if (rc && failed_before)
			return rc;
		if (rc) {
			rp_pair_result_fail(res, RP_ST_PEER_LOST, "bad message from %s: %s", oob->peer, why);
			rp_error(rc, "%s", res->reason);
			return rc;
		}
	}
	return 0;
}

/* A failure the peer reported becomes ours (unless we failed first). Returns true when either failed. */
static bool adopt_peer_failure(const struct rp_engine_msg *theirs, bool i_failed, struct rp_pair_result *res)
{
	if (i_failed)
		return true;
	if (theirs->status != RP_ST_OK) {
		rp_pair_result_fail(res, (enum rp_status)theirs->status, "%s", theirs->reason);
		return true;
	}
	return false;
}

static void wire_from_result(const struct rp_pair_result *r, struct rp_wire_result *w)
{
	w->verified = r->verified;
	w->lat_measured = r->lat.measured;
	w->bad_offset = r->bad_offset;
	w->bytes = r->bytes;
	w->iters = r->iters;
	w->lat_samples = r->lat.samples;
	w->gbps = r->gbps;
	w->gbps_min = r->gbps_min;
	w->lat_min_us = r->lat.min_us;
	w->lat_median_us = r->lat.median_us;
	w->lat_p99_us = r->lat.p99_us;
	w->lat_max_us = r->lat.max_us;
}

/* Merge the measurement (from the writer) and the verification (from the target) into res. */
static void merge_results(enum rp_engine_role role, const struct rp_wire_result *peer, struct rp_pair_result *res)
{
	if (role == RP_ROLE_TARGET) {
		res->gbps = peer->gbps;
		res->gbps_min = peer->gbps_min;
		res->bytes = peer->bytes;
		res->iters = peer->iters;
		res->lat.measured = peer->lat_measured;
		res->lat.samples = peer->lat_samples;
		res->lat.min_us = peer->lat_min_us;
		res->lat.median_us = peer->lat_median_us;
		res->lat.p99_us = peer->lat_p99_us;
		res->lat.max_us = peer->lat_max_us;
	} else {
		res->verified = peer->verified;
		res->bad_offset = peer->bad_offset;
	}
}

/* The deadline of the target's wait for the run to end. */
static double run_deadline(const struct rp_engine_cfg *cfg)
{
	double limit = cfg->run_limit_s;

	if (limit <= 0)
		limit = cfg->meas.duration_s > 0 ? cfg->meas.duration_s + 4 * cfg->timeout_s : 30 * cfg->timeout_s;
	return rp_now() + limit;
}

/* Derive the target's configuration from the writer's connection info. */
static void adopt_writer_meas(struct rp_engine_cfg *cfg, const struct rp_conn_info *w)
{
	cfg->meas.mode = (enum rp_engine_mode)w->mode;
	cfg->meas.msg_size = w->msg_size;
	cfg->meas.iters = w->iters;
	cfg->meas.warmup_iters = w->warmup_iters;
	cfg->meas.n_qps = w->n_qps;
	cfg->meas.tx_depth = w->tx_depth;
	cfg->meas.verify = w->verify;
	cfg->cm = w->cm;
	if (cfg->meas.cq_mod > cfg->meas.tx_depth)
		cfg->meas.cq_mod = cfg->meas.tx_depth;
}

int rp_engine_pair_run(const struct rp_engine_cfg *cfg_in, enum rp_engine_role role,
		       const struct rp_engine_port *local, struct rp_oob *oob, unsigned pass,
		       struct rp_pair_result *res)
{
	struct rp_engine_cfg cfg = *cfg_in;
	struct rp_engine_ep *ep = NULL;
	struct rp_engine_msg mine, theirs, pending;
	struct rp_endpoint me;
	bool writer = role == RP_ROLE_WRITER, failed = false, have_pending = false;
	double t0 = rp_now();
	int rc = 0;

	rp_pair_result_init(res, NULL, NULL);
	memset(&me, 0, sizeof(me));
	rp_strlcpy(me.device, local->device, sizeof(me.device));
	if (local->node)
		rp_strlcpy(me.node, local->node, sizeof(me.node));
	else if (gethostname(me.node, sizeof(me.node) - 1) != 0)
		rp_strlcpy(me.node, "localhost", sizeof(me.node));
	me.port = local->port;
	me.gid_index = local->gid_index;
	if (writer)
		res->src = me;
	else
		res->dst = me;

	/* 1. connection info: the writer speaks first; the target adopts its measure part */
	if (!writer) {
		rc = exchange(oob, &(struct rp_engine_msg){ .type = RP_MSG_CONN }, &theirs, false, true,
			      rp_now() + cfg.timeout_s, res);
		if (rc || adopt_peer_failure(&theirs, false, res))
			goto out;
		adopt_writer_meas(&cfg, &theirs.u.conn);
		info_endpoint(&theirs.u.conn, &res->src);
	}
	rc = rp_engine_ep_create(&cfg, role, local, res, &ep);
	if (!rc && !writer && cfg.cm)
		rc = rp_engine_cm_listen(ep, res);
	failed = rc != 0;
	msg_init(&mine, RP_MSG_CONN, res);
	if (ep) {
		rp_engine_ep_endpoint(ep, writer ? &res->src : &res->dst);
		rp_engine_ep_info(ep, cfg.meas.seed, &mine.u.conn);
		mine.u.conn.pass = pass;
	}
	/* the writer waits for the target's info; the target already has the writer's */
	rc = exchange(oob, &mine, &theirs, true, writer && !failed, rp_now() + cfg.timeout_s, res);
	if (rc || failed || adopt_peer_failure(&theirs, failed, res))
		goto out;
	if (writer)
		info_endpoint(&theirs.u.conn, &res->dst);
	/* both sides derive the same seed: the writer's base and pass, both endpoints */
	ep->seed = rp_engine_seed(writer ? cfg.meas.seed : theirs.u.conn.seed, &res->src, &res->dst,
				  writer ? pass : theirs.u.conn.pass);

	/* 2. connect, prepare, and tell each other */
	if (!cfg.cm)
		rc = rp_engine_ep_connect(ep, &theirs.u.conn, res);
	else if (writer)
		rc = rp_engine_cm_connect(ep, &theirs.u.conn, rp_now() + cfg.timeout_s, res);
	else
		rc = rp_engine_cm_accept(ep, &theirs.u.conn, oob, rp_now() + cfg.timeout_s, &pending, &have_pending, res);
	if (rc == 1) {
		/* the writer failed to connect and said so while we waited for its request */
		rp_pair_result_fail(res, (enum rp_status)pending.status, "%s", pending.reason);
		rc = -ECANCELED;
	}
	if (!rc && !writer)
		rc = rp_engine_target_prepare(ep, res);
	failed = rc != 0;
	msg_init(&mine, RP_MSG_READY, res);
	if (have_pending) {
		theirs = pending;
		have_pending = false;
		rc = exchange(oob, &mine, &theirs, true, false, rp_now() + cfg.timeout_s + 1, res);
	} else {
		rc = exchange(oob, &mine, &theirs, true, true, rp_now() + cfg.timeout_s + 1, res);
	}
	if (rc || adopt_peer_failure(&theirs, failed, res))
		goto out;

	/* 3. run */
	if (writer) {
		rc = rp_engine_run_writer(ep, ep->seed, res);
	} else {
		rc = target_run(ep, ep->seed, oob, run_deadline(&cfg), &pending, &have_pending, res);
		if (rc == 1) {
			/* the writer failed and said why: that is the pair's result; answer all the same */
			rp_pair_result_fail(res, (enum rp_status)pending.status, "%s", pending.reason);
			rc = -ECANCELED;
		}
	}
	failed = rc != 0;
	if (!failed)
		res->status = RP_ST_OK;

	/* 4. results: the writer's measurement, the target's verification */
	msg_init(&mine, RP_MSG_RESULT, res);
	wire_from_result(res, &mine.u.result);
	if (have_pending) {
		theirs = pending;
		rc = exchange(oob, &mine, &theirs, true, false, rp_now() + cfg.timeout_s, res);
	} else {
		rc = exchange(oob, &mine, &theirs, true, true, rp_now() + cfg.timeout_s, res);
	}
	if (rc)
		goto out;
	if (theirs.status == RP_ST_OK || theirs.status == RP_ST_DATA_MISMATCH)
		merge_results(role, &theirs.u.result, res);
	if (adopt_peer_failure(&theirs, failed, res))
		goto out;
	res->status = RP_ST_OK;
	res->reason[0] = '\0';
out:
	rp_engine_ep_destroy(ep);
	res->elapsed_s = rp_now() - t0;
	if (res->status == RP_ST_OK)
		return 0;
	return 1;
}

struct target_thread {
	const struct rp_engine_cfg *cfg;
	const struct rp_engine_port *port;
	struct rp_oob *oob;
	unsigned pass;
	struct rp_pair_result res;
};

static void *target_thread_main(void *arg)
{
	struct target_thread *t = arg;

	rp_engine_pair_run(t->cfg, RP_ROLE_TARGET, t->port, t->oob, t->pass, &t->res);
	return NULL;
}

int rp_engine_loopback_run(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			   const struct rp_engine_port *dst, unsigned pass, struct rp_pair_result *res)
{
	struct rp_oob a, b;
	struct target_thread t = { .cfg = cfg, .port = dst, .oob = &b, .pass = pass };
	pthread_t tid;
	int rc;

	rp_pair_result_init(res, NULL, NULL);
	rc = rp_oob_local_pair(&a, &b);
	if (rc) {
		rp_pair_result_fail(res, RP_ST_SETUP, "side channel between the threads: %s", strerror(-rc));
		return rc;
	}
	rc = pthread_create(&tid, NULL, target_thread_main, &t);
	if (rc) {
		rp_pair_result_fail(res, RP_ST_SETUP, "pthread_create: %s", strerror(rc));
		rp_oob_close(&a);
		rp_oob_close(&b);
		return rp_error(-rc, "pthread_create for the target: %s", strerror(rc));
	}
	rc = rp_engine_pair_run(cfg, RP_ROLE_WRITER, src, &a, pass, res);
	/* the target's side channel sees our close if it is still waiting, so the join is bounded */
	rp_oob_close(&a);
	pthread_join(tid, NULL);
	rp_oob_close(&b);
	/* the writer's view has both endpoints; take the target's own description of itself */
	if (t.res.dst.device[0])
		res->dst = t.res.dst;
	return rc;
}
