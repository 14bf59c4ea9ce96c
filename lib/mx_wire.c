/* mx_wire.c: checks of the matrix's received records; see mx_wire.h. */
#include "mx_wire.h"

#include "counters.h"

/* A rank's port counters: in range and terminated (checked on a copy: the check sanitises). */
static bool ctr_ok(const struct rp_pair_ctr_side *s)
{
	struct rp_pair_ctr_side copy = *s;
	char why[8];

	return rp_ctr_side_validate(&copy, why, sizeof(why)) == 0;
}

bool mx_wire_res_ok(const struct mx_wire_res *w, const struct mx_job *jobs, size_t n_jobs)
{
	const struct rp_pair_result *r = &w->r;

	return w->idx < n_jobs && w->dir < 2 && (jobs[w->idx].dirs & (1u << w->dir)) && (int)r->status >= 0 &&
	       r->status < RP_ST_COUNT_ && mx_str_terminated(r->reason, sizeof(r->reason)) &&
	       mx_str_terminated(r->src.node, sizeof(r->src.node)) && mx_str_terminated(r->dst.node, sizeof(r->dst.node)) &&
	       mx_str_terminated(r->src.device, sizeof(r->src.device)) &&
	       mx_str_terminated(r->dst.device, sizeof(r->dst.device)) && mx_str_terminated(r->src.mem, sizeof(r->src.mem)) &&
	       mx_str_terminated(r->dst.mem, sizeof(r->dst.mem)) && mx_str_terminated(r->src.mem_reg, sizeof(r->src.mem_reg)) &&
	       mx_str_terminated(r->dst.mem_reg, sizeof(r->dst.mem_reg)) && ctr_ok(&r->counters.src) &&
	       ctr_ok(&r->counters.dst) && rp_pair_reverse_valid(&r->reverse);
}

bool mx_report_ok(const void *buf, size_t len)
{
	const struct mx_hdr *h = buf;
	const struct mx_wire_rank *rk;
	uint64_t sum = 0;

	if (len < sizeof(*h) || h->magic != MX_MAGIC || h->version != MX_VERSION || h->kind != MX_KIND_REPORT ||
	    h->length != len || len != mx_report_len(h->n, h->n_ranks))
		return false;
	rk = mx_report_ranks(buf);
	for (uint32_t i = 0; i < h->n_ranks; i++)
		sum += rk[i].n_rec;
	return sum == h->n;
}
