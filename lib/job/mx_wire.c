/* mx_wire.c: checks of the matrix's received records; see mx_wire.h. */
#include "job/mx_wire.h"

#include <string.h>

#include "health/counters.h"

/* A rank's port counters: in range and terminated (checked on a copy: the check sanitises). */
static bool ctr_ok(const struct rp_pair_ctr_side *s)
{
	struct rp_pair_ctr_side copy = *s;
	char why[8];

	return rp_ctr_side_validate(&copy, why, sizeof(why)) == 0;
}

bool mx_side_ok(const struct mx_wire_side *s, const struct rp_pair_result *r, const struct mx_job *jobs,
		size_t n_jobs)
{
	return s->idx < n_jobs && s->dir < 2 && s->writer < 2 && (jobs[s->idx].dirs & (1u << s->dir)) &&
	       (int)r->status >= 0 && r->status < RP_ST_COUNT_ && mx_str_terminated(r->reason, sizeof(r->reason)) &&
	       mx_str_terminated(r->src.node, sizeof(r->src.node)) && mx_str_terminated(r->dst.node, sizeof(r->dst.node)) &&
	       mx_str_terminated(r->src.device, sizeof(r->src.device)) &&
	       mx_str_terminated(r->dst.device, sizeof(r->dst.device)) && mx_str_terminated(r->src.mem, sizeof(r->src.mem)) &&
	       mx_str_terminated(r->dst.mem, sizeof(r->dst.mem)) && mx_str_terminated(r->src.mem_reg, sizeof(r->src.mem_reg)) &&
	       mx_str_terminated(r->dst.mem_reg, sizeof(r->dst.mem_reg)) && ctr_ok(&r->counters.src) &&
	       ctr_ok(&r->counters.dst) && rp_pair_reverse_valid(&r->reverse);
}

size_t mx_side_write(uint8_t *out, uint32_t idx, uint32_t dir, bool writer, const struct rp_pair_result *r)
{
	struct mx_wire_side s = { .idx = idx, .dir = dir, .writer = writer };
	size_t size;

	s.len = (uint32_t)rp_result_pack(r, out + sizeof(s));
	memcpy(out, &s, sizeof(s));
	size = mx_side_size(s.len);
	memset(out + sizeof(s) + s.len, 0, size - sizeof(s) - s.len);
	return size;
}

int mx_side_read(const struct mx_wire_side *s, struct rp_pair_result *r)
{
	return rp_result_unpack((const uint8_t *)(s + 1), s->len, r);
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
		if (s.len == 0 || s.len > RP_PACK_MAX || (size_t)(end - p) < mx_side_size(s.len))
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
