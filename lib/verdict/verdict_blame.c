/* verdict_blame.c: blame by evidence (verdict.h, "Blame"): over the peer pairs of every endpoint
 * (verdict_peers.c), the fabric's background rate of failed peer pairs, a binomial tail test per endpoint with Holm's
 * correction, path faults for what no endpoint explains, and the suspects without topology. */
#include "verdict/verdict_int.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover/fabtopo.h"
#include "base/log.h"

const char *rp_component_str(enum rp_component k)
{
	static const char *const names[] = { "adapter", "cable", "leaf", "uplink", "spine", "fabric", "group" };

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

double rp_verdict_log_binom_tail(uint32_t k, uint32_t n, double p)
{
	double lt, s = 1, t = 1, q;

	if (k == 0 || p >= 1 || (double)k <= (double)n * p)
		return 0;
	if (k > n || p <= 0)
		return -INFINITY;
	lt = lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) + k * log(p) + (n - k) * log1p(-p);
	q = p / (1 - p);
	for (uint32_t j = k; j < n; j++) {
		t *= (double)(n - j) / (j + 1.0) * q;
		s += t;
		if (t < s * 1e-17)
			break;
	}
	return lt + log(s);
}

/* Counts of e's peers with a known class, failed ones among them, leaving out drained peers and (when
 * skip_cand) peers under suspicion. */
static void ep_count(const struct rp_blame *B, uint32_t e, bool skip_cand, uint32_t *k_p, uint32_t *n_p)
{
	uint32_t k = 0, n = 0;

	for (size_t x = B->pi->start[e]; x < B->pi->start[e + 1]; x++) {
		uint32_t p = rp_peer_of(B->pi->ent[x]);
		enum rp_peer_class c = rp_peer_class_of(B->pi->ent[x]);

		if (c == RP_PEER_UNKNOWN || B->out[p] || (skip_cand && B->cand[p]))
			continue;
		n++;
		k += c == RP_PEER_FAILED;
	}
	*k_p = k;
	*n_p = n;
}

static uint32_t group_find(uint32_t *g, uint32_t x)
{
	while (g[x] != x) {
		g[x] = g[g[x]];
		x = g[x];
	}
	return x;
}

/* The background groups: endpoints joined by any peer pair with evidence (passed or failed), the pairs
 * expected to fail left out. A fabric cut in two is one group (its halves' failures are its own
 * background), separate rails are separate groups. */
static void groups_compute(struct rp_blame *B)
{
	const struct rp_peer_index *pi = B->pi;

	for (uint32_t e = 0; e < B->n_eps; e++)
		B->group[e] = e;
	for (uint32_t e = 0; e < B->n_eps; e++) {
		for (size_t x = pi->start[e]; x < pi->start[e + 1]; x++) {
			uint32_t a, b;

			if (rp_peer_class_of(pi->ent[x]) == RP_PEER_UNKNOWN)
				continue;
			a = group_find(B->group, e);
			b = group_find(B->group, rp_peer_of(pi->ent[x]));
			if (a != b)
				B->group[a > b ? a : b] = a < b ? a : b;
		}
	}
	for (uint32_t e = 0; e < B->n_eps; e++)
		B->group[e] = group_find(B->group, e);
}

/* Step 2: drain what failed with every peer when one of those peers passed with someone else, or
 * passed with no peer and failed on its own (its loopback inside the adapter, a self pair; or a
 * failure its own side reported as local: no usable port, set-up, port down). Also
 * the background groups and per-endpoint counts the rest needs. */
