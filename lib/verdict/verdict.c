/* verdict.c: thresholds, outliers, fabrics, the nodes' recommendations; the blame is in verdict_blame.c.
 * See verdict.h. */
#include "verdict/verdict.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "health/counters.h"
#include "base/log.h"
#include "verdict/result_seq.h"
#include "verdict/retest.h"
#include "base/util.h"
#include "verdict/verdict_int.h"

void rp_verdict_cfg_default(struct rp_verdict_cfg *cfg)
{
	cfg->min_bw_absolute = false;
	cfg->min_bw = RP_VERDICT_MIN_BW_DEFAULT;
	cfg->outlier = RP_VERDICT_OUTLIER_DEFAULT;
	cfg->interval_drop = RP_VERDICT_INTERVAL_DROP_DEFAULT;
	cfg->retest = RP_RETEST_DEFAULT;
	cfg->alpha = RP_VERDICT_ALPHA_DEFAULT;
	cfg->topology = NULL;
}

int rp_verdict_min_bw_parse(const char *s, struct rp_verdict_cfg *cfg)
{
	static const char *const gbps_units[] = { "G", "Gb/s", "Gbps", "Gbit/s" };
	char num[64];
	size_t n;
	double v;
	int rc;

	if (!s || !*s)
		return -EINVAL;
	n = strspn(s, "0123456789.");
	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	rc = rp_parse_double(num, 0, 1e6, &v);
	if (rc)
		return rc;
	if (s[n] == '\0') {
		if (v > 1)
			return -ERANGE;   /* "180" is ambiguous: a fraction must be <= 1, Gb/s needs "G" */
		cfg->min_bw_absolute = false;
		cfg->min_bw = v;
		return 0;
	}
	if (strcmp(s + n, "%") == 0) {
		if (v > 100)
			return -ERANGE;
		cfg->min_bw_absolute = false;
		cfg->min_bw = v / 100;
		return 0;
	}
	for (size_t i = 0; i < RP_ARRAY_SIZE(gbps_units); i++) {
		if (strcasecmp(s + n, gbps_units[i]) == 0) {
			cfg->min_bw_absolute = true;
			cfg->min_bw = v;
			return 0;
		}
	}
	return -EINVAL;
}

const char *rp_verdict_ep_name(const struct rp_endpoint *ep, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%d", ep->device, ep->port);
	return buf;
}

/* A pair the bandwidth rules judge: measured ok (or judged below a threshold before), not latency. */
static bool bw_judged(const struct rp_pair_result *r)
{
	return (r->status == RP_ST_OK || r->status == RP_ST_BELOW_THRESHOLD) && !r->lat.measured;
}

/* rev_judged of a peeked pair (bw_judged's is rp_pk_bw_judged: verdict_int.h). */
static bool pk_rev_judged(const struct rp_result_peek *pk)
{
	return pk->rev_measured && !pk->lat_measured &&
	       (pk->rev_status == RP_ST_OK || pk->rev_status == RP_ST_BELOW_THRESHOLD);
}

/* The reverse direction of a --bidir pair, when the bandwidth rules judge it (as bw_judged). */
static bool rev_judged(const struct rp_pair_result *r)
{
	return r->reverse.measured && !r->lat.measured &&
	       (r->reverse.status == RP_ST_OK || r->reverse.status == RP_ST_BELOW_THRESHOLD);
}

/* The port counters of both ends (lib/health/counters.h, judged by the engine with --max-errors): a flap or
 * physical errors fail a measured pair (LINK_ERRORS), retransmissions above the rate make it lossy.
 * Two ends at different active MTUs are a warning on any pair. */
