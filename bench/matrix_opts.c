/* matrix_opts.c: the options every matrix run takes, on hardware or simulated (matrix.h). */
#include <string.h>

#include "cmds.h"
#include "matrix.h"
#include "opts.h"

void matrix_cli_run_opts_init(struct matrix_run_opts *r)
{
	memset(r, 0, sizeof(*r));
	r->pattern_s = "full";
	r->seed = 1;
	r->sweep_s = "auto";
	r->hold_s = "auto";
}

size_t matrix_cli_run_opts(struct matrix_run_opts *r, struct rp_opt *table)
{
	const struct rp_opt mine[MATRIX_RUN_OPTS] = {
		{ "pattern", 'p', RP_OPT_STR, &r->pattern_s, 0, 0, "P", "full, rail, intra, shift, sample:K (default full)", NULL },
		{ "seed", 0, RP_OPT_U64, &r->seed, 0, 1.8e19, "N", "seed of sample:K (default 1)", NULL },
		{ "html", 0, RP_OPT_STR, &r->html, 0, 0, "FILE", "write a self-contained HTML page", NULL },
		{ "junit", 0, RP_OPT_STR, &r->junit, 0, 0, "FILE", "write JUnit XML: a test case per endpoint (failures name their pairs) and per node", NULL },
		{ "junit-pairs", 0, RP_OPT_FLAG, &r->junit_pairs, 0, 0, NULL, "--junit: a test case per pair instead of per endpoint (large: 84,000 cases at 1,024 x 8)", NULL },
		{ "jsonl", 0, RP_OPT_STR, &r->jsonl, 0, 0, "FILE", "stream every measured direction to FILE as JSON Lines, as it arrives", NULL },
		{ "summary", 0, RP_OPT_FLAG, &r->summary, 0, 0, NULL, "per-node summary on stdout even for small runs", NULL },
		{ "nodes-all", 0, RP_OPT_FLAG, &r->nodes_all, 0, 0, NULL, "a line for every node on stdout (default: the nodes with a finding)", NULL },
		{ "list-pairs", 0, RP_OPT_STR, &r->list_pairs_s, 0, 0, "WHICH", "the pairs the reports list one by one: all, notable (failed, flaky, warned; the rest counted), auto (all up to 100000 directions; default)", NULL },
		{ "sweep", 0, RP_OPT_STR, &r->sweep_s, 0, 0, "W", "reachability first: probe every pair, W of an endpoint's at once; the unreachable leave the bandwidth rounds (auto: 64; off)", NULL },
		{ "hold", 0, RP_OPT_STR, &r->hold_s, 0, 0, "auto|off", "with the sweep: measure a direction's bandwidth on its probe's connection (the sweep's rounds and the bandwidth rounds interleave; auto: when the settings allow)", NULL },
		{ "budget", 0, RP_OPT_SECONDS, &r->budget, 0.001, 30 * 86400, "DURATION", "run what fits in DURATION (90s, 10m, 1h): the pattern at -s, else at a smaller -s (down to 1M), else the largest sample:K; the report states the coverage", &r->budget_seen },
		{ "plan-dead", 0, RP_OPT_STR, &r->plan_dead_s, 0, 0, "N|P%", "--plan, --budget: price the worst case with N dead endpoints, or P% of them (default 1% with the sweep and --retest, else 0); --budget fits it", NULL },
	};

	memcpy(table, mine, sizeof(mine));
	return MATRIX_RUN_OPTS;
}

int matrix_cli_opts_table_parse(struct rp_opt *table, size_t n, const struct rp_opt *mine, size_t n_mine,
				struct matrix_run_opts *r, struct rp_cli_ops *ops, const char *usage, int argc,
				char **argv)
{
	int rc;

	memcpy(table + n, mine, n_mine * sizeof(*mine));
	n += n_mine;
	n += matrix_cli_run_opts(r, table + n);
	n += rp_cli_ops_opts(ops, table + n);
	memset(table + n, 0, sizeof(table[0]));
	rc = rp_opts_parse("matrix", usage, table, argc, argv, NULL, 0, NULL);
	return rc == 1 ? RP_EXIT_OK : rc ? RP_EXIT_USAGE : RP_EXIT_GO_ON;
}
