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

#include "health/counters.h"
#include "verdict/result_seq.h"
#include "verdict/drift.h"
#include "mx_view.h"
#include "testutil.h"
#include "report/report_html.h"

static void assert_in_order(const char *text, const char *section, const char *p1, const char *p2, const char *p3);

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
	/* the verdict's suspects, ranked: the drained adapter first, with its evidence */
	assert_in_order(text, "<h2>Suspects</h2>", "<ol id=\"suspects\">", "<h2>Likely causes</h2>",
			"<h2>Degraded");
	assert_non_null(strstr(text, "<li class=\"bad\"><b>adapter node3/rxe3:1</b>: 3 of 3 peer pairs through it failed, confidence "));
	assert_non_null(strstr(text, "(no --topology: adapters, groups and path faults only)"));
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

/* The counters of a lossy pair on a node1 -> node2 pair that passed. */
static size_t plant_counters(struct rp_pair_result *res, size_t n, const char *src_node, const char *dst_node)
{
	for (size_t i = 0; i < n; i++) {
		struct rp_pair_result *r = &res[i];

		if (r->status != RP_ST_OK || strcmp(r->src.node, src_node) != 0 || strcmp(r->dst.node, dst_node) != 0)
			continue;
		r->warnings |= 1u << RP_WARN_LOSSY;
		r->counters.src = (struct rp_pair_ctr_side){ .measured = 1, .verdict = RP_CV_LOSSY, .cls = RP_CC_RETRANS,
							     .n_moved = 2, .n = 2 };
		snprintf(r->counters.src.c[0].name, RP_PAIR_CTR_NAME, "completer_retry_err");
		r->counters.src.c[0].cls = RP_CC_RETRANS;
		r->counters.src.c[0].delta = 12;
		snprintf(r->counters.src.c[1].name, RP_PAIR_CTR_NAME, "<b>x");
		r->counters.src.c[1].at_least = 1;
		r->counters.src.c[1].delta = 3;
		r->counters.dst = (struct rp_pair_ctr_side){ .measured = 1, .n_moved = 1, .n = 1 };
		snprintf(r->counters.dst.c[0].name, RP_PAIR_CTR_NAME, "out_of_seq_request");
		r->counters.dst.c[0].cls = RP_CC_RETRANS;
		r->counters.dst.c[0].delta = 9;
		return i;
	}
	fail_msg("no passing pair %s -> %s", src_node, dst_node);
	return 0;
}

#define CTR_TEXT "counters: src completer_retry_err +12, at least &lt;b&gt;x +3 (lossy); dst out_of_seq_request +9"

/* Counters beside the pair: a lossy pair lists the counters that moved (escaped) in the warnings list
 * and in its heatmap cells' hover text; a pair whose counters are measured and did not move says
 * nothing. Before, the page showed "warnings: lossy" and no counter. */
static void test_counters_beside_pair(void **state)
{
	struct mx_view mx;
	char path[256];
	char *text;

	(void)state;
	mx_view_build(&mx, false);
	for (size_t i = 0; i < 12; i++)
		mx.res[i].counters.src.measured = mx.res[i].counters.dst.measured = 1;
	plant_counters(mx.res, 12, "node1", "node2");
	text = write_page(&mx.view, "counters.html", path, sizeof(path));
	assert_int_equal(mx_count(text, "<li class=\"warning\">"), 1);
	assert_non_null(strstr(text, "node1/rxe1:1 &rarr; node2/rxe2:1: <b>ok</b>, 0.240 Gb/s <span class=\"warn\">warnings: "
				     "lossy</span> <span class=\"ctr\">" CTR_TEXT "</span>"));
	/* the two grids' cells of that pair */
	assert_int_equal(mx_count(text, "warnings: lossy; " CTR_TEXT "\""), 2);
	assert_int_equal(mx_count(text, "counters: "), 3);   /* nowhere else: the other pairs say nothing */
	assert_null(strstr(text, "<b>x"));
	free(text);
	mx_view_fini(&mx);
}

/* A view of n_nodes nodes x n_ad adapters over caller storage, every inter-node pair ok at gbps. */
struct small_view {
	struct rp_endpoint eps[32];
	struct rp_pair_result res[32 * 32];
	uint32_t pe[2 * 32 * 32];
	struct rp_verdict verdict;
	struct rp_matrix_view v;
};

static void small_view_build(struct small_view *sv, const char *const *nodes, size_t n_nodes, const char *const *ads,
			     size_t n_ad, bool soft, double link, const double *gbps)
{
	struct rp_verdict_cfg cfg = { .min_bw = 0, .outlier = 0 };
	size_t n_eps = n_nodes * n_ad, n = 0;

	memset(sv, 0, sizeof(*sv));
	assert_true(n_eps <= 32);
	for (size_t e = 0; e < n_eps; e++) {
		snprintf(sv->eps[e].node, sizeof(sv->eps[e].node), "%s", nodes[e / n_ad]);
		snprintf(sv->eps[e].device, sizeof(sv->eps[e].device), "%s", ads[e % n_ad]);
		sv->eps[e].port = 1;
		sv->eps[e].soft = soft;
		sv->eps[e].link_gbps = link;
	}
	for (size_t a = 0; a < n_eps; a++)
		for (size_t b = 0; b < n_eps; b++) {
			if (a / n_ad == b / n_ad)
				continue;
			rp_pair_result_init(&sv->res[n], &sv->eps[a], &sv->eps[b]);
			sv->res[n].status = RP_ST_OK;
			sv->res[n].verified = true;
			sv->res[n].gbps = gbps ? gbps[n] : 1;
			sv->pe[2 * n] = (uint32_t)a;
			sv->pe[2 * n + 1] = (uint32_t)b;
			n++;
		}
	assert_int_equal(rp_verdict_apply(&cfg, sv->eps, n_eps, sv->pe, sv->res, n, &sv->verdict), 0);
	sv->v = (struct rp_matrix_view){ .eps = sv->eps, .n_eps = n_eps, .pair_eps = sv->pe, .res = sv->res, .n = n,
					 .verdict = &sv->verdict, .pattern = "full", .rounds_done = 1, .n_rounds = 1 };
}

