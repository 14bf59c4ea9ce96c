/* test_mx_conc.c: matrix --concurrent-rails's results and their judgement (lib/mx_conc): the one
 * concurrent_drop rule of loopback --concurrent (rp_concurrent_compare, default 25%), applied to each
 * concurrent pair against its own solo result (matched by index, not by position), on copies;
 * a stale drop is cleared; a pair with no solo result, or whose solo or concurrent run failed, has
 * nothing to compare; a failure under load is counted. Before, the matrix had no concurrent phase. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "matrix/mx_conc.h"
#include "engine/engine_concurrent.h"

static struct rp_pair_result ok_at(double gbps)
{
	struct rp_endpoint e = { .node = "n", .device = "d", .port = 1 };
	struct rp_pair_result r;

	rp_pair_result_init(&r, &e, &e);
	r.status = RP_ST_OK;
	r.verified = true;
	r.gbps = gbps;
	return r;
}

static void test_drop_against_own_solo(void **state)
{
	struct mx_conc mc = { 0 };
	struct rp_pair_result solo[3] = { ok_at(100), ok_at(40), ok_at(50) }, out[6], r;
	double ratio[6];
	struct mx_conc_sum sum;

	(void)state;
	solo[2].status = RP_ST_TIMEOUT;
	r = ok_at(74);                                    /* 74% of solo 0: a drop at 25% */
	assert_int_equal(mx_conc_add(&mc, &r, 0, 2, 0, 0), 0);
	r = ok_at(75);                                    /* exactly 75%: not a drop */
	r.warnings = 1u << RP_WARN_CONCURRENT_DROP;         /* a stale mark is cleared */
	assert_int_equal(mx_conc_add(&mc, &r, 2, 0, 0, 0), 0);
	r = ok_at(39);                                    /* 97.5% of its own solo (40), though 39% of solo 0 */
	assert_int_equal(mx_conc_add(&mc, &r, 1, 3, 1, 1), 0);
	r = ok_at(10);                                    /* its solo failed: nothing to compare */
	assert_int_equal(mx_conc_add(&mc, &r, 3, 1, 2, 1), 0);
	r = ok_at(10);                                    /* no solo result at all */
	assert_int_equal(mx_conc_add(&mc, &r, 4, 5, -1, 1), 0);
	r = ok_at(0);
	rp_pair_result_fail(&r, RP_ST_RETRY_EXCEEDED, "under load");
	assert_int_equal(mx_conc_add(&mc, &r, 5, 4, 0, 1), 0);
	assert_int_equal(mc.n, 6);
	mx_conc_judge(&mc, &(struct rp_result_seq){ .n = 3, .arr = solo }, RP_CONCURRENT_DROP_DEFAULT, out, ratio, &sum);
	assert_true(out[0].warnings & (1u << RP_WARN_CONCURRENT_DROP));
	assert_string_equal(rp_pair_warning_code(RP_WARN_CONCURRENT_DROP), "concurrent_drop");
	assert_false(out[1].warnings & (1u << RP_WARN_CONCURRENT_DROP));
	assert_false(out[2].warnings & (1u << RP_WARN_CONCURRENT_DROP));
	assert_false(out[3].warnings & (1u << RP_WARN_CONCURRENT_DROP));
	assert_false(out[4].warnings & (1u << RP_WARN_CONCURRENT_DROP));
	assert_false(out[5].warnings & (1u << RP_WARN_CONCURRENT_DROP));
	assert_true(ratio[0] > 0.7399 && ratio[0] < 0.7401);
	assert_true(ratio[1] > 0.7499 && ratio[1] < 0.7501);
	assert_true(ratio[2] > 0.974 && ratio[2] < 0.976);
	assert_true(ratio[3] == 0 && ratio[4] == 0 && ratio[5] == 0);
	assert_int_equal(sum.n, 6);
	assert_int_equal(sum.n_drop, 1);
	assert_int_equal(sum.n_failed, 1);
	assert_int_equal(sum.n_compared, 3);
	/* the kept results are not changed by judging (the stale mark stays on the original) */
	assert_true(mc.res[1].warnings & (1u << RP_WARN_CONCURRENT_DROP));
	assert_int_equal(mc.pair_eps[2 * 2], 1);
	assert_int_equal(mc.round[2], 1);
	/* a stricter threshold (--concurrent-drop 2%) marks the 97.5% pair too */
	mx_conc_judge(&mc, &(struct rp_result_seq){ .n = 3, .arr = solo }, 0.02, out, ratio, NULL);
	assert_true(out[2].warnings & (1u << RP_WARN_CONCURRENT_DROP));
	/* an endpoint with no port is no failure under load (its solo pairs fail for it) */
	rp_pair_result_fail(&mc.res[4], RP_ST_NO_PORT, "n/x: no ACTIVE port");
	mx_conc_judge(&mc, &(struct rp_result_seq){ .n = 3, .arr = solo }, RP_CONCURRENT_DROP_DEFAULT, out, ratio, &sum);
	assert_int_equal(sum.n_failed, 1);
	/* a solo index past the solo results compares with nothing */
	mc.solo[0] = 3;
	mx_conc_judge(&mc, &(struct rp_result_seq){ .n = 3, .arr = solo }, RP_CONCURRENT_DROP_DEFAULT, out, ratio, &sum);
	assert_false(out[0].warnings & (1u << RP_WARN_CONCURRENT_DROP));
	assert_true(ratio[0] == 0);
	mx_conc_fini(&mc);
	assert_int_equal(mc.n, 0);
}

/* Many results: the arrays grow together and keep every entry. */
static void test_add_grows(void **state)
{
	struct mx_conc mc = { 0 };
	struct rp_pair_result r = ok_at(1);

	(void)state;
	for (uint32_t i = 0; i < 200; i++)
		assert_int_equal(mx_conc_add(&mc, &r, i, i + 1, (int64_t)i - 1, i / 2), 0);
	for (uint32_t i = 0; i < 200; i++) {
		assert_int_equal(mc.pair_eps[2 * i], i);
		assert_int_equal(mc.pair_eps[2 * i + 1], i + 1);
		assert_int_equal(mc.solo[i], (int64_t)i - 1);
		assert_int_equal(mc.round[i], i / 2);
	}
	mx_conc_fini(&mc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_against_own_solo),
		cmocka_unit_test(test_add_grows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
