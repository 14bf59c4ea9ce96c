/* report_html_int.h: what the parts of the HTML page share (private to lib/report_html*.c): the
 * display order (nodes and adapters in natural order), the rate each pair is coloured against, the
 * colour scale, and the small writers for endpoints and pair details.
 *
 * The colour of a pair is its share of the expected rate, in percent (q, 0..RP_HTML_Q_MAX): the
 * slower port's link rate when both ports are hardware with a known rate, else the median rate of
 * the pairs measured on the pair's fabric (soft devices such as rxe, whose rate is nominal, or a rate
 * nobody reported). Never the fastest cell: one fast outlier must not paint every other cell red.
 * A link rate also means nothing on a fabric whose median rate is under RP_HTML_NOMINAL_PCT of it (a
 * soft device not marked soft, such as rxe reporting a nominal 10 Gb/s and moving 0.03), or on a pair
 * with the nominal_link_rate warning: those are coloured against the median, and the legend says so. */
#define RP_HTML_NOMINAL_PCT 25
#ifndef RP_REPORT_HTML_INT_H
#define RP_REPORT_HTML_INT_H

#include <stddef.h>
#include <stdint.h>

#include "report/report_html.h"

#define RP_HTML_Q_MAX 250       /* 250% of the expected rate or more */
#define RP_HTML_Q_NA 253        /* moved data, but its rate is not a number (a peer sent NaN) */
#define RP_HTML_Q_FAIL 254      /* moved no data: failed before or during the transfer */
#define RP_HTML_Q_NONE 255      /* not measured */

/* Colour bins: shares at or above min_pct, then the three codes. */
enum { RP_HTML_BIN_RATES = 5, RP_HTML_BIN_FAIL = 5, RP_HTML_BIN_NA = 6, RP_HTML_BIN_NONE = 7, RP_HTML_BINS = 8 };
struct rp_html_bin {
	int min_pct;                /* rate bins only */
	const char *color;          /* "#rrggbb" */
	const char *label;
	bool dark;                  /* white text on it */
};
extern const struct rp_html_bin rp_html_bins[RP_HTML_BINS];
int rp_html_bin_of(uint8_t q);

struct rp_html_layout {
	const struct rp_matrix_view *mv;
	size_t n_eps, n_nodes, max_ad;
	size_t *order;              /* display position -> endpoint number */
	size_t *pos;                /* endpoint number -> display position */
	size_t *node_of;            /* display position -> node number (display order) */
	size_t *node_first;         /* node number -> its first display position; [n_nodes] = n_eps */
	double *link;               /* per endpoint number: its link rate when it counts (hardware, known), else 0 */
	double *median;             /* per endpoint number: the median rate of its fabric, 0 when none moved data */
	uint8_t *q;                 /* per result: share of its expected rate, or an RP_HTML_Q_ code */
	size_t n_by_link, n_by_median;  /* results coloured against each */
	size_t n_fabrics;
	bool by_leaf;                 /* the nodes are ordered by leaf (--topology) */
	double median_lo, median_hi;    /* the fabric medians' range (for the legend) */
	size_t n_nominal;               /* fabrics whose link rate means nothing (see RP_HTML_NOMINAL_PCT) */
	double nominal_median, nominal_link;  /* one of them, for the legend */
	size_t heat_max;                /* the heatmap's cells a side (rp_html_opts.heatmap_nodes) */
	size_t block;                   /* nodes a heatmap cell stands for: 1, or B when aggregated */
	size_t n_nodes_real;            /* the nodes, when n_nodes counts blocks (the aggregated copy) */
};

/* Order, expected rates and shares of mv. 0 or -ENOMEM; rp_html_layout_fini() always. */
int rp_html_layout_init(struct rp_html_layout *lo, const struct rp_matrix_view *mv);
void rp_html_layout_fini(struct rp_html_layout *lo);
/* The rate result i was coloured against (0 unknown). */
double rp_html_expected(const struct rp_html_layout *lo, size_t i);
/* Display position of an endpoint and of a result's ends. */
size_t rp_html_src_pos(const struct rp_html_layout *lo, size_t i);
size_t rp_html_dst_pos(const struct rp_html_layout *lo, size_t i);

/* The plain passes the view counts but does not list (mv->n_unlisted, read from mv->every and
 * mv->every_pair_eps): fn(arg, src display position, dst display position, share) for each, so that a
 * healthy cell is coloured whether or not its pairs are listed. Nothing when the view lists every pair
 * or does not give every pair. */
void rp_html_each_unlisted(const struct rp_html_layout *lo, void (*fn)(void *arg, size_t sp, size_t dp, uint8_t q),
			   void *arg);

/* "node/dev:port" escaped for HTML. */
void rp_html_ep(struct rp_sb *sb, const struct rp_endpoint *ep);
/* A rate with prec decimals, "n/a" when not a number. */
void rp_html_gbps(struct rp_sb *sb, int prec, double v);
/* The port counters that moved around a pair, as plain text (not escaped) into buf: "counters: src
 * completer_retry_err +12 (lossy); dst out_of_seq_request +9, at least duplicate_request +2"; a side
 * whose counters could not be attributed says so. "" when no counter moved on either side and both
 * judged ok (a clean pair says nothing). Returns strlen(buf). */
size_t rp_html_counters_text(const struct rp_pair_result *r, char *buf, size_t size);
#define RP_HTML_CTR_TEXT 768

/* The hover text of a pair (attribute value, escaped). */
void rp_html_pair_detail(const struct rp_html_layout *lo, struct rp_sb *sb, size_t i);

/* The colour legend ("legend"), the endpoint grids ("bw-heatmap", "reach-heatmap", up to
 * RP_HTML_GRID_MAX endpoints), the node heatmap ("node-heatmap", a canvas drawn from embedded data)
 * and the rail view ("rails"). */
void rp_html_pictures(const struct rp_html_layout *lo, struct rp_sb *sb);
/* The embedded data (script "rp-data") the node heatmap is drawn from. */
void rp_html_node_data(const struct rp_html_layout *lo, struct rp_sb *sb);
/* A JSON string (quoted) of at most max bytes of s, safe inside a <script> element: invalid UTF-8 and
 * control characters become '?', < > & are \u escapes. */
void rp_html_json_str(struct rp_sb *sb, const char *s, size_t max);
/* "node-warnings": drift across the endpoints and each node's ports in pairs with mtu_mismatch (only
 * when there is one), and "concurrent-rails": matrix --concurrent-rails's pairs beside their solo
 * figures (only with mv->conc); report_html_warn.c. */
void rp_html_node_warnings(const struct rp_html_layout *lo, struct rp_sb *sb);
void rp_html_conc(const struct rp_html_layout *lo, struct rp_sb *sb);
/* "degraded": the pairs that moved data but below the verdict's threshold, lossy or with an interval
 * drop (counts, then at most RP_HTML_DEGRADED_MAX lines), apart from the failures: a slow link is a
 * line here, not a pixel. The pairs through an adapter the verdict drains or finds unusable are one
 * line for it (their count and range: a slow adapter's thousands are one finding), the others one
 * line each. */
#define RP_HTML_DEGRADED_MAX 100
void rp_html_degraded(const struct rp_html_layout *lo, struct rp_sb *sb);
/* The page's script. */
extern const char rp_html_script[];

#endif
