/* test_cmd_sim.c: 'rdmaprobe matrix --transport sim' as a user meets it (the built binary,
 * RP_TEST_BIN): a simulated run cannot be taken for a real one (the JSON's top-level "simulated":
 * true and "fabric_model", the text's first and verdict lines, the HTML's title and banner, the
 * JUnit's command_line all say SIMULATED), the dead link's pair is retry_exceeded and the rest ok,
 * the JSON's projected time is its rounds' times plus rank 0's writes and each round's time is as
 * the model says; bad models and options exit 2 with a specific message. */
#include <ctype.h>
#include <math.h>
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

#include "testutil.h"

static char out[1 << 16];

static void file_put(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", rp_test_tmpdir(), name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *file_get(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 22);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 22) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const char model[] = "# 4 x 2, one dead link\nnodes 4\nadapters 2\nrate 100\nbandwidth 100\nlatency 0\n"
			    "setup 10ms\nround-overhead 5ms\ndead node1/mlx5_0 node2/mlx5_0\n";

static void test_simulated_everywhere(void **state)
{
	char mpath[512], dir[512];
	const char *d = rp_test_tmpdir();
	json_error_t jerr;
	json_t *root, *sim, *pairs, *p;
	size_t i, dead = 0, ok = 0;
	double sum = 0;
	char *html;
	int rc;

	(void)state;
	file_put("m.txt", model, mpath, sizeof(mpath));
	snprintf(dir, sizeof(dir), "%s", d);
	rc = rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 0 --sweep off --json '%s/a.json' "
			     "--html '%s/a.html' --csv '%s/a.csv' --junit '%s/a.xml' 2>/dev/null", mpath, dir, dir, dir, dir);
	assert_int_equal(rc, 1);                                  /* a failed pair */
	assert_true(strncmp(out, "SIMULATED run on the fabric model ", 34) == 0);
	assert_non_null(strstr(out, "\nSIMULATED FAIL: 54 of 56 pairs ok, 2 failed"));
	assert_non_null(strstr(out, "SIMULATED (fabric model "));

	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/a.json");
	root = json_load_file(dir, 0, &jerr);
	assert_non_null(root);
	assert_true(json_is_true(rp_test_key(root, "simulated")));
	assert_string_equal(json_string_value(rp_test_key(root, "fabric_model")), mpath);
	sim = rp_test_key(root, "simulation");
	assert_int_equal(json_integer_value(rp_test_key(sim, "rounds")), 7);
	assert_true(json_integer_value(rp_test_key(sim, "rank0_peak_rss_kib")) > 0);
	assert_true(json_real_value(rp_test_key(sim, "rank0_cpu_s")) > 0);
	json_array_foreach(rp_test_key(sim, "round_s"), i, p)
		sum += json_real_value(p);
	assert_int_equal(i, 7);
	assert_true(fabs(sum - json_real_value(rp_test_key(sim, "rounds_s"))) < 1e-4);
	/* rank 0's collection of each round is on the clock (one rank: its own work, every rank waiting) */
	assert_true(json_is_true(rp_test_key(sim, "rank0_collect_projected")));
	assert_true(json_real_value(rp_test_key(sim, "rank0_collect_s")) > 0);
	assert_true(json_real_value(rp_test_key(sim, "rank0_retest_plan_s")) == 0);   /* --retest 0: no plan */
	assert_true(fabs(json_real_value(rp_test_key(sim, "projected_wall_s")) -
			 (sum + json_real_value(rp_test_key(sim, "report_writes_s")) +
			  json_real_value(rp_test_key(sim, "rank0_collect_s")))) < 1e-4);
	/* each healthy round: both directions of 10 ms + 65536 x 1016 bytes at 100 Gb/s, plus 5 ms */
	json_array_foreach(rp_test_key(sim, "round_s"), i, p)
		ok += fabs(json_real_value(p) - (2 * (0.010 + 65536.0 * 1016 / 12.5e9) + 0.005)) < 1e-6;
	assert_int_equal(ok, 6);
	ok = 0;
	pairs = rp_test_key(root, "pairs");
	json_array_foreach(pairs, i, p) {
		const char *st = json_string_value(rp_test_key(p, "status"));
		const char *sn = json_string_value(rp_test_key(rp_test_key(p, "src"), "node"));
		const char *dn = json_string_value(rp_test_key(rp_test_key(p, "dst"), "node"));
		const char *sd = json_string_value(rp_test_key(rp_test_key(p, "src"), "device"));
		const char *dd = json_string_value(rp_test_key(rp_test_key(p, "dst"), "device"));
		bool is_dead = strcmp(sd, "mlx5_0") == 0 && strcmp(dd, "mlx5_0") == 0 &&
			       ((strcmp(sn, "node1") == 0 && strcmp(dn, "node2") == 0) ||
				(strcmp(sn, "node2") == 0 && strcmp(dn, "node1") == 0));

		if (is_dead) {
			assert_string_equal(st, "retry_exceeded");
			dead++;
		} else {
			assert_string_equal(st, "ok");
			ok++;
		}
	}
	assert_int_equal(dead, 2);
	assert_int_equal(ok, 54);
	json_decref(root);

	snprintf(dir, sizeof(dir), "%s/a.html", d);
	html = file_get(dir);
	assert_non_null(strstr(html, "<title>SIMULATED: fabric model "));
	assert_non_null(strstr(html, "<p id=\"banner\">SIMULATED: fabric model "));
	free(html);
	snprintf(dir, sizeof(dir), "%s/a.xml", d);
	html = file_get(dir);
	assert_non_null(strstr(html, "<property name=\"command_line\" value=\"SIMULATED rdmaprobe matrix --transport sim"));
	free(html);

	/* by default the reachability sweep runs first (width 64: the 7 rounds in one probe round) and
	 * finds the dead pair; its time is in the report */
	snprintf(dir, sizeof(dir), "%s", d);
	rc = rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 0 --json '%s/b.json' "
			     "2>/dev/null", mpath, dir);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "SIMULATED FAIL: 54 of 56 pairs ok, 2 failed (0 below threshold) over 8 endpoints in "
				    "7 rounds ("));
	assert_non_null(strstr(out, " s on the projected clock), after a reachability sweep of 1 round (2 directions "
				    "unreachable, 0 flaky)"));
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/b.json");
	root = json_load_file(dir, 0, &jerr);
	assert_non_null(root);
	sim = rp_test_key(rp_test_key(root, "matrix"), "sweep");
	assert_int_equal(json_integer_value(rp_test_key(sim, "width")), 64);
	assert_int_equal(json_integer_value(rp_test_key(sim, "unreachable")), 2);
	assert_true(json_real_value(rp_test_key(sim, "elapsed_s")) > 0);
	assert_true(json_is_null(rp_test_key(rp_test_key(root, "matrix"), "sweep_off")));
	/* --hold auto (the default): the 54 passing directions on their probes' connections */
	assert_true(json_is_true(rp_test_key(sim, "hold")));
	assert_true(json_is_null(rp_test_key(sim, "hold_off")));
	assert_int_equal(json_integer_value(rp_test_key(sim, "rank0_writes_on_held")), 54);
	assert_int_equal(json_integer_value(rp_test_key(sim, "rank0_writes_fresh")), 0);
	assert_int_equal(json_integer_value(rp_test_key(sim, "late_rounds")), 0);
	assert_non_null(strstr(out, "0 flaky), bandwidth on the probes' connections; drain: none\n"));
	json_decref(root);

	/* --hold off: the same verdict, no held connection; a bad value is refused */
	rc = rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 0 --hold off "
			     "--json '%s/c.json' 2>/dev/null", mpath, d);
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "SIMULATED FAIL: 54 of 56 pairs ok, 2 failed"));
	assert_null(strstr(out, "probes' connections"));
	snprintf(dir, sizeof(dir), "%s/c.json", d);
	root = json_load_file(dir, 0, &jerr);
	assert_non_null(root);
	sim = rp_test_key(rp_test_key(root, "matrix"), "sweep");
	assert_true(json_is_false(rp_test_key(sim, "hold")));
	assert_int_equal(json_integer_value(rp_test_key(sim, "rank0_writes_on_held")), 0);
	json_decref(root);
	rc = rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --hold maybe 2>&1", mpath);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "--hold takes auto or off, not 'maybe'"));
}

