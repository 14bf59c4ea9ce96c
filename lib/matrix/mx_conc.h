/* mx_conc.h: matrix --concurrent-rails: the rail pattern's pairs under the load NCCL's rings put on
 * the fabric (every rail of a node busy at once), each against the same pair measured alone.
 *
 * The run (lib/matrix/mx_run.h) plays each round r of the rail schedule as one solo round per rail (rail
 * g's pairs of round r: every node has one adapter busy, nothing else on its adapters), then the
 * whole round r at once (every rail's pairs of the same node pairs at the same time). The solo
 * results are the matrix's results (the grid, the verdict, the retests); the concurrent ones are
 * kept here, each with the index of its solo result (the same directed pair) among the run's.
 *
 * The judgement is loopback --concurrent's, the one rule of lib/engine/engine_concurrent.h: rp_concurrent_compare()
 * sets concurrent_drop (RP_WARN_CONCURRENT_DROP) on a concurrent pair whose rate falls below
 * (1 - max_drop) x its solo rate (default RP_CONCURRENT_DROP_DEFAULT), both measured ok. A drop is a
 * warning; a concurrent pair that failed (not interrupted, not an endpoint without a port, whose solo
 * pairs fail already) fails the run, as in loopback.
 */
#ifndef RP_MX_CONC_H
#define RP_MX_CONC_H

#include <stddef.h>
#include <stdint.h>

#include "verdict/result_seq.h"
#include "base/result.h"

struct mx_conc {
	struct rp_pair_result *res;   /* the concurrent measurements */
	uint32_t *pair_eps;           /* 2 per result: source and destination endpoint */
	int64_t *solo;                /* per result: its solo result's index among the run's results, -1 none */
	uint32_t *round;              /* per result: the schedule round it ran in, from 0 */
	size_t n, cap;
};

/* Append a copy of r (src -> dst). 0 or -ENOMEM (nothing changed). */
int mx_conc_add(struct mx_conc *mc, const struct rp_pair_result *r, uint32_t src, uint32_t dst, int64_t solo,
		uint32_t round);
void mx_conc_fini(struct mx_conc *mc);

struct mx_conc_sum {
	size_t n;                     /* concurrent pairs */
	size_t n_failed;              /* not ok under load (no_usable_port is not: the solo pairs fail for it) */
	size_t n_compared;            /* ok, with a solo figure to compare */
	size_t n_drop;                /* concurrent_drop */
};

/* Judge mc against the solo results (lib/verdict/result_seq.h; as the verdict judged them): out[i] is a copy
 * of mc->res[i] with RP_WARN_CONCURRENT_DROP set or cleared by rp_concurrent_compare(), ratio[i] its
 * rate over the solo one (0: nothing to compare: no solo result, or either not ok). out and ratio
 * hold mc->n entries; sum may be NULL. */
void mx_conc_judge(const struct mx_conc *mc, const struct rp_result_seq *solo, double max_drop,
		   struct rp_pair_result *out, double *ratio, struct mx_conc_sum *sum);

#endif
