/* verdict_localize.c: localize failed peer pairs to fabric components with a topology (verdict.h,
 * "Blame", step 5; lib/discover/fabtopo.h).
 *
 * Components: each adapter (with its cable: the probes cannot tell them apart), each leaf, and with a
 * known route (dmodk) each leaf-spine link and each spine. A peer pair passes through both adapters,
 * their leaves, and between two leaves the uplinks and spines of both directions' routes. Greedy, as
 * a set cover weighted by evidence: a component's background rate is the failed share of the pairs
 * through neither it nor a chosen component; a component is a candidate when its unexplained
 * failures are improbable under it (binomial tail, Holm over the components); the candidate with the
 * highest log-likelihood ratio (its own failure rate against its background) is chosen, its pairs
 * are explained, and so on. */
#include "verdict/verdict_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover/fabtopo.h"
#include "base/log.h"
#include "base/util.h"

#define PAIR_COMPS_MAX 10
#define ALT_NONE UINT32_MAX

struct pick {
	uint32_t c, alt;              /* the component, and the round's runner-up (ALT_NONE) */
	uint32_t explained;           /* failed pairs it explained when chosen */
	double llr, alt_llr, lp, p0;
};

struct rp_localize {
	const struct rp_fabtopo_map *map;   /* the caller's */
	size_t n_eps, L, S, C;
	uint32_t *N, *F, *Fu;         /* per component: pairs measured, failed, failed and not explained */
	bool *chosen;
	uint32_t *fp;                 /* failed pairs: a, b */
	bool *fp_expl;
	size_t n_fp, n_pairs;
	struct pick *picks;
	size_t n_picks;
};

/* The components on the paths of peer pair {a, b}: out[0..n), n returned. */
static size_t pair_comps(const struct rp_localize *L, uint32_t a, uint32_t b, uint32_t *out)
{
	const struct rp_fabtopo_map *mp = L->map;
	uint32_t la = mp->leaf[a], lb = mp->leaf[b], sp[2];
	size_t n = 0, up0 = L->n_eps + L->L, sp0 = up0 + L->L * L->S;

	out[n++] = a;
	out[n++] = b;
	if (la != RP_FABTOPO_NONE)
		out[n++] = (uint32_t)(L->n_eps + la);
	if (lb != RP_FABTOPO_NONE && lb != la)
		out[n++] = (uint32_t)(L->n_eps + lb);
	if (la == RP_FABTOPO_NONE || lb == RP_FABTOPO_NONE || la == lb || !mp->dmodk)
		return n;
	sp[0] = rp_fabtopo_map_spine(mp, a, b);
	sp[1] = rp_fabtopo_map_spine(mp, b, a);
	for (int k = 0; k < 2; k++) {
		if (k == 1 && sp[1] == sp[0])
			break;
		out[n++] = (uint32_t)(up0 + (size_t)la * L->S + sp[k]);
		out[n++] = (uint32_t)(up0 + (size_t)lb * L->S + sp[k]);
		out[n++] = (uint32_t)(sp0 + sp[k]);
	}
	return n;
}

/* Count every known peer pair through every component; keep the failed ones. */
static int pairs_count(struct rp_localize *L, const struct rp_peer_index *pi)
{
	size_t cap = 0;

	for (uint32_t e = 0; e < L->n_eps; e++) {
		for (size_t x = pi->start[e]; x < pi->start[e + 1]; x++) {
			uint32_t p = rp_peer_of(pi->ent[x]), c[PAIR_COMPS_MAX];
			enum rp_peer_class cl = rp_peer_class_of(pi->ent[x]);
			size_t n;

			if (p < e || cl == RP_PEER_UNKNOWN)
				continue;
			n = pair_comps(L, e, p, c);
			L->n_pairs++;
			for (size_t k = 0; k < n; k++) {
				L->N[c[k]]++;
				L->F[c[k]] += cl == RP_PEER_FAILED;
			}
			if (cl != RP_PEER_FAILED)
				continue;
			if (L->n_fp == cap) {
				uint32_t *nf = realloc(L->fp, 2 * (cap = cap ? 2 * cap : 256) * sizeof(*nf));

				if (!nf)
					return -ENOMEM;
				L->fp = nf;
			}
			L->fp[2 * L->n_fp] = e;
			L->fp[2 * L->n_fp + 1] = p;
			L->n_fp++;
		}
	}
	L->fp_expl = calloc(L->n_fp + 1, sizeof(*L->fp_expl));
	if (!L->fp_expl)
		return -ENOMEM;
	memcpy(L->Fu, L->F, L->C * sizeof(*L->Fu));
	return 0;
}