/* --list-pairs notable: the files list the two dead directions and count the 54 passes; the
 * verdict, the summary and each endpoint's counts are those of every pair. Before, every pair was
 * listed whatever the run's size (at 1,024 x 8 rail: a 6.7 GB JSON rewritten between rounds). */
static void test_list_notable(void **state)
{
	char mpath[512], path[600];
	const char *d = rp_test_tmpdir();
	json_error_t jerr;
	json_t *root, *listed, *ep;
	size_t i, pairs = 0, failed = 0;
	char *text;
	int lines = 0;

	(void)state;
	file_put("m.txt", model, mpath, sizeof(mpath));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 0 "
					 "--list-pairs notable --json '%s/n.json' --csv '%s/n.csv' --junit '%s/n.xml' --junit-pairs "
					 "2>/dev/null", mpath, d, d, d), 1);
	assert_non_null(strstr(out, "\nSIMULATED FAIL: 54 of 56 pairs ok, 2 failed"));
	snprintf(path, sizeof(path), "%s/n.json", d);
	root = json_load_file(path, 0, &jerr);
	assert_non_null(root);
	assert_int_equal(json_array_size(rp_test_key(root, "pairs")), 2);
	assert_string_equal(json_string_value(rp_test_key(json_array_get(rp_test_key(root, "pairs"), 0), "status")),
			    "retry_exceeded");
	listed = rp_test_key(rp_test_key(root, "matrix"), "pairs_listed");
	assert_string_equal(json_string_value(rp_test_key(listed, "which")), "notable");
	assert_int_equal(json_integer_value(rp_test_key(listed, "listed")), 2);
	assert_int_equal(json_integer_value(rp_test_key(listed, "total")), 56);
	assert_int_equal(json_integer_value(rp_test_key(listed, "not_listed")), 54);
	assert_int_equal(json_integer_value(rp_test_key(rp_test_key(root, "summary"), "pairs")), 56);
	assert_int_equal(json_integer_value(rp_test_key(rp_test_key(root, "verdict"), "ok")), 54);
	json_array_foreach(rp_test_key(rp_test_key(root, "matrix"), "endpoints"), i, ep) {
		pairs += (size_t)json_integer_value(rp_test_key(ep, "pairs"));
		failed += (size_t)json_integer_value(rp_test_key(ep, "failed"));
	}
	assert_int_equal(pairs, 2 * 56);      /* each direction counts at both of its endpoints */
	assert_int_equal(failed, 2 * 2);
	json_decref(root);
	snprintf(path, sizeof(path), "%s/n.csv", d);
	text = file_get(path);
	for (const char *p = text; (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	assert_int_equal(lines, 1 + 2);       /* the header and the two listed pairs */
	free(text);
	snprintf(path, sizeof(path), "%s/n.xml", d);
	text = file_get(path);
	assert_non_null(strstr(text, "name=\"54 more directions passed\""));
	assert_non_null(strstr(text, "tests=\"7\" failures=\"2\""));   /* 2 pairs, the passes, 4 nodes */
	free(text);
	/* 56 directions are under auto's threshold: every pair listed */
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 0 "
					 "--json '%s/a2.json' 2>/dev/null", mpath, d), 1);
	snprintf(path, sizeof(path), "%s/a2.json", d);
	root = json_load_file(path, 0, &jerr);
	assert_non_null(root);
	assert_int_equal(json_array_size(rp_test_key(root, "pairs")), 56);
	assert_string_equal(json_string_value(rp_test_key(rp_test_key(rp_test_key(root, "matrix"), "pairs_listed"),
							      "which")), "all");
	json_decref(root);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --list-pairs some "
					 "2>&1", mpath), 2);
	assert_non_null(strstr(out, "--list-pairs some: one of all, notable, auto"));
}