static char *build_text(const struct rp_matrix_view *v)
{
	struct rp_sb sb;

	rp_sb_init(&sb);
	rp_report_html_build(v, &sb);
	assert_false(rp_sb_failed(&sb));
	return sb.buf;   /* the caller frees it */
}

/* p1 occurs before p2 before p3 after the start of section (each found). */
static void assert_in_order(const char *text, const char *section, const char *p1, const char *p2, const char *p3)
{
	const char *s = strstr(text, section), *a, *b, *c;

	assert_non_null(s);
	a = strstr(s, p1);
	b = strstr(s, p2);
	c = strstr(s, p3);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	if (!(a < b && b < c))
		fail_msg("in %s: want '%s' < '%s' < '%s'", section, p1, p2, p3);
}

/* Nodes and adapters listed in string order (node1, node10, node2; mlx5_10 before mlx5_2) are shown
 * in natural order in the tables, the node list and the embedded heatmap data. Before natcmp the page
 * kept the run's order: node10 came before node2. */
static void test_natural_order(void **state)
{
	static const char *const nodes[] = { "node1", "node10", "node2" }, *const ads[] = { "mlx5_10", "mlx5_2" };
	struct small_view sv;
	char *text;

	(void)state;
	small_view_build(&sv, nodes, 3, ads, 2, false, 100, NULL);
	text = build_text(&sv.v);
	assert_in_order(text, "id=\"bw-heatmap\"", "<tr><th>0 node1/mlx5_2:1</th>", "<tr><th>1 node1/mlx5_10:1</th>",
			"<tr><th>2 node2/mlx5_2:1</th>");
	assert_in_order(text, "id=\"bw-heatmap\"", "<tr><th>3 node2/mlx5_10:1</th>", "<tr><th>4 node10/mlx5_2:1</th>",
			"<tr><th>5 node10/mlx5_10:1</th>");
	assert_in_order(text, "id=\"nodes\"", "<tr><td>node1</td>", "<tr><td>node2</td>", "<tr><td>node10</td>");
	assert_non_null(strstr(text, "\"nodes\":[\"node1\",\"node2\",\"node10\"],\"ad\":[[\"mlx5_2:1\",\"mlx5_10:1\"],"));
	assert_in_order(text, "id=\"rails\"", "<th>0 mlx5_2:1</th>", "<th>1 mlx5_10:1</th>", "</table>");
	free(text);
	rp_verdict_fini(&sv.verdict);
}

/* With --topology the nodes are ordered by their leaf, then by name: node1 on leaf L2, node2 and
 * node10 on L1 (and node10's second adapter on no leaf): node2, node10, node1, and the page says why.
 * Without it, natural order (above). */
static void test_leaf_order(void **state)
{
	static const char *const nodes[] = { "node1", "node10", "node2" }, *const ads[] = { "mlx5_10", "mlx5_2" };
	static char l1[] = "L1", l2[] = "L2";
	static char *const leaf_names[] = { l1, l2 };
	struct small_view sv;
	uint32_t leaf[6];
	char *text;

	(void)state;
	small_view_build(&sv, nodes, 3, ads, 2, false, 100, NULL);
	for (size_t e = 0; e < sv.v.n_eps; e++)
		leaf[e] = strcmp(sv.v.eps[e].node, "node1") == 0 ? 1 : 0;
	for (size_t e = 0; e < sv.v.n_eps; e++)
		if (strcmp(sv.v.eps[e].node, "node10") == 0 && strcmp(sv.v.eps[e].device, "mlx5_10") == 0)
			leaf[e] = UINT32_MAX;
	sv.v.leaf = leaf;
	sv.v.leaf_names = leaf_names;
	text = build_text(&sv.v);
	assert_in_order(text, "id=\"nodes\"", "<tr><td>node2</td>", "<tr><td>node10</td>", "<tr><td>node1</td>");
	assert_non_null(strstr(text, "\"nodes\":[\"node2\",\"node10\",\"node1\"]"));
	assert_non_null(strstr(text, "id=\"heat-order\">Nodes ordered by leaf switch (--topology)"));
	free(text);
	rp_verdict_fini(&sv.verdict);
}

/* The test VM's case: 16 healthy soft endpoints at 0.02-0.05 Gb/s and one fast pair at 0.29. Cells are
 * coloured against the fabric's median, so the slow-but-normal ones stay out of the red bins and the
 * fast one is simply "90% or more". Against the fastest cell (the old page) every other cell was
 * under 25% of it: 0.05 / 0.29 = 17%. */
