/* matrix.h: what the matrix front end's files share: its options, the outputs' inputs, --plan. The
 * protocol, the endpoint table and the results are lib/'s (mx_run.h, mx_table.h, mx_results.h). */
#ifndef RP_BENCH_MATRIX_H
#define RP_BENCH_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine_cli.h"
#include "matrix/mx_conc.h"
#include "plan/mx_plan.h"
#include "matrix/mx_results.h"
#include "matrix/mx_retest.h"
#include "matrix/mx_sweep.h"
#include "job/mx_table.h"
#include "report/report_list.h"
#include "ops_cli.h"
#include "base/result.h"
#include "job/mx_schedule.h"
#include "verdict/verdict.h"
#include "verdict_cli.h"

/* Everything the outputs need. */
struct matrix_out {
	const char *cmd_line;
	int argc;
	char **argv;
	const struct rp_engine_cfg *cfg;
	const char *pattern;
	uint64_t seed;
	const struct rp_verdict_cfg *vcfg;
	const struct mx_ep *eps;
	size_t n_eps;
	struct mx_results *results;   /* judged in place by matrix_cli_write_files */
	struct mx_judged *judged;     /* the run's kept verdict of results (mx_run.judged): the final
	                               * reports take it when it still holds; NULL: none */
	size_t rounds_done, n_rounds;
	size_t rounds_run;            /* planned rounds started: rounds_done, plus one a stop cut short */
	double started_wall, elapsed_s;
	const char *json, *csv, *html, *junit;
	bool list_notable;            /* the reports list only the notable pairs (lib/report/report_list.h) */
	const char *jsonl;            /* --jsonl: where every pair is (named in the reports); NULL none */
	bool summary_only;            /* per-node summary instead of the grid */
	bool nodes_all;               /* --nodes-all: a line for every node, not only those with a finding */
	bool junit_pairs;             /* --junit-pairs: a JUnit test case per pair (else per endpoint) */
	unsigned max_retest;          /* --retest */
	size_t retest_rounds;         /* extra rounds run */
	const struct mx_sweep *sweep; /* --sweep: its rounds and marks; NULL without */
	double sweep_s;               /* the time of the sweep's own rounds (mx_sweep.elapsed_s; 0: none ran) */
	const char *sweep_off;        /* the default sweep left out for this option (matrix_opts.sweep_off) */
	bool hold;                    /* --hold: the sweep's connections held for the bandwidth rounds */
	const char *hold_off;         /* why not, with --hold auto ("" or NULL: it held, or --hold off) */
	const struct mx_run *run;     /* the holds' counts (rank 0's own sides), the late rounds */
	int stop_sig;                 /* the run was interrupted by this signal; 0 not */
	bool write_failed;            /* a file could not be written (named once on stderr) */
	const struct rp_nccl_version_found *nccl_ver;   /* rank 0's release (--nccl-version, libnccl, default) */
	const struct rp_nccl_rank_version *rank_ver;    /* every rank's release, by rank */
	size_t n_rank_ver;
	const struct rp_drift *drift; /* rank 0: drift across the endpoints (mx_table); NULL none */
	struct rp_cli_ops *ops;       /* --prom, --baseline (ops_cli.h) */
	const struct mx_conc *conc;   /* --concurrent-rails: the concurrent pairs; NULL without it */
	double conc_drop;             /* --concurrent-drop */
	struct mx_conc_sum conc_sum;  /* set by matrix_cli_write_files: the concurrent pairs as judged */
	/* --transport sim (cmd_sim.c): the model file; NULL for a real run. Then the JSON has a top-level
	 * "simulated": true and "fabric_model", the HTML sim_banner, the text SIMULATED lines, and
	 * json_more adds its keys to the JSON root (a json_t *; 0 or -ENOMEM). */
	const char *simulated;
	const char *sim_banner;
	int (*json_more)(void *root, void *arg);
	void *json_more_arg;
	double startup_s;             /* rank 0's start-up: from its start to the first round */
	const struct mx_coverage *coverage;   /* the final write's "coverage" (mx_plan_json.h); NULL before */
	const char *pattern_requested; /* --budget may have chosen a smaller sample than this */
	double budget_s;              /* --budget; 0 none */
};

struct rp_opt;

/* The options every matrix run takes, on hardware or on a simulated fabric (--transport sim): one
 * table (matrix_cli_run_opts), one meaning, one help text. */
