/* report_html_data.c: the node heatmap's embedded data (compact: 2 bytes a node pair, base64, and a
 * sparse list of the node pairs with a problem); see report_html_int.h. */
#include "report/report_html_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* Length of the valid UTF-8 sequence at s (at most max bytes), 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t max)
{
	size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;

	if (n == 0 || n > max || (n == 2 && s[0] < 0xc2) || (n == 4 && s[0] > 0xf4))
		return 0;
	for (size_t k = 1; k < n; k++)
		if ((s[k] & 0xc0) != 0x80)
			return 0;
	if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
	    (n == 4 && s[0] == 0xf0 && s[1] < 0x90) || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

void rp_html_json_str(struct rp_sb *sb, const char *s, size_t max)
{
	char out[520];
	size_t o = 0;

	out[o++] = '"';
	for (size_t i = 0; i < max && s[i]; ) {
		unsigned char c = (unsigned char)s[i];
		size_t n = utf8_len((const unsigned char *)s + i, max - i);

		if (o > sizeof(out) - 16) {
			out[o] = '\0';
			rp_sb_puts(sb, out);
			o = 0;
		}
		if (n == 0 || c < 0x20 || c == 0x7f) {
			out[o++] = '?';
			i++;
		} else if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
			i++;
		} else if (c == '<' || c == '>' || c == '&') {
			o += (size_t)snprintf(out + o, 8, "\\u%04x", c);
			i++;
		} else {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		}
	}
	out[o++] = '"';
	out[o] = '\0';
	rp_sb_puts(sb, out);
}

static void base64(struct rp_sb *sb, const uint8_t *p, size_t n)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char out[4097];
	size_t o = 0;

	rp_sb_puts(sb, "\"");
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);

		out[o++] = t[v >> 18 & 63];
		out[o++] = t[v >> 12 & 63];
		out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? t[v & 63] : '=';
		if (o == sizeof(out) - 1) {
			out[o] = '\0';
			rp_sb_puts(sb, out);
			o = 0;
		}
	}
	out[o] = '\0';
	rp_sb_puts(sb, out);
	rp_sb_puts(sb, "\"");
}

/* Rank of a share for "worst pair": failed lowest, then the lower share, then n/a, then nothing. */
static unsigned q_rank(uint8_t q)
{
	return q == RP_HTML_Q_FAIL ? 0 : q <= RP_HTML_Q_MAX ? 1u + q : q == RP_HTML_Q_NA ? 300 : 301;
}

static uint8_t clamp8(size_t v)
{
	return v > 255 ? 255 : (uint8_t)v;
}

/* Per node pair k = s * N + d: the worst share (c[2k]) and the measured pairs (c[2k+1], capped at
 * 255); cnt[2k], cnt[2k+1]: measured and failed pairs; worst[k]: the worst pair's adapters (src rail
 * << 8 | dst rail). */
struct node_cells {
	uint8_t *c;
	size_t *cnt;
	uint16_t *worst;
};

static void node_cells_fini(struct node_cells *nc)
{
	free(nc->c);
	free(nc->cnt);
	free(nc->worst);
}

struct unlisted_arg {
	const struct rp_html_layout *lo;
	struct node_cells *nc;
};

/* A plain pass the page does not list: counted in its node pair, and its worst when it is. */
static void unlisted_cell(void *arg, size_t sp, size_t dp, uint8_t q)
{
	const struct unlisted_arg *u = arg;
	size_t N = u->lo->n_nodes, s = u->lo->node_of[sp], d = u->lo->node_of[dp], k = s * N + d;

	u->nc->cnt[2 * k]++;
	if (q_rank(q) < q_rank(u->nc->c[2 * k])) {
		u->nc->c[2 * k] = q;
		u->nc->worst[k] = (uint16_t)((sp - u->lo->node_first[s]) << 8 | (dp - u->lo->node_first[d]));
	}
}

