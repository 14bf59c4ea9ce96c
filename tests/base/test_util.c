/* test_util.c: the checked number parsers every option and sysfs value goes through. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/util.h"

static void test_parse_size_units(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(rp_parse_size("4096", 1, UINT64_MAX, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(rp_parse_size("64K", 1, UINT64_MAX, &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(rp_parse_size("1M", 1, UINT64_MAX, &v), 0);
	assert_int_equal(v, 1 << 20);
	assert_int_equal(rp_parse_size("2GiB", 1, UINT64_MAX, &v), 0);
	assert_int_equal(v, 2ULL << 30);
}

static void test_parse_size_rejects(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(rp_parse_size("", 1, 100, &v), -EINVAL);
	assert_int_equal(rp_parse_size("-1", 1, 100, &v), -EINVAL);
	assert_int_equal(rp_parse_size("12Q", 1, 100, &v), -EINVAL);
	assert_int_equal(rp_parse_size(" 12", 1, 100, &v), -EINVAL);
	assert_int_equal(rp_parse_size("0", 1, 100, &v), -ERANGE);
	assert_int_equal(rp_parse_size("1K", 1, 100, &v), -ERANGE);
	assert_int_equal(rp_parse_size("99999999999999999999", 1, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(rp_parse_size("17179869184T", 1, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(v, 7);
}

static void test_parse_u64_hex(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(rp_parse_u64("0x1a", 0, 0xffff, true, &v), 0);
	assert_int_equal(v, 26);
	assert_int_equal(rp_parse_u64("0x1a", 0, 0xffff, false, &v), -EINVAL);
	assert_int_equal(rp_parse_u64("0x", 0, 0xffff, true, &v), -EINVAL);
	assert_int_equal(rp_parse_u64("26", 0, 0xffff, true, &v), 0);
	assert_int_equal(v, 26);
}

static void test_parse_int_and_double(void **state)
{
	int i = 0;
	double d = 0;

	(void)state;
	assert_int_equal(rp_parse_int("-1", -1, 255, &i), 0);
	assert_int_equal(i, -1);
	assert_int_equal(rp_parse_int("256", -1, 255, &i), -ERANGE);
	assert_int_equal(rp_parse_int("3x", -1, 255, &i), -EINVAL);
	assert_int_equal(rp_parse_double("0.9", 0, 1, &d), 0);
	assert_true(d > 0.89 && d < 0.91);
	assert_int_equal(rp_parse_double("1.5", 0, 1, &d), -ERANGE);
	assert_int_equal(rp_parse_double("nan", 0, 1, &d), -EINVAL);
}

static void test_parse_seconds(void **state)
{
	double d = 0;

	(void)state;
	assert_int_equal(rp_parse_seconds("500ms", 0, 100, &d), 0);
	assert_true(d > 0.49 && d < 0.51);
	assert_int_equal(rp_parse_seconds("2m", 0, 1000, &d), 0);
	assert_true(d > 119.9 && d < 120.1);
	assert_int_equal(rp_parse_seconds("2m", 0, 100, &d), -ERANGE);
	assert_int_equal(rp_parse_seconds("5 s", 0, 100, &d), -EINVAL);
}

static void test_strlcpy_and_rstrip(void **state)
{
	char buf[4];
	char s[] = "4: ACTIVE\n";

	(void)state;
	assert_int_equal(rp_strlcpy(buf, "abc", sizeof(buf)), 0);
	assert_string_equal(buf, "abc");
	assert_int_equal(rp_strlcpy(buf, "abcd", sizeof(buf)), -ENAMETOOLONG);
	assert_string_equal(buf, "abc");
	assert_string_equal(rp_rstrip(s), "4: ACTIVE");
}

/* The report writers' one UTF-8 rule: valid sequences by length; stray, overlong, surrogate,
 * non-character, too-large and cut sequences are not. */
static void test_utf8_seq_len(void **state)
{
	(void)state;
	assert_int_equal(rp_utf8_seq_len("a", 1), 1);
	assert_int_equal(rp_utf8_seq_len("\xc3\xa9", 2), 2);              /* e acute */
	assert_int_equal(rp_utf8_seq_len("\xe2\x82\xac", 3), 3);          /* euro sign */
	assert_int_equal(rp_utf8_seq_len("\xf0\x9f\x98\x80", 4), 4);      /* an emoji */
	assert_int_equal(rp_utf8_seq_len("\xc3\xa9", 1), 0);              /* cut by the field's end */
	assert_int_equal(rp_utf8_seq_len("\xc3", 1), 0);
	assert_int_equal(rp_utf8_seq_len("\xff", 1), 0);
	assert_int_equal(rp_utf8_seq_len("\x80", 1), 0);                   /* a stray continuation */
	assert_int_equal(rp_utf8_seq_len("\xc0\xaf", 2), 0);              /* overlong '/' */
	assert_int_equal(rp_utf8_seq_len("\xed\xa0\x80", 3), 0);          /* a surrogate */
	assert_int_equal(rp_utf8_seq_len("\xef\xbf\xbe", 3), 0);          /* U+FFFE */
	assert_int_equal(rp_utf8_seq_len("\xf4\x90\x80\x80", 4), 0);      /* past U+10FFFF */
	assert_int_equal(rp_utf8_seq_len("\xe2\x28\xa1", 3), 0);          /* a bad continuation */
	assert_int_equal(rp_utf8_seq_len("a", 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size_units),
		cmocka_unit_test(test_parse_size_rejects),
		cmocka_unit_test(test_parse_u64_hex),
		cmocka_unit_test(test_parse_int_and_double),
		cmocka_unit_test(test_parse_seconds),
		cmocka_unit_test(test_strlcpy_and_rstrip),
		cmocka_unit_test(test_utf8_seq_len),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