struct matrix_run_opts {
	const char *pattern_s;        /* --pattern (default full) */
	uint64_t seed;                /* --seed of sample:K (default 1) */
	const char *html, *junit;     /* --html, --junit: files */
	bool junit_pairs;             /* --junit-pairs: a test case per pair */
	const char *jsonl;            /* --jsonl: every measured direction streamed (report_jsonl.h) */
	bool summary, nodes_all;      /* --summary, --nodes-all */
	const char *list_pairs_s;     /* --list-pairs all|notable|auto */
	const char *sweep_s;          /* --sweep W|auto|off (default auto) */
	const char *hold_s;           /* --hold auto|off (default auto) */
	double budget;                /* --budget: seconds; 0 none */
	bool budget_seen;
	const char *plan_dead_s;      /* --plan-dead N or P% */
};

#define MATRIX_RUN_OPTS 13        /* entries matrix_cli_run_opts adds */

/* The defaults (pattern full, seed 1, sweep and hold auto). */
void matrix_cli_run_opts_init(struct matrix_run_opts *r);
/* Add the entries for r at table[0 .. MATRIX_RUN_OPTS); returns MATRIX_RUN_OPTS. */
size_t matrix_cli_run_opts(struct matrix_run_opts *r, struct rp_opt *table);
/* Parse argv as "matrix" against table[0..n) (the entries put there so far), then mine[0..n_mine),
 * r's and ops's, appended in that order (table has room for all and the end). RP_EXIT_GO_ON to go
 * on, RP_EXIT_OK after --help, RP_EXIT_USAGE (said why). */
int matrix_cli_opts_table_parse(struct rp_opt *table, size_t n, const struct rp_opt *mine, size_t n_mine,
				struct matrix_run_opts *r, struct rp_cli_ops *ops, const char *usage, int argc,
				char **argv);

/* The matrix's options (cmd_matrix.c parses them). */
struct matrix_opts {
	struct rp_cli_engine eng;
	struct rp_cli_ops ops;        /* --prom, --baseline, --drop */
	struct matrix_run_opts run;   /* what a simulated run takes too */
	const char *dev_spec, *node_name;
	bool hold;                    /* the sweep's connections held for the bandwidth rounds (mx_hold.h) */
	char hold_off[160];           /* why not, when --hold auto and the run does not allow it; "" */
	uint64_t sweep;               /* its width: reachability first, W of an endpoint's pairs at once; 0 none */
	const char *sweep_off;        /* auto, and the run has what the sweep does not go with yet: its
	                               * option (the reports say so); NULL otherwise */
	enum rp_report_list_mode list_pairs;
	bool per_gpu, plan;
	bool concurrent_rails;        /* --concurrent-rails */
	const char *conc_drop_s;      /* --concurrent-drop */
	bool conc_drop_seen;
	uint64_t nodes, hcas;
	double rate, round_timeout, startup_timeout;
	bool nodes_seen, hcas_seen, rate_seen, round_timeout_seen, mem_seen;
	const char *calibrate_from;   /* --calibrate-from: a previous run's JSON report for the plan's model */
	bool allow_simulated;         /* --allow-simulated: --calibrate-from may read a simulated run's report */
	const char *transport, *fabric_model;   /* listed for --help; seen here only without --transport */
	double t_start;               /* rp_now() when the command started (the report's startup_s) */
	/* derived */
	struct rp_pattern pattern;    /* the pattern that runs (--budget may make it a smaller sample) */
	struct rp_pattern pattern_req;   /* the pattern asked for */
	char pattern_req_text[32];
	double conc_drop;             /* --concurrent-drop as a fraction */
	struct rp_cli_verdict vc;     /* --min-bw, --outlier, --interval-drop (bench/verdict_cli.h); .cfg derived */
	struct mx_settings settings;  /* what orders and shapes the rounds, derived once (mx_settings_init):
	                               * the schedule digest, --plan, --budget and the run take it whole */
	char pattern_text[32];
};

/* Parse, check and derive the matrix's options (cmd_matrix_opts.c). RP_EXIT_GO_ON to go on, or an
 * exit status (RP_EXIT_OK after --help; RP_EXIT_USAGE, said why). */
int matrix_cli_opts_parse(struct matrix_opts *o, int argc, char **argv);

