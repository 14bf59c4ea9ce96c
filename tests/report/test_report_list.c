/* test_report_list.c: which pairs a matrix report lists (lib/pairs_list): a failure, a flaky pair or
 * a warned one is notable, a plain pass (a soft device's nominal-rate warning included) is not;
 * auto lists all up to RP_REPORT_LIST_AUTO_MAX directions and --baseline keeps every pair listed; the
 * listed view reads and writes through to the base pairs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/report_list.h"

static void test_mode(void **state)
{
	enum rp_report_list_mode m = RP_REPORT_LIST_AUTO;

	(void)state;
	assert_int_equal(rp_report_list_parse("all", &m), 0);
	assert_int_equal(m, RP_REPORT_LIST_ALL);
	assert_int_equal(rp_report_list_parse("notable", &m), 0);
	assert_int_equal(m, RP_REPORT_LIST_NOTABLE);
	assert_int_equal(rp_report_list_parse("auto", &m), 0);
	assert_int_equal(m, RP_REPORT_LIST_AUTO);
	assert_int_equal(rp_report_list_parse("failed", &m), -EINVAL);
	assert_int_equal(rp_report_list_parse("", &m), -EINVAL);
	assert_false(rp_report_list_notable_only(RP_REPORT_LIST_AUTO, RP_REPORT_LIST_AUTO_MAX, false));
	assert_true(rp_report_list_notable_only(RP_REPORT_LIST_AUTO, RP_REPORT_LIST_AUTO_MAX + 1, false));
	assert_false(rp_report_list_notable_only(RP_REPORT_LIST_AUTO, 8380416, true));      /* --baseline reads every pair */
	assert_false(rp_report_list_notable_only(RP_REPORT_LIST_ALL, 8380416, false));
	assert_true(rp_report_list_notable_only(RP_REPORT_LIST_NOTABLE, 2, false));
}

static void test_notable(void **state)
{
	struct rp_result_peek pk = { .status = RP_ST_OK, .rev_status = RP_ST_OK };

	(void)state;
	assert_false(rp_result_notable(&pk));
	pk.warnings = 1u << RP_WARN_NOMINAL_RATE;
	assert_false(rp_result_notable(&pk));                 /* on every pair of a soft device */
	pk.warnings |= 1u << RP_WARN_INTERVAL_DROP;
	assert_true(rp_result_notable(&pk));
	pk.warnings = 0;
	pk.confirm = RP_CONFIRM_FLAKY;
	assert_true(rp_result_notable(&pk));
	pk.confirm = RP_CONFIRM_NONE;
	pk.status = RP_ST_BELOW_THRESHOLD;
	assert_true(rp_result_notable(&pk));
	pk.status = RP_ST_OK;
	pk.rev_measured = true;
	pk.rev_warnings = 1u << RP_WARN_LOSSY;
	assert_true(rp_result_notable(&pk));
	pk.rev_warnings = 0;
	pk.rev_status = RP_ST_RETRY_EXCEEDED;
	assert_true(rp_result_notable(&pk));
}

static void test_listed_view(void **state)
{
	struct rp_pair_result res[5];
	uint32_t pe[10] = { 0, 1, 1, 0, 0, 2, 2, 0, 1, 2 };
	struct rp_result_seq base = rp_result_seq_array(res, 5), v;
	struct rp_report_listed l;
	struct rp_pair_result tmp, *r;

	(void)state;
	memset(res, 0, sizeof(res));
	for (int i = 0; i < 5; i++)
		res[i].status = RP_ST_OK;
	res[1].status = RP_ST_TIMEOUT;
	res[4].warnings = 1u << RP_WARN_MTU_MISMATCH;
	assert_int_equal(rp_report_list_build(&l, &base, pe), 0);
	v = rp_report_listed_view(&l);
	assert_int_equal(v.n, 2);
	assert_int_equal(l.pair_eps[0], 1);
	assert_int_equal(l.pair_eps[1], 0);
	assert_int_equal(l.pair_eps[2], 1);
	assert_int_equal(l.pair_eps[3], 2);
	r = rp_result_seq_get(&v, 0, &tmp);
	assert_ptr_equal(r, &res[1]);
	r = rp_result_seq_get(&v, 1, &tmp);
	assert_ptr_equal(r, &res[4]);
	r->gbps = 7;
	assert_int_equal(rp_result_seq_put(&v, 1, r), 0);
	assert_true(res[4].gbps == 7);
	rp_report_listed_fini(&l);
	/* nothing notable: an empty view */
	res[1].status = RP_ST_OK;
	res[4].warnings = 0;
	assert_int_equal(rp_report_list_build(&l, &base, pe), 0);
	assert_int_equal(rp_report_listed_view(&l).n, 0);
	rp_report_listed_fini(&l);
}