static int node_cells_init(const struct rp_html_layout *lo, struct node_cells *nc)
{
	struct rp_pair_result pr_tmp;
	size_t N = lo->n_nodes;

	nc->c = malloc(2 * N * N);
	nc->cnt = calloc(2 * N * N, sizeof(*nc->cnt));
	nc->worst = calloc(N * N, sizeof(*nc->worst));
	if (!nc->c || !nc->cnt || !nc->worst)
		return -1;
	for (size_t k = 0; k < N * N; k++)
		nc->c[2 * k] = RP_HTML_Q_NONE;
	for (size_t i = 0; i < lo->mv->n; i++) {
		size_t sp = rp_html_src_pos(lo, i), dp = rp_html_dst_pos(lo, i);
		size_t s = lo->node_of[sp], d = lo->node_of[dp], k = s * N + d;

		nc->cnt[2 * k]++;
		nc->cnt[2 * k + 1] += rp_matrix_view_pair(lo->mv, i, &pr_tmp)->status != RP_ST_OK;
		if (q_rank(lo->q[i]) < q_rank(nc->c[2 * k])) {
			nc->c[2 * k] = lo->q[i];
			nc->worst[k] = (uint16_t)((sp - lo->node_first[s]) << 8 | (dp - lo->node_first[d]));
		}
	}
	rp_html_each_unlisted(lo, unlisted_cell, &(struct unlisted_arg){ lo, nc });
	for (size_t k = 0; k < N * N; k++)
		nc->c[2 * k + 1] = clamp8(nc->cnt[2 * k]);
	return 0;
}

/* A node pair worth a closer look: a failed pair, or its worst pair under the top colour bin. */
static bool cell_problem(const struct node_cells *nc, size_t k)
{
	return nc->cnt[2 * k] && (nc->cnt[2 * k + 1] || rp_html_bin_of(nc->c[2 * k]) != 0);
}

/* "cx": [cell, failed pairs, worst src rail, worst dst rail, ...] of the first RP_HTML_CELLS_MAX
 * problem cells; "cx_all": how many there are. */
static void node_problems(const struct rp_html_layout *lo, struct rp_sb *sb, const struct node_cells *nc)
{
	size_t N = lo->n_nodes, n = 0;

	rp_sb_puts(sb, ",\"cx\":[");
	for (size_t k = 0; k < N * N; k++) {
		if (!cell_problem(nc, k))
			continue;
		if (n < RP_HTML_CELLS_MAX)
			rp_sb_printf(sb, "%s%zu,%zu,%u,%u", n ? "," : "", k, nc->cnt[2 * k + 1], nc->worst[k] >> 8,
				     nc->worst[k] & 255u);
		n++;
	}
	rp_sb_printf(sb, "],\"cx_all\":%zu", n);
}

static size_t n_ad(const struct rp_html_layout *lo, size_t k)
{
	return lo->node_first[k + 1] - lo->node_first[k];
}

struct detail_arg {
	const struct rp_html_layout *lo;
	const uint32_t *off;
	uint8_t *dp;
};

static void unlisted_detail(void *arg, size_t sp, size_t dq, uint8_t q)
{
	const struct detail_arg *a = arg;
	const struct rp_html_layout *lo = a->lo;
	size_t N = lo->n_nodes, s = lo->node_of[sp], d = lo->node_of[dq], k = s * N + d;

	if (a->off[k] != UINT32_MAX)
		a->dp[a->off[k] + (sp - lo->node_first[s]) * n_ad(lo, d) + (dq - lo->node_first[d])] = q;
}

/* The node pairs whose adapter pairs are embedded (every one when they fit; else those with a failed
 * or slow pair, in order, until RP_HTML_DETAIL_MAX), as "dc" and "dp". */
