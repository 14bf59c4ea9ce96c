/* retest.c: measure failures again before the verdict; see retest.h. */
#include "retest.h"

#include <string.h>

static unsigned retests_done(const struct rp_pair_result *r)
{
	return r->n_attempts > 1 ? r->n_attempts - 1 : 0;
}

bool rp_retest_wanted(const struct rp_pair_result *r, unsigned max_retest)
{
	return r->status != RP_ST_OK && retests_done(r) < max_retest && r->n_attempts < RP_MAX_ATTEMPTS;
}

/* Failures a short ACK timeout can cause on a healthy but busy or slow link. */
static bool timeout_sensitive(enum rp_status st)
{
	return st == RP_ST_RETRY_EXCEEDED || st == RP_ST_TIMEOUT || st == RP_ST_PEER_LOST ||
	       st == RP_ST_FLUSHED || st == RP_ST_BELOW_THRESHOLD;
}

void rp_retest_cfg(const struct rp_engine_cfg *base, const struct rp_pair_result *r,
		   struct rp_engine_cfg *next_p)
{
	*next_p = *base;
	if (timeout_sensitive(r->status) && next_p->qp.qp_timeout < RP_RETEST_NCCL_QP_TIMEOUT)
		next_p->qp.qp_timeout = RP_RETEST_NCCL_QP_TIMEOUT;
}

void rp_retest_merge(struct rp_pair_result *r, const struct rp_pair_result *again)
{
	struct rp_attempt history[RP_MAX_ATTEMPTS];
	unsigned n = r->n_attempts;

	memcpy(history, r->attempts, sizeof(history));
	for (unsigned i = 0; i < again->n_attempts && n < RP_MAX_ATTEMPTS; i++)
		history[n++] = again->attempts[i];
	*r = *again;
	memcpy(r->attempts, history, sizeof(history));
	r->n_attempts = n;
}

void rp_retest_classify(struct rp_pair_result *r, unsigned max_retest)
{
	bool earlier_failed = false;

	if (r->n_attempts > 0)
		r->attempts[r->n_attempts - 1].status = r->status;   /* the verdict may have judged it */
	for (unsigned i = 0; i + 1 < r->n_attempts; i++)
		earlier_failed |= r->attempts[i].status != RP_ST_OK;
	if (r->status == RP_ST_OK) {
		r->confirm = earlier_failed ? RP_CONFIRM_FLAKY : RP_CONFIRM_NONE;
		if (earlier_failed)
			r->warnings |= 1u << RP_PW_FLAKY;
	} else if (retests_done(r) > 0 || max_retest == 0) {
		r->confirm = RP_CONFIRM_CONFIRMED;
	} else {
		r->confirm = RP_CONFIRM_UNCONFIRMED;
	}
}