static void unreachable_blame(struct rp_blame *B)
{
	const struct rp_peer_index *pi = B->pi;
	struct rp_verdict *v = B->v;

	groups_compute(B);
	for (size_t e = 0; e < B->n_eps; e++) {
		for (size_t x = pi->start[e]; x < pi->start[e + 1]; x++) {
			B->ok[e] += rp_peer_class_of(pi->ent[x]) == RP_PEER_OK;
			v->eps[e].peers += rp_peer_class_of(pi->ent[x]) != RP_PEER_UNKNOWN;
			v->eps[e].peers_failed += rp_peer_class_of(pi->ent[x]) == RP_PEER_FAILED;
		}
	}
	for (size_t e = 0; e < B->n_eps; e++) {
		struct rp_verdict_ep *ve = &v->eps[e];
		bool reached = false;

		/* its own failure: a loopback inside the adapter (a self pair) that only failed, or a failure
		 * its own side reported as local (no usable port, set-up, its port went down) */
		bool own = B->self[e] == RP_PEER_FAILED || B->local[e];

		if (B->ok[e] || (!ve->peers_failed && !own))
			continue;
		for (size_t x = pi->start[e]; x < pi->start[e + 1] && !reached; x++)
			reached = rp_peer_class_of(pi->ent[x]) == RP_PEER_FAILED && B->ok[rp_peer_of(pi->ent[x])] > 0;
		if (!reached && !own)
			continue;     /* nobody it failed with reaches anyone either: no evidence against it */
		B->out[e] = true;
		ve->drain = true;
		if (!ve->worked && B->local[e])
			snprintf(ve->why, sizeof(ve->why), "reached no peer: all %u pairs failed, %u of them on its own side "
				 "(no usable port, set-up or port down)", ve->pairs, B->local[e]);
		else if (!ve->worked && ve->pairs == 1)
			snprintf(ve->why, sizeof(ve->why), "reached no peer: its only pair failed");
		else if (!ve->worked)
			snprintf(ve->why, sizeof(ve->why), "reached no peer: all %u pairs failed", ve->pairs);
		else
			snprintf(ve->why, sizeof(ve->why), "failed with all %u peers it was measured with, who reach others",
				 ve->peers_failed);
	}
}

/* The background of every fabric over the peer pairs between endpoints not drained. */
static void background_compute(struct rp_blame *B, double *F, double *N)
{
	const struct rp_peer_index *pi = B->pi;

	for (size_t g = 0; g < B->n_eps; g++)
		F[g] = N[g] = 0;
	for (uint32_t e = 0; e < B->n_eps; e++) {
		if (B->out[e])
			continue;
		for (size_t x = pi->start[e]; x < pi->start[e + 1]; x++) {
			uint32_t p = rp_peer_of(pi->ent[x]), g;
			enum rp_peer_class c = rp_peer_class_of(pi->ent[x]);

			if (p < e || B->out[p] || c == RP_PEER_UNKNOWN)
				continue;
			g = B->group[e];
			N[g]++;
			F[g] += c == RP_PEER_FAILED;
		}
	}
	/* half a failure and one pair more: a fabric without failures still has a rate above 0, the
	 * smaller the fabric the larger (a few pairs are little evidence of a clean fabric) */
	for (size_t g = 0; g < B->n_eps; g++)
		B->p0[g] = (F[g] + 0.5) / (N[g] + 1);
}

static const double *sort_lp;

static int cmp_lp(const void *x, const void *y)
{
	double a = sort_lp[*(const uint32_t *)x], b = sort_lp[*(const uint32_t *)y];

	return a < b ? -1 : a > b;
}

/* Holm's step-down over the endpoints in order[0..n) sorted by lp: how many pass, the r-th (from 0)
 * against alpha / (m - j - r). */
static size_t holm_pass(const struct rp_blame *B, size_t n)
{
	size_t r = 0;

	while (r < n && B->m > B->j + r && B->lp[B->order[r]] < B->log_alpha - log((double)(B->m - B->j - r)))
		r++;
	return r;
}

/* Sort order[0..n) by B->lp. qsort has no context argument: the file-static pointer is set only here,
 * and the verdict runs on one thread at a time per process in every caller. */
static void order_sort(struct rp_blame *B, size_t n)
{
	sort_lp = B->lp;
	if (n > 1)   /* qsort's array may be NULL when empty */
		qsort(B->order, n, sizeof(*B->order), cmp_lp);
	sort_lp = NULL;
}

/* One round of step 3: candidates by the test, then those whose failures with peers NOT under
 * suspicion are improbable on their own are drained. Returns how many were drained. */
