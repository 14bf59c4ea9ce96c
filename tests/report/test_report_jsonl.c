/* test_report_jsonl.c: the JSON Lines stream (lib/report/report_jsonl.h): one parseable line per pair,
 * whatever a peer's strings hold; a run that dies keeps every line written before (no end line);
 * a write error is returned, sticks, and writes nothing more; bad paths are refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/log.h"
#include "report/report_jsonl.h"
#include "testutil.h"

static const struct rp_report_info info = { .command = "matrix", .version = "9.9-test" };

static void pair(struct rp_pair_result *r, const char *src, const char *dst, bool ok)
{
	struct rp_endpoint a = { .port = 1 }, b = { .port = 1 };

	snprintf(a.node, sizeof(a.node), "n1");
	snprintf(a.device, sizeof(a.device), "%s", src);
	snprintf(b.node, sizeof(b.node), "n2");
	snprintf(b.device, sizeof(b.device), "%s", dst);
	rp_pair_result_init(r, &a, &b);
	if (ok) {
		r->status = RP_ST_OK;
		r->gbps = 97.5;
		r->verified = true;
	} else {
		/* what a peer may send: a newline, a quote and a byte that is not UTF-8 */
		rp_pair_result_fail(r, RP_ST_TIMEOUT, "no completion\nfor 2.0 s \"x\" \xff");
	}
}

/* The file's lines parsed; n_p gets their count. The caller frees each and the array. */
static json_t **read_lines(const char *path, size_t *n_p)
{
	json_t **lines = calloc(64, sizeof(*lines));
	char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	assert_non_null(f);
	while (fgets(buf, sizeof(buf), f)) {
		json_error_t e;

		assert_true(strlen(buf) > 0 && buf[strlen(buf) - 1] == '\n');   /* whole lines only */
		assert_true(n < 64);
		lines[n] = json_loads(buf, 0, &e);
		if (!lines[n])
			fail_msg("line %zu is not JSON (%s): %s", n + 1, e.text, buf);
		n++;
	}
	fclose(f);
	*n_p = n;
	return lines;
}

static void free_lines(json_t **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(l[i]);
	free(l);
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void test_stream_and_end(void **state)
{
	struct rp_pair_result r[3];
	struct rp_jsonl j;
	char path[512];
	json_t **l;
	size_t n;

	(void)state;
	snprintf(path, sizeof(path), "%s/pairs.jsonl", rp_test_tmpdir());
	pair(&r[0], "mlx5_0", "mlx5_1", true);
	pair(&r[1], "mlx5_1", "mlx5_0", false);
	pair(&r[2], "mlx5_2", "mlx5_3", true);
	assert_int_equal(rp_jsonl_open(&j, path, &info, false), 0);
	assert_int_equal(rp_jsonl_pairs(&j, r, 2, 1, false), 0);
	assert_int_equal(rp_jsonl_pairs(&j, r + 2, 1, 2, true), 0);
	assert_int_equal(rp_jsonl_close(&j, true), 0);
	l = read_lines(path, &n);
	assert_int_equal(n, 5);
	assert_string_equal(str(l[0], "record"), "run");
	assert_string_equal(str(l[0], "command"), "matrix");
	assert_string_equal(str(l[0], "version"), "9.9-test");
	assert_true(json_is_false(json_object_get(l[0], "simulated")));
	assert_string_equal(str(l[1], "record"), "pair");
	assert_int_equal(json_integer_value(json_object_get(l[1], "round")), 1);
	assert_string_equal(str(l[1], "status"), "ok");
	assert_string_equal(str(json_object_get(l[1], "src"), "device"), "mlx5_0");
	assert_string_equal(str(l[2], "status"), "timed_out");
	assert_non_null(strstr(str(l[2], "reason"), "\"x\""));   /* the peer's text, escaped, in one line */
	assert_true(json_is_true(json_object_get(l[3], "retest")));
	assert_int_equal(json_integer_value(json_object_get(l[3], "round")), 2);
	assert_string_equal(str(l[4], "record"), "end");
	assert_int_equal(json_integer_value(json_object_get(l[4], "pairs")), 3);
	assert_true(json_is_true(json_object_get(l[4], "complete")));
	free_lines(l, n);
}

/* A rank 0 that dies mid-run (here: _exit without closing) leaves every line it wrote. */
static void test_crash_keeps_lines(void **state)
{
	struct rp_pair_result r[2];
	char path[512];
	json_t **l;
	size_t n;
	pid_t pid;
	int st;

	(void)state;
	snprintf(path, sizeof(path), "%s/crash.jsonl", rp_test_tmpdir());
	pair(&r[0], "mlx5_0", "mlx5_1", true);
	pair(&r[1], "mlx5_1", "mlx5_0", true);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rp_jsonl j;

		if (rp_jsonl_open(&j, path, &info, true) || rp_jsonl_pairs(&j, r, 2, 1, false))
			_exit(1);
		_exit(0);   /* no close: no end line, nothing flushed by exit handlers */
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	l = read_lines(path, &n);
	assert_int_equal(n, 3);
	assert_true(json_is_true(json_object_get(l[0], "simulated")));
	assert_string_equal(str(l[2], "record"), "pair");   /* the last line is a pair: no end, cut off */
	free_lines(l, n);
}

static int errors;

static void count(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)msg;
	(void)ctx;
	errors += level == RP_LOG_ERROR;
}

static void test_write_error_sticks(void **state)
{
	struct rp_pair_result r[1];
	struct rp_jsonl j;
	char path[512];
	int ro;

	(void)state;
	snprintf(path, sizeof(path), "%s/err.jsonl", rp_test_tmpdir());
	pair(&r[0], "mlx5_0", "mlx5_1", true);
	assert_int_equal(rp_jsonl_open(&j, path, &info, false), 0);
	ro = open(path, O_RDONLY);           /* the file's descriptor now refuses writes */
	assert_true(ro >= 0);
	assert_true(dup2(ro, j.fd) == j.fd);
	close(ro);
	errors = 0;
	rp_log_set_sink(count, NULL);
	assert_int_equal(rp_jsonl_pairs(&j, r, 1, 1, false), -EBADF);
	assert_int_equal(rp_jsonl_pairs(&j, r, 1, 2, false), -EBADF);   /* sticks */
	assert_int_equal(rp_jsonl_close(&j, true), -EBADF);
	rp_log_set_sink(NULL, NULL);
	assert_int_equal(errors, 1);                                    /* logged once */
	assert_int_equal(j.pairs, 0);
}

static void test_bad_paths(void **state)
{
	struct rp_jsonl j;

	(void)state;
	errors = 0;
	rp_log_set_sink(count, NULL);
	assert_int_equal(rp_jsonl_open(&j, "-", &info, false), -EINVAL);
	assert_int_equal(rp_jsonl_open(&j, "", &info, false), -EINVAL);
	assert_true(rp_jsonl_open(&j, rp_test_tmpdir(), &info, false) < 0);   /* a directory */
	assert_true(rp_jsonl_open(&j, "/nonexistent-dir/x.jsonl", &info, false) < 0);
	assert_int_equal(j.fd, -1);
	rp_log_set_sink(NULL, NULL);
	assert_int_equal(errors, 4);   /* each refusal says why */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_and_end),
		cmocka_unit_test(test_crash_keeps_lines),
		cmocka_unit_test(test_write_error_sticks),
		cmocka_unit_test(test_bad_paths),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
