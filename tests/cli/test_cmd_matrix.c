/* test_cmd_matrix.c: the matrix front end as a user meets it without hardware or MPI: --plan answers
 * with the schedule's numbers, bad options exit 2 with a message, a run outside a launcher exits 3
 * and says how to start it. Under a real "mpirun -np 3" (skipped loudly without MPI or mpirun), with
 * a -d that selects nothing on any host: each rank's endpoint is reported no_usable_port and drained
 * and the JSON is written (the job is not aborted); a --json path that cannot be written is refused
 * before anything is measured (exit 2). Runs the built binary (RP_TEST_BIN). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "mx_view.h"
#include "testutil.h"

static char out[1 << 16];

/* Run "rdmaprobe matrix ARGS" with a clean launcher environment; returns the exit status. */
static int matrix(const char *args)
{
	const char *bin = rp_test_bin();
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_RANK -u PMI_SIZE -u MPI_LOCALNRANKS -u SLURM_PROCID "
		 "'%s' matrix %s 2>&1", bin, args);
	return rp_test_run(cmd, out, sizeof(out));
}

static void test_plan_full_small(void **state)
{
	(void)state;
	assert_int_equal(matrix("--plan --nodes 5 --hcas 1 -s 4K -n 10 --rate 100"), 0);
	assert_non_null(strstr(out, "rounds: 5; pairs: 10 "));
	assert_non_null(strstr(out, "at most 2 pairs per round"));
	assert_int_equal(mx_count(out, "  round "), 5);
	assert_non_null(strstr(out, "estimated time: "));
}

static void test_plan_rail_1024x8(void **state)
{
	(void)state;
	assert_int_equal(matrix("--plan --nodes 1024 --hcas 8 --pattern rail"), 0);
	assert_non_null(strstr(out, "8192 endpoints on 1024 nodes"));
	assert_non_null(strstr(out, "rounds: 1023; pairs: 4190208 "));
	assert_non_null(strstr(out, "at most 4096 pairs per round"));
}

static void test_plan_sample_is_seeded(void **state)
{
	static char first[sizeof(out)];

	(void)state;
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --pattern sample:3 --seed 9"), 0);
	memcpy(first, out, sizeof(out));
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --pattern sample:3 --seed 9"), 0);
	assert_string_equal(out, first);
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --pattern sample:3 --seed 10"), 0);
	assert_string_not_equal(out, first);
	assert_int_equal(matrix("--plan --nodes 4 --hcas 1 --pattern sample:4"), 2);
	assert_non_null(strstr(out, "sample:4"));
}

/* --plan states every figure of its model and where it came from; --budget picks what fits or says
 * nothing does (exit 2); a file that is not a matrix report is named with its problem (exit 2). */
