/* report_html_warn.c: the HTML page's per-node warnings ("node-warnings": the `drift` warnings
 * across the endpoints and, per node, its ports in pairs with mtu_mismatch) and matrix
 * --concurrent-rails's pairs beside their solo figures ("concurrent-rails"); see report_html.h. */
#include <stdint.h>
#include <stdlib.h>

#include "verdict/drift.h"
#include "report/report.h"
#include "report/report_html_int.h"

/* One node's ports that are an end of a pair with mtu_mismatch (either direction): each port's MTU,
 * how many such pairs, and one peer's MTU. Returns how many ports it named. */
static size_t node_mtu_line(const struct rp_html_layout *lo, struct rp_sb *sb, size_t k, const uint32_t *n_mm,
			    const int *mtu, const int *peer_mtu)
{
	const struct rp_matrix_view *mv = lo->mv;
	char name[80];
	size_t named = 0;

	for (size_t p = lo->node_first[k]; p < lo->node_first[k + 1]; p++) {
		size_t e = lo->order[p];

		if (!n_mm[e])
			continue;
		if (named++ == 0) {
			rp_sb_puts(sb, "<li class=\"warning\"><b>mtu_mismatch</b> on ");
			rp_sb_xmln(sb, mv->eps[e].node, sizeof(mv->eps[e].node));
			rp_sb_puts(sb, ":");
		}
		rp_sb_puts(sb, " ");
		rp_sb_xml(sb, rp_verdict_ep_name(&mv->eps[e], name, sizeof(name)));
		rp_sb_printf(sb, " at an active MTU of %d in %u pair%s whose other end runs at %d;", mtu[e], n_mm[e],
			     n_mm[e] == 1 ? "" : "s", peer_mtu[e]);
	}
	if (named)
		rp_sb_puts(sb, "</li>\n");
	return named;
}

/* Per endpoint: the pairs with mtu_mismatch it is an end of, its MTU and a peer's. */
static void mtu_count(const struct rp_matrix_view *mv, uint32_t *n_mm, int *mtu, int *peer_mtu)
{
	struct rp_pair_result pr_tmp;
	for (size_t i = 0; i < mv->n; i++) {
		const struct rp_pair_result *r = rp_matrix_view_pair(mv, i, &pr_tmp);
		uint32_t w = r->warnings | (r->reverse.measured ? r->reverse.warnings : 0);

		if (!(w & (1u << RP_WARN_MTU_MISMATCH)))
			continue;
		for (int side = 0; side < 2; side++) {
			uint32_t e = mv->pair_eps[2 * i + side];

			if (e >= mv->n_eps)
				continue;
			n_mm[e]++;
			mtu[e] = side ? r->dst.mtu : r->src.mtu;
			peer_mtu[e] = side ? r->src.mtu : r->dst.mtu;
		}
	}
}

void rp_html_node_warnings(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	const struct rp_matrix_view *mv = lo->mv;
	size_t n_drift = mv->drift ? mv->drift->n_warnings : 0, shown = 0, n = mv->n_eps ? mv->n_eps : 1;
	uint32_t *n_mm = calloc(n, sizeof(*n_mm));
	int *mtu = calloc(n, sizeof(*mtu)), *peer_mtu = calloc(n, sizeof(*peer_mtu));
	bool any_mm = false;

	if (!n_mm || !mtu || !peer_mtu)
		goto out;
	mtu_count(mv, n_mm, mtu, peer_mtu);
	for (size_t e = 0; e < mv->n_eps; e++)
		any_mm |= n_mm[e] != 0;
	if (!n_drift && !any_mm)
		goto out;
	rp_sb_puts(sb, "<h2>Node warnings</h2>\n<ol id=\"node-warnings\">\n");
	for (size_t k = 0; k < n_drift && shown < RP_HTML_LIST_MAX; k++, shown++) {
		const struct rp_drift_warning *dw = &mv->drift->warnings[k];

		rp_sb_printf(sb, "<li class=\"warning\"><b>%s</b> (%s): ", rp_drift_code(), rp_drift_field_str(dw->field));
		rp_sb_xmln(sb, dw->message, sizeof(dw->message));
		rp_sb_puts(sb, "</li>\n");
	}
	for (size_t k = 0; any_mm && k < lo->n_nodes && shown < RP_HTML_LIST_MAX; k++)
		shown += node_mtu_line(lo, sb, k, n_mm, mtu, peer_mtu) > 0;
	rp_sb_puts(sb, "</ol>\n");
	if (shown >= RP_HTML_LIST_MAX)
		rp_sb_puts(sb, "<p>More node warnings are in the JSON report (\"warnings\" and each pair's).</p>\n");
out:
	free(n_mm);
	free(mtu);
	free(peer_mtu);
}

