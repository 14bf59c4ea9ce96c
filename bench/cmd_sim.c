/* cmd_sim.c: 'rdmaprobe matrix --transport sim --fabric-model FILE': the matrix over a simulated
 * fabric, in one process, no MPI and no hardware (lib/sim/sim_run.h says what runs for real and what
 * does not). A branch of matrix, not a command of its own: the same options, schedule, rounds,
 * retest, verdict and report writers (matrix_out.c), so that a figure it gives is the matrix's.
 *
 * Everything it writes says SIMULATED: the JSON's top-level "simulated": true with "fabric_model"
 * and "simulation" (the figures below), the HTML's banner and title, the text's first and last
 * lines. The figures: the projected wall time of today's lock-step rounds (every round: its slowest
 * endpoint plus the model's round overhead; plus rank 0's collection of each round and its report
 * writes, real seconds on this host, during which every rank
 * waits for its go; start-up not included), the rounds, rank 0's peak memory and CPU time, and the
 * reports' sizes. Reports are rewritten after rounds on the same rule as a real run, applied to the
 * virtual clock (mx_progress_write_due: at most one rewrite in 30 s and a fifth of the time).
 *
 * Under mpirun/srun the ranks are the job's (lib/sim/sim_run.h: rank r drives the model's nodes k with
 * k % ranks == r): the start-up exchange, every round's reports and go, and the pairs' side channels
 * go over MPI as in a real run; rank 0 alone writes and prints, and its peak memory and CPU time are
 * then its own.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "cmds.h"
#include "engine_cli.h"
#include "matrix.h"
#include "job/mpi_plugin.h"
#include "matrix/mx_progress.h"
#include "matrix/mx_results.h"
#include "job/oob_mpi.h"
#include "opts.h"
#include "report/report_jsonl.h"
#include "job/mx_schedule.h"
#include "signals.h"
#include "sim/sim_run.h"
#include "base/stop.h"
#include "base/util.h"
#include "verdict_cli.h"

static const char usage_text[] =
	"--transport sim --fabric-model FILE [options]\n\n"
	"The matrix over a simulated fabric (lib/sim/sim_model.h documents the model file), in one process: the\n"
	"real schedule, rounds, retest, verdict and reports, every side answered from the model on a virtual\n"
	"clock. Every report says SIMULATED. Prints the projected wall time of the rounds, the rounds, and\n"
	"this process's (rank 0's) peak memory and CPU time. Under mpirun/srun the job's ranks share the\n"
	"model's nodes and talk over MPI as a real run does. Exit: 0 pass, 1 failures, 2 usage, 3 environment,\n"
	"128+signal when interrupted (130 SIGINT, 143 SIGTERM; the reports then say interrupted).";

struct sim_opts {
	struct rp_cli_engine eng;
	struct rp_cli_verdict vc;
	struct rp_cli_ops ops;        /* --prom, --baseline, --drop: as a real run */
	struct matrix_run_opts run;   /* the options of every matrix run (matrix.h); --budget with the
	                               * plan's (default) model, as a real run */
	const char *transport, *model;
	bool hold;
	char hold_off[160];
	enum rp_report_list_mode list_pairs;
	unsigned sweep;
	struct rp_pattern pattern;
	char pattern_text[32];
	struct mx_settings settings;  /* what orders and shapes the rounds, derived once (mx_settings_init): --budget
	                               * and the simulation take it whole, as a real run's */
};

bool matrix_cli_sim_requested(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--transport") == 0 || strncmp(argv[i], "--transport=", 12) == 0)
			return true;
	return false;
}