static void test_soft_colour_against_median(void **state)
{
	static const char *const nodes[] = { "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8",
					     "n9", "n10", "n11", "n12", "n13", "n14", "n15", "n16" };
	static const char *const ads[] = { "rxe0" };
	static double gbps[16 * 15];
	struct small_view sv;
	char *text;

	(void)state;
	for (size_t i = 0; i < 16 * 15; i++)
		gbps[i] = 0.02 + 0.03 * (double)(i % 7) / 6;   /* 0.020 .. 0.050, median 0.035 */
	gbps[17] = 0.29;
	small_view_build(&sv, nodes, 16, ads, 1, true, 10 /* nominal, ignored */, gbps);
	text = build_text(&sv.v);
	assert_int_equal(mx_count(text, "<td class=\"ok b"), 240);
	assert_int_equal(mx_count(text, "<td class=\"ok b4\""), 0);   /* under 25% */
	assert_int_equal(mx_count(text, "<td class=\"ok b3\""), 0);   /* 25-50% */
	/* 0.035 and more (i % 7 = 3..6, 34 pairs each, the fast one among them): 90% or more; 0.030
	 * (86%) and 0.025 (71%): 70-90%; 0.020 (57%, 35 pairs): 50-70% */
	assert_int_equal(mx_count(text, "<td class=\"ok b0\""), 4 * 34);
	assert_int_equal(mx_count(text, "<td class=\"ok b1\""), 35 + 34);
	assert_int_equal(mx_count(text, "<td class=\"ok b2\""), 35);
	assert_non_null(strstr(text, "the median of the pairs measured on its fabric for 240 pairs"));
	assert_non_null(strstr(text, "0.035 Gb/s;"));
	assert_non_null(strstr(text, "0.290 Gb/s (slowest interval 0.000), verified, 829% of the expected 0.035 Gb/s"));
	assert_null(strstr(text, "link rate for"));
	free(text);
	rp_verdict_fini(&sv.verdict);

	/* the test VM as it is: rxe ports not marked soft, a nominal 10 Gb/s link rate, 0.02-0.05 moved.
	 * Against the link rate every cell was under 25% (the e2e case 30 page was all b4). */
	small_view_build(&sv, nodes, 16, ads, 1, false, 10, gbps);
	text = build_text(&sv.v);
	assert_int_equal(mx_count(text, "<td class=\"ok b4\""), 0);
	assert_int_equal(mx_count(text, "<td class=\"ok b0\""), 4 * 34);
	assert_non_null(strstr(text, "the link rate is not used on 1 fabric whose median rate (0.035 Gb/s) is under 25% of "
				     "its ports' link rate (10.000 Gb/s)"));
	free(text);
	rp_verdict_fini(&sv.verdict);

	/* hardware ports: the link rate, whatever the fastest pair did */
	for (size_t i = 0; i < 16 * 15; i++)
		gbps[i] = i == 5 ? 40 : 95;
	small_view_build(&sv, nodes, 16, ads, 1, false, 100, gbps);
	text = build_text(&sv.v);
	assert_int_equal(mx_count(text, "<td class=\"ok b0\""), 239);
	assert_int_equal(mx_count(text, "<td class=\"ok b3\""), 1);
	assert_non_null(strstr(text, "the slower port's link rate for 240 pairs between hardware ports"));
	assert_non_null(strstr(text, "40.000 Gb/s (slowest interval 0.000), verified, 40% of the expected 100.000 Gb/s"));
	free(text);
	rp_verdict_fini(&sv.verdict);
}

/* Failures grouped by the endpoint they share, the drained ones first. */
static void test_failure_grouping(void **state)
{
	struct mx_view mx;
	struct mx_synth s;
	char *text;

	(void)state;
	mx_view_build(&mx, false);
	text = build_text(&mx.view);
	assert_non_null(strstr(text, "<li class=\"cause\">All 6 failures involve <b>node3/rxe3:1</b> (drained: reached no peer: "
				     "all 6 pairs failed); all rtr_refused.</li>"));
	assert_int_equal(mx_count(text, "<li class=\"cause\">"), 1);
	free(text);
	/* without a verdict: the endpoint in the most failures */
	mx.view.verdict = NULL;
	mx.res[4].status = RP_ST_TIMEOUT;   /* node1 -> node2, shares no endpoint with node3's */
	text = build_text(&mx.view);
	assert_non_null(strstr(text, "<li class=\"cause\">6 failures involve <b>node3/rxe3:1</b>; all rtr_refused.</li>"));
	assert_non_null(strstr(text, "<li class=\"cause\">1 other failure shares no endpoint with another: see the list.</li>"));
	free(text);
	/* with a verdict that keeps both ends of a failed peer pair (node1 <-> node2): their group says so */
	struct rp_verdict_cfg cfg = { .min_bw = 0, .outlier = 0 };

	rp_pair_result_fail(&mx.res[4], RP_ST_TIMEOUT, "no completion");
	rp_pair_result_fail(&mx.res[7], RP_ST_TIMEOUT, "no completion");   /* node2 -> node1 */
	rp_verdict_fini(&mx.verdict);
	rp_verdict_apply(&cfg, mx.eps, 4, mx.pair_eps, mx.res, mx.view.n, &mx.verdict);
	mx.view.verdict = &mx.verdict;
	assert_false(mx.verdict.eps[1].drain || mx.verdict.eps[2].drain);
	text = build_text(&mx.view);
	assert_non_null(strstr(text, "<li class=\"cause\">6 failures involve <b>node3/rxe3:1</b> (drained: "));
	assert_non_null(strstr(text, "<li class=\"cause\">2 failures involve <b>node1/rxe1:1</b> (not drained: its failed "
				     "pairs are path faults that no adapter explains); all timed_out.</li>"));
	free(text);
	mx_view_fini(&mx);

	/* 9 nodes x 8: node8's mlx5_3 dead, node4's mlx5_5 slow; each touches 2 x 64 pairs, 2 of them shared */
	assert_int_equal(mx_synth_build(&s, 9, 8, 100000, true), 0);
	text = build_text(&s.view);
	assert_non_null(strstr(text, "<li class=\"cause\">128 failures involve <b>node4/mlx5_5:1</b> (drained: "));
	assert_non_null(strstr(text, "; mostly below_threshold.</li>"));
	assert_non_null(strstr(text, "<li class=\"cause\">126 failures involve <b>node8/mlx5_3:1</b> (drained: reached no peer: "
				     "all 128 pairs failed); all retry_exceeded.</li>"));
	assert_int_equal(mx_count(text, "<li class=\"cause\">"), 2);
	free(text);
	mx_synth_fini(&s);
}