/* Log-likelihood ratio of f failures in n pairs at their own rate against the background p0. */
static double llr(uint32_t f, uint32_t n, double p0)
{
	double h, r;

	if (!f || !n)
		return 0;
	h = (double)f / n;
	if (h <= p0)
		return 0;
	r = f * log(h / p0);
	if (n > f)
		r += (n - f) * log((1 - h) / (1 - p0));
	return r;
}

/* Choose c: explain its failed pairs (their other components lose them). */
static void choose(struct rp_localize *L, uint32_t c)
{
	L->chosen[c] = true;
	for (size_t i = 0; i < L->n_fp; i++) {
		uint32_t cs[PAIR_COMPS_MAX];
		size_t n;
		bool on = false;

		if (L->fp_expl[i])
			continue;
		n = pair_comps(L, L->fp[2 * i], L->fp[2 * i + 1], cs);
		for (size_t k = 0; k < n && !on; k++)
			on = cs[k] == c;
		if (!on)
			continue;
		L->fp_expl[i] = true;
		for (size_t k = 0; k < n; k++)
			L->Fu[cs[k]]--;
	}
}

/* The greedy rounds (see the head of the file). */
static int greedy(struct rp_localize *L, double log_alpha)
{
	size_t tested = 0, unexplained = L->n_fp;
	double covered = 0;

	for (size_t c = 0; c < L->C; c++)
		tested += L->N[c] > 0;
	L->picks = calloc(L->C + 1, sizeof(*L->picks));
	if (!L->picks)
		return -ENOMEM;
	while (tested > L->n_picks) {
		double rest = (double)L->n_pairs - covered, best_s = 0, second_s = 0, best_p0 = 0;
		uint32_t best = ALT_NONE, second = ALT_NONE;
		double best_lp = 0;

		for (uint32_t c = 0; c < L->C; c++) {
			double lp, s, p0, rest_f, rest_n;

			if (L->chosen[c] || !L->Fu[c])
				continue;
			/* the background outside c: the unexplained pairs not through it (on a small fabric the
			 * fault's own failures would otherwise be half of its background) */
			rest_f = (double)(unexplained - L->Fu[c]);
			rest_n = rest - L->N[c];
			if (rest_n < rest_f + 1)
				rest_n = rest_f + 1;
			p0 = (rest_f + 0.5) / (rest_n + 1);
			lp = rp_verdict_log_binom_tail(L->Fu[c], L->N[c], p0);
			if (lp >= log_alpha - log((double)(tested - L->n_picks)))
				continue;
			s = llr(L->Fu[c], L->N[c], p0);
			if (best == ALT_NONE || s > best_s) {
				second = best;
				second_s = best_s;
				best = c;
				best_s = s;
				best_lp = lp;
				best_p0 = p0;
			} else if (second == ALT_NONE || s > second_s) {
				second = c;
				second_s = s;
			}
		}
		if (best == ALT_NONE)
			break;
		L->picks[L->n_picks++] = (struct pick){ .c = best, .alt = second, .explained = L->Fu[best], .llr = best_s,
							.alt_llr = second_s, .lp = best_lp, .p0 = best_p0 };
		unexplained -= L->Fu[best];
		covered += L->N[best];
		choose(L, best);
	}
	return 0;
}