static size_t test_round(struct rp_blame *B)
{
	struct rp_verdict *v = B->v;
	size_t n = 0, n_cand, n_new;

	for (uint32_t e = 0; e < B->n_eps; e++) {
		uint32_t k, m;

		B->cand[e] = false;
		if (B->out[e])
			continue;
		ep_count(B, e, false, &k, &m);
		B->lp[e] = rp_verdict_log_binom_tail(k, m, B->p0[B->group[e]]);
		if (B->lp[e] < B->log_alpha)
			B->order[n++] = e;   /* no step of Holm's passes a larger p-value */
	}
	order_sort(B, n);
	n_cand = holm_pass(B, n);
	if (!n_cand)
		return 0;
	for (size_t r = 0; r < n_cand; r++)
		B->cand[B->order[r]] = true;
	for (size_t r = 0; r < n_cand; r++) {
		uint32_t e = B->order[r], k, m;

		ep_count(B, e, true, &k, &m);
		B->lp[e] = rp_verdict_log_binom_tail(k, m, B->p0[B->group[e]]);
	}
	order_sort(B, n_cand);
	n_new = holm_pass(B, n_cand);
	for (size_t r = 0; r < n_new; r++) {
		uint32_t e = B->order[r];
		struct rp_verdict_ep *ve = &v->eps[e];
		double p0 = B->p0[B->group[e]];

		B->out[e] = true;
		ve->drain = true;
		snprintf(ve->why, sizeof(ve->why),
			 "%u of %u peers failed on its fabric (%u results confirmed), %.1f expected at its background "
			 "rate of %.3g%% (p %.1e)", ve->peers_failed, ve->peers, ve->confirmed, p0 * ve->peers, 100 * p0,
			 exp(B->lp[e]));
	}
	B->j += n_new;
	for (size_t r = 0; r < n_cand; r++)
		B->cand[B->order[r]] = false;
	return n_new;
}

enum { SPARE_ISLANDS = 1, SPARE_NO_PASS = 2 };   /* rule 4: what a group's blamed endpoints are spared for */

/* Rule 4's second count: whether the n endpoints of a group of size that passed with no peer (rule
 * 2's) are more than independent faults explain, at the rate such endpoints have in the other
 * groups: n_other of size_other (Laplace's pseudo-counts; no other group: the count alone decides,
 * as for islands). The binomial tail under log_alpha, Bonferroni over the n_tested groups. */
static bool no_pass_improbable(const struct rp_blame *B, uint32_t n, uint32_t size, uint64_t n_other,
			       uint64_t size_other, uint32_t n_tested)
{
	double rate;

	if (n <= RP_VERDICT_TOGETHER)
		return false;
	if (size_other == 0)
		return true;
	rate = ((double)n_other + 1) / ((double)size_other + 2);
	return rp_verdict_log_binom_tail(n, size, rate) < B->log_alpha - log(n_tested ? n_tested : 1);
}

/* Rule 4, blamed together: in a background group with more than RP_VERDICT_TOGETHER endpoints
 * drained for their peers' failures (by the test, or by a localization whose topology has no routes
 * to put the failures on a switch), none of those is drained; each is unusable. Counted apart:
 * - those that passed with some peer (an island cut off from the rest: a leaf's uplinks, a spine's
 *   destinations): more than RP_VERDICT_TOGETHER spare them;
 * - those that passed with no peer (rule 2's: a dead adapter, one slow with every peer, or every
 *   adapter under a leaf that forwards nothing): spared only when also improbable as independent
 *   faults (no_pass_improbable). At 1,024 nodes a rail holds about ten such adapters of a 1 % rate on
 *   its own, as the other rails do, and each is drained; a leaf's worth on one rail, with the
 *   others clean, is spared.
 * Without a topology, then also those failing with the same peers (shared_spare). 0 or -ENOMEM. */
