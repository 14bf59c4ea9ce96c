/* verdict_peers.c: the peer pairs of every endpoint, as the blame, the localization and the shared-peer
 * rule read them (rp_peer_index), and which pairs are expected to fail (rp_expect: between two
 * complete fabrics, unless a topology connects them); see verdict_int.h. */
#include "verdict/verdict_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "discover/fabtopo.h"
#include "base/log.h"

int rp_expect_init(struct rp_expect *x, const struct rp_verdict *v, const size_t *cov, size_t max_cov,
		   const struct rp_fabtopo_map *map)
{
	*x = (struct rp_expect){ .v = v, .cov = cov, .max_cov = max_cov, .map = map };
	if (!map)
		return 0;
	x->conn = calloc(map->n_leaves * map->n_leaves + 1, 1);
	if (!x->conn)
		return rp_error(-ENOMEM, "verdict: allocate %zu leaves' connections", map->n_leaves);
	for (size_t l1 = 0; l1 < map->n_leaves; l1++)
		for (size_t l2 = 0; l2 < map->n_leaves; l2++) {
			bool c = l1 == l2;

			for (size_t s = 0; s < map->n_spines && !c; s++)
				c = map->up[l1 * map->n_spines + s] && map->up[l2 * map->n_spines + s];
			x->conn[l1 * map->n_leaves + l2] = c;
		}
	return 0;
}

void rp_expect_fini(struct rp_expect *x)
{
	free(x->conn);
	x->conn = NULL;
}

bool rp_expect_pair(const struct rp_expect *x, uint32_t a, uint32_t b)
{
	uint32_t fa = x->v->eps[a].fabric, fb = x->v->eps[b].fabric, la, lb;

	/* a fabric is endpoints that moved data: one that moved none (a dead adapter alone, no self pair)
	 * is no rail of its own, whatever it covers */
	if (fa == fb || !x->v->eps[a].worked || !x->v->eps[b].worked || x->cov[fa] != x->max_cov ||
	    x->cov[fb] != x->max_cov)
		return false;
	if (!x->map)
		return true;
	la = x->map->leaf[a];
	lb = x->map->leaf[b];
	return la == RP_FABTOPO_NONE || lb == RP_FABTOPO_NONE || !x->conn[(size_t)la * x->map->n_leaves + lb];
}

/* Keep one entry per peer in ent[lo..hi) (classes merged: failed over ok over unknown), written from
 * ent[w]; returns the new end. stamp/acc are per-peer scratch, stamp[p] == tag marks p seen. */
static size_t peers_dedupe(uint32_t *ent, size_t lo, size_t hi, size_t w, uint32_t *stamp, uint8_t *acc, uint32_t tag)
{
	for (size_t k = lo; k < hi; k++) {
		uint32_t p = rp_peer_of(ent[k]);

		if (stamp[p] != tag) {
			stamp[p] = tag;
			acc[p] = 0;
		}
		acc[p] |= (uint8_t)rp_peer_class_of(ent[k]);
	}
	for (size_t k = lo; k < hi; k++) {
		uint32_t p = rp_peer_of(ent[k]);
		uint8_t c = acc[p];

		if (c == 0xff)
			continue;     /* written already */
		acc[p] = 0xff;
		ent[w++] = p << 2 | (uint32_t)((c & RP_PEER_FAILED) ? RP_PEER_FAILED : (c & RP_PEER_OK) ? RP_PEER_OK
											  : RP_PEER_UNKNOWN);
	}
	return w;
}

/* The index is built in parts by endpoint (verdict_int.h). Endpoints [lo, hi) of one part (raw: where each endpoint's entries begin as the pairs give them):
 * its entries placed from ent[w], then reduced in place. Returns the new end of ent. */
static size_t peer_part_fill(struct rp_peer_index *pi, const size_t *raw, size_t lo, size_t hi, size_t w,
			     const uint32_t *pair_eps, const struct rp_result_seq *ps, const struct rp_expect *x,
			     size_t *fill, uint32_t *stamp, uint8_t *acc)
{
	size_t base = raw[lo] - w;    /* raw[e] - base: where endpoint e's entries go */

	for (size_t i = 0; i < ps->n; i++) {
		uint32_t a = pair_eps[2 * i], b = pair_eps[2 * i + 1];
		bool in_a = a >= lo && a < hi, in_b = b >= lo && b < hi;
		struct rp_result_peek pk;
		uint32_t c;

		if ((!in_a && !in_b) || a == b || rp_expect_pair(x, a, b))
			continue;
		if (rp_result_seq_quiet(ps, i)) {
			c = RP_PEER_OK;   /* known without reading it (result_seq.h) */
		} else {
			rp_result_seq_peek(ps, i, &pk);
			c = (uint32_t)rp_result_class(&pk);
		}
		if (in_a)
			pi->ent[raw[a] - base + fill[a]++] = b << 2 | c;
		if (in_b)
			pi->ent[raw[b] - base + fill[b]++] = a << 2 | c;
	}
	for (size_t e = lo; e < hi; e++) {
		size_t from = raw[e] - base, to = raw[e + 1] - base;

		pi->start[e] = w;
		w = peers_dedupe(pi->ent, from, to, w, stamp, acc, (uint32_t)e + 1);
	}
	return w;
}

/* A part of the index: endpoints [lo, hi), placed from ent[w] (w: its end once filled), with scratch
 * of its own (stamp, acc; fill is per endpoint, so shared). */
