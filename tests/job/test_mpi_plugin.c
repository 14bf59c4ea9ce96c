/* test_mpi_plugin.c: MPI is a plugin (lib/job/mpi_plugin.h): the binary does not link libmpi (readelf),
 * a copy of the binary with no plugin next to it (and none installed where it would look) runs
 * --version, devices, nccl and loopback (their help and --plan of matrix), and `matrix` under a
 * launcher then exits 3 naming where it looked and what to install; a plugin named by
 * RDMAPROBE_MPI_PLUGIN that does not exist or is not loadable is exit 3 with that file named. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testutil.h"

static char out[16384];
static char lone[PATH_MAX];       /* the copied binary, alone in its directory */

static int copy_setup(void **state)
{
	char cmd[2 * PATH_MAX + 64];

	if (rp_test_tmpdir_setup(state) != 0)
		return -1;
	if (!getenv("RP_TEST_BIN"))
		return 0;
	snprintf(lone, sizeof(lone), "%s/alone/rdmaprobe", rp_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/alone' && cp '%s' '%s'", rp_test_tmpdir(), getenv("RP_TEST_BIN"), lone);
	return system(cmd) == 0 ? 0 : -1;
}

/* Run the lone copy with ARGS (and an environment prefix); output (both streams) in out. */
static int lone_run(const char *env, const char *args)
{
	char cmd[PATH_MAX + 1024];

	if (!lone[0]) {
		fprintf(stderr, "SKIP: RP_TEST_BIN is not set\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd), "env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_RANK -u PMI_SIZE -u MPI_LOCALNRANKS "
		 "-u SLURM_PROCID -u RDMAPROBE_MPI_PLUGIN %s '%s' %s 2>&1", env, lone, args);
	return rp_test_run(cmd, out, sizeof(out));
}

static void test_binary_does_not_link_mpi(void **state)
{
	char cmd[PATH_MAX + 64];

	(void)state;
	if (system("command -v readelf >/dev/null 2>&1") != 0) {
		fprintf(stderr, "SKIP: readelf is not installed (binutils)\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd), "readelf -d '%s'", rp_test_bin());
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "libibverbs"));   /* the listing is there */
	if (strstr(out, "libmpi"))
		fail_msg("the binary links MPI:\n%s", out);
}

static void test_commands_run_without_the_plugin(void **state)
{
	(void)state;
	assert_int_equal(lone_run("", "--version"), 0);
	assert_int_equal(lone_run("", "devices --help"), 0);
	assert_int_equal(lone_run("", "nccl --help"), 0);
	assert_int_equal(lone_run("", "loopback --help"), 0);
	assert_int_equal(lone_run("", "matrix --plan --nodes 2 --hcas 2"), 0);
	assert_non_null(strstr(out, "rounds: 3"));
}

static void test_matrix_without_the_plugin(void **state)
{
	(void)state;
	if (lone_run("", "--version") != 0 || !strstr(out, "mpi")) {
		fprintf(stderr, "SKIP: built without MPI: there is no plugin to miss\n");
		skip();
	}
	assert_int_equal(lone_run("OMPI_COMM_WORLD_SIZE=1", "matrix -d =rxe0"), 3);
	assert_non_null(strstr(out, "MPI cannot be loaded"));
	assert_non_null(strstr(out, "/alone/rdmaprobe-mpi.so"));
	assert_non_null(strstr(out, "RDMAPROBE_MPI_PLUGIN"));
	assert_int_equal(lone_run("OMPI_COMM_WORLD_SIZE=1 RDMAPROBE_MPI_PLUGIN=/nonexistent/p.so", "matrix -d =rxe0"), 3);
	assert_non_null(strstr(out, "/nonexistent/p.so does not exist"));
	{
		char env[PATH_MAX + 64];

		snprintf(env, sizeof(env), "OMPI_COMM_WORLD_SIZE=1 RDMAPROBE_MPI_PLUGIN='%s'", lone);   /* not a library */
		assert_int_equal(lone_run(env, "matrix -d =rxe0"), 3);
	}
	assert_non_null(strstr(out, "cannot be loaded"));
	{
		/* Issue 26 item 12: a name without '/' in a directory that holds it: dlopen looks in the
		 * library path, not here, so the error is dlopen's with that said, never "does not exist"
		 * (which it claimed, having checked the working directory) */
		char cmd[3 * PATH_MAX + 256], dir[PATH_MAX];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", rp_test_bin());
		slash = strrchr(dir, '/');
		assert_non_null(slash);
		*slash = '\0';
		snprintf(cmd, sizeof(cmd), "cd '%s' && test -e rdmaprobe-mpi.so && env -u LD_LIBRARY_PATH -u PMIX_RANK "
			 "-u PMI_RANK OMPI_COMM_WORLD_SIZE=1 RDMAPROBE_MPI_PLUGIN=rdmaprobe-mpi.so '%s' matrix -d =rxe0 2>&1",
			 dir, lone);
		assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 3);
		assert_null(strstr(out, "does not exist"));
		assert_non_null(strstr(out, "rdmaprobe-mpi.so cannot be loaded: "));
		assert_non_null(strstr(out, "dlopen looks for it in the library path"));
		assert_non_null(strstr(out, "give ./rdmaprobe-mpi.so)"));
		/* and where dlopen does look (LD_LIBRARY_PATH), from a directory without it: loaded (it was
		 * "rdmaprobe-mpi.so does not exist"); a singleton start then finds one endpoint to pair */
		snprintf(cmd, sizeof(cmd), "cd '%s' && env -u PMIX_RANK -u PMI_RANK OMPI_COMM_WORLD_SIZE=1 "
			 "LD_LIBRARY_PATH='%s' RDMAPROBE_MPI_PLUGIN=rdmaprobe-mpi.so timeout 60 '%s' matrix -d =rxe0 2>&1",
			 rp_test_tmpdir(), dir, lone);
		rp_test_run(cmd, out, sizeof(out));
		assert_null(strstr(out, "MPI cannot be loaded"));
		assert_non_null(strstr(out, "nothing to pair"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binary_does_not_link_mpi),
		cmocka_unit_test(test_commands_run_without_the_plugin),
		cmocka_unit_test(test_matrix_without_the_plugin),
	};

	return cmocka_run_group_tests(tests, copy_setup, rp_test_tmpdir_teardown);
}
