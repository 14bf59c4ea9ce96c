/* test_report_junit.c: the JUnit file is well-formed XML (checked by xmllint, a real parser), has one
 * test case per pair and per node, failures with their reason, and survives hostile names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mx_view.h"
#include "testutil.h"
#include "report/report_junit.h"

static char *write_and_parse(const struct rp_matrix_view *v, const char *name)
{
	char path[256], cmd[512], out[4096];
	char *text;

	snprintf(path, sizeof(path), "%s/%s", rp_test_tmpdir(), name);
	assert_int_equal(rp_report_junit_write(v, path), 0);
	text = mx_slurp(path);
	assert_non_null(text);
	if (system("command -v xmllint >/dev/null 2>&1") != 0) {
		free(text);
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			fail_msg("xmllint is missing under CI=true (scripts/install-deps.sh installs libxml2-utils)");
		skip();   /* xmllint (libxml2-utils) is needed to prove the XML is well-formed */
	}
	snprintf(cmd, sizeof(cmd), "xmllint --noout '%s' 2>&1", path);
	if (rp_test_run(cmd, out, sizeof(out)) != 0)
		fail_msg("xmllint rejects %s: %s", path, out);
	return text;
}

/* By endpoint (matrix's default): one case per endpoint and per node; the drained endpoint's case
 * fails naming its pairs, a failure between two kept endpoints fails both ends' cases, and an
 * endpoint whose only failures are with the drained peer passes, counting them. A simulated run says
 * so in the suite's name and properties. Before, every pair was a case (16 here, 84,377 at 1,024 x 8). */
static void test_per_endpoint(void **state)
{
	struct rp_junit_opts opts = { .simulated = "m.model" };
	struct mx_view mx;
	struct rp_sb sb;
	char path[256];
	char *text;

	(void)state;
	mx_view_build(&mx, false);
	snprintf(path, sizeof(path), "%s/ep.xml", rp_test_tmpdir());
	assert_int_equal(rp_report_junit_write_opts(&mx.view, &opts, path), 0);
	text = mx_slurp(path);
	assert_non_null(text);
	/* 4 endpoints + 4 nodes; node3's endpoint and node3 fail */
	assert_non_null(strstr(text, "<testsuites name=\"SIMULATED rdmaprobe matrix\" tests=\"8\" failures=\"2\""));
	assert_int_equal(mx_count(text, "<testcase "), 8);
	assert_non_null(strstr(text, "<property name=\"simulated\" value=\"true\"/>"));
	assert_non_null(strstr(text, "<property name=\"fabric_model\" value=\"m.model\"/>"));
	assert_non_null(strstr(text, "<testcase classname=\"node3\" name=\"node3/rxe3:1\" time=\"0\">\n"
				     "      <failure type=\"drain\" message=\"drain: "));
	assert_non_null(strstr(text, ">6 failed directions of its own\nnode0/rxe0:1 -&gt; node3/rxe3:1: rtr_refused: modify qp"));
	assert_non_null(strstr(text, "\n... and 3 more</failure>"));
	assert_non_null(strstr(text, "name=\"node0/rxe0:1\" time=\"0\">\n      <system-out>6 directions, 2 failed (2 with a "
				     "drained peer: its case)"));
	free(text);
	/* a failure between two kept endpoints: both cases fail, naming it */
	for (size_t i = 0; i < mx.view.n; i++)
		if (mx.pair_eps[2 * i] == 0 && mx.pair_eps[2 * i + 1] == 1)
			rp_pair_result_fail(&mx.res[i], RP_ST_RETRY_EXCEEDED, "retry exceeded");
	rp_sb_init(&sb);
	rp_report_junit_build_opts(&mx.view, &(struct rp_junit_opts){ 0 }, &sb);
	assert_false(rp_sb_failed(&sb));
	assert_non_null(strstr(sb.buf, "<testsuites name=\"rdmaprobe matrix\" tests=\"8\" failures=\"4\""));
	assert_int_equal(mx_count(sb.buf, "<failure type=\"failed\" message=\"1 failed direction that no drain explains"), 2);
	assert_int_equal(mx_count(sb.buf, "node0/rxe0:1 -&gt; node1/rxe1:1: retry_exceeded: retry exceeded"), 2);
	assert_null(strstr(sb.buf, "simulated"));
	rp_sb_fini(&sb);
	mx_view_fini(&mx);
}

