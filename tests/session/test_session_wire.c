/* test_session_wire.c: the listener's hello / ack / next messages (every header and payload field, other
 * versions, truncated and garbage messages) and the token (its rules, constant-time comparison). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "session/session_run.h"
#include "session/session_wire.h"
#include "verdict/retest.h"
#include "verdict/verdict.h"

static struct rp_sw_msg good_hello(void)
{
	struct rp_sw_msg m;

	rp_sw_init(&m, RP_SW_HELLO);
	m.u.hello.retest = 1;
	m.u.hello.min_bw = 0.9;
	m.u.hello.outlier = 0.5;
	m.u.hello.interval_drop = 0.1;
	rp_token_field("0123456789abcdef", m.u.hello.token);
	return m;
}

static int check(const struct rp_sw_msg *m, enum rp_sw_type want)
{
	char why[160] = "";
	int rc = rp_sw_validate(m, sizeof(*m), want, why, sizeof(why));

	if (rc)
		assert_true(strlen(why) > 0);   /* every refusal says why */
	return rc;
}

static void test_hello_good(void **state)
{
	struct rp_sw_msg m = good_hello();

	(void)state;
	assert_int_equal(check(&m, RP_SW_HELLO), 0);
	m.u.hello.min_bw_absolute = 1;
	m.u.hello.min_bw = 180;
	m.u.hello.retest = RP_RETEST_MAX;
	assert_int_equal(check(&m, RP_SW_HELLO), 0);
}

static void test_header_fields(void **state)
{
	struct rp_sw_msg m;
	char why[160];

	(void)state;
	m = good_hello();
	m.magic = 0x12345678;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m = good_hello();
	m.magic = __builtin_bswap32(RP_SW_MAGIC);
	assert_int_equal(check(&m, RP_SW_HELLO), -EPROTO);
	m = good_hello();
	m.version = RP_SW_VERSION + 1;
	assert_int_equal(rp_sw_validate(&m, sizeof(m), RP_SW_HELLO, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "version"));
	m.version = 0;
	assert_int_equal(check(&m, RP_SW_HELLO), -EPROTO);
	m = good_hello();
	m.length = sizeof(m) - 1;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.length = 0xffffffffu;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m = good_hello();
	m.type = RP_SW_ACK;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.type = 0;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.type = 0xffff;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m = good_hello();
	m.reserved = 1;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
}

static void test_hello_payload(void **state)
{
	struct rp_sw_msg m;

	(void)state;
	m = good_hello();
	m.u.hello.retest = RP_RETEST_MAX + 1;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m = good_hello();
	m.u.hello.min_bw_absolute = 2;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m = good_hello();
	m.u.hello.min_bw = NAN;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.min_bw = INFINITY;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.min_bw = -0.1;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.min_bw = 1.5;   /* a fraction of the link rate above 1 */
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.min_bw_absolute = 1;
	assert_int_equal(check(&m, RP_SW_HELLO), 0);
	m.u.hello.min_bw = 1e9;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m = good_hello();
	m.u.hello.outlier = NAN;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.outlier = 1.01;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.outlier = -1;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	/* --interval-drop: a fraction 0..1, as the local option */
	m = good_hello();
	m.u.hello.interval_drop = NAN;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.interval_drop = -INFINITY;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.interval_drop = -0.01;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.interval_drop = 1.01;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.interval_drop = 1e300;
	assert_int_equal(check(&m, RP_SW_HELLO), -EBADMSG);
	m.u.hello.interval_drop = 0;   /* off */
	assert_int_equal(check(&m, RP_SW_HELLO), 0);
	m.u.hello.interval_drop = 1;
	assert_int_equal(check(&m, RP_SW_HELLO), 0);
}

/* The listener judges with the writer's verdict settings: every one the hello carries is adopted,
 * --interval-drop too (before, the listener kept its own default 0.1 whatever the writer gave). */
static void test_hello_vcfg(void **state)
{
	struct rp_sw_msg m = good_hello();
	struct rp_verdict_cfg v;

	(void)state;
	m.u.hello.min_bw_absolute = 1;
	m.u.hello.min_bw = 25;
	m.u.hello.outlier = 0.25;
	m.u.hello.interval_drop = 0.4;
	m.u.hello.retest = 2;
	assert_int_equal(check(&m, RP_SW_HELLO), 0);
	rp_session_vcfg(&m.u.hello, &v);
	assert_true(v.min_bw_absolute);
	assert_true(v.min_bw == 25);
	assert_true(v.outlier == 0.25);
	assert_true(v.interval_drop == 0.4);
	m.u.hello.interval_drop = 0;
	rp_session_vcfg(&m.u.hello, &v);
	assert_true(v.interval_drop == 0);
}