static void test_plan_model_budget(void **state)
{
	static const char foreign[] = "{\"tool\": \"rdmaprobe\", \"command\": \"loopback\"}";
	char path[512], args[700];
	FILE *f;

	(void)state;
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 -s 4K -n 10 --rate 100"), 0);
	assert_non_null(strstr(out, "set-up 0.050 s per direction: assumed, no calibration"));
	assert_non_null(strstr(out, "start-up 5.0 s: assumed, no calibration"));
	assert_non_null(strstr(out, "uncalibrated"));
	/* the default sweep (auto: width 64) is in the plan: its 7 rounds in one probe round, every
	 * endpoint in 14 probes of it; the estimate names the sweep's share apart from the rounds' */
	assert_non_null(strstr(out, "sweep: 1 probe round (at most 14 probes at an endpoint) of 0.100 s: 0.1 s: a set-up "
				    "(its probes at once) + the per-round overhead"));
	assert_non_null(strstr(out, "= start-up 5.0 s + sweep 0.1 s + "));
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 -s 4K -n 10 --rate 100 --sweep off"), 0);
	assert_null(strstr(out, "sweep:"));
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --sweep 0x10"), 2);
	assert_non_null(strstr(out, "--sweep 0x10: a width from 1 to 4096, auto (64) or off"));
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --sweep 4097"), 2);
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --bidir --sweep 8"), 2);
	assert_non_null(strstr(out, "--sweep does not go with --bidir yet"));
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --hold sometimes"), 2);
	assert_non_null(strstr(out, "--hold takes auto or off, not 'sometimes'"));
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --hold off"), 0);
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --bidir"), 0);   /* auto: no sweep with --bidir */
	assert_null(strstr(out, "sweep:"));
	/* start-up 5 s + 0.15 s a round: full (7 rounds) 6.05 s; 5.5 s fits sample:3 (5.45 s) */
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 -s 4K -n 10 --rate 100 --sweep off --budget 5.5s"), 0);
	assert_non_null(strstr(out, "sample:3 is the largest sample that fits"));
	assert_non_null(strstr(out, "plan: pattern sample:3, 8 endpoints"));
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 -s 4K -n 10 --rate 100 --budget 1m"), 0);
	assert_non_null(strstr(out, "--pattern full fits"));
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --budget 5s"), 2);
	assert_non_null(strstr(out, "nothing fits"));
	assert_null(strstr(out, "plan: pattern"));
	assert_int_equal(matrix("--plan --nodes 64 --hcas 8 --pattern rail --budget 6s"), 2);
	assert_non_null(strstr(out, "--pattern rail needs"));
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --budget 0"), 2);
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --budget 10parsecs"), 2);
	assert_non_null(strstr(out, "--budget 10parsecs: not a valid duration"));
	assert_int_equal(matrix("--calibrate-from x.json"), 2);
	assert_non_null(strstr(out, "--calibrate-from fits the plan's model: it goes with --plan or --budget"));
	assert_int_equal(matrix("--plan --nodes 4 --hcas 1 --calibrate-from /nonexistent/m.json"), 2);
	assert_non_null(strstr(out, "/nonexistent/m.json: cannot read it"));
	snprintf(path, sizeof(path), "%s/loopback.json", rp_test_tmpdir());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(foreign, f);
	fclose(f);
	snprintf(args, sizeof(args), "--plan --nodes 4 --hcas 1 --calibrate-from %s", path);
	assert_int_equal(matrix(args), 2);
	assert_non_null(strstr(out, "a report of rdmaprobe loopback, not of a matrix run"));
}

/* "rdmaprobe matrix ARGS" with its stdout alone in out (stderr to errf); returns the exit status. */
static int matrix_stdout(const char *args, const char *errf)
{
	char cmd[2560];

	snprintf(cmd, sizeof(cmd),
		 "env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_RANK -u PMI_SIZE -u MPI_LOCALNRANKS -u SLURM_PROCID "
		 "'%s' matrix %s 2>'%s'", rp_test_bin(), args, errf);
	return rp_test_run(cmd, out, sizeof(out));
}

/* --plan --json -: stdout is one JSON document and nothing else (the text plan and the budget's line
 * on stderr); --json FILE writes the same document and leaves the text on stdout; the budget makes
 * -s smaller before it samples and says so. At 100 Gb/s (start-up 5 s, set-up and overhead 0.05 s),
 * 116 writes of 8M move in 0.078 s, a round is 0.15 s + 2 x that: full (7 rounds) 7.14 s at 8M, 6.19
 * at 1M; 5.5 s fits sample:2 at 1M (5.34 s; sample:3 5.51), and sample:2 still fits at 4M (5.46 s). Failed before: --json had no effect on --plan, and the budget kept -s 8M. */