/* Issue 29 item 2 (the simulator takes the real run's report options): --jsonl streams every kept
 * direction (a run line marked simulated, a pair line each, an end line complete), its last line
 * per direction the JSON report's status; '-' is refused as the real run refuses it. Failed before:
 * "unknown option --jsonl", exit 2. */
static void test_jsonl(void **state)
{
	char mpath[512], jl[512], js[512];
	char *text;
	json_t *doc;
	size_t pair_lines = 0, n = 0;

	(void)state;
	file_put("jl.model", model, mpath, sizeof(mpath));
	snprintf(jl, sizeof(jl), "%s/s.jsonl", rp_test_tmpdir());
	snprintf(js, sizeof(js), "%s/s.json", rp_test_tmpdir());
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --jsonl '%s' "
					 "--json '%s' 2>&1", mpath, jl, js), 1);
	text = file_get(jl);
	assert_non_null(strstr(text, "\"record\":\"run\""));
	assert_non_null(strstr(text, "\"simulated\":true"));
	assert_non_null(strstr(text, "\"record\":\"end\""));
	assert_non_null(strstr(text, "\"complete\":true"));
	for (const char *p = text; (p = strstr(p, "\"record\":\"pair\"")); p++)
		pair_lines++;
	doc = json_load_file(js, 0, NULL);
	assert_non_null(doc);
	n = json_array_size(json_object_get(doc, "pairs"));
	assert_int_equal(n, 8 * 7);
	assert_true(pair_lines >= n);     /* every direction, its retests and folds again */
	json_decref(doc);
	free(text);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --jsonl - 2>&1",
					 mpath), 2);
	assert_non_null(strstr(out, "--jsonl wants a file name"));
}

/* ... and --prom, --baseline: the metrics file is written, a run judged against its own report
 * reports no regression; a baseline that cannot be read is refused before anything runs. Failed
 * before: unknown options, exit 2. */
static void test_prom_baseline(void **state)
{
	char mpath[512], prom[512], js[512];
	char *text;

	(void)state;
	file_put("pb.model", model, mpath, sizeof(mpath));
	snprintf(prom, sizeof(prom), "%s/s.prom", rp_test_tmpdir());
	snprintf(js, sizeof(js), "%s/pb.json", rp_test_tmpdir());
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --prom '%s' "
					 "--json '%s' 2>&1", mpath, prom, js), 1);
	text = file_get(prom);
	assert_non_null(strstr(text, "rdmaprobe_"));
	free(text);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --baseline '%s' 2>&1",
					 mpath, js), 1);   /* the dead link fails, as in the baseline */
	assert_non_null(strstr(out, "BASELINE ok: no regression"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --baseline "
					 "/nonexistent/b.json 2>&1", mpath), 2);
}

/* ... and --budget, chosen as a real run chooses (the plan's assumed figures over the model's
 * endpoints): an hour fits the full pattern, which then runs; a second fits nothing (exit 2, before
 * any round); --plan-dead's text is checked. Failed before: unknown option, exit 2 for all. */
static void test_budget(void **state)
{
	char mpath[512];

	(void)state;
	file_put("bud.model", model, mpath, sizeof(mpath));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --budget 1h 2>&1",
					 mpath), 1);
	assert_non_null(strstr(out, "--budget 3600 s: --pattern full fits"));
	assert_non_null(strstr(out, "SIMULATED FAIL"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --budget 1s 2>&1",
					 mpath), 2);
	assert_non_null(strstr(out, "nothing fits"));
	assert_null(strstr(out, "SIMULATED FAIL"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --budget 1h "
					 "--plan-dead many 2>&1", mpath), 2);
	assert_non_null(strstr(out, "--plan-dead many"));
}

static size_t count_of(const char *hay, const char *needle)
{
	size_t c = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		c++;
	return c;
}

/* The text is sized by findings: 16 nodes x 2 with a dead adapter (node01/mlx5_1, 30 failed
 * directions, listed first) and a dead link elsewhere (node14 <-> node15 on mlx5_0). The verdict line
 * names the drain; the failures come grouped by suspect, so the link's group shows beside the
 * adapter's (before, the first 20 failures were all the adapter's and the link never showed); only
 * the nodes with a finding get a line (--nodes-all: every node); NCCL_IB_HCA's '=' is explained once;
 * the first line no longer says "no adapter was measured". JUnit: a case per endpoint (32 + 16 nodes),
 * per pair with --junit-pairs. */
