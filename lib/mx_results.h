/* mx_results.h: the results rank 0 keeps: every measured direction and its two endpoints (they grow
 * with the pairs measured, never with endpoints squared). */
#ifndef RP_MX_RESULTS_H
#define RP_MX_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"

struct mx_results {
	struct rp_pair_result *res;
	uint32_t *pair_eps;           /* 2 per result: source and destination endpoint */
	size_t n, cap;
};

/* Append a copy of r (src -> dst). 0 or -ENOMEM (nothing changed). */
int mx_results_add(struct mx_results *mr, const struct rp_pair_result *r, uint32_t src, uint32_t dst);
void mx_results_fini(struct mx_results *mr);

#endif