/* Validate and derive. Returns RP_EXIT_GO_ON to go on, or an exit status. */
static int sim_opts_check(struct sim_opts *o)
{
	int rc;

	if (!o->transport || strcmp(o->transport, "sim") != 0) {
		fprintf(stderr, "rdmaprobe matrix: --transport %s: only 'sim' (leave the option out for MPI and the "
				"real fabric)\n", o->transport ? o->transport : "");
		return RP_EXIT_USAGE;
	}
	if (!o->model) {
		fprintf(stderr, "rdmaprobe matrix: --transport sim needs --fabric-model FILE\n");
		return RP_EXIT_USAGE;
	}
	if (o->run.jsonl && (!o->run.jsonl[0] || strcmp(o->run.jsonl, "-") == 0)) {
		fprintf(stderr, "rdmaprobe matrix: --jsonl wants a file name (the stream is a record, not standard output)\n");
		return RP_EXIT_USAGE;
	}
	if (o->run.jsonl && rp_report_path_check(o->run.jsonl) != 0)
		return RP_EXIT_USAGE;
	if (rp_pattern_parse(o->run.pattern_s, &o->pattern) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --pattern %s: one of full, rail, intra, shift, sample:K (K >= 1)\n",
			o->run.pattern_s);
		return RP_EXIT_USAGE;
	}
	rp_pattern_str(&o->pattern, o->pattern_text, sizeof(o->pattern_text));
	if (o->run.list_pairs_s && rp_report_list_parse(o->run.list_pairs_s, &o->list_pairs) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --list-pairs %s: one of all, notable, auto\n", o->run.list_pairs_s);
		return RP_EXIT_USAGE;
	}
	if (o->eng.bidir || o->eng.all) {
		fprintf(stderr, "rdmaprobe matrix: --transport sim does not model %s\n", o->eng.bidir ? "--bidir" : "--all");
		return RP_EXIT_USAGE;
	}
	bool sweep_auto;

	rc = matrix_cli_sweep_opt(o->run.sweep_s, &o->sweep, &sweep_auto);
	if (rc != RP_EXIT_GO_ON)
		return rc;
	if (mx_hold_parse(o->run.hold_s, &o->hold) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --hold takes auto or off, not '%s'\n", o->run.hold_s);
		return RP_EXIT_USAGE;
	}
	o->vc.retest = o->eng.retest;
	rc = rp_cli_verdict_finish(&o->vc, "matrix", o->eng.latency);
	if (!rc)
		rc = rp_cli_engine_finish(&o->eng, "matrix");
	if (rc)
		return rc;
	rc = matrix_cli_outputs_check(&o->eng, o->run.html, o->run.junit);   /* before the model runs, as a real run */
	if (!rc)
		rc = rp_cli_ops_finish(&o->ops, "matrix");
	if (rc)
		return rc;
	if (strcmp(o->eng.cfg.src_mem.kind ? o->eng.cfg.src_mem.kind : "host", "host") != 0 ||
	    strcmp(o->eng.cfg.dst_mem.kind ? o->eng.cfg.dst_mem.kind : "host", "host") != 0) {
		fprintf(stderr, "rdmaprobe matrix: --transport sim models host memory only\n");
		return RP_EXIT_USAGE;
	}
	/* --hold as a real run decides it, then the run's settings, once */
	o->hold = o->hold && o->sweep && mx_hold_allowed(&o->eng.cfg, o->sweep, o->hold_off, sizeof(o->hold_off));
	mx_settings_init(&o->settings, &o->eng.cfg, false, o->sweep, o->hold, (unsigned)o->eng.retest);
	return RP_EXIT_GO_ON;
}

/* Parse, validate, derive. Returns RP_EXIT_GO_ON to go on, or an exit status. */
static int sim_opts_parse(struct sim_opts *o, int argc, char **argv)
{
	struct rp_opt table[RP_CLI_ENGINE_OPTS + RP_CLI_VERDICT_OPTS + RP_CLI_OPS_OPTS + MATRIX_RUN_OPTS + 5];
	size_t n;
	int rc;

	memset(o, 0, sizeof(*o));
	rp_cli_engine_init(&o->eng);
	rp_cli_verdict_init(&o->vc);
	rp_cli_ops_init(&o->ops);
	matrix_cli_run_opts_init(&o->run);
	n = rp_cli_engine_opts(&o->eng, table);
	n += rp_cli_verdict_opts(&o->vc, table + n);
	const struct rp_opt mine[] = {
		{ "transport", 0, RP_OPT_STR, &o->transport, 0, 0, "T", "sim: a simulated fabric (--fabric-model)", NULL },
		{ "fabric-model", 0, RP_OPT_STR, &o->model, 0, 0, "FILE", "the fabric model (lib/sim/sim_model.h)", NULL },
	};

	rc = matrix_cli_opts_table_parse(table, n, mine, RP_ARRAY_SIZE(mine), &o->run, &o->ops, usage_text, argc, argv);
	return rc == RP_EXIT_GO_ON ? sim_opts_check(o) : rc;
}

/* The run's front-end state: the simulation, the outputs, the cost of writing them. */
struct sim_front {
	struct sim_opts *o;
	struct rp_sim_run S;
	struct matrix_out out;
	struct rp_jsonl jsonl;        /* --jsonl (rank 0); fd -1 without */
	double v_last_write, write_cost, write_s, write_cpu_s;
	double real_rounds_s;         /* real time of the rounds on this host, rank 0's writes taken out */
	size_t writes;
	size_t heap_max;              /* __atomic: the most heap in use at a sample (heap_sample), the
	                               * simulation's own for the other nodes (heap_others) left out */
	size_t heap_max_all;          /* __atomic: the same with them */
	size_t heap_others;           /* __atomic: heap_others() as of the last round's end */
	pthread_t heap_watch;         /* samples the heap every HEAP_WATCH_S while the run goes on */
	bool heap_watching;
	int heap_watch_stop;          /* __atomic */
	struct mx_progress prog;      /* the progress line's clock (the virtual one) */
	size_t sweep_k, sweep_n;      /* the sweep's first pass: rounds done, in all */
	char banner[512], title[512];
};

