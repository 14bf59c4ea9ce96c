/* report_html.c: the self-contained HTML page of a matrix; see report_html.h. */
#include "report_html.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char html_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>rdmaprobe matrix</title>\n"
	"<style>\n"
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\n"
	"h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}\n"
	"table.grid{border-collapse:collapse;font-size:11px}\n"
	"table.grid td,table.grid th{border:1px solid #fff;min-width:18px;height:18px;text-align:center;padding:0 2px}\n"
	"table.grid th{background:#f4f4f4;font-weight:normal;white-space:nowrap}\n"
	"td.ok{color:#000}td.fail{background:#b71c1c;color:#fff}td.none{background:#eee}td.self{background:#fafafa}\n"
	"td.reach{background:#2e7d32}td.slow{background:#f9a825}td.flaky{background:#9e9d24}\n"
	".flaky,.unconfirmed{color:#8d6e00;font-weight:bold}.confirmed{color:#b71c1c}.warn{color:#8d6e00}\n"
	"table.list{border-collapse:collapse}table.list td,table.list th{border-bottom:1px solid #ddd;padding:2px 8px;text-align:left}\n"
	".bad{color:#b71c1c;font-weight:bold}.good{color:#2e7d32;font-weight:bold}\n"
	"#detail{position:sticky;top:0;background:#fffde7;border:1px solid #e0d890;padding:4px 8px;min-height:1.4em;font-family:monospace}\n"
	"code{background:#f4f4f4;padding:0 3px}\n"
	"</style>\n</head>\n<body>\n";

static const char html_tail[] =
	"<script>\n"
	"(function(){var d=document.getElementById('detail');document.body.setAttribute('data-ready','1');\n"
	"function show(e){var t=e.target;if(t&&t.getAttribute&&t.getAttribute('data-d')){d.textContent=t.getAttribute('data-d');}}\n"
	"var g=document.querySelectorAll('table.grid');for(var i=0;i<g.length;i++){g[i].addEventListener('mouseover',show);}\n"
	"})();\n"
	"</script>\n</body>\n</html>\n";

/* "node/dev:port" escaped. */
static void ep_html(struct rp_sb *sb, const struct rp_endpoint *ep)
{
	rp_sb_xmln(sb, ep->node, sizeof(ep->node));
	rp_sb_puts(sb, "/");
	rp_sb_xmln(sb, ep->device, sizeof(ep->device));
	rp_sb_printf(sb, ":%d", ep->port);
}

/* A rate with prec decimals, "n/a" when it is not a number (NaN from a peer). */
static void gbps_html(struct rp_sb *sb, int prec, double v)
{
	if (isfinite(v))
		rp_sb_printf(sb, "%.*f", prec, v);
	else
		rp_sb_puts(sb, "n/a");
}

/* A rate to colour and compare by: 0 when it is not a number. */
static double rate_of(double v)
{
	return isfinite(v) && v > 0 ? v : 0;
}

/* The confirm text and the warnings of a pair, escaped, each after "; " (plain text, for attributes). */
static void verdict_text(struct rp_sb *sb, const struct rp_pair_result *r)
{
	char warn[128];
	const char *c = rp_report_confirm_text(r->confirm);

	if (c[0])
		rp_sb_printf(sb, "; %s", c);
	if (r->warnings) {
		rp_sb_printf(sb, "; warnings: %s", rp_report_warnings(r->warnings, warn, sizeof(warn)));
		if (r->warnings & (1u << RP_PW_INTERVAL_DROP) && isfinite(r->gbps_min_at_s))
			rp_sb_printf(sb, " (slowest interval at %.1f s)", r->gbps_min_at_s);
	}
	if (r->n_attempts > 1) {
		rp_sb_puts(sb, "; ");
		rp_report_attempts_xml(sb, r);
	}
}

