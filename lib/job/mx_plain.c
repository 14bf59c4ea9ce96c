/* mx_plain.c: a plain pass as a 64-byte record; see mx_plain.h. */
#include "job/mx_plain.h"

#include <math.h>
#include <string.h>

#include "health/counters.h"

/* The record of r (meaningful only when r is a plain pass). */
static void plain_build(const struct rp_pair_result *r, struct mx_plain *p)
{
	const struct rp_pair_ctr_side *side[2] = { &r->counters.src, &r->counters.dst };

	memset(p, 0, sizeof(*p));
	p->gbps = r->gbps;
	p->gbps_min = r->gbps_min;
	p->gbps_min_at_s = r->gbps_min_at_s;
	p->elapsed_s = r->elapsed_s;
	p->bytes = r->bytes;
	p->iters = r->iters;
	p->msg_size = (uint32_t)r->msg_size;
	p->warnings = (uint16_t)r->warnings;
	p->qp_timeout = (uint8_t)r->attempts[0].qp_timeout;
	for (int k = 0; k < 2; k++) {
		p->ctr_measured |= (uint8_t)((side[k]->measured ? 1u : 0u) << k);
		p->n_moved[k] = (uint16_t)side[k]->n_moved;
	}
}

void mx_plain_expand(const struct mx_plain *p, const struct rp_endpoint *src, const struct rp_endpoint *dst,
		     struct rp_pair_result *out)
{
	struct rp_pair_ctr_side *side[2] = { &out->counters.src, &out->counters.dst };
	struct rp_attempt *a = &out->attempts[0];

	rp_pair_result_init(out, src, dst);
	out->status = RP_ST_OK;
	out->gbps = p->gbps;
	out->gbps_min = p->gbps_min;
	out->gbps_min_at_s = p->gbps_min_at_s;
	out->elapsed_s = p->elapsed_s;
	out->bytes = p->bytes;
	out->iters = p->iters;
	out->msg_size = p->msg_size;
	out->verified = true;
	out->warnings = p->warnings;
	out->n_attempts = 1;
	a->status = RP_ST_OK;
	a->gbps = p->gbps;
	a->gbps_min = p->gbps_min;
	a->qp_timeout = p->qp_timeout;
	a->elapsed_s = p->elapsed_s;
	for (int k = 0; k < 2; k++) {
		if (!(p->ctr_measured & (1u << k)))
			continue;
		side[k]->measured = 1;
		side[k]->n_moved = p->n_moved[k];
		side[k]->brief = 1;
	}
}

/* A side as its record keeps it: judged ok with only informational counters moved (listed or not),
 * or not measured. false when the side holds more than that. */
static bool side_brief(const struct rp_pair_ctr_side *s, struct rp_pair_ctr_side *out)
{
	*out = *s;
	if (!s->measured)
		return true;
	for (uint32_t i = 0; i < s->n && i < RP_PAIR_CTR_MAX; i++)
		if (s->c[i].cls != RP_CC_OTHER && s->c[i].cls != RP_CC_TRAFFIC)
			return false;
	memset(out->c, 0, sizeof(out->c));
	out->n = 0;
	out->brief = 1;
	return true;
}

bool mx_plain_of(const struct rp_pair_result *r, const struct rp_endpoint *src, const struct rp_endpoint *dst,
		 struct mx_plain *p)
{
	struct rp_pair_result m, c;

	if (r->status != RP_ST_OK || r->n_attempts != 1 || r->reason[0] || r->secondary.reason[0] ||
	    !isfinite(r->gbps) || !isfinite(r->gbps_min) || !isfinite(r->gbps_min_at_s) || !isfinite(r->elapsed_s) ||
	    r->attempts[0].reason[0] || r->msg_size > UINT32_MAX || r->warnings > UINT16_MAX ||
	    r->counters.src.n_moved > UINT16_MAX || r->counters.dst.n_moved > UINT16_MAX)
		return false;
	/* an emptied string may keep old bytes past its terminator (the verdict clears a reason by its
	 * first byte): they mean nothing, so they are not compared */
	c = *r;
	memset(c.reason, 0, sizeof(c.reason));
	memset(c.secondary.reason, 0, sizeof(c.secondary.reason));
	memset(c.attempts[0].reason, 0, sizeof(c.attempts[0].reason));
	if (!side_brief(&r->counters.src, &c.counters.src) || !side_brief(&r->counters.dst, &c.counters.dst))
		return false;
	plain_build(r, p);
	mx_plain_expand(p, src, dst, &m);
	return memcmp(&m, &c, sizeof(m)) == 0;
}

bool mx_plain_valid(const struct mx_plain *p)
{
	return p->ctr_measured <= 3 && p->warnings < (1u << RP_WARN_COUNT_) && p->n_moved[0] <= RP_CTR_MAX &&
	       p->n_moved[1] <= RP_CTR_MAX && p->pad == 0 && isfinite(p->gbps) && isfinite(p->gbps_min) &&
	       isfinite(p->gbps_min_at_s) && isfinite(p->elapsed_s);
}
