/* mx_results.c: the results rank 0 keeps; see mx_results.h. */
#include "mx_results.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mx_results_add(struct mx_results *mr, const struct rp_pair_result *r, uint32_t src, uint32_t dst)
{
	if (mr->n == mr->cap) {
		size_t cap = mr->cap ? 2 * mr->cap : 64;
		struct rp_pair_result *nr = realloc(mr->res, cap * sizeof(*nr));
		uint32_t *np;

		if (!nr)
			return -ENOMEM;
		mr->res = nr;
		np = realloc(mr->pair_eps, 2 * cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		mr->pair_eps = np;
		mr->cap = cap;
	}
	mr->res[mr->n] = *r;
	mr->pair_eps[2 * mr->n] = src;
	mr->pair_eps[2 * mr->n + 1] = dst;
	mr->n++;
	return 0;
}

void mx_results_fini(struct mx_results *mr)
{
	free(mr->res);
	free(mr->pair_eps);
	memset(mr, 0, sizeof(*mr));
}
