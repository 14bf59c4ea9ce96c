/* result.c: status codes and helpers for rp_pair_result; see result.h. */
#include "result.h"

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
};

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
