/* report_html.c: the self-contained HTML page of a matrix: the page, its summary, the failures
 * grouped by cause, the node table and the lists; see report_html.h. The pictures are in
 * report_html_grid.c, their data and script in report_html_data.c and report_html_js.c. */
#include "report/report_html.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/report_html_int.h"

static const char html_style[] =
	"<style>\n"
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\n"
	"h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}h3{font-size:1em}\n"
	"#banner{background:#6a1b9a;color:#fff;font-weight:bold;padding:6px 10px;font-size:1.1em}\n"
	"table.grid{border-collapse:collapse;font-size:11px}\n"
	"table.grid td,table.grid th{border:1px solid #fff;min-width:18px;height:18px;text-align:center;padding:0 2px}\n"
	"table.grid th{background:#f4f4f4;font-weight:normal;white-space:nowrap}\n"
	"td.ok{color:#000}td.fail{background:#7f0000;color:#fff}td.none{background:#eee}td.self{background:#fafafa}\n"
	"td.reach{background:#2e7d32}td.slow{background:#f9a825}td.flaky{background:#9e9d24}\n"
	".flaky,.unconfirmed{color:#8d6e00;font-weight:bold}.confirmed{color:#b71c1c}.warn{color:#8d6e00}\n"
	"table.list{border-collapse:collapse}table.list td,table.list th{border-bottom:1px solid #ddd;padding:2px 8px;text-align:left}\n"
	".bad{color:#b71c1c;font-weight:bold}.good{color:#2e7d32;font-weight:bold}.hint{color:#555;font-size:12px}\n"
	"#detail{position:sticky;top:0;z-index:1;background:#fffde7;border:1px solid #e0d890;padding:4px 8px;min-height:1.4em;"
	"font-family:monospace}\n"
	"#legend{margin:8px 0;font-size:12px}.key{white-space:nowrap;margin-right:10px}"
	".sw{display:inline-block;width:14px;height:14px;vertical-align:middle;margin-right:3px;border:1px solid #999}\n"
	"#causes li{margin:2px 0}.scroll{overflow:auto;max-width:100%}canvas{cursor:crosshair}\n"
	"code{background:#f4f4f4;padding:0 3px}\n";

/* Bin colours as classes b0..b7, from the one table. */
static void bin_style(struct rp_sb *sb)
{
	for (int b = 0; b < RP_HTML_BINS; b++)
		rp_sb_printf(sb, ".b%d,td.b%d{background:%s%s}\n", b, b, rp_html_bins[b].color, rp_html_bins[b].dark ? ";color:#fff" : "");
}

static void page_head(const struct rp_matrix_view *mv, const struct rp_html_opts *opts, struct rp_sb *sb)
{
	rp_sb_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
	if (opts->banner) {
		rp_sb_xml(sb, opts->banner);
		rp_sb_puts(sb, ": ");
	}
	rp_sb_printf(sb, "rdmaprobe matrix, %zu endpoints</title>\n", mv->n_eps);
	rp_sb_puts(sb, html_style);
	bin_style(sb);
	rp_sb_puts(sb, "</style>\n</head>\n<body>\n");
	if (opts->banner) {
		rp_sb_puts(sb, "<p id=\"banner\">");
		rp_sb_xml(sb, opts->banner);
		rp_sb_puts(sb, "</p>\n");
	}
}

