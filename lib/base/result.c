/* result.c: status codes and helpers for rp_pair_result; see result.h. */
#include "base/result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_codes[RP_ST_COUNT_] = {
	[RP_ST_OK] = "ok",
	[RP_ST_RESOLVE] = "resolve_failed",
	[RP_ST_RTR] = "rtr_refused",
	[RP_ST_RTS] = "rts_refused",
	[RP_ST_RETRY_EXCEEDED] = "retry_exceeded",
	[RP_ST_RNR_RETRY] = "rnr_retry_exceeded",
	[RP_ST_REMOTE_ACCESS] = "remote_access_error",
	[RP_ST_LOCAL_PROT] = "local_protection_error",
	[RP_ST_REGISTRATION] = "registration_failed",
	[RP_ST_PEER_LOST] = "peer_lost",
	[RP_ST_TIMEOUT] = "timed_out",
	[RP_ST_DATA_MISMATCH] = "data_mismatch",
	[RP_ST_BELOW_THRESHOLD] = "below_threshold",
	[RP_ST_SETUP] = "setup_failed",
	[RP_ST_REMOTE_INVALID] = "remote_invalid_request",
	[RP_ST_REMOTE_OP] = "remote_operation_error",
	[RP_ST_REMOTE_ABORT] = "remote_aborted",
	[RP_ST_LOCAL_LENGTH] = "local_length_error",
	[RP_ST_LOCAL_QP_OP] = "local_qp_operation_error",
	[RP_ST_BAD_RESPONSE] = "bad_response",
	[RP_ST_FLUSHED] = "flushed",
	[RP_ST_COMPLETION_ERROR] = "completion_error",
	[RP_ST_PORT_DOWN] = "port_down",
	[RP_ST_NO_PORT] = "no_usable_port",
	[RP_ST_INTERRUPTED] = "interrupted",
	[RP_ST_LINK_ERRORS] = "link_errors",
	[RP_ST_MTU_BLACKHOLE] = "mtu_blackhole",
	[RP_ST_ENDPOINT_DEAD] = "endpoint_dead",
};

static const char *const confirm_codes[RP_CONFIRM_COUNT_] = {
	[RP_CONFIRM_NONE] = "",
	[RP_CONFIRM_FLAKY] = "flaky",
	[RP_CONFIRM_CONFIRMED] = "confirmed",
	[RP_CONFIRM_UNCONFIRMED] = "unconfirmed",
	[RP_CONFIRM_BY_ENDPOINT] = "confirmed_by_endpoint",
};

static const char *const warning_codes[RP_WARN_COUNT_] = {
	[RP_WARN_FLAKY] = "flaky",
	[RP_WARN_INTERVAL_DROP] = "interval_drop",
	[RP_WARN_NOMINAL_RATE] = "nominal_link_rate",
	[RP_WARN_LOSSY] = "lossy",
	[RP_WARN_MTU_MISMATCH] = "mtu_mismatch",
	[RP_WARN_CONCURRENT_DROP] = "concurrent_drop",
};

const char *rp_confirm_code(enum rp_confirm c)
{
	if ((int)c < 0 || c >= RP_CONFIRM_COUNT_)
		return "unknown";
	return confirm_codes[c];
}

const char *rp_pair_warning_code(enum rp_pair_warning w)
{
	if ((int)w < 0 || w >= RP_WARN_COUNT_)
		return "unknown";
	return warning_codes[w];
}

const char *rp_side_code(enum rp_side s)
{
	switch (s) {
	case RP_SIDE_SRC: return "src";
	case RP_SIDE_DST: return "dst";
	case RP_SIDE_NONE: return NULL;
	}
	return "unknown";
}

const char *rp_status_code(enum rp_status st)
{
	if ((int)st < 0 || st >= RP_ST_COUNT_)
		return "unknown";
	return status_codes[st];
}

int rp_status_from_code(const char *code)
{
	for (int i = 0; i < RP_ST_COUNT_; i++)
		if (strcmp(code, status_codes[i]) == 0)
			return i;
	return -1;
}

void rp_pair_result_init(struct rp_pair_result *r, const struct rp_endpoint *src, const struct rp_endpoint *dst)
{
	memset(r, 0, sizeof(*r));
	if (src)
		r->src = *src;
	if (dst)
		r->dst = *dst;
	r->status = RP_ST_SETUP;
	r->bad_offset = -1;
}