static void counters_judge(struct rp_pair_result *r)
{
	const struct rp_pair_ctr_side *side[2] = { &r->counters.src, &r->counters.dst };
	const struct rp_endpoint *ep[2] = { &r->src, &r->dst };

	if (r->src.mtu > 0 && r->dst.mtu > 0 && r->src.mtu != r->dst.mtu)
		r->warnings |= 1u << RP_WARN_MTU_MISMATCH;
	if (r->status != RP_ST_OK)
		return;
	for (int k = 0; k < 2; k++)
		if (side[k]->measured && side[k]->verdict == RP_CV_FAIL) {
			rp_pair_result_fail(r, RP_ST_LINK_ERRORS, "%s %s:%d: %s", k ? "dst" : "src", ep[k]->device,
					    ep[k]->port, side[k]->reason);
			return;
		}
	for (int k = 0; k < 2; k++)
		if (side[k]->measured && side[k]->verdict == RP_CV_LOSSY)
			r->warnings |= 1u << RP_WARN_LOSSY;
}

/* The warnings the verdict itself sets: cleared before every judgement. */
#define VERDICT_WARNINGS ((1u << RP_WARN_NOMINAL_RATE) | (1u << RP_WARN_INTERVAL_DROP) | (1u << RP_WARN_LOSSY) | \
			  (1u << RP_WARN_MTU_MISMATCH))

/* A pair as measured again before the thresholds: BELOW_THRESHOLD and LINK_ERRORS back to ok, the
 * verdict's warnings cleared, a folded reverse unfolded; then its port counters judged. */
static void judge_reset(struct rp_pair_result *r)
{
	struct rp_pair_reverse *rv = &r->reverse;

	rp_pair_reverse_unfold(r);
	r->warnings &= ~VERDICT_WARNINGS;
	if (r->status == RP_ST_BELOW_THRESHOLD || r->status == RP_ST_LINK_ERRORS) {
		r->status = RP_ST_OK;
		r->reason[0] = '\0';
	}
	rv->warnings &= ~VERDICT_WARNINGS;
	if (rv->measured && rv->status == RP_ST_BELOW_THRESHOLD) {
		rv->status = RP_ST_OK;
		rv->reason[0] = '\0';
	}
	counters_judge(r);
}

/* What the bandwidth rules read of one direction. */
struct dir_in {
	double gbps, gbps_min;
	double link;                  /* the lower of its two ports' rates */
	bool soft;                    /* either end a software device: its rate is nominal */
	double rev;                   /* the other direction of the same link (-1: not measured) */
};

enum dir_outcome { DIR_OK, DIR_BELOW_MIN_BW, DIR_BELOW_LINK, DIR_BELOW_REVERSE, DIR_OUTLIER };

/* --interval-drop, --min-bw and --outlier on one direction, m the larger of its row and column
 * median (< 0: no outlier rule): the warnings it earns into *warnings, and whether it fails. A
 * fraction of a soft device's nominal rate is not applied: it is warned (RP_WARN_NOMINAL_RATE)
 * instead. One decision for a whole result (direction_judge) and a peeked plain pass (size_judge). */
static enum dir_outcome dir_decide(const struct rp_verdict_cfg *cfg, const struct dir_in *in, double m,
				   uint32_t *warnings)
{
	if (cfg->interval_drop > 0 && in->gbps > 0 && in->gbps_min < cfg->interval_drop * in->gbps)
		*warnings |= 1u << RP_WARN_INTERVAL_DROP;
	if (cfg->min_bw > 0) {
		if (cfg->min_bw_absolute) {
			if (in->gbps < cfg->min_bw)
				return DIR_BELOW_MIN_BW;
		} else if (in->soft) {
			*warnings |= 1u << RP_WARN_NOMINAL_RATE;
		} else if (in->link > 0 && in->gbps < cfg->min_bw * in->link) {
			return DIR_BELOW_LINK;
		}
	}
	if (m >= 0 && in->gbps < cfg->outlier * m)
		return DIR_OUTLIER;
	/* what the medians cannot see: two adapters, a row of one pair */
	return cfg->outlier > 0 && in->rev > 0 && in->gbps < RP_VERDICT_REVERSE_RATIO * in->rev ? DIR_BELOW_REVERSE
												  : DIR_OK;
}

