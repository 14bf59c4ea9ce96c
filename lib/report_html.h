/* report_html.h: the matrix as one self-contained HTML page (inline CSS and JS, nothing fetched):
 * heatmaps of bandwidth and reachability (endpoint by endpoint up to RP_HTML_GRID_MAX endpoints,
 * node by node above that, none above RP_HTML_GRID_MAX nodes), hover details, the per-node verdict
 * (drain, recommended NCCL_IB_HCA), the list of failures (each marked confirmed or not confirmed on
 * retest) and of passing pairs with warnings (flaky, interval_drop, nominal_link_rate), attempts beside
 * the pair. Every name is escaped; a rate that is not a number shows as "n/a". Element ids the tests
 * and users can rely on: "summary", "nodes", "bw-heatmap", "reach-heatmap", "failures", "warnings"
 * (only when some pair has one). */
#ifndef RP_REPORT_HTML_H
#define RP_REPORT_HTML_H

#include "strbuf.h"
#include "verdict.h"

#define RP_HTML_GRID_MAX 128

void rp_report_html_build(const struct rp_matrix_view *mv, struct rp_sb *sb);
/* Build and write atomically. 0 or a negative errno (logged). */
int rp_report_html_write(const struct rp_matrix_view *mv, const char *path);

#endif