/* The degraded pairs through an adapter the verdict drains are one line for it, whatever their
 * number; a degraded pair no drain explains keeps its own line. Before, the slow adapter's 126 pairs
 * were 100 lines and "and more" (1,024 x 8: a slow adapter's 2,046). */
static void test_degraded_grouped_by_drain(void **state)
{
	struct mx_synth s;
	char *text, *sec, *end;
	size_t n_slow = 0;

	(void)state;
	assert_int_equal(mx_synth_build(&s, 9, 8, 100000, true), 0);
	for (size_t e = 0; e < s.n_eps; e++)
		if (strcmp(s.eps[e].node, "node4") == 0 && strcmp(s.eps[e].device, "mlx5_5") == 0)
			assert_true(s.verdict.eps[e].drain);
	for (size_t i = 0; i < s.view.n; i++)
		n_slow += s.res[i].status == RP_ST_BELOW_THRESHOLD;
	assert_true(n_slow > 100);            /* the list's lines at most */
	text = build_text(&s.view);
	sec = strstr(text, "<div id=\"degraded\">");
	assert_non_null(sec);
	end = strstr(sec, "</div>");
	assert_non_null(end);
	*end = '\0';
	assert_int_equal(mx_count(sec, "<li class="), 1);
	assert_non_null(strstr(sec, "<b>node4/mlx5_5:1</b> (drained): "));
	assert_null(strstr(sec, "and more"));
	free(text);
	/* a slow pair between two adapters the verdict keeps: its own line */
	for (size_t i = 0; i < s.view.n; i++)
		if (strcmp(s.res[i].src.node, "node1") == 0 && strcmp(s.res[i].src.device, "mlx5_0") == 0 &&
		    strcmp(s.res[i].dst.node, "node2") == 0 && strcmp(s.res[i].dst.device, "mlx5_0") == 0) {
			s.res[i].status = RP_ST_BELOW_THRESHOLD;
			s.res[i].gbps /= 2;
		}
	text = build_text(&s.view);
	sec = strstr(text, "<div id=\"degraded\">");
	end = strstr(sec, "</div>");
	*end = '\0';
	assert_int_equal(mx_count(sec, "<li class="), 2);
	assert_non_null(strstr(sec, "<span class=\"pair\">node1/mlx5_0:1 &rarr; node2/mlx5_0:1</span>"));
	free(text);
	mx_synth_fini(&s);
}

/* Decoded length of the base64 string after key in text (SIZE_MAX when absent). */
static size_t b64_len(const char *text, const char *key)
{
	const char *p = strstr(text, key), *e;
	size_t n, pad = 0;

	if (!p)
		return SIZE_MAX;
	p += strlen(key);
	e = strchr(p, '"');
	if (!e)
		return SIZE_MAX;
	n = (size_t)(e - p);
	pad = (n && e[-1] == '=') + (n > 1 && e[-2] == '=');
	return n / 4 * 3 - pad;
}

/* A big run: one canvas from compact data, no element per pair, the lists capped. 300 nodes x 4
 * adapters, one adapter pair per node pair (89,700 pairs): the old page wrote a table cell with its
 * hover text per node pair (90,000 cells). */
static void test_large_run_compact(void **state)
{
	struct mx_synth s;
	char *text;
	size_t N = 300;

	(void)state;
	assert_int_equal(mx_synth_build(&s, N, 4, 0, true), 0);
	text = build_text(&s.view);
	assert_null(strstr(text, "id=\"bw-heatmap\""));
	assert_non_null(strstr(text, "<canvas id=\"node-heatmap\">"));
	assert_int_equal(mx_count(text, "<script type=\"application/json\" id=\"rp-data\">"), 1);
	assert_int_equal(b64_len(text, "\"cells\":\""), 2 * N * N);
	assert_true(mx_count(text, "<td") <= 4 * 4 + 4 * 10);   /* the rail view and the node table only */
	assert_true(mx_count(text, "data-d=") <= 4 * 4);
	assert_non_null(strstr(text, "\"nodes\":[\"node1\",\"node2\",\"node3\","));
	/* bounded: 2.67 bytes a node pair, the problem pairs and everything else in well under 1 MB */
	assert_true(strlen(text) < 8 * N * N / 3 + 1000000);
	free(text);
	mx_synth_fini(&s);

	/* every pair failed (89,700 node pairs with a problem): what is embedded per problem stays capped */
	assert_int_equal(mx_synth_build(&s, N, 1, 0, false), 0);
	for (size_t i = 0; i < s.n; i++)
		rp_pair_result_fail(&s.res[i], RP_ST_TIMEOUT, "no completion for 4.0 s on %s", s.res[i].dst.node);
	text = build_text(&s.view);
	assert_non_null(strstr(text, "\"cx_all\":89700"));
	assert_non_null(strstr(text, "\"pp_all\":89700"));
	assert_int_equal(mx_count(text, "<li class=\"failure\">"), RP_HTML_LIST_MAX);
	assert_int_equal(mx_count(text, "<li class=\"cause\">"), RP_HTML_CAUSES_MAX + 1);
	assert_true(strlen(text) < 8 * N * N / 3 + RP_HTML_CELLS_MAX * 24 + RP_HTML_PROBLEM_MAX * 200 +
				   RP_HTML_DETAIL_MAX * 4 / 3 + 2 * RP_HTML_LIST_MAX * 400 + 300000);
	free(text);
	mx_synth_fini(&s);

	/* every pair on 24 nodes x 8: 734 failures, 500 listed, all grouped */
	assert_int_equal(mx_synth_build(&s, 24, 8, 100000, true), 0);
	text = build_text(&s.view);
	assert_int_equal(mx_count(text, "<li class=\"failure\">"), RP_HTML_LIST_MAX);
	assert_non_null(strstr(text, "and 234 more failures not listed here"));
	assert_int_equal(mx_count(text, "<li class=\"cause\">"), 2);
	assert_int_equal(b64_len(text, "\"dp\":\""), 24 * 23 * 64);   /* every adapter pair fits for the drill-down */
	free(text);
	mx_synth_fini(&s);
}