static void test_text_by_findings(void **state)
{
	static const char m2[] = "nodes 16\nadapters 2\nrate 100\nbandwidth 100\nlatency 0\nsetup 10ms\n"
				 "round-overhead 5ms\ndead-endpoint node01/mlx5_1\ndead node14/mlx5_0 node15/mlx5_0\n";
	char mpath[512];
	char *x;
	size_t lines = 0;

	(void)state;
	file_put("find.model", m2, mpath, sizeof(mpath));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --pattern rail "
					 "--sweep off --junit '%s/f.xml' 2>/dev/null", mpath, rp_test_tmpdir()), 1);
	assert_null(strstr(out, "no adapter was measured"));
	assert_true(strncmp(out, "SIMULATED run on the fabric model ", 34) == 0);
	assert_non_null(strstr(out, "; drain 1 adapter on 1 node: node01/mlx5_1:1\n"));
	assert_non_null(strstr(out, "  1 adapter suspect (on an adapter the verdict drains): 30 failed directions\n"
				    "    node01/mlx5_1:1: 30 failed directions (30 confirmed), e.g. "));
	assert_non_null(strstr(out, "  1 link suspect (between adapters it keeps: the link or the path between them): 2 "
				    "failed directions\n    node14/mlx5_0:1 <-> node15/mlx5_0:1: 2 failed directions"));
	assert_non_null(strstr(out, "nodes with a finding (3 of 16; --nodes-all lists every node):\n  node01: "));
	assert_non_null(strstr(out, "\n  node14: "));
	assert_null(strstr(out, "\n  node02: "));
	assert_non_null(strstr(out, "13 nodes without a finding: NCCL_IB_HCA==mlx5_0:1,mlx5_1:1 on each\n"));
	assert_int_equal(count_of(out, "NCCL's exact match"), 1);
	for (const char *p = out; *p; p++)
		lines += *p == '\n';
	assert_true(lines < 30);
	snprintf(mpath, sizeof(mpath), "%s/f.xml", rp_test_tmpdir());
	x = file_get(mpath);
	assert_int_equal(count_of(x, "<testcase "), 48);
	assert_non_null(strstr(x, "name=\"node01/mlx5_1:1\" time=\"0\">\n      <failure type=\"drain\""));
	free(x);
	file_put("find.model", m2, mpath, sizeof(mpath));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --pattern rail "
					 "--sweep off --nodes-all --junit-pairs --junit '%s/f.xml' 2>/dev/null", mpath,
					 rp_test_tmpdir()), 1);
	assert_non_null(strstr(out, "\nnodes:\n  node00: "));
	assert_non_null(strstr(out, "\n  node02: "));
	snprintf(mpath, sizeof(mpath), "%s/f.xml", rp_test_tmpdir());
	x = file_get(mpath);
	assert_int_equal(count_of(x, "<testcase "), 16 * 2 * 15 + 16);
	free(x);
}

/* A dead spine without --topology, end to end: 64 nodes x 2 on 8-port leaves, 4 spines, D-mod-K: the
 * 16 nodes routed through spine1 (node01, node05, ...) fail with every peer behind another leaf.
 * Before, each of their 32 adapters was drained and 16 nodes were told to use none; now nothing is
 * drained, the verdict line counts them as unusable, the nodes that lose adapters are listed first
 * (not pushed off the list by nodes with a path fault), the JSON's nodes[] says unusable with the
 * reason, the JUnit case says unusable, and the check exit stays a failure. */
static void test_dead_spine_drains_nothing(void **state)
{
	static const char m3[] = "nodes 64\nadapters 2\nrate 100\nbandwidth 100\nlatency 0\nsetup 1ms\n"
				 "fabric 8 4 dmodk\nrandom-dead 0.01 5\nfault spine spine1 dead\n";
	char mpath[512], jpath[512];
	char *x;

	(void)state;
	file_put("spine.model", m3, mpath, sizeof(mpath));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --pattern rail "
					 "--json '%s/s.json' --junit '%s/s.xml' 2>/dev/null", mpath, rp_test_tmpdir(),
					 rp_test_tmpdir()), 1);
	assert_non_null(strstr(out, "; drain: none; 32 adapters unusable, not drained (a switch or route around them)"));
	assert_non_null(strstr(out, "--nodes-all lists every node):\n  node01: "));
	assert_non_null(strstr(out, "unusable, not drained: mlx5_0:1, mlx5_1:1 (one of 16 adapters of its fabric blamed "
				    "together"));
	assert_non_null(strstr(out, "NCCL_IB_HCA=(none: no usable adapter)"));
	assert_non_null(strstr(out, "  1. group 16 adapters failing together (the fabric of node01/mlx5_0:1)"));
	assert_null(strstr(out, "; drain: mlx5"));   /* no node line drains an adapter */
	snprintf(jpath, sizeof(jpath), "%s/s.json", rp_test_tmpdir());
	x = file_get(jpath);
	assert_non_null(strstr(x, "\"drain\": [],\n      \"drain_reasons\": {},\n      \"unusable\": [\n        \"mlx5_0:1\",\n"
				  "        \"mlx5_1:1\"\n      ],\n      \"unusable_reasons\": {\n        \"mlx5_0:1\": \"one of 16"));
	assert_null(strstr(x, "\"drain\": [\n"));    /* no node drains an adapter */
	free(x);
	snprintf(jpath, sizeof(jpath), "%s/s.xml", rp_test_tmpdir());
	x = file_get(jpath);
	assert_non_null(strstr(x, "name=\"node01/mlx5_0:1\" time=\"0\">\n      <failure type=\"unusable\" "
				  "message=\"unusable, not drained: one of 16"));
	assert_null(strstr(x, "type=\"drain\""));
	free(x);

	/* diff against the fabric without the fault: the first 20 new failures, then the count and the
	 * endpoints most involved (before: every one of them, a line each); --all lists every one */
	file_put("nospine.model", "nodes 64\nadapters 2\nrate 100\nbandwidth 100\nlatency 0\nsetup 1ms\n"
		 "fabric 8 4 dmodk\nrandom-dead 0.01 5\n", mpath, sizeof(mpath));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --pattern rail "
					 "--json '%s/h.json' >/dev/null 2>&1", mpath, rp_test_tmpdir()), 1);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff '%s/h.json' '%s/s.json'", rp_test_tmpdir(),
					 rp_test_tmpdir()), 1);
	x = strstr(out, "\nnew failures (");
	assert_non_null(x);
	assert_int_equal(count_of(x, "\n  node"), 20 + 20);   /* 20 new failures, then 20 still failing */
	assert_non_null(strstr(x, " more (--all lists every one; --json has them); most involved: node"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff --all '%s/h.json' '%s/s.json' | grep -c -e '^  node' "
					 "-e 'lists every one'", rp_test_tmpdir(), rp_test_tmpdir()), 0);
	assert_true(atoi(out) > 1000);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff --all '%s/h.json' '%s/s.json' | grep -c 'lists every one'",
					 rp_test_tmpdir(), rp_test_tmpdir()), 1);   /* grep found none */
}

