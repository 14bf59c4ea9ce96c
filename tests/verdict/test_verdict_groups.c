/* test_verdict_groups.c: failed directions grouped by suspect (lib/verdict/verdict_groups.h): a drained
 * adapter's failures are one group, a failure between two kept adapters is a link group whatever its
 * direction, and the largest group comes first without hiding a smaller one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mx_view.h"
#include "verdict/result_seq.h"
#include "verdict/verdict_groups.h"

/* The report tests' matrix: endpoint 3 unreachable (6 failed directions, drained), then one
 * direction between 0 and 1 and one between 2 and 1 failed after the verdict: two link suspects. */
static void test_adapter_and_links(void **state)
{
	struct mx_view mx;
	struct rp_fail_groups fg;
	struct rp_result_seq ps;
	size_t i01 = SIZE_MAX, i21 = SIZE_MAX;

	(void)state;
	mx_view_build(&mx, false);
	for (size_t i = 0; i < mx.view.n; i++) {
		if (mx.pair_eps[2 * i] == 0 && mx.pair_eps[2 * i + 1] == 1)
			i01 = i;
		if (mx.pair_eps[2 * i] == 2 && mx.pair_eps[2 * i + 1] == 1)
			i21 = i;
	}
	rp_pair_result_fail(&mx.res[i01], RP_ST_RETRY_EXCEEDED, "retry exceeded");
	rp_pair_result_fail(&mx.res[i21], RP_ST_TIMEOUT, "no progress");
	ps = rp_result_seq_const(mx.res, mx.view.n);
	assert_true(mx.verdict.eps[3].drain);
	assert_int_equal(rp_fail_groups_build(&mx.verdict, mx.pair_eps, &ps, &fg), 0);
	assert_int_equal(fg.n_failed, 8);
	assert_int_equal(fg.kind_groups[RP_SUSPECT_ADAPTER], 1);
	assert_int_equal(fg.kind_failed[RP_SUSPECT_ADAPTER], 6);
	assert_int_equal(fg.g[0].kind, RP_SUSPECT_ADAPTER);
	assert_int_equal(fg.g[0].a, 3);
	assert_int_equal(fg.g[0].n, 6);
	assert_int_equal(fg.g[0].n_ex, RP_GROUP_EXAMPLES);
	assert_int_equal(fg.g[0].by_endpoint, 0);
	assert_int_equal(fg.kind_groups[RP_SUSPECT_LINK], 2);
	assert_int_equal(fg.kind_failed[RP_SUSPECT_LINK], 2);
	const struct rp_fail_group *l = &fg.g[fg.kind_first[RP_SUSPECT_LINK]];

	assert_int_equal(l[0].a, 0);              /* equal counts: by endpoint */
	assert_int_equal(l[0].b, 1);
	assert_int_equal(l[0].ex[0], i01);
	assert_int_equal(l[1].a, 1);              /* 2 -> 1 keyed as the link 1 <-> 2 */
	assert_int_equal(l[1].b, 2);
	assert_string_equal(rp_suspect_kind_name(l[1].kind), "link");
	rp_fail_groups_fini(&fg);

	/* two of the adapter's failures confirmed by its sample (mx_retest.h): counted confirmed, and apart */
	size_t marked = 0;

	for (size_t i = 0; i < mx.view.n && marked < 2; i++)
		if (mx.pair_eps[2 * i] == 3 || mx.pair_eps[2 * i + 1] == 3) {
			mx.res[i].confirm = RP_CONFIRM_BY_ENDPOINT;
			marked++;
		}
	assert_int_equal(rp_fail_groups_build(&mx.verdict, mx.pair_eps, &ps, &fg), 0);
	assert_int_equal(fg.g[0].a, 3);
	assert_int_equal(fg.g[0].by_endpoint, 2);
	assert_int_equal(fg.g[0].confirmed, 6);
	rp_fail_groups_fini(&fg);
	mx_view_fini(&mx);
}

/* The directions s1 -> d1 and s2 -> d2 of mx fail (retry exceeded). */
static void fail_dirs(struct mx_view *mx, uint32_t s1, uint32_t d1, uint32_t s2, uint32_t d2)
{
	for (size_t i = 0; i < mx->view.n; i++) {
		uint32_t s = mx->pair_eps[2 * i], d = mx->pair_eps[2 * i + 1];

		if ((s == s1 && d == d1) || (s == s2 && d == d2))
			rp_pair_result_fail(&mx->res[i], RP_ST_RETRY_EXCEEDED, "retry exceeded");
	}
}

/* Both directions of one link are one group of 2. */
static void test_link_both_directions(void **state)
{
	struct mx_view mx;
	struct rp_fail_groups fg;
	struct rp_result_seq ps;

	(void)state;
	mx_view_build(&mx, false);
	fail_dirs(&mx, 0, 2, 2, 0);
	ps = rp_result_seq_const(mx.res, mx.view.n);
	assert_int_equal(rp_fail_groups_build(&mx.verdict, mx.pair_eps, &ps, &fg), 0);
	assert_int_equal(fg.kind_groups[RP_SUSPECT_LINK], 1);
	assert_int_equal(fg.g[fg.kind_first[RP_SUSPECT_LINK]].n, 2);
	rp_fail_groups_fini(&fg);
	mx_view_fini(&mx);
}

/* An unusable endpoint (not drained: a switch around it is the suspect) keys its failures as its own
 * group of kind UNUSABLE, after the drained adapters' and before the links'; a failure between a
 * drained and an unusable end stays the drained one's. */
static void test_unusable_group(void **state)
{
	struct mx_view mx;
	struct rp_fail_groups fg;
	struct rp_result_seq ps;

	(void)state;
	mx_view_build(&mx, false);
	fail_dirs(&mx, 0, 2, 1, 0);
	mx.verdict.eps[0].unusable = true;
	ps = rp_result_seq_const(mx.res, mx.view.n);
	assert_int_equal(rp_fail_groups_build(&mx.verdict, mx.pair_eps, &ps, &fg), 0);
	assert_int_equal(fg.kind_groups[RP_SUSPECT_ADAPTER], 1);     /* endpoint 3, drained */
	assert_int_equal(fg.kind_groups[RP_SUSPECT_UNUSABLE], 1);
	assert_int_equal(fg.kind_first[RP_SUSPECT_UNUSABLE], 1);
	assert_int_equal(fg.g[1].kind, RP_SUSPECT_UNUSABLE);
	assert_int_equal(fg.g[1].a, 0);
	assert_int_equal(fg.g[1].n, 2);
	assert_int_equal(fg.kind_groups[RP_SUSPECT_LINK], 0);
	assert_string_equal(rp_suspect_kind_name(fg.g[1].kind), "unusable");
	rp_fail_groups_fini(&fg);
	mx_view_fini(&mx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_adapter_and_links),
		cmocka_unit_test(test_link_both_directions),
		cmocka_unit_test(test_unusable_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