static void test_plan_json(void **state)
{
	char errf[512], path[512], args[1024];
	static char err[1 << 14];
	json_t *doc, *b, *cov;
	json_error_t jerr;
	FILE *f;
	size_t n;

	(void)state;
	snprintf(errf, sizeof(errf), "%s/plan.err", rp_test_tmpdir());
	assert_int_equal(matrix_stdout("--plan --nodes 8 --hcas 1 -s 8M -n 100 --rate 100 --sweep off --budget 5.5s --json -", errf), 0);
	doc = json_loads(out, 0, &jerr);   /* the whole of stdout: anything else and it does not parse */
	if (!doc)
		fail_msg("stdout is not one JSON document (%s): %s", jerr.text, out);
	assert_string_equal(json_string_value(json_object_get(doc, "command")), "matrix --plan");
	assert_string_equal(json_string_value(json_object_get(doc, "pattern")), "sample:2");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "endpoints"), "count")), 8);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "measurement"), "msg_size")), 4 << 20);
	b = json_object_get(doc, "budget");
	assert_int_equal(json_integer_value(json_object_get(b, "msg_size_requested")), 8 << 20);
	assert_non_null(strstr(json_string_value(json_object_get(b, "choice")), "full -> sample:2, -s 8M -> 4M to fit 5.5s"));
	cov = json_object_get(doc, "coverage");
	assert_int_equal(json_integer_value(json_object_get(cov, "ordered_pairs_measured")), 16);
	assert_int_equal(json_integer_value(json_object_get(cov, "msg_size_run")), 4 << 20);
	json_decref(doc);
	f = fopen(errf, "r");
	assert_non_null(f);
	n = fread(err, 1, sizeof(err) - 1, f);
	fclose(f);
	err[n] = '\0';
	assert_non_null(strstr(err, "--budget 5.5 s: full -> sample:2, -s 8M -> 4M to fit 5.5s"));
	assert_non_null(strstr(err, "plan: pattern sample:2, 8 endpoints"));
	/* --json FILE: the document there, the text on stdout */
	snprintf(path, sizeof(path), "%s/plan.json", rp_test_tmpdir());
	snprintf(args, sizeof(args), "--plan --nodes 4 --hcas 2 --pattern rail --json '%s'", path);
	assert_int_equal(matrix_stdout(args, errf), 0);
	assert_non_null(strstr(out, "plan: pattern rail, 8 endpoints"));
	doc = json_load_file(path, 0, &jerr);
	assert_non_null(doc);
	assert_int_equal(json_integer_value(json_object_get(doc, "rounds")), 3);
	assert_true(json_is_null(json_object_get(doc, "budget")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "coverage"), "ordered_pairs")), 24);
	json_decref(doc);
	/* the budget: a smaller size when the pattern fits there (full 7.14 s at 8M, 6.60 at 4M, 6.32 at 2M) */
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 -s 8M -n 100 --rate 100 --sweep off --budget 6.5s"), 0);
	assert_non_null(strstr(out, "--budget 6.5 s: -s 8M -> 2M to fit 6.5s: full needs ~7.1 s at -s 8M, ~6.3 s at 2M"));
	assert_non_null(strstr(out, "plan: pattern full, 8 endpoints"));
	assert_non_null(strstr(out, "(100 x 2097152 B, 16 warm-up)"));
	/* --plan writes no run report; a --json path that cannot be written is refused before anything */
	assert_int_equal(matrix("--plan --nodes 4 --hcas 1 --csv x.csv"), 2);
	assert_non_null(strstr(out, "--plan writes the plan (--json FILE) and nothing else: --csv is a run's report"));
	assert_int_equal(matrix("--plan --nodes 4 --hcas 1 --json /nonexistent-dir/p.json"), 2);
	assert_non_null(strstr(out, "--json /nonexistent-dir/p.json: cannot write the report there"));
}