/* Rank 0's heap in use now (mallinfo2: what malloc has handed out and not got back), kept at its
 * highest. Sampled where rank 0 holds the most: at the end of every round and sweep round (the
 * store and the round's results, before they are folded in) and in the middle of every JSON write
 * (the verdict and the report's head held), and every HEAP_WATCH_S by a thread of its own while a
 * verdict runs (the retest plan's and the final one: their scratch, which no round's end sees, is
 * the run's peak). Not during the rounds: mallinfo2 walks malloc's free lists under its lock, and a
 * sampler beside rank 0's collection slowed it by a fifth with 1% of the links dead. Unlike the
 * RSS, it leaves out the stacks (under MPI, the sides' threads) and the pages malloc keeps but does
 * not use. Every 25 ms, not 5: with 1% of the links dead one walk takes milliseconds, and at 5 ms the
 * sampler held the lock most of a verdict that now runs on two threads; the scratch arrays live for a
 * tenth of a second and more, and 25 ms finds the same peak. */
#define HEAP_WATCH_S 0.025

/* What the simulation keeps in the heap for the other nodes, not for rank 0: as one rank it drives
 * every node's sides, and so holds every node's sweep connections (mx_hold.h's entries, 36 MiB at
 * 1,024 x 8 rail during the sweep) and, until the round's go, every node's sides of the round
 * (mx_round_spent_bytes: 72 MiB after a sweep round at 1,024 x 8), where rank 0 of a
 * real run holds those of its own node (the directions with an end among its endpoints: 2 / nodes of
 * them). Under MPI, where every rank runs its own sides: nothing. Read at the end of every round
 * (the holds and the sides change only in rounds). */
static size_t heap_others(const struct sim_front *F)
{
	const struct rp_sim_run *S = &F->S;
	size_t all = S->run.holds.cap * sizeof(*S->run.holds.v) + mx_round_spent_bytes(&S->run.ctx), own;

	if ((S->c && S->c->size > 1) || S->n_nodes <= 2)
		return 0;
	own = all / S->n_nodes * 2;
	return all - own;
}