static int together_spare(struct rp_blame *B, bool localized)
{
	struct rp_verdict *v = B->v;
	size_t ne = B->n_eps ? B->n_eps : 1;
	uint32_t *island = calloc(3 * ne, sizeof(*island)), *no_pass, *size, n_tested = 0;
	uint8_t *spare = calloc(ne, sizeof(*spare));
	uint64_t no_pass_all = 0;

	if (!island || !spare) {
		free(island);
		free(spare);
		return rp_error(-ENOMEM, "verdict: allocate rule 4's counts for %zu endpoints", B->n_eps);
	}
	no_pass = island + ne;
	size = island + 2 * ne;
	/* per group: its size, and its endpoints blamed for their peers' failures, by kind */
	for (uint32_t e = 0; e < B->n_eps; e++) {
		size[B->group[e]]++;
		if (v->eps[e].drain && !rp_blame_own_failure(B, e))
			(B->ok[e] ? island : no_pass)[B->group[e]]++;
	}
	for (uint32_t g = 0; g < B->n_eps; g++) {
		no_pass_all += no_pass[g];
		n_tested += no_pass[g] > RP_VERDICT_TOGETHER;
	}
	for (uint32_t g = 0; g < B->n_eps; g++) {
		bool shared = no_pass_improbable(B, no_pass[g], size[g], no_pass_all - no_pass[g], B->n_eps - size[g],
						 n_tested);

		spare[g] = (island[g] > RP_VERDICT_TOGETHER ? SPARE_ISLANDS : 0) | (shared ? SPARE_NO_PASS : 0);
		B->together[g] = (spare[g] & SPARE_ISLANDS ? island[g] : 0) + (spare[g] & SPARE_NO_PASS ? no_pass[g] : 0);
	}
	for (uint32_t e = 0; e < B->n_eps; e++) {
		struct rp_verdict_ep *ve = &v->eps[e];
		uint32_t n = B->together[B->group[e]];

		if (!ve->drain || rp_blame_own_failure(B, e) || !(spare[B->group[e]] & (B->ok[e] ? SPARE_ISLANDS : SPARE_NO_PASS)))
			continue;
		ve->drain = false;
		ve->unusable = true;
		snprintf(ve->why, sizeof(ve->why), "one of %u adapters of its fabric blamed together: a shared switch, link "
			 "or route, not %u adapter faults; not drained (%s)", n, n,
			 localized ? "the topology's routes are unknown" : "--topology localizes it");
	}
	free(island);
	free(spare);
	return localized ? 0 : rp_blame_shared_spare(B);
}

/* Rule 7 with a topology: what the blame test condemned and the localization did not drain is
 * explained by a component around it (a leaf, an uplink, a spine): unusable, not drained. */
static void unusable_mark(struct rp_blame *B)
{
	for (uint32_t e = 0; e < B->n_eps; e++) {
		struct rp_verdict_ep *ve = &B->v->eps[e];

		if (!B->out[e] || ve->drain || ve->unusable)
			continue;
		ve->unusable = true;
		snprintf(ve->why, sizeof(ve->why), "its failures go through the suspect switches or links around it, "
			 "not its own fault");
	}
}

/* Step 5: the confirmed failures no drain (nor, with a topology, chosen component) explains, as
 * sorted, merged peer pairs in v->paths. */
static int paths_collect(const uint32_t *pair_eps, const struct rp_result_seq *ps, const struct rp_expect *x,
			 const struct rp_localize *L, struct rp_verdict *v)
{
	size_t cap = 0, n = 0;
	struct rp_verdict_path *p = NULL;

	for (size_t i = 0; i < ps->n; i++) {
		uint32_t a = pair_eps[2 * i], b = pair_eps[2 * i + 1];
		struct rp_result_peek pk;

		if (rp_result_seq_quiet(ps, i))
			continue;         /* a pass */
		rp_result_seq_peek(ps, i, &pk);
		if (rp_result_class(&pk) != RP_PEER_FAILED || v->eps[a].drain || v->eps[b].drain || v->eps[a].unusable ||
		    v->eps[b].unusable ||
		    rp_expect_pair(x, a, b) || (L && a != b && rp_localize_explains(L, a, b)))
			continue;
		v->n_ambiguous++;
		v->eps[a].ambiguous++;
		if (b != a)
			v->eps[b].ambiguous++;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			struct rp_verdict_path *np = realloc(p, nc * sizeof(*p));

			if (!np) {
				free(p);
				return rp_error(-ENOMEM, "verdict: allocate %zu path faults", nc);
			}
			p = np;
			cap = nc;
		}
		p[n++] = (struct rp_verdict_path){ .a = a < b ? a : b, .b = a < b ? b : a, .failed = 1 };
	}
	v->paths = p;
	v->n_paths = n;
	return 0;
}

