/* pairs.h: a sequence of measured pairs that need not be one array of results.
 *
 * Rank 0 of a large matrix is to keep most of its results in a compact form (issue 12: memory
 * O(endpoints + failures), not O(pairs) x sizeof(struct rp_pair_result)); the verdict reads and
 * judges pairs through this interface, so it judges an array and such a store by one code path.
 *
 *   struct rp_pair_result tmp, *r = rp_pairs_get(ps, i, &tmp);   pair i: in the array, or built in tmp
 *   ... change r ...
 *   rc = rp_pairs_put(ps, i, r);                                  keep the change (arrays: nothing to do)
 *
 * For an array (rp_pairs_array), get returns the element itself and put does nothing, so a caller
 * that changes r changes the array, as before: no copy, no cost.
 */
#ifndef RP_PAIRS_H
#define RP_PAIRS_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"

struct rp_pairs {
	size_t n;
	struct rp_pair_result *arr;   /* the pairs as one array; NULL: get/put below */
	/* Pair i (< n) built into tmp; returns tmp. */
	struct rp_pair_result *(*get)(const struct rp_pairs *ps, size_t i, struct rp_pair_result *tmp);
	/* Keep r as pair i. 0 or -ENOMEM (pair i unchanged). */
	int (*put)(const struct rp_pairs *ps, size_t i, const struct rp_pair_result *r);
	void *arg;
};

/* The n results of arr as pairs (arr may be NULL when n is 0). */
static inline struct rp_pairs rp_pairs_array(struct rp_pair_result *arr, size_t n)
{
	return (struct rp_pairs){ .n = n, .arr = arr };
}

/* The same for a reader that never changes a pair (the report writers): a const array. */
static inline struct rp_pairs rp_pairs_const(const struct rp_pair_result *arr, size_t n)
{
	return (struct rp_pairs){ .n = n, .arr = (struct rp_pair_result *)(uintptr_t)arr };
}

static inline struct rp_pair_result *rp_pairs_get(const struct rp_pairs *ps, size_t i, struct rp_pair_result *tmp)
{
	return ps->arr ? &ps->arr[i] : ps->get(ps, i, tmp);
}

static inline int rp_pairs_put(const struct rp_pairs *ps, size_t i, const struct rp_pair_result *r)
{
	return ps->arr ? 0 : ps->put(ps, i, r);
}

#endif
