/* mx_got.c: a round's results, packed; see mx_got.h. */
#include "matrix/mx_got.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Room for n slots' plain sides. 0 or -ENOMEM. */
static int plain_room(struct mx_got *g, size_t n)
{
	struct mx_wire_plain *pl;

	if (n <= g->plain_cap)
		return 0;
	pl = realloc(g->plain, n * sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	g->plain = pl;
	g->plain_cap = n;
	return 0;
}

int mx_got_reset(struct mx_got *g, size_t n_slots, const struct mx_ep *eps, const struct mx_job *jobs)
{
	g->eps = eps;
	g->jobs = jobs;
	for (size_t k = 0; k < g->n; k++)
		rp_packed_clear(&g->d[k]);
	g->n = 0;
	if (n_slots > g->cap) {
		struct rp_packed *d = realloc(g->d, n_slots * sizeof(*d));
		uint8_t *w, *ip;
		double *el;

		if (!d)
			return -ENOMEM;
		g->d = d;
		w = realloc(g->writer, n_slots);
		if (!w)
			return -ENOMEM;
		g->writer = w;
		ip = realloc(g->is_plain, n_slots);
		if (!ip)
			return -ENOMEM;
		g->is_plain = ip;
		el = realloc(g->elapsed, n_slots * sizeof(*el));
		if (!el)
			return -ENOMEM;
		g->elapsed = el;
		g->cap = n_slots;
	}
	if (!g->brief && plain_room(g, n_slots) != 0)
		return -ENOMEM;
	if (n_slots) {
		memset(g->d, 0, n_slots * sizeof(*g->d));
		memset(g->writer, 0, n_slots);
		memset(g->is_plain, 0, n_slots);
	}
	g->n = n_slots;
	return 0;
}

int mx_got_set(struct mx_got *g, size_t k, const struct rp_pair_result *r, bool writer)
{
	if (k >= g->n || rp_packed_set(&g->d[k], r) != 0)
		return -ENOMEM;
	g->writer[k] = writer;
	g->is_plain[k] = 0;
	return 0;
}

/* Whether a side's view (writer's or not, of status st) gives way to what slot k holds. */
static bool side_yields(const struct mx_got *g, size_t k, int32_t st, bool writer)
{
	if (!mx_got_have(g, k))
		return false;
	return mx_got_status(g, k) == RP_ST_INTERRUPTED || (g->writer[k] && !writer && st != RP_ST_INTERRUPTED);
}

int mx_got_side(struct mx_got *g, size_t k, const struct rp_pair_result *r, bool writer)
{
	if (side_yields(g, k, (int32_t)r->status, writer))
		return 0;
	return mx_got_set(g, k, r, writer);
}

int mx_got_side_packed(struct mx_got *g, size_t k, const uint8_t *bytes, size_t len, bool writer)
{
	int32_t st;
	int rc;

	if (k >= g->n)
		return -ENOMEM;
	if (rp_result_status(bytes, len, &st) != 0)
		return -EPROTO;
	if (side_yields(g, k, st, writer))
		return 0;
	rc = rp_packed_set_bytes(&g->d[k], bytes, len, st);
	if (!rc) {
		g->writer[k] = writer;
		g->is_plain[k] = 0;
	}
	return rc;
}

int mx_got_side_brief(struct mx_got *g, size_t k, double elapsed_s, bool writer)
{
	if (k >= g->n || side_yields(g, k, RP_ST_OK, writer))
		return 0;
	rp_packed_clear(&g->d[k]);
	g->d[k].status = RP_ST_OK;
	g->elapsed[k] = elapsed_s;
	g->is_plain[k] = 2;
	g->writer[k] = writer;
	return 0;
}

int mx_got_side_plain(struct mx_got *g, size_t k, const struct mx_wire_plain *wp, bool writer)
{
	if (g->brief)
		return mx_got_side_brief(g, k, wp->p.elapsed_s, writer);
	if (k >= g->n || side_yields(g, k, RP_ST_OK, writer))
		return 0;
	rp_packed_clear(&g->d[k]);
	g->d[k].status = RP_ST_OK;
	g->plain[k] = *wp;
	g->is_plain[k] = 1;
	g->writer[k] = writer;
	return 0;
}

double mx_got_elapsed(const struct mx_got *g, size_t k)
{
	struct rp_pair_result tmp;

	if (g->is_plain[k] == 2)
		return g->elapsed[k];
	if (g->is_plain[k] == 1)
		return g->plain[k].p.elapsed_s;
	return mx_got_get(g, k, &tmp)->elapsed_s;
}

/* End k (0 src, 1 dst) of a plain side as mx_got_ep_merge makes it of the side's endpoint
 * (mx_plain_eps) and the table's: the table's description, with what the engine learned kept. Built
 * in place: one copy of the table's endpoint instead of four (a plain side per direction at rank 0). */
static void plain_ep(const struct mx_wire_plain *wp, int k, const struct rp_endpoint *table, struct rp_endpoint *out)
{
	*out = *table;
	if (wp->mtu[k])
		out->mtu = wp->mtu[k];
	if (wp->mem[k][0])
		memcpy(out->mem, wp->mem[k], sizeof(out->mem));
	if (wp->mem_reg[k][0])
		memcpy(out->mem_reg, wp->mem_reg[k], sizeof(out->mem_reg));
	out->soft = out->soft || wp->soft[k] != 0;
}

bool mx_got_plain(const struct mx_got *g, size_t k, struct mx_plain *p, struct rp_endpoint *src, struct rp_endpoint *dst)
{
	if (k >= g->n || g->is_plain[k] != 1)
		return false;
	*p = g->plain[k].p;
	if (g->eps && g->jobs) {
		const struct mx_job *j = &g->jobs[k / 2];

		plain_ep(&g->plain[k], 0, &g->eps[k % 2 ? j->b : j->a].ep, src);
		plain_ep(&g->plain[k], 1, &g->eps[k % 2 ? j->a : j->b].ep, dst);
	} else {
		mx_plain_eps(&g->plain[k], src, dst);
	}
	return true;
}

bool mx_got_ep_from_table(const struct mx_got *g, uint32_t e, const struct rp_endpoint *ep)
{
	const struct rp_endpoint *t;
	struct rp_endpoint m;

	if (!g->eps)
		return false;
	t = &g->eps[e].ep;
	m = *ep;                      /* ep with the learned fields as the table has them */
	m.mtu = t->mtu;
	memcpy(m.mem, t->mem, sizeof(m.mem));
	memcpy(m.mem_reg, t->mem_reg, sizeof(m.mem_reg));
	m.soft = t->soft;
	return memcmp(&m, t, sizeof(m)) == 0;
}

/* End i (0 src, 1 dst) of plain side wp as plain_ep would build it of table, compared with kept in
 * the learned fields alone (the rest of kept is table's, the caller knows). */
static bool learned_is(const struct mx_wire_plain *wp, int i, const struct rp_endpoint *table,
		       const struct rp_endpoint *kept)
{
	return kept->mtu == (wp->mtu[i] ? wp->mtu[i] : table->mtu) &&
	       memcmp(kept->mem, wp->mem[i][0] ? wp->mem[i] : table->mem, sizeof(kept->mem)) == 0 &&
	       memcmp(kept->mem_reg, wp->mem_reg[i][0] ? wp->mem_reg[i] : table->mem_reg, sizeof(kept->mem_reg)) == 0 &&
	       kept->soft == (table->soft || wp->soft[i] != 0);
}

bool mx_got_plain_ends_are(const struct mx_got *g, size_t k, const struct rp_endpoint *src, const struct rp_endpoint *dst)
{
	const struct mx_job *j;

	if (k >= g->n || g->is_plain[k] != 1 || !g->eps || !g->jobs)
		return false;
	j = &g->jobs[k / 2];
	return learned_is(&g->plain[k], 0, &g->eps[k % 2 ? j->b : j->a].ep, src) &&
	       learned_is(&g->plain[k], 1, &g->eps[k % 2 ? j->a : j->b].ep, dst);
}

struct rp_pair_result *mx_got_get_kept(const struct mx_got *g, size_t k, struct rp_pair_result *tmp, bool *as_packed)
{
	struct rp_endpoint was[2];
	struct mx_plain p;

	if (mx_got_plain(g, k, &p, &was[0], &was[1])) {
		mx_plain_expand(&p, &was[0], &was[1], tmp);
		*as_packed = false;
		return tmp;
	}
	if (g->is_plain[k] == 2) {
		memset(&was, 0, sizeof(was));
		if (g->eps && g->jobs) {
			const struct mx_job *j = &g->jobs[k / 2];

			was[0] = g->eps[k % 2 ? j->b : j->a].ep;
			was[1] = g->eps[k % 2 ? j->a : j->b].ep;
		}
		rp_pair_result_init(tmp, &was[0], &was[1]);
		tmp->status = RP_ST_OK;
		tmp->elapsed_s = g->elapsed[k];
		*as_packed = false;
		return tmp;
	}
	rp_packed_get(&g->d[k], tmp);
	*as_packed = true;
	if (g->eps && g->jobs) {
		const struct mx_job *j = &g->jobs[k / 2];

		was[0] = tmp->src;
		was[1] = tmp->dst;
		mx_got_ep_merge(&tmp->src, &g->eps[k % 2 ? j->b : j->a].ep);
		mx_got_ep_merge(&tmp->dst, &g->eps[k % 2 ? j->a : j->b].ep);
		*as_packed = memcmp(&was[0], &tmp->src, sizeof(was[0])) == 0 && memcmp(&was[1], &tmp->dst, sizeof(was[1])) == 0;
	}
	return tmp;
}

struct rp_pair_result *mx_got_get(const struct mx_got *g, size_t k, struct rp_pair_result *tmp)
{
	bool same;

	return mx_got_get_kept(g, k, tmp, &same);
}

void mx_got_ep_merge(struct rp_endpoint *dst, const struct rp_endpoint *table)
{
	struct rp_endpoint e = *table;

	if (dst->mtu)
		e.mtu = dst->mtu;
	if (dst->mem[0])
		memcpy(e.mem, dst->mem, sizeof(e.mem));
	if (dst->mem_reg[0])
		memcpy(e.mem_reg, dst->mem_reg, sizeof(e.mem_reg));
	/* the engine found it a software device (rxe, siw): its link rate is nominal, and the verdict
	 * must not hold the pair to a fraction of it (before: lost here, and every rxe pair of a matrix
	 * without --min-bw 0 failed below_threshold) */
	e.soft = e.soft || dst->soft;
	*dst = e;
}

size_t mx_got_bytes(const struct mx_got *g)
{
	size_t b = g->cap * (sizeof(*g->d) + sizeof(*g->elapsed) + 2) + g->plain_cap * sizeof(*g->plain);

	for (size_t k = 0; k < g->n; k++)
		b += g->d[k].len;
	return b;
}

void mx_got_fini(struct mx_got *g)
{
	for (size_t k = 0; k < g->n; k++)
		rp_packed_clear(&g->d[k]);
	free(g->d);
	free(g->writer);
	free(g->plain);
	free(g->is_plain);
	free(g->elapsed);
	memset(g, 0, sizeof(*g));
}
