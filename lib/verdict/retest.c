/* retest.c: measure failures again before the verdict; see retest.h. */
#include "verdict/retest.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"

static unsigned retests_done(const struct rp_pair_result *r)
{
	return r->n_attempts > 1 ? r->n_attempts - 1 : 0;
}

bool rp_retest_status_wanted(enum rp_status st)
{
	return st != RP_ST_OK && st != RP_ST_INTERRUPTED && st != RP_ST_NO_PORT && st != RP_ST_ENDPOINT_DEAD;
}

bool rp_retest_wanted(const struct rp_pair_result *r, unsigned max_retest)
{
	return rp_retest_status_wanted(r->status) && retests_done(r) < max_retest && r->n_attempts < RP_MAX_ATTEMPTS &&
	       r->confirm != RP_CONFIRM_BY_ENDPOINT;
}


/* Failures a short ACK timeout can cause on a healthy but busy or slow link. BELOW_THRESHOLD is not
 * one: a longer timeout only slows each retransmission down (see retest.h). REMOTE_INVALID is: a
 * responder that mishandles the retransmission of a multi-packet write NAKs it as an invalid
 * request (Soft-RoCE in a starved guest, results/matrix-scale-8-screen.md: healthy links failed
 * so twice in a row at the probe's timeout, none at NCCL's); a real invalid request recurs at any
 * timeout, so retesting it at NCCL's condemns nothing NCCL would run on. */
static bool timeout_sensitive(enum rp_status st)
{
	return st == RP_ST_RETRY_EXCEEDED || st == RP_ST_TIMEOUT || st == RP_ST_PEER_LOST ||
	       st == RP_ST_FLUSHED || st == RP_ST_REMOTE_INVALID;
}

void rp_retest_cfg(const struct rp_engine_cfg *base, const struct rp_pair_result *r,
		   struct rp_engine_cfg *next_p)
{
	*next_p = *base;
	if (timeout_sensitive(r->status) && next_p->qp.qp_timeout < RP_RETEST_NCCL_QP_TIMEOUT)
		next_p->qp.qp_timeout = RP_RETEST_NCCL_QP_TIMEOUT;
}

/* The last attempt takes the pair's current status and reason (what the verdict made of it). */
static void last_attempt_sync(struct rp_pair_result *r)
{
	struct rp_attempt *a;

	if (r->n_attempts == 0)
		return;
	a = &r->attempts[r->n_attempts - 1];
	a->status = r->status;
	rp_strlcpy(a->reason, r->reason, sizeof(a->reason));
}

void rp_retest_merge(struct rp_pair_result *r, const struct rp_pair_result *again)
{
	struct rp_attempt history[RP_MAX_ATTEMPTS];
	struct rp_pair_result next = *again;
	unsigned n;

	if (r->n_attempts == 0)
		rp_pair_result_record_attempt(r, -1);
	if (next.n_attempts == 0)
		rp_pair_result_record_attempt(&next, -1);
	last_attempt_sync(r);
	n = r->n_attempts;
	memcpy(history, r->attempts, sizeof(history));
	for (unsigned i = 0; i < next.n_attempts && n < RP_MAX_ATTEMPTS; i++)
		history[n++] = next.attempts[i];
	/* a retest that failed before the peer named its endpoint (its port is down now, say) still
	 * names the pair: the endpoints the earlier attempt learned stay */
	if (next.src.device[0] == '\0')
		next.src = r->src;
	if (next.dst.device[0] == '\0')
		next.dst = r->dst;
	*r = next;
	memcpy(r->attempts, history, sizeof(history));
	r->n_attempts = n;
	r->confirm = RP_CONFIRM_NONE;
	r->warnings = 0;
}

void rp_retest_classify(struct rp_pair_result *r, unsigned max_retest)
{
	bool earlier_failed = false;

	last_attempt_sync(r);
	for (unsigned i = 0; i + 1 < r->n_attempts; i++)
		earlier_failed |= r->attempts[i].status != RP_ST_OK;
	r->warnings &= ~(1u << RP_WARN_FLAKY);
	if (r->status == RP_ST_OK) {
		r->confirm = earlier_failed ? RP_CONFIRM_FLAKY : RP_CONFIRM_NONE;
		if (earlier_failed)
			r->warnings |= 1u << RP_WARN_FLAKY;
	} else if (retests_done(r) > 0 || max_retest == 0 || r->status == RP_ST_NO_PORT ||
		   r->status == RP_ST_ENDPOINT_DEAD) {
		/* NO_PORT is this side's own configuration: no second sample can change it; ENDPOINT_DEAD
		 * was confirmed for the endpoint as a whole (lib/matrix/mx_sweep.h) */
		r->confirm = RP_CONFIRM_CONFIRMED;
	} else if (r->confirm != RP_CONFIRM_BY_ENDPOINT) {
		/* (confirmed by its endpoint's sample, a mark only that sample's planner sets, it stays) */
		r->confirm = RP_CONFIRM_UNCONFIRMED;
	}
}

/* "retry_exceeded with --qp-timeout 14" or "ok 0.250 Gb/s" for one attempt. */
static int attempt_describe(const struct rp_attempt *a, char *buf, size_t len)
{
	char rate[48] = "", tmo[48] = "";

	if (a->status == RP_ST_OK || a->status == RP_ST_BELOW_THRESHOLD)
		snprintf(rate, sizeof(rate), " %.3f Gb/s", a->gbps);
	if (a->qp_timeout >= 0)
		snprintf(tmo, sizeof(tmo), " with --qp-timeout %d%s", a->qp_timeout,
			 a->qp_timeout == RP_RETEST_NCCL_QP_TIMEOUT ? " (NCCL's)" : "");
	return snprintf(buf, len, "%s%s%s", rp_status_code(a->status), rate, tmo);
}

const char *rp_retest_describe(const struct rp_pair_result *r, char *buf, size_t len)
{
	size_t used = 0;
	unsigned failed = 0;
	int n;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (r->confirm == RP_CONFIRM_NONE)
		return buf;
	for (unsigned i = 0; i < r->n_attempts; i++)
		failed += r->attempts[i].status != RP_ST_OK;
	n = snprintf(buf, len, "%s: failed %u of %u attempt%s (", rp_confirm_code(r->confirm), failed,
		     r->n_attempts, r->n_attempts == 1 ? "" : "s");
	for (unsigned i = 0; n > 0 && (size_t)n < len - used && i < r->n_attempts; i++) {
		used += (size_t)n;
		n = attempt_describe(&r->attempts[i], buf + used, len - used);
		if (n > 0 && (size_t)n < len - used && i + 1 < r->n_attempts) {
			used += (size_t)n;
			n = snprintf(buf + used, len - used, "; ");
		}
	}
	if (n > 0 && (size_t)n < len - used) {
		used += (size_t)n;
		snprintf(buf + used, len - used, "; %s)",
			 r->n_attempts > 1 ? "the last decided it"
			 : r->confirm == RP_CONFIRM_CONFIRMED ? "--retest 0: one sample decides"
			 : r->confirm == RP_CONFIRM_BY_ENDPOINT ? "not measured again: a sample of its endpoint's failed "
								  "pairs was, and every one failed again"
			 : "not measured again");
	}
	return buf;
}
