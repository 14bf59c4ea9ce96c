/* verdict_localize.c: localize failed peer pairs to fabric components with a topology (verdict.h,
 * "Blame", step 5). */
#include "verdict_int.h"

int rp_verdict_localize(const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps, size_t n_eps,
			const struct rp_peer_index *pi, struct rp_verdict *v)
{
	(void)cfg;
	(void)eps;
	(void)n_eps;
	(void)pi;
	(void)v;
	return 0;
}
