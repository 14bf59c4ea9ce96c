/* cmd_matrix_opts.c: 'rdmaprobe matrix''s options: parsed, checked against each other, and what the
 * run derives from them (the pattern, the sweep and hold, the settings every rank agrees on). */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "compare/diff.h"
#include "engine_cli.h"
#include "job/mx_startup.h"
#include "matrix.h"
#include "matrix/mx_hold.h"
#include "opts.h"
#include "report/report.h"

static const char usage_text[] =
	"[options]   (under mpirun/srun; --plan needs neither MPI nor hardware)\n\n"
	"Measures every (node, adapter) pair the pattern names, in contention-free rounds, measures failed\n"
	"and slow pairs again at the end (--retest), and says which adapters to drain and what NCCL_IB_HCA\n"
	"each node should use. Exit: 0 pass, 1 failures, 2 usage, 3 environment (or a report not written),\n"
	"128+signal when interrupted (130 SIGINT, 143 SIGTERM; finished pairs are in the reports).\n"
	"  --min-bw: 0.9 or 90% = fraction of the pair's link rate; 180G = absolute Gb/s; 0 = none\n"
	"  --transport sim --fabric-model FILE: the same run over a SIMULATED fabric, in one process, every\n"
	"  report marked SIMULATED (doc/simulator.md; an example model in share/rdmaprobe/fabric-models)";

/* --sweep: its width; the default leaves out a run with what the sweep does not go with yet, an
 * explicit width refuses it. RP_EXIT_GO_ON to go on, or an exit status. */
static int sweep_check(struct matrix_opts *o)
{
	unsigned w = 0;
	bool is_auto = false;
	const char *with = o->concurrent_rails ? "--concurrent-rails" : o->eng.cfg.meas.bidir ? "--bidir" : NULL;

	int rc = matrix_cli_sweep_opt(o->run.sweep_s, &w, &is_auto);

	if (rc != RP_EXIT_GO_ON)
		return rc;
	if (w && with && !is_auto) {
		fprintf(stderr, "rdmaprobe matrix: --sweep does not go with %s yet (--sweep off, or leave it out)\n", with);
		return RP_EXIT_USAGE;
	}
	o->sweep = with ? 0 : w;
	o->sweep_off = w && with ? with : NULL;
	if (mx_hold_parse(o->run.hold_s, &o->hold) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --hold takes auto or off, not '%s'\n", o->run.hold_s);
		return RP_EXIT_USAGE;
	}
	if (o->hold && o->sweep && !mx_hold_allowed(&o->eng.cfg, (unsigned)o->sweep, o->hold_off, sizeof(o->hold_off)))
		o->hold = false;
	o->hold = o->hold && o->sweep;
	return RP_EXIT_GO_ON;
}

/* The matrix's own options against each other (which goes with which), the pattern parsed. Returns
 * RP_EXIT_GO_ON to go on, or RP_EXIT_USAGE (said why). */
