/* report_html.h: the matrix as one self-contained HTML page (inline CSS, JS and data; nothing fetched)
 * that reads at any size.
 *
 * Sections, each with an id tests and users can rely on: "summary"; "causes" (failures grouped by
 * the endpoint they have in common: drained endpoints first, then the endpoint shared by the most
 * failures: "All 14 failures involve node113/mlx5_3:1"); "legend" (the colour scale); "bw-heatmap" and
 * "reach-heatmap" (endpoint by endpoint tables, up to RP_HTML_GRID_MAX endpoints, hover details);
 * "node-heatmap" (a <canvas> of node by node cells, the worst pair of each, drawn by the page's
 * script from compact embedded data, hover for the cell and click for its adapter pairs: when there
 * is more than one node and either more than one adapter on a node or too many endpoints for the
 * tables; past RP_HTML_HEATMAP_NODES nodes each cell is a block of B x B nodes, B the fewest that fit,
 * the worst pair of the block wins, and the page says so); "rails" (adapter i on every node against adapter j, when
 * a node has more than one adapter); "nodes" (drains, recommended NCCL_IB_HCA); "node-warnings" (the
 * `drift` warnings across the endpoints and each node's ports in pairs with mtu_mismatch, when there
 * is one); "concurrent-rails" (matrix --concurrent-rails: each pair with every rail busy beside its
 * solo rate, its share and concurrent_drop; a pair failed under load fails the summary); "failures" and
 * "degraded" (pairs below the verdict's threshold, lossy or with an interval drop: counts and the first
 * RP_HTML_DEGRADED_MAX); "warnings" (only when some pair has one), each pair with its confirm state, warnings and attempts,
 * at most RP_HTML_LIST_MAX entries each (the JSON report has every pair).
 *
 * Order: nodes and adapters in natural order (lib/base/natcmp.h), whatever order the run had.
 * Colour: a pair's share of its expected rate (the slower port's link rate for hardware, the fabric's
 * median for soft devices, unknown rates, and fabrics whose median is under a quarter of the link
 * rate: a nominal rate), never of the fastest pair; the legend states which and the values.
 * Size: grows with the node pairs, not the adapter pairs: 2.67 bytes a node pair (the heatmap, 2
 * bytes in base64), at most RP_HTML_CELLS_MAX node pairs with a problem (about 20 bytes each), one
 * byte an adapter pair for the drill-down of at most RP_HTML_DETAIL_MAX adapter pairs, at most
 * RP_HTML_PROBLEM_MAX problem pairs and the capped lists: at most about 7 MB at 1,024 nodes x 8
 * adapters however many pairs were measured; results/html-scale.md measures it.
 * Every name is escaped (HTML text and attributes, and JSON inside the data script); a rate that is
 * not a number shows as "n/a". The script marks the body data-ready="1" and data-load-ms (the
 * performance.now() at which it finished) when it ran, and the canvas data-drawn (its nodes); a URL
 * ending in #drill=NODE,NODE opens that node pair's drill-down ("drill"), for links and tests. */
#ifndef RP_REPORT_HTML_H
#define RP_REPORT_HTML_H

#include "base/strbuf.h"
#include "verdict/verdict.h"

#define RP_HTML_GRID_MAX 64           /* endpoints in the endpoint by endpoint tables */
#define RP_HTML_HEATMAP_NODES 2048    /* nodes in the canvas heatmap (4 bytes a cell: 16 MB at most) */
#define RP_HTML_DETAIL_MAX (1u << 20) /* adapter pairs embedded for the drill-down */
#define RP_HTML_PROBLEM_MAX 2000      /* failed or warned pairs embedded for the drill-down */
#define RP_HTML_CELLS_MAX 65536       /* node pairs with a problem whose failed count and worst pair are embedded */
#define RP_HTML_LIST_MAX 500          /* entries in the failures and the warnings lists */
#define RP_HTML_CAUSES_MAX 12         /* groups in "causes" */

struct rp_html_opts {
	const char *banner;           /* shown above everything and in the title (e.g. "SYNTHETIC DATA"); NULL none */
	size_t heatmap_nodes;         /* the heatmap's cells a side before it aggregates; 0: RP_HTML_HEATMAP_NODES */
};

void rp_report_html_build(const struct rp_matrix_view *mv, struct rp_sb *sb);
void rp_report_html_build_opts(const struct rp_matrix_view *mv, const struct rp_html_opts *opts, struct rp_sb *sb);
/* Build and write atomically. 0 or a negative errno (logged). */
int rp_report_html_write(const struct rp_matrix_view *mv, const char *path);

#endif