static int cmp_path(const void *x, const void *y)
{
	const struct rp_verdict_path *a = x, *b = y;

	return a->a != b->a ? (a->a < b->a ? -1 : 1) : (a->b < b->b ? -1 : a->b > b->b);
}

static void paths_merge(struct rp_verdict *v)
{
	size_t w = 0;

	if (v->n_paths > 1)   /* qsort's array may be NULL when empty */
		qsort(v->paths, v->n_paths, sizeof(*v->paths), cmp_path);
	for (size_t i = 0; i < v->n_paths; i++) {
		if (w && v->paths[w - 1].a == v->paths[i].a && v->paths[w - 1].b == v->paths[i].b)
			v->paths[w - 1].failed += v->paths[i].failed;
		else
			v->paths[w++] = v->paths[i];
	}
	v->n_paths = w;
}

static int cmp_suspect(const void *x, const void *y)
{
	const struct rp_verdict_suspect *a = x, *b = y;

	if (a->confidence != b->confidence)
		return a->confidence > b->confidence ? -1 : 1;
	if (a->failed != b->failed)
		return a->failed > b->failed ? -1 : 1;
	return a->ep < b->ep ? -1 : a->ep > b->ep;
}

/* Rule 4's suspect of group g: its unusable endpoints as one entry, named by the first of them. */
static void group_suspect(const struct rp_endpoint *eps, const struct rp_blame *B, uint32_t g, struct rp_verdict_suspect *s)
{
	const struct rp_verdict *v = B->v;
	uint32_t first = UINT32_MAX;

	*s = (struct rp_verdict_suspect){ .kind = RP_COMP_GROUP, .ep = UINT32_MAX, .confidence = 1 };
	for (uint32_t e = 0; e < B->n_eps; e++) {
		if (B->group[e] != g || !v->eps[e].unusable)
			continue;
		first = first == UINT32_MAX ? e : first;
		s->failed += v->eps[e].peers_failed;
		s->measured += v->eps[e].peers;
	}
	snprintf(s->name, sizeof(s->name), "%u adapters failing together (the fabric of %.48s/%.24s:%d)", B->together[g],
		 eps[first].node, eps[first].device, eps[first].port);
	snprintf(s->why, sizeof(s->why), "%u adapters of one fabric fail at once, with most of their peers or with the "
		 "same ones: a shared switch, link or route is the suspect; none drained, each left out of NCCL_IB_HCA",
		 B->together[g]);
}

/* The suspects without topology: the drained adapters, the groups blamed together, then the path
 * faults as one entry. */
static int suspects_plain(const struct rp_endpoint *eps, const struct rp_blame *B, struct rp_verdict *v)
{
	size_t n = v->n_paths ? 1 : 0, k = 0, peers = 0;

	for (size_t e = 0; e < B->n_eps; e++)
		n += v->eps[e].drain + (B->together[e] > 0);
	v->suspects = calloc(n ? n : 1, sizeof(*v->suspects));
	if (!v->suspects)
		return rp_error(-ENOMEM, "verdict: allocate %zu suspects", n);
	for (size_t e = 0; e < B->n_eps; e++) {
		struct rp_verdict_suspect *s = &v->suspects[k];
		const struct rp_verdict_ep *ve = &v->eps[e];

		peers += ve->peers;
		if (!ve->drain)
			continue;
		k++;
		s->kind = RP_COMP_ADAPTER;
		snprintf(s->name, sizeof(s->name), "%s/%s:%d", eps[e].node, eps[e].device, eps[e].port);
		s->ep = (uint32_t)e;
		s->failed = ve->peers_failed;
		s->measured = ve->peers;
		s->confidence = -expm1(rp_verdict_log_binom_tail(ve->peers_failed, ve->peers, B->p0[B->group[e]]));
		s->drain = true;
		snprintf(s->why, sizeof(s->why), "%s", ve->why);
	}
	if (k > 1)   /* qsort's array may be NULL when empty */
		qsort(v->suspects, k, sizeof(*v->suspects), cmp_suspect);
	for (uint32_t g = 0; g < B->n_eps; g++)
		if (B->together[g])
			group_suspect(eps, B, g, &v->suspects[k++]);
	if (v->n_paths) {
		struct rp_verdict_suspect *s = &v->suspects[k++];

		s->kind = RP_COMP_FABRIC;
		snprintf(s->name, sizeof(s->name), "switches or routing");
		s->ep = UINT32_MAX;
		s->failed = (uint32_t)v->n_paths;
		s->measured = (uint32_t)(peers / 2);
		s->confidence = 1;    /* the failures are confirmed; where they are is not known */
		snprintf(s->why, sizeof(s->why), "%zu failed peer pair%s that no adapter explains: %s", v->n_paths,
			 v->n_paths == 1 ? "" : "s", RP_VERDICT_PATH_TEXT);
	}
	v->n_suspects = k;
	return 0;
}