static void direction_judge(const struct rp_verdict_cfg *cfg, struct rp_pair_result *r, double m, double rev)
{
	struct dir_in in = { .gbps = r->gbps, .gbps_min = r->gbps_min, .soft = r->src.soft || r->dst.soft,
			     .link = r->src.link_gbps < r->dst.link_gbps ? r->src.link_gbps : r->dst.link_gbps,
			     .rev = rev };

	switch (dir_decide(cfg, &in, m, &r->warnings)) {
	case DIR_OK:
		break;
	case DIR_BELOW_MIN_BW:
		rp_pair_result_fail(r, RP_ST_BELOW_THRESHOLD, "%.3f Gb/s is below --min-bw %.2f Gb/s", r->gbps,
				    cfg->min_bw);
		break;
	case DIR_BELOW_LINK:
		rp_pair_result_fail(r, RP_ST_BELOW_THRESHOLD, "%.3f Gb/s is below %.2f x link rate %.1f Gb/s (%.2f Gb/s)",
				    r->gbps, cfg->min_bw, in.link, cfg->min_bw * in.link);
		break;
	case DIR_BELOW_REVERSE:
		rp_pair_result_fail(r, RP_ST_BELOW_THRESHOLD, "%.3f Gb/s is below %.2f x the reverse direction of the "
				    "same link (%s:%d -> %s:%d, %.3f Gb/s)", r->gbps, RP_VERDICT_REVERSE_RATIO, r->dst.device,
				    r->dst.port, r->src.device, r->src.port, rev);
		break;
	case DIR_OUTLIER:
		rp_pair_result_fail(r, RP_ST_BELOW_THRESHOLD,
				    "outlier: %.3f Gb/s is below %.2f x the median %.3f Gb/s of its row/column", r->gbps,
				    cfg->outlier, m);
		break;
	}
}

/* A peeked plain pass that its judgement leaves exactly as it is: the first pass's reset (the
 * verdict's warnings cleared, an MTU mismatch warned) and the rules, with nothing failing and the
 * same warnings. Such a pair needs neither a get nor a put. */