/* --plan (matrix_plan.c): print the schedule of nodes x hcas endpoints and its estimates. */
struct matrix_plan_in {
	const struct rp_engine_cfg *cfg;
	const struct rp_pattern *pattern;
	const char *pattern_text;
	uint64_t seed, nodes, hcas;
	const double *rail_gbps;      /* this node's port rates, one per rail; NULL: rate for all */
	double rate;
	const struct mx_settings *settings;   /* the run's settings (matrix_opts.settings) */
	const char *calibrate_from;   /* --calibrate-from FILE; NULL: the assumed figures */
	const char *plan_dead;        /* --plan-dead: N or P% (NULL: 1%) */
	bool allow_simulated;         /* --allow-simulated: a simulated run's report may calibrate */
	double budget_s;              /* --budget: pick what fits; 0 none */
	const char *budget_text;      /* as given */
	const char *json;             /* --json FILE: the plan as a document ("-": stdout, the text then on stderr) */
};
int matrix_cli_plan_print(const struct matrix_plan_in *in);
/* --plan-dead's text ("N" endpoints or "P%" of n_eps) as a count (at most n_eps) into *dead. NULL:
 * 1% when the run decides dead endpoints (decides: a sweep and --retest, where each costs a
 * deadline or two), else 0 (direction by direction every round a dead endpoint is in waits a
 * deadline: priced when asked, never by default). RP_EXIT_GO_ON to go on, or RP_EXIT_USAGE (said why). */
int matrix_cli_plan_dead_opt(const char *s, size_t n_eps, bool decides, size_t *dead);
/* --sweep's text (mx_sweep_parse), the error on stderr when it is not one. RP_EXIT_GO_ON to go on, or an exit status. */
int matrix_cli_sweep_opt(const char *s, unsigned *width_p, bool *auto_p);
/* --calibrate-from: the model, calibrated when path is given. Returns RP_EXIT_GO_ON to go on, or an exit status
 * (the file's problem logged by lib/). */
int matrix_cli_model_load(const char *path, bool allow_simulated, struct mx_plan_model *m);
/* --budget over the endpoints: the pattern and message size that fit into *choice, its line (what
 * changed and why) printed on stderr when say is set. Returns RP_EXIT_GO_ON to go on, or 2 when nothing fits (said on stderr when say is set), 3. */
int matrix_cli_budget_choose(const struct rp_sched_ep *se, size_t n_eps, const double *gbps, const struct rp_pattern *pat,
		   const char *pat_text, uint64_t seed, const struct mx_plan_model *m, const struct mx_settings *run,
		   double budget_s, const char *budget_text, bool say, struct mx_plan_choice *choice);
/* One line: what the run covered (stdout). */
void matrix_cli_coverage_print(const struct mx_coverage *c, const char *requested, const char *ran, double budget_s);

/* matrix --transport ... (cmd_sim.c): whether the arguments ask for another transport, and that run. */
bool matrix_cli_sim_requested(int argc, char **argv);
int cmd_matrix_sim(int argc, char **argv);

/* Write every requested file from the results so far, judged in place (mx_judge: the verdict
 * judges afresh every time, so the kept results carry the latest verdict's statuses). 0, or 3 when a
 * file could not be written (named on stderr the first time, and always when v_out is given) or the
 * verdict could not be computed. If v_out is not NULL and the verdict was computed, it is kept there
 * even when a file failed (the caller prints it and calls rp_verdict_fini) and *judged_p is true. */
int matrix_cli_write_files(struct matrix_out *o, struct rp_verdict *v_out, bool *judged_p);
/* Whether rank 0 can write the reports it was asked for (--json, --csv, --html, --junit; --prom and
 * --jsonl are checked with their options): before anything is measured, as loopback does. 0, or 2
 * with the option and the path's problem on stderr. */
int matrix_cli_outputs_check(const struct rp_cli_engine *e, const char *html, const char *junit);
/* The person's view on stdout, from the results as the last matrix_cli_write_files judged them: a grid for
 * small runs, per-node lines always, failures, a verdict line. */
void matrix_cli_print(const struct matrix_out *o, const struct rp_verdict *v);
/* The run's facts for lib's report writers and pass rule (lib/report/report_matrix.h), from o. */
struct rp_matrix_facts;
void matrix_cli_facts(const struct matrix_out *o, struct rp_matrix_facts *f);
/* The run passed (rp_matrix_passed: the verdict, every round done, no stop, no concurrent failure). */
bool matrix_cli_passed(const struct matrix_out *o, const struct rp_verdict *v);
/* matrix_text.c: matrix_cli_print's nodes (those with a finding, or all), failures grouped by suspect and
 * flaky pairs; and the verdict line's drain list ("; drain ..."). */
struct rp_result_seq;
void matrix_cli_print_findings(const struct matrix_out *o, const struct rp_verdict *v, const struct rp_result_seq *ps);
void matrix_cli_print_drain(const struct matrix_out *o, const struct rp_verdict *v);

#endif
