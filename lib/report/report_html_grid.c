/* report_html_grid.c: the HTML page's display order, expected rates and pictures (legend, endpoint
 * tables, node heatmap canvas, rail view); see report_html_int.h. */
#include "report/report_html_int.h"

#include "verdict/result_seq.h"
#include "report/report_list.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "health/counters.h"
#include "base/natcmp.h"
#include "report/report.h"

const struct rp_html_bin rp_html_bins[RP_HTML_BINS] = {
	{ 90, "#1a9850", "90% or more", true },
	{ 70, "#91cf60", "70-90%", false },
	{ 50, "#fee08b", "50-70%", false },
	{ 25, "#fc8d59", "25-50%", false },
	{ 0, "#e34a33", "under 25%", true },
	{ 0, "#7f0000", "failed (no data moved)", true },
	{ 0, "#bdbdbd", "rate not a number", false },
	{ 0, "#eeeeee", "not measured", false },
};

int rp_html_bin_of(uint8_t q)
{
	if (q == RP_HTML_Q_NONE)
		return RP_HTML_BIN_NONE;
	if (q == RP_HTML_Q_FAIL)
		return RP_HTML_BIN_FAIL;
	if (q == RP_HTML_Q_NA)
		return RP_HTML_BIN_NA;
	for (int b = 0; b < RP_HTML_BIN_RATES - 1; b++)
		if (q >= rp_html_bins[b].min_pct)
			return b;
	return RP_HTML_BIN_RATES - 1;
}

static bool moved(const struct rp_pair_result *r)
{
	return r->status == RP_ST_OK || r->status == RP_ST_BELOW_THRESHOLD;
}

#define LEAF_ORDER "ordered by leaf switch (--topology), then by name: the nodes under one leaf are adjacent, so a " \
	"failing leaf or uplink shows as a block"

struct ep_order {
	const struct rp_endpoint *eps;
	const char *const *key;       /* per endpoint: its node's leaf (--topology), NULL: none; NULL: no keys */
};

/* Natural order of endpoints: node, device, port; ties by endpoint number so the order is total.
 * With a topology, nodes by their leaf first (nodes no leaf lists last). */
static int ep_cmp(const void *a, const void *b, void *ctx)
{
	const struct ep_order *o = ctx;
	const struct rp_endpoint *eps = o->eps;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const struct rp_endpoint *x = &eps[ia], *y = &eps[ib];
	int c = 0;

	if (o->key && (o->key[ia] || o->key[ib]))
		c = !o->key[ia] ? 1 : !o->key[ib] ? -1 : rp_natcmp_n(o->key[ia], o->key[ib], RP_NAME_MAX * 2);
	if (!c)
		c = rp_natcmp_n(x->node, y->node, sizeof(x->node));

	if (!c)
		c = rp_natcmp_n(x->device, y->device, sizeof(x->device));
	if (!c)
		c = (x->port > y->port) - (x->port < y->port);
	if (!c)
		c = (ia > ib) - (ia < ib);
	return c;
}

struct fab_rate {
	size_t fab;
	double gbps;
	double link;                  /* the pair's link rate (slower port), 0 when it has none */
};

