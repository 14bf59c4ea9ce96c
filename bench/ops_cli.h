/* ops_cli.h: the operators' outputs loopback and matrix share: --prom FILE (Prometheus textfile,
 * lib/report/prom.h) and --baseline FILE / --drop X (the run judged against an accepted report,
 * lib/compare/baseline.h). Each command adds the entries to its option table and makes one call per step. */
#ifndef RP_OPS_CLI_H
#define RP_OPS_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "compare/baseline.h"
#include "engine/engine.h"
#include "opts.h"
#include "report/prom.h"
#include "base/result.h"

#define RP_CLI_OPS_OPTS 3

struct rp_cli_ops {
	const char *prom, *baseline, *drop_s;
	bool drop_seen;
	struct rp_baseline bl;        /* loaded when baseline is set */
	bool prom_failed;             /* a --prom write failed (named once until the final one) */
};

void rp_cli_ops_init(struct rp_cli_ops *o);
/* Append --prom, --baseline, --drop to table (room for RP_CLI_OPS_OPTS); returns how many. */
size_t rp_cli_ops_opts(struct rp_cli_ops *o, struct rp_opt *table);
/* After parsing: --prom's path checked (rp_report_path_check()), --drop parsed, the baseline loaded
 * and validated, all before anything is measured. 0, or 2 with the reason printed. */
int rp_cli_ops_finish(struct rp_cli_ops *o, const char *cmd);
/* Write --prom if asked; a failure is printed once, and always when final. 0 or 3. */
int rp_cli_ops_prom(struct rp_cli_ops *o, const struct rp_prom_run *run, const struct rp_pair_result *pairs, size_t n,
		    bool final);
/* With --baseline: judge the run's judged pairs against it. 0, or 3 (printed). */
int rp_cli_ops_baseline_judge(struct rp_cli_ops *o, const char *cmd, const struct rp_engine_cfg *cfg,
			      const struct rp_pair_result *pairs, size_t n);
/* The same for a run that lists only its notable pairs (rp_baseline_judge_notable). */
int rp_cli_ops_baseline_judge_notable(struct rp_cli_ops *o, const char *cmd, const struct rp_engine_cfg *cfg,
				      const struct rp_pair_result *pairs, size_t n, const struct rp_endpoint *eps,
				      size_t n_eps, size_t n_unlisted);
/* The "baseline" JSON section (new reference) once judged, else NULL. */
json_t *rp_cli_ops_baseline_json(const struct rp_cli_ops *o);
/* Print the baseline's regressions after the verdict (nothing without --baseline); true when the run
 * regressed (the caller turns a pass into exit 1). */
bool rp_cli_ops_baseline_print(const struct rp_cli_ops *o);
void rp_cli_ops_fini(struct rp_cli_ops *o);

/* Every command's one line for an output that could not be written, with its cause: "rdmaprobe CMD:
 * could not write PATH: WHY", WHY the report's part `what` that could not be built (out of memory)
 * when what is set, else the negative errno rc's text (lib/ logged the detail just before). */
void rp_cli_write_failed(const char *cmd, const char *path, int rc, const char *what);

#endif
