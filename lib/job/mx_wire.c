/* mx_wire.c: checks of the matrix's received records; see mx_wire.h. */
#include "job/mx_wire.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "health/counters.h"

/* A rank's port counters: in range and terminated (checked on a copy: the check sanitises). */
static bool ctr_ok(const struct rp_pair_ctr_side *s)
{
	struct rp_pair_ctr_side copy = *s;
	char why[8];

	return rp_ctr_side_validate(&copy, why, sizeof(why)) == 0;
}

bool mx_side_job_ok(const struct mx_wire_side *s, const struct mx_job *jobs, size_t n_jobs)
{
	return s->idx < n_jobs && s->dir < 2 && s->writer < 2 && (jobs[s->idx].dirs & (1u << s->dir));
}

bool mx_side_ok(const struct mx_wire_side *s, const struct rp_pair_result *r, const struct mx_job *jobs,
		size_t n_jobs)
{
	return mx_side_job_ok(s, jobs, n_jobs) && (int)r->status >= 0 && r->status < RP_ST_COUNT_ && mx_str_terminated(r->reason, sizeof(r->reason)) &&
	       mx_str_terminated(r->src.node, sizeof(r->src.node)) && mx_str_terminated(r->dst.node, sizeof(r->dst.node)) &&
	       mx_str_terminated(r->src.device, sizeof(r->src.device)) &&
	       mx_str_terminated(r->dst.device, sizeof(r->dst.device)) && mx_str_terminated(r->src.mem, sizeof(r->src.mem)) &&
	       mx_str_terminated(r->dst.mem, sizeof(r->dst.mem)) && mx_str_terminated(r->src.mem_reg, sizeof(r->src.mem_reg)) &&
	       mx_str_terminated(r->dst.mem_reg, sizeof(r->dst.mem_reg)) && ctr_ok(&r->counters.src) &&
	       ctr_ok(&r->counters.dst) && rp_pair_reverse_valid(&r->reverse);
}

/* What the engine learned of an endpoint into a plain side's slot k. */
static void learned_put(struct mx_wire_plain *wp, int k, const struct rp_endpoint *e)
{
	wp->mtu[k] = e->mtu;
	wp->soft[k] = e->soft;
	memcpy(wp->mem[k], e->mem, sizeof(wp->mem[k]));
	memcpy(wp->mem_reg[k], e->mem_reg, sizeof(wp->mem_reg[k]));
}

/* What a reader takes of a plain side: its record in range, the endpoints' strings terminated, soft 0
 * or 1, no negative MTU. */
static bool plain_ok(const struct mx_wire_plain *wp)
{
	for (int k = 0; k < 2; k++)
		if (!mx_str_terminated(wp->mem[k], sizeof(wp->mem[k])) ||
		    !mx_str_terminated(wp->mem_reg[k], sizeof(wp->mem_reg[k])) || wp->soft[k] > 1 || wp->mtu[k] < 0)
			return false;
	return mx_plain_valid(&wp->p);
}

size_t mx_side_write(uint8_t *out, uint32_t idx, uint32_t dir, bool writer, const struct rp_pair_result *r)
{
	struct mx_wire_side s = { .idx = idx, .dir = dir, .writer = writer };
	struct mx_wire_plain wp;
	size_t size;
	bool plain;

	memset(&wp, 0, sizeof(wp));
	plain = mx_plain_of(r, &r->src, &r->dst, &wp.p);
	if (plain) {
		learned_put(&wp, 0, &r->src);
		learned_put(&wp, 1, &r->dst);
	}
	/* plain only when its reader takes it as it is (else packed, every byte, as always) */
	if (plain && plain_ok(&wp)) {
		memcpy(out, &s, sizeof(s));
		memcpy(out + sizeof(s), &wp, sizeof(wp));
		return mx_side_size(0);
	}
	s.len = (uint32_t)rp_result_pack(r, out + sizeof(s));
	memcpy(out, &s, sizeof(s));
	size = mx_side_size(s.len);
	memset(out + sizeof(s) + s.len, 0, size - sizeof(s) - s.len);
	return size;
}