/* diff on the reports matrix writes by default past 100,000 directions (--list-pairs notable): read,
 * not refused ("a truncated or edited file?"); a direction the sweep found dead (4 KiB probe) and the
 * same direction failed at 64 KiB without the sweep are one pair (before: both a new failure and
 * gone); a failure the other report does not list is recovered; the headers say SIMULATED and notable. */
static void test_diff_notable(void **state)
{
	static const char ma[] = "nodes 6\nadapters 2\nrate 100\nbandwidth 100\nlatency 0\nsetup 10ms\n"
				 "round-overhead 5ms\ndead node1/mlx5_0 node2/mlx5_0\ndead node3/mlx5_1 node4/mlx5_1\n";
	static const char mb[] = "nodes 6\nadapters 2\nrate 100\nbandwidth 100\nlatency 0\nsetup 10ms\n"
				 "round-overhead 5ms\ndead node1/mlx5_0 node2/mlx5_0\ndead node0/mlx5_1 node5/mlx5_1\n";
	const char *d = rp_test_tmpdir();
	char pa[512], pb[512];

	(void)state;
	file_put("da.model", ma, pa, sizeof(pa));
	file_put("db.model", mb, pb, sizeof(pb));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 0 --list-pairs "
					 "notable --json '%s/da.json' >/dev/null 2>&1", pa, d), 1);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 0 --sweep off "
					 "--list-pairs notable --json '%s/db.json' >/dev/null 2>&1", pb, d), 1);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff '%s/da.json' '%s/da.json' 2>&1", d, d), 0);
	assert_null(strstr(out, "truncated or edited"));
	assert_non_null(strstr(out, "SIMULATED OLD "));
	assert_non_null(strstr(out, "4 pairs listed + 128 plain passes counted: a notable report, SIMULATED"));
	assert_non_null(strstr(out, "still failing (4):"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff '%s/da.json' '%s/db.json' 2>&1", d, d), 1);
	assert_non_null(strstr(out, "new failures (2):"));
	assert_non_null(strstr(out, "still failing (2):"));      /* node1 <-> node2: the sweep's and the rounds' */
	assert_non_null(strstr(out, "recovered (2):"));
	assert_non_null(strstr(out, "now ok (a plain pass its notable report counts, not listed)"));
	assert_null(strstr(out, "failed in OLD, not in NEW"));
	assert_null(strstr(out, "measured in OLD, not in NEW"));
	/* --calibrate-from reads a notable report: its set-up and rate from the plain passes' sample
	 * (before: "no ok direction to fit from") */
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --plan --nodes 6 --hcas 2 --calibrate-from '%s/da.json' "
					 "--allow-simulated 2>&1", d), 0);
	assert_non_null(strstr(out, "set-up "));
	assert_non_null(strstr(out, "ok directions in "));
	assert_null(strstr(out, "no ok direction"));
}

/* One clock: the verdict line's duration is the JSON's matrix.elapsed_s and the HTML's (before: the
 * text had none, and the progress, the JSON and the projected figures gave four); the progress lines
 * count the failures so far, the sweep's included (before: "0 failed" while they were unreachable),
 * with the sweep's rounds and a time left. */
/* With --retest, rank 0 plans the retests after the last round (the verdict over every result) while
 * every rank waits for the jobs: the text and the JSON give that time, and the projection adds up
 * (test_sim_run's test_retest_plan_on_the_clock holds the clock to it exactly). */