/* Decode the base64 string after key in text into out (at most len bytes); its length. */
static size_t b64_get(const char *text, const char *key, uint8_t *out, size_t len)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = strstr(text, key);
	size_t n = 0;
	uint32_t v = 0;
	int bits = 0;

	assert_non_null(p);
	for (p += strlen(key); *p && *p != '"' && *p != '='; p++) {
		v = v << 6 | (uint32_t)(strchr(t, *p) - t);
		bits += 6;
		if (bits >= 8 && n < len) {
			bits -= 8;
			out[n++] = (uint8_t)(v >> bits);
		}
	}
	return n;
}

/* A page that lists only the notable pairs (--list-pairs notable, a matrix's default past 100,000
 * directions) still colours every healthy node pair and rail: the plain passes it counts are read
 * from every pair (before: drawn "not measured" grey, no green at all at 256 x 8). 20 nodes x 2, one
 * adapter pair per node pair, the one dead adapter's pairs listed. */
static void test_unlisted_passes_coloured(void **state)
{
	struct mx_synth s;
	struct rp_pair_result *listed;
	uint32_t *leps;
	size_t n = 0, N = 20;
	static uint8_t cells[2 * 20 * 20];
	struct rp_result_seq every;
	char *text;

	(void)state;
	assert_int_equal(mx_synth_build(&s, N, 2, 0, false), 0);
	rp_pair_result_fail(&s.res[5], RP_ST_TIMEOUT, "dead");
	listed = calloc(s.n, sizeof(*listed));
	leps = calloc(2 * s.n, sizeof(*leps));
	assert_non_null(listed);
	assert_non_null(leps);
	for (size_t i = 0; i < s.n; i++)
		if (s.res[i].status != RP_ST_OK) {
			listed[n] = s.res[i];
			leps[2 * n] = s.pair_eps[2 * i];
			leps[2 * n + 1] = s.pair_eps[2 * i + 1];
			n++;
		}
	assert_int_equal(n, 1);
	every = rp_result_seq_const(s.res, s.n);
	s.view.res = listed;
	s.view.pair_eps = leps;
	s.view.n = n;
	s.view.n_unlisted = s.n - n;
	s.view.every = &every;
	s.view.every_pair_eps = s.pair_eps;
	text = build_text(&s.view);
	assert_int_equal(b64_get(text, "\"cells\":\"", cells, sizeof(cells)), 2 * N * N);
	size_t green = 0, none = 0, failed = 0;

	for (size_t k = 0; k < N * N; k++) {
		green += cells[2 * k] <= 250 && cells[2 * k] >= 90;
		failed += cells[2 * k] == 254;
		none += cells[2 * k] == 255;
	}
	assert_int_equal(none, N);                    /* the diagonal: a node with itself */
	assert_int_equal(failed, 1);
	assert_int_equal(green, N * N - N - 1);
	char *rails = strstr(text, "id=\"rails\""), *end = rails ? strstr(rails, "</table>") : NULL;

	assert_non_null(end);
	*end = '\0';
	assert_int_equal(mx_count(rails, "<td class=\"none\">"), 0);
	assert_true(mx_count(rails, "all plain passes") >= 2);   /* rails with no listed pair */
	free(text);
	s.view.res = s.res;   /* for mx_synth_fini */
	free(listed);
	free(leps);
	mx_synth_fini(&s);
}

/* Past the heatmap's cells a side the page aggregates into blocks of nodes, the worst pair of a block
 * winning, and says so (before: "No node heatmap" past 2,048 nodes, and every failure off the picture).
 * 40 nodes x 4 drawn at most 16 a side: blocks of 3 nodes, 14 a side; node32's dead mlx5_3 fails
 * exactly the cells of its block's row and column. */
static void test_heatmap_aggregates(void **state)
{
	struct rp_html_opts opts = { .heatmap_nodes = 16 };
	struct mx_synth s;
	struct rp_sb sb;
	static uint8_t cells[2 * 14 * 14];
	size_t failed = 0, stray = 0, blk = (32 - 1) / 3;

	(void)state;
	assert_int_equal(mx_synth_build(&s, 40, 4, 0, true), 0);
	rp_sb_init(&sb);
	rp_report_html_build_opts(&s.view, &opts, &sb);
	assert_false(rp_sb_failed(&sb));
	assert_non_null(strstr(sb.buf, "id=\"heat-aggregated\">AGGREGATED: 40 nodes are more than the 16 cells a side"));
	assert_non_null(strstr(sb.buf, "\"nodes\":[\"node1..node3\",\"node4..node6\","));
	assert_int_equal(b64_get(sb.buf, "\"cells\":\"", cells, sizeof(cells)), 2 * 14 * 14);
	for (size_t k = 0; k < 14 * 14; k++) {
		if (cells[2 * k] != 254)
			continue;
		failed++;
		stray += k / 14 != blk && k % 14 != blk;
	}
	assert_true(failed >= 13);
	assert_int_equal(stray, 0);
	rp_sb_fini(&sb);
	mx_synth_fini(&s);
}

