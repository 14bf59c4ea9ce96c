/* verdict_shared.c: rule 4's second test (verdict.h, "failing with the same peers"): two adapters
 * blamed for their failures whose failed peers coincide far more than two independent faults would
 * make them coincide share a cause between them and those peers (a leaf-spine link, a route), so
 * neither is blamed for it. The test is the hypergeometric tail of the overlap given each adapter's
 * own count of failed peers, over the peers both were measured with. */
#include "verdict/verdict_int.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

/* log C(n, k) */
static double log_choose(double n, double k)
{
	return lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1);
}

double rp_verdict_log_hyper_tail(uint32_t k, uint32_t N, uint32_t K, uint32_t m)
{
	uint32_t top = K < m ? K : m;
	double t, s = 1, lt;

	if (N == 0 || K > N || m > N || (double)k <= (double)K * m / N)
		return 0;
	if (k > top || (uint64_t)K + m - k > N)
		return -INFINITY;
	lt = log_choose(K, k) + log_choose(N - K, m - k) - log_choose(N, m);
	t = 1;
	for (uint32_t i = k; i < top; i++) {   /* term i + 1 over term i */
		t *= (double)(K - i) * (m - i) / ((i + 1.0) * ((double)N - K - m + i + 1));
		s += t;
		if (t < s * 1e-17)
			break;
	}
	return lt + log(s);
}

/* One endpoint's peers as two bit sets over the endpoints: measured (a known class) and failed, the
 * peers in skip left out. */
static void peer_bits(const struct rp_peer_index *pi, uint32_t e, const bool *skip, size_t words, uint64_t *meas,
		      uint64_t *fail)
{
	memset(meas, 0, words * sizeof(*meas));
	memset(fail, 0, words * sizeof(*fail));
	for (size_t x = pi->start[e]; x < pi->start[e + 1]; x++) {
		uint32_t p = rp_peer_of(pi->ent[x]);
		enum rp_peer_class c = rp_peer_class_of(pi->ent[x]);

		if (c == RP_PEER_UNKNOWN || skip[p])
			continue;
		meas[p / 64] |= 1ull << (p % 64);
		if (c == RP_PEER_FAILED)
			fail[p / 64] |= 1ull << (p % 64);
	}
}

static uint32_t link_find(uint32_t *g, uint32_t x)
{
	while (g[x] != x)
		x = g[x] = g[g[x]];
	return x;
}

/* One set of i's and j's, named by its smallest index. */
static void link_join(uint32_t *g, uint32_t i, uint32_t j)
{
	uint32_t a = link_find(g, i), b = link_find(g, j);

	g[a > b ? a : b] = a < b ? a : b;
}

/* Counts of one pair of bit sets (i, j): peers both measured, i failed with among those, j failed
 * with among those, both failed with. */
static void pair_counts(const uint64_t *mi, const uint64_t *fi, const uint64_t *mj, const uint64_t *fj, size_t words,
			uint32_t c[4])
{
	c[0] = c[1] = c[2] = c[3] = 0;
	for (size_t w = 0; w < words; w++) {
		uint64_t both = mi[w] & mj[w];

		c[0] += (uint32_t)__builtin_popcountll(both);
		c[1] += (uint32_t)__builtin_popcountll(fi[w] & both);
		c[2] += (uint32_t)__builtin_popcountll(fj[w] & both);
		c[3] += (uint32_t)__builtin_popcountll(fi[w] & fj[w] & both);
	}
}