static void test_truncated_and_garbage(void **state)
{
	struct rp_sw_msg m = good_hello();
	uint8_t junk[sizeof(m)];

	(void)state;
	assert_int_equal(rp_sw_validate(&m, sizeof(m) - 1, RP_SW_HELLO, NULL, 0), -EBADMSG);
	assert_int_equal(rp_sw_validate(&m, 0, RP_SW_HELLO, NULL, 0), -EBADMSG);
	assert_int_equal(rp_sw_validate(&m, sizeof(m) + 8, RP_SW_HELLO, NULL, 0), -EBADMSG);
	memset(junk, 0, sizeof(junk));
	assert_int_equal(rp_sw_validate((struct rp_sw_msg *)junk, sizeof(junk), RP_SW_HELLO, NULL, 0), -EBADMSG);
	memset(junk, 0xff, sizeof(junk));
	assert_int_equal(rp_sw_validate((struct rp_sw_msg *)junk, sizeof(junk), RP_SW_HELLO, NULL, 0), -EBADMSG);
	memcpy(junk, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);
	assert_int_equal(rp_sw_validate((struct rp_sw_msg *)junk, sizeof(junk), RP_SW_HELLO, NULL, 0), -EBADMSG);
}

static void test_ack_and_next(void **state)
{
	struct rp_sw_msg m;

	(void)state;
	rp_sw_init(&m, RP_SW_ACK);
	assert_int_equal(check(&m, RP_SW_ACK), 0);
	m.u.ack.verdict = RP_SW_BAD_TOKEN;
	assert_int_equal(check(&m, RP_SW_ACK), 0);
	m.u.ack.verdict = RP_SW_REFUSAL_MAX_;
	assert_int_equal(check(&m, RP_SW_ACK), -EBADMSG);

	rp_sw_init(&m, RP_SW_NEXT);
	assert_int_equal(check(&m, RP_SW_NEXT), -EBADMSG);   /* what = 0 */
	m.u.next.what = RP_SW_NEXT_DONE;
	assert_int_equal(check(&m, RP_SW_NEXT), 0);
	m.u.next.what = RP_SW_NEXT_MAX_;
	assert_int_equal(check(&m, RP_SW_NEXT), -EBADMSG);
	m.u.next.what = RP_SW_NEXT_RETEST;
	m.u.next.attempt = 2;
	m.u.next.qp_timeout = 20;
	assert_int_equal(check(&m, RP_SW_NEXT), 0);
	m.u.next.attempt = 1;
	assert_int_equal(check(&m, RP_SW_NEXT), -EBADMSG);
	m.u.next.attempt = RP_MAX_ATTEMPTS + 1;
	assert_int_equal(check(&m, RP_SW_NEXT), -EBADMSG);
	m.u.next.attempt = 2;
	m.u.next.qp_timeout = 32;
	assert_int_equal(check(&m, RP_SW_NEXT), -EBADMSG);
	m.u.next.qp_timeout = -1;
	assert_int_equal(check(&m, RP_SW_NEXT), -EBADMSG);
}

static void test_token_rules(void **state)
{
	char why[160], longtok[RP_TOKEN_MAX + 2];

	(void)state;
	assert_int_equal(rp_token_check("s3cret-token!", why, sizeof(why)), 0);
	assert_int_equal(rp_token_check("short", why, sizeof(why)), -EINVAL);
	assert_null(strstr(why, "short"));   /* the reason never quotes the token */
	assert_int_equal(rp_token_check("has a space", why, sizeof(why)), -EINVAL);
	assert_null(strstr(why, "has a"));
	assert_int_equal(rp_token_check("tab\there12", why, sizeof(why)), -EINVAL);
	assert_int_equal(rp_token_check("caf\xc3\xa9-token", why, sizeof(why)), -EINVAL);
	memset(longtok, 'x', sizeof(longtok) - 1);
	longtok[sizeof(longtok) - 1] = '\0';
	assert_int_equal(rp_token_check(longtok, why, sizeof(why)), -EINVAL);
	longtok[RP_TOKEN_MAX] = '\0';
	assert_int_equal(rp_token_check(longtok, why, sizeof(why)), 0);
}

static void test_token_equal(void **state)
{
	uint8_t a[RP_TOKEN_MAX], b[RP_TOKEN_MAX], none[RP_TOKEN_MAX];

	(void)state;
	rp_token_field("0123456789abcdef", a);
	rp_token_field("0123456789abcdef", b);
	rp_token_field(NULL, none);
	assert_true(rp_token_equal(a, b));
	for (size_t i = 0; i < RP_TOKEN_MAX; i++) {
		/* a difference anywhere, also in the padding past the token, is a mismatch */
		b[i] ^= 0x01;
		assert_false(rp_token_equal(a, b));
		b[i] ^= 0x01;
	}
	rp_token_field("0123456789abcde", b);   /* a prefix of the token */
	assert_false(rp_token_equal(a, b));
	rp_token_field("0123456789abcdefX", b); /* the token and more */
	assert_false(rp_token_equal(a, b));
	assert_false(rp_token_equal(a, none));  /* a listener without a token refuses a writer with one */
	rp_token_field("", b);
	assert_true(rp_token_equal(none, b));
	for (size_t i = 0; i < RP_TOKEN_MAX; i++)
		assert_int_equal(none[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_good),
		cmocka_unit_test(test_header_fields),
		cmocka_unit_test(test_hello_payload),
		cmocka_unit_test(test_hello_vcfg),
		cmocka_unit_test(test_truncated_and_garbage),
		cmocka_unit_test(test_ack_and_next),
		cmocka_unit_test(test_token_rules),
		cmocka_unit_test(test_token_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
