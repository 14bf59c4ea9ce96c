/* test_mx_progress.c: the progress line's clock (lib/matrix/mx_progress.h): at most one line an interval,
 * the last always; the estimate keeps the sweep's rounds apart from the planned rounds (before: one
 * mean over both, skewed by the interleaved sweep); the line's words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "matrix/mx_progress.h"

static void test_rate_limit(void **state)
{
	struct mx_progress p = { .interval_s = 5, .last_real = -1 };

	(void)state;
	assert_true(mx_progress_due(&p, 0.0, false));
	assert_false(mx_progress_due(&p, 1.0, false));
	assert_false(mx_progress_due(&p, 4.9, false));
	assert_true(mx_progress_due(&p, 5.0, false));
	assert_true(mx_progress_due(&p, 5.1, true));    /* the last round always */
	assert_false(mx_progress_due(&p, 6.0, false));
}

/* 2 sweep rounds of 10 s interleaved with 4 planned rounds of 1 s: 100 planned rounds and 3 sweep
 * rounds left take 100 x 1 + 3 x 10 s, not 103 x 24/6 s. */
static void test_eta_apart(void **state)
{
	struct mx_progress p = { .last_real = -1 };
	double t = 0;

	(void)state;
	assert_true(mx_progress_eta(&p, 10, 0) < 0);
	p.t_prev = 0;
	mx_progress_note(&p, true, t += 10);
	mx_progress_note(&p, false, t += 1);
	mx_progress_note(&p, false, t += 1);
	mx_progress_note(&p, true, t += 10);
	mx_progress_note(&p, false, t += 1);
	mx_progress_note(&p, false, t += 1);
	assert_float_equal(mx_progress_eta(&p, 100, 3), 130.0, 1e-9);
	assert_float_equal(mx_progress_eta(&p, 0, 0), 0.0, 1e-9);
}

static void test_line(void **state)
{
	char buf[256];

	(void)state;
	mx_progress_format(buf, sizeof(buf), "round", 320, 1023, 17, 17, 83352, 27.14, 45.2);
	assert_string_equal(buf, "round 320 of 1023 done, sweep 17 of 17 done: 83352 failed so far, 27.1 s in, about 45 s left");
	mx_progress_format(buf, sizeof(buf), "retest round", 1, 2, 0, 0, 3, 1.0, -1);
	assert_string_equal(buf, "retest round 1 of 2 done: 3 failed so far, 1.0 s in, time left not known yet");
}

/* The tail: the sweep's second pass only while screens wait for it, and the final reports. */
static void test_tail(void **state)
{
	(void)state;
	assert_float_equal(mx_progress_tail(0, 12, 1.5), 1.5, 1e-9);
	assert_float_equal(mx_progress_tail(3, 12, 1.5), 13.5, 1e-9);
	assert_float_equal(mx_progress_tail(3, 12, -1), 12, 1e-9);
}

/* The summary reports: the first round's at once, a stop's at once, then at most one rewrite in
 * MX_WRITE_EVERY_S and at most a fifth of the time (before: every round whose wait since the last
 * rewrite was four times its cost, so a 0.7 s rewrite of 8 million results every 3 s). */
static void test_write_due(void **state)
{
	(void)state;
	assert_true(mx_progress_write_due(-1, 0, false));            /* nothing written yet */
	assert_true(mx_progress_write_due(0.1, 5, true));            /* a stop: now */
	assert_false(mx_progress_write_due(5, 1, false));            /* 4 x its cost passed, not 30 s */
	assert_false(mx_progress_write_due(MX_WRITE_EVERY_S - 0.1, 0.7, false));
	assert_true(mx_progress_write_due(MX_WRITE_EVERY_S, 0.7, false));
	assert_false(mx_progress_write_due(40, 20, false));          /* 30 s passed, not 4 x 20 s */
	assert_true(mx_progress_write_due(80, 20, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_limit),
		cmocka_unit_test(test_eta_apart),
		cmocka_unit_test(test_tail),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_write_due),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