static void test_retest_plan_on_the_clock(void **state)
{
	char mpath[512], path[600];
	const char *d = rp_test_tmpdir();
	json_error_t jerr;
	json_t *root, *sim;
	double plan, collect, sum = 0;
	size_t i;
	json_t *p;

	(void)state;
	file_put("plan.model", model, mpath, sizeof(mpath));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 1 --sweep off "
					 "--json '%s/plan.json' 2>/dev/null", mpath, d), 1);
	assert_non_null(strstr(out, " + planning the retests "));
	snprintf(path, sizeof(path), "%s/plan.json", d);
	root = json_load_file(path, 0, &jerr);
	assert_non_null(root);
	sim = rp_test_key(root, "simulation");
	plan = json_real_value(rp_test_key(sim, "rank0_retest_plan_s"));
	collect = json_real_value(rp_test_key(sim, "rank0_collect_s"));
	assert_true(plan > 0 && collect > 0);
	json_array_foreach(rp_test_key(sim, "round_s"), i, p)
		sum += json_real_value(p);
	assert_true(fabs(json_real_value(rp_test_key(sim, "projected_wall_s")) -
			 (sum + json_real_value(rp_test_key(sim, "report_writes_s")) + collect + plan)) < 1e-4);
	json_decref(root);
}

static void test_one_clock(void **state)
{
	char mpath[512], path[600], want[64], err[1 << 14];
	const char *d = rp_test_tmpdir(), *p;
	json_error_t jerr;
	json_t *root;
	double text_s = -1, json_s;
	char *html;

	(void)state;
	file_put("clock.model", model, mpath, sizeof(mpath));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 0 "
					 "--json '%s/clock.json' --html '%s/clock.html' 2>'%s/clock.err'", mpath, d, d, d), 1);
	p = strstr(out, "SIMULATED FAIL: ");
	assert_non_null(p);
	p = strstr(p, " rounds (");
	assert_non_null(p);
	assert_int_equal(sscanf(p, " rounds (%lf s on the projected clock)", &text_s), 1);
	snprintf(path, sizeof(path), "%s/clock.json", d);
	root = json_load_file(path, 0, &jerr);
	assert_non_null(root);
	json_s = json_real_value(rp_test_key(rp_test_key(root, "matrix"), "elapsed_s"));
	json_decref(root);
	snprintf(want, sizeof(want), "%.1f", json_s);
	snprintf(path, sizeof(path), "%.1f", text_s);
	assert_string_equal(want, path);
	snprintf(path, sizeof(path), "%s/clock.html", d);
	html = file_get(path);
	snprintf(want, sizeof(want), "; %.1f s.<br>", json_s);
	assert_non_null(strstr(html, want));
	free(html);
	snprintf(path, sizeof(path), "cat '%s/clock.err'", d);
	assert_int_equal(rp_test_run(path, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "round 7 of 7 done, sweep 1 of 1 done: 2 failed so far, "));
	assert_non_null(strstr(err, " s left (the projected clock)"));

	/* with the default --retest the dead link's screen waits for the sweep's second pass (--timeout
	 * 10 s and the MTU probe), started beside the rounds after the screen: the last round's line
	 * counts what is left of it (before: "about 0 s left", then 14 s more) */
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' 2>'%s/clock.err' "
					 ">/dev/null", mpath, d), 1);
	assert_int_equal(rp_test_run(path, err, sizeof(err)), 0);
	{
		const char *l = strstr(err, "round 7 of 7 done, sweep 1 of 1 done: ");
		double in_s = -1, left_s = -1, end_s = -1;

		assert_non_null(l);
		assert_int_equal(sscanf(strstr(l, "so far, "), "so far, %lf s in, about %lf s left", &in_s, &left_s), 2);
		l = strstr(err, "reachability sweep retest beside the rounds 1 of 1 done: ");
		assert_non_null(l);
		assert_int_equal(sscanf(strstr(l, "so far, "), "so far, %lf s in", &end_s), 1);
		assert_true(left_s >= 10);
		assert_true(in_s + left_s >= 0.8 * end_s);
	}
}

/* The simulator shown: matrix --help names --transport and --fabric-model (before: in no --help, so in
 * no man page or completion either); the CSV's first column says SIMULATED on every row and the
 * JUnit's properties say so; --calibrate-from refuses a simulated report unless --allow-simulated
 * (before: took it without a word); the shipped example model runs. */
static void test_simulator_shown(void **state)
{
	char mpath[512], path[600];
	const char *d = rp_test_tmpdir();
	char *text;
	size_t rows = 0;

	(void)state;
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --help 2>&1"), 0);
	assert_non_null(strstr(out, "--transport"));
	assert_non_null(strstr(out, "--fabric-model FILE"));
	assert_non_null(strstr(out, "--allow-simulated"));
	file_put("shown.model", model, mpath, sizeof(mpath));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 0 --json "
					 "'%s/shown.json' --csv '%s/shown.csv' --junit '%s/shown.xml' >/dev/null 2>&1", mpath, d,
					 d, d), 1);
	snprintf(path, sizeof(path), "%s/shown.csv", d);
	text = file_get(path);
	assert_true(strncmp(text, "simulated,", 10) == 0);
	for (const char *p = strchr(text, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
		assert_true(strncmp(p + 1, "SIMULATED,", 10) == 0);
		rows++;
	}
	assert_int_equal(rows, 56);
	free(text);
	snprintf(path, sizeof(path), "%s/shown.xml", d);
	text = file_get(path);
	assert_non_null(strstr(text, "<testsuites name=\"SIMULATED rdmaprobe matrix\""));
	assert_non_null(strstr(text, "<property name=\"simulated\" value=\"true\"/>"));
	free(text);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --plan --nodes 4 --hcas 2 --calibrate-from '%s/shown.json' "
					 "2>&1", d), 2);
	assert_non_null(strstr(out, "a SIMULATED run's report"));
	assert_non_null(strstr(out, "--allow-simulated"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --plan --nodes 4 --hcas 2 --calibrate-from '%s/shown.json' "
					 "--allow-simulated 2>&1", d), 0);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --fabric-model '%s' 2>&1", mpath), 2);
	assert_non_null(strstr(out, "--fabric-model goes with --transport sim"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model "
					 "share/fabric-models/ndr-rail-example.model --pattern rail --sweep off 2>&1"), 1);
	assert_non_null(strstr(out, "; drain 1 adapter on 1 node: node17/mlx5_3:1"));
}

