/* test_baseline.c: a run judged against an accepted earlier report: the baseline file is written by
 * the real writer (lib/report/report.c), the run's pairs are compared through lib/compare/diff.h's rules. */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compare/baseline.h"
#include "base/log.h"
#include "report/report.h"
#include "testutil.h"
#include "base/util.h"

static char last_log[1024];

static void capture(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	rp_strlcpy(last_log, msg, sizeof(last_log));
}

static struct rp_endpoint ep(const char *dev)
{
	struct rp_endpoint e = { .port = 1, .gid_index = 1, .mtu = 1024, .link_gbps = 100 };

	rp_strlcpy(e.node, "h", sizeof(e.node));
	rp_strlcpy(e.device, dev, sizeof(e.device));
	rp_strlcpy(e.mem, "host", sizeof(e.mem));
	rp_strlcpy(e.mem_reg, "host", sizeof(e.mem_reg));
	return e;
}

static void mk(struct rp_pair_result *r, const char *s, const char *d, enum rp_status st, double gbps)
{
	struct rp_endpoint a = ep(s), b = ep(d);

	rp_pair_result_init(r, &a, &b);
	r->msg_size = 65536;
	if (st == RP_ST_OK) {
		r->status = RP_ST_OK;
		r->gbps = gbps;
		r->gbps_min = gbps / 2;
		r->iters = 100;
		r->bytes = 100 * 65536;
		r->verified = true;
	} else {
		rp_pair_result_fail(r, st, "injected %s", rp_status_code(st));
	}
}

static const struct rp_report_info info = { .command = "loopback", .version = "test", .started = 1e9 };

/* The baseline: rxe0 <-> rxe1 both ways at 10 Gb/s. */
static void write_baseline(char *path, size_t len)
{
	struct rp_pair_result r[2];
	json_t *j;

	mk(&r[0], "rxe0", "rxe1", RP_ST_OK, 10);
	mk(&r[1], "rxe1", "rxe0", RP_ST_OK, 10);
	j = rp_report_json(&info, r, 2);
	assert_non_null(j);
	snprintf(path, len, "%s/base.json", rp_test_tmpdir());
	assert_int_equal(rp_report_write_json(j, path), 0);
	json_decref(j);
}

static void test_same_run_passes(void **state)
{
	struct rp_baseline b;
	struct rp_pair_result r[2];
	char path[512];
	json_t *j;

	(void)state;
	write_baseline(path, sizeof(path));
	assert_int_equal(rp_baseline_load(&b, path, 0.1), 0);
	mk(&r[0], "rxe0", "rxe1", RP_ST_OK, 9.5);   /* within 10% */
	mk(&r[1], "rxe1", "rxe0", RP_ST_OK, 10.5);
	assert_int_equal(rp_baseline_judge(&b, &info, r, 2), 0);
	assert_false(rp_baseline_regressed(&b));
	assert_int_equal(b.n_regressions, 0);
	assert_int_equal(b.d.matched, 2);
	j = rp_baseline_json(&b);
	assert_non_null(j);
	assert_false(json_is_true(json_object_get(j, "regression")));
	assert_string_equal(json_string_value(json_object_get(j, "file")), path);
	assert_non_null(json_object_get(json_object_get(j, "comparison"), "items"));
	json_decref(j);
	rp_baseline_fini(&b);
}

/* A pair that fails now, one that is slower past --drop, and the JSON section that says so. */
static void test_failure_and_drop_regress(void **state)
{
	struct rp_baseline b;
	struct rp_pair_result r[2];
	char path[512], text[512];
	bool seen_fail = false, seen_drop = false;
	json_t *j;

	(void)state;
	write_baseline(path, sizeof(path));
	assert_int_equal(rp_baseline_load(&b, path, 0.1), 0);
	mk(&r[0], "rxe0", "rxe1", RP_ST_RETRY_EXCEEDED, 0);
	mk(&r[1], "rxe1", "rxe0", RP_ST_OK, 8);     /* -20% */
	assert_int_equal(rp_baseline_judge(&b, &info, r, 2), 0);
	assert_true(rp_baseline_regressed(&b));
	for (size_t i = 0; i < b.d.n; i++) {
		if (!b.d.items[i].regression)
			continue;
		rp_baseline_item_text(&b.d.items[i], text, sizeof(text));
		if (b.d.items[i].kind == RP_DIFF_NEW_FAILURE) {
			seen_fail = true;
			assert_non_null(strstr(text, "new_failure: h/rxe0:1 -> h/rxe1:1 65536 B"));
			assert_non_null(strstr(text, "now retry_exceeded"));
		}
		if (b.d.items[i].kind == RP_DIFF_DROP) {
			seen_drop = true;
			assert_non_null(strstr(text, "10.000 -> 8.000 Gb/s (-20.0%)"));
		}
	}
	assert_true(seen_fail);
	assert_true(seen_drop);
	j = rp_baseline_json(&b);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "regression")));
	assert_true(json_integer_value(json_object_get(j, "regressions")) >= 2);
	json_decref(j);
	/* judged again with a looser threshold, the drop is no longer a regression; the failure still is */
	b.drop = 0.25;
	assert_int_equal(rp_baseline_judge(&b, &info, r, 2), 0);
	assert_true(rp_baseline_regressed(&b));
	for (size_t i = 0; i < b.d.n; i++)
		assert_false(b.d.items[i].kind == RP_DIFF_DROP);
	rp_baseline_fini(&b);
}

/* Coverage lost: a pair of the baseline not measured now fails the run. */
static void test_lost_pair_regresses(void **state)
{
	struct rp_baseline b;
	struct rp_pair_result r[1];
	char path[512], text[512];

	(void)state;
	write_baseline(path, sizeof(path));
	assert_int_equal(rp_baseline_load(&b, path, 0.1), 0);
	mk(&r[0], "rxe0", "rxe1", RP_ST_OK, 10);
	assert_int_equal(rp_baseline_judge(&b, &info, r, 1), 0);
	assert_true(rp_baseline_regressed(&b));
	assert_int_equal(b.d.count[RP_DIFF_NOT_MEASURED], 1);
	for (size_t i = 0; i < b.d.n; i++)
		if (b.d.items[i].kind == RP_DIFF_NOT_MEASURED)
			assert_non_null(strstr(rp_baseline_item_text(&b.d.items[i], text, sizeof(text)),
					       "not_measured: h/rxe1:1 -> h/rxe0:1"));
	rp_baseline_fini(&b);
}

/* A baseline that is not a report is refused, naming the file. */
static void test_bad_baseline(void **state)
{
	struct rp_baseline b;
	char path[512];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/bad.json", rp_test_tmpdir());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"schema\": 1}\n", f);
	fclose(f);
	rp_log_set_sink(capture, NULL);
	assert_int_equal(rp_baseline_load(&b, path, 0.1), -EINVAL);
	assert_non_null(strstr(last_log, path));
	rp_baseline_fini(&b);
	snprintf(path, sizeof(path), "%s/absent.json", rp_test_tmpdir());
	assert_true(rp_baseline_load(&b, path, 0.1) < 0);
	rp_baseline_fini(&b);
	rp_log_set_sink(NULL, NULL);
	assert_false(rp_baseline_regressed(&b));
	assert_null(rp_baseline_json(&b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_run_passes),
		cmocka_unit_test(test_failure_and_drop_regress),
		cmocka_unit_test(test_lost_pair_regresses),
		cmocka_unit_test(test_bad_baseline),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