/* After the localization's suspects: the adapters it chose that rule 4 spared leave the list, and
 * each group rule 4 spared takes their place, first (one component behind them all). */
static int suspects_together(const struct rp_endpoint *eps, const struct rp_blame *B)
{
	struct rp_verdict *v = B->v;
	size_t n = 0, w = 0;
	struct rp_verdict_suspect *s;

	for (uint32_t g = 0; g < B->n_eps; g++)
		n += B->together[g] > 0;
	if (!n)
		return 0;
	s = calloc(v->n_suspects + n, sizeof(*s));
	if (!s)
		return rp_error(-ENOMEM, "verdict: allocate %zu suspects", v->n_suspects + n);
	for (uint32_t g = 0; g < B->n_eps; g++)
		if (B->together[g])
			group_suspect(eps, B, g, &s[w++]);
	for (size_t k = 0; k < v->n_suspects; k++) {
		const struct rp_verdict_suspect *x = &v->suspects[k];

		if (!(x->ep != UINT32_MAX && x->ep < B->n_eps && v->eps[x->ep].unusable))
			s[w++] = *x;
	}
	free(v->suspects);
	v->suspects = s;
	v->n_suspects = w;
	return 0;
}

/* The background the widest fabric had at the end, for the reports. */
static double widest_background(const struct rp_blame *B, const double *N)
{
	size_t best = 0;

	for (size_t g = 1; g < B->n_eps; g++)
		if (N[g] > N[best])
			best = g;
	return B->n_eps && N[best] > 0 ? B->p0[best] : 0;
}

static int blame_run(struct rp_blame *B, const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps,
		     const uint32_t *pair_eps, const struct rp_result_seq *ps, const struct rp_expect *x)
{
	double *F = calloc(B->n_eps ? B->n_eps : 1, sizeof(*F)), *N = calloc(B->n_eps ? B->n_eps : 1, sizeof(*N));
	struct rp_localize *L = NULL;
	int rc = 0;

	if (!F || !N) {
		rc = rp_error(-ENOMEM, "verdict: allocate the background of %zu endpoints", B->n_eps);
		goto out;
	}
	unreachable_blame(B);
	for (size_t e = 0; e < B->n_eps; e++)
		B->m += B->v->eps[e].peers > 0;
	do
		background_compute(B, F, N);
	while (test_round(B) > 0);
	B->v->background = widest_background(B, N);
	if (x->map)
		rc = rp_localize_run(&L, cfg, x->map, eps, B->n_eps, B->pi, B->v);
	if (!rc)
		rc = together_spare(B, L != NULL);
	if (!rc)
		unusable_mark(B);
	if (!rc)
		rc = paths_collect(pair_eps, ps, x, L, B->v);
	if (!rc) {
		paths_merge(B->v);
		rc = L ? rp_localize_suspects(L, eps, B->v) : suspects_plain(eps, B, B->v);
	}
	if (!rc && L)
		rc = suspects_together(eps, B);
	rp_localize_destroy(L);
out:
	free(F);
	free(N);
	return rc;
}

/* A failure about the side that reported it, not the path: no usable port, a local set-up or
 * registration failure, the port leaving ACTIVE. */