static int opts_combine(struct matrix_opts *o)
{
	if (rp_pattern_parse(o->run.pattern_s, &o->pattern) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --pattern %s: one of full, rail, intra, shift, sample:K (K >= 1)\n", o->run.pattern_s);
		return RP_EXIT_USAGE;
	}
	rp_pattern_str(&o->pattern, o->pattern_text, sizeof(o->pattern_text));
	o->pattern_req = o->pattern;
	memcpy(o->pattern_req_text, o->pattern_text, sizeof(o->pattern_req_text));
	if (o->run.plan_dead_s && !o->plan && !o->run.budget_seen) {
		fprintf(stderr, "rdmaprobe matrix: --plan-dead prices dead endpoints in the plan: it goes with --plan or --budget\n");
		return RP_EXIT_USAGE;
	}
	if (o->run.plan_dead_s) {
		size_t d;
		int st = matrix_cli_plan_dead_opt(o->run.plan_dead_s, 100, true, &d);

		if (st != RP_EXIT_GO_ON)
			return st;
	}
	if (o->fabric_model) {   /* with --transport the simulation (cmd_sim.c) parses the arguments */
		fprintf(stderr, "rdmaprobe matrix: --fabric-model goes with --transport sim\n");
		return RP_EXIT_USAGE;
	}
	if (o->allow_simulated && !o->calibrate_from) {
		fprintf(stderr, "rdmaprobe matrix: --allow-simulated goes with --calibrate-from FILE\n");
		return RP_EXIT_USAGE;
	}
	if (o->calibrate_from && !o->plan && !o->run.budget_seen) {
		fprintf(stderr, "rdmaprobe matrix: --calibrate-from fits the plan's model: it goes with --plan or --budget\n");
		return RP_EXIT_USAGE;
	}
	if (o->concurrent_rails && o->pattern.kind != RP_PATTERN_RAIL) {
		fprintf(stderr, "rdmaprobe matrix: --concurrent-rails loads every rail of a node at once, so it needs "
				"--pattern rail (got %s)\n", o->pattern_text);
		return RP_EXIT_USAGE;
	}
	if (o->run.list_pairs_s && rp_report_list_parse(o->run.list_pairs_s, &o->list_pairs) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --list-pairs %s: one of all, notable, auto\n", o->run.list_pairs_s);
		return RP_EXIT_USAGE;
	}
	if (o->run.jsonl && (!o->run.jsonl[0] || strcmp(o->run.jsonl, "-") == 0)) {
		fprintf(stderr, "rdmaprobe matrix: --jsonl wants a file name (the stream is a record, not standard output)\n");
		return RP_EXIT_USAGE;
	}
	if (o->run.jsonl && rp_report_path_check(o->run.jsonl) != 0)
		return RP_EXIT_USAGE;   /* logged: what is wrong with the path */
	if (o->conc_drop_seen && !o->concurrent_rails) {
		fprintf(stderr, "rdmaprobe matrix: --concurrent-drop goes with --concurrent-rails\n");
		return RP_EXIT_USAGE;
	}
	if (rp_diff_drop_parse(o->conc_drop_s, &o->conc_drop) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --concurrent-drop %s: a percentage (25%%) or a fraction (0.25) below 1\n",
			o->conc_drop_s);
		return RP_EXIT_USAGE;
	}
	if (o->eng.all) {
		fprintf(stderr, "rdmaprobe matrix: -a/--all is for loopback and pair; give one -s\n");
		return RP_EXIT_USAGE;
	}
	return RP_EXIT_GO_ON;
}

/* --plan's cluster options, and the buffers' place against --per-gpu. Returns RP_EXIT_GO_ON to go on,
 * or RP_EXIT_USAGE (said why). */
static int opts_cluster(struct matrix_opts *o)
{
	if (!o->plan && (o->nodes_seen || o->hcas_seen || o->rate_seen)) {
		fprintf(stderr, "rdmaprobe matrix: --nodes, --hcas and --rate describe a cluster for --plan only\n");
		return RP_EXIT_USAGE;
	}
	if (o->plan && (o->eng.csv || o->run.html || o->run.junit || o->run.jsonl)) {
		fprintf(stderr, "rdmaprobe matrix: --plan writes the plan (--json FILE) and nothing else: --%s is a run's "
				"report\n", o->eng.csv ? "csv" : o->run.html ? "html" : o->run.junit ? "junit" : "jsonl");
		return RP_EXIT_USAGE;
	}
	if (o->rate_seen && !o->hcas_seen) {
		fprintf(stderr, "rdmaprobe matrix: --rate goes with --hcas (without it the plan uses this node's ports and rates)\n");
		return RP_EXIT_USAGE;
	}
	o->mem_seen = strcmp(o->eng.mem, "host") != 0 || o->eng.src_mem || o->eng.dst_mem;
	if (o->per_gpu && o->mem_seen) {
		fprintf(stderr, "rdmaprobe matrix: --per-gpu puts buffers on each rank's GPU; drop --mem/--src-mem/--dst-mem\n");
		return RP_EXIT_USAGE;
	}
	if (o->eng.gpu && strcmp(o->eng.gpu, "nearest") == 0) {
		fprintf(stderr, "rdmaprobe matrix: --gpu nearest: use --per-gpu (each rank's GPU and its nearest adapters)\n");
		return RP_EXIT_USAGE;
	}
	return RP_EXIT_GO_ON;
}

/* Validate and derive after parsing. Returns RP_EXIT_GO_ON to go on, or an exit status. */
static int opts_check(struct matrix_opts *o)
{
	int rc;

	o->vc.retest = o->eng.retest;   /* --retest is in the engine's table: the matrix's extra rounds, the verdict's rule */
	rc = opts_combine(o);
	if (rc != RP_EXIT_GO_ON)
		return rc;
	rc = rp_cli_verdict_finish(&o->vc, "matrix", o->eng.latency);   /* 0 or an exit status */
	if (rc)
		return rc;
	rc = opts_cluster(o);
	if (rc != RP_EXIT_GO_ON)
		return rc;
	rc = rp_cli_engine_finish(&o->eng, "matrix");
	if (!rc && !o->plan)
		rc = rp_cli_ops_finish(&o->ops, "matrix");
	if (rc)
		return rc;
	rc = sweep_check(o);
	if (rc != RP_EXIT_GO_ON)
		return rc;
	if (o->eng.cfg.run_limit_s <= 0)
		o->eng.cfg.run_limit_s = o->eng.cfg.meas.duration_s > 0 ? o->eng.cfg.meas.duration_s + 2 * o->eng.cfg.timeout_s
									   : 4 * o->eng.cfg.timeout_s;
	mx_settings_init(&o->settings, &o->eng.cfg, o->concurrent_rails, (unsigned)o->sweep, o->hold, (unsigned)o->eng.retest);
	return RP_EXIT_GO_ON;
}

