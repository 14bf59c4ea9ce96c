/* mx_view.h: a small matrix (4 nodes, one adapter each, node 3 unreachable) for the report tests,
 * optionally with hostile node and device names. */
#ifndef RP_TEST_MX_VIEW_H
#define RP_TEST_MX_VIEW_H

#include <stdbool.h>

#include "verdict/verdict.h"

struct mx_view {
	struct rp_endpoint eps[4];
	struct rp_pair_result res[12];
	uint32_t pair_eps[24];
	struct rp_verdict verdict;
	struct rp_matrix_view view;
};

/* Fill *mx: pairs among endpoints 0-2 ok, pairs with endpoint 3 failed (RTR), verdict applied.
 * hostile: node 0 and device 1 carry markup, quotes, a control character and invalid UTF-8. */
void mx_view_build(struct mx_view *mx, bool hostile);
void mx_view_fini(struct mx_view *mx);
/* After mx_view_build(): pair 0 flaky (timed_out, then ok on a retest; 2 attempts), pair 1 ok with an
 * interval_drop warning and NaN rates and time, pair 2 (node0 -> node3) a confirmed failure with 2
 * attempts, pair 9 (node3 -> node0) an unconfirmed failure. */
void mx_view_mark_verdict(struct mx_view *mx);
/* A synthetic run (for the scale tests and scripts/html_synth.c; nothing measured): nodes "node1" ..
 * "nodeN", each with adapters "mlx5_0" .. (400 Gb/s hardware ports, rates 385-396 Gb/s), listed in
 * plain string order (node1, node10, node100, node2, ...) as a naive tool would, so that the page has
 * to put them in natural order. Every pair between endpoints on different nodes when that is at most
 * full_max pairs, else one adapter pair per ordered node pair (rails rotating with the node numbers).
 * faults: on node (7N+4)/9+1 (node7 of 8, node8 of 9) adapter mlx5_3 moves nothing (retry_exceeded, confirmed: the verdict
 * drains it), on node N/3+1 mlx5_5 runs at 55% (below the verdict's 90% of link rate), one pair is
 * flaky and one has an interval_drop warning. The verdict is applied with its defaults. */
struct mx_synth {
	struct rp_endpoint *eps;
	struct rp_pair_result *res;
	uint32_t *pair_eps;
	size_t n_eps, n;
	struct rp_verdict verdict;
	struct rp_matrix_view view;
	char title[160], pattern[64];
};
/* 0 or -ENOMEM; mx_synth_fini() always. */
int mx_synth_build(struct mx_synth *s, size_t nodes, size_t adapters, size_t full_max, bool faults);
void mx_synth_fini(struct mx_synth *s);
/* Occurrences of needle in hay. */
size_t mx_count(const char *hay, const char *needle);
/* Read a whole file (malloc'd, NUL-terminated), NULL on error. */
char *mx_slurp(const char *path);

#endif
