/* mx_view.h: a small matrix (4 nodes, one adapter each, node 3 unreachable) for the report tests,
 * optionally with hostile node and device names. */
#ifndef RP_TEST_MX_VIEW_H
#define RP_TEST_MX_VIEW_H

#include <stdbool.h>

#include "verdict.h"

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
/* Occurrences of needle in hay. */
size_t mx_count(const char *hay, const char *needle);
/* Read a whole file (malloc'd, NUL-terminated), NULL on error. */
char *mx_slurp(const char *path);

#endif