static void test_usage_errors(void **state)
{
	(void)state;
	assert_int_equal(matrix("--pattern ring"), 2);
	assert_non_null(strstr(out, "--pattern ring"));
	assert_int_equal(matrix("--min-bw 180"), 2);
	assert_non_null(strstr(out, "180G"));
	assert_int_equal(matrix("--nodes 4"), 2);
	assert_non_null(strstr(out, "--plan only"));
	assert_int_equal(matrix("--plan --rate 100"), 2);
	assert_int_equal(matrix("--plan --hcas 0"), 2);
	assert_int_equal(matrix("-a"), 2);
	assert_int_equal(matrix("--outlier 2"), 2);
	/* the shared verdict options (bench/verdict_cli.c), as in loopback; before, matrix had its own
	 * --min-bw/--outlier and no --interval-drop at all */
	assert_int_equal(matrix("--interval-drop 1.5"), 2);
	assert_non_null(strstr(out, "--interval-drop"));
	assert_int_equal(matrix("-l --interval-drop 0.2"), 2);
	assert_non_null(strstr(out, "latency mode"));
	assert_int_equal(matrix("-l --outlier 0.3"), 2);
	assert_non_null(strstr(out, "latency mode"));
	assert_int_equal(matrix("--retest 4"), 2);
	assert_non_null(strstr(out, "--retest"));
	/* --concurrent-rails loads every rail at once: only the rail pattern has rails (before: no such
	 * option, exit 2 for an unknown one without this message) */
	assert_int_equal(matrix("--concurrent-rails"), 2);
	assert_non_null(strstr(out, "--concurrent-rails loads every rail of a node at once, so it needs --pattern rail (got full)"));
	assert_int_equal(matrix("--concurrent-rails --pattern sample:2"), 2);
	assert_non_null(strstr(out, "needs --pattern rail (got sample:2)"));
	assert_int_equal(matrix("--pattern rail --concurrent-drop 30%"), 2);
	assert_non_null(strstr(out, "--concurrent-drop goes with --concurrent-rails"));
	assert_int_equal(matrix("--pattern rail --concurrent-rails --concurrent-drop 100%"), 2);
	assert_non_null(strstr(out, "--concurrent-drop 100%: a percentage"));
	assert_int_equal(matrix("--help"), 0);
	assert_non_null(strstr(out, "--concurrent-rails"));
	assert_non_null(strstr(out, "--per-gpu"));
	assert_non_null(strstr(out, "--interval-drop F"));
	assert_non_null(strstr(out, "soft devices: absolute only"));
	/* retest rounds and the interrupted exit status are part of the interface */
	assert_non_null(strstr(out, "--retest"));
	assert_non_null(strstr(out, "128+signal"));
}

/* --prom, --baseline and --drop: refused before MPI starts (before, no such options). */
static void test_ops_options(void **state)
{
	(void)state;
	assert_int_equal(matrix("--help"), 0);
	assert_non_null(strstr(out, "--prom FILE"));
	assert_non_null(strstr(out, "--baseline FILE"));
	assert_int_equal(matrix("--prom /dev/null"), 2);
	assert_non_null(strstr(out, "rdmaprobe matrix: --prom /dev/null: cannot write the metrics there"));
	assert_int_equal(matrix("--baseline /nonexistent-dir/b.json"), 2);
	assert_non_null(strstr(out, "rdmaprobe matrix: --baseline /nonexistent-dir/b.json: not a report"));
	assert_int_equal(matrix("--drop 5%"), 2);
	assert_non_null(strstr(out, "--drop goes with --baseline FILE"));
	/* a run listing only its notable pairs compares them with the baseline (before: refused) */
	assert_int_equal(matrix("--list-pairs notable --baseline /nonexistent-dir/b.json"), 2);
	assert_null(strstr(out, "needs --list-pairs all"));
	assert_non_null(strstr(out, "--baseline /nonexistent-dir/b.json: not a report"));
	assert_int_equal(matrix("--list-pairs every"), 2);
	assert_non_null(strstr(out, "--list-pairs every: one of all, notable, auto"));
}

static void test_needs_a_launcher(void **state)
{
	(void)state;
	assert_int_equal(matrix("-d rxe0"), 3);
	assert_true(strstr(out, "mpirun") != NULL || strstr(out, "without MPI") != NULL);
}