int matrix_cli_opts_parse(struct matrix_opts *o, int argc, char **argv)
{
	struct rp_opt table[RP_CLI_ENGINE_OPTS + RP_CLI_VERDICT_OPTS + RP_CLI_OPS_OPTS + MATRIX_RUN_OPTS + 21];
	size_t n;
	int rc;

	memset(o, 0, sizeof(*o));
	rp_cli_engine_init(&o->eng);
	rp_cli_ops_init(&o->ops);
	matrix_cli_run_opts_init(&o->run);
	o->rate = 400;
	o->nodes = 1;
	o->conc_drop_s = "25%";
	o->startup_timeout = MX_STARTUP_WINDOW_S;
	rp_cli_verdict_init(&o->vc);
	n = rp_cli_engine_opts(&o->eng, table);
	n += rp_cli_verdict_opts(&o->vc, table + n);
	const struct rp_opt mine[] = {
		{ "dev", 'd', RP_OPT_STR, &o->dev_spec, 0, 0, "SPEC", "ports to use, NCCL_IB_HCA syntax (default: NCCL's selection)", NULL },
		{ "node", 0, RP_OPT_STR, &o->node_name, 0, 0, "NAME", "this rank's node name (default: host name)", NULL },
		{ "per-gpu", 0, RP_OPT_FLAG, &o->per_gpu, 0, 0, NULL, "one rank per GPU: the task's one visible GPU (else the local rank's) and its nearest adapter(s)", NULL },
		{ "plan", 0, RP_OPT_FLAG, &o->plan, 0, 0, NULL, "print the schedule and estimates; no MPI, no hardware", NULL },
		{ "nodes", 0, RP_OPT_U64, &o->nodes, 1, 1 << 20, "N", "--plan: nodes (default 1)", &o->nodes_seen },
		{ "hcas", 0, RP_OPT_U64, &o->hcas, 1, 1024, "N", "--plan: ports per node (default: this node's selection)", &o->hcas_seen },
		{ "rate", 0, RP_OPT_DOUBLE, &o->rate, 0.001, 1e6, "GBPS", "--plan with --hcas: link rate (default 400)", &o->rate_seen },
		{ "concurrent-rails", 0, RP_OPT_FLAG, &o->concurrent_rails, 0, 0, NULL, "--pattern rail: each round's rails alone, then all at once; concurrent_drop against solo", NULL },
		{ "concurrent-drop", 0, RP_OPT_STR, &o->conc_drop_s, 0, 0, "X", "--concurrent-rails: below solo x (1 - X) is concurrent_drop: 25% or 0.25 (default 25%)", &o->conc_drop_seen },
		{ "calibrate-from", 0, RP_OPT_STR, &o->calibrate_from, 0, 0, "FILE", "--plan, --budget: fit the model from a previous matrix run's JSON report", NULL },
		{ "allow-simulated", 0, RP_OPT_FLAG, &o->allow_simulated, 0, 0, NULL, "--calibrate-from: accept a simulated run's report (refused otherwise: its figures are a model's)", NULL },
		{ "transport", 0, RP_OPT_STR, &o->transport, 0, 0, "sim", "run over a SIMULATED fabric in one process, no MPI, no hardware (with --fabric-model; doc/simulator.md)", NULL },
		{ "fabric-model", 0, RP_OPT_STR, &o->fabric_model, 0, 0, "FILE", "--transport sim: the fabric model (doc/simulator.md; an example in share/rdmaprobe/fabric-models)", NULL },
		{ "round-timeout", 0, RP_OPT_SECONDS, &o->round_timeout, 1, 86400, "S", "wait this long for a round's reports (default: from --timeout)", &o->round_timeout_seen },
		{ "startup-timeout", 0, RP_OPT_SECONDS, &o->startup_timeout, 0.1, 86400, "S", "start-up: give up when no rank's ports arrive for S (default 60 s; at most 10 x S in all)", NULL },
	};

	rc = matrix_cli_opts_table_parse(table, n, mine, RP_ARRAY_SIZE(mine), &o->run, &o->ops, usage_text, argc, argv);
	return rc == RP_EXIT_GO_ON ? opts_check(o) : rc;
}