size_t mx_side_write_brief(uint8_t *out, uint32_t idx, uint32_t dir, bool writer, double elapsed_s)
{
	struct mx_wire_side s = { .idx = idx, .dir = dir, .writer = writer, .len = MX_SIDE_BRIEF };
	struct mx_wire_brief b = { .elapsed_s = elapsed_s };

	memcpy(out, &s, sizeof(s));
	memcpy(out + sizeof(s), &b, sizeof(b));
	return mx_side_size(MX_SIDE_BRIEF);
}

bool mx_side_brief(const struct mx_wire_side *s, double *elapsed_s)
{
	struct mx_wire_brief b;

	memcpy(&b, s + 1, sizeof(b));
	*elapsed_s = b.elapsed_s;
	return isfinite(b.elapsed_s) && b.elapsed_s >= 0;
}

bool mx_side_plain(const struct mx_wire_side *s, struct mx_wire_plain *wp)
{
	mx_side_plain_get(s, wp);
	return plain_ok(wp);
}

void mx_side_plain_get(const struct mx_wire_side *s, struct mx_wire_plain *wp)
{
	memcpy(wp, s + 1, sizeof(*wp));
}

void mx_plain_eps(const struct mx_wire_plain *wp, struct rp_endpoint *src, struct rp_endpoint *dst)
{
	struct rp_endpoint *e[2] = { src, dst };

	for (int k = 0; k < 2; k++) {
		memset(e[k], 0, sizeof(*e[k]));
		e[k]->mtu = wp->mtu[k];
		e[k]->soft = wp->soft[k] != 0;
		memcpy(e[k]->mem, wp->mem[k], sizeof(e[k]->mem));
		memcpy(e[k]->mem_reg, wp->mem_reg[k], sizeof(e[k]->mem_reg));
	}
}

int mx_side_read(const struct mx_wire_side *s, struct rp_pair_result *r)
{
	struct mx_wire_plain wp;
	struct rp_endpoint src, dst;

	if (s->len == MX_SIDE_BRIEF) {
		memset(r, 0, sizeof(*r));
		return -EPROTO;
	}
	if (s->len)
		return rp_result_unpack((const uint8_t *)(s + 1), s->len, r);
	if (!mx_side_plain(s, &wp)) {
		memset(r, 0, sizeof(*r));
		return -EPROTO;
	}
	mx_plain_eps(&wp, &src, &dst);
	mx_plain_expand(&wp.p, &src, &dst, r);
	return 0;
}

bool mx_report_ok(const void *buf, size_t len)
{
	const struct mx_hdr *h = buf;
	const struct mx_wire_rank *rk;
	const uint8_t *p, *end;
	uint64_t sum = 0;

	if (len < sizeof(*h) || h->magic != MX_MAGIC || h->version != MX_VERSION || h->kind != MX_KIND_REPORT ||
	    h->length != len || (uint64_t)h->n_ranks * sizeof(*rk) > len - sizeof(*h))
		return false;
	p = mx_report_recs(buf);
	end = (const uint8_t *)buf + len - (size_t)h->n_ranks * sizeof(*rk);
	for (uint32_t i = 0; i < h->n; i++) {
		struct mx_wire_side s;

		if ((size_t)(end - p) < sizeof(s))
			return false;
		memcpy(&s, p, sizeof(s));
		if ((s.len > RP_PACK_MAX && s.len != MX_SIDE_BRIEF) || (size_t)(end - p) < mx_side_size(s.len))
			return false;
		p += mx_side_size(s.len);
	}
	if (p != end)
		return false;
	rk = mx_report_ranks(buf);
	for (uint32_t i = 0; i < h->n_ranks; i++)
		sum += rk[i].n_rec;
	return sum == h->n;
}