/* The detail text of a pair (hover) into an attribute value. */
static void pair_detail(struct rp_sb *sb, const struct rp_pair_result *r)
{
	ep_html(sb, &r->src);
	rp_sb_puts(sb, " -&gt; ");
	ep_html(sb, &r->dst);
	rp_sb_printf(sb, ": %s, ", rp_status_code(r->status));
	gbps_html(sb, 3, r->gbps);
	rp_sb_puts(sb, " Gb/s (slowest interval ");
	gbps_html(sb, 3, r->gbps_min);
	rp_sb_printf(sb, "), %s", r->verified ? "verified" : "not verified");
	if (r->lat.measured && isfinite(r->lat.median_us))
		rp_sb_printf(sb, ", latency median %.2f us", r->lat.median_us);
	if (r->reason[0]) {
		rp_sb_puts(sb, ": ");
		rp_sb_xmln(sb, r->reason, sizeof(r->reason));
	}
	verdict_text(sb, r);
}

/* Open a bandwidth cell coloured by its rate relative to the best rate: red (0) to green (best). */
static void bw_cell(struct rp_sb *sb, double gbps, double best)
{
	double f = best > 0 ? rate_of(gbps) / best : 0;

	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	rp_sb_printf(sb, "<td class=\"ok\" style=\"background:hsl(%d,70%%,%d%%)\"", (int)(f * 120), 45 + (int)(f * 10));
}

static void summary_section(const struct rp_matrix_view *mv, struct rp_sb *sb)
{
	size_t failed = 0, flaky = 0, unconfirmed = 0;

	for (size_t i = 0; i < mv->n; i++) {
		failed += mv->res[i].status != RP_ST_OK;
		flaky += mv->res[i].confirm == RP_CONFIRM_FLAKY;
		unconfirmed += mv->res[i].confirm == RP_CONFIRM_UNCONFIRMED;
	}
	rp_sb_puts(sb, "<h1>rdmaprobe matrix</h1>\n<p id=\"summary\">");
	rp_sb_printf(sb, "<span class=\"%s\">%s</span>: %zu pairs measured, %zu failed (%zu not confirmed), %zu flaky; "
		     "%zu endpoints; round %zu of %zu; pattern <code>", failed ? "bad" : "good", failed ? "FAIL" : "PASS",
		     mv->n, failed, unconfirmed, flaky, mv->n_eps, mv->rounds_done, mv->n_rounds);
	rp_sb_xml(sb, mv->pattern ? mv->pattern : "");
	rp_sb_printf(sb, "</code>; %.1f s.<br>\n<small>", mv->elapsed_s);
	rp_sb_xml(sb, mv->version ? mv->version : "");
	rp_sb_puts(sb, " &middot; <code>");
	rp_sb_xml(sb, mv->title ? mv->title : "");
	rp_sb_puts(sb, "</code></small></p>\n");
}

static void nodes_section(const struct rp_matrix_view *mv, struct rp_sb *sb)
{
	char name[80];

	if (!mv->verdict)
		return;
	rp_sb_puts(sb, "<h2>Nodes</h2>\n<table class=\"list\" id=\"nodes\">\n"
		       "<tr><th>node</th><th>endpoints</th><th>drain</th><th>recommended NCCL_IB_HCA</th></tr>\n");
	for (size_t k = 0; k < mv->verdict->n_nodes; k++) {
		const struct rp_verdict_node *nd = &mv->verdict->nodes[k];

		rp_sb_puts(sb, "<tr><td>");
		rp_sb_xml(sb, mv->eps[nd->first_ep].node);
		rp_sb_printf(sb, "</td><td>%zu</td><td class=\"%s\">", nd->n_eps, nd->n_drain ? "bad" : "good");
		if (!nd->n_drain)
			rp_sb_puts(sb, "none");
		for (size_t e = nd->first_ep; e < nd->first_ep + nd->n_eps; e++) {
			if (!mv->verdict->eps[e].drain)
				continue;
			rp_sb_puts(sb, "<span class=\"drain\" title=\"");
			rp_sb_xml(sb, mv->verdict->eps[e].why);
			rp_sb_puts(sb, "\">");
			rp_sb_xml(sb, rp_verdict_ep_name(&mv->eps[e], name, sizeof(name)));
			rp_sb_puts(sb, "</span> ");
		}
		rp_sb_puts(sb, "</td><td><code>");
		rp_sb_xml(sb, nd->recommended ? nd->recommended : "(none: no adapter passed)");
		rp_sb_puts(sb, "</code></td></tr>\n");
	}
	rp_sb_puts(sb, "</table>\n");
}