static void test_pairs_and_failures(void **state)
{
	struct mx_view mx;
	char *text;

	(void)state;
	mx_view_build(&mx, false);
	text = write_and_parse(&mx.view, "plain.xml");
	/* 12 pairs + 4 nodes; 6 pair failures + node3 to drain */
	assert_non_null(strstr(text, "tests=\"16\" failures=\"7\""));
	assert_int_equal(mx_count(text, "<testcase "), 16);
	assert_int_equal(mx_count(text, "<failure type=\"rtr_refused\""), 6);
	assert_int_equal(mx_count(text, "<failure type=\"drain\""), 1);
	assert_non_null(strstr(text, "name=\"node3/rxe3:1 -&gt; node0/rxe0:1\""));
	assert_non_null(strstr(text, "Connection timed out"));
	assert_non_null(strstr(text, "recommended NCCL_IB_HCA==rxe0:1"));
	free(text);
	mx_view_fini(&mx);
}

static void test_hostile_names_escaped(void **state)
{
	struct mx_view mx;
	char *text;

	(void)state;
	mx_view_build(&mx, true);
	text = write_and_parse(&mx.view, "hostile.xml");
	assert_null(strstr(text, "<script>"));
	assert_null(strstr(text, "<x a="));
	assert_null(strstr(text, "\x01"));
	assert_null(strstr(text, "\xff"));
	assert_non_null(strstr(text, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;??"));
	assert_int_equal(mx_count(text, "<testcase "), 16);
	free(text);
	mx_view_fini(&mx);
}

/* A flaky pair passes with a note and its attempts; a confirmed failure fails; an unconfirmed one
 * fails saying it was not confirmed; a NaN time or rate is no "nan" in the XML (the old writer knew
 * none of this: the flaky pair said nothing, and "nan" went into time=""). */
static void test_flaky_confirmed_unconfirmed(void **state)
{
	struct mx_view mx;
	char *text;

	(void)state;
	mx_view_build(&mx, false);
	mx_view_mark_verdict(&mx);
	text = write_and_parse(&mx.view, "verdict.xml");
	assert_non_null(strstr(text, "tests=\"16\" failures=\"7\""));   /* the flaky pair is no failure */
	assert_non_null(strstr(text, "name=\"node0/rxe0:1 -&gt; node1/rxe1:1\" time=\"0.000\">\n      <system-out>"
				     "0.200 Gb/s, slowest interval 0.000 Gb/s, verified\n"
				     "flaky: failed, then passed on a retest (a warning, not a failure)\nwarnings: flaky\n"
				     "attempt 1: timed_out on src (qp_timeout 14, 0.200 Gb/s): no completion for 4.0 s; "
				     "attempt 2: ok (qp_timeout 20, 0.200 Gb/s)</system-out>"));
	assert_non_null(strstr(text, "name=\"node0/rxe0:1 -&gt; node2/rxe2:1\" time=\"0.000\">\n      <system-out>"
				     "n/a Gb/s, slowest interval n/a Gb/s, verified\nwarnings: interval_drop</system-out>"));
	assert_non_null(strstr(text, "message=\"rtr_refused: modify qp to RTR on rxe0 port 1: &lt;Connection timed out&gt; "
				     "&amp; &quot;node3&quot; (confirmed: failed on every attempt)\""));
	assert_non_null(strstr(text, "message=\"rtr_refused: modify qp to RTR on rxe3 port 1: &lt;Connection timed out&gt; "
				     "&amp; &quot;node0&quot; (not confirmed: failed once and could not be measured again)\""));
	assert_int_equal(mx_count(text, "(confirmed: failed on every attempt)\""), 1);
	assert_null(strstr(text, "nan"));
	free(text);
	mx_view_fini(&mx);
}

/* A write replaces the file whole: no temporary file is left behind. */
static void test_atomic_replace(void **state)
{
	struct mx_view mx;
	char path[256], cmd[512], out[256];

	(void)state;
	mx_view_build(&mx, false);
	snprintf(path, sizeof(path), "%s/again.xml", rp_test_tmpdir());
	assert_int_equal(rp_report_junit_write(&mx.view, path), 0);
	mx.view.n = 2;
	assert_int_equal(rp_report_junit_write(&mx.view, path), 0);
	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -c tmp", rp_test_tmpdir());
	rp_test_run(cmd, out, sizeof(out));
	assert_string_equal(out, "0\n");
	char *text = mx_slurp(path);

	assert_non_null(text);
	assert_int_equal(mx_count(text, "<testcase "), 2 + 4);
	free(text);
	assert_true(rp_report_junit_write(&mx.view, "/nonexistent-dir/x.xml") < 0);
	mx_view_fini(&mx);
}

/* --bidir: a passing pair's test case carries its reverse direction's line and the sum; a failed one
 * its reverse's status in the failure body. (Before: the reverse was not in the file.) */
static void test_bidir_reverse(void **state)
{
	struct mx_view mx;
	char *text;

	(void)state;
	mx_view_build(&mx, false);
	mx.res[0].reverse = (struct rp_pair_reverse){ .measured = true, .status = RP_ST_OK, .gbps = 0.1, .gbps_min = 0.05,
						      .verified = true, .bad_offset = -1 };
	mx.res[2].reverse = (struct rp_pair_reverse){ .measured = true, .status = RP_ST_RTR, .bad_offset = -1 };
	text = write_and_parse(&mx.view, "bidir.xml");
	assert_non_null(strstr(text, "0.200 Gb/s, slowest interval 0.000 Gb/s, verified\n"
				     "reverse rxe1:1 -> rxe0:1: ok, 0.100 Gb/s, slowest interval 0.050 Gb/s, verified\n"
				     "both directions: 0.300 Gb/s</system-out>"));
	assert_non_null(strstr(text, "\nreverse rxe3:1 -> rxe0:1: rtr_refused, 0.000 Gb/s"));
	free(text);
	mx_view_fini(&mx);
}

/* A file streamed in chunks is the document rp_report_junit_build() makes in one piece, also when it
 * spans many chunks (a synthetic 64 x 4 matrix: 16,128 pairs, megabytes of XML). */
static void test_streamed_equals_built(void **state)
{
	struct mx_synth syn;
	struct rp_sb sb;
	char path[256], *text;

	(void)state;
	assert_int_equal(mx_synth_build(&syn, 64, 4, SIZE_MAX, true), 0);
	assert_true(syn.n > 10000);
	rp_sb_init(&sb);
	rp_report_junit_build(&syn.view, &sb);
	assert_false(rp_sb_failed(&sb));
	assert_true(sb.len > 4 * 65536);
	snprintf(path, sizeof(path), "%s/streamed.xml", rp_test_tmpdir());
	assert_int_equal(rp_report_junit_write(&syn.view, path), 0);
	text = mx_slurp(path);
	assert_non_null(text);
	assert_int_equal(strlen(text), sb.len);
	assert_memory_equal(text, sb.buf, sb.len);
	free(text);
	rp_sb_fini(&sb);
	mx_synth_fini(&syn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_endpoint),
		cmocka_unit_test(test_pairs_and_failures),
		cmocka_unit_test(test_hostile_names_escaped),
		cmocka_unit_test(test_flaky_confirmed_unconfirmed),
		cmocka_unit_test(test_atomic_replace),
		cmocka_unit_test(test_bidir_reverse),
		cmocka_unit_test(test_streamed_equals_built),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
