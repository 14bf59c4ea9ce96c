/* cmd_matrix.c: 'rdmaprobe matrix': every (node, adapter) pair of a cluster under mpirun/srun, in
 * contention-free rounds, with a verdict per node. MPI is the only side channel.
 *
 * The front end: options (cmd_matrix_opts.c), then lib/: every rank selects its ports (lib/mx_ports)
 * and shares them (lib/mx_table: one exchange at start, which also agrees on the run's nonce), agrees on the
 * schedule (a pure function of the table) and runs the rounds (lib/mx_run: planned rounds, then up
 * to --retest sets of extra rounds). Rank 0 rewrites the reports after rounds (matrix_out.c, from
 * mx_run's round_done hook: while the next round runs after a planned round, before the ranks go on
 * after any other) and prints the verdict. A signal on any rank
 * stops every rank at the end of the round in progress; the exit status is then 128 + the signal.
 * --concurrent-rails (--pattern rail only): each round rail by rail, then whole (lib/matrix/mx_conc.h); a
 * pair that fails under load fails the run, a concurrent_drop is a warning.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "engine_cli.h"
#include "base/log.h"
#include "matrix.h"
#include "matrix/mx_progress.h"
#include "job/mx_ports.h"
#include "matrix/mx_run.h"
#include "job/mx_table.h"
#include "nccl/nccl.h"
#include "job/mpi_plugin.h"
#include "job/oob_mpi.h"
#include "opts.h"
#include "report/report_jsonl.h"
#include "job/mx_schedule.h"
#include "signals.h"
#include "base/stop.h"
#include "base/util.h"
#include "verdict/verdict.h"
#include "verdict_cli.h"


/* --- the ports, --plan ------------------------------------------------------------------------------ */

/* The port selection's options for this rank. */
static struct mx_port_opts port_opts(const struct matrix_opts *o, int local_rank, int local_size)
{
	return (struct mx_port_opts){ .dev_spec = o->dev_spec, .node_name = o->node_name,
				      .nccl_version = o->eng.ver.version, .gid_set = o->eng.gid_seen,
				      .gid_index = o->eng.gid_index, .per_gpu = o->per_gpu, .local_rank = local_rank,
				      .local_size = local_size };
}

/* lib's errors as exit statuses: a usage error, else the environment. */
static int err_status(int err)
{
	return err == -EINVAL ? RP_EXIT_USAGE : RP_EXIT_ENV;
}

/* --budget as given on the command line (for messages). */
static const char *budget_text(const struct matrix_opts *o)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "%g s", o->run.budget);
	return buf;
}

/* --plan: the cluster described by --nodes/--hcas/--rate, or this node's selection. */
static int run_plan(struct matrix_opts *o)
{
	struct mx_port_opts po = port_opts(o, 0, 1);
	struct mx_ports local;
	double rail_gbps[MX_MAX_LOCAL];
	int rc = rp_cli_check_outputs(&o->eng, "matrix");

	if (rc)
		return rc;
	if (!o->hcas_seen) {
		rc = mx_ports_select(&po, &local);
		int status = rc ? err_status(rc) : 0;

		if (!status && local.n == 1 && (local.eps[0].flags & MX_EP_NO_PORT))
			status = o->dev_spec ? RP_EXIT_USAGE : RP_EXIT_ENV;
		if (status) {
			fprintf(stderr, "rdmaprobe matrix: --plan without --hcas uses this node's ports: %s\n", local.why);
			return status;
		}
		o->hcas = local.n;
		for (size_t i = 0; i < local.n; i++)
			rail_gbps[i] = local.eps[i].link_gbps > 0 ? local.eps[i].link_gbps : o->rate;
	}
	return matrix_cli_plan_print(&(struct matrix_plan_in){ .cfg = &o->eng.cfg, .pattern = &o->pattern,
						   .pattern_text = o->pattern_text, .seed = o->run.seed, .nodes = o->nodes,
						   .hcas = o->hcas, .rail_gbps = o->hcas_seen ? NULL : rail_gbps,
						   .rate = o->rate, .settings = &o->settings, .calibrate_from = o->calibrate_from,
						   .plan_dead = o->run.plan_dead_s,
						   .allow_simulated = o->allow_simulated,
						   .budget_s = o->run.budget_seen ? o->run.budget : 0, .budget_text = budget_text(o),
						   .json = o->eng.json });
}