static void summary_section(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	struct rp_pair_result pr_tmp;
	const struct rp_matrix_view *mv = lo->mv;
	size_t failed = 0, flaky = 0, unconfirmed = 0, conc_failed = 0;

	for (size_t i = 0; i < mv->n; i++) {
		failed += rp_matrix_view_pair(mv, i, &pr_tmp)->status != RP_ST_OK;
		flaky += rp_matrix_view_pair(mv, i, &pr_tmp)->confirm == RP_CONFIRM_FLAKY;
		unconfirmed += rp_matrix_view_pair(mv, i, &pr_tmp)->confirm == RP_CONFIRM_UNCONFIRMED;
	}
	for (size_t i = 0; mv->conc && i < mv->conc->n; i++)
		conc_failed += mv->conc->res[i].status != RP_ST_OK &&   /* a pair that fails under load fails the run */
			       mv->conc->res[i].status != RP_ST_NO_PORT;  /* (a missing port fails its solo pairs) */
	rp_sb_puts(sb, "<h1>rdmaprobe matrix</h1>\n<p id=\"summary\">");
	rp_sb_printf(sb, "<span class=\"%s\">%s</span>: %zu pairs measured, %zu failed (%zu not confirmed), %zu flaky; ",
		     failed || conc_failed ? "bad" : "good", failed || conc_failed ? "FAIL" : "PASS", mv->n + mv->n_unlisted,
		     failed, unconfirmed, flaky);
	if (mv->n_unlisted) {
		rp_sb_printf(sb, "only the %zu notable pairs are on this page, the %zu plain passes are counted (", mv->n,
			     mv->n_unlisted);
		rp_sb_xml(sb, mv->unlisted_in ? mv->unlisted_in : "not written: --jsonl FILE has every pair");
		rp_sb_puts(sb, "); ");
	}
	if (mv->conc)
		rp_sb_printf(sb, "%zu concurrent rail pairs, %zu failed under load; ", mv->conc->n, conc_failed);
	rp_sb_printf(sb, "%zu endpoints on %zu nodes; round %zu of %zu; pattern <code>", mv->n_eps, lo->n_nodes,
		     mv->rounds_done, mv->n_rounds);
	rp_sb_xml(sb, mv->pattern ? mv->pattern : "");
	rp_sb_printf(sb, "</code>; %.1f s.<br>\n<small>", mv->elapsed_s);
	rp_sb_xml(sb, mv->version ? mv->version : "");
	rp_sb_puts(sb, " &middot; <code>");
	rp_sb_xml(sb, mv->title ? mv->title : "");
	rp_sb_puts(sb, "</code> &middot; <span id=\"load-ms\"></span></small></p>\n");
}

struct sorted_pair {
	size_t src, dst, i;           /* display positions, result number */
};

