/* test_cmd_loopback.c: 'rdmaprobe loopback' takes the verdict options every command shares, checked
 * before any device is touched (so no RDMA device is needed here). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "testutil.h"

static char out[1 << 16];

static int loopback(const char *args)
{
	return rp_test_run_bin(out, sizeof(out), "loopback %s 2>&1", args);
}

/* Before, loopback had no --min-bw, --outlier, --retest or --interval-drop at all. */
static void test_verdict_options_in_help(void **state)
{
	(void)state;
	assert_int_equal(loopback("--help"), 0);
	assert_non_null(strstr(out, "--min-bw X"));
	assert_non_null(strstr(out, "--outlier F"));
	assert_non_null(strstr(out, "--retest N"));
	assert_non_null(strstr(out, "--interval-drop F"));
	assert_non_null(strstr(out, "130/143"));
}

/* The same checks and messages as the matrix's. */
static void test_verdict_option_errors(void **state)
{
	(void)state;
	assert_int_equal(loopback("--min-bw 180"), 2);
	assert_non_null(strstr(out, "--min-bw 180: a fraction of the link rate (0.9 or 90%) or Gb/s with a unit (180G)"));
	assert_int_equal(loopback("--outlier 2"), 2);
	assert_non_null(strstr(out, "--outlier"));
	assert_int_equal(loopback("--retest 4"), 2);
	assert_non_null(strstr(out, "--retest 4: out of range (0 to 3)"));
	assert_int_equal(loopback("--interval-drop 1.5"), 2);
	assert_non_null(strstr(out, "--interval-drop"));
	/* latency mode measures no bandwidth: a bandwidth rule given with -l is a usage error */
	assert_int_equal(loopback("-l --min-bw 1G"), 2);
	assert_non_null(strstr(out, "latency mode (-l) measures none"));
	assert_int_equal(loopback("-l --interval-drop 0.2"), 2);
	assert_non_null(strstr(out, "latency mode (-l) measures none"));
}

/* Issue 10: loopback's default -d is NCCL's selection, so it takes the release as nccl does
 * (engine_cli.c's shared table; pair and matrix get it there too). Failed before: "unknown option". */
static void test_nccl_version_option(void **state)
{
	(void)state;
	assert_int_equal(loopback("--help"), 0);
	assert_non_null(strstr(out, "--nccl-version X.Y.Z"));
	assert_non_null(strstr(out, "--python ENV"));
	assert_int_equal(loopback("--nccl-version 2.17.3"), 2);
	assert_non_null(strstr(out, "--nccl-version 2.17.3: older than the oldest release modelled (2.18.1)"));
	assert_int_equal(loopback("--nccl-version 2.x"), 2);
	assert_non_null(strstr(out, "--nccl-version 2.x: not a version X.Y.Z"));
}

/* --prom and --baseline: checked like --json before any device is touched. Before, loopback had
 * neither (an unknown option: exit 2, but without these messages). */
static void test_ops_options(void **state)
{
	(void)state;
	assert_int_equal(loopback("--help"), 0);
	assert_non_null(strstr(out, "--prom FILE"));
	assert_non_null(strstr(out, "--baseline FILE"));
	assert_non_null(strstr(out, "--drop X"));
	assert_int_equal(loopback("--prom /dev/null"), 2);
	assert_non_null(strstr(out, "--prom /dev/null: cannot write the metrics there; nothing was measured"));
	assert_int_equal(loopback("--prom /nonexistent-dir/x.prom"), 2);
	assert_non_null(strstr(out, "--prom /nonexistent-dir/x.prom: cannot write"));
	assert_int_equal(loopback("--baseline /nonexistent-dir/base.json"), 2);
	assert_non_null(strstr(out, "--baseline /nonexistent-dir/base.json: not a report to compare with"));
	assert_int_equal(loopback("--drop 10%"), 2);
	assert_non_null(strstr(out, "--drop goes with --baseline FILE"));
	assert_int_equal(loopback("--baseline /dev/null --drop 150%"), 2);
	assert_non_null(strstr(out, "--drop 150%: a percentage (10%) or a fraction (0.1) below 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_options_in_help),
		cmocka_unit_test(test_verdict_option_errors),
		cmocka_unit_test(test_nccl_version_option),
		cmocka_unit_test(test_ops_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