/* The causes' remainder: when the groups run out (RP_HTML_CAUSES_MAX), the failures left are counted
 * as in smaller groups, not claimed to share no endpoint (before: "82844 other failures share no
 * endpoint with another" of failures that each shared their endpoint with another). 15 links dead
 * both ways between disjoint endpoints: 12 groups, 3 links (6 failures) left, each pair sharing both. */
static void test_causes_remainder(void **state)
{
	struct mx_synth s;
	size_t n_dead = 0;
	char *text;

	(void)state;
	assert_int_equal(mx_synth_build(&s, 30, 1, 100000, false), 0);
	for (size_t i = 0; i < s.n; i++) {
		uint32_t a = s.pair_eps[2 * i], b = s.pair_eps[2 * i + 1];

		if ((a ^ 1u) == b) {
			rp_pair_result_fail(&s.res[i], RP_ST_RETRY_EXCEEDED, "dead link");
			n_dead++;
		}
	}
	assert_int_equal(n_dead, 30);
	s.view.verdict = NULL;
	text = build_text(&s.view);
	assert_int_equal(mx_count(text, "<li class=\"cause\">"), RP_HTML_CAUSES_MAX + 1);
	assert_null(strstr(text, "share no endpoint"));
	assert_non_null(strstr(text, "<li class=\"cause\">6 more failures in smaller groups than these 12"));
	free(text);
	mx_synth_fini(&s);
}

/* Hostile names in the embedded data: inside <script> a name can neither close the element nor break
 * the JSON (the browser test parses it). */
static void test_hostile_names_in_data(void **state)
{
	static const char *const nodes[] = { "</script><script>alert(1)</script>", "n\"2\\\x01\xff" };
	static const char *const ads[] = { "a<b>", "c&d" };
	struct small_view sv;
	char *text;

	(void)state;
	small_view_build(&sv, nodes, 2, ads, 2, false, 100, NULL);
	text = build_text(&sv.v);
	assert_int_equal(mx_count(text, "<script"), 2);   /* the data and the page's script */
	assert_int_equal(mx_count(text, "</script>"), 2);
	assert_non_null(strstr(text, "\"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\""));
	assert_non_null(strstr(text, "\"n\\\"2\\\\??\""));
	assert_non_null(strstr(text, "\"a\\u003cb\\u003e:1\""));
	assert_non_null(strstr(text, "\"c\\u0026d:1\""));
	free(text);
	rp_verdict_fini(&sv.verdict);
}

/* Give every endpoint of node `node` (and the pairs' copies) a new name, and one device another. */
static void synth_rename(struct mx_synth *s, const char *node, const char *name, const char *dev)
{
	for (size_t e = 0; e < s->n_eps; e++)
		if (strcmp(s->eps[e].node, node) == 0) {
			snprintf(s->eps[e].node, sizeof(s->eps[e].node), "%s", name);
			if (strcmp(s->eps[e].device, "mlx5_0") == 0)
				snprintf(s->eps[e].device, sizeof(s->eps[e].device), "%s", dev);
		}
	for (size_t i = 0; i < s->n; i++) {
		s->res[i].src = s->eps[s->pair_eps[2 * i]];
		s->res[i].dst = s->eps[s->pair_eps[2 * i + 1]];
	}
}

/* Headless Chromium renders a page with every picture (8 nodes x 8 adapters: the endpoint tables, the
 * node heatmap, the rails) and hostile names, runs its script (which draws the canvas from the
 * embedded data and, asked by the URL, opens the drill-down of node7 -> node3, where a lossy pair shows
 * the counters that moved), and shows the causes and the failures. Under CI=true a missing chromium fails. */