static void test_bad_input(void **state)
{
	char mpath[512];

	(void)state;
	file_put("bad.txt", "nodes 4\nadapters 2\n\nslow node0/mlx5_0 node9/mlx5_0 10\n", mpath, sizeof(mpath));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' 2>&1", mpath), 2);
	assert_non_null(strstr(out, "line 4: slow: no endpoint 'node9/mlx5_0'"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model /nonexistent 2>&1"), 3);
	assert_non_null(strstr(out, "open /nonexistent"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim 2>&1"), 2);
	assert_non_null(strstr(out, "--transport sim needs --fabric-model FILE"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport tcp --fabric-model x 2>&1"), 2);
	assert_non_null(strstr(out, "--transport tcp: only 'sim'"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --bidir 2>&1",
					 mpath), 2);
	assert_non_null(strstr(out, "does not model --bidir"));
}

/* Issue 26 items 8, 9, 19: a model whose path is not UTF-8: the JSON is written all the same, the
 * bad byte as '?' (it was lost: "could not write", exit 3, because jansson refuses invalid UTF-8); a
 * file that cannot be written says why; one that cannot be written at all is refused at the start. */
static void test_unclean_path_and_write_errors(void **state)
{
	char mpath[512], jpath[512], cmd[2048];
	const char *d = rp_test_tmpdir();
	json_error_t jerr;
	json_t *root;

	(void)state;
	file_put("bad\xffname.txt", model, mpath, sizeof(mpath));
	snprintf(jpath, sizeof(jpath), "%s/u.json", d);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --retest 0 "
					 "--sweep off --json '%s' 2>&1", mpath, jpath), 1);
	assert_null(strstr(out, "could not write"));
	root = json_load_file(jpath, 0, &jerr);
	assert_non_null(root);
	assert_non_null(strstr(json_string_value(rp_test_key(root, "fabric_model")), "bad?name.txt"));
	assert_non_null(strstr(json_string_value(rp_test_key(root, "command_line")), "bad\xef\xbf\xbdname.txt"));   /* U+FFFD */
	json_decref(root);
	/* a file the start-up check passes but the write fails (a 1 KiB file size limit, SIGXFSZ
	 * ignored: write(2) says EFBIG): the cause is on the "could not write" line */
	snprintf(cmd, sizeof(cmd), "ulimit -f 1; trap '' XFSZ; '%s' matrix --transport sim --fabric-model '%s' "
		 "--retest 0 --sweep off --json '%s/big.json' 2>&1", rp_test_bin(), mpath, d);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 3);
	assert_non_null(strstr(out, "could not write "));
	assert_non_null(strstr(out, "/big.json: File too large"));
	/* an output that cannot be written is refused before the model runs, as loopback does */
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "matrix --transport sim --fabric-model '%s' --json /dev/full "
					 "2>&1", mpath), 2);
	assert_non_null(strstr(out, "--json /dev/full: cannot write the report there; nothing was measured"));
	assert_null(strstr(out, "pairs ok"));
}

/* Issue 26 item 13: SIGTERM mid-run ends the simulated run as it ends a real one: the rounds stop,
 * the reports are written with interrupted: true and the verdict of what ran, the text says
 * INTERRUPTED, exit 143. There was no handler: the process died, its last report saying
 * interrupted: false. */
static void test_sigterm_is_an_interrupted_run(void **state)
{
	static char cmd[4096];
	char mpath[512], jpath[512];
	json_error_t jerr;
	json_t *root, *m;

	(void)state;
	file_put("big.txt", "nodes 128\nadapters 8\nrate 100\nsetup 1ms\nround-overhead 1ms\n", mpath, sizeof(mpath));
	snprintf(jpath, sizeof(jpath), "%s/term.json", rp_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "'%s' matrix --transport sim --fabric-model '%s' --sweep off --retest 0 --json '%s' "
		 ">'%s.out' 2>&1 & p=$!; for i in $(seq 1 600); do [ -s '%s' ] && break; sleep 0.1; done; "
		 "kill -TERM $p; wait $p; echo \"rc=$?\"; cat '%s.out'", rp_test_bin(), mpath, jpath, jpath, jpath, jpath);
	rp_test_run(cmd, out, sizeof(out));
	assert_int_equal(strncmp(out, "rc=143\n", 7), 0);
	assert_non_null(strstr(out, "INTERRUPTED by signal 15"));
	assert_non_null(strstr(out, "\nSIMULATED FAIL: "));
	root = json_load_file(jpath, 0, &jerr);
	assert_non_null(root);
	m = rp_test_key(root, "matrix");
	assert_true(json_is_true(rp_test_key(m, "interrupted")));
	assert_int_equal(json_integer_value(rp_test_key(m, "signal")), 15);
	assert_true(json_is_false(rp_test_key(m, "complete")));
	assert_true(json_integer_value(rp_test_key(m, "rounds_done")) < json_integer_value(rp_test_key(m, "rounds")));
	assert_true(json_is_false(rp_test_key(rp_test_key(root, "verdict"), "pass")));
	json_decref(root);
}

/* What a run says about the fabric, without what differs from run to run (times, the verdict line's
 * projected clock among them, memory, the rank count, sides answered here, mpirun's own lines after
 * it): the grid, the nodes, the failures and the verdict, in order, up to the verdict line. */
static void findings(const char *text, char *buf, size_t len)
{
	const char *p = text;
	size_t n = 0;

	buf[0] = '\0';
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if ((l >= 2 && (isdigit((unsigned char)p[0]) || strncmp(p, "  ", 2) == 0 || strncmp(p, "nodes:", 6) == 0 ||
				strncmp(p, "failures:", 9) == 0 || strncmp(p, "Gb/s", 4) == 0 ||
				strncmp(p, "SIMULATED PASS", 14) == 0 || strncmp(p, "SIMULATED FAIL", 14) == 0)) &&
		    n + l + 2 < len) {
			const char *clock = memmem(p, l, " s on the projected clock", 25);
			size_t k = l, skip = 0;

			/* the projected clock of a run of one rank holds rank 0's real seconds on this host
			 * (lib/sim/sim_run.h): it may differ from the ranks' by a tenth under load; its
			 * figure is left out ("(10.6 s on the projected clock)" -> "( s on ...)") */
			if (clock) {
				for (k = (size_t)(clock - p); k > 0 && p[k - 1] != '('; k--)
					;
				skip = (size_t)(clock - p) - k;
			}
			memcpy(buf + n, p, k);
			memcpy(buf + n + k, p + k + skip, l - k - skip);
			n += l - skip;
			buf[n++] = '\n';
			buf[n] = '\0';
		}
		if (strncmp(p, "SIMULATED PASS", 14) == 0 || strncmp(p, "SIMULATED FAIL", 14) == 0)
			break;
		p += l + (e != NULL);
	}
}

