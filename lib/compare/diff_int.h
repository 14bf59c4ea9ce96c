/* diff_int.h: what diff_load.c and diff_stream.c share (lib's private header, not a contract). */
#ifndef RP_DIFF_INT_H
#define RP_DIFF_INT_H

#include "compare/diff.h"

/* "an object", "an integer", ... "nothing (missing)" for NULL: for messages. */
const char *rp_diff_type_name(const json_t *v);
/* Every string of the tree, keys included, made safe to print (lib/base/sanitize.h). 0 or -ENOMEM. */
int rp_diff_tree_clean(json_t *v);
/* One element of "pairs" validated into *p (borrowing from pj). 0 or -EINVAL (logged). */
int rp_diff_pair_load(const char *file, const json_t *pj, size_t index, struct rp_diff_pair *p);
/* r->root's top-level fields; *pairs_p its "pairs" array (pairs_p NULL: not looked for). */
int rp_diff_head_load(struct rp_diff_report *r, json_t **pairs_p);
/* After every pair is in r->pairs: the summary, sizes, order, uniqueness. */
int rp_diff_report_finish(struct rp_diff_report *r);

#endif
