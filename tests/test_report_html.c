/* test_report_html.c: the HTML page parses cleanly (xmllint's HTML parser), escapes hostile names,
 * holds both heatmaps and the failures, needs nothing from the network, and renders in headless
 * Chromium with its script run (skipped loudly when chromium is not installed). */
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
#include "report_html.h"

static char *write_page(const struct rp_matrix_view *v, const char *name, char *path, size_t path_len)
{
	char *text;

	snprintf(path, path_len, "%s/%s", rp_test_tmpdir(), name);
	assert_int_equal(rp_report_html_write(v, path), 0);
	text = mx_slurp(path);
	assert_non_null(text);
	return text;
}

static void test_structure_and_content(void **state)
{
	struct mx_view mx;
	char path[256], cmd[512], out[8192];
	char *text;

	(void)state;
	mx_view_build(&mx, false);
	text = write_page(&mx.view, "plain.html", path, sizeof(path));
	assert_non_null(strstr(text, "id=\"bw-heatmap\""));
	assert_non_null(strstr(text, "id=\"reach-heatmap\""));
	assert_int_equal(mx_count(text, "<li class=\"failure\">"), 6);
	assert_non_null(strstr(text, "node3/rxe3:1 &rarr; node0/rxe0:1: <b>rtr_refused</b>"));
	/* 4x4 cells per grid, 12 with hover details each */
	assert_int_equal(mx_count(text, "data-d=\""), 24);
	assert_int_equal(mx_count(text, "<td class=\"self\">"), 8);
	assert_non_null(strstr(text, "<code>=rxe0:1</code>"));
	/* self-contained: nothing fetched */
	assert_null(strstr(text, "http://"));
	assert_null(strstr(text, "https://"));
	assert_null(strstr(text, " src="));
	assert_null(strstr(text, "<link"));
	if (system("command -v xmllint >/dev/null 2>&1") != 0) {
		free(text);
		mx_view_fini(&mx);
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			fail_msg("xmllint is missing under CI=true (scripts/install-deps.sh installs libxml2-utils)");
		skip();   /* xmllint (libxml2-utils) is needed to parse the page */
	}
	snprintf(cmd, sizeof(cmd), "xmllint --html --noout '%s' 2>&1", path);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	if (out[0])
		fail_msg("HTML parser complains about %s: %s", path, out);
	free(text);
	mx_view_fini(&mx);
}