static bool plain_stays(const struct rp_verdict_cfg *cfg, const struct rp_result_peek *pk, double m, double rev)
{
	struct dir_in in = { .gbps = pk->gbps, .gbps_min = pk->gbps_min, .link = pk->link_gbps, .soft = pk->soft,
			     .rev = rev };
	uint32_t w = (pk->warnings & ~VERDICT_WARNINGS) | (pk->mtu_mismatch ? 1u << RP_WARN_MTU_MISMATCH : 0);

	return dir_decide(cfg, &in, m, &w) == DIR_OK && w == pk->warnings;
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Pair i into the run's and its endpoints' counts (judged and classified: after thresholds_apply). */
static void count_pair(const uint32_t *pair_eps, size_t i, const struct rp_result_peek *pk, struct rp_verdict *v)
{
	bool ok = pk->status == RP_ST_OK;
	bool moved = ok || pk->status == RP_ST_BELOW_THRESHOLD || pk->status == RP_ST_LINK_ERRORS;
	bool confirmed = !ok && rp_confirm_held(pk->confirm);

	v->n_ok += ok;
	v->n_below += pk->status == RP_ST_BELOW_THRESHOLD;
	v->n_confirmed += confirmed;
	v->n_unconfirmed += !ok && !confirmed;
	v->n_flaky += ok && pk->confirm == RP_CONFIRM_FLAKY;
	uint32_t w = pk->warnings | (pk->rev_measured ? pk->rev_warnings : 0);   /* either direction */

	v->n_nominal += (w >> RP_WARN_NOMINAL_RATE) & 1u;
	v->n_interval_drop += (w >> RP_WARN_INTERVAL_DROP) & 1u;
	v->n_lossy += (w >> RP_WARN_LOSSY) & 1u;
	v->n_mtu_mismatch += (w >> RP_WARN_MTU_MISMATCH) & 1u;
	/* a self pair (s == d) is one pair of its endpoint, not two */
	for (int side = 0; side < (pair_eps[2 * i] == pair_eps[2 * i + 1] ? 1 : 2); side++) {
		struct rp_verdict_ep *ve = &v->eps[pair_eps[2 * i + side]];

		ve->pairs++;
		ve->failed += !ok;
		ve->confirmed += confirmed;
		ve->measured = true;
		ve->worked |= moved;
	}
}

/* Pair i, its thresholds judged: a --bidir pair whose reverse failed fails as a pair, then how its
 * failure held up on retest (a plain pass as the retest rules leave it, one attempt and confirm none,
 * has nothing to fold or classify: *pk stays as peeked); *pk as it is now. 0 or -ENOMEM. */
static int pair_classify(const struct rp_verdict_cfg *cfg, const struct rp_result_seq *ps, size_t i,
			 struct rp_result_peek *pk)
{
	struct rp_pair_result tmp, *r;
	int rc;

	if (pk->plain && pk->confirm == RP_CONFIRM_NONE && !(pk->warnings & (1u << RP_WARN_FLAKY)))
		return 0;
	r = rp_result_seq_get(ps, i, &tmp);
	rp_pair_reverse_fold(r);
	rp_retest_classify(r, cfg->retest);
	rc = rp_result_seq_put(ps, i, r);
	rp_result_peek_of(r, pk);
	return rc;
}

/* The last pass over the judged pairs (pair_finish): each classified (pair_classify), into the run's
 * and each endpoint's counts (count_pair), and the components of the "moved data" graph joined
 * (fabric = smallest member). */
struct finish {
	const struct rp_verdict_cfg *cfg;
	const struct rp_result_seq *ps;
	const uint32_t *pair_eps;
	struct rp_verdict *v;
	uint32_t *parent;             /* n_eps: union-find */
};

static int finish_init(struct finish *f, const struct rp_verdict_cfg *cfg, const struct rp_result_seq *ps,
		       const uint32_t *pair_eps, struct rp_verdict *v, size_t n_eps)
{
	*f = (struct finish){ .cfg = cfg, .ps = ps, .pair_eps = pair_eps, .v = v };
	f->parent = calloc(n_eps ? n_eps : 1, sizeof(*f->parent));
	if (!f->parent)
		return rp_error(-ENOMEM, "verdict: allocate fabrics for %zu endpoints", n_eps);
	for (size_t e = 0; e < n_eps; e++)
		f->parent[e] = (uint32_t)e;
	v->n_pairs = ps->n;
	return 0;
}

/* Pair i, judged, as peeked in *pk (as it is now). 0 or -ENOMEM. */
static int pair_finish(struct finish *f, size_t i, struct rp_result_peek *pk)
{
	int rc = pair_classify(f->cfg, f->ps, i, pk);
	enum rp_status st = pk->status;

	count_pair(f->pair_eps, i, pk, f->v);
	if (st == RP_ST_OK || st == RP_ST_BELOW_THRESHOLD || st == RP_ST_LINK_ERRORS) {
		uint32_t a = uf_find(f->parent, f->pair_eps[2 * i]), b = uf_find(f->parent, f->pair_eps[2 * i + 1]);

		if (a != b)
			f->parent[a > b ? a : b] = a < b ? a : b;
	}
	return rc;
}

/* What the bandwidth rules compare one message size's pairs against. */
struct size_rules {
	const struct rp_verdict_cfg *cfg;
	const uint32_t *pair_eps;
	const struct rp_result_seq *ps;
	size_t msg_size;
	const double *row, *col;      /* NULL: no outlier rule */
	struct rp_rev_notes *rev;     /* NULL: no reverse-direction rule */
};

/* The larger of src's row and dst's column median (-1: no outlier rule). */
static double size_median(const struct size_rules *z, uint32_t src, uint32_t dst)
{
	return z->row ? (z->row[src] > z->col[dst] ? z->row[src] : z->col[dst]) : -1;
}

/* Pair i by the rules of z's size when it is of that size and judged for bandwidth, kept when that
 * changed it; *pk the pair as it is now. 0 or -ENOMEM. */
static int pair_judge(const struct size_rules *z, size_t i, struct rp_result_peek *pk)
{
	const struct rp_verdict_cfg *cfg = z->cfg;
	struct rp_pair_result tmp, *r, back;
	uint32_t s = z->pair_eps[2 * i], d = z->pair_eps[2 * i + 1];
	int rc;

	rp_result_seq_peek(z->ps, i, pk);
	if (pk->msg_size != z->msg_size || (!rp_pk_bw_judged(pk) && !pk_rev_judged(pk)))
		return 0;
	if (pk->plain && plain_stays(cfg, pk, size_median(z, s, d), z->rev ? rp_rev_of(z->rev, i) : -1))
		return 0;
	r = rp_result_seq_get(z->ps, i, &tmp);
	if (pk->plain)
		judge_reset(r);       /* thresholds_apply's first pass left it to this one */
	if (rev_judged(r)) {
		/* --bidir: the reverse (d writes into s) by the same rules, against d's row and s's
		 * column; each direction against the other (as measured, before either is failed) */
		double fwd_gbps = bw_judged(r) ? r->gbps : -1;

		rp_pair_reverse_view(r, &back);
		if (bw_judged(r))
			direction_judge(cfg, r, size_median(z, s, d), back.gbps);
		direction_judge(cfg, &back, size_median(z, d, s), fwd_gbps);
		rp_pair_reverse_store(r, &back);
	} else if (bw_judged(r)) {
		direction_judge(cfg, r, size_median(z, s, d), z->rev ? rp_rev_of(z->rev, i) : -1);
	}
	/* a plain pass changes in its status (and reason) and warnings only: kept as it was when they
	 * are (the put of a compact record costs more than judging it) */
	if (pk->plain && r->status == pk->status && r->warnings == pk->warnings)
		return 0;
	rc = rp_result_seq_put(z->ps, i, r);
	rp_result_peek_of(r, pk);
	return rc;
}

/* --min-bw, --outlier (with the reverse-direction rule) and --interval-drop on the judged pairs of
 * one message size (both directions of a --bidir pair, each on its own); counted: rp_rates_build's.
 * fin (NULL: none): every pair finished in the same pass, once judged (the last size's pass). */
static int size_judge(const struct rp_verdict_cfg *cfg, const uint32_t *pair_eps, const struct rp_result_seq *ps,
		      size_t n_eps, size_t msg_size, const struct rp_rate_count *counted, double *row, double *col,
		      struct finish *fin)
{
	struct rp_rev_notes notes = { 0 };
	struct size_rules z = { .cfg = cfg, .pair_eps = pair_eps, .ps = ps, .msg_size = msg_size, .row = row,
				.col = col, .rev = row ? &notes : NULL };
	int rc = 0;

	if (row)
		rc = rp_rates_build(pair_eps, ps, n_eps, msg_size, counted, row, col, &notes);
	for (size_t i = 0; i < ps->n && !rc; i++) {
		struct rp_result_peek pk;

		rc = pair_judge(&z, i, &pk);
		if (!rc && fin)
			rc = pair_finish(fin, i, &pk);
	}
	rp_rev_notes_fini(&notes);
	return rc;
}

/* Note msg_size among the *n sizes the bandwidth rules judge (in the order first seen). 0 or -ENOMEM. */
static int size_note(size_t **sizes, size_t *n, size_t *cap, size_t msg_size)
{
	for (size_t k = 0; k < *n; k++)
		if ((*sizes)[k] == msg_size)
			return 0;
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 4;
		size_t *p = realloc(*sizes, c * sizeof(*p));

		if (!p)
			return rp_error(-ENOMEM, "verdict: allocate %zu message sizes", c);
		*sizes = p;
		*cap = c;
	}
	(*sizes)[(*n)++] = msg_size;
	return 0;
}

