/* cmd_matrix.c: 'rdmaprobe matrix': every (node, adapter) pair of a cluster under mpirun/srun, in
 * contention-free rounds, with a verdict per node. MPI is the only side channel.
 *
 * Every rank: select its ports and share them (matrix_table.c: one allgather at start, which also
 * agrees on the run's nonce), agree on the schedule (a pure function of the table), run the planned
 * rounds (matrix_round.c), then up to --retest sets of extra rounds over the pairs that failed or
 * were judged slow, planned by rank 0 (lib/matrix_retest). Rank 0 keeps the results, rewrites the
 * reports after rounds (matrix_out.c), and prints the verdict. A signal on any rank stops every rank
 * at the end of the round in progress; the exit status is then 128 + the signal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "engine_cli.h"
#include "log.h"
#include "matrix.h"
#include "matrix_retest.h"
#include "matrix_wire.h"
#include "nccl.h"
#include "node.h"
#include "oob_mpi.h"
#include "opts.h"
#include "retest.h"
#include "schedule.h"
#include "signals.h"
#include "stop.h"
#include "topo.h"
#include "util.h"
#include "verdict.h"
#include "verdict_cli.h"


/* --- options ------------------------------------------------------------------------------------ */


static const char usage_text[] =
	"[options]   (under mpirun/srun; --plan needs neither MPI nor hardware)\n\n"
	"Measures every (node, adapter) pair the pattern names, in contention-free rounds, measures failed\n"
	"and slow pairs again at the end (--retest), and says which adapters to drain and what NCCL_IB_HCA\n"
	"each node should use. Exit: 0 pass, 1 failures, 2 usage, 3 environment (or a report not written),\n"
	"128+signal when interrupted (130 SIGINT, 143 SIGTERM; finished pairs are in the reports).\n"
	"  --min-bw: 0.9 or 90% = fraction of the pair's link rate; 180G = absolute Gb/s; 0 = none";