static void node_detail(const struct rp_html_layout *lo, struct rp_sb *sb, const struct node_cells *nc)
{
	size_t N = lo->n_nodes, total = 0, n_dc = 0, need = 0;
	uint32_t *off = malloc(N * N * sizeof(*off));
	uint8_t *dp;
	bool all;

	if (!off) {
		rp_sb_puts(sb, ",\"dc\":[],\"dp\":\"\"");
		return;
	}
	for (size_t k = 0; k < N * N; k++)
		need += nc->cnt[2 * k] ? n_ad(lo, k / N) * n_ad(lo, k % N) : 0;
	all = need <= RP_HTML_DETAIL_MAX;
	rp_sb_puts(sb, ",\"dc\":[");
	for (size_t k = 0; k < N * N; k++) {
		size_t sz = n_ad(lo, k / N) * n_ad(lo, k % N);
		bool want = nc->cnt[2 * k] && (all || cell_problem(nc, k));

		off[k] = UINT32_MAX;
		if (!want || total + sz > RP_HTML_DETAIL_MAX)
			continue;
		off[k] = (uint32_t)total;
		total += sz;
		rp_sb_printf(sb, "%s%zu", n_dc++ ? "," : "", k);
	}
	rp_sb_puts(sb, "]");
	dp = malloc(total ? total : 1);
	if (!dp) {
		rp_sb_puts(sb, ",\"dp\":\"\"");
		free(off);
		return;
	}
	memset(dp, RP_HTML_Q_NONE, total);
	for (size_t i = 0; i < lo->mv->n; i++) {
		size_t sp = rp_html_src_pos(lo, i), dq = rp_html_dst_pos(lo, i);
		size_t s = lo->node_of[sp], d = lo->node_of[dq], k = s * N + d;

		if (off[k] != UINT32_MAX)
			dp[off[k] + (sp - lo->node_first[s]) * n_ad(lo, d) + (dq - lo->node_first[d])] = lo->q[i];
	}
	rp_html_each_unlisted(lo, unlisted_detail, &(struct detail_arg){ lo, off, dp });
	rp_sb_puts(sb, ",\"dp\":");
	base64(sb, dp, total);
	free(dp);
	free(off);
}

static void problem_pair(const struct rp_html_layout *lo, struct rp_sb *sb, size_t i, bool first)
{
	struct rp_pair_result pr_tmp;
	const struct rp_pair_result *r = rp_matrix_view_pair(lo->mv, i, &pr_tmp);

	rp_sb_printf(sb, "%s[%zu,%zu,%d,%d,%u,%u,", first ? "" : ",", rp_html_src_pos(lo, i), rp_html_dst_pos(lo, i),
		     (int)r->status, (int)r->confirm, r->warnings, r->n_attempts);
	if (isfinite(r->gbps))
		rp_sb_printf(sb, "%.3f,", r->gbps);
	else
		rp_sb_puts(sb, "null,");
	rp_html_json_str(sb, r->reason, sizeof(r->reason));
	rp_sb_puts(sb, ",");
	{
		char ctr[RP_HTML_CTR_TEXT];

		rp_html_counters_text(r, ctr, sizeof(ctr));
		rp_html_json_str(sb, ctr, sizeof(ctr));
	}
	if (r->reverse.measured) {
		/* --bidir: the reverse direction's own status and rate (its warnings are in the reason or
		 * beside the forward's) */
		rp_sb_printf(sb, ",[%d,", (int)r->reverse.status);
		if (isfinite(r->reverse.gbps))
			rp_sb_printf(sb, "%.3f,%u]", r->reverse.gbps, r->reverse.warnings);
		else
			rp_sb_printf(sb, "null,%u]", r->reverse.warnings);
	}
	rp_sb_puts(sb, "]");
}

/* Failed pairs first, then passing pairs with warnings, at most RP_HTML_PROBLEM_MAX. */
static void problem_pairs(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	struct rp_pair_result pr_tmp;
	size_t n = 0, all = 0;

	rp_sb_puts(sb, ",\"pp\":[");
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < lo->mv->n; i++) {
			const struct rp_pair_result *r = rp_matrix_view_pair(lo->mv, i, &pr_tmp);
			uint32_t w = r->warnings | (r->reverse.measured ? r->reverse.warnings : 0);
			bool want = pass == 0 ? r->status != RP_ST_OK
					      : r->status == RP_ST_OK && (w || r->confirm != RP_CONFIRM_NONE);

			if (!want)
				continue;
			all++;
			if (n < RP_HTML_PROBLEM_MAX)
				problem_pair(lo, sb, i, n++ == 0);
		}
	rp_sb_printf(sb, "],\"pp_all\":%zu", all);
}