static bool mpi_usable(void)
{
	if (system("command -v mpirun >/dev/null 2>&1") != 0) {
		fprintf(stderr, "SKIP: mpirun is not installed (openmpi-bin)\n");
		return false;
	}
	if (rp_test_run_bin(out, sizeof(out), "--version") != 0 || !strstr(out, "mpi")) {
		fprintf(stderr, "SKIP: rdmaprobe was built without MPI\n");
		return false;
	}
	return true;
}

/* "mpirun -np NP rdmaprobe matrix --node nodeR -d =rp_no_such_devR ARGS" (stdout and stderr). */
static int matrix_mpirun(int np, const char *args)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "ASAN_OPTIONS=detect_leaks=0 timeout 120 mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS -np %d "
		 "sh -c 'exec \"$0\" matrix --node node$OMPI_COMM_WORLD_RANK -d =rp_no_such_dev$OMPI_COMM_WORLD_RANK "
		 "\"$@\"' '%s' %s 2>&1", np, rp_test_bin(), args);
	return rp_test_run(cmd, out, sizeof(out));
}

static void test_no_port_is_the_finding(void **state)
{
	char args[1024], path[512];
	FILE *f;
	static char json[1 << 16];
	size_t n;

	(void)state;
	if (!mpi_usable())
		skip();
	snprintf(path, sizeof(path), "%s/noport.json", rp_test_tmpdir());
	snprintf(args, sizeof(args), "-n 10 --timeout 1 --json '%s'", path);
	/* every rank's -d matches nothing: 3 endpoints, 6 pairs, each one no_usable_port, exit 1 */
	assert_int_equal(matrix_mpirun(3, args), 1);
	assert_non_null(strstr(out, "FAIL: 0 of 6 pairs ok, 6 failed"));
	assert_non_null(strstr(out, "drain: rp_no_such_dev1:0"));
	/* found by the default reachability sweep in its one round: no second probe changes it */
	assert_non_null(strstr(out, "no_usable_port: reachability sweep: node0/rp_no_such_dev0: "));
	assert_non_null(strstr(out, "after a reachability sweep of 1 round (6 directions unreachable, 0 flaky)"));
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(json, 1, sizeof(json) - 1, f);
	fclose(f);
	json[n] = '\0';
	assert_int_equal(mx_count(json, "\"no_usable_port\""), 6);
	assert_non_null(strstr(json, "\"no_port\""));
	assert_non_null(strstr(json, "\"complete\": true"));
}

/* --budget in a run: every rank makes the same choice after the start-up exchange; nothing fits is
 * exit 2 on every rank with no report written; what ran, the report states its coverage; a
 * calibration file a rank cannot read fails the start-up for all (exit 2), naming it. */
