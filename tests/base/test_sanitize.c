/* test_sanitize.c: peer strings become valid UTF-8 without control characters, and a cut never
 * splits a character. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/sanitize.h"

static void check(const char *in, const char *want, size_t want_replaced)
{
	char buf[64];

	strcpy(buf, in);
	assert_int_equal(rp_str_sanitize(buf), want_replaced);
	assert_string_equal(buf, want);
	assert_true(rp_str_is_clean(buf));
	assert_int_equal(rp_str_is_clean(in), want_replaced == 0);
}

static void test_in_place(void **state)
{
	(void)state;
	check("rxe0", "rxe0", 0);
	check("n\xc3\xb6" "de-\xe2\x82\xac-\xf0\x9f\x98\x80", "n\xc3\xb6" "de-\xe2\x82\xac-\xf0\x9f\x98\x80", 0);
	check("a\nb\tc\x1b[31m", "a?b?c?[31m", 3);         /* C0 controls, an escape sequence */
	check("del\x7f", "del?", 1);
	check("c1\xc2\x85x", "c1??x", 2);                   /* U+0085 (NEL) is a C1 control */
	check("bad\xff\xfe", "bad??", 2);                   /* never valid in UTF-8 */
	check("lone\x80", "lone?", 1);                      /* a stray continuation byte */
	check("cut\xe2\x82", "cut??", 2);                   /* a character cut short */
	check("over\xc0\xaf", "over??", 2);                 /* overlong '/' */
	check("over3\xe0\x80\xaf", "over3???", 3);          /* overlong, three bytes */
	check("sur\xed\xa0\x80", "sur???", 3);              /* a UTF-16 surrogate */
	check("big\xf4\x90\x80\x80", "big????", 4);         /* past U+10FFFF */
}

static void test_copy_cuts_at_boundary(void **state)
{
	char out[8];

	(void)state;
	/* "ab" + 3 x U+20AC (3 bytes each) = 11 bytes: 7 fit, the cut falls inside the second euro */
	assert_int_equal(rp_str_sanitize_copy(out, sizeof(out), "ab\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"), 0);
	assert_string_equal(out, "ab\xe2\x82\xac");
	assert_true(rp_str_is_clean(out));
	/* a 4-byte character that does not fit is left out whole */
	assert_int_equal(rp_str_sanitize_copy(out, 5, "abc\xf0\x9f\x98\x80"), 0);
	assert_string_equal(out, "abc");
	/* replacements still fit byte for byte */
	assert_int_equal(rp_str_sanitize_copy(out, sizeof(out), "a\x01\xff"), 2);
	assert_string_equal(out, "a??");
	assert_int_equal(rp_str_sanitize_copy(out, 1, "abc"), 0);
	assert_string_equal(out, "");
	out[0] = 'x';
	assert_int_equal(rp_str_sanitize_copy(out, 0, "abc"), 0);
	assert_int_equal(out[0], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_place),
		cmocka_unit_test(test_copy_cuts_at_boundary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