/* Parse, validate, derive. Returns -1 to go on, or an exit status. */
static int opts_parse(struct mx_opts *o, int argc, char **argv)
{
	struct rp_opt table[RP_CLI_ENGINE_OPTS + RP_CLI_VERDICT_OPTS + RP_CLI_OPS_OPTS + 24];
	size_t n;
	int rc;

	memset(o, 0, sizeof(*o));
	rp_cli_engine_init(&o->eng);
	rp_cli_ops_init(&o->ops);
	o->pattern_s = "full";
	o->seed = 1;
	o->rate = 400;
	o->nodes = 1;
	rp_cli_verdict_init(&o->vc);
	n = rp_cli_engine_opts(&o->eng, table);
	n += rp_cli_verdict_opts(&o->vc, table + n);
	const struct rp_opt mine[] = {
		{ "dev", 'd', RP_OPT_STR, &o->dev_spec, 0, 0, "SPEC", "ports to use, NCCL_IB_HCA syntax (default: NCCL's selection)", NULL },
		{ "node", 0, RP_OPT_STR, &o->node_name, 0, 0, "NAME", "this rank's node name (default: host name)", NULL },
		{ "per-gpu", 0, RP_OPT_FLAG, &o->per_gpu, 0, 0, NULL, "one rank per GPU: the local rank's GPU and its nearest adapter(s)", NULL },
		{ "pattern", 'p', RP_OPT_STR, &o->pattern_s, 0, 0, "P", "full, rail, intra, shift, sample:K (default full)", NULL },
		{ "seed", 0, RP_OPT_U64, &o->seed, 0, 1.8e19, "N", "seed of sample:K (default 1)", NULL },
		{ "plan", 0, RP_OPT_FLAG, &o->plan, 0, 0, NULL, "print the schedule and estimates; no MPI, no hardware", NULL },
		{ "nodes", 0, RP_OPT_U64, &o->nodes, 1, 1 << 20, "N", "--plan: nodes (default 1)", &o->nodes_seen },
		{ "hcas", 0, RP_OPT_U64, &o->hcas, 1, 1024, "N", "--plan: ports per node (default: this node's selection)", &o->hcas_seen },
		{ "rate", 0, RP_OPT_DOUBLE, &o->rate, 0.001, 1e6, "GBPS", "--plan with --hcas: link rate (default 400)", &o->rate_seen },
		{ "html", 0, RP_OPT_STR, &o->html, 0, 0, "FILE", "write a self-contained HTML page", NULL },
		{ "junit", 0, RP_OPT_STR, &o->junit, 0, 0, "FILE", "write JUnit XML (each pair a test case)", NULL },
		{ "summary", 0, RP_OPT_FLAG, &o->summary, 0, 0, NULL, "per-node summary on stdout even for small runs", NULL },
		{ "round-timeout", 0, RP_OPT_SECONDS, &o->round_timeout, 1, 86400, "S", "wait this long for a round's reports (default: from --timeout)", &o->round_timeout_seen },
	};

	memcpy(table + n, mine, sizeof(mine));
	n += RP_ARRAY_SIZE(mine);
	n += rp_cli_ops_opts(&o->ops, table + n);
	memset(table + n, 0, sizeof(table[0]));
	rc = rp_opts_parse("matrix", usage_text, table, argc, argv, NULL, 0, NULL);
	if (rc == 1)
		return RP_EXIT_OK;
	if (rc)
		return RP_EXIT_USAGE;
	o->retest = o->eng.retest;   /* --retest is in the engine's shared table: here, extra rounds at the end */
	o->vc.retest = o->eng.retest;
	if (rp_pattern_parse(o->pattern_s, &o->pattern) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --pattern %s: one of full, rail, intra, shift, sample:K (K >= 1)\n", o->pattern_s);
		return RP_EXIT_USAGE;
	}
	rp_pattern_str(&o->pattern, o->pattern_text, sizeof(o->pattern_text));
	if (o->eng.all) {
		fprintf(stderr, "rdmaprobe matrix: -a/--all is for loopback and pair; give one -s\n");
		return RP_EXIT_USAGE;
	}
	rc = rp_cli_verdict_finish(&o->vc, "matrix", o->eng.latency);
	if (rc)
		return rc;
	if (!o->plan && (o->nodes_seen || o->hcas_seen || o->rate_seen)) {
		fprintf(stderr, "rdmaprobe matrix: --nodes, --hcas and --rate describe a cluster for --plan only\n");
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
	rc = rp_cli_engine_finish(&o->eng, "matrix");
	if (!rc && !o->plan)
		rc = rp_cli_ops_finish(&o->ops, "matrix");
	if (rc)
		return rc;
	if (o->eng.cfg.run_limit_s <= 0)
		o->eng.cfg.run_limit_s = o->eng.cfg.meas.duration_s > 0 ? o->eng.cfg.meas.duration_s + 2 * o->eng.cfg.timeout_s
									   : 4 * o->eng.cfg.timeout_s;
	return -1;
}

/* --plan: the cluster described by --nodes/--hcas/--rate, or this node's selection. */
static int run_plan(struct mx_opts *o)
{
	struct mx_wire_ep local[MX_MAX_LOCAL];
	double rail_gbps[MX_MAX_LOCAL];
	size_t n_local = 0;
	char err[256] = "";
	int status;

	if (!o->hcas_seen) {
		status = mx_local_ports(o, 0, local, &n_local, err, sizeof(err));
		if (!status && n_local == 1 && (local[0].flags & MX_EP_NO_PORT))
			status = o->dev_spec ? RP_EXIT_USAGE : RP_EXIT_ENV;
		if (status) {
			fprintf(stderr, "rdmaprobe matrix: --plan without --hcas uses this node's ports: %s\n", err);
			return status;
		}
		o->hcas = n_local;
		for (size_t i = 0; i < n_local; i++)
			rail_gbps[i] = local[i].link_gbps > 0 ? local[i].link_gbps : o->rate;
	}
	return mx_plan_print(&(struct mx_plan_in){ .cfg = &o->eng.cfg, .pattern = &o->pattern,
						   .pattern_text = o->pattern_text, .seed = o->seed, .nodes = o->nodes,
						   .hcas = o->hcas, .rail_gbps = o->hcas_seen ? NULL : rail_gbps,
						   .rate = o->rate });
}

/* --- the run --------------------------------------------------------------------------------------- */

static double round_budget(const struct mx_opts *o)
{
	const struct rp_engine_cfg *c = &o->eng.cfg;

	if (o->round_timeout_seen)
		return o->round_timeout;
	return 2 * (4 * c->timeout_s + c->run_limit_s + 1) + 2;
}

static char *cmd_line_join(int argc, char **argv)
{
	size_t len = 32;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	strcat(s, "rdmaprobe matrix");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* What the run keeps: rank 0's results and files, every rank's context. */
struct mx_run {
	struct mx_opts *o;
	struct mx_ctx ctx;
	struct mx_results mr;         /* rank 0 */
	struct mx_out out;            /* rank 0 */
	struct rp_endpoint *rep_eps;  /* the endpoints as the verdict sees them */
	struct rp_pair_result *got;   /* one round's results, 2 per job */
	struct mx_job *jobs;
	size_t failed, next_round;
	double t0, last_write, write_cost;
	bool dirty;
};

static void files_write(struct mx_run *R)
{
	double w0 = rp_now();

	R->out.elapsed_s = w0 - R->t0;
	R->out.stop_sig = R->ctx.stop_sig ? R->ctx.stop_sig : rp_stop_signal();
	mx_write_files(&R->out, NULL, NULL);
	R->last_write = rp_now();
	R->write_cost = R->last_write - w0;
	R->dirty = false;
}

/* A stop arrived mid-round: what finished is written before mpirun's SIGKILL follows its SIGTERM. */
static void files_flush(void *arg)
{
	struct mx_run *R = arg;

	if (R->dirty)
		files_write(R);
}

/* After a round: rewrite the files, but spend at most a fifth of the time writing. */
static void files_after_round(struct mx_run *R)
{
	R->dirty = true;
	if (R->ctx.stop_sig || rp_stop_requested() || rp_now() - R->last_write >= 4 * R->write_cost)
		files_write(R);
}

static void progress(const struct mx_run *R, const char *what, size_t round, size_t n_rounds)
{
	double took = rp_now() - R->t0, per = took / (double)(R->next_round ? R->next_round : 1);

	fprintf(stderr, "rdmaprobe matrix: %s %zu of %zu done: %zu pairs measured, %zu failed so far, %.0f s in, "
			"~%.0f s left\n", what, round + 1, n_rounds, R->mr.n, R->failed, took,
		per * (double)(n_rounds - round - 1));
}

/* The planned rounds. 0 all ran, 1 stopped (a signal), negative errno as mx_round. */
static int planned_rounds(struct mx_run *R, struct rp_sched *s, struct rp_sched_pair *pairs)
{
	struct mx_ctx *c = &R->ctx;
	size_t n_rounds = rp_sched_n_rounds(s);

	for (size_t r = 0; r < n_rounds; r++) {
		size_t got = 0;
		int rc;

		rp_sched_round(s, r, pairs, c->max_pairs, &got);
		for (size_t i = 0; i < got; i++)
			R->jobs[i] = (struct mx_job){ .a = pairs[i].a, .b = pairs[i].b, .dirs = 3 };
		rc = mx_round(c, R->next_round++, R->jobs, got, R->got);
		if (rc < 0)
			return rc;
		if (c->rank == 0) {
			for (size_t i = 0; i < 2 * got; i++) {
				if (R->got[i].status == RP_ST_INTERRUPTED)
					continue;         /* not measured: not a result, never a drain */
				R->failed += R->got[i].status != RP_ST_OK;
				if (mx_results_add(&R->mr, &R->got[i], i % 2 ? pairs[i / 2].b : pairs[i / 2].a,
						   i % 2 ? pairs[i / 2].a : pairs[i / 2].b) != 0) {
					mx_round_go(c, R->next_round - 1);
					return -ENOMEM;
				}
			}
			R->out.rounds_done = r + 1;
			progress(R, "round", r, n_rounds);
			files_after_round(R);
			rc = mx_round_go(c, R->next_round - 1);
		}
		if (rc == 1)
			return 1;
	}
	return 0;
}

/* Rank 0: the pairs to measure again, from the results as the verdict judges them now. */
static int retest_plan(struct mx_run *R, struct rp_mx_retest **plan_p, size_t *n_p, size_t *n_rounds_p,
		       struct rp_pair_result **judged_p)
{
	struct mx_ctx *c = &R->ctx;
	struct rp_pair_result *judged = malloc((R->mr.n ? R->mr.n : 1) * sizeof(*judged));
	bool *gone = calloc(c->n_eps, sizeof(*gone));
	struct rp_verdict v;
	int rc = -ENOMEM;

	if (!judged || !gone)
		goto out;
	memcpy(judged, R->mr.res, R->mr.n * sizeof(*judged));
	rc = rp_verdict_apply(&R->o->vc.cfg, R->rep_eps, c->n_eps, R->mr.pair_eps, judged, R->mr.n, &v);
	rp_verdict_fini(&v);
	if (rc)
		goto out;
	for (size_t e = 0; e < c->n_eps; e++)
		gone[e] = c->dead[c->eps[e].owner] || c->eps[e].no_port[0];
	rc = rp_mx_retest_plan(c->cfg, R->mr.pair_eps, judged, R->mr.n, gone, c->n_eps, (unsigned)R->o->retest, plan_p,
			       n_p, n_rounds_p);
out:
	free(gone);
	if (rc) {
		free(judged);
		judged = NULL;
	}
	*judged_p = judged;
	return rc;
}

/* Rank 0: fold one retest round's results into the kept ones. */
static void retest_fold(struct mx_run *R, const struct rp_mx_retest *plan, const size_t *which, size_t n,
			const struct rp_pair_result *judged)
{
	for (size_t i = 0; i < n; i++) {
		const struct rp_mx_retest *p = &plan[which[i]];

		for (int d = 0; d < 2; d++) {
			if (!(p->dirs & (1u << d)) || R->got[2 * i + d].status == RP_ST_INTERRUPTED)
				continue;         /* not measured again: the pair stays unconfirmed */
			R->failed -= R->mr.res[p->res[d]].status != RP_ST_OK;
			rp_mx_retest_fold(&R->mr.res[p->res[d]], judged[p->res[d]].status, R->ctx.cfg->qp.qp_timeout,
					  &R->got[2 * i + d], p->qp_timeout);
			R->failed += R->mr.res[p->res[d]].status != RP_ST_OK;
		}
	}
}

/* One set of retest rounds over a plan every rank has. 0, 1 stopped, negative errno. */
static int retest_run(struct mx_run *R, const struct mx_job *jobs, const uint32_t *round_of, size_t n,
		      const struct rp_mx_retest *plan, const struct rp_pair_result *judged)
{
	size_t n_rounds = 0, *which = calloc(n ? n : 1, sizeof(*which));
	int rc = 0;

	if (!which)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		n_rounds = round_of[i] + 1 > n_rounds ? round_of[i] + 1 : n_rounds;
	for (size_t k = 0; k < n_rounds && rc == 0; k++) {
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (round_of[i] == k) {
				R->jobs[m] = jobs[i];
				which[m++] = i;
			}
		rc = mx_round(&R->ctx, R->next_round++, R->jobs, m, R->got);
		if (rc >= 0 && R->ctx.rank == 0) {
			retest_fold(R, plan, which, m, judged);
			R->out.retest_rounds++;
			progress(R, "retest round", k, n_rounds);
			files_after_round(R);
			rc = mx_round_go(&R->ctx, R->next_round - 1);
		}
	}
	free(which);
	return rc;
}

/* After the planned rounds: up to --retest sets of extra rounds, each over the pairs that still fail.
 * 0, 1 stopped, negative errno. */
static int retest_rounds(struct mx_run *R)
{
	struct mx_ctx *c = &R->ctx;
	int rc = 0;

	for (uint64_t phase = 0; phase < R->o->retest && rc == 0; phase++) {
		struct rp_mx_retest *plan = NULL;
		struct rp_pair_result *judged = NULL;
		struct mx_job *jobs = NULL;
		uint32_t *round_of = NULL;
		size_t n = 0, n_rounds = 0;

		if (c->rank == 0) {
			rc = retest_plan(R, &plan, &n, &n_rounds, &judged);
			jobs = calloc(n ? n : 1, sizeof(*jobs));
			round_of = calloc(n ? n : 1, sizeof(*round_of));
			if (!rc && (!jobs || !round_of))
				rc = -ENOMEM;
			for (size_t i = 0; !rc && i < n; i++) {
				jobs[i] = (struct mx_job){ .a = plan[i].a, .b = plan[i].b, .dirs = plan[i].dirs,
							   .qp_timeout = plan[i].qp_timeout };
				round_of[i] = plan[i].round;
			}
			if (rc)
				n = 0;        /* the others are told there is nothing more; rank 0 reports the error */
			mx_plan_send(c, R->next_round, jobs, round_of, n);
			if (n)
				fprintf(stderr, "rdmaprobe matrix: measuring %zu pair%s again in %zu extra round%s\n", n,
					n == 1 ? "" : "s", n_rounds, n_rounds == 1 ? "" : "s");
		} else {
			rc = mx_plan_wait(c, R->next_round, &jobs, &round_of, &n, rp_now() + 2 * c->budget + 10);
		}
		if (!rc && n)
			rc = retest_run(R, jobs, round_of, n, plan, judged);
		free(plan);
		free(judged);
		free(jobs);
		free(round_of);
		if (!rc && n == 0)
			break;
	}
	return rc;
}

/* The table, the schedule and the context every rank agrees on. Returns -1 to go on, or a status. */
static int run_setup(struct mx_run *R, const struct rp_mpi_info *mi, struct mx_ep **eps_p, struct rp_sched **s_p,
		     struct rp_sched_pair **pairs_p)
{
	size_t n_eps = 0, n_nodes = 0;
	struct rp_sched_ep *se;
	int status = mx_gather_table(R->o, mi, eps_p, &n_eps);

	if (!status && n_eps < 2) {
		if (mi->rank == 0)
			fprintf(stderr, "rdmaprobe matrix: %zu endpoint(s) in all: nothing to pair\n", n_eps);
		status = RP_EXIT_ENV;
	}
	if (status)
		return status;
	se = mx_sched_eps(*eps_p, n_eps, &n_nodes);
	R->ctx.dead = calloc((size_t)mi->size, sizeof(bool));
	R->rep_eps = calloc(n_eps, sizeof(*R->rep_eps));
	if (!se || !R->ctx.dead || !R->rep_eps || rp_sched_create(se, n_eps, &R->o->pattern, R->o->seed, s_p) != 0) {
		status = se && R->ctx.dead && R->rep_eps ? RP_EXIT_USAGE : RP_EXIT_ENV;
		free(se);
		return status;
	}
	free(se);
	for (size_t e = 0; e < n_eps; e++)
		R->rep_eps[e] = (*eps_p)[e].ep;
	R->ctx.cfg = &R->o->eng.cfg;
	R->ctx.eps = *eps_p;
	R->ctx.n_eps = n_eps;
	R->ctx.rank = mi->rank;
	R->ctx.n_ranks = mi->size;
	R->ctx.max_pairs = rp_sched_max_round_pairs(*s_p);
	R->ctx.budget = round_budget(R->o);
	/* a retest round holds at most one job per endpoint pair, so E/2 jobs; a planned one max_pairs */
	R->jobs = calloc(R->ctx.max_pairs + n_eps, sizeof(*R->jobs));
	R->got = calloc(2 * (R->ctx.max_pairs + n_eps), sizeof(*R->got));
	*pairs_p = calloc(R->ctx.max_pairs ? R->ctx.max_pairs : 1, sizeof(**pairs_p));
	if (!R->jobs || !R->got || !*pairs_p)
		return RP_EXIT_ENV;
	if (mi->rank == 0)
		fprintf(stderr, "rdmaprobe matrix: %zu endpoints on %zu nodes, %d ranks, pattern %s: %zu rounds, %llu pairs "
				"(both directions), round deadline %.0f s, retest %llu\n", n_eps, n_nodes, mi->size,
			R->o->pattern_text, rp_sched_n_rounds(*s_p), (unsigned long long)rp_sched_n_pairs(*s_p),
			R->ctx.budget, (unsigned long long)R->o->retest);
	return -1;
}

/* Rank 0 after the rounds: the files, the verdict and the results on stdout (even when a file could
 * not be written: every round was measured), and the exit status. */
static int run_finish(struct mx_run *R, int status)
{
	struct rp_verdict v;
	struct rp_pair_result *judged = NULL;
	int wrc;

	R->out.elapsed_s = rp_now() - R->t0;
	R->out.stop_sig = R->ctx.stop_sig ? R->ctx.stop_sig : rp_stop_signal();
	wrc = mx_write_files(&R->out, &v, &judged);
	if (judged) {
		mx_print(&R->out, &v, judged);
		if (rp_cli_ops_baseline_print(R->out.ops) && !status)
			status = RP_EXIT_FAIL;
		if (!status)
			status = v.pass && R->out.rounds_done == R->out.n_rounds ? RP_EXIT_OK : RP_EXIT_FAIL;
		rp_verdict_fini(&v);
		free(judged);
	}
	if (wrc)
		return RP_EXIT_ENV;
	if (R->out.stop_sig)
		return 128 + R->out.stop_sig;
	return status;
}

static int run_matrix(struct mx_opts *o, int argc, char **argv)
{
	struct rp_mpi_info mi;
	struct mx_ep *eps = NULL;
	struct rp_sched *s = NULL;
	struct rp_sched_pair *pairs = NULL;
	struct mx_run R = { .o = o };
	bool any_dead = false;
	char *cmd_line = cmd_line_join(argc, argv);
	int status, rc;

	if (rp_mpi_init(&argc, &argv, &mi) != 0) {
		fprintf(stderr, "rdmaprobe matrix: MPI did not start (see above)\n");
		free(cmd_line);
		return RP_EXIT_ENV;
	}
	if (rp_signals_install() != 0)
		fprintf(stderr, "rdmaprobe matrix: rank %d: could not install the SIGINT/SIGTERM handlers\n", mi.rank);
	status = run_setup(&R, &mi, &eps, &s, &pairs);
	if (status >= 0)
		goto out;
	status = RP_EXIT_OK;
	R.t0 = rp_now();              /* "time left" counts the rounds, not the start-up */
	R.out = (struct mx_out){
		.cmd_line = cmd_line, .argc = argc, .argv = argv, .cfg = &o->eng.cfg, .pattern = o->pattern_text,
		.seed = o->seed, .vcfg = &o->vc.cfg, .eps = eps, .n_eps = R.ctx.n_eps, .results = &R.mr,
		.n_rounds = rp_sched_n_rounds(s), .started_wall = (double)time(NULL), .json = o->eng.json,
		.csv = o->eng.csv, .html = o->html, .junit = o->junit, .summary_only = o->summary,
		.max_retest = (unsigned)o->retest, .nccl_ver = &o->eng.ver, .rank_ver = o->rank_ver,
		.n_rank_ver = o->n_rank_ver, .ops = &o->ops,
	};
	if (mi.rank == 0) {
		R.ctx.flush = files_flush;
		R.ctx.hold_go = true;    /* the files are written before the ranks move on (mx_round_go) */
		R.ctx.flush_arg = &R;
	}
	rc = planned_rounds(&R, s, pairs);
	if (rc == 0)
		rc = retest_rounds(&R);
	if (rc == -ENOMEM) {
		fprintf(stderr, "rdmaprobe matrix: rank %d: out of memory keeping results\n", mi.rank);
		status = RP_EXIT_ENV;
	} else if (rc == -ETIMEDOUT) {
		fprintf(stderr, "rdmaprobe matrix: rank %d: rank 0 did not answer after round %zu: stopping\n", mi.rank,
			R.next_round);
		status = RP_EXIT_ENV;
		any_dead = true;
	} else if (rc == -ECANCELED) {
		fprintf(stderr, "rdmaprobe matrix: rank %d: rank 0 gave up on this rank after round %zu\n", mi.rank,
			R.next_round);
		status = RP_EXIT_FAIL;
		any_dead = true;
	} else if (rc < 0) {
		status = RP_EXIT_FAIL;
	}
	if (R.ctx.stop_sig && mi.rank == 0)
		fprintf(stderr, "rdmaprobe matrix: interrupted (signal %d) after %zu of %zu rounds\n", R.ctx.stop_sig,
			R.out.rounds_done, R.out.n_rounds);
	for (int r = 0; R.ctx.dead && r < mi.size; r++)
		any_dead |= R.ctx.dead[r];
	if (mi.rank == 0 && rc != -ENOMEM)
		status = run_finish(&R, status);
	else if (R.ctx.stop_sig && !status)
		status = 128 + R.ctx.stop_sig;
out:
	free(pairs);
	rp_sched_destroy(s);
	free(eps);
	free(o->rank_ver);
	o->rank_ver = NULL;
	free(R.ctx.dead);
	free(R.rep_eps);
	free(R.jobs);
	free(R.got);
	mx_results_fini(&R.mr);
	free(cmd_line);
	fflush(stdout);
	fflush(stderr);
	/* MPI_Finalize synchronises with every rank; with one gone it could wait forever. */
	if (!any_dead)
		rp_mpi_finalize();
	return status;
}

static int matrix_launch(struct mx_opts *o, int argc, char **argv)
{
	if (!rp_mpi_compiled()) {
		fprintf(stderr, "rdmaprobe matrix: this rdmaprobe was built without MPI (install an MPI with mpicc and "
				"rebuild); only --plan works\n");
		return RP_EXIT_ENV;
	}
	if (!rp_mpi_launched()) {
		fprintf(stderr, "rdmaprobe matrix: not started by an MPI launcher: run it as 'mpirun -np N rdmaprobe matrix "
				"...' or 'srun rdmaprobe matrix ...' (or use --plan)\n");
		return RP_EXIT_ENV;
	}
	return run_matrix(o, argc, argv);
}

int cmd_matrix(int argc, char **argv)
{
	struct mx_opts o;
	int rc = opts_parse(&o, argc, argv);

	if (rc < 0)
		rc = o.plan ? run_plan(&o) : matrix_launch(&o, argc, argv);
	rp_cli_ops_fini(&o.ops);
	return rc;
}