static void test_budget_in_a_run(void **state)
{
	char args[1024], path[512];
	FILE *f;

	(void)state;
	if (!mpi_usable())
		skip();
	snprintf(path, sizeof(path), "%s/budget-none.json", rp_test_tmpdir());
	snprintf(args, sizeof(args), "-n 10 --timeout 1 --budget 1ms --json '%s'", path);
	assert_int_equal(matrix_mpirun(3, args), 2);
	assert_non_null(strstr(out, "--budget 0.001 s: nothing fits: --pattern full needs"));
	assert_null(strstr(out, "pairs ok"));
	f = fopen(path, "r");
	assert_null(f);
	snprintf(path, sizeof(path), "%s/budget.json", rp_test_tmpdir());
	snprintf(args, sizeof(args), "-n 10 --timeout 1 --budget 1h --json '%s'", path);
	assert_int_equal(matrix_mpirun(3, args), 1);   /* no port anywhere: every pair fails, as without */
	assert_non_null(strstr(out, "--budget 3600 s: --pattern full fits"));
	assert_non_null(strstr(out, "coverage: full (--budget 3600 s; requested full): every endpoint against 2 peers; "
				    "1 of 1 (rail, rail) combinations (all); 6 of 6 ordered pairs full allows (100.0%)"));
	f = fopen(path, "r");
	assert_non_null(f);
	{
		json_error_t jerr;
		json_t *root = json_loadf(f, 0, &jerr), *cov = json_object_get(root, "coverage");

		assert_non_null(cov);
		assert_int_equal(json_integer_value(json_object_get(cov, "ordered_pairs_measured")), 6);
		assert_true(json_real_value(json_object_get(cov, "budget_s")) == 3600);
		assert_true(json_number_value(json_object_get(json_object_get(root, "matrix"), "startup_s")) > 0);
		json_decref(root);
	}
	fclose(f);
	/* a budget-chosen size: 3 endpoints at 400 Gb/s (no port: the default rate), full (3 rounds of
	 * 0.15 s + 2 x 116 writes) 5.57 s at 8M, 5.51 at 4M, 5.48 at 2M: 5.5 s runs full at -s 2M. Every
	 * rank chooses it from the same table and model (the digest of the start-up exchange covers
	 * -s, the budget and the model); rank 0's report states it. Failed before: -s 8M was kept and
	 * the pattern sampled. */
	snprintf(path, sizeof(path), "%s/budget-size.json", rp_test_tmpdir());
	snprintf(args, sizeof(args), "-s 8M -n 100 --timeout 1 --sweep off --budget 5.5s --json '%s'", path);
	assert_int_equal(matrix_mpirun(3, args), 1);
	assert_non_null(strstr(out, "--budget 5.5 s: -s 8M -> 2M to fit 5.5s: full needs ~5.6 s at -s 8M, ~5.5 s at 2M"));
	assert_non_null(strstr(out, "coverage: full at -s 2M (--budget 5.5 s; requested full at -s 8M): every endpoint "
				    "against 2 peers"));
	{
		json_t *root = json_load_file(path, 0, NULL), *cov = json_object_get(root, "coverage");

		assert_non_null(root);
		assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "config"), "msg_size")), 2 << 20);
		assert_int_equal(json_integer_value(json_object_get(cov, "msg_size_run")), 2 << 20);
		assert_int_equal(json_integer_value(json_object_get(cov, "msg_size_requested")), 8 << 20);
		assert_non_null(strstr(json_string_value(json_object_get(cov, "budget_choice")), "-s 8M -> 2M"));
		json_decref(root);
	}
	assert_int_equal(matrix_mpirun(3, "-n 10 --timeout 1 --budget 1h --calibrate-from /nonexistent/m.json"), 2);
	assert_non_null(strstr(out, "/nonexistent/m.json: cannot read it"));
	assert_null(strstr(out, "pairs ok"));
}

/* Issue 26 item 19: an output rank 0 cannot write is refused before anything is measured, as
 * loopback does (it used to run every round, then exit 3); every rank stops with exit 2. */
static void test_unwritable_json_refused_before_measuring(void **state)
{
	(void)state;
	if (!mpi_usable())
		skip();
	assert_int_equal(matrix_mpirun(2, "-n 10 --timeout 1 --json /nonexistent-dir/m.json"), 2);
	assert_non_null(strstr(out, "--json /nonexistent-dir/m.json: cannot write the report there; nothing was measured"));
	assert_null(strstr(out, "pairs ok"));
	assert_int_equal(matrix_mpirun(2, "-n 10 --timeout 1 --junit /dev/full"), 2);
	assert_non_null(strstr(out, "--junit /dev/full: cannot write the report there"));
	assert_null(strstr(out, "pairs ok"));
}

/* Issue 10: each rank's NCCL release reaches rank 0; rank 1's 2.18.6 beside 2.30.7 on nodes 0 and 2
 * is the nccl_version_mismatch warning in the text and the JSON, with every rank's release listed;
 * the same release everywhere is none. Failed before the start-up exchange carried the release
 * (matrix had no --nccl-version at all: exit 2). */