static void test_renders_in_chromium(void **state)
{
	struct mx_synth s;
	char path[256], cmd[1536], *dom, *drill, *end, want[512];
	static char out[1 << 23];
	size_t lossy;
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
	assert_int_equal(mx_synth_build(&s, 8, 8, 100000, true), 0);
	synth_rename(&s, "node1", "<script>alert(\"x\")</script>&'\x01\xff", "]]></failure><x a='");
	lossy = plant_counters(s.res, s.n, "node7", "node3");
	free(write_page(&s.view, "render.html", path, sizeof(path)));
	snprintf(cmd, sizeof(cmd),
		 "timeout 120 %s --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
		 "--disable-background-networking --disable-component-update --disable-sync "
		 "--user-data-dir='%s/profile' --dump-dom 'file://%s#drill=node7,node3' 2>/dev/null",
		 browser, rp_test_tmpdir(), path);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	dom = out;
	assert_non_null(strstr(dom, "data-ready=\"1\""));            /* the script ran to its end */
	assert_non_null(strstr(dom, "data-load-ms=\""));
	assert_int_equal(mx_count(dom, "<li class=\"failure\">"), 222);
	assert_int_equal(mx_count(dom, "<li class=\"cause\">"), 2);
	assert_non_null(strstr(dom, "involve <b>node7/mlx5_3:1</b> (drained: reached no peer"));
	assert_non_null(strstr(dom, "id=\"bw-heatmap\""));
	assert_non_null(strstr(dom, "id=\"reach-heatmap\""));
	assert_non_null(strstr(dom, "id=\"legend\""));
	assert_non_null(strstr(dom, "id=\"rails\""));
	assert_non_null(strstr(dom, "<canvas id=\"node-heatmap\" width=\""));
	assert_non_null(strstr(dom, "data-drawn=\"8\""));           /* the canvas was drawn from the data */
	/* the drill-down of node7 -> node3: 8 x 8 adapter pairs, node7's mlx5_3 row failed (8 cells), the
	 * embedded problem pairs listed: mlx5_3's 8 and the 7 others into node3's slow mlx5_5 */
	drill = strstr(dom, "<div id=\"drill\"><h3>node7 -&gt; node3</h3>");
	assert_non_null(drill);
	end = strstr(drill, "</div>");
	assert_non_null(end);
	*end = '\0';
	assert_non_null(strstr(drill, "<table class=\"grid drill\">"));
	assert_int_equal(mx_count(drill, "<tr>"), 9);
	assert_int_equal(mx_count(drill, "<td class=\"ok b5\""), 8);
	assert_int_equal(mx_count(drill, "<td class=\"ok b2\""), 7);
	assert_int_equal(mx_count(drill, "<li>"), 16);   /* and the lossy pair, with its counters: */
	snprintf(want, sizeof(want), "<li>node7/%s:1 -&gt; node3/%s:1: ok, warnings: lossy, ", s.res[lossy].src.device,
		 s.res[lossy].dst.device);
	assert_non_null(strstr(drill, want));
	assert_non_null(strstr(strstr(drill, want), " Gb/s; counters: src completer_retry_err +12, at least &lt;b&gt;x +3 "
			       "(lossy); dst out_of_seq_request +9</li>"));
	assert_non_null(strstr(drill, "<li>node7/mlx5_3:1 -&gt; node3/mlx5_0:1: retry_exceeded, confirmed, 2 attempts, 0 Gb/s: "));
	*end = '<';
	assert_null(strstr(dom, "<x a="));                           /* no injected element */
	assert_null(strstr(dom, "<script>alert"));
	assert_int_equal(mx_count(dom, "<script"), 2);               /* the data and the page's script */
	mx_synth_fini(&s);
}

/* Past RP_HTML_CELLS_MAX problem node pairs every failed node pair is still drawn, from the cells
 * (before: only the first 65,536 got a visible marker, the rest single pixels, rows from node0830 on
 * looked healthy), and the page says which carry their counts. 300 nodes, every pair failed (89,700). */
static void test_every_failure_drawn(void **state)
{
	struct mx_synth s;
	char path[256], cmd[1536];
	static char out[1 << 23];

	(void)state;
	if (system("command -v chromium >/dev/null 2>&1") != 0) {
		if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
			fail_msg("chromium is missing under CI=true (scripts/install-deps.sh installs it)");
		fprintf(stderr, "SKIP: chromium is not installed (apt-get install chromium); the page was not rendered\n");
		skip();
	}
	assert_int_equal(mx_synth_build(&s, 300, 1, 0, false), 0);
	for (size_t i = 0; i < s.n; i++)
		rp_pair_result_fail(&s.res[i], RP_ST_TIMEOUT, "no completion");
	free(write_page(&s.view, "all-failed.html", path, sizeof(path)));
	snprintf(cmd, sizeof(cmd),
		 "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
		 "--disable-background-networking --disable-component-update --disable-sync "
		 "--user-data-dir='%s/profile2' --dump-dom 'file://%s' 2>/dev/null", rp_test_tmpdir(), path);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "data-ready=\"1\""));
	assert_non_null(strstr(out, "data-failed-cells=\"89700\""));
	assert_non_null(strstr(out, "89700 with a failure, 0 slow or n/a, of 90000 node pairs; the first 65536 of the 89700 "
				    "carry their failed count and worst pair on hover."));
	mx_synth_fini(&s);
}

/* --bidir: a pair's detail carries its reverse direction's status, rate and warnings (and the
 * script can show them from a large run's embedded problem pairs). (Before: not in the page.) */
static void test_bidir_reverse_embedded(void **state)
{
	struct mx_view mx;
	char path[256], *text;

	(void)state;
	mx_view_build(&mx, false);
	mx.res[2].reverse = (struct rp_pair_reverse){ .measured = true, .status = RP_ST_RTR, .gbps = 0.5, .bad_offset = -1,
						      .warnings = 1u << RP_WARN_LOSSY };
	text = write_page(&mx.view, "bidir.html", path, sizeof(path));
	/* a small run: in the pair's detail text; a large one: in the embedded problem pairs, for the script */
	assert_non_null(strstr(text, "; reverse node3/rxe3:1 -&gt; node0/rxe0:1: rtr_refused, 0.500 Gb/s (slowest interval "
				     "0.000), not verified; reverse warnings: lossy; both directions "));
	assert_non_null(strstr(text, "'; reverse '"));
	free(text);
	mx_view_fini(&mx);
}

/* Per-node warnings: the `drift` warnings across the endpoints (escaped, with their field) and, per
 * node, the ports in pairs with mtu_mismatch, with their MTU and the other end's, in "node-warnings";
 * a clean run has no such section. Before, the page showed neither (drift only in the JSON and on
 * stdout, mtu_mismatch only per pair). */