/* Endpoint-by-endpoint grids; idx[s * E + d] = result number or -1. */
static void ep_grids(const struct rp_matrix_view *mv, struct rp_sb *sb, const int32_t *idx, double best)
{
	size_t n = mv->n_eps;

	for (int reach = 0; reach < 2; reach++) {
		rp_sb_printf(sb, "<h2>%s (rows write into columns)</h2>\n<table class=\"grid\" id=\"%s\">\n<tr><th></th>",
			     reach ? "Reachability" : "Bandwidth, Gb/s", reach ? "reach-heatmap" : "bw-heatmap");
		for (size_t d = 0; d < n; d++) {
			rp_sb_puts(sb, "<th title=\"");
			ep_html(sb, &mv->eps[d]);
			rp_sb_printf(sb, "\">%zu</th>", d);
		}
		rp_sb_puts(sb, "</tr>\n");
		for (size_t s = 0; s < n; s++) {
			rp_sb_printf(sb, "<tr><th>%zu ", s);
			ep_html(sb, &mv->eps[s]);
			rp_sb_puts(sb, "</th>");
			for (size_t d = 0; d < n; d++) {
				int32_t i = idx[s * n + d];
				const struct rp_pair_result *r = i >= 0 ? &mv->res[i] : NULL;

				if (!r) {
					rp_sb_printf(sb, "<td class=\"%s\"></td>", s == d ? "self" : "none");
					continue;
				}
				bool moved = r->status == RP_ST_OK || r->status == RP_ST_BELOW_THRESHOLD;

				if (reach)
					rp_sb_printf(sb, "<td class=\"%s\"", !moved ? "fail" : r->status != RP_ST_OK ? "slow" :
						     r->confirm == RP_CONFIRM_FLAKY ? "flaky" : "reach");
				else if (moved)
					bw_cell(sb, r->gbps, best);
				else
					rp_sb_puts(sb, "<td class=\"fail\"");
				rp_sb_puts(sb, " data-d=\"");
				pair_detail(sb, r);
				rp_sb_puts(sb, "\">");
				if (reach)
					rp_sb_puts(sb, moved ? "&#10003;" : "&#10007;");
				else if (moved)
					gbps_html(sb, rate_of(r->gbps) < 10 ? 2 : 0, r->gbps);
				else
					rp_sb_puts(sb, "&#10007;");
				rp_sb_puts(sb, "</td>");
			}
			rp_sb_puts(sb, "</tr>\n");
		}
		rp_sb_puts(sb, "</table>\n");
	}
}

struct node_cell {
	double min_gbps;
	uint32_t pairs, failed;
};