/* Judge afresh: BELOW_THRESHOLD and LINK_ERRORS back to measured ok, the verdict's warnings cleared;
 * the port counters; then every message size in turn (medians never mix sizes), the last one's pass
 * finishing every pair (fin; *finished says whether there was one). */
static int thresholds_apply(const struct rp_verdict_cfg *cfg, const uint32_t *pair_eps, const struct rp_result_seq *ps,
			    size_t n_eps, struct finish *fin, bool *finished)
{
	size_t n = ps->n, *sizes = NULL, n_sizes = 0, sizes_cap = 0;
	struct rp_rate_count counted = { 0 };
	struct rp_pair_result tmp;
	double *row = NULL, *col = NULL;
	int rc = 0;

	*finished = false;
	if (cfg->outlier > 0 && n) {
		struct rp_result_peek first;

		/* the rates' count rides on the reset pass, for the size the first pair has (a run's
		 * pairs share one size; another size's pairs are counted in a pass of their own) */
		rp_result_seq_peek(ps, 0, &first);
		rc = rp_rate_count_init(&counted, n_eps, first.msg_size);
	}
	/* each pair reset (a plain pass is judged afresh in one go by size_judge), and the sizes judged */
	for (size_t i = 0; i < n && !rc; i++) {
		struct rp_result_peek pk;
		struct rp_pair_result *r;

		rp_result_seq_peek(ps, i, &pk);
		if (!pk.plain) {
			r = rp_result_seq_get(ps, i, &tmp);
			judge_reset(r);
			rc = rp_result_seq_put(ps, i, r);
			rp_result_peek_of(r, &pk);
		}
		if (counted.med)
			rp_rate_count_pair(&counted, pair_eps, i, &pk);
		if (!rc && (rp_pk_bw_judged(&pk) || pk_rev_judged(&pk)))
			rc = size_note(&sizes, &n_sizes, &sizes_cap, pk.msg_size);
	}
	if (!rc && cfg->outlier > 0) {
		row = calloc(n_eps ? n_eps : 1, sizeof(*row));
		col = calloc(n_eps ? n_eps : 1, sizeof(*col));
		if (!row || !col) {
			rc = rp_error(-ENOMEM, "verdict: allocate medians for %zu endpoints", n_eps);
			goto out;
		}
	}
	for (size_t k = 0; k < n_sizes && !rc; k++)
		rc = size_judge(cfg, pair_eps, ps, n_eps, sizes[k], counted.med ? &counted : NULL, row, col,
				k + 1 == n_sizes ? fin : NULL);
	*finished = n_sizes > 0;
out:
	rp_rate_count_fini(&counted);
	free(sizes);
	free(row);
	free(col);
	return rc;
}