/* --- the run --------------------------------------------------------------------------------------- */

static double round_wait_of(const struct matrix_opts *o)
{
	const struct rp_engine_cfg *c = &o->eng.cfg;

	if (o->round_timeout_seen)
		return o->round_timeout;
	/* both directions of a pair, each: connection, run and results, plus the MTU probe of a pair
	 * that moved nothing (two short sequences of at most 2 s and their set-up) */
	return 2 * (4 * c->timeout_s + c->run_limit_s + 1 + 6) + 2;
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

/* What the front end keeps besides lib's run: rank 0's files and the timing of their writes. */
struct matrix_front {
	struct matrix_opts *o;
	struct mx_run run;
	struct mx_table table;
	struct rp_sched *sched;
	struct rp_endpoint *rep_eps;  /* the endpoints as the verdict sees them */
	struct matrix_out out;            /* rank 0 */
	struct rp_jsonl jsonl;        /* rank 0, --jsonl; fd -1 without */
	double t0, last_write, write_cost;
	double t_launch;              /* before MPI_Init: the start-up's clock */
	bool dirty;
	struct mx_plan_model model;   /* --budget: the plan's model (calibrated on every rank) */
	struct mx_plan_choice choice; /* --budget: what it chose (pattern, message size) and why */
	uint64_t msg_size_req;        /* -s as given (--budget may measure with a smaller size) */
	struct mx_coverage coverage;  /* rank 0, at the end */
	struct rp_sched_ep *sched_eps;   /* the schedule's view of the table */
	struct mx_progress prog;      /* rank 0: the progress line's clock */
	size_t sweep_k, sweep_n;      /* rank 0: the sweep's first pass, rounds done and in all */
	/* rank 0: the final reports and verdict were written and printed as soon as a stop arrived (mpirun
	 * follows its SIGTERM with a SIGKILL a second later), with these counts */
	bool early;
	size_t early_pairs, early_ok, early_failed;
};

/* The run's figures as of now into the reports' view. */
static void out_refresh(struct matrix_front *F, double now)
{
	F->out.elapsed_s = now - F->t0;
	F->out.sweep_s = F->run.sweep.elapsed_s;
	F->out.stop_sig = F->run.ctx.stop_sig ? F->run.ctx.stop_sig : rp_stop_signal();
	F->out.rounds_done = F->run.rounds_done;
	F->out.rounds_run = F->run.scheduled_run;
	F->out.retest_rounds = F->run.retest_rounds;
}

static void files_write(struct matrix_front *F)
{
	double w0 = rp_now();

	out_refresh(F, w0);
	matrix_cli_write_files(&F->out, NULL, NULL);
	F->run.failed = mx_results_failed(&F->run.mr);   /* as the verdict judged them */
	F->last_write = rp_now();
	F->write_cost = F->last_write - w0;
	F->dirty = false;
}

/* Rank 0's final reports: the coverage of the rounds done, every file with the verdict, and, when
 * print is set, the person's view (the verdict, the coverage). Returns matrix_cli_write_files()'s status; the
 * verdict stays in *v when *judged (the caller calls rp_verdict_fini). */
static int final_write(struct matrix_front *F, struct rp_verdict *v, bool *judged, bool print)
{
	int wrc;

	out_refresh(F, rp_now());
	if (mx_coverage_compute(F->sched_eps, F->table.n_eps, &F->o->pattern_req, F->sched,
				mx_coverage_sched_rounds(F->sched, F->o->concurrent_rails, F->out.rounds_done),
				&F->coverage) == 0) {
		mx_coverage_set_run(&F->coverage, F->msg_size_req, F->o->eng.cfg.meas.msg_size,
				    F->o->run.budget_seen ? &F->choice : NULL, &F->o->pattern_req);
		F->out.coverage = &F->coverage;
	}
	wrc = matrix_cli_write_files(&F->out, v, judged);
	if (*judged && print) {
		matrix_cli_print(&F->out, v);
		if (F->out.coverage)
			matrix_cli_coverage_print(&F->coverage, F->o->pattern_req_text, F->o->pattern_text, F->out.budget_s);
		fflush(stdout);
	}
	return wrc;
}

/* A stop arrived mid-round (rank 0 waiting for the round): mpirun follows its SIGTERM with a SIGKILL
 * a second later, so the final reports (coverage, the INTERRUPTED verdict) are written and the
 * verdict printed now, from the rounds done, not after the round (it was lost: stdout empty, the
 * JSON without its coverage). */
static void files_flush(void *arg)
{
	struct matrix_front *F = arg;
	struct rp_verdict v;
	bool judged = false;

	if (F->early)
		return;
	F->early = true;
	fprintf(stderr, "rdmaprobe matrix: stopped by signal %d: the final reports and the verdict of the %zu round%s "
			"done, now\n", rp_stop_signal(), F->run.rounds_done, F->run.rounds_done == 1 ? "" : "s");
	final_write(F, &v, &judged, true);
	if (judged) {
		F->early_pairs = v.n_pairs;
		F->early_ok = v.n_ok;
		F->early_failed = v.n_failed;
		rp_verdict_fini(&v);
	}
	F->dirty = false;
}

/* The time left: the rounds and sweep rounds still to run, then what follows them. */
static double eta_of(const struct matrix_front *F, size_t rounds_left)
{
	double eta = mx_progress_eta(&F->prog, rounds_left, F->sweep_n - F->sweep_k);

	return eta < 0 ? eta : eta + mx_progress_tail(F->run.sweep.n_pending, F->o->eng.cfg.timeout_s +
							       RP_ENGINE_MTUCHECK_TIMEOUT_S, F->write_cost);
}

/* Rank 0 after a round (mx_run.h: a planned one while the next runs): the progress line, the round's
 * --jsonl lines, then the files when due (mx_progress_write_due: the first round's, then at most one
 * rewrite in 30 s and a fifth of the time). */
static void round_done(void *arg, bool retest, size_t k, size_t n_rounds)
{
	struct matrix_front *F = arg;
	struct rp_pair_result tmp;
	double now = rp_now();
	char line[256];
	/* a planned round a stop cut short is not done: said so, as the final lines count it */
	bool cut = !retest && !F->run.in_late && F->run.rounds_done < F->run.scheduled_run;

	mx_progress_note(&F->prog, false, now - F->t0);
	if (cut) {
		fprintf(stderr, "rdmaprobe matrix: round %zu of %zu cut short by signal %d: %zu pairs measured, %zu failed "
				"so far, %.0f s in\n", k + 1, n_rounds, F->run.ctx.stop_sig ? F->run.ctx.stop_sig : rp_stop_signal(),
			F->run.mr.n, F->run.failed, now - F->t0);
	} else if (mx_progress_due(&F->prog, now, k + 1 == n_rounds)) {
		mx_progress_format(line, sizeof(line), retest ? "retest round" : F->run.in_late ? "late round" : "round", k + 1,
				   n_rounds, F->sweep_k, F->sweep_n, mx_results_failed(&F->run.mr), now - F->t0,
				   eta_of(F, n_rounds - k - 1));
		fprintf(stderr, "rdmaprobe matrix: %s\n", line);
	}
	F->dirty = true;
	/* Every result of the round on its line before anything else is written (an error is logged
	 * once and ends the stream, not the run: the summary files still hold everything). */
	for (size_t i = 0; i < F->run.n_touched && F->jsonl.fd >= 0 && !F->jsonl.err; i++)
		rp_jsonl_pairs(&F->jsonl, mx_results_get(&F->run.mr, F->run.touched[i], &tmp), 1, (unsigned)F->run.hook_round, retest);
	if (mx_progress_write_due(F->last_write > 0 ? rp_now() - F->last_write : -1, F->write_cost,
				  F->run.ctx.stop_sig || rp_stop_requested()))
		files_write(F);
}

/* Rank 0 after a sweep round: the progress line, the round's failures on their lines. */
static void sweep_done(void *arg, int pass, size_t k, size_t n_rounds)
{
	struct matrix_front *F = arg;
	struct rp_pair_result tmp;
	size_t failed = F->run.sweep.screen_s > 0 && pass == 1 ? F->run.sweep.n_pending : F->run.failed;

	mx_progress_note(&F->prog, true, rp_now() - F->t0);
	if (pass == 1) {
		F->sweep_k = k + 1;
		F->sweep_n = n_rounds;
	}
	if (mx_progress_due(&F->prog, rp_now(), k + 1 == n_rounds))
		fprintf(stderr, "rdmaprobe matrix: reachability %s %zu of %zu done: %zu direction%s failed %s, %.0f s in\n",
			pass == 3 ? "dead-endpoint confirmation after screen" : pass == 4 ? "sweep retest beside the rounds"
			: pass == 2 ? "sweep retest"
			: F->run.sweep.screen_s > 0 ? "screen" : "sweep", k + 1, n_rounds, failed,
			failed == 1 ? "" : "s", pass == 1 && F->run.sweep.screen_s > 0 ? "it (to be probed again)" : "so far",
			rp_now() - F->t0);
	for (size_t i = 0; i < F->run.n_touched && F->jsonl.fd >= 0 && !F->jsonl.err; i++)
		rp_jsonl_pairs(&F->jsonl, mx_results_get(&F->run.mr, F->run.touched[i], &tmp), 1, (unsigned)F->run.hook_round,
			      pass == 2 || pass == 4);
}

static void retest_scheduled(void *arg, size_t n, size_t n_rounds)
{
	(void)arg;
	fprintf(stderr, "rdmaprobe matrix: measuring %zu pair%s again in %zu extra round%s\n", n, n == 1 ? "" : "s",
		n_rounds, n_rounds == 1 ? "" : "s");
}

/* This rank's ports, the start-up exchange, the table. Returns RP_EXIT_GO_ON to go on, or a status. */
static int table_setup(struct matrix_front *F, struct mx_comm *comm)
{
	struct matrix_opts *o = F->o;
	struct mx_port_opts po = port_opts(o, comm->local_rank, comm->local_size);
	struct mx_ports local;
	struct rp_node node;
	double t0 = rp_now();
	/* One rank per node reads the whole node: it also checks whether the job's NCCL would crash there
	 * (warning on stderr; the rank exits 1 at the end, so the launcher's status fails: a job setting,
	 * not an adapter to drain). The others read only what their selection names. */
	int err = comm->local_rank == 0 ? mx_ports_select_node(&po, &local, &node) : mx_ports_select(&po, &local);
	struct mx_offer mine = { .eps = local.eps, .n = local.n, .err = err, .why = local.why,
				 .nccl_version = o->eng.ver.version };
	/* --budget: every rank fits the same model and so makes the same choice; one that cannot read
	 * the file fails the start-up exchange for all (its reason on its stderr) */
	int cal = o->run.budget_seen ? matrix_cli_model_load(o->calibrate_from, o->allow_simulated, &F->model) : -1;

	struct mx_settings run;
	double t1;

	if (cal >= 0 && !err) {
		mine.err = cal == RP_EXIT_USAGE ? -EINVAL : -ENOMEM;
		mine.why = "--calibrate-from: the file cannot be used (see this rank's stderr)";
	}
	/* rank 0 writes the reports: a path it cannot write stops every rank before anything is measured
	 * (it used to measure the whole run and then exit 3) */
	if (comm->rank == 0 && !mine.err && matrix_cli_outputs_check(&o->eng, o->run.html, o->run.junit) != 0) {
		mine.err = -EINVAL;
		mine.why = "an output file cannot be written (named above): nothing was measured";
	}
	/* every rank must run rank 0's schedule (and so, with --budget, make its choice): the start-up
	 * refuses a rank started with other settings, naming it, rather than pairs waiting for a peer
	 * that runs other rounds */
	run = o->settings;                /* the digest takes every setting that orders the rounds */
	/* --plan-dead as given (the endpoints are not known yet): the budget's worst case */
	run.plan_dead = o->run.plan_dead_s ? (size_t)strtoull(o->run.plan_dead_s, NULL, 10) * 2 + (strchr(o->run.plan_dead_s, '%') != NULL)
				       : SIZE_MAX;   /* (the default follows --sweep and --retest, in the digest) */
	mine.sched_digest = mx_plan_digest(o->pattern_text, o->run.seed, &run, o->run.budget_seen ? o->run.budget : 0, &F->model);

	if (comm->local_rank == 0) {
		rp_cli_nccl_crash(&o->eng, "matrix", &node);
		rp_node_fini(&node);
	}
	mine.setup_s = rp_now() - t0;
	if (!err && local.gpu >= 0) {
		o->eng.cfg.src_mem.kind = o->eng.cfg.dst_mem.kind = "cuda";
		o->eng.cfg.src_mem.device = o->eng.cfg.dst_mem.device = local.gpu;
	}
	/* Rank 0 waits while ranks keep arriving: --startup-timeout of silence ends it (naming who is
	 * missing), and so does ten times that in all. */
	t1 = rp_now();
	if (mx_table_gather(comm, &mine, o->startup_timeout, 0, &F->table) != 0) {
		fprintf(stderr, "rdmaprobe matrix: rank %d: start-up exchange failed (see above): stopping the job\n",
			comm->rank);
		mx_comm_abort(comm, RP_EXIT_ENV);
		exit(RP_EXIT_ENV);
	}
	if (comm->rank == 0)
		fprintf(stderr, "rdmaprobe matrix: start-up %.1f s: MPI %.1f s, ports %.1f s here and %.1f s on the slowest "
				"rank (%d), exchange %.1f s\n", rp_now() - F->t_launch, t0 - F->t_launch, mine.setup_s,
			F->table.setup_max_s, F->table.setup_max_rank, rp_now() - t1);
	if (F->table.err)
		return err_status(F->table.err);
	if (F->table.n_eps < 2) {
		if (comm->rank == 0)
			fprintf(stderr, "rdmaprobe matrix: %zu endpoint(s) in all: nothing to pair\n", F->table.n_eps);
		return RP_EXIT_ENV;
	}
	return RP_EXIT_GO_ON;
}

/* --budget, on every rank from the same table and model: the pattern and message size that fit
 * replace the ones asked for (rank 0 says which and why). Returns RP_EXIT_GO_ON to go on, or a status (nothing
 * fits: 2, not run). The choice is not exchanged: the start-up already refused a rank whose budget or model (its
 * --calibrate-from file) is not rank 0's (mx_plan_digest), so every rank chooses the same. */
static int budget_choose(struct matrix_front *F, struct mx_comm *comm, const struct rp_sched_ep *se)
{
	struct matrix_opts *o = F->o;
	size_t n_eps = F->table.n_eps;
	double *gbps;
	struct mx_settings run;
	int status;

	F->msg_size_req = o->eng.cfg.meas.msg_size;
	if (!o->run.budget_seen || !se)
		return RP_EXIT_GO_ON;
	gbps = calloc(n_eps, sizeof(*gbps));
	if (!gbps)
		return RP_EXIT_ENV;
	for (size_t e = 0; e < n_eps; e++)
		gbps[e] = F->table.eps[e].ep.link_gbps > 0 ? F->table.eps[e].ep.link_gbps : o->rate;
	run = o->settings;
	status = matrix_cli_plan_dead_opt(o->run.plan_dead_s, n_eps, o->sweep && o->eng.retest, &run.plan_dead);
	if (status != RP_EXIT_GO_ON) {
		free(gbps);
		return status;
	}
	status = matrix_cli_budget_choose(se, n_eps, gbps, &o->pattern, o->pattern_text, o->run.seed, &F->model, &run, o->run.budget,
				budget_text(o), comm->rank == 0, &F->choice);
	free(gbps);
	if (status < 0) {
		o->pattern = F->choice.pattern;
		rp_pattern_str(&o->pattern, o->pattern_text, sizeof(o->pattern_text));
		o->eng.cfg.meas.msg_size = F->choice.msg_size;   /* what this rank measures (and rank 0 reports) with */
		o->settings.msg_size = F->choice.msg_size;       /* and the run's settings say so */
	}
	return status;
}

/* The table, the schedule and the context every rank agrees on. Returns RP_EXIT_GO_ON to go on, or a status. */
static int run_setup(struct matrix_front *F, struct mx_comm *comm)
{
	struct mx_ctx *c = &F->run.ctx;
	size_t n_nodes = 0, n_eps;
	struct rp_sched_ep *se;
	int status = table_setup(F, comm);

	if (status != RP_EXIT_GO_ON)
		return status;
	n_eps = F->table.n_eps;
	se = F->sched_eps = mx_sched_eps(F->table.eps, n_eps, &n_nodes);   /* kept: the coverage at the end */
	c->dead = calloc((size_t)comm->size, sizeof(bool));
	F->rep_eps = calloc(n_eps, sizeof(*F->rep_eps));
	status = budget_choose(F, comm, se);
	if (status != RP_EXIT_GO_ON)
		return status;
	if (!se || !c->dead || !F->rep_eps || rp_sched_create(se, n_eps, &F->o->pattern, F->o->run.seed, &F->sched) != 0)
		return se && c->dead && F->rep_eps ? RP_EXIT_USAGE : RP_EXIT_ENV;
	for (size_t e = 0; e < n_eps; e++)
		F->rep_eps[e] = F->table.eps[e].ep;
	*c = (struct mx_ctx){ .comm = comm, .cfg = &F->o->eng.cfg, .eps = F->table.eps, .n_eps = n_eps,
			      .rank = comm->rank, .n_ranks = comm->size, .dead = c->dead, .round_wait_s = round_wait_of(F->o) };
	F->run.sched = F->sched;
	F->run.vcfg = &F->o->vc.cfg;
	F->run.rep_eps = F->rep_eps;
	F->run.set = F->o->settings;
	if (mx_run_init(&F->run) != 0)
		return RP_EXIT_ENV;
	if (comm->rank == 0)
		fprintf(stderr, "rdmaprobe matrix: %zu endpoints on %zu nodes, %d ranks, pattern %s%s: %zu rounds, %llu pairs "
				"(both directions), round deadline %.0f s, retest %llu\n", n_eps, n_nodes, comm->size,
			F->o->pattern_text, F->o->concurrent_rails ? " (each round's rails alone, then all at once)" : "",
			F->run.n_scheduled, (unsigned long long)rp_sched_n_pairs(F->sched), c->round_wait_s,
			(unsigned long long)F->o->eng.retest);
	return RP_EXIT_GO_ON;
}

/* Rank 0 after the rounds: the files, the verdict and the results on stdout (even when a file could
 * not be written: every round was measured), and the exit status. */
static int run_finish(struct matrix_front *F, int status)
{
	struct rp_verdict v;
	bool judged = false, same;
	int wrc;

	out_refresh(F, rp_now());
	if (F->jsonl.fd >= 0 &&
	    rp_jsonl_close(&F->jsonl, !F->out.stop_sig && F->out.rounds_done == F->out.n_rounds) != 0 && !status)
		status = RP_EXIT_ENV;   /* the stream is a requested output: its loss is the run's error */
	/* after an early final (files_flush): the files again, with what the cut round finished; the
	 * view printed again only when the verdict's counts moved, and saying why */
	wrc = final_write(F, &v, &judged, !F->early);
	same = judged && v.n_pairs == F->early_pairs && v.n_ok == F->early_ok && v.n_failed == F->early_failed;
	if (judged && F->early && !same) {
		printf("after the interrupted round's last reports:\n");
		matrix_cli_print(&F->out, &v);
		if (F->out.coverage)
			matrix_cli_coverage_print(&F->coverage, F->o->pattern_req_text, F->o->pattern_text, F->out.budget_s);
	}
	if (judged) {
		if (rp_cli_ops_baseline_print(F->out.ops) && !status)
			status = RP_EXIT_FAIL;
		if (!status)
			status = matrix_cli_passed(&F->out, &v) ? RP_EXIT_OK : RP_EXIT_FAIL;
		rp_verdict_fini(&v);
	}
	if (wrc)
		return RP_EXIT_ENV;
	if (F->out.stop_sig)
		return 128 + F->out.stop_sig;
	return status;
}

/* The rounds' outcome as this rank's exit status (before rank 0's verdict). */
static int rounds_status(const struct matrix_front *F, int rc, bool *any_dead)
{
	const struct mx_ctx *c = &F->run.ctx;

	if (rc == -ENOMEM) {
		fprintf(stderr, "rdmaprobe matrix: rank %d: out of memory keeping results\n", c->rank);
		return RP_EXIT_ENV;
	}
	if (rc == -ETIMEDOUT || rc == -ECANCELED) {
		*any_dead = true;
		if (rc == -ETIMEDOUT)
			fprintf(stderr, "rdmaprobe matrix: rank %d: rank 0 did not answer after round %zu: stopping\n",
				c->rank, F->run.next_round);
		else
			fprintf(stderr, "rdmaprobe matrix: rank %d: rank 0 gave up on this rank after round %zu\n", c->rank,
				F->run.next_round);
		return rc == -ETIMEDOUT ? RP_EXIT_ENV : RP_EXIT_FAIL;
	}
	return rc < 0 ? RP_EXIT_FAIL : RP_EXIT_OK;
}

static void out_init(struct matrix_front *F, char *cmd_line, int argc, char **argv)
{
	struct matrix_opts *o = F->o;

	F->out = (struct matrix_out){
		.cmd_line = cmd_line, .argc = argc, .argv = argv, .cfg = &o->eng.cfg, .pattern = o->pattern_text,
		.seed = o->run.seed, .vcfg = &o->vc.cfg, .eps = F->table.eps, .n_eps = F->table.n_eps, .results = &F->run.mr, .judged = &F->run.judged,
		.n_rounds = F->run.n_scheduled, .started_wall = (double)time(NULL), .json = o->eng.json,
		.csv = o->eng.csv, .html = o->run.html, .junit = o->run.junit, .summary_only = o->run.summary, .nodes_all = o->run.nodes_all, .junit_pairs = o->run.junit_pairs,
		.max_retest = (unsigned)o->eng.retest, .nccl_ver = &o->eng.ver, .rank_ver = F->table.rank_ver,
		.n_rank_ver = F->table.n_rank_ver, .drift = &F->table.drift, .ops = &o->ops, .sweep = &F->run.sweep,
		.sweep_off = o->sweep_off, .hold = o->hold, .hold_off = o->hold_off, .run = &F->run,
		.conc = o->concurrent_rails ? &F->run.conc : NULL, .conc_drop = o->conc_drop,
		.startup_s = F->t0 - o->t_start, .pattern_requested = o->pattern_req_text,
		.budget_s = o->run.budget_seen ? o->run.budget : 0,
		.list_notable = rp_report_list_notable_only(o->list_pairs, 2 * rp_sched_n_pairs(F->sched), false),
	};
	F->jsonl.fd = -1;
	if (F->run.ctx.rank == 0 && o->run.jsonl) {
		struct rp_report_info info = { .command = "matrix", .version = rp_version_string(), .argc = argc,
					       .argv = argv, .started = F->out.started_wall };

		if (rp_jsonl_open(&F->jsonl, o->run.jsonl, &info, false) != 0)
			fprintf(stderr, "rdmaprobe matrix: --jsonl %s: not streaming (see above); the other reports are written\n",
				o->run.jsonl);
		else
			F->out.jsonl = o->run.jsonl;
	}
	if (F->run.ctx.rank == 0 && F->out.list_notable)
		fprintf(stderr, "rdmaprobe matrix: the reports list the notable pairs only (failed, flaky, warned) and count "
				"the passes%s (--list-pairs all lists every one)\n",
			F->out.jsonl ? "; every pair is in the --jsonl stream" : "");
	if (F->run.ctx.rank == 0) {
		F->run.ctx.flush = files_flush;
		F->run.ctx.flush_arg = F;
		F->run.hooks = (struct mx_run_hooks){ .round_done = round_done, .retest_scheduled = retest_scheduled,
						    .sweep_done = sweep_done, .arg = F };
	}
}

static int run_matrix(const struct rp_mpi_plugin *mpi, struct matrix_opts *o, int argc, char **argv)
{
	struct mx_comm comm;
	struct matrix_front F = { .o = o, .t_launch = rp_now(),
			      .prog = { .interval_s = MX_PROGRESS_INTERVAL_S, .last_real = -1 } };
	bool any_dead = false;
	char *cmd_line = cmd_line_join(argc, argv);
	int status, rc;

	if (mpi->init(&argc, &argv, &comm) != 0) {
		fprintf(stderr, "rdmaprobe matrix: MPI did not start (see above)\n");
		free(cmd_line);
		return RP_EXIT_ENV;
	}
	/* the watchdog is armed when the rounds end on a stop (below), on every rank: a signalled rank
	 * still ends its round, which may last longer than --timeout */
	if (rp_signals_install() != 0 || rp_signals_watchdog(o->eng.timeout, false) != 0)
		fprintf(stderr, "rdmaprobe matrix: rank %d: could not install the SIGINT/SIGTERM handlers\n", comm.rank);
	status = run_setup(&F, &comm);
	if (status != RP_EXIT_GO_ON)
		goto out;
	F.t0 = rp_now();              /* "time left" counts the rounds, not the start-up */
	out_init(&F, cmd_line, argc, argv);
	rc = mx_run_rounds(&F.run);
	if (F.run.set.hold)
		fprintf(stderr, "rdmaprobe matrix: rank %d: %zu of %zu bandwidth directions it wrote ran on its probe's "
				"connection (%zu held after their probe)\n", comm.rank, F.run.holds.reused,
			F.run.holds.reused + F.run.holds.fresh, F.run.holds.made);
	status = rounds_status(&F, rc, &any_dead);
	/* stopped (signalled, or told by rank 0): the final reports, the teardown and MPI_Finalize get one
	 * --timeout; a finalize waiting for a rank that is gone (mpirun --enable-recovery keeps the job)
	 * kept mpirun running for minutes */
	if (F.run.ctx.stop_sig || rp_stop_requested())
		rp_signals_watchdog_arm(F.run.ctx.stop_sig ? F.run.ctx.stop_sig : rp_stop_signal(),
					comm.rank == 0 ? 4 * F.write_cost : 0);   /* rank 0: room for its final write */
	if (F.run.ctx.stop_sig && comm.rank == 0)
		fprintf(stderr, "rdmaprobe matrix: interrupted (signal %d) after %zu of %zu rounds done%s\n",
			F.run.ctx.stop_sig, F.run.rounds_done, F.out.n_rounds,
			F.run.scheduled_run > F.run.rounds_done ? " (and one cut short)" : "");
	for (int r = 0; F.run.ctx.dead && r < comm.size; r++)
		any_dead |= F.run.ctx.dead[r];
	if (comm.rank == 0 && rc != -ENOMEM)
		status = run_finish(&F, status);
	else if (F.run.ctx.stop_sig && !status)
		status = 128 + F.run.ctx.stop_sig;
	status = rp_cli_nccl_crash_status(&o->eng, status);
out:
	rp_sched_destroy(F.sched);
	free(F.sched_eps);
	mx_table_fini(&F.table);
	free(F.run.ctx.dead);
	free(F.rep_eps);
	mx_run_fini(&F.run);
	rp_cli_verdict_fini(&o->vc);
	free(cmd_line);
	fflush(stdout);
	fflush(stderr);
	/* MPI_Finalize synchronises with every rank; with one gone it could wait forever. */
	if (!any_dead)
		mpi->finalize();
	return status;
}

static int matrix_launch(struct matrix_opts *o, int argc, char **argv)
{
	const struct rp_mpi_plugin *mpi = NULL;
	char why[PATH_MAX * 2 + 64] = "";

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
	if (rp_mpi_plugin_load(&mpi, why, sizeof(why)) != 0) {
		fprintf(stderr, "rdmaprobe matrix: MPI cannot be loaded: %s. The matrix needs the MPI plugin "
				"(rdmaprobe-mpi.so, next to the binary or in its lib/rdmaprobe directory; or set "
				"RDMAPROBE_MPI_PLUGIN) and the MPI it was built with (Open MPI: libopenmpi3); every other "
				"command, and --plan, runs without them\n", why);
		return RP_EXIT_ENV;
	}
	return run_matrix(mpi, o, argc, argv);
}

int cmd_matrix(int argc, char **argv)
{
	if (matrix_cli_sim_requested(argc, argv))
		return cmd_matrix_sim(argc, argv);   /* --transport sim: cmd_sim.c */
	struct matrix_opts o;
	double t_start = rp_now();
	int rc = matrix_cli_opts_parse(&o, argc, argv);

	o.t_start = t_start;
	if (rc < 0)
		rc = o.plan ? run_plan(&o) : matrix_launch(&o, argc, argv);
	rp_cli_ops_fini(&o.ops);
	return rc;
}