/* Node-by-node grids for large runs: slowest rate and failures between two nodes. */
static void node_grids(const struct rp_matrix_view *mv, struct rp_sb *sb, size_t n_nodes, const size_t *ep_node,
		       const size_t *node_first, double best)
{
	struct node_cell *c = calloc(n_nodes * n_nodes, sizeof(*c));

	if (!c) {
		rp_sb_puts(sb, "<p>(no heatmap: out of memory)</p>\n");
		return;
	}
	for (size_t i = 0; i < mv->n; i++) {
		struct node_cell *x = &c[ep_node[mv->pair_eps[2 * i]] * n_nodes + ep_node[mv->pair_eps[2 * i + 1]]];
		const struct rp_pair_result *r = &mv->res[i];

		if (x->pairs == 0 || rate_of(r->gbps) < x->min_gbps)
			x->min_gbps = rate_of(r->gbps);
		x->pairs++;
		x->failed += r->status != RP_ST_OK;
	}
	for (int reach = 0; reach < 2; reach++) {
		rp_sb_printf(sb, "<h2>%s, node by node (rows write into columns)</h2>\n<table class=\"grid\" id=\"%s\">\n",
			     reach ? "Failed pairs" : "Slowest pair, Gb/s", reach ? "reach-heatmap" : "bw-heatmap");
		for (size_t s = 0; s < n_nodes; s++) {
			rp_sb_puts(sb, "<tr><th>");
			rp_sb_xmln(sb, mv->eps[node_first[s]].node, sizeof(mv->eps[0].node));
			rp_sb_puts(sb, "</th>");
			for (size_t d = 0; d < n_nodes; d++) {
				struct node_cell *x = &c[s * n_nodes + d];

				if (!x->pairs) {
					rp_sb_puts(sb, "<td class=\"none\"></td>");
					continue;
				}
				if (reach)
					rp_sb_printf(sb, "<td class=\"%s\"", x->failed ? "fail" : "reach");
				else
					bw_cell(sb, x->min_gbps, best);
				rp_sb_puts(sb, " data-d=\"");
				rp_sb_xmln(sb, mv->eps[node_first[s]].node, sizeof(mv->eps[0].node));
				rp_sb_puts(sb, " -&gt; ");
				rp_sb_xmln(sb, mv->eps[node_first[d]].node, sizeof(mv->eps[0].node));
				rp_sb_printf(sb, ": %u pairs, %u failed, slowest %.3f Gb/s\">", x->pairs, x->failed, x->min_gbps);
				if (reach)
					rp_sb_printf(sb, "%u", x->failed);
				else
					rp_sb_printf(sb, "%.0f", x->min_gbps);
				rp_sb_puts(sb, "</td>");
			}
			rp_sb_puts(sb, "</tr>\n");
		}
		rp_sb_puts(sb, "</table>\n");
	}
	free(c);
}

static void grids_section(const struct rp_matrix_view *mv, struct rp_sb *sb)
{
	size_t n = mv->n_eps, n_nodes = 0;
	double best = 0;
	size_t *ep_node = calloc(n ? n : 1, sizeof(*ep_node)), *node_first = calloc(n ? n : 1, sizeof(*node_first));

	if (!ep_node || !node_first)
		goto out;
	for (size_t e = 0; e < n; e++) {
		if (e == 0 || strncmp(mv->eps[e].node, mv->eps[e - 1].node, sizeof(mv->eps[e].node)) != 0)
			node_first[n_nodes++] = e;
		ep_node[e] = n_nodes - 1;
	}
	for (size_t i = 0; i < mv->n; i++)
		if (rate_of(mv->res[i].gbps) > best)
			best = rate_of(mv->res[i].gbps);
	rp_sb_puts(sb, "<div id=\"detail\">hover over a cell for details</div>\n");
	if (n <= RP_HTML_GRID_MAX) {
		int32_t *idx = malloc(n * n * sizeof(*idx) + 1);

		if (!idx)
			goto out;
		memset(idx, 0xff, n * n * sizeof(*idx));
		for (size_t i = 0; i < mv->n; i++)
			idx[mv->pair_eps[2 * i] * n + mv->pair_eps[2 * i + 1]] = (int32_t)i;
		ep_grids(mv, sb, idx, best);
		free(idx);
	} else if (n_nodes <= RP_HTML_GRID_MAX) {
		node_grids(mv, sb, n_nodes, ep_node, node_first, best);
	} else {
		rp_sb_printf(sb, "<p>No heatmap: %zu nodes is more than a page can show; see the node table and the failures.</p>\n",
			     n_nodes);
	}
out:
	free(ep_node);
	free(node_first);
}