/* The fabrics of the finished pairs: each endpoint's, and cov[f] the distinct nodes of fabric f;
 * the run's failed count and pass. 0 or -ENOMEM. */
static int fabrics_compute(struct finish *f, size_t n_eps, size_t *cov, const size_t *ep_node)
{
	size_t *last_node = calloc(n_eps ? n_eps : 1, sizeof(*last_node));
	struct rp_verdict *v = f->v;

	if (!last_node)
		return rp_error(-ENOMEM, "verdict: allocate fabrics for %zu endpoints", n_eps);
	/* Endpoints are grouped by node, so counting node changes per component in endpoint order
	 * counts each node once per component. */
	for (size_t e = 0; e < n_eps; e++) {
		uint32_t fab = uf_find(f->parent, (uint32_t)e);

		v->eps[e].fabric = fab;
		if (cov[fab] == 0 || last_node[fab] != ep_node[e])
			cov[fab]++;
		last_node[fab] = ep_node[e];
	}
	free(last_node);
	v->n_failed = f->ps->n - v->n_ok;
	v->pass = v->n_failed == 0;
	return 0;
}

/* Per node: the endpoints, how many drained or unusable, and "=dev:port,..." of the rest. */
static int nodes_fill(const struct rp_endpoint *eps, size_t n_eps, struct rp_verdict *v)
{
	size_t n_nodes = 0;

	for (size_t e = 0; e < n_eps; e++)
		if (e == 0 || strcmp(eps[e].node, eps[e - 1].node) != 0)
			n_nodes++;
	v->nodes = calloc(n_nodes ? n_nodes : 1, sizeof(*v->nodes));
	if (!v->nodes)
		return rp_error(-ENOMEM, "verdict: allocate %zu nodes", n_nodes);
	v->n_nodes = n_nodes;
	for (size_t e = 0, k = 0; e < n_eps; k++) {
		struct rp_verdict_node *nd = &v->nodes[k];
		size_t len = 2, used = 0;

		nd->first_ep = e;
		while (e < n_eps && strcmp(eps[e].node, eps[nd->first_ep].node) == 0) {
			len += strlen(eps[e].device) + 16;
			nd->n_drain += v->eps[e].drain;
			nd->n_unusable += v->eps[e].unusable;
			e++;
		}
		nd->n_eps = e - nd->first_ep;
		v->n_unusable += nd->n_unusable;
		if (nd->n_drain + nd->n_unusable == nd->n_eps)
			continue;
		nd->recommended = malloc(len);
		if (!nd->recommended)
			return rp_error(-ENOMEM, "verdict: allocate recommendation for %s", eps[nd->first_ep].node);
		nd->recommended[used++] = '=';
		for (size_t i = nd->first_ep; i < e; i++) {
			if (v->eps[i].drain || v->eps[i].unusable)
				continue;
			used += (size_t)snprintf(nd->recommended + used, len - used, "%s%s:%d",
						 used > 1 ? "," : "", eps[i].device, eps[i].port);
		}
	}
	return 0;
}

