/* engine_wire.c: the messages of the side channel and their validation: the trust boundary. Every
 * field a peer sends is checked here, against the same limits as local options, and its strings are
 * sanitised, before any other part of the engine sees it; see engine.h. */
#include "engine/engine.h"
#include "engine/engine_int.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/sanitize.h"
#include "base/util.h"

#define RP_WIRE_MAX_LINK_MBPS 10000000u   /* 10 Tb/s: more than any port has */

static bool str_terminated(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

static bool mtu_valid(uint32_t mtu)
{
	return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

static bool finite_nonneg(double x)
{
	return isfinite(x) && x >= 0;
}

/* The header: magic, version, length, type, status, flags, reason. */
static int validate_header(const struct rp_engine_msg *msg, size_t len, enum rp_msg_type want, char *why,
			   size_t why_len)
{
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
	if (msg->type != want && !(want == RP_MSG_RESULT && msg->type == RP_MSG_PROGRESS)) {
		snprintf(why, why_len, "message type %u, expected %u", msg->type, (unsigned)want);
		return -EBADMSG;
	}
	if (msg->status >= RP_ST_COUNT_ || msg->flags & ~RP_MSGF_OWN ||
	    !str_terminated(msg->reason, sizeof(msg->reason))) {
		snprintf(why, why_len, "bad status %u, flags 0x%x or unterminated reason", msg->status, msg->flags);
		return -EBADMSG;
	}
	return 0;
}

static int validate_conn(const struct rp_conn_info *c, char *why, size_t why_len)
{
	char mwhy[160];

	if (c->n_qps == 0 || c->n_qps > RP_ENGINE_MAX_QPS || c->n_qps != c->meas.n_qps || !mtu_valid(c->mtu) ||
	    c->link_layer > IBV_LINK_LAYER_ETHERNET || c->lid > 0xffff || c->link_mbps > RP_WIRE_MAX_LINK_MBPS ||
	    c->soft > 1 || c->port < 1 || c->port > 255 ||
	    c->gid_index < -1 || c->gid_index > 4095 || c->cm > 1 || c->cm_port > 65535) {
		snprintf(why, why_len, "connection info out of range (QPs %u of %u, MTU %u, port %d, GID index %d)",
			 c->n_qps, c->meas.n_qps, c->mtu, c->port, c->gid_index);
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < c->n_qps; i++) {
		if (c->qpn[i] == 0 || c->qpn[i] > 0xffffff || c->psn[i] > 0xffffff) {
			snprintf(why, why_len, "QP number or PSN %u out of range", i);
			return -EBADMSG;
		}
	}
	if (c->held_qpn > 0xffffff || c->held_psn > 0xffffff || (!c->held_qpn && c->held_psn) ||
	    (c->held_qpn && (c->meas.bidir || c->cm))) {
		snprintf(why, why_len, "held connection's QP number 0x%x or PSN 0x%x out of range", c->held_qpn,
			 c->held_psn);
		return -EBADMSG;
	}
	if (rp_engine_meas_validate(&c->meas, mwhy, sizeof(mwhy))) {
		snprintf(why, why_len, "measure part: %s", mwhy);
		return -EBADMSG;
	}
	if (c->buf_len > RP_ENGINE_MAX_MSG_SIZE || (c->buf_len && c->buf_len < c->meas.msg_size)) {
		snprintf(why, why_len, "buffer of %llu bytes for messages of %llu (at most %llu)",
			 (unsigned long long)c->buf_len, (unsigned long long)c->meas.msg_size, RP_ENGINE_MAX_MSG_SIZE);
		return -EBADMSG;
	}
	if (!isfinite(c->progress_s) || c->progress_s < 0 || c->progress_s > RP_ENGINE_MAX_TIMEOUT_S) {
		snprintf(why, why_len, "progress period %g s out of range", c->progress_s);
		return -EBADMSG;
	}
	if (!str_terminated(c->node, sizeof(c->node)) || !str_terminated(c->device, sizeof(c->device)) ||
	    !str_terminated(c->mem, sizeof(c->mem)) || !str_terminated(c->mem_reg, sizeof(c->mem_reg))) {
		snprintf(why, why_len, "unterminated name in the connection info");
		return -EBADMSG;
	}
	return 0;
}

static int validate_result(struct rp_wire_result *r, char *why, size_t why_len)
{
	uint8_t verified, lat_measured;

	/* a bool that is neither 0 nor 1 must not be read as a bool */
	memcpy(&verified, &r->verified, 1);
	memcpy(&lat_measured, &r->lat_measured, 1);
	if (verified > 1 || lat_measured > 1 || r->bad_offset < -1 ||
	    r->bad_offset >= (int64_t)RP_ENGINE_MAX_MSG_SIZE || !finite_nonneg(r->gbps) ||
	    !finite_nonneg(r->gbps_min) || !finite_nonneg(r->gbps_min_at_s) || !finite_nonneg(r->lat_min_us) ||
	    !finite_nonneg(r->lat_median_us) || !finite_nonneg(r->lat_p99_us) || !finite_nonneg(r->lat_max_us)) {
		snprintf(why, why_len, "result out of range or not a finite number (%g Gb/s, min %g, offset %lld)",
			 r->gbps, r->gbps_min, (long long)r->bad_offset);
		return -EBADMSG;
	}
	if (rp_ctr_side_validate(&r->ctr_src, why, why_len) || rp_ctr_side_validate(&r->ctr_dst, why, why_len))
		return -EBADMSG;
	return 0;
}

int rp_engine_msg_validate(struct rp_engine_msg *msg, size_t len, enum rp_msg_type want, char *why, size_t why_len)
{
	char dummy[8];
	int rc;

	if (!why) {
		why = dummy;
		why_len = sizeof(dummy);
	}
	rc = validate_header(msg, len, want, why, why_len);
	if (rc)
		return rc;
	if (msg->type == RP_MSG_CONN && msg->status == RP_ST_OK)
		rc = validate_conn(&msg->u.conn, why, why_len);   /* a failure report carries no connection */
	else if (msg->type == RP_MSG_RESULT)
		rc = validate_result(&msg->u.result, why, why_len);
	else if (msg->type == RP_MSG_PROGRESS && !finite_nonneg(msg->u.progress.elapsed_s)) {
		snprintf(why, why_len, "progress at %g s: not a finite time", msg->u.progress.elapsed_s);
		rc = -EBADMSG;
	}
	if (rc)
		return rc;
	/* what remains goes into logs, the terminal and JSON: valid UTF-8, no control characters */
	rp_str_sanitize(msg->reason);
	if (msg->type == RP_MSG_CONN) {
		rp_str_sanitize(msg->u.conn.node);
		rp_str_sanitize(msg->u.conn.device);
		rp_str_sanitize(msg->u.conn.mem);
		rp_str_sanitize(msg->u.conn.mem_reg);
	}
	return 0;
}

bool rp_engine_res_failed(const struct rp_pair_result *res)
{
	return res->status != RP_ST_OK && !(res->status == RP_ST_SETUP && res->reason[0] == '\0');
}

void rp_engine_msg_init(struct rp_engine_msg *msg, enum rp_msg_type type, const struct rp_pair_result *res)
{
	memset(msg, 0, sizeof(*msg));
	msg->magic = RP_MSG_MAGIC;
	msg->version = RP_MSG_VERSION;
	msg->type = (uint16_t)type;
	msg->length = sizeof(*msg);
	if (res && rp_engine_res_failed(res)) {
		msg->status = (uint32_t)res->status;
		msg->flags = RP_MSGF_OWN;
		rp_str_sanitize_copy(msg->reason, sizeof(msg->reason), res->reason);
	}
}

static int mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

void rp_engine_ep_info(const struct rp_engine_ep *ep, uint64_t seed, struct rp_conn_info *c)
{
	/* the writer's buffer is only read by its own adapter, except in the ping-pong */
	bool remote = ep->role == RP_ROLE_TARGET || ep->cfg.meas.mode == RP_MODE_LAT;

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
	c->soft = ep->soft;
	c->gid_index = ep->gid_index;
	c->port = ep->port;
	c->rkey = remote && ep->buf.mr ? ep->buf.mr->rkey : 0;
	c->addr = remote ? (uint64_t)(uintptr_t)ep->buf.addr : 0;
	c->buf_len = remote ? ep->buf.len : 0;
	c->cm = ep->cfg.cm;
	c->cm_port = ep->cm_port;
	c->progress_s = ep->progress_s;
	c->meas = ep->cfg.meas;
	c->meas.seed = seed;
	rp_str_sanitize_copy(c->node, sizeof(c->node), ep->node);
	rp_str_sanitize_copy(c->device, sizeof(c->device), ep->device);
	rp_strlcpy(c->mem, ep->buf.label, sizeof(c->mem));
	rp_strlcpy(c->mem_reg, ep->buf.reg_method, sizeof(c->mem_reg));
}

void rp_engine_ep_endpoint(const struct rp_engine_ep *ep, struct rp_endpoint *out)
{
	memset(out, 0, sizeof(*out));
	rp_str_sanitize_copy(out->node, sizeof(out->node), ep->node);
	rp_str_sanitize_copy(out->device, sizeof(out->device), ep->device);
	out->port = ep->port;
	out->gid_index = ep->pattr.link_layer == IBV_LINK_LAYER_INFINIBAND ? -1 : ep->gid_index;
	out->mtu = mtu_bytes(ep->pattr.active_mtu);
	out->link_gbps = ep->link_gbps;
	out->soft = ep->soft;
	rp_strlcpy(out->mem, ep->buf.label, sizeof(out->mem));
	rp_strlcpy(out->mem_reg, ep->buf.reg_method, sizeof(out->mem_reg));
}

void rp_engine_conn_endpoint(const struct rp_conn_info *c, struct rp_endpoint *out)
{
	memset(out, 0, sizeof(*out));
	rp_str_sanitize_copy(out->node, sizeof(out->node), c->node);
	rp_str_sanitize_copy(out->device, sizeof(out->device), c->device);
	out->port = c->port;
	out->gid_index = c->link_layer == IBV_LINK_LAYER_INFINIBAND ? -1 : c->gid_index;
	out->mtu = (int)c->mtu;
	out->link_gbps = c->link_mbps / 1000.0;
	out->soft = c->soft != 0;
	rp_str_sanitize_copy(out->mem, sizeof(out->mem), c->mem);
	rp_str_sanitize_copy(out->mem_reg, sizeof(out->mem_reg), c->mem_reg);
}