/* One concurrent pair's row: round, pair, rate under load, solo rate, share, status and warnings. */
static void conc_row(const struct rp_matrix_view *mv, struct rp_sb *sb, size_t k)
{
	struct rp_pair_result pr_tmp;
	const struct rp_matrix_conc *mc = mv->conc;
	const struct rp_pair_result *c = &mc->res[k];
	const struct rp_pair_result *solo = mc->solo[k] >= 0 && (size_t)mc->solo[k] < rp_matrix_view_every_n(mv) ?
					    rp_matrix_view_every(mv, (size_t)mc->solo[k], &pr_tmp) : NULL;
	char warn[128];

	rp_sb_printf(sb, "<tr class=\"%s\"><td>%u</td><td>", c->status != RP_ST_OK ? "failure" : c->warnings ? "warning" : "ok",
		     mc->round[k] + 1);
	rp_html_ep(sb, &c->src);
	rp_sb_puts(sb, " &rarr; ");
	rp_html_ep(sb, &c->dst);
	rp_sb_puts(sb, "</td><td>");
	if (c->status == RP_ST_OK)
		rp_html_gbps(sb, 3, c->gbps);
	rp_sb_puts(sb, "</td><td>");
	if (solo && solo->status == RP_ST_OK)
		rp_html_gbps(sb, 3, solo->gbps);
	rp_sb_puts(sb, "</td><td>");
	if (mc->ratio[k] > 0)
		rp_sb_printf(sb, "%.1f%%", 100.0 * mc->ratio[k]);
	rp_sb_puts(sb, "</td><td>");
	if (c->status != RP_ST_OK) {
		rp_sb_printf(sb, "<span class=\"bad\">%s</span> %s: ", rp_status_code(c->status),
			     c->status == RP_ST_NO_PORT ? "not measured" : "under load");
		rp_sb_xmln(sb, c->reason, sizeof(c->reason));
	} else {
		rp_sb_puts(sb, "ok");
	}
	if (c->warnings)
		rp_sb_printf(sb, " <span class=\"warn\">warnings: %s</span>", rp_report_warnings(c->warnings, warn, sizeof(warn)));
	rp_sb_puts(sb, "</td></tr>\n");
}

void rp_html_conc(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	const struct rp_matrix_view *mv = lo->mv;
	const struct rp_matrix_conc *mc = mv->conc;
	bool all;
	size_t shown = 0;

	if (!mc)
		return;
	all = mc->n <= RP_HTML_LIST_MAX;
	rp_sb_printf(sb, "<h2>Concurrent rails</h2>\n<p>Each round's pairs of every rail at once (as NCCL's rings load "
		     "the fabric), against the same pair measured alone; <code>concurrent_drop</code> below %.0f%% of "
		     "solo.%s</p>\n<table class=\"list\" id=\"concurrent-rails\">\n<tr><th>round</th><th>pair</th>"
		     "<th>Gb/s under load</th><th>solo Gb/s</th><th>of solo</th><th>status</th></tr>\n",
		     100.0 * (1.0 - mc->max_drop), all ? "" : " Only the pairs that failed or dropped are listed.");
	for (size_t k = 0; k < mc->n && shown < RP_HTML_LIST_MAX; k++) {
		if (!all && mc->res[k].status == RP_ST_OK && !(mc->res[k].warnings & (1u << RP_WARN_CONCURRENT_DROP)))
			continue;
		conc_row(mv, sb, k);
		shown++;
	}
	rp_sb_puts(sb, "</table>\n");
	if (!mc->n)
		rp_sb_puts(sb, "<p>No concurrent pair was measured.</p>\n");
}

/* A pair that moved data but badly: below the verdict's threshold, lossy or with an interval drop. */
static bool degraded(const struct rp_pair_result *r)
{
	return r->status == RP_ST_BELOW_THRESHOLD ||
	       (r->status == RP_ST_OK && (r->warnings & ((1u << RP_WARN_LOSSY) | (1u << RP_WARN_INTERVAL_DROP))));
}

/* One degraded pair's line. */
static void degraded_line(const struct rp_html_layout *lo, struct rp_sb *sb, size_t i, const struct rp_pair_result *r)
{
	rp_sb_printf(sb, "<li class=\"b%d\"><span class=\"pair\">", rp_html_bin_of(lo->q[i]));
	rp_html_ep(sb, &r->src);
	rp_sb_puts(sb, " &rarr; ");
	rp_html_ep(sb, &r->dst);
	rp_sb_puts(sb, "</span>: ");
	rp_html_gbps(sb, 2, r->gbps);
	if (lo->q[i] <= RP_HTML_Q_MAX)
		rp_sb_printf(sb, " Gb/s, %u%% of the expected rate", lo->q[i]);
	else
		rp_sb_puts(sb, " Gb/s");
	rp_sb_printf(sb, "%s%s%s</li>\n", r->status == RP_ST_BELOW_THRESHOLD ? "; below threshold" : "",
		     (r->warnings >> RP_WARN_LOSSY) & 1u ? "; lossy" : "",
		     (r->warnings >> RP_WARN_INTERVAL_DROP) & 1u ? "; interval drop" : "");
}

/* The degraded pairs an endpoint the verdict takes out of use explains: each one's count and range. */
struct deg_ep {
	size_t n;
	double lo_gbps, hi_gbps;
	uint8_t lo_q, hi_q;           /* shares of the expected rate; > RP_HTML_Q_MAX unknown */
};