/* The drains of the endpoints the topology places: exactly the chosen adapters. */
static void drains_set(struct rp_localize *L, struct rp_verdict *v)
{
	for (size_t e = 0; e < L->n_eps; e++) {
		struct rp_verdict_ep *ve = &v->eps[e];

		if (L->map->leaf[e] == RP_FABTOPO_NONE)
			continue;     /* not in the file: the blame's decision stands */
		ve->drain = L->chosen[e];
		ve->why[0] = '\0';
	}
	for (size_t k = 0; k < L->n_picks; k++) {
		const struct pick *pk = &L->picks[k];
		struct rp_verdict_ep *ve;

		if (pk->c >= L->n_eps || L->map->leaf[pk->c] == RP_FABTOPO_NONE)
			continue;
		ve = &v->eps[pk->c];
		snprintf(ve->why, sizeof(ve->why), "adapter or its cable (%s port %u): %u of %u peer pairs through it failed, "
			 "background %.3g%% (p %.1e)", L->map->leaf_names[L->map->leaf[pk->c]], L->map->leaf_port[pk->c],
			 L->F[pk->c], L->N[pk->c], 100 * pk->p0, exp(pk->lp));
	}
}

int rp_localize_run(struct rp_localize **L_p, const struct rp_verdict_cfg *cfg, const struct rp_fabtopo_map *map,
		    const struct rp_endpoint *eps, size_t n_eps, const struct rp_peer_index *pi, struct rp_verdict *v)
{
	struct rp_localize *L = calloc(1, sizeof(*L));
	double alpha = cfg->alpha > 0 && cfg->alpha < 1 ? cfg->alpha : RP_VERDICT_ALPHA_DEFAULT;
	int rc;

	*L_p = NULL;
	if (!L)
		return rp_error(-ENOMEM, "verdict: allocate the localization");
	L->n_eps = n_eps;
	L->map = map;
	(void)eps;
	L->L = L->map->n_leaves;
	L->S = L->map->dmodk ? L->map->n_spines : 0;
	L->C = n_eps + L->L + L->L * L->S + L->S;
	L->N = calloc(L->C + 1, sizeof(*L->N));
	L->F = calloc(L->C + 1, sizeof(*L->F));
	L->Fu = calloc(L->C + 1, sizeof(*L->Fu));
	L->chosen = calloc(L->C + 1, sizeof(*L->chosen));
	rc = !L->N || !L->F || !L->Fu || !L->chosen ? -ENOMEM : 0;
	if (!rc)
		rc = pairs_count(L, pi);
	if (!rc)
		rc = greedy(L, log(alpha));
	if (rc) {
		rp_localize_destroy(L);
		return rp_error(rc, "verdict: localize over %zu endpoints", n_eps);
	}
	drains_set(L, v);
	v->topo_unknown = L->map->n_unknown;
	*L_p = L;
	return 0;
}

bool rp_localize_explains(const struct rp_localize *L, uint32_t a, uint32_t b)
{
	uint32_t c[PAIR_COMPS_MAX];
	size_t n = pair_comps(L, a, b, c);

	for (size_t k = 0; k < n; k++)
		if (L->chosen[c[k]])
			return true;
	return false;
}

/* Component c's kind and name. */
static enum rp_component comp_name(const struct rp_localize *L, const struct rp_endpoint *eps, uint32_t c, char *buf,
				      size_t len)
{
	size_t up0 = L->n_eps + L->L, sp0 = up0 + L->L * L->S;

	if (c < L->n_eps) {
		char tmp[2 * RP_NAME_MAX + 16];

		snprintf(tmp, sizeof(tmp), "%s/%s:%d", eps[c].node, eps[c].device, eps[c].port);
		rp_strlcpy(buf, tmp, len);
		return RP_COMP_ADAPTER;
	}
	if (c < up0) {
		snprintf(buf, len, "%s", L->map->leaf_names[c - L->n_eps]);
		return RP_COMP_LEAF;
	}
	if (c < sp0) {
		snprintf(buf, len, "%s - %s", L->map->leaf_names[(c - up0) / L->S], L->map->spine_names[(c - up0) % L->S]);
		return RP_COMP_UPLINK;
	}
	snprintf(buf, len, "%s", L->map->spine_names[c - sp0]);
	return RP_COMP_SPINE;
}

