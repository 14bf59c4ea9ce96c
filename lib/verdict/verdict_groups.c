/* verdict_groups.c: failed directions grouped by suspect; see verdict_groups.h. */
#include "verdict/verdict_groups.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

/* One failed direction of a LINK group, before they are sorted into groups. */
struct link_fail {
	uint32_t a, b;
	size_t i;
	enum rp_confirm confirm;
};

const char *rp_suspect_kind_name(enum rp_suspect_kind k)
{
	switch (k) {
	case RP_SUSPECT_ADAPTER: return "adapter";
	case RP_SUSPECT_UNUSABLE: return "unusable";
	case RP_SUSPECT_LINK: return "link";
	case RP_SUSPECT_KIND_COUNT_: break;
	}
	return "?";
}

/* The suspect of a failed direction s -> d: its kind and key (see the header's rules). */
enum rp_suspect_kind rp_fail_suspect(const struct rp_verdict *v, uint32_t s, uint32_t d, uint32_t *a, uint32_t *b)
{
	bool ds = v->eps[s].drain, dd = v->eps[d].drain;

	if (ds || dd) {
		*a = *b = ds && (!dd || v->eps[s].failed >= v->eps[d].failed) ? s : d;
		return RP_SUSPECT_ADAPTER;
	}
	ds = v->eps[s].unusable;
	dd = v->eps[d].unusable;
	if (ds || dd) {
		*a = *b = ds && (!dd || v->eps[s].failed >= v->eps[d].failed) ? s : d;
		return RP_SUSPECT_UNUSABLE;
	}
	*a = s < d ? s : d;
	*b = s < d ? d : s;
	return RP_SUSPECT_LINK;
}

static void group_add(struct rp_fail_group *g, size_t i, enum rp_confirm confirm)
{
	if (g->n_ex < RP_GROUP_EXAMPLES)
		g->ex[g->n_ex++] = i;
	g->n++;
	g->confirmed += rp_confirm_held(confirm);
	g->by_endpoint += confirm == RP_CONFIRM_BY_ENDPOINT;
}

static int link_cmp(const void *x, const void *y)
{
	const struct link_fail *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return (p->i > q->i) - (p->i < q->i);
}

/* Largest first, then by endpoint numbers: the order a report shows them in. */
static int group_cmp(const void *x, const void *y)
{
	const struct rp_fail_group *p = x, *q = y;

	if (p->n != q->n)
		return p->n > q->n ? -1 : 1;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return (p->b > q->b) - (p->b < q->b);
}

/* Read every pair once: ADAPTER and UNUSABLE failures into per-endpoint groups, LINK failures into *lf. */
static int collect(const struct rp_verdict *v, const uint32_t *pair_eps, const struct rp_result_seq *ps,
		   struct rp_fail_group *per_ep, struct link_fail **lf, size_t *n_lf, struct rp_fail_groups *fg)
{
	size_t cap = 0;

	for (size_t i = 0; i < ps->n; i++) {
		struct rp_result_peek pk;
		uint32_t s = pair_eps[2 * i], d = pair_eps[2 * i + 1], a, b;

		rp_result_seq_peek(ps, i, &pk);
		if (pk.status == RP_ST_OK)
			continue;
		if (s >= v->n_eps || d >= v->n_eps)
			return rp_error(-EINVAL, "failure groups: pair %zu names endpoint %u of %zu", i, s > d ? s : d,
					v->n_eps);
		enum rp_suspect_kind k = rp_fail_suspect(v, s, d, &a, &b);

		fg->n_failed++;
		fg->kind_failed[k]++;
		if (k != RP_SUSPECT_LINK) {
			per_ep[a].kind = k;     /* an endpoint is drained or unusable, never both */
			group_add(&per_ep[a], i, pk.confirm);
			continue;
		}
		if (*n_lf == cap) {
			size_t nc = cap ? 2 * cap : 1024;
			struct link_fail *t = realloc(*lf, nc * sizeof(*t));

			if (!t)
				return -ENOMEM;
			*lf = t;
			cap = nc;
		}
		(*lf)[(*n_lf)++] = (struct link_fail){ .a = a, .b = b, .i = i, .confirm = pk.confirm };
	}
	return 0;
}

/* The groups of *fg from the per-endpoint groups and the sorted LINK failures. */
static int assemble(const struct rp_verdict *v, struct rp_fail_group *per_ep, const struct link_fail *lf, size_t n_lf,
		    struct rp_fail_groups *fg)
{
	size_t n_links = 0, n_ad = 0, k = 0;

	for (size_t e = 0; e < v->n_eps; e++)
		n_ad += per_ep[e].n > 0;
	for (size_t j = 0; j < n_lf; j++)
		n_links += j == 0 || lf[j].a != lf[j - 1].a || lf[j].b != lf[j - 1].b;
	fg->g = calloc(n_ad + n_links + 1, sizeof(*fg->g));
	if (!fg->g)
		return -ENOMEM;
	for (int kind = RP_SUSPECT_ADAPTER; kind < RP_SUSPECT_LINK; kind++) {
		size_t first = k;

		for (size_t e = 0; e < v->n_eps; e++)
			if (per_ep[e].n && per_ep[e].kind == (enum rp_suspect_kind)kind)
				fg->g[k++] = per_ep[e];
		if (k - first > 1)   /* qsort's array may be NULL when empty */
			qsort(fg->g + first, k - first, sizeof(*fg->g), group_cmp);
		fg->kind_first[kind] = first;
		fg->kind_groups[kind] = k - first;
	}
	fg->kind_first[RP_SUSPECT_LINK] = k;
	for (size_t j = 0; j < n_lf; j++) {
		if (j == 0 || lf[j].a != lf[j - 1].a || lf[j].b != lf[j - 1].b)
			fg->g[k++] = (struct rp_fail_group){ .kind = RP_SUSPECT_LINK, .a = lf[j].a, .b = lf[j].b };
		group_add(&fg->g[k - 1], lf[j].i, lf[j].confirm);
	}
	fg->kind_groups[RP_SUSPECT_LINK] = n_links;
	if (n_links > 1)   /* qsort's array may be NULL when empty */
		qsort(fg->g + fg->kind_first[RP_SUSPECT_LINK], n_links, sizeof(*fg->g), group_cmp);
	fg->n = k;
	return 0;
}

int rp_fail_groups_build(const struct rp_verdict *v, const uint32_t *pair_eps, const struct rp_result_seq *ps,
			 struct rp_fail_groups *fg)
{
	struct rp_fail_group *per_ep = calloc(v->n_eps + 1, sizeof(*per_ep));
	struct link_fail *lf = NULL;
	size_t n_lf = 0;
	int rc;

	memset(fg, 0, sizeof(*fg));
	if (!per_ep)
		return -ENOMEM;
	for (size_t e = 0; e < v->n_eps; e++)
		per_ep[e] = (struct rp_fail_group){ .kind = RP_SUSPECT_ADAPTER, .a = (uint32_t)e, .b = (uint32_t)e };
	rc = collect(v, pair_eps, ps, per_ep, &lf, &n_lf, fg);
	if (!rc) {
		if (n_lf)   /* lf is NULL when no link failed: qsort must not see it (UBSan) */
			qsort(lf, n_lf, sizeof(*lf), link_cmp);
		rc = assemble(v, per_ep, lf, n_lf, fg);
	}
	free(per_ep);
	free(lf);
	if (rc)
		rp_fail_groups_fini(fg);
	return rc;
}

void rp_fail_groups_fini(struct rp_fail_groups *fg)
{
	free(fg->g);
	memset(fg, 0, sizeof(*fg));
}