void rp_pair_result_fail(struct rp_pair_result *r, enum rp_status st, const char *fmt, ...)
{
	va_list ap;

	r->status = st;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* Copy at most dst_len - 1 bytes of src (a field of src_len bytes), cut before a UTF-8 character
 * that would not fit whole. */
static void copy_cut(char *dst, size_t dst_len, const char *src, size_t src_len)
{
	size_t n = strnlen(src, src_len);

	if (n >= dst_len) {
		n = dst_len - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void rp_pair_result_record_attempt(struct rp_pair_result *r, int qp_timeout)
{
	struct rp_attempt *a;

	if (r->n_attempts < RP_MAX_ATTEMPTS)
		r->n_attempts++;
	a = &r->attempts[r->n_attempts - 1];
	a->status = r->status;
	a->side = r->cause_side;
	copy_cut(a->reason, sizeof(a->reason), r->reason, sizeof(r->reason));
	a->gbps = r->gbps;
	a->gbps_min = r->gbps_min;
	a->qp_timeout = qp_timeout;
	a->elapsed_s = r->elapsed_s;
}

void rp_pair_reverse_view(const struct rp_pair_result *r, struct rp_pair_result *out)
{
	const struct rp_pair_reverse *v = &r->reverse;

	rp_pair_result_init(out, &r->dst, &r->src);
	out->status = v->status;
	copy_cut(out->reason, sizeof(out->reason), v->reason, sizeof(v->reason));
	out->cause_side = v->cause_side == RP_SIDE_SRC ? RP_SIDE_DST : v->cause_side == RP_SIDE_DST ? RP_SIDE_SRC
												       : RP_SIDE_NONE;
	out->gbps = v->gbps;
	out->gbps_min = v->gbps_min;
	out->gbps_min_at_s = v->gbps_min_at_s;
	out->bytes = v->bytes;
	out->iters = v->iters;
	out->msg_size = r->msg_size;
	out->verified = v->verified;
	out->bad_offset = v->bad_offset;
	out->warnings = v->warnings;
	out->lat = r->lat;
}

void rp_pair_reverse_store(struct rp_pair_result *r, const struct rp_pair_result *view)
{
	struct rp_pair_reverse *v = &r->reverse;

	v->measured = true;
	v->status = view->status;
	copy_cut(v->reason, sizeof(v->reason), view->reason, sizeof(view->reason));
	v->cause_side = view->cause_side == RP_SIDE_SRC ? RP_SIDE_DST
		      : view->cause_side == RP_SIDE_DST ? RP_SIDE_SRC : RP_SIDE_NONE;
	v->gbps = view->gbps;
	v->gbps_min = view->gbps_min;
	v->gbps_min_at_s = view->gbps_min_at_s;
	v->bytes = view->bytes;
	v->iters = view->iters;
	v->verified = view->verified;
	v->bad_offset = view->bad_offset;
	v->warnings = view->warnings;
}

void rp_pair_reverse_fold(struct rp_pair_result *r)
{
	struct rp_pair_reverse *v = &r->reverse;

	if (!v->measured || v->folded || r->status != RP_ST_OK || v->status == RP_ST_OK)
		return;
	rp_pair_result_fail(r, v->status, "reverse direction %s:%d -> %s:%d: %s", r->dst.device, r->dst.port,
			    r->src.device, r->src.port, v->reason);
	r->cause_side = v->cause_side;
	v->folded = true;
}

void rp_pair_reverse_unfold(struct rp_pair_result *r)
{
	if (!r->reverse.folded)
		return;
	r->status = RP_ST_OK;
	r->reason[0] = '\0';
	r->cause_side = RP_SIDE_NONE;
	r->reverse.folded = false;
}

double rp_pair_gbps_sum(const struct rp_pair_result *r)
{
	return r->gbps + (r->reverse.measured ? r->reverse.gbps : 0);
}

static bool rate_ok(double g)
{
	return isfinite(g) && g >= 0;
}

bool rp_pair_reverse_valid(const struct rp_pair_reverse *v)
{
	uint8_t measured, folded, verified;

	/* a bool that is neither 0 nor 1 must not be read as a bool */
	memcpy(&measured, &v->measured, 1);
	memcpy(&folded, &v->folded, 1);
	memcpy(&verified, &v->verified, 1);
	return measured <= 1 && folded <= 1 && verified <= 1 && (!folded || measured) && (int)v->status >= 0 &&
	       v->status < RP_ST_COUNT_ && (int)v->cause_side >= 0 && v->cause_side <= RP_SIDE_DST &&
	       memchr(v->reason, '\0', sizeof(v->reason)) && rate_ok(v->gbps) && rate_ok(v->gbps_min) &&
	       rate_ok(v->gbps_min_at_s) && v->bad_offset >= -1 && v->warnings < (1u << RP_WARN_COUNT_);
}
