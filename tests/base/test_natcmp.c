/* test_natcmp.c: natural order: numbers by value, text by bytes, a total order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/natcmp.h"

static int sgn(int v)
{
	return (v > 0) - (v < 0);
}

static void test_numbers_by_value(void **state)
{
	(void)state;
	assert_true(rp_natcmp("node2", "node10") < 0);
	assert_true(rp_natcmp("node10", "node2") > 0);
	assert_true(rp_natcmp("mlx5_2", "mlx5_10") < 0);
	assert_true(rp_natcmp("node9", "node0113") < 0);
	assert_true(rp_natcmp("rack2-node10", "rack10-node2") < 0);
	assert_true(rp_natcmp("a99999999999999999999999", "a100000000000000000000000") < 0);   /* past 64 bits */
	assert_int_equal(rp_natcmp("node7", "node7"), 0);
	assert_int_equal(rp_natcmp("", ""), 0);
}

static void test_text_and_prefixes(void **state)
{
	(void)state;
	assert_true(rp_natcmp("node", "node1") < 0);
	assert_true(rp_natcmp("", "a") < 0);
	assert_true(rp_natcmp("mlx5_1", "rxe0") < 0);
	assert_true(rp_natcmp("node1a", "node1b") < 0);
	assert_true(rp_natcmp("node1b", "node10a") < 0);
	assert_true(rp_natcmp("gpu-a", "gpu0") < 0);   /* '-' (0x2d) before '0' (0x30), byte order */
	/* zero padding: equal values, shorter padding first, so only identical names are equal */
	assert_true(rp_natcmp("n1", "n01") < 0);
	assert_true(rp_natcmp("n01", "n1") > 0);
	assert_true(rp_natcmp("n01x", "n1y") < 0);   /* the text after decides before the padding */
	assert_true(rp_natcmp("n0", "n00") < 0);
}

/* A field without its NUL is read up to max bytes only. */
static void test_bounded(void **state)
{
	char a[4] = { 'n', '1', '2', '3' }, b[4] = { 'n', '1', '2', '4' };

	(void)state;
	assert_true(rp_natcmp_n(a, b, 4) < 0);
	assert_int_equal(rp_natcmp_n(a, b, 3), 0);
	assert_int_equal(rp_natcmp_n("node10", "node11", 5), 0);
}

static int cmp_str(const void *x, const void *y)
{
	return rp_natcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Sorting with it gives the order a person expects; the relation is antisymmetric and transitive
 * over a mixed set (a broken total order makes qsort's result depend on the input order). */
static void test_sort_and_total_order(void **state)
{
	const char *names[] = { "node10", "node1", "node011", "node2", "node0", "node11", "node100", "node9", "node01",
				"mlx5_10", "mlx5_2", "mlx5_1", "node", "node2a", "" };
	const char *want[] = { "", "mlx5_1", "mlx5_2", "mlx5_10", "node", "node0", "node1", "node01", "node2", "node2a",
			       "node9", "node10", "node11", "node011", "node100" };
	size_t n = sizeof(names) / sizeof(names[0]);

	(void)state;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			assert_int_equal(sgn(rp_natcmp(names[i], names[j])), -sgn(rp_natcmp(names[j], names[i])));
			for (size_t k = 0; k < n; k++)
				if (rp_natcmp(names[i], names[j]) < 0 && rp_natcmp(names[j], names[k]) < 0)
					assert_true(rp_natcmp(names[i], names[k]) < 0);
		}
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(names[i], want[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers_by_value),
		cmocka_unit_test(test_text_and_prefixes),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_sort_and_total_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