/* The endpoint (display position) of pair i that the verdict drains or finds unusable, the source's
 * first; SIZE_MAX when neither (or no verdict). */
static size_t deg_owner(const struct rp_html_layout *lo, size_t i)
{
	const struct rp_verdict *v = lo->mv->verdict;
	size_t ps = rp_html_src_pos(lo, i), pd = rp_html_dst_pos(lo, i);

	if (!v || !v->eps || v->n_eps != lo->n_eps)
		return SIZE_MAX;
	if (v->eps[lo->order[ps]].drain || v->eps[lo->order[ps]].unusable)
		return ps;
	if (v->eps[lo->order[pd]].drain || v->eps[lo->order[pd]].unusable)
		return pd;
	return SIZE_MAX;
}

static void deg_add(struct deg_ep *g, double gbps, uint8_t q)
{
	if (g->n++ == 0) {
		g->lo_gbps = g->hi_gbps = gbps;
		g->lo_q = g->hi_q = q;
		return;
	}
	g->lo_gbps = gbps < g->lo_gbps ? gbps : g->lo_gbps;
	g->hi_gbps = gbps > g->hi_gbps ? gbps : g->hi_gbps;
	g->lo_q = q < g->lo_q ? q : g->lo_q;
	g->hi_q = q > g->hi_q && q <= RP_HTML_Q_MAX ? q : g->hi_q;
}

/* One line for the degraded pairs through endpoint p (display position). */
static void deg_group_line(const struct rp_html_layout *lo, struct rp_sb *sb, size_t p, const struct deg_ep *g)
{
	const struct rp_verdict_ep *ve = &lo->mv->verdict->eps[lo->order[p]];

	rp_sb_printf(sb, "<li class=\"b%d\"><b>", rp_html_bin_of(g->lo_q));
	rp_html_ep(sb, &lo->mv->eps[lo->order[p]]);
	rp_sb_printf(sb, "</b> (%s): %zu pair%s through it at ", ve->drain ? "drained" : "unusable, not drained", g->n,
		     g->n == 1 ? "" : "s");
	rp_html_gbps(sb, 2, g->lo_gbps);
	if (g->hi_gbps > g->lo_gbps) {
		rp_sb_puts(sb, "-");
		rp_html_gbps(sb, 2, g->hi_gbps);
	}
	rp_sb_puts(sb, " Gb/s");
	if (g->lo_q <= RP_HTML_Q_MAX && g->hi_q <= RP_HTML_Q_MAX)
		rp_sb_printf(sb, g->hi_q > g->lo_q ? ", %u-%u%% of the expected rate" : ", %u%% of the expected rate",
			     g->lo_q, g->hi_q);
	rp_sb_puts(sb, "</li>\n");
}

void rp_html_degraded(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	struct rp_pair_result tmp;
	size_t below = 0, lossy = 0, drop = 0, shown = 0, grouped = 0, n_deg = 0, told = 0;
	struct deg_ep *g = calloc(lo->n_eps ? lo->n_eps : 1, sizeof(*g));   /* per display position */

	for (size_t i = 0; i < lo->mv->n; i++) {
		const struct rp_pair_result *r = rp_matrix_view_pair(lo->mv, i, &tmp);
		size_t p;

		below += r->status == RP_ST_BELOW_THRESHOLD;
		lossy += (r->warnings >> RP_WARN_LOSSY) & 1u;
		drop += (r->warnings >> RP_WARN_INTERVAL_DROP) & 1u;
		n_deg += degraded(r);
		if (g && degraded(r) && (p = deg_owner(lo, i)) != SIZE_MAX) {
			deg_add(&g[p], r->gbps, lo->q[i]);
			grouped++;
		}
	}
	rp_sb_printf(sb, "<h2>Degraded links: moved data, but slowly or with losses</h2>\n<div id=\"degraded\"><p>%zu pair%s "
		     "below the verdict's threshold, %zu lossy (retransmissions), %zu with an interval drop.%s</p>\n",
		     below, below == 1 ? "" : "s", lossy, drop,
		     grouped ? " Those through an adapter the verdict takes out of use are one line for it." : "");
	if (n_deg)
		rp_sb_puts(sb, "<ol>\n");
	for (size_t p = 0; g && p < lo->n_eps && shown < RP_HTML_DEGRADED_MAX; p++)
		if (g[p].n) {
			deg_group_line(lo, sb, p, &g[p]);
			shown++;
			told += g[p].n;
		}
	for (size_t i = 0; i < lo->mv->n && shown < RP_HTML_DEGRADED_MAX; i++) {
		const struct rp_pair_result *r = rp_matrix_view_pair(lo->mv, i, &tmp);

		if (!degraded(r) || (g && deg_owner(lo, i) != SIZE_MAX))
			continue;
		degraded_line(lo, sb, i, r);
		shown++;
		told++;
	}
	if (n_deg)
		rp_sb_puts(sb, "</ol>\n");
	if (n_deg > told)
		rp_sb_printf(sb, "<p>and more: the failures and warnings lists, and the JSON report, have every one.</p>\n");
	rp_sb_puts(sb, "</div>\n");
	free(g);
}
