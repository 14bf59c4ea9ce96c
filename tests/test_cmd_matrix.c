/* test_cmd_matrix.c: the matrix front end as a user meets it without hardware or MPI: --plan answers
 * with the schedule's numbers, bad options exit 2 with a message, a run outside a launcher exits 3
 * and says how to start it. Runs the built binary (RP_TEST_BIN). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mx_view.h"
#include "testutil.h"

static char out[1 << 16];

/* Run "rdmaprobe matrix ARGS" with a clean launcher environment; returns the exit status. */
static int matrix(const char *args)
{
	const char *bin = rp_test_bin();
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_RANK -u PMI_SIZE -u MPI_LOCALNRANKS -u SLURM_PROCID "
		 "'%s' matrix %s 2>&1", bin, args);
	return rp_test_run(cmd, out, sizeof(out));
}

static void test_plan_full_small(void **state)
{
	(void)state;
	assert_int_equal(matrix("--plan --nodes 5 --hcas 1 -s 4K -n 10 --rate 100"), 0);
	assert_non_null(strstr(out, "rounds: 5; pairs: 10 "));
	assert_non_null(strstr(out, "at most 2 pairs per round"));
	assert_int_equal(mx_count(out, "  round "), 5);
	assert_non_null(strstr(out, "estimated time: "));
}

static void test_plan_rail_1024x8(void **state)
{
	(void)state;
	assert_int_equal(matrix("--plan --nodes 1024 --hcas 8 --pattern rail"), 0);
	assert_non_null(strstr(out, "8192 endpoints on 1024 nodes"));
	assert_non_null(strstr(out, "rounds: 1023; pairs: 4190208 "));
	assert_non_null(strstr(out, "at most 4096 pairs per round"));
}

static void test_plan_sample_is_seeded(void **state)
{
	static char first[sizeof(out)];

	(void)state;
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --pattern sample:3 --seed 9"), 0);
	memcpy(first, out, sizeof(out));
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --pattern sample:3 --seed 9"), 0);
	assert_string_equal(out, first);
	assert_int_equal(matrix("--plan --nodes 8 --hcas 1 --pattern sample:3 --seed 10"), 0);
	assert_string_not_equal(out, first);
	assert_int_equal(matrix("--plan --nodes 4 --hcas 1 --pattern sample:4"), 2);
	assert_non_null(strstr(out, "sample:4"));
}

static void test_usage_errors(void **state)
{
	(void)state;
	assert_int_equal(matrix("--pattern ring"), 2);
	assert_non_null(strstr(out, "--pattern ring"));
	assert_int_equal(matrix("--min-bw 180"), 2);
	assert_non_null(strstr(out, "180G"));
	assert_int_equal(matrix("--nodes 4"), 2);
	assert_non_null(strstr(out, "--plan only"));
	assert_int_equal(matrix("--plan --rate 100"), 2);
	assert_int_equal(matrix("--plan --hcas 0"), 2);
	assert_int_equal(matrix("-a"), 2);
	assert_int_equal(matrix("--outlier 2"), 2);
	assert_int_equal(matrix("--retest 4"), 2);
	assert_non_null(strstr(out, "--retest"));
	assert_int_equal(matrix("--help"), 0);
	assert_non_null(strstr(out, "--per-gpu"));
	/* retest rounds and the interrupted exit status are part of the interface */
	assert_non_null(strstr(out, "--retest"));
	assert_non_null(strstr(out, "128+signal"));
}

static void test_needs_a_launcher(void **state)
{
	(void)state;
	assert_int_equal(matrix("-d rxe0"), 3);
	assert_true(strstr(out, "mpirun") != NULL || strstr(out, "without MPI") != NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_full_small),
		cmocka_unit_test(test_plan_rail_1024x8),
		cmocka_unit_test(test_plan_sample_is_seeded),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_needs_a_launcher),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