int rp_verdict_shared_peers(const struct rp_peer_index *pi, const bool *skip, const uint32_t *d, size_t n,
			    double log_alpha, uint32_t *link, double *lp)
{
	size_t words = (pi->n_eps + 63) / 64, pairs = n * (n - 1) / 2;
	uint64_t *bits;

	for (size_t i = 0; i < n; i++) {
		link[i] = (uint32_t)i;
		lp[i] = 0;
	}
	if (n < 2)
		return 0;
	bits = calloc(2 * n * words, sizeof(*bits));
	if (!bits)
		return rp_error(-ENOMEM, "verdict: allocate the peer sets of %zu adapters", n);
	for (size_t i = 0; i < n; i++)
		peer_bits(pi, d[i], skip, words, bits + 2 * i * words, bits + (2 * i + 1) * words);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			uint32_t c[4];
			double t;

			pair_counts(bits + 2 * i * words, bits + (2 * i + 1) * words, bits + 2 * j * words,
				    bits + (2 * j + 1) * words, words, c);
			t = rp_verdict_log_hyper_tail(c[3], c[0], c[1], c[2]);
			if (t >= log_alpha - log((double)pairs))
				continue;
			lp[i] = t < lp[i] ? t : lp[i];
			lp[j] = t < lp[j] ? t : lp[j];
			link_join(link, (uint32_t)i, (uint32_t)j);
		}
	}
	for (size_t i = 0; i < n; i++)
		link[i] = link_find(link, (uint32_t)i);
	free(bits);
	return 0;
}

static uint32_t *cmp_group_of;

static int cmp_group(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return cmp_group_of[a] != cmp_group_of[b] ? (cmp_group_of[a] < cmp_group_of[b] ? -1 : 1) : (a < b ? -1 : a > b);
}

/* Spare the linked ones among d[0..n) (one background group): unusable, not drained. */
static void shared_mark(struct rp_blame *B, const uint32_t *d, size_t n, const uint32_t *link, const double *lp,
			uint32_t *size)
{
	for (size_t i = 0; i < n; i++)
		size[i] = 0;
	for (size_t i = 0; i < n; i++)
		size[link[i]]++;
	for (size_t i = 0; i < n; i++) {
		struct rp_verdict_ep *ve = &B->v->eps[d[i]];

		if (size[link[i]] < 2)
			continue;
		ve->drain = false;
		ve->unusable = true;
		B->together[B->group[d[i]]]++;
		snprintf(ve->why, sizeof(ve->why), "failed with the same peers as %u other adapter%s of its fabric (p %.1e): a shared switch, "
			 "link or route; not drained (--topology localizes it)", size[link[i]] - 1, size[link[i]] > 2 ? "s" : "",
			 exp(lp[i]));
	}
}

/* In each background group rule 4 did not spare whole, the adapters drained for their peers' failures
 * whose failed peers coincide (rp_verdict_shared_peers) are unusable instead; B->together counts
 * them, so that one group suspect names them. */
int rp_blame_shared_spare(struct rp_blame *B)
{
	uint32_t *d, *link, *size;
	double *lp;
	size_t n = 0, cand = 0;
	int rc = 0;

	/* scratch for the condemned adapters only (a few), not for every endpoint */
	for (uint32_t e = 0; e < B->n_eps; e++)
		cand += B->v->eps[e].drain && !rp_blame_own_failure(B, e) && !B->together[B->group[e]];
	if (cand < 2)
		return 0;
	d = calloc(3 * cand, sizeof(*d));
	lp = calloc(cand, sizeof(*lp));
	if (!d || !lp) {
		free(d);
		free(lp);
		return rp_error(-ENOMEM, "verdict: allocate the shared-peer test of %zu adapters", cand);
	}
	link = d + cand;
	size = link + cand;
	for (uint32_t e = 0; e < B->n_eps && n < cand; e++)
		if (B->v->eps[e].drain && !rp_blame_own_failure(B, e) && !B->together[B->group[e]])
			d[n++] = e;
	cmp_group_of = B->group;   /* one thread at a time per process, as order_sort */
	if (n > 1)
		qsort(d, n, sizeof(*d), cmp_group);
	cmp_group_of = NULL;
	for (size_t i = 0, j; !rc && i < n; i = j) {
		for (j = i + 1; j < n && B->group[d[j]] == B->group[d[i]]; j++)
			;
		if (j - i < 2)
			continue;
		rc = rp_verdict_shared_peers(B->pi, B->out, d + i, j - i, B->log_alpha, link, lp);
		if (!rc)
			shared_mark(B, d + i, j - i, link, lp, size);
	}
	free(d);
	free(lp);
	return rc;
}
