/* test_atomic_file.c: the atomic file gathers its writes: a report handed over in thousands of small
 * pieces (as jansson's dump does, token by token) reaches the file in a few write(2) calls, whole and
 * in order. (Before: one write(2) per piece; on the test bed's 9p share a 13 KB report took a
 * minute to write, after every pair.) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/atomic_file.h"
#include "testutil.h"

static unsigned n_writes;

ssize_t __real_write(int fd, const void *buf, size_t len);
ssize_t __wrap_write(int fd, const void *buf, size_t len);

ssize_t __wrap_write(int fd, const void *buf, size_t len)
{
	n_writes++;
	return __real_write(fd, buf, len);
}

/* The whole content of path into a malloc'ed buffer; its length in *len. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1u << 20);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, 1u << 20, f);
	fclose(f);
	return buf;
}

static void test_small_pieces_gathered(void **state)
{
	char path[512], piece[8];
	struct rp_atomic_file af;
	size_t len, want = 0;
	char *got;

	(void)state;
	snprintf(path, sizeof(path), "%s/report.json", rp_test_tmpdir());
	assert_int_equal(rp_atomic_file_open(&af, path), 0);
	n_writes = 0;
	for (unsigned i = 0; i < 5000; i++) {
		snprintf(piece, sizeof(piece), "%04u,", i % 10000);
		rp_atomic_file_write(&af, piece, 5);
		want += 5;
	}
	assert_int_equal(rp_atomic_file_commit(&af), 0);
	/* 25,000 bytes in 16 KiB gathers: 2 writes (before: 5,000) */
	if (n_writes > 3)
		fail_msg("%u write(2) calls for 5000 pieces", n_writes);
	got = slurp(path, &len);
	assert_int_equal(len, want);
	for (unsigned i = 0; i < 5000; i++) {
		snprintf(piece, sizeof(piece), "%04u,", i);
		if (memcmp(got + 5 * i, piece, 5) != 0)
			fail_msg("piece %u out of place", i);
	}
	free(got);
}

/* A piece larger than the buffer, between small ones, keeps its place. */
static void test_large_piece_in_order(void **state)
{
	char path[512];
	struct rp_atomic_file af;
	size_t big = 3 * RP_ATOMIC_FILE_BUF + 7, len;
	char *blob = malloc(big), *got;

	(void)state;
	assert_non_null(blob);
	memset(blob, 'x', big);
	snprintf(path, sizeof(path), "%s/large.txt", rp_test_tmpdir());
	assert_int_equal(rp_atomic_file_open(&af, path), 0);
	rp_atomic_file_write(&af, "head", 4);
	rp_atomic_file_write(&af, blob, big);
	rp_atomic_file_write(&af, "tail", 4);
	assert_int_equal(rp_atomic_file_commit(&af), 0);
	got = slurp(path, &len);
	assert_int_equal(len, big + 8);
	assert_memory_equal(got, "head", 4);
	assert_memory_equal(got + 4, blob, big);
	assert_memory_equal(got + 4 + big, "tail", 4);
	free(got);
	free(blob);
}

/* A write error in the gathered data is still reported by commit, with the temporary removed. */
static void test_error_reported_at_commit(void **state)
{
	struct rp_atomic_file af;

	(void)state;
	/* /dev/full is refused as a target; write through standard output redirected to it instead */
	int saved = dup(STDOUT_FILENO);
	FILE *full = freopen("/dev/full", "w", stdout);

	assert_non_null(full);
	assert_int_equal(rp_atomic_file_open(&af, "-"), 0);
	rp_atomic_file_write(&af, "some bytes", 10);
	assert_int_equal(rp_atomic_file_commit(&af), -ENOSPC);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_small_pieces_gathered, rp_test_tmpdir_setup, rp_test_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_large_piece_in_order, rp_test_tmpdir_setup, rp_test_tmpdir_teardown),
		cmocka_unit_test(test_error_reported_at_commit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