static void heap_max_raise(size_t *max, size_t used)
{
	size_t was = __atomic_load_n(max, __ATOMIC_RELAXED);

	while (used > was && !__atomic_compare_exchange_n(max, &was, used, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void heap_sample(struct sim_front *F)
{
	struct mallinfo2 mi = mallinfo2();
	size_t used = mi.uordblks + mi.hblkhd, others = __atomic_load_n(&F->heap_others, __ATOMIC_RELAXED);

	heap_max_raise(&F->heap_max_all, used);
	heap_max_raise(&F->heap_max, used > others ? used - others : 0);
}

/* After a round (on the thread that runs them): what heap_sample leaves out from now on. */
static void heap_others_note(struct sim_front *F)
{
	__atomic_store_n(&F->heap_others, heap_others(F), __ATOMIC_RELAXED);
}

static void *heap_watch_main(void *arg)
{
	struct sim_front *F = arg;
	struct timespec ts = { .tv_sec = (time_t)HEAP_WATCH_S,
			       .tv_nsec = (long)((HEAP_WATCH_S - (double)(time_t)HEAP_WATCH_S) * 1e9) };

	while (!__atomic_load_n(&F->heap_watch_stop, __ATOMIC_RELAXED)) {
		heap_sample(F);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void heap_watch_start(struct sim_front *F)
{
	if (F->heap_watching)
		return;
	__atomic_store_n(&F->heap_watch_stop, 0, __ATOMIC_RELAXED);
	F->heap_watching = pthread_create(&F->heap_watch, NULL, heap_watch_main, F) == 0;
}

static void heap_watch_end(struct sim_front *F)
{
	if (!F->heap_watching)
		return;
	__atomic_store_n(&F->heap_watch_stop, 1, __ATOMIC_RELAXED);
	pthread_join(F->heap_watch, NULL);
	F->heap_watching = false;
	heap_sample(F);
}

/* mx_run's hook around a retest plan's verdict. */
static void judging(void *arg, bool start)
{
	struct sim_front *F = arg;

	if (start) {
		heap_others_note(F);   /* a round's sides may have gone with its go since its end */
		heap_watch_start(F);
	}
	else
		heap_watch_end(F);
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

static double cpu_total_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec * 1e-6;
}

static long long file_size(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* "simulation": the figures so far (the JSON hook of matrix_out.c). */
static int sim_json(void *root, void *arg)
{
	struct sim_front *F = arg;
	const struct rp_sim_run *S = &F->S;
	json_t *rounds, *sim;

	heap_sample(F);
	rounds = json_array();

	for (size_t i = 0; rounds && i < S->n_round_s; i++)
		if (json_array_append_new(rounds, json_real(S->round_s[i])) != 0)
			return -ENOMEM;
	sim = json_pack("{s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:b, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:o}",
			"scheduler", "lock-step rounds", "ranks", S->c ? S->c->size : 1, "real_rounds_s", F->real_rounds_s,
			"projected_wall_s", S->vclock, "rounds_s", S->rounds_s, "rank0_collect_s", S->collect_s,
			"rank0_retest_plan_s", S->run.retest_plan_s,
			"rank0_collect_projected", S->c && S->c->size == 1, "report_writes_s", F->write_s,
			"round_overhead_s", S->model->round_overhead_s, "rounds", (json_int_t)S->n_round_s,
			"report_writes", (json_int_t)F->writes, "results_whole", (json_int_t)mx_results_n_whole(&S->run.mr),
			"results_bytes", (json_int_t)mx_results_bytes(&S->run.mr), "rank0_peak_rss_kib", (json_int_t)peak_rss_kib(),
			"rank0_heap_max_bytes", (json_int_t)F->heap_max,
			"heap_max_with_other_nodes_bytes", (json_int_t)F->heap_max_all,
			"rank0_cpu_s", cpu_total_s(), "round_s", rounds);
	return sim && json_object_set_new(root, "simulation", sim) == 0 ? 0 : -ENOMEM;
}

/* The signal that stopped the run (every rank's, as the real matrix: lib/base/stop.h), 0 none. */
static int stop_sig(const struct sim_front *F)
{
	return F->S.run.ctx.stop_sig ? F->S.run.ctx.stop_sig : rp_stop_signal();
}

static void files_write(struct sim_front *F)
{
	double w0 = rp_now(), c0 = cpu_now();

	F->out.rounds_done = F->S.run.rounds_done;
	F->out.rounds_run = F->S.run.scheduled_run;
	F->out.retest_rounds = F->S.run.retest_rounds;
	F->out.elapsed_s = F->S.vclock;
	F->out.sweep_s = F->S.sweep_s;
	F->out.stop_sig = stop_sig(F);
	matrix_cli_write_files(&F->out, NULL, NULL);
	F->S.run.failed = mx_results_failed(&F->S.run.mr);   /* as the verdict judged them */
	F->write_cost = rp_now() - w0;
	F->write_s += F->write_cost;
	F->write_cpu_s += cpu_now() - c0;
	F->writes++;
	rp_sim_run_advance(&F->S, F->write_cost);   /* the ranks wait for the go meanwhile */
	F->v_last_write = F->S.vclock;
}

/* Rank 0's collection of the round just ended (real seconds: every rank waits for the go
 * meanwhile) onto the clock; under MPI it holds the wait for the other ranks' sides on this
 * host, which the rounds' virtual time stands for, and is only reported. */
static void collect_advance(struct sim_front *F)
{
	if (F->S.c->size == 1)
		rp_sim_run_advance(&F->S, F->S.collect_last_s);
}

/* --jsonl: the round's kept or changed results, each on its line, before anything else is written
 * (as the real front end; an error ends the stream, not the run). */
static void jsonl_round(struct sim_front *F, bool retest)
{
	struct rp_pair_result tmp;
	const struct mx_run *R = &F->S.run;

	for (size_t i = 0; i < R->n_touched && F->jsonl.fd >= 0 && !F->jsonl.err; i++)
		rp_jsonl_pairs(&F->jsonl, mx_results_get(&R->mr, R->touched[i], &tmp), 1, (unsigned)R->hook_round, retest);
}

/* The time left on the projected clock: the rounds and sweep rounds still to run, then what follows
 * them (as the real front end prices it). */
static double eta_of(const struct sim_front *F, size_t rounds_left)
{
	double eta = mx_progress_eta(&F->prog, rounds_left, F->sweep_n - F->sweep_k);

	return eta < 0 ? eta : eta + mx_progress_tail(F->S.run.sweep.n_pending, F->S.cfg->timeout_s +
							       RP_ENGINE_MTUCHECK_TIMEOUT_S, F->write_cost);
}

static void round_done(void *arg, bool retest, size_t k, size_t n_rounds)
{
	struct sim_front *F = arg;

	heap_others_note(F);
	heap_sample(F);
	collect_advance(F);
	jsonl_round(F, retest);
	mx_progress_note(&F->prog, false, F->S.vclock);
	if (mx_progress_due(&F->prog, rp_now(), k + 1 == n_rounds)) {
		char line[256];

		mx_progress_format(line, sizeof(line), retest ? "retest round" : F->S.run.in_late ? "late round" : "round",
				   k + 1, n_rounds, F->sweep_k, F->sweep_n, mx_results_failed(&F->S.run.mr), F->S.vclock,
				   eta_of(F, n_rounds - k - 1));
		fprintf(stderr, "rdmaprobe matrix (SIMULATED): %s (the projected clock)\n", line);
	}
	if (mx_progress_write_due(F->writes ? F->S.vclock - F->v_last_write : -1, F->write_cost, stop_sig(F) != 0))
		files_write(F);
}

static void sweep_done(void *arg, int pass, size_t k, size_t n_rounds)
{
	struct sim_front *F = arg;

	heap_others_note(F);
	heap_sample(F);
	collect_advance(F);
	mx_progress_note(&F->prog, true, F->S.vclock);
	if (pass == 1) {
		F->sweep_k = k + 1;
		F->sweep_n = n_rounds;
	}
	if (mx_progress_due(&F->prog, rp_now(), k + 1 == n_rounds))
		fprintf(stderr, "rdmaprobe matrix (SIMULATED): reachability %s %zu of %zu done: %zu failed so far, %.1f s in "
			"(the projected clock)\n", pass == 3 ? "dead-endpoint confirmation" : pass == 4 ? "sweep retest beside the rounds"
			: pass == 2 ? "sweep retest"
			: F->S.run.sweep.screen_s > 0 ? "screen" : "sweep",
			k + 1, n_rounds, mx_results_failed(&F->S.run.mr), F->S.vclock);
	jsonl_round(F, pass == 2 || pass == 4);
}

static void print_figures(struct sim_front *F, double final_s, double final_cpu_s)
{
	const struct rp_sim_run *S = &F->S;
	double cpu;
	char collect[192];

	heap_watch_end(F);            /* the final verdict and reports are done */
	cpu = cpu_total_s();

	/* one rank: its collection is its own work, on the clock; under MPI the wait for the other ranks
	 * on this host is in it, so it is only reported */
	if (S->c->size == 1)
		snprintf(collect, sizeof(collect), " + rank 0 collecting them %.1f s", S->collect_s);
	else
		collect[0] = '\0';
	printf("SIMULATED (fabric model %s, lock-step rounds): projected wall time %.1f s = rounds %.1f s%s + %splanning "
	       "the retests %.1f s + writing reports %.1f s (%zu writes) + final verdict and reports %.1f s%s; start-up "
	       "not included", F->o->model, S->vclock + final_s, S->rounds_s, collect, S->c->size == 1 ? "" : "rank 0 ",
	       S->run.retest_plan_s, F->write_s,
	       F->writes, final_s, S->c->size == 1 ? " (rank 0's figures real seconds on this host)" : "");
	if (S->c->size == 1)
		printf("\n");
	else
		printf("; rank 0 from its sides' end to each round's results kept %.1f s (real, the wait for the other "
		       "ranks on this host in it: not projected)\n", S->collect_s);
	printf("SIMULATED rounds: %zu planned + %zu retest (%zu directions confirmed by their endpoint's sample), %zu endpoints on %zu nodes, %d rank%s, %zu results kept (%zu "
	       "whole, %.1f MiB in all), %zu sides answered by the model on rank 0\n", S->run.rounds_done,
	       S->run.retest_rounds, S->run.retest_by_endpoint, S->n_eps, S->n_nodes, S->c->size, S->c->size == 1 ? "" : "s (MPI)", S->run.mr.n,
	       mx_results_n_whole(&S->run.mr), (double)mx_results_bytes(&S->run.mr) / (1024.0 * 1024.0), S->sides);
	if (S->run.sweep.width)
		printf("SIMULATED reachability sweep (width %u): %zu rounds, %.1f s of the rounds' time (probes of an "
		       "endpoint taken to run at once); %zu directions left out as unreachable, %zu flaky, %zu cleared; "
		       "%zu endpoints dead (%zu directions endpoint_dead, %zu confirmation rounds); first pass %s\n",
		       S->run.sweep.width, S->run.sweep.rounds, S->sweep_s, S->run.sweep.n_dead, S->run.sweep.n_flaky,
		       S->run.sweep.n_cleared, S->run.sweep.n_ep_dead, S->run.sweep.n_ep_dirs, S->run.sweep.n_confirm, S->run.sweep.screen_s > 0 ? "a screen (short window, no MTU probe)" : "full probes");
	printf("SIMULATED real time of the rounds on this host: %.2f s (%.1f ms a round; the protocol and the sides, "
	       "rank 0's report writes taken out)\n", F->real_rounds_s,
	       S->n_round_s + S->run.sweep.rounds ? 1e3 * F->real_rounds_s / (double)(S->n_round_s + S->run.sweep.rounds) : 0.0);
	printf("SIMULATED rank 0: peak RSS %.1f MiB, CPU %.2f s (report writes %.2f s, final %.2f s, the rest the rounds "
	       "with every rank's sides)\n", (double)peak_rss_kib() / 1024, cpu, F->write_cpu_s, final_cpu_s);
	printf("SIMULATED rank 0: heap in use at most %.1f MiB (sampled after every round, during every JSON write and "
	       "every %.0f ms of a verdict; the RSS above also holds the code, the stacks and the pages malloc keeps); "
	       "%.1f MiB with what the simulation holds for the other nodes (their sweep connections and, until a "
	       "round's go, their sides of it)\n",
	       (double)F->heap_max / (1024.0 * 1024.0), 1e3 * HEAP_WATCH_S, (double)F->heap_max_all / (1024.0 * 1024.0));
	printf("SIMULATED report sizes (bytes): json %lld, csv %lld, html %lld, junit %lld\n",
	       file_size(F->out.json), file_size(F->out.csv), file_size(F->out.html), file_size(F->out.junit));
}

/* Under mpirun/srun: the MPI plugin and the job's communicator. 0 (*on says whether), or an exit status. */
static int sim_mpi_start(int *argc, char ***argv, const struct rp_mpi_plugin **mpi_p, struct mx_comm *comm, bool *on)
{
	char why[PATH_MAX * 2 + 64] = "";

	*on = rp_mpi_compiled() && rp_mpi_launched();
	if (!*on)
		return 0;
	if (rp_mpi_plugin_load(mpi_p, why, sizeof(why)) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --transport sim under an MPI launcher needs the MPI plugin: %s\n", why);
		return RP_EXIT_ENV;
	}
	if ((*mpi_p)->init(argc, argv, comm) != 0) {
		fprintf(stderr, "rdmaprobe matrix: MPI did not start (see above)\n");
		return RP_EXIT_ENV;
	}
	return 0;
}

/* Rank 0 after the rounds: the final reports, the person's view, the figures. The exit status. */
static int sim_finish(struct sim_front *F)
{
	struct rp_verdict v;
	bool judged = false;
	double f0 = rp_now(), fc0 = cpu_now();
	int status;

	F->out.rounds_done = F->S.run.rounds_done;
	F->out.rounds_run = F->S.run.scheduled_run;
	F->out.retest_rounds = F->S.run.retest_rounds;
	F->out.elapsed_s = F->S.vclock;
	F->out.sweep_s = F->S.sweep_s;
	F->out.stop_sig = stop_sig(F);   /* SIGTERM/SIGINT: the reports say interrupted, with the verdict */
	heap_watch_start(F);          /* the final verdict's scratch (ended in print_figures) */
	status = matrix_cli_write_files(&F->out, &v, &judged) ? RP_EXIT_ENV : RP_EXIT_OK;
	if (judged) {
		matrix_cli_print(&F->out, &v);
		if (rp_cli_ops_baseline_print(F->out.ops) && !status)
			status = RP_EXIT_FAIL;   /* regressed against --baseline, as a real run */
		if (!status)
			status = matrix_cli_passed(&F->out, &v) ? RP_EXIT_OK : RP_EXIT_FAIL;
		rp_verdict_fini(&v);
	}
	print_figures(F, rp_now() - f0, cpu_now() - fc0);
	if (F->out.stop_sig)
		fprintf(stderr, "rdmaprobe matrix (SIMULATED): interrupted (signal %d) after %zu of %zu rounds\n",
			F->out.stop_sig, F->out.rounds_done, F->out.n_rounds);
	return F->out.stop_sig ? 128 + F->out.stop_sig : status;
}

/* --budget, as a real run chooses (matrix_cli_budget_choose) over the model's endpoints at its rate with the
 * plan's assumed figures: the pattern and message size that fit replace the ones asked for. -1 to go
 * on, or an exit status. */
static int sim_budget(struct sim_opts *o, const struct rp_sim_model *m, bool say)
{
	size_t n_eps = (size_t)m->nodes * m->adapters, dead = 0;
	struct rp_sched_ep *se;
	double *gbps;
	struct mx_plan_model pm;
	struct mx_settings run;
	struct mx_plan_choice choice;
	char bt[32];
	int status;

	if (!o->run.budget_seen)
		return RP_EXIT_GO_ON;
	if (o->run.plan_dead_s && (status = matrix_cli_plan_dead_opt(o->run.plan_dead_s, 100, true, &dead)) != RP_EXIT_GO_ON)
		return status;
	se = calloc(n_eps ? n_eps : 1, sizeof(*se));
	gbps = calloc(n_eps ? n_eps : 1, sizeof(*gbps));
	if (!se || !gbps) {
		free(se);
		free(gbps);
		return RP_EXIT_ENV;
	}
	for (size_t e = 0; e < n_eps; e++) {
		se[e] = (struct rp_sched_ep){ .node = (uint32_t)(e / m->adapters), .rail = (uint32_t)(e % m->adapters) };
		gbps[e] = m->rate_gbps;
	}
	mx_plan_model_default(&pm);
	run = o->settings;
	status = matrix_cli_plan_dead_opt(o->run.plan_dead_s, n_eps, run.sweep && run.retest, &run.plan_dead);
	snprintf(bt, sizeof(bt), "%g s", o->run.budget);
	if (status < 0)
		status = matrix_cli_budget_choose(se, n_eps, gbps, &o->pattern, o->pattern_text, o->run.seed, &pm, &run, o->run.budget, bt, say,
					&choice);
	if (status < 0) {
		o->pattern = choice.pattern;
		o->eng.cfg.meas.msg_size = choice.msg_size;
		o->settings.msg_size = choice.msg_size;
		rp_pattern_str(&o->pattern, o->pattern_text, sizeof(o->pattern_text));
	}
	free(se);
	free(gbps);
	return status;
}

/* The reports' description of the simulated run (F->out), and its --jsonl stream opened on rank 0. */
static void sim_out_init(struct sim_front *F, int argc, char **argv)
{
	struct sim_opts *o = F->o;

	snprintf(F->banner, sizeof(F->banner), "SIMULATED: fabric model %s: every result is the model's, not hardware's", o->model);
	snprintf(F->title, sizeof(F->title), "SIMULATED rdmaprobe matrix --transport sim --fabric-model %s", o->model);
	F->out = (struct matrix_out){
		.cmd_line = F->title, .argc = argc, .argv = argv, .cfg = &o->eng.cfg,
		.pattern = o->pattern_text, .seed = o->run.seed, .vcfg = &o->vc.cfg, .eps = F->S.eps, .n_eps = F->S.n_eps,
		.results = &F->S.run.mr, .judged = &F->S.run.judged, .n_rounds = rp_sched_n_rounds(F->S.sched), .started_wall = (double)time(NULL),
		.json = o->eng.json, .csv = o->eng.csv, .html = o->run.html, .junit = o->run.junit, .summary_only = o->run.summary, .nodes_all = o->run.nodes_all, .junit_pairs = o->run.junit_pairs,
		.max_retest = (unsigned)o->eng.retest, .nccl_ver = &o->eng.ver, .simulated = o->model,
		.sim_banner = F->banner, .json_more = sim_json, .json_more_arg = F, .sweep = &F->S.run.sweep,
		.hold = F->S.run.set.hold, .hold_off = o->hold_off, .run = &F->S.run,
		.ops = &o->ops,
		.list_notable = rp_report_list_notable_only(o->list_pairs, 2 * rp_sched_n_pairs(F->S.sched), o->ops.baseline != NULL),
	};
	F->jsonl.fd = -1;
	if (F->S.c->rank == 0 && o->run.jsonl) {
		struct rp_report_info info = { .command = "matrix", .version = rp_version_string(), .argc = argc,
					       .argv = argv, .started = F->out.started_wall };

		if (rp_jsonl_open(&F->jsonl, o->run.jsonl, &info, true) != 0)
			fprintf(stderr, "rdmaprobe matrix: --jsonl %s: not streaming (see above); the other reports are written\n",
				o->run.jsonl);
		else
			F->out.jsonl = o->run.jsonl;
	}
}

/* The model, the simulation, the rounds, the verdict. */
static int sim_run(struct sim_opts *o, int argc, char **argv)
{
	struct sim_front F = { .o = o, .prog = { .interval_s = MX_PROGRESS_INTERVAL_S, .last_real = -1 } };
	const struct rp_mpi_plugin *mpi = NULL;
	struct rp_sim_model m;
	struct rp_sim_error err;
	struct mx_comm comm;
	bool on_mpi, any_dead = false;
	int status, rc = rp_sim_model_load(o->model, &m, &err);

	/* SIGINT/SIGTERM stop the rounds at the next pair, and the reports are written with the
	 * verdict of what ran, as in a real run (there was no handler: the process died mid-write,
	 * its last report saying interrupted: false and no verdict) */
	if (rp_signals_install() != 0 || rp_signals_watchdog(o->eng.timeout, false) != 0)
		fprintf(stderr, "rdmaprobe matrix: cannot install the signal handlers: %s\n", strerror(errno));
	if (rc) {
		fprintf(stderr, "rdmaprobe matrix: --fabric-model %s: %s\n", o->model, err.msg);
		return rc == -EINVAL ? RP_EXIT_USAGE : RP_EXIT_ENV;
	}
	status = sim_mpi_start(&argc, &argv, &mpi, &comm, &on_mpi);
	if (status) {
		rp_sim_model_fini(&m);
		return status;
	}
	status = sim_budget(o, &m, !on_mpi || comm.rank == 0);
	if (status != RP_EXIT_GO_ON) {   /* every rank chooses alike (the same options and model): all stop here */
		rp_sim_model_fini(&m);
		if (on_mpi)
			mpi->finalize();
		return status;
	}
	F.S = (struct rp_sim_run){ .model = &m, .cfg = &o->eng.cfg, .vcfg = &o->vc.cfg, .pattern = o->pattern,
				   .seed = o->run.seed, .settings = o->settings,
				   .hooks = { .round_done = round_done, .sweep_done = sweep_done, .judging = judging, .arg = &F }, .c = on_mpi ? &comm : NULL,
				   .nccl_version = o->eng.ver.version };
	rc = rp_sim_run_init(&F.S);
	if (rc) {
		fprintf(stderr, "rdmaprobe matrix: the simulation could not start: %s\n", strerror(-rc));
		status = rc == -EINVAL ? RP_EXIT_USAGE : RP_EXIT_ENV;
		goto out;
	}
	sim_out_init(&F, argc, argv);
	if (F.S.c->rank == 0)
		fprintf(stderr, "rdmaprobe matrix (SIMULATED): %zu endpoints on %zu nodes, %d rank%s, pattern %s: %zu rounds, "
			"%llu pairs\n", F.S.n_eps, F.S.n_nodes, F.S.c->size, F.S.c->size == 1 ? "" : "s", o->pattern_text,
			rp_sched_n_rounds(F.S.sched), (unsigned long long)rp_sched_n_pairs(F.S.sched));
	F.real_rounds_s = rp_now();
	rc = rp_sim_run_rounds(&F.S);
	F.real_rounds_s = rp_now() - F.real_rounds_s - F.write_s;
	if (F.S.c->size == 1)
		rp_sim_run_advance(&F.S, F.S.collect_tail_s);   /* the last round's settling and go */
	if (stop_sig(&F))   /* the reports, the teardown and MPI_Finalize: one --timeout */
		rp_signals_watchdog_arm(stop_sig(&F), 4 * F.write_cost);
	if (rc < 0) {
		fprintf(stderr, "rdmaprobe matrix: rank %d: the simulated rounds failed: %s\n", F.S.c->rank, strerror(-rc));
		status = RP_EXIT_ENV;
		goto out;
	}
	status = F.S.c->rank == 0 ? sim_finish(&F) : stop_sig(&F) ? 128 + stop_sig(&F) : RP_EXIT_OK;
	if (F.jsonl.fd >= 0 && rp_jsonl_close(&F.jsonl, !F.out.stop_sig && F.out.rounds_done == F.out.n_rounds) != 0 &&
	    status == RP_EXIT_OK)
		status = RP_EXIT_ENV;
	F.jsonl.fd = -1;
out:
	heap_watch_end(&F);
	for (int r = 0; F.S.dead && r < F.S.c->size; r++)
		any_dead |= F.S.dead[r];
	rp_sim_run_fini(&F.S);
	rp_sim_model_fini(&m);
	rp_cli_verdict_fini(&o->vc);
	fflush(stdout);
	fflush(stderr);
	/* MPI_Finalize synchronises with every rank; with one gone it could wait forever */
	if (on_mpi && !any_dead)
		mpi->finalize();
	return status;
}

int cmd_matrix_sim(int argc, char **argv)
{
	struct sim_opts o;
	int rc = sim_opts_parse(&o, argc, argv);

	if (rc < 0)
		rc = sim_run(&o, argc, argv);
	rp_cli_ops_fini(&o.ops);
	return rc;
}