/* Under mpirun the job's ranks share the model's nodes (3 ranks over 4 nodes: one drives two) and
 * talk over MPI as a real run does (start-up exchange, reports and go, the pairs' side channels):
 * the findings are those of the one-process run of the same model, line for line, rank 0 alone
 * prints and writes, and the JSON says how many ranks ran. Failed before the simulation took MPI's
 * ranks: every process ran the whole simulation alone and printed it (three verdict lines), and the
 * JSON had no "ranks". The findings are read from rank 0's stdout alone: mpirun forwards the ranks'
 * stderr and its own notices (indented lines such as "  Process name: ...") in no set order with it,
 * and such a line can fall among the findings (the comparison failed once, under load, in a
 * check-clang run whose output cmocka cut short). Skipped loudly without mpirun or an MPI build. */
static void test_mpi_ranks_same_findings(void **state)
{
	static char one[1 << 16], three[1 << 16], cmd[4096];
	static const char slow[] = "# 4 x 2: a dead adapter, a slow link\nnodes 4\nadapters 2\nrate 100\nbandwidth 100\n"
				   "latency 0\nsetup 10ms\nround-overhead 5ms\ndead-endpoint node1/mlx5_1\n"
				   "slow node2/mlx5_0 node3/mlx5_0 40\n";
	char mpath[512], jpath[512];
	json_error_t jerr;
	json_t *root;
	const char *v;

	(void)state;
	if (system("command -v mpirun >/dev/null 2>&1") != 0 || rp_test_run_bin(out, sizeof(out), "--version") != 0 ||
	    !strstr(out, "mpi")) {
		fprintf(stderr, "SKIP: mpirun (openmpi-bin) or an MPI build of rdmaprobe is missing\n");
		skip();
	}
	file_put("mpi.model", slow, mpath, sizeof(mpath));
	snprintf(jpath, sizeof(jpath), "%s/mpi.json", rp_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "matrix --transport sim --fabric-model '%s' --nccl-version 2.28.9 --retest 1", mpath);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "%s", cmd), 1);
	findings(out, one, sizeof(one));
	snprintf(cmd, sizeof(cmd),
		 "ASAN_OPTIONS=detect_leaks=0 timeout 120 mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS -np 3 "
		 "'%s' matrix --transport sim --fabric-model '%s' --nccl-version 2.28.9 --retest 1 --json '%s' 2>'%s/mpi.err'",
		 rp_test_bin(), mpath, jpath, rp_test_tmpdir());
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 1);
	findings(out, three, sizeof(three));
	assert_non_null(strstr(one, "SIMULATED FAIL: "));
	assert_non_null(strstr(one, "drain: mlx5_1:1"));
	assert_string_equal(three, one);
	assert_non_null(strstr(out, "3 ranks (MPI)"));
	assert_null(strstr(strstr(out, "SIMULATED FAIL") + 1, "SIMULATED FAIL"));   /* rank 0 alone prints */
	root = json_load_file(jpath, 0, &jerr);
	assert_non_null(root);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "simulation"), "ranks")), 3);
	assert_true(json_is_true(json_object_get(root, "simulated")));
	v = json_string_value(json_object_get(json_object_get(root, "matrix"), "pattern"));
	assert_non_null(v);
	json_decref(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simulated_everywhere),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_jsonl),
		cmocka_unit_test(test_prom_baseline),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_text_by_findings),
		cmocka_unit_test(test_dead_spine_drains_nothing),
		cmocka_unit_test(test_diff_notable),
		cmocka_unit_test(test_one_clock),
		cmocka_unit_test(test_retest_plan_on_the_clock),
		cmocka_unit_test(test_simulator_shown),
		cmocka_unit_test(test_list_notable),
		cmocka_unit_test(test_unclean_path_and_write_errors),
		cmocka_unit_test(test_sigterm_is_an_interrupted_run),
		cmocka_unit_test(test_mpi_ranks_same_findings),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