int rp_verdict_apply(const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps, size_t n_eps,
		     const uint32_t *pair_eps, struct rp_pair_result *res, size_t n, struct rp_verdict *v)
{
	struct rp_result_seq ps = rp_result_seq_array(res, n);

	return rp_verdict_judge(cfg, eps, n_eps, pair_eps, &ps, v);
}

int rp_verdict_judge(const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps, size_t n_eps,
		     const uint32_t *pair_eps, const struct rp_result_seq *ps, struct rp_verdict *v)
{
	size_t n = ps->n;
	size_t *cov = NULL, *ep_node = NULL, max_cov = 0;
	struct finish fin = { 0 };
	bool finished = false;
	int rc;

	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < 2 * n; i++)
		if (pair_eps[i] >= n_eps)
			return rp_error(-EINVAL, "verdict: pair %zu names endpoint %u of %zu", i / 2, pair_eps[i], n_eps);
	v->eps = calloc(n_eps ? n_eps : 1, sizeof(*v->eps));
	cov = calloc(n_eps ? n_eps : 1, sizeof(*cov));
	ep_node = calloc(n_eps ? n_eps : 1, sizeof(*ep_node));
	if (!v->eps || !cov || !ep_node) {
		rc = rp_error(-ENOMEM, "verdict: allocate for %zu endpoints", n_eps);
		goto out;
	}
	v->n_eps = n_eps;
	for (size_t e = 1; e < n_eps; e++)
		ep_node[e] = ep_node[e - 1] + (strcmp(eps[e].node, eps[e - 1].node) != 0);
	rc = finish_init(&fin, cfg, ps, pair_eps, v, n_eps);
	if (!rc)
		rc = thresholds_apply(cfg, pair_eps, ps, n_eps, &fin, &finished);
	for (size_t i = 0; !rc && !finished && i < n; i++) {
		struct rp_result_peek pk;

		rp_result_seq_peek(ps, i, &pk);   /* nothing judged for bandwidth: a pass of its own */
		rc = pair_finish(&fin, i, &pk);
	}
	if (!rc)
		rc = fabrics_compute(&fin, n_eps, cov, ep_node);
	if (rc)
		goto out;
	for (size_t e = 0; e < n_eps; e++)
		if (v->eps[e].worked && cov[v->eps[e].fabric] > max_cov)
			max_cov = cov[v->eps[e].fabric];
	/* Separate rails share their nodes: two fabrics of at most half the nodes each are a fabric cut
	 * in two (a switch between them), not rails, and their failures are evidence. */
	if (n_eps && 2 * max_cov <= ep_node[n_eps - 1] + 1)
		max_cov = SIZE_MAX;
	rc = rp_verdict_blame(cfg, eps, n_eps, pair_eps, ps, cov, max_cov, v);
	if (!rc)
		rc = nodes_fill(eps, n_eps, v);
