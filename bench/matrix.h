/* matrix.h: what the matrix front end's files share: the endpoint table every rank agrees on and the
 * results rank 0 keeps (they grow with the pairs measured, never with endpoints squared). */
#ifndef RP_BENCH_MATRIX_H
#define RP_BENCH_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "engine_cli.h"
#include "ops_cli.h"
#include "result.h"
#include "schedule.h"
#include "verdict.h"
#include "verdict_cli.h"

/* One endpoint: the description for reports, who drives it, and its GID index. */
struct mx_ep {
	struct rp_endpoint ep;
	int owner;                    /* rank that runs its side of every pair */
	char no_port[200];            /* why the owner's -d selects no ACTIVE port; "" when it has one */
};

/* --- rounds (matrix_round.c) ------------------------------------------------------------------------ */

/* One measurement of a round: an unordered pair, the directions to run, the ACK timeout. */
struct mx_job {
	uint32_t a, b;                /* endpoint numbers, a < b */
	uint32_t dirs;                /* bit 0: a->b, bit 1: b->a */
	int qp_timeout;               /* 0: the configured one */
};

/* What every rank knows during the run. */
struct mx_ctx {
	const struct rp_engine_cfg *cfg;
	const struct mx_ep *eps;
	size_t n_eps;
	int rank, n_ranks;
	bool *dead;                   /* ranks that stopped answering */
	size_t max_pairs;             /* the most jobs a round has (spreads tags) */
	double budget;                /* how long rank 0 waits for a round's reports */
	int stop_sig;                 /* the signal that stops the run (this rank's, or told by rank 0); 0 none */
	void (*flush)(void *arg);     /* rank 0: write the files now (a stop arrived mid-round) */
	bool hold_go;                 /* rank 0: mx_round() leaves the go to mx_round_go(), so that the
	                               * files are written before the ranks start the next round (a rank
	                               * waiting for rank 0 while it writes would see it as lost) */
	void *flush_arg;
};

/* Round `round` (a number for the whole run: planned rounds, then retest rounds) over jobs[0..n),
 * on every rank: run this rank's sides, then rank 0 collects (got[2*i+dir], have[2*i+dir]; NULL on
 * the others) and tells every rank to go on or stop; ranks that sent no report are dead from then
 * on. 0 go on, 1 stop (c->stop_sig says why), -ETIMEDOUT rank 0 is gone, -ECANCELED rank 0 gave up on
 * this rank, -ENOMEM. */
int mx_round(struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n, struct rp_pair_result *got);
/* Rank 0 with hold_go: release the ranks into the next round (the go of round). 0 go on, 1 stop. */
int mx_round_go(struct mx_ctx *c, size_t round);
/* Rank 0: the next retest plan (n == 0: no more) to every live rank. Others: wait for it; *jobs_p
 * (malloc'd), *round_of_p (malloc'd: each job's retest round), *n_p, *n_rounds_p. 0 or negative errno. */
void mx_plan_send(struct mx_ctx *c, size_t round, const struct mx_job *jobs, const uint32_t *round_of, size_t n);
int mx_plan_wait(struct mx_ctx *c, size_t round, struct mx_job **jobs_p, uint32_t **round_of_p, size_t *n_p,
		 double deadline);

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
	unsigned max_retest;          /* --retest */
	size_t retest_rounds;         /* extra rounds run */
	int stop_sig;                 /* the run was interrupted by this signal; 0 not */
	bool write_failed;            /* a file could not be written (named once on stderr) */
	const struct rp_nccl_version_found *nccl_ver;   /* rank 0's release (--nccl-version, libnccl, default) */
	const struct rp_nccl_rank_version *rank_ver;    /* every rank's release, by rank */
	size_t n_rank_ver;
	struct rp_cli_ops *ops;       /* --prom, --baseline (ops_cli.h) */
};

/* The matrix's options (cmd_matrix.c parses them). */
struct mx_opts {
	struct rp_cli_engine eng;
	struct rp_cli_ops ops;        /* --prom, --baseline, --drop */
	const char *dev_spec, *node_name, *pattern_s, *html, *junit;
	bool per_gpu, plan, summary;
	uint64_t seed, nodes, hcas, retest;
	double rate, round_timeout;
	bool nodes_seen, hcas_seen, rate_seen, round_timeout_seen, mem_seen;
	/* derived */
	struct rp_pattern pattern;
	struct rp_cli_verdict vc;     /* --min-bw, --outlier, --interval-drop (bench/verdict_cli.h); .cfg derived */
	char pattern_text[32];
	struct rp_nccl_rank_version *rank_ver;   /* mx_gather_table(): every rank's release (malloc'd) */
	size_t n_rank_ver;
};

/* --- the endpoint table (matrix_table.c) ------------------------------------------------------------ */

#define MX_MAX_LOCAL 64        /* ports one rank may drive */

struct mx_wire_ep;
struct rp_mpi_info;
/* This rank's ports under -d / NCCL_IB_HCA (and, with --per-gpu, the GPU's nearest adapters) into
 * out[0..MX_MAX_LOCAL). Returns 0, or an exit status with the reason in err. When the selection has
 * no ACTIVE port (or the adapter is not there), 0 with one MX_EP_NO_PORT entry, the reason in err. */
int mx_local_ports(struct mx_opts *o, int local_rank, struct mx_wire_ep *out, size_t *n_p, char *err, size_t err_len);
/* Share the ports (the start-up exchange, which also agrees on the run's nonce and gives every rank
 * each rank's NCCL release: o->rank_ver) and build the table: every rank gets the same one, or all
 * return the same exit status. */
int mx_gather_table(struct mx_opts *o, const struct rp_mpi_info *mi, struct mx_ep **eps_p, size_t *n_p);
/* The schedule's view of the sorted table: node numbers and index within the node. */
struct rp_sched_ep *mx_sched_eps(const struct mx_ep *eps, size_t n, size_t *n_nodes_p);

/* --plan (matrix_plan.c): print the schedule of nodes x hcas endpoints and its estimates. */
struct mx_plan_in {
	const struct rp_engine_cfg *cfg;
	const struct rp_pattern *pattern;
	const char *pattern_text;
	uint64_t seed, nodes, hcas;
	const double *rail_gbps;      /* this node's port rates, one per rail; NULL: rate for all */
	double rate;
};
int mx_plan_print(const struct mx_plan_in *in);

int mx_results_add(struct mx_results *mr, const struct rp_pair_result *r, uint32_t src, uint32_t dst);
void mx_results_fini(struct mx_results *mr);

/* Write every requested file from the results so far (judged on a copy: rp_mx_judge). 0, or 3 when a
 * file could not be written (named on stderr the first time, and always when v_out is given) or the
 * verdict could not be computed. If v_out is not NULL and the verdict was computed, it is kept there
 * even when a file failed (the caller prints it and calls rp_verdict_fini), and the judged results
 * copy into *judged_p (caller frees; NULL when there is no verdict). */
int mx_write_files(struct mx_out *o, struct rp_verdict *v_out, struct rp_pair_result **judged_p);
/* The person's view on stdout: a grid for small runs, per-node lines always, failures, a verdict line. */
void mx_print(const struct mx_out *o, const struct rp_verdict *v, const struct rp_pair_result *judged);

#endif
