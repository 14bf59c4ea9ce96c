/* test_netacl.c: --allow CIDR lists: parsing (bad entries are refused, with the reason) and matching
 * IPv4, IPv6 and IPv4-mapped IPv6 peer addresses. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "base/netacl.h"

static struct sockaddr_storage v4(const char *a)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	s->sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, a, &s->sin_addr), 1);
	return ss;
}

static struct sockaddr_storage v6(const char *a)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	s->sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
	return ss;
}

static bool allows4(const struct rp_acl *acl, const char *a)
{
	struct sockaddr_storage ss = v4(a);

	return rp_acl_allows(acl, (struct sockaddr *)&ss, sizeof(struct sockaddr_in));
}

static bool allows6(const struct rp_acl *acl, const char *a)
{
	struct sockaddr_storage ss = v6(a);

	return rp_acl_allows(acl, (struct sockaddr *)&ss, sizeof(struct sockaddr_in6));
}

static void test_parse_good(void **state)
{
	struct rp_cidr c;
	char why[160];

	(void)state;
	assert_int_equal(rp_cidr_parse("10.0.0.0/8", &c, why, sizeof(why)), 0);
	assert_int_equal(c.family, AF_INET);
	assert_int_equal(c.prefix, 8);
	assert_int_equal(c.addr[0], 10);
	assert_int_equal(rp_cidr_parse("192.0.2.7", &c, why, sizeof(why)), 0);
	assert_int_equal(c.prefix, 32);
	assert_int_equal(rp_cidr_parse("0.0.0.0/0", &c, why, sizeof(why)), 0);
	assert_int_equal(c.prefix, 0);
	assert_int_equal(rp_cidr_parse("fd00::/8", &c, why, sizeof(why)), 0);
	assert_int_equal(c.family, AF_INET6);
	assert_int_equal(c.prefix, 8);
	assert_int_equal(rp_cidr_parse("::1", &c, why, sizeof(why)), 0);
	assert_int_equal(c.prefix, 128);
	assert_int_equal(rp_cidr_parse("2001:db8::/33", &c, why, sizeof(why)), 0);
	assert_int_equal(c.prefix, 33);
}

static void test_parse_bad(void **state)
{
	static const char *bad[] = {
		"", "/8", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/8x", "10.0.0.0/ 8", "10.0.0",
		"10.0.0.256", "host.example", "fd00::/129", "fd00:::1/64", "10.1.2.3/8", "fd00::1/64",
		"10.0.0.0/8/8", " 10.0.0.0/8", "10.128.0.0/8", "2001:db8:8000::/32",
	};
	struct rp_cidr c;
	char why[160];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (rp_cidr_parse(bad[i], &c, why, sizeof(why)) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
		assert_true(strlen(why) > 0);
	}
	/* the reason says what is wrong */
	rp_cidr_parse("10.1.2.3/8", &c, why, sizeof(why));
	assert_non_null(strstr(why, "past the /8 prefix"));
	rp_cidr_parse("10.0.0.0/40", &c, why, sizeof(why));
	assert_non_null(strstr(why, "0 to 32"));
}

static void test_list_parse(void **state)
{
	struct rp_acl acl;
	char why[160], big[32 * 16 + 64] = "";

	(void)state;
	assert_int_equal(rp_acl_parse("10.0.0.0/8,fd00::/8,192.0.2.7", &acl, why, sizeof(why)), 0);
	assert_int_equal(acl.n, 3);
	assert_int_equal(rp_acl_parse("10.0.0.0/8,", &acl, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "empty"));
	assert_int_equal(rp_acl_parse(",10.0.0.0/8", &acl, why, sizeof(why)), -EINVAL);
	assert_int_equal(rp_acl_parse("10.0.0.0/8,,fd00::/8", &acl, why, sizeof(why)), -EINVAL);
	assert_int_equal(rp_acl_parse("10.0.0.0/8,bogus", &acl, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "bogus"));
	for (int i = 0; i < RP_ACL_MAX + 1; i++) {
		char item[24];

		snprintf(item, sizeof(item), "%s10.0.%d.0/24", i ? "," : "", i);
		strcat(big, item);
	}
	assert_int_equal(rp_acl_parse(big, &acl, why, sizeof(why)), -E2BIG);
}

static void test_match_v4(void **state)
{
	struct rp_acl acl;

	(void)state;
	assert_int_equal(rp_acl_parse("10.0.0.0/8,192.168.1.0/25,198.51.100.7", &acl, NULL, 0), 0);
	assert_true(allows4(&acl, "10.1.2.3"));
	assert_true(allows4(&acl, "10.255.255.255"));
	assert_false(allows4(&acl, "11.0.0.1"));
	assert_true(allows4(&acl, "192.168.1.127"));
	assert_false(allows4(&acl, "192.168.1.128"));   /* /25: the bit inside the last byte counts */
	assert_true(allows4(&acl, "198.51.100.7"));
	assert_false(allows4(&acl, "198.51.100.8"));
	assert_false(allows6(&acl, "fd00::1"));          /* an IPv6 peer never matches an IPv4 entry */
}

static void test_match_v6_and_mapped(void **state)
{
	struct rp_acl acl;

	(void)state;
	assert_int_equal(rp_acl_parse("fd00::/8,2001:db8::/33,127.0.0.0/8", &acl, NULL, 0), 0);
	assert_true(allows6(&acl, "fd12:3456::1"));
	assert_false(allows6(&acl, "fe80::1"));
	assert_true(allows6(&acl, "2001:db8:7fff::1"));
	assert_false(allows6(&acl, "2001:db8:8000::1"));
	/* an IPv4 client of the dual-stack listener arrives as ::ffff:a.b.c.d */
	assert_true(allows6(&acl, "::ffff:127.0.0.1"));
	assert_false(allows6(&acl, "::ffff:10.0.0.1"));
	assert_false(allows6(&acl, "::1"));
}

static void test_empty_allows_all(void **state)
{
	struct rp_acl acl;
	struct sockaddr_storage ss;

	(void)state;
	memset(&acl, 0, sizeof(acl));
	assert_true(allows4(&acl, "203.0.113.9"));
	assert_true(allows6(&acl, "2001:db8::9"));
	assert_int_equal(rp_acl_parse("0.0.0.0/0", &acl, NULL, 0), 0);
	assert_true(allows4(&acl, "203.0.113.9"));
	assert_false(allows6(&acl, "2001:db8::9"));
	/* an address of another family, or one too short, is refused */
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	assert_false(rp_acl_allows(&acl, (struct sockaddr *)&ss, sizeof(ss)));
	ss = v4("203.0.113.9");
	assert_false(rp_acl_allows(&acl, (struct sockaddr *)&ss, 4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_list_parse),
		cmocka_unit_test(test_match_v4),
		cmocka_unit_test(test_match_v6_and_mapped),
		cmocka_unit_test(test_empty_allows_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