static bool status_local(enum rp_status st)
{
	return st == RP_ST_NO_PORT || st == RP_ST_SETUP || st == RP_ST_REGISTRATION || st == RP_ST_PORT_DOWN;
}

/* The endpoints' own failures: self pairs' classes, and confirmed local failures by their cause side
 * (no_usable_port without one: the end whose port is 0, none usable). */
static int own_failures(struct rp_blame *B, const struct rp_endpoint *eps, const uint32_t *pair_eps,
			const struct rp_result_seq *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		uint32_t a = pair_eps[2 * i], b = pair_eps[2 * i + 1];
		struct rp_pair_result tmp, *r;
		struct rp_result_peek pk;

		if (rp_result_seq_quiet(ps, i)) {
			if (a == b)
				B->self[a] |= RP_PEER_OK;   /* a pass, known without reading it */
			continue;
		}
		rp_result_seq_peek(ps, i, &pk);
		if (a == b)
			B->self[a] |= (uint8_t)rp_result_class(&pk);
		if (rp_result_class(&pk) != RP_PEER_FAILED || !status_local(pk.status))
			continue;
		r = rp_result_seq_get(ps, i, &tmp);     /* a failure: the side is only in the whole result */
		if (r->cause_side == RP_SIDE_SRC || r->cause_side == RP_SIDE_DST) {
			B->local[r->cause_side == RP_SIDE_SRC ? a : b]++;
		} else if (pk.status == RP_ST_NO_PORT) {
			B->local[a] += eps[a].port == 0;
			B->local[b] += b != a && eps[b].port == 0;
		}
	}
	return 0;
}

int rp_verdict_blame(const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps, size_t n_eps,
		     const uint32_t *pair_eps, const struct rp_result_seq *ps, const size_t *cov, size_t max_cov,
		     struct rp_verdict *v)
{
	struct rp_peer_index pi = { 0 };
	struct rp_blame B = { .pi = &pi, .v = v, .n_eps = n_eps,
			   .log_alpha = log(cfg->alpha > 0 && cfg->alpha < 1 ? cfg->alpha : RP_VERDICT_ALPHA_DEFAULT) };
	struct rp_fabtopo_map map, *mp = NULL;
	struct rp_expect x = { 0 };
	size_t ne = n_eps ? n_eps : 1;
	int rc = 0;

	if (cfg->topology) {
		rc = rp_fabtopo_map_build(cfg->topology, eps, n_eps, &map);
		mp = rc ? NULL : &map;
	}
	if (!rc)
		rc = rp_expect_init(&x, v, cov, max_cov, mp);
	if (!rc)
		rc = rp_peer_index_build(&pi, n_eps, pair_eps, ps, &x);
	if (rc) {
		rp_expect_fini(&x);
		if (mp)
			rp_fabtopo_map_fini(mp);
		return rc;
	}
	B.out = calloc(ne, sizeof(*B.out));
	B.cand = calloc(ne, sizeof(*B.cand));
	B.group = calloc(ne, sizeof(*B.group));
	B.p0 = calloc(ne, sizeof(*B.p0));
	B.lp = calloc(ne, sizeof(*B.lp));
	B.ok = calloc(ne, sizeof(*B.ok));
	B.order = calloc(ne, sizeof(*B.order));
	B.self = calloc(ne, sizeof(*B.self));
	B.local = calloc(ne, sizeof(*B.local));
	B.together = calloc(ne, sizeof(*B.together));
	if (!B.out || !B.cand || !B.group || !B.p0 || !B.lp || !B.ok || !B.order || !B.self || !B.local || !B.together)
		rc = rp_error(-ENOMEM, "verdict: allocate the blame of %zu endpoints", n_eps);
	if (!rc)
		rc = own_failures(&B, eps, pair_eps, ps);
	if (!rc)
		rc = blame_run(&B, cfg, eps, pair_eps, ps, &x);
	free(B.out);
	free(B.cand);
	free(B.group);
	free(B.p0);
	free(B.lp);
	free(B.ok);
	free(B.order);
	free(B.self);
	free(B.local);
	free(B.together);
	rp_peer_index_fini(&pi);
	rp_expect_fini(&x);
	if (mp)
		rp_fabtopo_map_fini(mp);
	return rc;
}