static int matrix_mpirun_versions(int np, const char *v_rank1, const char *args)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "ASAN_OPTIONS=detect_leaks=0 timeout 120 mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS -np %d "
		 "sh -c 'v=2.30.7; [ $OMPI_COMM_WORLD_RANK = 1 ] && v=%s; exec \"$0\" matrix --node node$OMPI_COMM_WORLD_RANK "
		 "-d =rp_no_such_dev$OMPI_COMM_WORLD_RANK --nccl-version $v \"$@\"' '%s' %s 2>&1", np, v_rank1, rp_test_bin(),
		 args);
	return rp_test_run(cmd, out, sizeof(out));
}

static void test_nccl_version_mismatch(void **state)
{
	char args[1024], path[512];
	json_t *j, *w, *vs;

	(void)state;
	if (!mpi_usable())
		skip();
	snprintf(path, sizeof(path), "%s/versions.json", rp_test_tmpdir());
	snprintf(args, sizeof(args), "-n 10 --timeout 1 --json '%s'", path);
	assert_int_equal(matrix_mpirun_versions(3, "2.18.6", args), 1);   /* 1: no port anywhere, as above */
	assert_non_null(strstr(out, "warning nccl_version_mismatch: "));
	assert_non_null(strstr(out, ": 2.30.7 on node0, node2; 2.18.6 on node1\n"));
	j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "nccl_version"), "version")), "2.30.7");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "nccl_version"), "source")), "option");
	vs = json_object_get(j, "nccl_versions");
	assert_int_equal(json_array_size(vs), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(vs, 1), "node")), "node1");
	assert_string_equal(json_string_value(json_object_get(json_array_get(vs, 1), "version")), "2.18.6");
	w = json_object_get(j, "warnings");
	assert_int_equal(json_array_size(w), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(w, 0), "code")), "nccl_version_mismatch");
	json_decref(j);

	assert_int_equal(matrix_mpirun_versions(2, "2.30.7", args), 1);
	assert_null(strstr(out, "nccl_version_mismatch"));
	j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "warnings")), 0);
	json_decref(j);
}

/* Under a real mpirun, rank 1 started with another --seed than rank 0: the start-up refuses the
 * run on every rank (exit 2, nothing measured) and names rank 1. Failed before the start-up
 * compared the ranks' schedule settings: the ranks ran (sample patterns would have paired
 * endpoints into rounds the other rank does not run). */
static void test_ranks_with_other_settings_refused(void **state)
{
	char cmd[2048];

	(void)state;
	if (!mpi_usable())
		skip();
	snprintf(cmd, sizeof(cmd),
		 "ASAN_OPTIONS=detect_leaks=0 timeout 120 mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS -np 2 "
		 "sh -c 'exec \"$0\" matrix --node node$OMPI_COMM_WORLD_RANK -d =rp_no_such_dev$OMPI_COMM_WORLD_RANK "
		 "-n 10 --timeout 1 --pattern sample:1 --seed $((OMPI_COMM_WORLD_RANK + 1))' '%s' 2>&1", rp_test_bin());
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "rank 1 was started with other schedule settings than rank 0"));
	assert_null(strstr(out, "pairs ok"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_full_small),
		cmocka_unit_test(test_ops_options),
		cmocka_unit_test(test_plan_rail_1024x8),
		cmocka_unit_test(test_plan_sample_is_seeded),
		cmocka_unit_test(test_plan_model_budget),
		cmocka_unit_test(test_plan_json),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_needs_a_launcher),
		cmocka_unit_test(test_no_port_is_the_finding),
		cmocka_unit_test(test_budget_in_a_run),
		cmocka_unit_test(test_unwritable_json_refused_before_measuring),
		cmocka_unit_test(test_nccl_version_mismatch),
		cmocka_unit_test(test_ranks_with_other_settings_refused),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