static void names(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	const struct rp_endpoint *eps = lo->mv->eps;
	const struct rp_verdict *v = lo->mv->verdict;
	char buf[2 * RP_NAME_MAX + 16];

	rp_sb_puts(sb, "\"nodes\":[");
	for (size_t k = 0; k < lo->n_nodes; k++) {
		const char *a = eps[lo->order[lo->node_first[k]]].node, *b = eps[lo->order[lo->node_first[k + 1] - 1]].node;
		char label[2 * sizeof(eps[0].node) + 4];

		rp_sb_puts(sb, k ? "," : "");
		if (lo->block > 1 && strcmp(a, b) != 0)   /* a block of nodes: its first and last */
			snprintf(label, sizeof(label), "%.*s..%.*s", (int)sizeof(eps[0].node), a, (int)sizeof(eps[0].node), b);
		else
			snprintf(label, sizeof(label), "%.*s", (int)sizeof(eps[0].node), a);
		rp_html_json_str(sb, label, sizeof(label));
	}
	rp_sb_puts(sb, "],\"ad\":[");
	for (size_t k = 0; k < lo->n_nodes; k++) {
		rp_sb_puts(sb, k ? ",[" : "[");
		for (size_t p = lo->node_first[k]; p < lo->node_first[k + 1]; p++) {
			const struct rp_endpoint *ep = &eps[lo->order[p]];

			rp_sb_puts(sb, p > lo->node_first[k] ? "," : "");
			if (lo->block > 1)   /* a block's adapters are on several nodes: named whole */
				snprintf(buf, sizeof(buf), "%s/%s:%d", ep->node, ep->device, ep->port);
			else
				rp_verdict_ep_name(ep, buf, sizeof(buf));
			rp_html_json_str(sb, buf, sizeof(buf));
		}
		rp_sb_puts(sb, "]");
	}
	rp_sb_puts(sb, "],\"dn\":[");
	for (size_t k = 0, n = 0; k < lo->n_nodes; k++)
		for (size_t p = lo->node_first[k]; p < lo->node_first[k + 1]; p++)
			if (v && v->eps && v->n_eps == lo->n_eps && v->eps[lo->order[p]].drain) {
				rp_sb_printf(sb, "%s%zu", n++ ? "," : "", k);
				break;
			}
	rp_sb_puts(sb, "],\"link\":[");
	for (size_t p = 0; p < lo->n_eps; p++)
		rp_sb_printf(sb, "%s%.6g", p ? "," : "", lo->link[lo->order[p]]);
	rp_sb_puts(sb, "],\"med\":[");
	for (size_t p = 0; p < lo->n_eps; p++)
		rp_sb_printf(sb, "%s%.6g", p ? "," : "", lo->median[lo->order[p]]);
	rp_sb_puts(sb, "]");
}

static void codes(struct rp_sb *sb)
{
	rp_sb_puts(sb, ",\"st\":[");
	for (int s = 0; s < RP_ST_COUNT_; s++)
		rp_sb_printf(sb, "%s\"%s\"", s ? "," : "", rp_status_code((enum rp_status)s));
	rp_sb_puts(sb, "],\"cf\":[");
	for (int c = 0; c < RP_CONFIRM_COUNT_; c++)
		rp_sb_printf(sb, "%s\"%s\"", c ? "," : "", rp_confirm_code((enum rp_confirm)c));
	rp_sb_puts(sb, "],\"wn\":[");
	for (int w = 0; w < RP_WARN_COUNT_; w++)
		rp_sb_printf(sb, "%s\"%s\"", w ? "," : "", rp_pair_warning_code((enum rp_pair_warning)w));
	rp_sb_puts(sb, "],\"bins\":[");
	for (int b = 0; b < RP_HTML_BINS; b++)
		rp_sb_printf(sb, "%s[\"%s\",%d,%d]", b ? "," : "", rp_html_bins[b].color, rp_html_bins[b].min_pct,
			     rp_html_bins[b].dark);
	rp_sb_printf(sb, "],\"qmax\":%d", RP_HTML_Q_MAX);
}

void rp_html_node_data(const struct rp_html_layout *lo, struct rp_sb *sb)
{
	struct node_cells nc = { 0 };

	if (node_cells_init(lo, &nc) != 0) {
		rp_sb_puts(sb, "<p>(no node heatmap: out of memory)</p>\n");
		node_cells_fini(&nc);
		return;
	}
	rp_sb_puts(sb, "<script type=\"application/json\" id=\"rp-data\">{");
	names(lo, sb);
	codes(sb);
	rp_sb_puts(sb, ",\"cells\":");
	base64(sb, nc.c, 2 * lo->n_nodes * lo->n_nodes);
	node_problems(lo, sb, &nc);
	node_detail(lo, sb, &nc);
	problem_pairs(lo, sb);
	rp_sb_puts(sb, "}</script>\n");
	node_cells_fini(&nc);
}