/* Many notable pairs among many more (the lists grow as they are found, in one read): each listed
 * once, in order, with its endpoints. */
static void test_listed_many(void **state)
{
	enum { N = 1000 };
	struct rp_pair_result *res = calloc(N, sizeof(*res));
	uint32_t *pe = calloc(2 * N, sizeof(*pe));
	struct rp_result_seq base = rp_result_seq_array(res, N);
	struct rp_report_listed l;
	size_t want = 0;

	(void)state;
	assert_non_null(res);
	assert_non_null(pe);
	for (uint32_t i = 0; i < N; i++) {
		res[i].status = i % 7 == 3 ? RP_ST_TIMEOUT : RP_ST_OK;
		pe[2 * i] = i;
		pe[2 * i + 1] = i + 1;
		want += i % 7 == 3;
	}
	assert_int_equal(rp_report_list_build(&l, &base, pe), 0);
	assert_int_equal(l.n, want);
	for (size_t k = 0; k < l.n; k++) {
		assert_int_equal(l.idx[k], 7 * k + 3);
		assert_int_equal(l.pair_eps[2 * k], 7 * k + 3);
		assert_int_equal(l.pair_eps[2 * k + 1], 7 * k + 4);
	}
	rp_report_listed_fini(&l);
	free(res);
	free(pe);
}

/* A store that knows its quiet passes (lib/verdict/result_seq.h: never notable): the list is built
 * without reading them, 64 at a time where a word of them is quiet, and is the same list. */
static size_t peeks;

static void counting_peek(const struct rp_result_seq *ps, size_t i, struct rp_result_peek *pk)
{
	const struct rp_pair_result *res = ps->arg;

	peeks++;
	rp_result_peek_of(&res[i], pk);
}

static void test_listed_skips_quiet(void **state)
{
	enum { N = 200 };
	struct rp_pair_result *res = calloc(N, sizeof(*res));
	uint32_t *pe = calloc(2 * N, sizeof(*pe));
	uint64_t quiet[(N + 63) / 64] = { 0 };
	struct rp_result_seq base = { .n = N, .peek = counting_peek, .quiet = quiet, .arg = res };
	struct rp_report_listed l;
	size_t unknown = 0;

	(void)state;
	assert_non_null(res);
	assert_non_null(pe);
	for (uint32_t i = 0; i < N; i++) {
		res[i].status = i == 70 || i == 199 ? RP_ST_TIMEOUT : RP_ST_OK;
		pe[2 * i] = i;
		pe[2 * i + 1] = i + 1;
		/* quiet: the first word whole, the rest but the failures and every third pass */
		if (res[i].status == RP_ST_OK && (i < 64 || i % 3))
			quiet[i / 64] |= (uint64_t)1 << (i % 64);
		else
			unknown++;
	}
	peeks = 0;
	assert_int_equal(rp_report_list_build(&l, &base, pe), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.idx[0], 70);
	assert_int_equal(l.idx[1], 199);
	assert_int_equal(peeks, unknown);   /* the quiet ones never read */
	rp_report_listed_fini(&l);
	free(res);
	free(pe);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_notable),
		cmocka_unit_test(test_listed_view),
		cmocka_unit_test(test_listed_skips_quiet),
		cmocka_unit_test(test_listed_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
