/* matrix.h: what the matrix front end's files share: the endpoint table every rank agrees on and the
 * results rank 0 keeps (they grow with the pairs measured, never with endpoints squared). */
#ifndef RP_BENCH_MATRIX_H
#define RP_BENCH_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "result.h"
#include "schedule.h"
#include "verdict.h"

/* One endpoint: the description for reports, who drives it, and its GID index. */
struct mx_ep {
	struct rp_endpoint ep;
	int owner;                    /* rank that runs its side of every pair */
};

/* Results so far (rank 0). */
struct mx_results {
	struct rp_pair_result *res;
	uint32_t *pair_eps;           /* 2 per result */
	size_t n, cap;
};

/* Everything the outputs need. */
struct mx_out {
	const char *cmd_line;
	int argc;
	char **argv;
	const struct rp_engine_cfg *cfg;
	const char *pattern;
	uint64_t seed;
	const struct rp_verdict_cfg *vcfg;
	const struct mx_ep *eps;
	size_t n_eps;
	const struct mx_results *results;
	size_t rounds_done, n_rounds;
	double started_wall, elapsed_s;
	const char *json, *csv, *html, *junit;
	bool summary_only;            /* per-node summary instead of the grid */
};

int mx_results_add(struct mx_results *mr, const struct rp_pair_result *r, uint32_t src, uint32_t dst);
void mx_results_fini(struct mx_results *mr);

/* Write every requested file from the results so far (verdict applied to a copy). 0, or 3 when a
 * file could not be written (printed). If v_out is not NULL the verdict is kept there (the caller
 * calls rp_verdict_fini) and the judged results copy into *judged_p (caller frees). */
int mx_write_files(const struct mx_out *o, struct rp_verdict *v_out, struct rp_pair_result **judged_p);
/* The person's view on stdout: a grid for small runs, per-node lines always, failures, a verdict line. */
void mx_print(const struct mx_out *o, const struct rp_verdict *v, const struct rp_pair_result *judged);

#endif
