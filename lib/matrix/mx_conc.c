/* mx_conc.c: matrix --concurrent-rails results and their judgement; see mx_conc.h. */
#include "matrix/mx_conc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_concurrent.h"

/* Grow every array to cap; the arrays already grown keep their contents (nothing is lost). */
static int conc_grow(struct mx_conc *mc, size_t cap)
{
	struct rp_pair_result *nr = realloc(mc->res, cap * sizeof(*nr));
	uint32_t *np, *nround;
	int64_t *ns;

	if (!nr)
		return -ENOMEM;
	mc->res = nr;
	np = realloc(mc->pair_eps, 2 * cap * sizeof(*np));
	if (!np)
		return -ENOMEM;
	mc->pair_eps = np;
	ns = realloc(mc->solo, cap * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	mc->solo = ns;
	nround = realloc(mc->round, cap * sizeof(*nround));
	if (!nround)
		return -ENOMEM;
	mc->round = nround;
	mc->cap = cap;
	return 0;
}

int mx_conc_add(struct mx_conc *mc, const struct rp_pair_result *r, uint32_t src, uint32_t dst, int64_t solo,
		uint32_t round)
{
	if (mc->n == mc->cap && conc_grow(mc, mc->cap ? 2 * mc->cap : 64) != 0)
		return -ENOMEM;
	mc->res[mc->n] = *r;
	mc->pair_eps[2 * mc->n] = src;
	mc->pair_eps[2 * mc->n + 1] = dst;
	mc->solo[mc->n] = solo;
	mc->round[mc->n] = round;
	mc->n++;
	return 0;
}

void mx_conc_fini(struct mx_conc *mc)
{
	free(mc->res);
	free(mc->pair_eps);
	free(mc->solo);
	free(mc->round);
	memset(mc, 0, sizeof(*mc));
}

void mx_conc_judge(const struct mx_conc *mc, const struct rp_result_seq *solo, double max_drop,
		   struct rp_pair_result *out, double *ratio, struct mx_conc_sum *sum)
{
	struct rp_pair_result tmp;
	struct mx_conc_sum s = { .n = mc->n };

	for (size_t i = 0; i < mc->n; i++) {
		int64_t k = mc->solo[i];

		out[i] = mc->res[i];
		out[i].warnings &= ~(1u << RP_WARN_CONCURRENT_DROP);
		ratio[i] = 0;
		if (k >= 0 && (size_t)k < solo->n)
			ratio[i] = rp_concurrent_compare(rp_result_seq_get(solo, (size_t)k, &tmp), &out[i], max_drop);
		/* an endpoint without a port fails its solo pairs already: not a failure under load */
		s.n_failed += out[i].status != RP_ST_OK && out[i].status != RP_ST_NO_PORT;
		s.n_compared += ratio[i] > 0;
		s.n_drop += (out[i].warnings >> RP_WARN_CONCURRENT_DROP) & 1u;
	}
	if (sum)
		*sum = s;
}
