/* test_cmd_pair.c: 'rdmaprobe pair' refuses bad trust options before it touches a device: a bad
 * --allow CIDR, --bind address or token is a usage error (exit 2) that names the problem and never
 * echoes the token; options of the other side are refused, not ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "testutil.h"
#include "base/util.h"

static void test_usage_errors(void **state)
{
	static const struct { const char *args, *msg; } cases[] = {
		{ "pair --listen --allow 10.0.0.1/8", "--allow: '10.0.0.1/8': bits set past the /8 prefix" },
		{ "pair --listen --allow bogus", "--allow: 'bogus': not an IPv4 or IPv6 address" },
		{ "pair --listen --allow 10.0.0.0/8,", "--allow: '': not an IPv4 or IPv6 address (empty entry)" },
		{ "pair --listen --allow fd00::/200", "the prefix length must be a number 0 to 128" },
		{ "pair --listen --bind 10.0.0.0/8", "--bind 10.0.0.0/8: not a numeric IPv4 or IPv6 address" },
		{ "pair --listen --bind myhost", "--bind myhost: not a numeric" },
		{ "pair --listen --token short1", "--token: the token must be 8 to 64 characters" },
		{ "pair host --token 'has space in it'", "--token: the token may hold only printable ASCII" },
		{ "pair host --bind 127.0.0.1", "--bind is for the listener" },
		{ "pair host --allow 10.0.0.0/8", "--allow is for the listener" },
		{ "pair host --serve", "--serve is for the listener" },
		{ "pair --listen --once --serve", "either --once or --serve" },
		{ "pair --listen --serve --wait 5", "--wait is for --once" },
		{ "pair --listen --min-bw 0.5", "--min-bw is for the writer" },
		{ "pair --listen --retest 2", "--retest is for the writer" },
		{ "pair --listen --bidir", "--bidir is for the writer" },
		{ "pair 127.0.0.1 --bidir -l", "--bidir measures bandwidth in both directions: not with -l" },
		{ "pair host --retest 9", "--retest 9: out of range" },
		{ "pair host --min-bw fast", "--min-bw fast:" },
		{ "pair host --outlier 2", "--outlier 2: out of range" },
		{ "pair --listen --interval-drop 0.2", "--interval-drop is for the writer" },
		{ "pair host --interval-drop 1.5", "--interval-drop 1.5: out of range" },
		{ "pair host --interval-drop -0.1", "--interval-drop -0.1: out of range" },
		{ "pair host --interval-drop nan", "--interval-drop nan" },
		/* before, pair took a bandwidth rule in latency mode silently (loopback and matrix refuse it) */
		{ "pair 127.0.0.1 -l --min-bw 1G --wait 1", "latency mode (-l) measures none" },
		{ "pair 127.0.0.1 -l --outlier 0.3 --wait 1", "latency mode (-l) measures none" },
		{ "pair 127.0.0.1 -l --interval-drop 0.3 --wait 1", "latency mode (-l) measures none" },
	};
	char err[4096];

	(void)state;
	rp_test_bin();
	for (size_t i = 0; i < RP_ARRAY_SIZE(cases); i++) {
		int st = rp_test_run_bin(err, sizeof(err), "%s 2>&1 >/dev/null", cases[i].args);

		if (st != 2 || !strstr(err, cases[i].msg))
			fail_msg("rdmaprobe %s: exit %d, stderr '%s' (wanted 2 and '%s')", cases[i].args, st, err,
				 cases[i].msg);
	}
}

/* The token from the environment is checked the same way, and neither form is ever printed. */
static void test_token_env_not_echoed(void **state)
{
	char err[4096], cmd[1024];
	int st;

	(void)state;
	snprintf(cmd, sizeof(cmd), "RDMAPROBE_TOKEN=tiny7 '%s' pair --listen 2>&1 >/dev/null", rp_test_bin());
	st = rp_test_run(cmd, err, sizeof(err));
	assert_int_equal(st, 2);
	assert_non_null(strstr(err, "RDMAPROBE_TOKEN: the token must be 8 to 64 characters"));
	assert_null(strstr(err, "tiny7"));
	st = rp_test_run_bin(err, sizeof(err), "pair --listen --token 'secret with space' 2>&1 >/dev/null");
	assert_int_equal(st, 2);
	assert_null(strstr(err, "secret"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_token_env_not_echoed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