static int fab_rate_cmp(const void *a, const void *b)
{
	const struct fab_rate *x = a, *y = b;

	if (x->fab != y->fab)
		return x->fab < y->fab ? -1 : 1;
	return (x->gbps > y->gbps) - (x->gbps < y->gbps);
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_sorted(const double *v, size_t n)
{
	return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static size_t fabric_of(const struct rp_matrix_view *mv, size_t e)
{
	if (mv->verdict && mv->verdict->eps && mv->verdict->n_eps == mv->n_eps && mv->verdict->eps[e].fabric < mv->n_eps)
		return mv->verdict->eps[e].fabric;
	return 0;
}

/* Median rate and median link rate of the pairs fr[a..b) of one fabric (sorted by rate); a fabric whose
 * median is under RP_HTML_NOMINAL_PCT of its link rate has a nominal one. */
static bool fabric_one(struct rp_html_layout *lo, const struct fab_rate *fr, size_t a, size_t b, double *tmp, double *m_p)
{
	size_t nl = 0;
	double m, l;

	for (size_t k = a; k < b; k++) {
		tmp[k - a] = fr[k].gbps;
		if (fr[k].link > 0)
			tmp[(b - a) + nl++] = fr[k].link;
	}
	m = median_sorted(tmp, b - a);
	qsort(tmp + (b - a), nl, sizeof(*tmp), dbl_cmp);
	l = median_sorted(tmp + (b - a), nl);
	*m_p = m;
	if (lo->n_fabrics++ == 0 || m < lo->median_lo)
		lo->median_lo = m;
	if (m > lo->median_hi)
		lo->median_hi = m;
	if (!(l > 0) || m * 100 >= RP_HTML_NOMINAL_PCT * l)
		return false;
	lo->n_nominal++;
	lo->nominal_median = m;
	lo->nominal_link = l;
	return true;
}

/* The median rate of the pairs that moved data on each fabric (by the source's fabric), and the
 * fabrics where the link rate means nothing (their ports' link rates are then not used). */
static int fabric_medians(struct rp_html_layout *lo)
{
	struct rp_pair_result pr_tmp;
	const struct rp_matrix_view *mv = lo->mv;
	struct fab_rate *fr = malloc((mv->n ? mv->n : 1) * sizeof(*fr));
	double *by_fab = calloc(lo->n_eps ? lo->n_eps : 1, sizeof(*by_fab)), *tmp = malloc(2 * (mv->n ? mv->n : 1) * sizeof(*tmp));
	bool *nominal = calloc(lo->n_eps ? lo->n_eps : 1, sizeof(*nominal));
	size_t n = 0;

	if (!fr || !by_fab || !tmp || !nominal) {
		free(fr);
		free(by_fab);
		free(tmp);
		free(nominal);
		return -ENOMEM;
	}
	for (size_t i = 0; i < mv->n; i++) {
		uint32_t s = mv->pair_eps[2 * i], d = mv->pair_eps[2 * i + 1];

		const struct rp_pair_result *r = rp_matrix_view_pair(mv, i, &pr_tmp);

		if (moved(r) && isfinite(r->gbps) && r->gbps > 0)
			fr[n++] = (struct fab_rate){ fabric_of(mv, s), r->gbps,
						     lo->link[s] > 0 && lo->link[d] > 0 ? fmin(lo->link[s], lo->link[d]) : 0 };
	}
	qsort(fr, n, sizeof(*fr), fab_rate_cmp);
	for (size_t a = 0, b; a < n; a = b) {
		for (b = a; b < n && fr[b].fab == fr[a].fab; b++)
			;
		nominal[fr[a].fab] = fabric_one(lo, fr, a, b, tmp, &by_fab[fr[a].fab]);
	}
	for (size_t e = 0; e < lo->n_eps; e++) {
		lo->median[e] = by_fab[fabric_of(mv, e)];
		if (nominal[fabric_of(mv, e)])
			lo->link[e] = 0;
	}
	free(fr);
	free(by_fab);
	free(tmp);
	free(nominal);
	return 0;
}

double rp_html_expected(const struct rp_html_layout *lo, size_t i)
{
	struct rp_pair_result pr_tmp;
	uint32_t s = lo->mv->pair_eps[2 * i], d = lo->mv->pair_eps[2 * i + 1];

	if (lo->link[s] > 0 && lo->link[d] > 0 && !(rp_matrix_view_pair(lo->mv, i, &pr_tmp)->warnings & (1u << RP_WARN_NOMINAL_RATE)))
		return lo->link[s] < lo->link[d] ? lo->link[s] : lo->link[d];
	return lo->median[s] > 0 ? lo->median[s] : lo->median[d];
}

size_t rp_html_src_pos(const struct rp_html_layout *lo, size_t i)
{
	return lo->pos[lo->mv->pair_eps[2 * i]];
}

size_t rp_html_dst_pos(const struct rp_html_layout *lo, size_t i)
{
	return lo->pos[lo->mv->pair_eps[2 * i + 1]];
}

static uint8_t share_of(const struct rp_html_layout *lo, size_t i)
{
	struct rp_pair_result pr_tmp;
	const struct rp_pair_result *r = rp_matrix_view_pair(lo->mv, i, &pr_tmp);
	double exp = rp_html_expected(lo, i), pct;

	if (!moved(r))
		return RP_HTML_Q_FAIL;
	if (!isfinite(r->gbps) || !(exp > 0))
		return RP_HTML_Q_NA;
	pct = r->gbps > 0 ? r->gbps / exp * 100 : 0;
	return pct >= RP_HTML_Q_MAX ? RP_HTML_Q_MAX : (uint8_t)lround(pct);
}

void rp_html_each_unlisted(const struct rp_html_layout *lo, void (*fn)(void *arg, size_t sp, size_t dp, uint8_t q),
			   void *arg)
{
	const struct rp_matrix_view *mv = lo->mv;

	if (!mv->n_unlisted || !mv->every || !mv->every_pair_eps)
		return;
	for (size_t i = 0; i < mv->every->n; i++) {
		uint32_t s = mv->every_pair_eps[2 * i], d = mv->every_pair_eps[2 * i + 1];
		struct rp_result_peek pk;
		double exp, pct;
		uint8_t q;

		rp_result_seq_peek(mv->every, i, &pk);
		if (rp_result_notable(&pk) || s >= lo->n_eps || d >= lo->n_eps)
			continue;   /* listed: counted from the view's pairs */
		exp = lo->link[s] > 0 && lo->link[d] > 0 ? fmin(lo->link[s], lo->link[d])
							 : lo->median[s] > 0 ? lo->median[s] : lo->median[d];
		if (!isfinite(pk.gbps) || !(exp > 0)) {
			q = RP_HTML_Q_NA;
		} else {
			pct = pk.gbps > 0 ? pk.gbps / exp * 100 : 0;
			q = pct >= RP_HTML_Q_MAX ? RP_HTML_Q_MAX : (uint8_t)lround(pct);
		}
		fn(arg, lo->pos[s], lo->pos[d], q);
	}
}

void rp_html_layout_fini(struct rp_html_layout *lo)
{
	free(lo->order);
	free(lo->pos);
	free(lo->node_of);
	free(lo->node_first);
	free(lo->link);
	free(lo->median);
	free(lo->q);
	memset(lo, 0, sizeof(*lo));
}

/* lo->order: the natural order; with a topology, then again with each node keyed by the first leaf
 * (natural order) of its adapters, so the nodes under one leaf are adjacent. */
static int order_sort(struct rp_html_layout *lo, const struct rp_matrix_view *mv)
{
	struct ep_order o = { .eps = mv->eps };
	size_t n = mv->n_eps;
	const char **key;

	qsort_r(lo->order, n, sizeof(*lo->order), ep_cmp, &o);
	if (!mv->leaf || !mv->leaf_names || n == 0)
		return 0;
	key = calloc(n, sizeof(*key));
	if (!key)
		return -ENOMEM;
	for (size_t p = 0, first = 0; p <= n; p++) {
		const char *best = NULL;

		if (p < n && p > first && strncmp(mv->eps[lo->order[p]].node, mv->eps[lo->order[first]].node,
						  sizeof(mv->eps[0].node)) == 0)
			continue;
		for (size_t q = first; q < p; q++) {
			uint32_t l = mv->leaf[lo->order[q]];

			if (l != UINT32_MAX && (!best || rp_natcmp_n(mv->leaf_names[l], best, RP_NAME_MAX * 2) < 0))
				best = mv->leaf_names[l];
		}
		for (size_t q = first; q < p; q++)
			key[lo->order[q]] = best;
		first = p;
	}
	o.key = key;
	qsort_r(lo->order, n, sizeof(*lo->order), ep_cmp, &o);
	lo->by_leaf = true;
	free(key);
	return 0;
}

int rp_html_layout_init(struct rp_html_layout *lo, const struct rp_matrix_view *mv)
{
	struct rp_pair_result pr_tmp;
	size_t n = mv->n_eps, m = n ? n : 1;

	memset(lo, 0, sizeof(*lo));
	lo->mv = mv;
	lo->n_eps = n;
	lo->heat_max = RP_HTML_HEATMAP_NODES;
	lo->block = 1;
	for (size_t i = 0; i < 2 * mv->n; i++)
		if (mv->pair_eps[i] >= n)
			return -EINVAL;
	lo->order = malloc(m * sizeof(*lo->order));
	lo->pos = malloc(m * sizeof(*lo->pos));
	lo->node_of = malloc(m * sizeof(*lo->node_of));
	lo->node_first = malloc((m + 1) * sizeof(*lo->node_first));
	lo->link = calloc(m, sizeof(*lo->link));
	lo->median = calloc(m, sizeof(*lo->median));
	lo->q = malloc(mv->n ? mv->n : 1);
	if (!lo->order || !lo->pos || !lo->node_of || !lo->node_first || !lo->link || !lo->median || !lo->q)
		return -ENOMEM;
	for (size_t e = 0; e < n; e++) {
		const struct rp_endpoint *ep = &mv->eps[e];

		lo->order[e] = e;
		lo->link[e] = !ep->soft && isfinite(ep->link_gbps) && ep->link_gbps > 0 ? ep->link_gbps : 0;
	}
	if (order_sort(lo, mv) != 0)
		return -ENOMEM;
	for (size_t p = 0; p < n; p++) {
		lo->pos[lo->order[p]] = p;
		if (p == 0 || strncmp(mv->eps[lo->order[p]].node, mv->eps[lo->order[p - 1]].node, sizeof(mv->eps[0].node)) != 0)
			lo->node_first[lo->n_nodes++] = p;
		lo->node_of[p] = lo->n_nodes - 1;
	}
	lo->node_first[lo->n_nodes] = n;
	for (size_t k = 0; k < lo->n_nodes; k++)
		if (lo->node_first[k + 1] - lo->node_first[k] > lo->max_ad)
			lo->max_ad = lo->node_first[k + 1] - lo->node_first[k];
	if (fabric_medians(lo) != 0)
		return -ENOMEM;
	for (size_t i = 0; i < mv->n; i++) {
		uint32_t s = mv->pair_eps[2 * i], d = mv->pair_eps[2 * i + 1];

		lo->q[i] = share_of(lo, i);
		if (lo->link[s] > 0 && lo->link[d] > 0 && !(rp_matrix_view_pair(mv, i, &pr_tmp)->warnings & (1u << RP_WARN_NOMINAL_RATE)))
			lo->n_by_link++;
		else
			lo->n_by_median++;
	}
	return 0;
}

void rp_html_ep(struct rp_sb *sb, const struct rp_endpoint *ep)
{
	rp_sb_xmln(sb, ep->node, sizeof(ep->node));
	rp_sb_puts(sb, "/");
	rp_sb_xmln(sb, ep->device, sizeof(ep->device));
	rp_sb_printf(sb, ":%d", ep->port);
}

void rp_html_gbps(struct rp_sb *sb, int prec, double v)
{
	if (isfinite(v))
		rp_sb_printf(sb, "%.*f", prec, v);
	else
		rp_sb_puts(sb, "n/a");
}

/* One side of rp_html_counters_text(); false when it has nothing to say. */
static bool ctr_side_text(const char *name, const struct rp_pair_ctr_side *c, char *buf, size_t size, size_t *len)
{
	size_t l = *len;

	if (!c->measured || (c->n_moved == 0 && c->verdict == RP_CV_OK && !c->unattributable))
		return false;
	l += (size_t)snprintf(buf + l, l < size ? size - l : 0, "%s%s", l > strlen("counters: ") ? "; " : "", name);
	for (uint32_t k = 0; k < c->n && k < RP_PAIR_CTR_MAX && l < size; k++)
		l += (size_t)snprintf(buf + l, size - l, "%s %s%.*s +%llu", k ? "," : "", c->c[k].at_least ? "at least " : "",
				      (int)sizeof(c->c[k].name), c->c[k].name, (unsigned long long)c->c[k].delta);
	if (c->n_moved > c->n && l < size)
		l += (size_t)snprintf(buf + l, size - l, " and %u more", c->n_moved - c->n);
	if (c->verdict != RP_CV_OK && l < size)
		l += (size_t)snprintf(buf + l, size - l, " (%s)", rp_ctr_verdict_name((enum rp_ctr_verdict)c->verdict));
	if (c->unattributable && l < size)
		l += (size_t)snprintf(buf + l, size - l, " (not attributable: another process used the port)");
	*len = l < size ? l : size - 1;
	return true;
}

size_t rp_html_counters_text(const struct rp_pair_result *r, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "counters: ");
	bool any = ctr_side_text("src", &r->counters.src, buf, size, &len);

	any = ctr_side_text("dst", &r->counters.dst, buf, size, &len) || any;
	if (!any)
		buf[0] = '\0';
	return any ? len : 0;
}

/* --bidir: the reverse direction (dst into src) on its own, then both directions' sum. */
static void reverse_text(struct rp_sb *sb, const struct rp_pair_result *r)
{
	const struct rp_pair_reverse *v = &r->reverse;
	char warn[128];

	if (!v->measured)
		return;
	rp_sb_puts(sb, "; reverse ");
	rp_html_ep(sb, &r->dst);
	rp_sb_puts(sb, " -&gt; ");
	rp_html_ep(sb, &r->src);
	rp_sb_printf(sb, ": %s, ", rp_status_code(v->status));
	rp_html_gbps(sb, 3, v->gbps);
	rp_sb_puts(sb, " Gb/s (slowest interval ");
	rp_html_gbps(sb, 3, v->gbps_min);
	rp_sb_printf(sb, "), %s", v->verified ? "verified" : "not verified");
	if (v->reason[0]) {
		rp_sb_puts(sb, ": ");
		rp_sb_xmln(sb, v->reason, sizeof(v->reason));
	}
	if (v->warnings)
		rp_sb_printf(sb, "; reverse warnings: %s", rp_report_warnings(v->warnings, warn, sizeof(warn)));
	rp_sb_puts(sb, "; both directions ");
	rp_html_gbps(sb, 3, rp_pair_gbps_sum(r));
	rp_sb_puts(sb, " Gb/s");
}

/* The confirm text and the warnings of a pair, escaped, each after "; " (plain text, for attributes). */
static void verdict_text(struct rp_sb *sb, const struct rp_pair_result *r)
{
	char warn[128], ctr[RP_HTML_CTR_TEXT];
	const char *c = rp_report_confirm_text(r->confirm);

	if (c[0])
		rp_sb_printf(sb, "; %s", c);
	if (r->warnings) {
		rp_sb_printf(sb, "; warnings: %s", rp_report_warnings(r->warnings, warn, sizeof(warn)));
		if (r->warnings & (1u << RP_WARN_INTERVAL_DROP) && isfinite(r->gbps_min_at_s))
			rp_sb_printf(sb, " (slowest interval at %.1f s)", r->gbps_min_at_s);
	}
	if (rp_html_counters_text(r, ctr, sizeof(ctr))) {
		rp_sb_puts(sb, "; ");
		rp_sb_xml(sb, ctr);
	}
	if (r->n_attempts > 1) {
		rp_sb_puts(sb, "; ");
		rp_report_attempts_xml(sb, r);
	}
	reverse_text(sb, r);
}

void rp_html_pair_detail(const struct rp_html_layout *lo, struct rp_sb *sb, size_t i)
{
	struct rp_pair_result pr_tmp;
	const struct rp_pair_result *r = rp_matrix_view_pair(lo->mv, i, &pr_tmp);

	rp_html_ep(sb, &r->src);
	rp_sb_puts(sb, " -&gt; ");
	rp_html_ep(sb, &r->dst);
	rp_sb_printf(sb, ": %s, ", rp_status_code(r->status));
	rp_html_gbps(sb, 3, r->gbps);
	rp_sb_puts(sb, " Gb/s (slowest interval ");
	rp_html_gbps(sb, 3, r->gbps_min);
	rp_sb_printf(sb, "), %s", r->verified ? "verified" : "not verified");
	if (lo->q[i] <= RP_HTML_Q_MAX)
		rp_sb_printf(sb, ", %.0f%% of the expected %.3f Gb/s", r->gbps / rp_html_expected(lo, i) * 100,
			     rp_html_expected(lo, i));
	if (r->lat.measured && isfinite(r->lat.median_us))
		rp_sb_printf(sb, ", latency median %.2f us", r->lat.median_us);
	if (r->reason[0]) {
		rp_sb_puts(sb, ": ");
		rp_sb_xmln(sb, r->reason, sizeof(r->reason));
	}
	verdict_text(sb, r);
}

static void legend(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	rp_sb_puts(sb, "<div id=\"legend\"><b>Colour</b>: a pair's rate as a share of the rate expected of it");
	rp_sb_puts(sb, " (never of the fastest pair):");
	if (lo->n_by_link)
		rp_sb_printf(sb, " the slower port's link rate for %zu pairs between hardware ports;", lo->n_by_link);
	if (lo->mv->n_unlisted)
		rp_sb_printf(sb, " the %zu plain passes not listed one by one the same way;", lo->mv->n_unlisted);
	if (lo->n_by_median) {
		rp_sb_printf(sb, " the median of the pairs measured on its fabric for %zu pairs (soft devices such as rxe, whose "
			     "link rate is nominal, or a rate nobody reported): ", lo->n_by_median);
		if (lo->n_fabrics > 1)
			rp_sb_printf(sb, "%.3f to %.3f Gb/s over %zu fabrics;", lo->median_lo, lo->median_hi, lo->n_fabrics);
		else if (lo->n_fabrics == 1)
			rp_sb_printf(sb, "%.3f Gb/s;", lo->median_lo);
		else
			rp_sb_puts(sb, "none moved data;");
	}
	if (lo->n_nominal)
		rp_sb_printf(sb, " <span class=\"warn\">the link rate is not used on %zu fabric%s whose median rate (%.3f Gb/s) is "
			     "under %d%% of its ports' link rate (%.3f Gb/s): a nominal rate (a soft device not marked as one) "
			     "or a problem of the whole fabric; the verdict's thresholds still apply to it</span>;",
			     lo->n_nominal, lo->n_nominal == 1 ? "" : "s", lo->nominal_median, RP_HTML_NOMINAL_PCT, lo->nominal_link);
	rp_sb_puts(sb, "<br>\n");
	for (int b = 0; b < RP_HTML_BINS; b++)
		rp_sb_printf(sb, "<span class=\"key\"><span class=\"sw b%d\"></span>%s</span> ", b, rp_html_bins[b].label);
	rp_sb_puts(sb, "</div>\n");
}

/* Endpoint by endpoint tables (display order); idx[s * E + d] = result number or -1. */
static void ep_grids(const struct rp_html_layout *lo, struct rp_sb *sb, const int32_t *idx)
{
	struct rp_pair_result pr_tmp;
	const struct rp_matrix_view *mv = lo->mv;
	size_t n = lo->n_eps;

	for (int reach = 0; reach < 2; reach++) {
		rp_sb_printf(sb, "<h2>%s (rows write into columns)</h2>\n<table class=\"grid\" id=\"%s\">\n<tr><th></th>",
			     reach ? "Reachability" : "Bandwidth, Gb/s", reach ? "reach-heatmap" : "bw-heatmap");
		for (size_t d = 0; d < n; d++) {
			rp_sb_puts(sb, "<th title=\"");
			rp_html_ep(sb, &mv->eps[lo->order[d]]);
			rp_sb_printf(sb, "\">%zu</th>", d);
		}
		rp_sb_puts(sb, "</tr>\n");
		for (size_t s = 0; s < n; s++) {
			rp_sb_printf(sb, "<tr><th>%zu ", s);
			rp_html_ep(sb, &mv->eps[lo->order[s]]);
			rp_sb_puts(sb, "</th>");
			for (size_t d = 0; d < n; d++) {
				int32_t i = idx[s * n + d];
				const struct rp_pair_result *r = i >= 0 ? rp_matrix_view_pair(mv, (size_t)i, &pr_tmp) : NULL;

				if (!r) {
					rp_sb_printf(sb, "<td class=\"%s\"></td>", s == d ? "self" : "none");
					continue;
				}
				if (reach)
					rp_sb_printf(sb, "<td class=\"%s\"", !moved(r) ? "fail" : r->status != RP_ST_OK ? "slow" :
						     r->confirm == RP_CONFIRM_FLAKY ? "flaky" : "reach");
				else if (moved(r))
					rp_sb_printf(sb, "<td class=\"ok b%d\"", rp_html_bin_of(lo->q[i]));
				else
					rp_sb_puts(sb, "<td class=\"fail\"");
				rp_sb_puts(sb, " data-d=\"");
				rp_html_pair_detail(lo, sb, (size_t)i);
				rp_sb_puts(sb, "\">");
				if (reach || !moved(r))
					rp_sb_puts(sb, moved(r) ? "&#10003;" : "&#10007;");
				else
					rp_html_gbps(sb, isfinite(r->gbps) && r->gbps >= 10 ? 0 : 2, r->gbps);
				rp_sb_puts(sb, "</td>");
			}
			rp_sb_puts(sb, "</tr>\n");
		}
		rp_sb_puts(sb, "</table>\n");
	}
}

static void ep_tables(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	size_t n = lo->n_eps;
	int32_t *idx = malloc(n * n * sizeof(*idx) + 1);

	if (!idx) {
		rp_sb_puts(sb, "<p>(no endpoint tables: out of memory)</p>\n");
		return;
	}
	memset(idx, 0xff, n * n * sizeof(*idx));
	for (size_t i = 0; i < lo->mv->n; i++)
		idx[rp_html_src_pos(lo, i) * n + rp_html_dst_pos(lo, i)] = (int32_t)i;
	ep_grids(lo, sb, idx);
	free(idx);
}

/* Is result a worse than result b for a "worst pair" cell: failed first, then the lower share. */
static bool worse(const struct rp_html_layout *lo, size_t a, long b)
{
	uint8_t qa = lo->q[a], qb;

	if (b < 0)
		return true;
	qb = lo->q[b];
	if ((qa == RP_HTML_Q_FAIL) != (qb == RP_HTML_Q_FAIL))
		return qa == RP_HTML_Q_FAIL;
	if ((qa == RP_HTML_Q_NA) != (qb == RP_HTML_Q_NA))
		return qb == RP_HTML_Q_NA;
	return qa < qb;
}

struct rail_cell {
	size_t pairs, failed, slow;
	long worst;                   /* the worst listed pair; -1 none */
	size_t unlisted;              /* plain passes counted, not listed (in pairs) */
	uint8_t uq;                   /* the lowest share among them */
};

struct rail_arg {
	const struct rp_html_layout *lo;
	struct rail_cell *c;
};

static void unlisted_rail(void *arg, size_t sp, size_t dp, uint8_t q);

/* The adapter's position on its node: its rail. */
static size_t rail_of(const struct rp_html_layout *lo, size_t p)
{
	return p - lo->node_first[lo->node_of[p]];
}

/* The name of rail a: the adapter at that position on the first node that has one. */
static void rail_name(const struct rp_html_layout *lo, struct rp_sb *sb, size_t a)
{
	for (size_t k = 0; k < lo->n_nodes; k++)
		if (lo->node_first[k] + a < lo->node_first[k + 1]) {
			const struct rp_endpoint *ep = &lo->mv->eps[lo->order[lo->node_first[k] + a]];

			rp_sb_xmln(sb, ep->device, sizeof(ep->device));
			rp_sb_printf(sb, ":%d", ep->port);
			return;
		}
}

static void rail_row(const struct rp_html_layout *lo, struct rp_sb *sb, const struct rail_cell *c, size_t a)
{
	size_t A = lo->max_ad;

	rp_sb_printf(sb, "<tr><th>%zu ", a);
	rail_name(lo, sb, a);
	rp_sb_puts(sb, "</th>");
	for (size_t b = 0; b < A; b++) {
		const struct rail_cell *x = &c[a * A + b];

		if (!x->pairs) {
			rp_sb_puts(sb, "<td class=\"none\"></td>");
			continue;
		}
		if (x->worst < 0) {   /* plain passes only, none listed */
			rp_sb_printf(sb, "<td class=\"ok b%d\" data-d=\"rail %zu -&gt; rail %zu: %zu pairs, all plain passes (not "
				     "listed one by one); the slowest at %u%% of the expected rate\">%u%%</td>", rp_html_bin_of(x->uq),
				     a, b, x->pairs, x->uq, x->uq);
			continue;
		}
		rp_sb_printf(sb, "<td class=\"ok b%d\" data-d=\"rail %zu -&gt; rail %zu: %zu pairs, %zu failed, %zu under 90%% of the "
			     "expected rate; worst: ", rp_html_bin_of(lo->q[x->worst]), a, b, x->pairs, x->failed, x->slow);
		rp_html_pair_detail(lo, sb, (size_t)x->worst);
		if (x->failed)
			rp_sb_printf(sb, "\">&#10007;%zu</td>", x->failed);
		else if (lo->q[x->worst] <= RP_HTML_Q_MAX)
			rp_sb_printf(sb, "\">%u%%</td>", lo->q[x->worst]);
		else
			rp_sb_puts(sb, "\">n/a</td>");
	}
	rp_sb_puts(sb, "</tr>\n");
}

static void unlisted_rail(void *arg, size_t sp, size_t dp, uint8_t q)
{
	const struct rail_arg *r = arg;
	struct rail_cell *x = &r->c[rail_of(r->lo, sp) * r->lo->max_ad + rail_of(r->lo, dp)];

	x->pairs++;
	x->unlisted++;
	x->slow += q < rp_html_bins[0].min_pct;
	if (q < x->uq || x->uq == RP_HTML_Q_NONE)
		x->uq = q;
}

/* Adapter a on every node against adapter b on every node: where a whole rail is slow or cut. */
static void rails(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	struct rp_pair_result pr_tmp;
	size_t A = lo->max_ad;
	struct rail_cell *c = calloc(A * A, sizeof(*c));

	if (!c) {
		rp_sb_puts(sb, "<p>(no rail view: out of memory)</p>\n");
		return;
	}
	for (size_t a = 0; a < A * A; a++) {
		c[a].worst = -1;
		c[a].uq = RP_HTML_Q_NONE;
	}
	rp_html_each_unlisted(lo, unlisted_rail, &(struct rail_arg){ lo, c });
	for (size_t i = 0; i < lo->mv->n; i++) {
		struct rail_cell *x = &c[rail_of(lo, rp_html_src_pos(lo, i)) * A + rail_of(lo, rp_html_dst_pos(lo, i))];

		x->pairs++;
		x->failed += rp_matrix_view_pair(lo->mv, i, &pr_tmp)->status != RP_ST_OK;
		x->slow += lo->q[i] < rp_html_bins[0].min_pct;
		if (worse(lo, i, x->worst))
			x->worst = (long)i;
	}
	rp_sb_puts(sb, "<h2>Rails: adapter i on every node writing into adapter j on every node</h2>\n"
		       "<p class=\"hint\">Each cell: the worst pair (&#10007;N: N failed pairs; else its share of the expected "
		       "rate). Adapters are numbered in natural order on each node.</p>\n<table class=\"grid\" id=\"rails\">\n<tr><th></th>");
	for (size_t b = 0; b < A; b++) {
		rp_sb_printf(sb, "<th>%zu ", b);
		rail_name(lo, sb, b);
		rp_sb_puts(sb, "</th>");
	}
	rp_sb_puts(sb, "</tr>\n");
	for (size_t a = 0; a < A; a++)
		rail_row(lo, sb, c, a);
	rp_sb_puts(sb, "</table>\n");
	free(c);
}

/* Past heat_max nodes: the same heatmap over blocks of B consecutive nodes (natural order), each cell
 * the worst pair between two blocks; a copy of the layout whose "nodes" are the blocks. */
static void heat_blocks(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	size_t B = (lo->n_nodes + lo->heat_max - 1) / lo->heat_max, nb = (lo->n_nodes + B - 1) / B;
	struct rp_html_layout agg = *lo;
	size_t *node_of = malloc((lo->n_eps ? lo->n_eps : 1) * sizeof(*node_of));
	size_t *first = malloc((nb + 1) * sizeof(*first));

	if (!node_of || !first || B * lo->max_ad > 255) {
		rp_sb_printf(sb, "<p>No node heatmap: %zu nodes (%s); see the causes, the rails and the failures.</p>\n",
			     lo->n_nodes, !node_of || !first ? "out of memory" : "too many adapters a block");
		free(node_of);
		free(first);
		return;
	}
	for (size_t p = 0; p < lo->n_eps; p++)
		node_of[p] = lo->node_of[p] / B;
	for (size_t k = 0; k <= nb; k++)
		first[k] = lo->node_first[k * B < lo->n_nodes ? k * B : lo->n_nodes];
	agg.node_of = node_of;
	agg.node_first = first;
	agg.n_nodes = nb;
	agg.block = B;
	agg.n_nodes_real = lo->n_nodes;
	rp_sb_printf(sb, "<h2>Node blocks: the worst pair between two blocks of %zu nodes (rows write into columns)</h2>\n"
		     "<p class=\"hint\" id=\"heat-aggregated\">AGGREGATED: %zu nodes are more than the %zu cells a side this "
		     "page draws, so each cell is a block of %zu x %zu consecutive nodes (%s) and shows the worst pair "
		     "between them: a failure anywhere in a block colours its cell. Hover a cell for the block pair; click it for "
		     "its adapter pairs.</p>\n<p class=\"hint\" id=\"heat-note\"></p>\n"
		     "<div class=\"scroll\"><canvas id=\"node-heatmap\"></canvas></div>\n<div id=\"drill\"></div>\n",
		     B, lo->n_nodes, lo->heat_max, B, B, lo->by_leaf ? LEAF_ORDER : "natural order");
	rp_html_node_data(&agg, sb);
	free(node_of);
	free(first);
}

void rp_html_pictures(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	bool tables = lo->n_eps <= RP_HTML_GRID_MAX;
	bool nodes = lo->n_nodes > 1 && (lo->max_ad > 1 || !tables);

	rp_sb_puts(sb, "<div id=\"detail\">hover over a cell for details</div>\n");
	legend(lo, sb);
	if (nodes && lo->n_nodes > lo->heat_max) {
		heat_blocks(lo, sb);
	} else if (nodes) {
		rp_sb_puts(sb, "<h2>Node by node: the worst pair between two nodes (rows write into columns)</h2>\n"
			       "<p class=\"hint\">Hover a cell for the node pair; click it for its adapter pairs.</p>\n");
		if (lo->by_leaf)
			rp_sb_puts(sb, "<p class=\"hint\" id=\"heat-order\">Nodes " LEAF_ORDER ".</p>\n");
		rp_sb_puts(sb, "<p class=\"hint\" id=\"heat-note\">Every node pair with a failed or slow pair is drawn at least 3 "
			       "pixels wide, failures on top, however large the fabric.</p>\n"
			       "<div class=\"scroll\"><canvas id=\"node-heatmap\"></canvas></div>\n<div id=\"drill\"></div>\n");
		rp_html_node_data(lo, sb);
	}
	if (lo->max_ad > 1)
		rails(lo, sb);
	if (tables)
		ep_tables(lo, sb);
}