out:
	free(fin.parent);
	free(cov);
	free(ep_node);
	return rc;
}

const char *rp_verdict_warning_text(const struct rp_pair_result *r, enum rp_pair_warning w, char *buf, size_t len)
{
	switch (w) {
	case RP_WARN_FLAKY:
		return rp_retest_describe(r, buf, len);
	case RP_WARN_INTERVAL_DROP:
		snprintf(buf, len, "interval_drop: the slowest interval ran at %.4f Gb/s, %.1f s into the run, against "
			 "%.3f Gb/s on average: the link stalled or flapped", r->gbps_min, r->gbps_min_at_s, r->gbps);
		return buf;
	case RP_WARN_LOSSY: {
		const struct rp_pair_ctr_side *sd = r->counters.src.verdict == RP_CV_LOSSY ? &r->counters.src : &r->counters.dst;

		snprintf(buf, len, "lossy: %s %s:%d: %s (bandwidth passed; %s)",
			 sd == &r->counters.src ? "src" : "dst", sd == &r->counters.src ? r->src.device : r->dst.device,
			 sd == &r->counters.src ? r->src.port : r->dst.port, sd->reason,
			 sd->cls == RP_CC_RESEND ? "resent above --max-errors resend, with no sequence gap" :
			 "the link drops packets");
		return buf;
	}
	case RP_WARN_MTU_MISMATCH:
		snprintf(buf, len, "mtu_mismatch: %s:%d runs at an active MTU of %d, %s:%d at %d", r->src.device, r->src.port,
			 r->src.mtu, r->dst.device, r->dst.port, r->dst.mtu);
		return buf;
	case RP_WARN_NOMINAL_RATE:
		snprintf(buf, len, "nominal_link_rate: %s is a soft device whose link rate (%.1f Gb/s) is nominal: "
			 "--min-bw as a fraction of it was not applied, only an absolute --min-bw (180G) and --outlier",
			 r->src.soft ? r->src.device : r->dst.device, r->src.soft ? r->src.link_gbps : r->dst.link_gbps);
		return buf;
	default:
		snprintf(buf, len, "%s", rp_pair_warning_code(w));
		return buf;
	}
}

const struct rp_pair_result *rp_matrix_view_pair(const struct rp_matrix_view *mv, size_t i, struct rp_pair_result *tmp)
{
	return mv->pairs ? rp_result_seq_get(mv->pairs, i, tmp) : &mv->res[i];
}

const struct rp_pair_result *rp_matrix_view_every(const struct rp_matrix_view *mv, size_t i, struct rp_pair_result *tmp)
{
	return mv->every ? rp_result_seq_get(mv->every, i, tmp) : rp_matrix_view_pair(mv, i, tmp);
}

size_t rp_matrix_view_every_n(const struct rp_matrix_view *mv)
{
	return mv->every ? mv->every->n : mv->n;
}

void rp_verdict_fini(struct rp_verdict *v)
{
	for (size_t k = 0; v->nodes && k < v->n_nodes; k++)
		free(v->nodes[k].recommended);
	free(v->nodes);
	free(v->eps);
	free(v->paths);
	free(v->suspects);
	memset(v, 0, sizeof(*v));
}