static void test_node_warnings(void **state)
{
	static const char *const nodes[] = { "node1", "node2" }, *const ads[] = { "rxe0", "rxe1" };
	struct small_view sv;
	struct rp_verdict_cfg cfg = { .min_bw = 0, .outlier = 0 };
	struct rp_drift_warning dw = { .field = RP_DF_FIRMWARE, .n_odd = 1, .n_majority = 3, .n_known = 4 };
	struct rp_drift drift = { .warnings = &dw, .n_warnings = 1 };
	char *text;

	(void)state;
	small_view_build(&sv, nodes, 2, ads, 2, false, 100, NULL);
	text = build_text(&sv.v);
	assert_null(strstr(text, "node-warnings"));
	free(text);
	/* node2/rxe1 (endpoint 3) at 1024, every other port at 4096: its two pairs each way mismatch */
	for (size_t i = 0; i < sv.v.n; i++) {
		sv.res[i].src.mtu = sv.pe[2 * i] == 3 ? 1024 : 4096;
		sv.res[i].dst.mtu = sv.pe[2 * i + 1] == 3 ? 1024 : 4096;
	}
	rp_verdict_fini(&sv.verdict);
	assert_int_equal(rp_verdict_apply(&cfg, sv.eps, 4, sv.pe, sv.res, sv.v.n, &sv.verdict), 0);
	assert_int_equal(sv.verdict.n_mtu_mismatch, 4);
	snprintf(dw.message, sizeof(dw.message), "firmware 9.9<b> on node2 (rxe1:1); the other 3 ports run 1.0");
	sv.v.drift = &drift;
	text = build_text(&sv.v);
	assert_non_null(strstr(text, "<ol id=\"node-warnings\">"));
	assert_non_null(strstr(text, "<li class=\"warning\"><b>drift</b> (firmware): firmware 9.9&lt;b&gt; on node2 (rxe1:1); "
				     "the other 3 ports run 1.0</li>"));
	/* the node with the odd port names it; its peers on node1 are named on node1's line */
	assert_non_null(strstr(text, "<b>mtu_mismatch</b> on node2: rxe1:1 at an active MTU of 1024 in 4 pairs whose other "
				     "end runs at 4096;</li>"));
	assert_non_null(strstr(text, "<b>mtu_mismatch</b> on node1: rxe0:1 at an active MTU of 4096 in 2 pairs whose other "
				     "end runs at 1024; rxe1:1 at an active MTU of 4096 in 2 pairs"));
	assert_null(strstr(text, "9.9<b>"));
	free(text);
	rp_verdict_fini(&sv.verdict);
}

/* --concurrent-rails: each concurrent pair in "concurrent-rails" beside its solo rate, its share and
 * its warning (concurrent_drop, loopback --concurrent's code); a pair that failed under load fails
 * the summary. Before, the page had no concurrent section. */
static void test_concurrent_rails_section(void **state)
{
	static const char *const nodes[] = { "node1", "node2" }, *const ads[] = { "rxe0" };
	struct small_view sv;
	struct rp_pair_result conc[2];
	int64_t solo[2] = { 0, 1 };
	double ratio[2] = { 0.5, 0 };
	uint32_t round[2] = { 0, 0 };
	struct rp_matrix_conc mc = { .res = conc, .solo = solo, .ratio = ratio, .round = round, .n = 2, .max_drop = 0.25 };
	char *text;

	(void)state;
	small_view_build(&sv, nodes, 2, ads, 1, false, 100, NULL);
	sv.res[0].gbps = 80;
	conc[0] = sv.res[0];
	conc[0].gbps = 40;
	conc[0].warnings = 1u << RP_WARN_CONCURRENT_DROP;
	conc[1] = sv.res[1];
	rp_pair_result_fail(&conc[1], RP_ST_RETRY_EXCEEDED, "retry <exceeded>");
	text = build_text(&sv.v);
	assert_null(strstr(text, "concurrent-rails"));
	assert_non_null(strstr(text, "<span class=\"good\">PASS</span>"));
	free(text);
	sv.v.conc = &mc;
	text = build_text(&sv.v);
	assert_non_null(strstr(text, "<table class=\"list\" id=\"concurrent-rails\">"));
	assert_non_null(strstr(text, "below 75% of solo"));
	assert_non_null(strstr(text, "<tr class=\"warning\"><td>1</td><td>node1/rxe0:1 &rarr; node2/rxe0:1</td><td>40.000</td>"
				     "<td>80.000</td><td>50.0%</td><td>ok <span class=\"warn\">warnings: concurrent_drop</span>"
				     "</td></tr>"));
	assert_non_null(strstr(text, "<tr class=\"failure\"><td>1</td><td>node2/rxe0:1 &rarr; node1/rxe0:1</td><td></td>"
				     "<td>1.000</td><td></td><td><span class=\"bad\">retry_exceeded</span> under load: "
				     "retry &lt;exceeded&gt;</td></tr>"));
	assert_non_null(strstr(text, "<span class=\"bad\">FAIL</span>"));
	assert_non_null(strstr(text, "2 concurrent rail pairs, 1 failed under load"));
	free(text);
	rp_verdict_fini(&sv.verdict);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure_and_content),
		cmocka_unit_test(test_hostile_names_escaped),
		cmocka_unit_test(test_verdict_marks_and_nan),
		cmocka_unit_test(test_counters_beside_pair),
		cmocka_unit_test(test_natural_order),
		cmocka_unit_test(test_leaf_order),
		cmocka_unit_test(test_soft_colour_against_median),
		cmocka_unit_test(test_failure_grouping),
		cmocka_unit_test(test_degraded_grouped_by_drain),
		cmocka_unit_test(test_large_run_compact),
		cmocka_unit_test(test_unlisted_passes_coloured),
		cmocka_unit_test(test_causes_remainder),
		cmocka_unit_test(test_heatmap_aggregates),
		cmocka_unit_test(test_hostile_names_in_data),
		cmocka_unit_test(test_renders_in_chromium),
		cmocka_unit_test(test_every_failure_drawn),
		cmocka_unit_test(test_bidir_reverse_embedded),
		cmocka_unit_test(test_node_warnings),
		cmocka_unit_test(test_concurrent_rails_section),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