static void suspect_fill(const struct rp_localize *L, const struct rp_endpoint *eps, const struct rp_verdict *v,
			 uint32_t c, struct rp_verdict_suspect *s)
{
	s->kind = comp_name(L, eps, c, s->name, sizeof(s->name));
	s->ep = c < L->n_eps ? c : UINT32_MAX;
	s->failed = L->F[c];
	s->measured = L->N[c];
	s->drain = c < L->n_eps && v->eps[c].drain;
}

int rp_localize_suspects(const struct rp_localize *L, const struct rp_endpoint *eps, struct rp_verdict *v)
{
	size_t n = 0, cap = 2 * L->n_picks + 1;
	struct rp_verdict_suspect *s = calloc(cap, sizeof(*s));

	if (!s)
		return rp_error(-ENOMEM, "verdict: allocate %zu suspects", cap);
	for (size_t k = 0; k < L->n_picks; k++) {
		const struct pick *pk = &L->picks[k];

		suspect_fill(L, eps, v, pk->c, &s[n]);
		s[n].confidence = pk->alt == ALT_NONE ? 1 : 1 / (1 + exp(pk->alt_llr - pk->llr));
		snprintf(s[n].why, sizeof(s[n].why), "%u of %u peer pairs through it failed (background %.3g%%, p %.1e); "
			 "explains %u failed pairs%s", L->F[pk->c], L->N[pk->c], 100 * pk->p0, exp(pk->lp), pk->explained,
			 s[n].kind == RP_COMP_ADAPTER ? "; the adapter or its cable" : "; not an adapter: nothing drained for it");
		n++;
	}
	for (size_t k = 0; k < L->n_picks; k++) {
		const struct pick *pk = &L->picks[k];
		bool seen = pk->alt == ALT_NONE || L->chosen[pk->alt];
		char other[128];

		for (size_t j = 0; j < k && !seen; j++)
			seen = L->picks[j].alt == pk->alt;
		if (seen)
			continue;
		suspect_fill(L, eps, v, pk->alt, &s[n]);
		s[n].confidence = 1 / (1 + exp(pk->llr - pk->alt_llr));
		comp_name(L, eps, pk->c, other, sizeof(other));
		snprintf(s[n].why, sizeof(s[n].why), "%u of %u peer pairs through it failed: the alternative to %s",
			 L->F[pk->alt], L->N[pk->alt], other);
		n++;
	}
	if (v->n_paths) {
		struct rp_verdict_suspect *f = &s[n++];

		f->kind = RP_COMP_FABRIC;
		snprintf(f->name, sizeof(f->name), "switches or routing");
		f->ep = UINT32_MAX;
		f->failed = (uint32_t)v->n_paths;
		f->measured = (uint32_t)L->n_pairs;
		f->confidence = 1;
		snprintf(f->why, sizeof(f->why), "%zu failed peer pair%s that no component explains: %s", v->n_paths,
			 v->n_paths == 1 ? "" : "s", RP_VERDICT_PATH_TEXT);
	}
	v->suspects = s;
	v->n_suspects = n;
	v->localized = true;
	return 0;
}

void rp_localize_destroy(struct rp_localize *L)
{
	if (!L)
		return;
	free(L->N);
	free(L->F);
	free(L->Fu);
	free(L->chosen);
	free(L->fp);
	free(L->fp_expl);
	free(L->picks);
	free(L);
}