static void test_hostile_names_escaped(void **state)
{
	struct mx_view mx;
	char path[256], cmd[512], out[8192];
	char *text;

	(void)state;
	mx_view_build(&mx, true);
	text = write_page(&mx.view, "hostile.html", path, sizeof(path));
	assert_int_equal(mx_count(text, "<script"), 1);   /* only the page's own */
	assert_null(strstr(text, "<x a="));
	assert_null(strstr(text, "\x01"));
	assert_null(strstr(text, "\xff"));
	assert_non_null(strstr(text, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;??"));
	snprintf(cmd, sizeof(cmd), "xmllint --html --noout '%s' 2>&1", path);
	if (system("command -v xmllint >/dev/null 2>&1") == 0) {
		rp_test_run(cmd, out, sizeof(out));
		if (out[0])
			fail_msg("HTML parser complains about %s: %s", path, out);
	}
	free(text);
	mx_view_fini(&mx);
}

/* Retests and warnings beside the pair: a flaky pair in the warnings list with both attempts, a
 * confirmed and an unconfirmed failure marked as such, a NaN rate shown as n/a (the old page printed
 * "nan" and coloured the cell from (int)NaN). The page still parses. */
static void test_verdict_marks_and_nan(void **state)
{
	struct mx_view mx;
	char path[256], cmd[512], out[8192];
	char *text;

	(void)state;
	mx_view_build(&mx, false);
	text = write_page(&mx.view, "unmarked.html", path, sizeof(path));
	assert_null(strstr(text, "id=\"warnings\""));   /* nothing to warn about: no section */
	free(text);
	mx_view_mark_verdict(&mx);
	text = write_page(&mx.view, "marked.html", path, sizeof(path));
	assert_non_null(strstr(text, "<ol id=\"warnings\">"));
	assert_int_equal(mx_count(text, "<li class=\"warning\">"), 2);
	assert_non_null(strstr(text, "node0/rxe0:1 &rarr; node1/rxe1:1: <b>ok</b>, 0.200 Gb/s <span class=\"flaky\">"
				     "(flaky: failed, then passed on a retest)</span> <span class=\"warn\">warnings: flaky</span>"
				     "<br><small>attempt 1: timed_out on src (qp_timeout 14, 0.200 Gb/s): no completion for 4.0 s; "
				     "attempt 2: ok (qp_timeout 20, 0.200 Gb/s)</small>"));
	assert_non_null(strstr(text, "node0/rxe0:1 &rarr; node2/rxe2:1: <b>ok</b>, n/a Gb/s <span class=\"warn\">"
				     "warnings: interval_drop (slowest interval at 2.5 s)</span>"));
	assert_non_null(strstr(text, "node0/rxe0:1 &rarr; node3/rxe3:1: <b>rtr_refused</b>"));
	assert_non_null(strstr(text, "<span class=\"confirmed\">(confirmed: failed on every attempt)</span>"));
	assert_non_null(strstr(text, "node3/rxe3:1 &rarr; node0/rxe0:1: <b>rtr_refused</b>"));
	assert_non_null(strstr(text, "<span class=\"unconfirmed\">(not confirmed: failed once and could not be measured again)"));
	assert_int_equal(mx_count(text, "<li class=\"failure\">"), 6);
	assert_int_equal(mx_count(text, "<td class=\"flaky\""), 1);   /* the reachability cell */
	assert_non_null(strstr(text, "6 failed (1 not confirmed), 1 flaky"));
	assert_null(strstr(text, "nan"));
	assert_null(strstr(text, "NaN"));
	if (system("command -v xmllint >/dev/null 2>&1") == 0) {
		snprintf(cmd, sizeof(cmd), "xmllint --html --noout '%s' 2>&1", path);
		rp_test_run(cmd, out, sizeof(out));
		if (out[0])
			fail_msg("HTML parser complains about %s: %s", path, out);
	}
	free(text);
	mx_view_fini(&mx);
}

/* A big run: node-by-node heatmaps instead of an endpoint grid nobody can read. */
static void test_large_run_uses_node_grid(void **state)
{
	size_t n_eps = 200, n = 0;
	struct rp_endpoint *eps = calloc(n_eps, sizeof(*eps));
	struct rp_pair_result *res = calloc(n_eps, sizeof(*res));
	uint32_t *pe = calloc(2 * n_eps, sizeof(*pe));
	struct rp_sb sb;

	(void)state;
	assert_non_null(eps);
	assert_non_null(res);
	assert_non_null(pe);
	for (size_t e = 0; e < n_eps; e++) {
		snprintf(eps[e].node, sizeof(eps[e].node), "n%03zu", e / 8);
		snprintf(eps[e].device, sizeof(eps[e].device), "mlx5_%zu", e % 8);
		eps[e].port = 1;
	}
	for (size_t e = 0; e + 8 < n_eps; e += 8, n++) {
		rp_pair_result_init(&res[n], &eps[e], &eps[e + 8]);
		res[n].status = RP_ST_OK;
		res[n].gbps = 390;
		pe[2 * n] = (uint32_t)e;
		pe[2 * n + 1] = (uint32_t)(e + 8);
	}
	struct rp_matrix_view v = { .eps = eps, .n_eps = n_eps, .pair_eps = pe, .res = res, .n = n };

	rp_sb_init(&sb);
	rp_report_html_build(&v, &sb);
	assert_false(rp_sb_failed(&sb));
	assert_non_null(strstr(sb.buf, "node by node"));
	assert_int_equal(mx_count(sb.buf, "<tr><th>n0"), 2 * 25);
	assert_int_equal(mx_count(sb.buf, "data-d=\""), 2 * n);
	rp_sb_fini(&sb);
	free(eps);
	free(res);
	free(pe);
}

/* Headless Chromium renders the page, runs its script, and shows the failures. */
static void test_renders_in_chromium(void **state)
{
	struct mx_view mx;
	char path[256], cmd[1536], *dom;
	static char out[1 << 20];
	const char *browser = NULL;

	(void)state;
	if (system("command -v chromium >/dev/null 2>&1") == 0)
		browser = "chromium";
	else if (system("command -v chromium-browser >/dev/null 2>&1") == 0)
		browser = "chromium-browser";
	if (!browser) {
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			fail_msg("chromium is missing under CI=true (scripts/install-deps.sh installs it)");
		fprintf(stderr, "SKIP: chromium is not installed (apt-get install chromium); the page was not rendered\n");
		skip();
	}
	mx_view_build(&mx, true);
	free(write_page(&mx.view, "render.html", path, sizeof(path)));
	snprintf(cmd, sizeof(cmd),
		 "timeout 90 %s --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
		 "--disable-background-networking --disable-component-update --disable-sync "
		 "--user-data-dir='%s/profile' --dump-dom 'file://%s' 2>/dev/null",
		 browser, rp_test_tmpdir(), path);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	dom = out;
	assert_non_null(strstr(dom, "data-ready=\"1\""));            /* the script ran */
	assert_int_equal(mx_count(dom, "<li class=\"failure\">"), 6);
	assert_non_null(strstr(dom, "id=\"bw-heatmap\""));
	assert_non_null(strstr(dom, "id=\"reach-heatmap\""));
	assert_null(strstr(dom, "<x a="));                           /* no injected element */
	assert_int_equal(mx_count(dom, "<script"), 1);
	mx_view_fini(&mx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure_and_content),
		cmocka_unit_test(test_hostile_names_escaped),
		cmocka_unit_test(test_verdict_marks_and_nan),
		cmocka_unit_test(test_large_run_uses_node_grid),
		cmocka_unit_test(test_renders_in_chromium),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