/* Beside a pair in a list: how it held up on retest, its warnings and its attempts. */
static void pair_notes(struct rp_sb *sb, const struct rp_pair_result *r)
{
	static const char *const cls[RP_CONFIRM_COUNT_] = { "", "flaky", "confirmed", "unconfirmed" };
	const char *c = rp_report_confirm_text(r->confirm);
	char warn[128];

	if (c[0])
		rp_sb_printf(sb, " <span class=\"%s\">(%s)</span>", cls[r->confirm], c);
	if (r->warnings) {
		rp_sb_printf(sb, " <span class=\"warn\">warnings: %s", rp_report_warnings(r->warnings, warn, sizeof(warn)));
		if (r->warnings & (1u << RP_PW_INTERVAL_DROP) && isfinite(r->gbps_min_at_s))
			rp_sb_printf(sb, " (slowest interval at %.1f s)", r->gbps_min_at_s);
		rp_sb_puts(sb, "</span>");
	}
	if (r->n_attempts > 1) {
		rp_sb_puts(sb, "<br><small>");
		rp_report_attempts_xml(sb, r);
		rp_sb_puts(sb, "</small>");
	}
}

static void failures_section(const struct rp_matrix_view *mv, struct rp_sb *sb)
{
	size_t failed = 0;

	rp_sb_puts(sb, "<h2>Failures</h2>\n<ol id=\"failures\">\n");
	for (size_t i = 0; i < mv->n; i++) {
		const struct rp_pair_result *r = &mv->res[i];

		if (r->status == RP_ST_OK)
			continue;
		failed++;
		rp_sb_puts(sb, "<li class=\"failure\">");
		ep_html(sb, &r->src);
		rp_sb_puts(sb, " &rarr; ");
		ep_html(sb, &r->dst);
		rp_sb_printf(sb, ": <b>%s</b>", rp_status_code(r->status));
		if (r->reason[0]) {
			rp_sb_puts(sb, ": ");
			rp_sb_xmln(sb, r->reason, sizeof(r->reason));
		}
		pair_notes(sb, r);
		rp_sb_puts(sb, "</li>\n");
	}
	rp_sb_puts(sb, "</ol>\n");
	if (!failed)
		rp_sb_puts(sb, "<p class=\"good\">No failures.</p>\n");
}

/* Pairs that passed with something to say: flaky (failed, then passed on a retest) or warned. */
static void warnings_section(const struct rp_matrix_view *mv, struct rp_sb *sb)
{
	size_t n = 0;

	for (size_t i = 0; i < mv->n; i++) {
		const struct rp_pair_result *r = &mv->res[i];

		if (r->status != RP_ST_OK || (r->confirm != RP_CONFIRM_FLAKY && !r->warnings))
			continue;
		if (n++ == 0)
			rp_sb_puts(sb, "<h2>Warnings</h2>\n<ol id=\"warnings\">\n");
		rp_sb_puts(sb, "<li class=\"warning\">");
		ep_html(sb, &r->src);
		rp_sb_puts(sb, " &rarr; ");
		ep_html(sb, &r->dst);
		rp_sb_puts(sb, ": <b>ok</b>, ");
		gbps_html(sb, 3, r->gbps);
		rp_sb_puts(sb, " Gb/s");
		pair_notes(sb, r);
		rp_sb_puts(sb, "</li>\n");
	}
	if (n)
		rp_sb_puts(sb, "</ol>\n");
}

void rp_report_html_build(const struct rp_matrix_view *mv, struct rp_sb *sb)
{
	rp_sb_puts(sb, html_head);
	summary_section(mv, sb);
	nodes_section(mv, sb);
	failures_section(mv, sb);
	warnings_section(mv, sb);
	grids_section(mv, sb);
	rp_sb_puts(sb, html_tail);
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
