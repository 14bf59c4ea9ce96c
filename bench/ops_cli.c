/* ops_cli.c: --prom, --baseline and --drop for loopback and matrix (ops_cli.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "ops_cli.h"
#include "report/report.h"

void rp_cli_ops_init(struct rp_cli_ops *o)
{
	memset(o, 0, sizeof(*o));
	o->drop_s = "10%";
}

size_t rp_cli_ops_opts(struct rp_cli_ops *o, struct rp_opt *table)
{
	const struct rp_opt mine[RP_CLI_OPS_OPTS] = {
		{ "prom", 0, RP_OPT_STR, &o->prom, 0, 0, "FILE",
		  "write Prometheus text exposition (node exporter textfile; atomic)", NULL },
		{ "baseline", 0, RP_OPT_STR, &o->baseline, 0, 0, "FILE",
		  "fail on a regression against this earlier --json report (rules of 'rdmaprobe diff')", NULL },
		{ "drop", 0, RP_OPT_STR, &o->drop_s, 0, 0, "X",
		  "--baseline: a drop in Gb/s past X is a regression: 10% or 0.1 (default 10%)", &o->drop_seen },
	};

	memcpy(table, mine, sizeof(mine));
	return RP_CLI_OPS_OPTS;
}

int rp_cli_ops_finish(struct rp_cli_ops *o, const char *cmd)
{
	double drop;

	if (o->prom && rp_report_path_check(o->prom) != 0) {
		fprintf(stderr, "rdmaprobe %s: --prom %s: cannot write the metrics there; nothing was measured\n", cmd,
			o->prom);
		return RP_EXIT_USAGE;
	}
	if (rp_diff_drop_parse(o->drop_s, &drop) != 0) {
		fprintf(stderr, "rdmaprobe %s: --drop %s: a percentage (10%%) or a fraction (0.1) below 1\n", cmd, o->drop_s);
		return RP_EXIT_USAGE;
	}
	if (o->drop_seen && !o->baseline) {
		fprintf(stderr, "rdmaprobe %s: --drop goes with --baseline FILE\n", cmd);
		return RP_EXIT_USAGE;
	}
	if (o->baseline && rp_baseline_load(&o->bl, o->baseline, drop) != 0) {
		fprintf(stderr, "rdmaprobe %s: --baseline %s: not a report to compare with (see above); nothing was "
				"measured\n", cmd, o->baseline);
		return RP_EXIT_USAGE;
	}
	return 0;
}

int rp_cli_ops_prom(struct rp_cli_ops *o, const struct rp_prom_run *run, const struct rp_pair_result *pairs, size_t n,
		    bool final)
{
	int rc = o->prom ? rp_prom_write(o->prom, run, pairs, n) : 0;

	if (rc == 0)
		return 0;
	if (final || !o->prom_failed)
		rp_cli_write_failed(run->command, o->prom, rc, NULL);
	o->prom_failed = true;
	return RP_EXIT_ENV;
}

int rp_cli_ops_baseline_judge(struct rp_cli_ops *o, const char *cmd, const struct rp_engine_cfg *cfg,
			      const struct rp_pair_result *pairs, size_t n)
{
	return rp_cli_ops_baseline_judge_notable(o, cmd, cfg, pairs, n, NULL, 0, 0);
}

int rp_cli_ops_baseline_judge_notable(struct rp_cli_ops *o, const char *cmd, const struct rp_engine_cfg *cfg,
				      const struct rp_pair_result *pairs, size_t n, const struct rp_endpoint *eps,
				      size_t n_eps, size_t n_unlisted)
{
	struct rp_report_info info = { .command = cmd, .version = rp_version_string(), .cfg = cfg };

	if (!o->baseline)
		return 0;
	if (rp_baseline_judge_notable(&o->bl, &info, pairs, n, eps, n_eps, n_unlisted) != 0) {
		fprintf(stderr, "rdmaprobe %s: could not compare the run with --baseline %s (see above)\n", cmd,
			o->baseline);
		return RP_EXIT_ENV;
	}
	return 0;
}

json_t *rp_cli_ops_baseline_json(const struct rp_cli_ops *o)
{
	return o->baseline ? rp_baseline_json(&o->bl) : NULL;
}

bool rp_cli_ops_baseline_print(const struct rp_cli_ops *o)
{
	const struct rp_baseline *b = &o->bl;
	char line[768];

	if (!o->baseline || !b->judged)
		return false;
	if (strcmp(b->old.command, b->cur.command) != 0)
		printf("baseline: note: comparing with a %s report\n", b->old.command);
	if (!b->d.regression) {
		printf("BASELINE ok: no regression against %s (%zu pairs measured in both, drop threshold %g%%)\n",
		       b->old.name, b->d.matched, 100 * b->drop);
		return false;
	}
	printf("BASELINE FAIL: %zu regression%s against %s (drop threshold %g%%):\n", b->n_regressions,
	       b->n_regressions == 1 ? "" : "s", b->old.name, 100 * b->drop);
	for (size_t i = 0; i < b->d.n; i++)
		if (b->d.items[i].regression)
			printf("  %s\n", rp_baseline_item_text(&b->d.items[i], line, sizeof(line)));
	return true;
}

void rp_cli_ops_fini(struct rp_cli_ops *o)
{
	rp_baseline_fini(&o->bl);
}

void rp_cli_write_failed(const char *cmd, const char *path, int rc, const char *what)
{
	if (what)
		fprintf(stderr, "rdmaprobe %s: could not write %s: the %s could not be built (out of memory)\n", cmd,
			path, what);
	else
		fprintf(stderr, "rdmaprobe %s: could not write %s: %s\n", cmd, strcmp(path, "-") ? path : "the standard output",
			strerror(rc < 0 ? -rc : rc ? rc : EIO));
}