struct peer_part {
	struct rp_peer_index *pi;
	const size_t *raw;
	size_t lo, hi, w;
	const uint32_t *pair_eps;
	const struct rp_result_seq *ps;
	const struct rp_expect *x;
	size_t *fill;
	uint32_t *stamp;
	uint8_t *acc;
};

static void *peer_part_run(void *arg)
{
	struct peer_part *p = arg;

	if (p->lo < p->hi)
		p->w = peer_part_fill(p->pi, p->raw, p->lo, p->hi, p->w, p->pair_eps, p->ps, p->x, p->fill, p->stamp,
				      p->acc);
	return NULL;
}

/* Both parts, the first on a thread of its own when rp_verdict_two_threads() says so. */
static void parts_two(const struct rp_result_seq *ps, struct peer_part *p)
{
	pthread_t t;
	bool two = rp_verdict_two_threads(ps) && pthread_create(&t, NULL, peer_part_run, &p[0]) == 0;

	if (!two)
		peer_part_run(&p[0]);
	peer_part_run(&p[1]);
	if (two)
		pthread_join(t, NULL);
}

/* Where the part from endpoint lo ends: one endpoint at least, then as many as fit part_bytes. */
static size_t part_end(const size_t *raw, size_t n_eps, size_t lo, size_t part_bytes)
{
	size_t hi = lo + 1;

	while (hi < n_eps && (raw[hi + 1] - raw[lo]) * sizeof(uint32_t) <= part_bytes)
		hi++;
	return hi;
}

int rp_peer_index_build(struct rp_peer_index *pi, size_t n_eps, const uint32_t *pair_eps, const struct rp_result_seq *ps,
			const struct rp_expect *x)
{
	return rp_peer_index_build_parts(pi, n_eps, pair_eps, ps, x, RP_PEER_PART_BYTES);
}

int rp_peer_index_build_parts(struct rp_peer_index *pi, size_t n_eps, const uint32_t *pair_eps,
			      const struct rp_result_seq *ps, const struct rp_expect *x, size_t part_bytes)
{
	size_t *fill = calloc(n_eps ? n_eps : 1, sizeof(*fill)), *raw = calloc(n_eps + 1, sizeof(*raw)), w = 0, hi;
	uint32_t *stamp = calloc(n_eps ? 2 * n_eps : 1, sizeof(*stamp));   /* a part's each, of two at once */
	uint8_t *acc = calloc(n_eps ? 2 * n_eps : 1, 1);
	int rc = 0;

	memset(pi, 0, sizeof(*pi));
	pi->n_eps = n_eps;
	pi->start = calloc(n_eps + 1, sizeof(*pi->start));
	if (!fill || !raw || !stamp || !acc || !pi->start) {
		rc = rp_error(-ENOMEM, "verdict: allocate the peer index of %zu endpoints", n_eps);
		goto out;
	}
	if (n_eps >= (1u << 30)) {
		rc = rp_error(-EINVAL, "verdict: %zu endpoints are more than the blame indexes", n_eps);
		goto out;
	}
	for (size_t i = 0; i < ps->n; i++) {
		uint32_t a = pair_eps[2 * i], b = pair_eps[2 * i + 1];

		if (a != b && !rp_expect_pair(x, a, b)) {
			raw[a + 1]++;
			raw[b + 1]++;
		}
	}
	for (size_t e = 0; e < n_eps; e++)
		raw[e + 1] += raw[e];
	for (size_t lo = 0; lo < n_eps; lo = hi) {
		struct peer_part p[2];
		size_t mid = part_end(raw, n_eps, lo, part_bytes), m0 = raw[mid] - raw[lo], m1;
		uint32_t *ent;

		/* two parts, one endpoint at least each (the second empty at the end), as many as fit */
		hi = mid < n_eps ? part_end(raw, n_eps, mid, part_bytes) : mid;
		m1 = raw[hi] - raw[mid];
		ent = realloc(pi->ent, (w + m0 + m1 + 1) * sizeof(*ent));
		if (!ent) {
			rc = rp_error(-ENOMEM, "verdict: allocate the peer index of %zu results", ps->n);
			goto out;
		}
		pi->ent = ent;
		p[0] = (struct peer_part){ pi, raw, lo, mid, w, pair_eps, ps, x, fill, stamp, acc };
		p[1] = (struct peer_part){ pi, raw, mid, hi, w + m0, pair_eps, ps, x, fill, stamp + n_eps, acc + n_eps };
		parts_two(ps, p);
		/* the second's entries just after the first's, its endpoints' starts moved with them */
		memmove(pi->ent + p[0].w, pi->ent + w + m0, (p[1].w - (w + m0)) * sizeof(*ent));
		for (size_t e = mid; e < hi; e++)
			pi->start[e] -= w + m0 - p[0].w;
		w = p[0].w + (p[1].w - (w + m0));
	}
	pi->start[n_eps] = w;
	if (pi->ent) {
		uint32_t *ent = realloc(pi->ent, (w ? w : 1) * sizeof(*ent));   /* what it keeps */

		pi->ent = ent ? ent : pi->ent;
	} else {
		pi->ent = malloc(sizeof(*pi->ent));
		if (!pi->ent)
			rc = rp_error(-ENOMEM, "verdict: allocate the peer index");
	}
out:
	free(fill);
	free(raw);
	free(stamp);
	free(acc);
	if (rc)
		rp_peer_index_fini(pi);
	return rc;
}

void rp_peer_index_fini(struct rp_peer_index *pi)
{
	free(pi->start);
	free(pi->ent);
	pi->start = NULL;
	pi->ent = NULL;
}
