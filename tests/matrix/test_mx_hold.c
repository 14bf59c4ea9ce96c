/* test_mx_hold.c: the sweep's held connections (lib/matrix/mx_hold.h): --hold's text, when a run may hold,
 * the per-rank entries (only the sides a rank drives, found by direction), the arming per mode and
 * the counts. What the engine does with a hold is test_engine_hold's; the run's order and outcomes
 * with holds are test_mx_sweep's "sweep held" group. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "matrix/mx_hold.h"

static void test_parse(void **state)
{
	bool on = false;

	(void)state;
	assert_int_equal(mx_hold_parse("auto", &on), 0);
	assert_true(on);
	assert_int_equal(mx_hold_parse("off", &on), 0);
	assert_false(on);
	assert_int_equal(mx_hold_parse("on", &on), 0);
	assert_true(on);
	assert_int_equal(mx_hold_parse("yes", &on), -EINVAL);
	assert_int_equal(mx_hold_parse("", &on), -EINVAL);
	assert_true(on);   /* untouched by a refusal */
}

static void test_allowed(void **state)
{
	struct rp_engine_cfg cfg;
	char why[160];

	(void)state;
	rp_engine_cfg_default(&cfg);
	assert_true(mx_hold_allowed(&cfg, 64, why, sizeof(why)));
	assert_string_equal(why, "");
	cfg.meas.bidir = 1;
	assert_false(mx_hold_allowed(&cfg, 64, why, sizeof(why)));
	assert_non_null(strstr(why, "--bidir"));
	rp_engine_cfg_default(&cfg);
	cfg.cm = true;
	assert_false(mx_hold_allowed(&cfg, 64, why, sizeof(why)));
	assert_non_null(strstr(why, "--cm"));
	rp_engine_cfg_default(&cfg);
	cfg.meas.n_qps = 9;
	assert_false(mx_hold_allowed(&cfg, 64, why, sizeof(why)));
	/* 2 W buffers of the message: 2 x 64 x 2 MiB = 256 MiB fits, 4 MiB does not */
	rp_engine_cfg_default(&cfg);
	cfg.meas.msg_size = 2ULL << 20;
	assert_true(mx_hold_allowed(&cfg, 64, why, sizeof(why)));
	cfg.meas.msg_size = 4ULL << 20;
	assert_false(mx_hold_allowed(&cfg, 64, why, sizeof(why)));
	assert_non_null(strstr(why, "256 MiB"));
	assert_true(mx_hold_allowed(&cfg, 16, why, sizeof(why)));
}

/* Endpoints 0, 1 on rank 0, 2, 3 on rank 1. */
static void eps4(struct mx_ep *eps)
{
	memset(eps, 0, 4 * sizeof(*eps));
	for (int e = 0; e < 4; e++)
		eps[e].owner = e / 2;
}

static void test_entries(void **state)
{
	struct mx_ep eps[4];
	struct mx_holds h = { .mode = MX_HOLD_MAKE };
	/* one job per direction, as a sweep round's */
	const struct mx_job jobs[] = {
		{ .a = 2, .b = 3, .dirs = 1 }, { .a = 2, .b = 3, .dirs = 2 },   /* rank 1's alone */
		{ .a = 0, .b = 2, .dirs = 2 },                                  /* 2 -> 0: both ranks */
		{ .a = 0, .b = 1, .dirs = 1 },                                  /* rank 0's, both ends */
	};
	struct mx_hold_dir *d;

	(void)state;
	eps4(eps);
	assert_int_equal(mx_holds_make(&h, eps, 0, jobs, 4), 0);
	assert_int_equal(h.n, 2);
	assert_non_null(d = mx_holds_find(&h, 2, 0));
	assert_true(d->src == 2 && d->dst == 0);
	assert_non_null(mx_holds_find(&h, 0, 1));
	assert_null(mx_holds_find(&h, 0, 2));   /* the other direction was not asked for */
	assert_null(mx_holds_find(&h, 2, 3));   /* not this rank's */
	assert_int_equal(mx_holds_make(&h, eps, 1, jobs, 4), 0);   /* made again: the old ones gone */
	assert_int_equal(h.n, 3);
	assert_non_null(mx_holds_find(&h, 2, 3));
	assert_non_null(mx_holds_find(&h, 3, 2));
	assert_null(mx_holds_find(&h, 0, 1));
	mx_holds_release(&h);
	assert_int_equal(h.n, 0);
	assert_null(mx_holds_find(&h, 2, 3));
	mx_holds_fini(&h);
}

static void test_arm_and_count(void **state)
{
	struct rp_engine_meas room = { .msg_size = 65536 };
	struct mx_holds h = { .mode = MX_HOLD_MAKE, .room = &room };
	struct mx_hold_side s = { .eng.reused = true };

	(void)state;
	mx_hold_side_arm(&h, &s);
	assert_true(s.eng.keep && s.eng.room == &room && !s.eng.reused);
	s.held = true;
	mx_hold_side_done(&h, &s, true);
	mx_hold_side_done(&h, &s, false);     /* a target side counts nothing */
	assert_int_equal(h.made, 1);
	h.mode = MX_HOLD_USE;
	mx_hold_side_arm(&h, &s);
	assert_true(!s.eng.keep && !s.eng.room);
	s.eng.reused = true;
	mx_hold_side_done(&h, &s, true);
	s.eng.reused = false;
	mx_hold_side_done(&h, &s, true);
	assert_int_equal(h.reused, 1);
	assert_int_equal(h.fresh, 1);
	assert_int_equal(h.made, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_arm_and_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