static int sorted_pair_cmp(const void *a, const void *b)
{
	const struct sorted_pair *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* Result numbers of the failed pairs (failures) or of the passing pairs with something to say (flaky
 * or warned), in display order: sources in natural order, then destinations. NULL when out of memory. */
static size_t *pairs_sorted(const struct rp_html_layout *lo, bool failures, size_t *n_p)
{
	struct rp_pair_result pr_tmp;
	const struct rp_matrix_view *mv = lo->mv;
	struct sorted_pair *sp = malloc((mv->n ? mv->n : 1) * sizeof(*sp));
	size_t *idx = malloc((mv->n ? mv->n : 1) * sizeof(*idx)), n = 0;

	if (!sp || !idx) {
		free(sp);
		free(idx);
		return NULL;
	}
	for (size_t i = 0; i < mv->n; i++) {
		const struct rp_pair_result *r = rp_matrix_view_pair(mv, i, &pr_tmp);
		bool want = failures ? r->status != RP_ST_OK
				     : r->status == RP_ST_OK && (r->confirm == RP_CONFIRM_FLAKY || r->warnings);

		if (want)
			sp[n++] = (struct sorted_pair){ rp_html_src_pos(lo, i), rp_html_dst_pos(lo, i), i };
	}
	qsort(sp, n, sizeof(*sp), sorted_pair_cmp);
	for (size_t k = 0; k < n; k++)
		idx[k] = sp[k].i;
	free(sp);
	*n_p = n;
	return idx;
}

/* The endpoint (display position) involved in the most of the failures not grouped yet (grp[k] ==
 * -1), drained endpoints first; SIZE_MAX when none is involved in two. */
static size_t cause_pick(const struct rp_html_layout *lo, const size_t *cnt)
{
	const struct rp_verdict *v = lo->mv->verdict;
	size_t best = SIZE_MAX;

	for (int drained = 1; drained >= 0 && best == SIZE_MAX; drained--)
		for (size_t p = 0; p < lo->n_eps; p++) {
			bool is_drained = v && v->eps && v->n_eps == lo->n_eps && v->eps[lo->order[p]].drain;

			if (is_drained != (drained == 1) || cnt[p] < (drained ? 1u : 2u))
				continue;
			if (best == SIZE_MAX || cnt[p] > cnt[best])
				best = p;
		}
	return best;
}

/* One group: "All 14 failures involve node113/mlx5_3:1 (drained: why); mostly rtr_refused; with
 * peers on 9 nodes". An endpoint the verdict keeps is said to be kept: at a fabric's scale the
 * endpoints most failures share are often only where random path faults happened to meet. */
static void cause_line(const struct rp_html_layout *lo, struct rp_sb *sb, size_t p, const size_t *fail, const long *grp,
		       size_t n_fail, long g, bool all)
{
	const struct rp_verdict *v = lo->mv->verdict;
	struct rp_pair_result pr_tmp;
	size_t n = 0, by_st[RP_ST_COUNT_] = { 0 }, top = 0;

	for (size_t k = 0; k < n_fail; k++)
		if (grp[k] == g) {
			n++;
			by_st[rp_matrix_view_pair(lo->mv, fail[k], &pr_tmp)->status]++;
		}
	for (int s = 0; s < RP_ST_COUNT_; s++)
		if (by_st[s] > by_st[top])
			top = (size_t)s;
	rp_sb_printf(sb, "<li class=\"cause\">%s%zu failure%s involve%s <b>", all ? "All " : "", n, n == 1 ? "" : "s",
		     n == 1 ? "s" : "");
	rp_html_ep(sb, &lo->mv->eps[lo->order[p]]);
	rp_sb_puts(sb, "</b>");
	const struct rp_verdict_ep *ve = v && v->eps && v->n_eps == lo->n_eps ? &v->eps[lo->order[p]] : NULL;

	if (ve && (ve->drain || ve->unusable)) {
		rp_sb_puts(sb, ve->drain ? " (drained: " : " (unusable, not drained: ");
		rp_sb_xmln(sb, ve->why, sizeof(ve->why));
		rp_sb_puts(sb, ")");
	} else if (ve && ve->ambiguous) {
		/* the endpoint is only what these failures share: the verdict found no fault of its own */
		rp_sb_puts(sb, " (not drained: its failed pairs are path faults that no adapter explains)");
	}
	rp_sb_printf(sb, "; %s %s.</li>\n", by_st[top] == n ? "all" : "mostly", rp_status_code((enum rp_status)top));
}

/* Failures grouped by the endpoint they have in common: the ones the verdict drains first, then
 * greedily the endpoint shared by the most failures still ungrouped. */
static void causes_section(const struct rp_html_layout *lo, struct rp_sb *sb, const size_t *fail, size_t n_fail)
{
	size_t *cnt = calloc(lo->n_eps ? lo->n_eps : 1, sizeof(*cnt)), left = n_fail, groups = 0;
	long *grp = malloc((n_fail ? n_fail : 1) * sizeof(*grp));
	size_t pick[RP_HTML_CAUSES_MAX];

	rp_sb_puts(sb, "<h2>Likely causes</h2>\n<ul id=\"causes\">\n");
	if (!cnt || !grp) {
		rp_sb_puts(sb, "<li>(not grouped: out of memory)</li>\n</ul>\n");
		free(cnt);
		free(grp);
		return;
	}
	for (size_t k = 0; k < n_fail; k++) {
		grp[k] = -1;
		cnt[rp_html_src_pos(lo, fail[k])]++;
		cnt[rp_html_dst_pos(lo, fail[k])]++;
	}
	bool unshared = false;   /* the loop stopped because no endpoint is shared any more */

	while (left && groups < RP_HTML_CAUSES_MAX) {
		size_t p = cause_pick(lo, cnt);

		if (p == SIZE_MAX) {
			unshared = true;
			break;
		}
		for (size_t k = 0; k < n_fail; k++) {
			size_t s = rp_html_src_pos(lo, fail[k]), d = rp_html_dst_pos(lo, fail[k]);

			if (grp[k] != -1 || (s != p && d != p))
				continue;
			grp[k] = (long)groups;
			cnt[s]--;
			cnt[d]--;
			left--;
		}
		pick[groups++] = p;
	}
	for (size_t g = 0; g < groups; g++)
		cause_line(lo, sb, pick[g], fail, grp, n_fail, (long)g, groups == 1 && left == 0);
	if (left && unshared)
		rp_sb_printf(sb, "<li class=\"cause\">%zu other failure%s share%s no endpoint with another: see the list.</li>\n",
			     left, left == 1 ? "" : "s", left == 1 ? "s" : "");
	else if (left)   /* the groups shown are the largest; the rest may share endpoints among themselves */
		rp_sb_printf(sb, "<li class=\"cause\">%zu more failure%s in smaller groups than these %d (the text report groups "
			     "every failure by suspect; the JSON report has each).</li>\n", left, left == 1 ? "" : "s",
			     RP_HTML_CAUSES_MAX);
	if (!n_fail)
		rp_sb_puts(sb, "<li class=\"good\">No failures.</li>\n");
	rp_sb_puts(sb, "</ul>\n");
	free(cnt);
	free(grp);
}

/* The verdict's node of each endpoint number, or NULL without a usable verdict. */
static size_t *verdict_node_of(const struct rp_html_layout *lo)
{
	const struct rp_verdict *v = lo->mv->verdict;
	size_t *vn;

	if (!v || !v->nodes || !v->eps || v->n_eps != lo->n_eps)
		return NULL;
	vn = calloc(lo->n_eps ? lo->n_eps : 1, sizeof(*vn));
	if (!vn)
		return NULL;
	for (size_t k = 0; k < v->n_nodes; k++)
		for (size_t e = v->nodes[k].first_ep; e < v->nodes[k].first_ep + v->nodes[k].n_eps && e < lo->n_eps; e++)
			vn[e] = k;
	return vn;
}

static void node_row(const struct rp_html_layout *lo, struct rp_sb *sb, const struct rp_verdict_node *nd, size_t k)
{
	const struct rp_verdict *v = lo->mv->verdict;
	char name[80];

	rp_sb_puts(sb, "<tr><td>");
	rp_sb_xmln(sb, lo->mv->eps[lo->order[lo->node_first[k]]].node, sizeof(lo->mv->eps[0].node));
	rp_sb_printf(sb, "</td><td>%zu</td><td class=\"%s\">", nd->n_eps, nd->n_drain || nd->n_unusable ? "bad" : "good");
	if (!nd->n_drain && !nd->n_unusable)
		rp_sb_puts(sb, "none");
	for (size_t p = lo->node_first[k]; p < lo->node_first[k + 1]; p++) {
		size_t e = lo->order[p];

		if (!v->eps[e].drain && !v->eps[e].unusable)
			continue;
		/* an unusable adapter is named too, as not drained: out of NCCL_IB_HCA, not at fault */
		rp_sb_printf(sb, "<span class=\"%s\" title=\"", v->eps[e].drain ? "drain" : "unusable");
		rp_sb_xml(sb, v->eps[e].why);
		rp_sb_puts(sb, "\">");
		rp_sb_xml(sb, rp_verdict_ep_name(&lo->mv->eps[e], name, sizeof(name)));
		rp_sb_puts(sb, v->eps[e].drain ? "</span> " : " (unusable, not drained)</span> ");
	}
	rp_sb_puts(sb, "</td><td><code>");
	rp_sb_xml(sb, nd->recommended ? nd->recommended :
		  nd->n_unusable ? "(none: no usable adapter)" : "(none: no adapter passed)");
	rp_sb_puts(sb, "</code></td></tr>\n");
}

/* One row per node in natural order; on large runs (more than 32 nodes) only the nodes with
 * something to drain, and a line for the others. */
#define RP_HTML_SUSPECTS_MAX 50   /* suspects listed on the page; the JSON has every one */

/* The verdict's suspects, most likely first: the components behind the failures (with --topology:
 * adapters, cables, leaves, uplinks, spines; without: adapters, groups failing together, the path
 * faults as one entry), each with its evidence, confidence and whether it drained an adapter. */
static void suspects_section(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	const struct rp_verdict *v = lo->mv->verdict;

	if (!v || !v->n_suspects)
		return;
	rp_sb_printf(sb, "<h2>Suspects</h2>\n<p class=\"hint\">The components behind the failures, most likely first%s. "
		     "Only adapters are drained; switches and links are for the fabric team.</p>\n<ol id=\"suspects\">\n",
		     v->localized ? " (localized with --topology)" : " (no --topology: adapters, groups and path faults only)");
	for (size_t k = 0; k < v->n_suspects && k < RP_HTML_SUSPECTS_MAX; k++) {
		const struct rp_verdict_suspect *x = &v->suspects[k];

		rp_sb_printf(sb, "<li class=\"%s\"><b>%s ", x->drain ? "bad" : "warn", rp_component_str(x->kind));
		rp_sb_xmln(sb, x->name, sizeof(x->name));
		rp_sb_printf(sb, "</b>: %u of %u peer pairs through it failed, confidence %.3f%s: ", x->failed, x->measured,
			     x->confidence, x->drain ? ", drained" : "");
		rp_sb_xmln(sb, x->why, sizeof(x->why));
		rp_sb_puts(sb, "</li>\n");
	}
	if (v->n_suspects > RP_HTML_SUSPECTS_MAX)
		rp_sb_printf(sb, "<li>... and %zu more (the JSON's verdict.suspects)</li>\n", v->n_suspects - RP_HTML_SUSPECTS_MAX);
	rp_sb_puts(sb, "</ol>\n");
}

static void nodes_section(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	const struct rp_verdict *v = lo->mv->verdict;
	size_t *vn = verdict_node_of(lo), shown = 0;
	bool all = lo->n_nodes <= 32;

	if (!vn)
		return;
	rp_sb_puts(sb, "<h2>Nodes</h2>\n<table class=\"list\" id=\"nodes\">\n"
		       "<tr><th>node</th><th>endpoints</th><th>drain</th><th>recommended NCCL_IB_HCA</th></tr>\n");
	for (size_t k = 0; k < lo->n_nodes; k++) {
		const struct rp_verdict_node *nd = &v->nodes[vn[lo->order[lo->node_first[k]]]];

		if (!all && !nd->n_drain && nd->recommended)
			continue;
		node_row(lo, sb, nd, k);
		shown++;
	}
	rp_sb_puts(sb, "</table>\n");
	if (shown < lo->n_nodes)
		rp_sb_printf(sb, "<p>The other %zu nodes have nothing to drain (the JSON report has each one's recommended "
			     "NCCL_IB_HCA).</p>\n", lo->n_nodes - shown);
	free(vn);
}

/* Beside a pair in a list: how it held up on retest, its warnings, the counters that moved and its
 * attempts. */
static void pair_notes(struct rp_sb *sb, const struct rp_pair_result *r)
{
	static const char *const cls[RP_CONFIRM_COUNT_] = { "", "flaky", "confirmed", "unconfirmed", "confirmed" };
	const char *c = rp_report_confirm_text(r->confirm);
	char warn[128], ctr[RP_HTML_CTR_TEXT];

	if (c[0])
		rp_sb_printf(sb, " <span class=\"%s\">(%s)</span>", cls[r->confirm], c);
	if (r->warnings) {
		rp_sb_printf(sb, " <span class=\"warn\">warnings: %s", rp_report_warnings(r->warnings, warn, sizeof(warn)));
		if (r->warnings & (1u << RP_WARN_INTERVAL_DROP) && isfinite(r->gbps_min_at_s))
			rp_sb_printf(sb, " (slowest interval at %.1f s)", r->gbps_min_at_s);
		rp_sb_puts(sb, "</span>");
	}
	if (rp_html_counters_text(r, ctr, sizeof(ctr))) {
		rp_sb_puts(sb, " <span class=\"ctr\">");
		rp_sb_xml(sb, ctr);
		rp_sb_puts(sb, "</span>");
	}
	if (r->n_attempts > 1) {
		rp_sb_puts(sb, "<br><small>");
		rp_report_attempts_xml(sb, r);
		rp_sb_puts(sb, "</small>");
	}
}

static void failures_section(const struct rp_html_layout *lo, struct rp_sb *sb, const size_t *fail, size_t n_fail)
{
	struct rp_pair_result pr_tmp;
	rp_sb_puts(sb, "<h2>Failures</h2>\n<ol id=\"failures\">\n");
	for (size_t k = 0; k < n_fail && k < RP_HTML_LIST_MAX; k++) {
		const struct rp_pair_result *r = rp_matrix_view_pair(lo->mv, fail[k], &pr_tmp);

		rp_sb_puts(sb, "<li class=\"failure\">");
		rp_html_ep(sb, &r->src);
		rp_sb_puts(sb, " &rarr; ");
		rp_html_ep(sb, &r->dst);
		rp_sb_printf(sb, ": <b>%s</b>", rp_status_code(r->status));
		if (r->reason[0]) {
			rp_sb_puts(sb, ": ");
			rp_sb_xmln(sb, r->reason, sizeof(r->reason));
		}
		pair_notes(sb, r);
		rp_sb_puts(sb, "</li>\n");
	}
	rp_sb_puts(sb, "</ol>\n");
	if (n_fail > RP_HTML_LIST_MAX)
		rp_sb_printf(sb, "<p class=\"bad\">and %zu more failures not listed here: the causes above group them all, "
			     "the JSON report has every pair.</p>\n", n_fail - RP_HTML_LIST_MAX);
	if (!n_fail)
		rp_sb_puts(sb, "<p class=\"good\">No failures.</p>\n");
}

/* Pairs that passed with something to say: flaky (failed, then passed on a retest) or warned. */
static void warnings_section(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	struct rp_pair_result pr_tmp;
	size_t n = 0, *w = pairs_sorted(lo, false, &n);

	if (!w || !n) {
		free(w);
		return;
	}
	rp_sb_puts(sb, "<h2>Warnings</h2>\n<ol id=\"warnings\">\n");
	for (size_t k = 0; k < n && k < RP_HTML_LIST_MAX; k++) {
		const struct rp_pair_result *r = rp_matrix_view_pair(lo->mv, w[k], &pr_tmp);

		rp_sb_puts(sb, "<li class=\"warning\">");
		rp_html_ep(sb, &r->src);
		rp_sb_puts(sb, " &rarr; ");
		rp_html_ep(sb, &r->dst);
		rp_sb_puts(sb, ": <b>ok</b>, ");
		rp_html_gbps(sb, 3, r->gbps);
		rp_sb_puts(sb, " Gb/s");
		pair_notes(sb, r);
		rp_sb_puts(sb, "</li>\n");
	}
	rp_sb_puts(sb, "</ol>\n");
	if (n > RP_HTML_LIST_MAX)
		rp_sb_printf(sb, "<p>and %zu more pairs with warnings: the JSON report has every pair.</p>\n", n - RP_HTML_LIST_MAX);
	free(w);
}

void rp_report_html_build_opts(const struct rp_matrix_view *mv, const struct rp_html_opts *opts, struct rp_sb *sb)
{
	static const struct rp_html_opts none = { 0 };
	struct rp_html_layout lo;
	size_t n_fail = 0, *fail = NULL;
	int rc = rp_html_layout_init(&lo, mv);

	if (opts && opts->heatmap_nodes)
		lo.heat_max = opts->heatmap_nodes;

	page_head(mv, opts ? opts : &none, sb);
	if (rc == 0)
		fail = pairs_sorted(&lo, true, &n_fail);
	if (rc != 0 || !fail) {
		rp_sb_printf(sb, "<p class=\"bad\">No report: %s.</p>\n", rc == -EINVAL ? "a pair names an endpoint that is not in the run"
				 : "out of memory");
	} else {
		summary_section(&lo, sb);
		suspects_section(&lo, sb);
		causes_section(&lo, sb, fail, n_fail);
		rp_html_degraded(&lo, sb);
		rp_html_pictures(&lo, sb);
		nodes_section(&lo, sb);
		rp_html_node_warnings(&lo, sb);
		rp_html_conc(&lo, sb);
		failures_section(&lo, sb, fail, n_fail);
		warnings_section(&lo, sb);
	}
	rp_sb_puts(sb, rp_html_script);
	rp_sb_puts(sb, "</body>\n</html>\n");
	free(fail);
	rp_html_layout_fini(&lo);
}

void rp_report_html_build(const struct rp_matrix_view *mv, struct rp_sb *sb)
{
	rp_report_html_build_opts(mv, NULL, sb);
}

int rp_report_html_write(const struct rp_matrix_view *mv, const char *path)
{
	struct rp_sb sb;
	int rc;

	rp_sb_init(&sb);
	rp_report_html_build(mv, &sb);
	rc = rp_sb_write_atomic(&sb, path);
	rp_sb_fini(&sb);
	return rc;
}
