/* test_report.c: the JSON and CSV reports: every field of a pair (the verdict's too: first cause,
 * secondary view, warnings, retests), run info, atomic writes that follow no planted symlink and
 * replace nothing but a regular file, "-" for standard output, and what a hostile peer can put in a
 * result (invalid UTF-8, NaN, a field without its NUL) written, not fatal. */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/log.h"
#include "base/atomic_file.h"
#include "health/counters.h"
#include "report/report.h"
#include "testutil.h"
#include "base/util.h"

static char last_error[1024];

static void capture_log(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == RP_LOG_ERROR)
		snprintf(last_error, sizeof(last_error), "%s", msg);
}

/* The whole content of path into buf (NUL-terminated); its length, or -1. */
static ssize_t slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static void two_pairs(struct rp_pair_result r[2])
{
	struct rp_endpoint a = { .node = "n1", .device = "rxe0", .port = 1, .gid_index = 1, .mtu = 1024,
				 .link_gbps = 10, .mem = "host", .mem_reg = "host" };
	struct rp_endpoint b = a;

	rp_strlcpy(b.device, "rxe3", sizeof(b.device));
	rp_pair_result_init(&r[0], &a, &a);
	r[0].status = RP_ST_OK;
	r[0].gbps = 0.25;
	r[0].gbps_min = 0.125;
	r[0].bytes = 4096000;
	r[0].iters = 1000;
	r[0].msg_size = 4096;
	r[0].verified = true;
	r[0].lat.measured = true;
	r[0].lat.min_us = 20;
	r[0].lat.median_us = 25;
	r[0].lat.p99_us = 40;
	r[0].lat.max_us = 90;
	r[0].lat.samples = 1000;
	r[0].elapsed_s = 1.5;
	rp_pair_result_init(&r[1], &a, &b);
	rp_pair_result_fail(&r[1], RP_ST_RESOLVE, "modify qp 0x11 to RTR, \"address\" resolution: Connection timed out");
}

static void test_json(void **state)
{
	struct rp_pair_result r[2];
	struct rp_engine_cfg cfg;
	char *argv[] = { "rdmaprobe", "loopback", "-d", "rxe0, rxe1" };
	struct rp_report_info info = { .command = "loopback", .version = "rdmaprobe test", .argc = 4, .argv = argv,
				       .cfg = &cfg };
	char path[] = "/tmp/rp_report_XXXXXX";
	json_t *root, *back, *p;
	json_error_t jerr;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	rp_engine_cfg_default(&cfg);
	two_pairs(r);
	root = rp_report_json(&info, r, 2);
	assert_non_null(root);
	/* the matrix front end adds its own sections before writing */
	assert_int_equal(json_object_set_new(root, "nodes", json_array()), 0);
	assert_int_equal(rp_report_write_json(root, path), 0);
	json_decref(root);
	back = json_load_file(path, 0, &jerr);
	assert_non_null(back);
	assert_int_equal(json_integer_value(json_object_get(back, "schema")), RP_REPORT_SCHEMA);
	assert_string_equal(json_string_value(json_object_get(back, "command_line")), "rdmaprobe loopback -d 'rxe0, rxe1'");
	assert_string_equal(json_string_value(json_object_get(back, "version")), "rdmaprobe test");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(back, "config"), "msg_size")), 65536);
	assert_non_null(json_object_get(back, "nodes"));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(back, "summary"), "failed")), 1);
	assert_int_equal(json_array_size(json_object_get(back, "pairs")), 2);
	p = json_array_get(json_object_get(back, "pairs"), 0);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "ok");
	assert_string_equal(json_string_value(json_object_get(json_object_get(p, "src"), "node")), "n1");
	assert_string_equal(json_string_value(json_object_get(json_object_get(p, "dst"), "device")), "rxe0");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "src"), "port")), 1);
	assert_float_equal(json_real_value(json_object_get(p, "gbps")), 0.25, 1e-9);
	assert_float_equal(json_real_value(json_object_get(p, "gbps_min")), 0.125, 1e-9);
	assert_true(json_is_true(json_object_get(p, "verified")));
	assert_int_equal(json_integer_value(json_object_get(p, "bytes")), 4096000);
	assert_float_equal(json_real_value(json_object_get(json_object_get(p, "latency"), "p99_us")), 40, 1e-9);
	p = json_array_get(json_object_get(back, "pairs"), 1);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "resolve_failed");
	assert_non_null(strstr(json_string_value(json_object_get(p, "reason")), "Connection timed out"));
	assert_int_equal(json_integer_value(json_object_get(p, "bad_offset")), -1);
	assert_true(json_is_false(json_object_get(p, "verified")));
	json_decref(back);
	unlink(path);
}

/* A pair's port counters in JSON: "counters": {"src": {moved, verdict, reason...}, "dst": null when
 * that side was not measured}, and the lossy/mtu_mismatch codes in JSON warnings and the CSV. Fails
 * before the counters were reported (no "counters" key, no such warning codes). */
static void test_counters_and_new_warnings(void **state)
{
	struct rp_pair_result r[2];
	struct rp_engine_cfg cfg;
	char *argv[] = { "rdmaprobe", "loopback" };
	struct rp_report_info info = { .command = "loopback", .version = "t", .argc = 2, .argv = argv, .cfg = &cfg };
	char path[] = "/tmp/rp_report_XXXXXX", buf[8192];
	json_t *root, *p, *src, *w;
	int fd = mkstemp(path);
	struct rp_pair_ctr_side *sd;

	(void)state;
	close(fd);
	rp_engine_cfg_default(&cfg);
	two_pairs(r);
	sd = &r[0].counters.src;
	sd->measured = 1;
	sd->verdict = RP_CV_LOSSY;
	sd->cls = RP_CC_RETRANS;
	sd->n_moved = sd->n = 2;
	strcpy(sd->c[0].name, "completer_retry_err");
	sd->c[0].cls = RP_CC_RETRANS;
	sd->c[0].delta = 37;
	strcpy(sd->c[1].name, "link_downed");
	sd->c[1].cls = RP_CC_FLAP;
	sd->c[1].delta = 255;
	sd->c[1].at_least = 1;
	strcpy(sd->reason, "retransmissions 37/GB above 10/GB: completer_retry_err +37");
	r[0].warnings = (1u << RP_WARN_LOSSY) | (1u << RP_WARN_MTU_MISMATCH);
	root = rp_report_json(&info, r, 2);
	assert_non_null(root);
	p = json_array_get(json_object_get(root, "pairs"), 0);
	src = json_object_get(json_object_get(p, "counters"), "src");
	assert_non_null(src);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(src, "moved"), "completer_retry_err")), 37);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(src, "at_least"), "link_downed")), 255);
	assert_string_equal(json_string_value(json_object_get(src, "verdict")), "lossy");
	assert_non_null(strstr(json_string_value(json_object_get(src, "reason")), "37/GB"));
	assert_true(json_is_null(json_object_get(json_object_get(p, "counters"), "dst")));
	w = json_object_get(p, "warnings");
	assert_int_equal(json_array_size(w), 2);
	assert_string_equal(json_string_value(json_array_get(w, 0)), "lossy");
	assert_string_equal(json_string_value(json_array_get(w, 1)), "mtu_mismatch");
	json_decref(root);
	assert_int_equal(rp_report_write_csv(r, 2, path), 0);
	assert_true(slurp(path, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "lossy;mtu_mismatch"));
	unlink(path);
}

static void test_csv(void **state)
{
	struct rp_pair_result r[2];
	char path[] = "/tmp/rp_report_XXXXXX", line[2048];
	int fd = mkstemp(path), lines = 0;
	FILE *f;

	(void)state;
	close(fd);
	two_pairs(r);
	assert_int_equal(rp_report_write_csv(r, 2, path), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (lines == 0)
			assert_true(strncmp(line, "src_node,src_device,src_port,", 29) == 0);
		if (lines == 1)
			assert_non_null(strstr(line, ",ok,0.250000,0.125000,4096000,1000,4096,true,-1,20.000,25.000,40.000,90.000,1000,"));
		if (lines == 2)   /* a reason with a comma and quotes is quoted, quotes doubled */
			assert_non_null(strstr(line, ",\"modify qp 0x11 to RTR, \"\"address\"\" resolution: Connection timed out\","));
		lines++;
	}
	fclose(f);
	assert_int_equal(lines, 3);
	unlink(path);
}

/* A write that cannot complete leaves the old file as it was and no temporary behind. */
static void test_atomic(void **state)
{
	char dir[] = "/tmp/rp_report_dirXXXXXX", path[256], tmp[300];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	assert_int_equal(rp_report_write_text("old\n", 4, path), 0);
	/* a rename onto a directory fails: the old content stays */
	snprintf(tmp, sizeof(tmp), "%s/d", dir);
	assert_int_equal(mkdir(tmp, 0700), 0);
	assert_true(rp_report_write_text("new\n", 4, tmp) < 0);
	snprintf(tmp, sizeof(tmp), "%s/d.tmp.%ld", dir, (long)getpid());
	assert_int_equal(stat(tmp, &st), -1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 4);
	snprintf(tmp, sizeof(tmp), "%s/d", dir);
	rmdir(tmp);
	assert_true(rp_report_write_text("x", 1, "/nonexistent-dir/r.json") < 0);
	unlink(path);
	rmdir(dir);
}

/* A symlink planted at the temporary's name is neither followed nor replaced: the file it points to
 * keeps its content, and the report lands whole at its path. (The old writer opened
 * "<path>.tmp.<pid>" with fopen "w": it wrote the report into the victim.) */
static void test_planted_tmp_symlink_not_followed(void **state)
{
	char path[512], tmp[600], victim[512], buf[64];
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "%s/planted.json", rp_test_tmpdir());
	snprintf(victim, sizeof(victim), "%s/victim", rp_test_tmpdir());
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	assert_int_equal(rp_atomic_write(victim, "precious\n", 9), 0);
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(rp_report_write_text("report\n", 7, path), 0);
	assert_int_equal(slurp(victim, buf, sizeof(buf)), 9);
	assert_string_equal(buf, "precious\n");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(slurp(path, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "report\n");
	assert_int_equal(lstat(tmp, &st), 0);   /* not ours: left where it was */
	assert_true(S_ISLNK(st.st_mode));
	/* and the JSON writer the same way */
	json_t *root = json_pack("{s:i}", "schema", 1);

	assert_int_equal(rp_report_write_json(root, path), 0);
	json_decref(root);
	assert_string_equal((slurp(victim, buf, sizeof(buf)), buf), "precious\n");
	unlink(tmp);
	unlink(victim);
	unlink(path);
}

/* A directory, a FIFO and a symlink as targets: an error naming the path and what it is, and the
 * target left as it was (the old writer renamed its temporary over the FIFO and the symlink). */
static void test_refuses_what_is_not_a_regular_file(void **state)
{
	char dir[512], fifo[512], link[512], victim[512], buf[64];
	struct rp_pair_result r[2];
	struct stat st;
	json_t *root = json_pack("{s:i}", "schema", 1);

	(void)state;
	two_pairs(r);
	snprintf(dir, sizeof(dir), "%s/adir", rp_test_tmpdir());
	snprintf(fifo, sizeof(fifo), "%s/afifo", rp_test_tmpdir());
	snprintf(link, sizeof(link), "%s/alink", rp_test_tmpdir());
	snprintf(victim, sizeof(victim), "%s/linked", rp_test_tmpdir());
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(rp_atomic_write(victim, "linked\n", 7), 0);
	assert_int_equal(symlink(victim, link), 0);
	rp_log_set_sink(capture_log, NULL);
	assert_int_equal(rp_report_path_check(dir), -EISDIR);
	assert_non_null(strstr(last_error, dir));
	assert_non_null(strstr(last_error, "is a directory"));
	assert_int_equal(rp_report_write_json(root, dir), -EISDIR);
	assert_int_equal(rp_report_path_check(fifo), -EINVAL);
	assert_non_null(strstr(last_error, "is a FIFO"));
	assert_int_equal(rp_report_write_csv(r, 2, fifo), -EINVAL);
	assert_int_equal(rp_report_write_text("x", 1, fifo), -EINVAL);
	assert_int_equal(rp_report_path_check(link), -ELOOP);
	assert_non_null(strstr(last_error, "is a symbolic link"));
	assert_int_equal(rp_report_write_json(root, link), -ELOOP);
	assert_int_equal(rp_report_path_check(""), -EINVAL);
	assert_int_equal(rp_report_path_check("/nonexistent-dir/r.json"), -ENOENT);
	assert_non_null(strstr(last_error, "/nonexistent-dir"));
	rp_log_set_sink(NULL, NULL);
	assert_int_equal(lstat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(slurp(victim, buf, sizeof(buf)), 7);
	/* a regular file, and a new name in a writable directory, are fine */
	assert_int_equal(rp_report_path_check(victim), 0);
	assert_int_equal(rp_report_path_check("-"), 0);
	json_decref(root);
	rmdir(dir);
	unlink(fifo);
	unlink(link);
	unlink(victim);
}

/* /dev/full is a device: refused by the check, so the writer never renames anything over it. (The old
 * writer "succeeded" and, run as root, replaced /dev/full with a regular file.) */
static void test_dev_full_refused(void **state)
{
	struct stat st;

	(void)state;
	if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
		fail_msg("/dev/full is not a character device on this host: the test needs it");
	rp_log_set_sink(capture_log, NULL);
	/* the check first: if it ever let /dev/full through, the write below is never reached */
	assert_int_equal(rp_report_path_check("/dev/full"), -EINVAL);
	assert_non_null(strstr(last_error, "/dev/full: is a character device"));
	assert_int_equal(rp_report_write_text("x", 1, "/dev/full"), -EINVAL);
	rp_log_set_sink(NULL, NULL);
	assert_int_equal(stat("/dev/full", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

/* Point standard output at fd for the duration of fn(arg); returns fn's result. */
static int with_stdout(int fd, int (*fn)(const void *), const void *arg)
{
	int saved = dup(STDOUT_FILENO), rc;

	assert_true(saved >= 0);
	fflush(stdout);
	assert_true(dup2(fd, STDOUT_FILENO) >= 0);
	rc = fn(arg);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	return rc;
}

static int write_json_dash(const void *root)
{
	return rp_report_write_json(root, "-");
}

/* "-" is standard output, not a file named "-"; and a write that fails says why (a full device:
 * ENOSPC, in the message too), not a generic I/O error. */
static void test_dash_is_stdout_and_errors_name_the_cause(void **state)
{
	char path[512], buf[256];
	json_t *root = json_pack("{s:i, s:s}", "schema", 1, "tool", "rdmaprobe"), *back;
	json_error_t jerr;
	struct stat st;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/stdout.json", rp_test_tmpdir());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(chdir(rp_test_tmpdir()), 0);
	assert_int_equal(with_stdout(fd, write_json_dash, root), 0);
	close(fd);
	assert_int_equal(stat("-", &st), -1);   /* no file named "-" */
	back = json_load_file(path, 0, &jerr);
	assert_non_null(back);
	assert_string_equal(json_string_value(json_object_get(back, "tool")), "rdmaprobe");
	json_decref(back);
	fd = open("/dev/full", O_WRONLY);
	assert_true(fd >= 0);
	rp_log_set_sink(capture_log, NULL);
	assert_int_equal(with_stdout(fd, write_json_dash, root), -ENOSPC);
	rp_log_set_sink(NULL, NULL);
	close(fd);
	snprintf(buf, sizeof(buf), "%s", strerror(ENOSPC));
	assert_non_null(strstr(last_error, buf));
	json_decref(root);
	unlink(path);
}

/* Make *r (one of two_pairs()) a pair as a hostile or broken peer could leave it. */
static void hostile_pair(struct rp_pair_result *r)
{
	snprintf(r->src.node, sizeof(r->src.node), "n\xff" "1");               /* a stray byte */
	snprintf(r->src.device, sizeof(r->src.device), "rxe\xc3");             /* cut mid-character */
	snprintf(r->reason, sizeof(r->reason), "bad \xed\xa0\x80 surrogate");  /* UTF-16 surrogate */
	memset(r->dst.node, 'a', sizeof(r->dst.node));                         /* no NUL at all */
	r->gbps = NAN;
	r->gbps_min = INFINITY;
	r->src.link_gbps = -NAN;
	r->lat.median_us = NAN;
	r->n_attempts = 99;                                                    /* past the array */
	r->attempts[0].gbps = NAN;
	snprintf(r->attempts[0].reason, sizeof(r->attempts[0].reason), "\x80\x80");
	r->confirm = (enum rp_confirm)77;
	r->cause_side = (enum rp_side)9;
	r->warnings = 0xffffffffu;
}

/* Invalid UTF-8, NaN, infinity and a field without its NUL still give a whole, valid JSON report
 * (the old builder failed on the first of them: "out of memory", twice, and no report at all). */
static void test_json_hostile_peer_values(void **state)
{
	struct rp_pair_result r[2];
	struct rp_report_info info = { .command = "matrix", .version = "v\xfe", .argc = 0 };
	char path[512], want[RP_NAME_MAX + 1];
	json_t *root, *back, *p, *a;
	json_error_t jerr;

	(void)state;
	two_pairs(r);
	hostile_pair(&r[0]);
	root = rp_report_json(&info, r, 2);
	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/hostile.json", rp_test_tmpdir());
	assert_int_equal(rp_report_write_json(root, path), 0);
	json_decref(root);
	back = json_load_file(path, 0, &jerr);
	if (!back)
		fail_msg("%s is not valid JSON: %s (line %d)", path, jerr.text, jerr.line);
	p = json_array_get(json_object_get(back, "pairs"), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(p, "src"), "node")), "n\xef\xbf\xbd" "1");
	assert_string_equal(json_string_value(json_object_get(json_object_get(p, "src"), "device")), "rxe\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(p, "reason")),
			    "bad \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd surrogate");
	memset(want, 'a', RP_NAME_MAX);
	want[RP_NAME_MAX] = '\0';
	assert_string_equal(json_string_value(json_object_get(json_object_get(p, "dst"), "node")), want);
	assert_true(json_is_null(json_object_get(p, "gbps")));
	assert_true(json_is_null(json_object_get(p, "gbps_min")));
	assert_true(json_is_null(json_object_get(json_object_get(p, "src"), "link_gbps")));
	assert_true(json_is_null(json_object_get(json_object_get(p, "latency"), "median_us")));
	assert_true(json_is_real(json_object_get(json_object_get(p, "latency"), "p99_us")));
	a = json_object_get(p, "attempts");
	assert_int_equal(json_array_size(a), RP_MAX_ATTEMPTS);
	assert_true(json_is_null(json_object_get(json_array_get(a, 0), "gbps")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "reason")),
			    "\xef\xbf\xbd\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(p, "confirm")), "unknown");
	assert_string_equal(json_string_value(json_object_get(p, "cause_side")), "unknown");
	assert_int_equal(json_array_size(json_object_get(p, "warnings")), RP_WARN_COUNT_);
	assert_string_equal(json_string_value(json_object_get(back, "version")), "v\xef\xbf\xbd");
	/* the second, healthy pair is all there */
	p = json_array_get(json_object_get(back, "pairs"), 1);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "resolve_failed");
	json_decref(back);
	unlink(path);
}

/* The verdict's fields: first cause, the other side's view, warnings as codes, confirm, every attempt,
 * soft endpoints, where the slowest interval was; existing keys unchanged. */
static void test_json_verdict_fields(void **state)
{
	struct rp_pair_result r[2];
	struct rp_report_info info = { .command = "pair", .argc = 0 };
	json_t *root, *p, *a, *s;

	(void)state;
	two_pairs(r);
	r[0].src.soft = true;
	r[0].gbps_min_at_s = 3.25;
	r[0].warnings = 1u << RP_WARN_FLAKY | 1u << RP_WARN_INTERVAL_DROP;
	r[0].confirm = RP_CONFIRM_FLAKY;
	r[0].status = RP_ST_RETRY_EXCEEDED;
	r[0].cause_side = RP_SIDE_SRC;
	snprintf(r[0].reason, sizeof(r[0].reason), "transport retry counter exceeded");
	r[0].elapsed_s = 2;
	rp_pair_result_record_attempt(&r[0], 14);
	r[0].status = RP_ST_OK;
	r[0].cause_side = RP_SIDE_NONE;
	r[0].reason[0] = '\0';
	rp_pair_result_record_attempt(&r[0], 20);
	r[1].cause_side = RP_SIDE_DST;
	r[1].secondary.status = RP_ST_FLUSHED;
	snprintf(r[1].secondary.reason, sizeof(r[1].secondary.reason), "flushed after the target tore down");
	r[1].confirm = RP_CONFIRM_UNCONFIRMED;
	root = rp_report_json(&info, r, 2);
	assert_non_null(root);
	p = json_array_get(json_object_get(root, "pairs"), 0);
	assert_true(json_is_true(json_object_get(json_object_get(p, "src"), "soft")));
	assert_true(json_is_false(json_object_get(json_object_get(p, "dst"), "soft")));
	assert_float_equal(json_real_value(json_object_get(p, "gbps_min_at_s")), 3.25, 1e-9);
	assert_string_equal(json_string_value(json_object_get(p, "confirm")), "flaky");
	assert_true(json_is_null(json_object_get(p, "cause_side")));
	assert_int_equal(json_array_size(json_object_get(p, "warnings")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(p, "warnings"), 0)), "flaky");
	assert_string_equal(json_string_value(json_array_get(json_object_get(p, "warnings"), 1)), "interval_drop");
	assert_string_equal(json_string_value(json_object_get(json_object_get(p, "secondary"), "status")), "ok");
	a = json_object_get(p, "attempts");
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "status")), "retry_exceeded");
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "side")), "src");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 0), "qp_timeout")), 14);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "reason")),
			    "transport retry counter exceeded");
	assert_float_equal(json_real_value(json_object_get(json_array_get(a, 0), "gbps")), 0.25, 1e-9);
	assert_float_equal(json_real_value(json_object_get(json_array_get(a, 0), "elapsed_s")), 2, 1e-9);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 1), "status")), "ok");
	assert_true(json_is_null(json_object_get(json_array_get(a, 1), "side")));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 1), "qp_timeout")), 20);
	/* the existing keys are as they were */
	assert_string_equal(json_string_value(json_object_get(p, "status")), "ok");
	assert_float_equal(json_real_value(json_object_get(p, "gbps")), 0.25, 1e-9);
	p = json_array_get(json_object_get(root, "pairs"), 1);
	assert_string_equal(json_string_value(json_object_get(p, "cause_side")), "dst");
	assert_string_equal(json_string_value(json_object_get(json_object_get(p, "secondary"), "status")), "flushed");
	assert_string_equal(json_string_value(json_object_get(json_object_get(p, "secondary"), "reason")),
			    "flushed after the target tore down");
	assert_string_equal(json_string_value(json_object_get(p, "confirm")), "unconfirmed");
	assert_int_equal(json_array_size(json_object_get(p, "attempts")), 0);
	assert_int_equal(json_array_size(json_object_get(p, "warnings")), 0);
	s = json_object_get(root, "summary");
	assert_int_equal(json_integer_value(json_object_get(s, "ok")), 1);
	assert_int_equal(json_integer_value(json_object_get(s, "failed")), 1);
	assert_int_equal(json_integer_value(json_object_get(s, "flaky")), 1);
	assert_int_equal(json_integer_value(json_object_get(s, "unconfirmed")), 1);
	assert_int_equal(json_integer_value(json_object_get(s, "confirmed")), 0);
	assert_int_equal(json_integer_value(json_object_get(s, "with_warnings")), 1);
	assert_int_equal(json_integer_value(json_object_get(s, "confirmed_by_endpoint")), 0);
	json_decref(root);

	/* a failure its endpoint's sample confirmed (lib/matrix/mx_retest.h) is counted apart */
	r[1].confirm = RP_CONFIRM_BY_ENDPOINT;
	root = rp_report_json(&info, r, 2);
	assert_non_null(root);
	p = json_array_get(json_object_get(root, "pairs"), 1);
	assert_string_equal(json_string_value(json_object_get(p, "confirm")), "confirmed_by_endpoint");
	s = json_object_get(root, "summary");
	assert_int_equal(json_integer_value(json_object_get(s, "confirmed_by_endpoint")), 1);
	assert_int_equal(json_integer_value(json_object_get(s, "unconfirmed")), 0);
	json_decref(root);
}

/* CSV: the new columns at the end, attempts ';'-separated; NaN empty; bad UTF-8 and control
 * characters replaced (the old writer copied them: "\xff" and an escape into the file). */
static void test_csv_hostile_and_verdict_columns(void **state)
{
	struct rp_pair_result r[2];
	char path[512], *buf = malloc(1 << 16), *line2;

	(void)state;
	assert_non_null(buf);
	two_pairs(r);
	r[0].status = RP_ST_TIMEOUT;
	r[0].cause_side = RP_SIDE_SRC;
	rp_pair_result_record_attempt(&r[0], 14);
	r[0].status = RP_ST_OK;
	r[0].cause_side = RP_SIDE_NONE;
	rp_pair_result_record_attempt(&r[0], 20);
	r[0].confirm = RP_CONFIRM_FLAKY;
	r[0].warnings = 1u << RP_WARN_FLAKY | 1u << RP_WARN_NOMINAL_RATE;
	r[0].gbps_min_at_s = 1.5;
	r[0].src.soft = true;
	hostile_pair(&r[1]);
	r[1].n_attempts = 0;
	r[1].confirm = RP_CONFIRM_CONFIRMED;
	r[1].cause_side = RP_SIDE_DST;
	r[1].secondary.status = RP_ST_FLUSHED;
	snprintf(r[1].secondary.reason, sizeof(r[1].secondary.reason), "esc \x1b[2J, here");
	snprintf(path, sizeof(path), "%s/r.csv", rp_test_tmpdir());
	assert_int_equal(rp_report_write_csv(r, 2, path), 0);
	assert_true(slurp(path, buf, 1 << 16) > 0);
	assert_non_null(strstr(buf, ",elapsed_s,reason,src_soft,dst_soft,cause_side,secondary_status,secondary_reason,"
				    "gbps_min_at_s,warnings,confirm,attempts,attempt_statuses,attempt_sides,"
				    "attempt_qp_timeouts,attempt_gbps,bidir,forward_status,rev_status,rev_gbps,rev_gbps_min,"
				    "rev_bytes,rev_verified,rev_bad_offset,rev_warnings,gbps_sum,rev_reason\n"));
	assert_non_null(strstr(buf, ",ok,0.250000,0.125000,4096000,"));   /* the old columns as they were */
	assert_non_null(strstr(buf, ",true,false,,ok,,1.500,flaky;nominal_link_rate,flaky,2,timed_out;ok,src;,14;20,"
				    "0.250000;0.250000,false,,,,,,,,,,\n"));
	line2 = strchr(strchr(buf, '\n') + 1, '\n') + 1;
	assert_true(strncmp(line2, "n\xef\xbf\xbd" "1,rxe\xef\xbf\xbd,", 12) == 0);
	assert_non_null(strstr(line2, ",resolve_failed,,,0,0,0,false,-1,"));   /* NaN and inf rates: empty */
	assert_null(strstr(buf, "\xff"));
	assert_null(strstr(buf, "\x1b"));
	assert_null(strstr(buf, "nan"));
	assert_null(strstr(buf, "inf"));
	assert_non_null(strstr(line2, ",dst,flushed,\"esc \xef\xbf\xbd[2J, here\","));
	assert_non_null(strstr(line2, ",confirmed,0,,,,,false,,,,,,,,,,\n"));
	free(buf);
	unlink(path);
}

/* Through the binary: a bad --json/--csv target is a usage error (exit 2) naming the path, before
 * any adapter is looked at (the old front ends accepted it and went on to measure: exit 3 on a host
 * without adapters, and, after measuring, a file renamed over the target). */
static void test_binary_refuses_bad_outputs_before_measuring(void **state)
{
	char err[4096], dir[512], link[512], fifo[512];
	struct stat st;
	struct {
		const char *args, *path, *what;
	} cases[] = {
		{ "loopback --json", "/dev/full", "is a character device" },
		{ "loopback --json", dir, "is a directory" },
		{ "pair --listen --json", link, "is a symbolic link" },
		{ "loopback --csv", fifo, "is a FIFO" },
		{ "pair 127.0.0.1:1 --csv", "/nonexistent-dir/x.csv", "No such file or directory" },
	};

	(void)state;
	snprintf(dir, sizeof(dir), "%s/bdir", rp_test_tmpdir());
	snprintf(link, sizeof(link), "%s/blink", rp_test_tmpdir());
	snprintf(fifo, sizeof(fifo), "%s/bfifo", rp_test_tmpdir());
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(symlink("/dev/stdout", link), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	for (size_t i = 0; i < RP_ARRAY_SIZE(cases); i++) {
		int rc = rp_test_run_bin(err, sizeof(err), "%s '%s' 2>&1 >/dev/null", cases[i].args, cases[i].path);

		if (rc != 2 || !strstr(err, cases[i].path) || !strstr(err, cases[i].what))
			fail_msg("rdmaprobe %s %s: exit %d, stderr: %s (want 2, the path and '%s')", cases[i].args,
				 cases[i].path, rc, err, cases[i].what);
	}
	assert_int_equal(stat("/dev/full", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	rmdir(dir);
	unlink(link);
	unlink(fifo);
}

/* --bidir in JSON and CSV: the reverse direction's own fields, the forward's own status beside the
 * pair's (folded) one, the sum; a one-way pair has none of them in JSON and bidir=false in CSV.
 * (Before: the reverse was in no report.) */
static void test_bidir_reports(void **state)
{
	struct rp_pair_result r[2];
	json_t *p, *rv;
	char path[] = "/tmp/rp-test-bidir-XXXXXX", *buf = malloc(1 << 16);
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	rp_pair_result_init(&r[0], NULL, NULL);
	snprintf(r[0].src.device, sizeof(r[0].src.device), "rxe0");
	snprintf(r[0].dst.device, sizeof(r[0].dst.device), "rxe1");
	r[0].status = RP_ST_OK;
	r[0].gbps = 2;
	r[0].verified = true;
	r[0].reverse = (struct rp_pair_reverse){ .measured = true, .status = RP_ST_BELOW_THRESHOLD, .gbps = 0.5,
						 .gbps_min = 0.25, .bytes = 1000, .iters = 10, .verified = true,
						 .bad_offset = -1, .warnings = 1u << RP_WARN_INTERVAL_DROP };
	snprintf(r[0].reverse.reason, sizeof(r[0].reverse.reason), "slow, really");
	rp_pair_reverse_fold(&r[0]);
	rp_pair_result_init(&r[1], NULL, NULL);
	r[1].status = RP_ST_OK;
	p = rp_report_pair_json(&r[0]);
	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "below_threshold");
	assert_string_equal(json_string_value(json_object_get(p, "forward_status")), "ok");
	assert_true(json_is_true(json_object_get(p, "bidir")));
	assert_float_equal(json_real_value(json_object_get(p, "gbps_sum")), 2.5, 1e-9);
	rv = json_object_get(p, "reverse");
	assert_string_equal(json_string_value(json_object_get(rv, "status")), "below_threshold");
	assert_string_equal(json_string_value(json_object_get(rv, "reason")), "slow, really");
	assert_float_equal(json_real_value(json_object_get(rv, "gbps")), 0.5, 1e-9);
	assert_int_equal(json_integer_value(json_object_get(rv, "iters")), 10);
	assert_true(json_is_true(json_object_get(rv, "verified")));
	assert_string_equal(json_string_value(json_array_get(json_object_get(rv, "warnings"), 0)), "interval_drop");
	json_decref(p);
	p = rp_report_pair_json(&r[1]);
	assert_null(json_object_get(p, "reverse"));
	assert_null(json_object_get(p, "bidir"));
	json_decref(p);
	assert_int_equal(rp_report_write_csv(r, 2, path), 0);
	assert_true(slurp(path, buf, 1 << 16) > 0);
	assert_non_null(strstr(buf, ",true,ok,below_threshold,0.500000,0.250000,1000,true,-1,interval_drop,2.500000,"
				    "\"slow, really\"\n"));
	assert_non_null(strstr(buf, ",false,,,,,,,,,,\n"));
	free(buf);
	unlink(path);
}

/* rp_report_write_json_pairs(): the report the matrix writes without ever holding its pairs in one
 * tree parses to exactly what rp_report_json() and rp_report_write_json() make (so every reader and
 * `diff` see the same document), with zero, one and many pairs and members after the summary; a root
 * that already has "pairs", or is not an object, is refused and nothing is written. */
static void streamed_matches(const struct rp_pair_result *r, size_t n, bool extra)
{
	struct rp_report_info info = { .command = "matrix", .version = "rdmaprobe test", .started = 1e9 };
	char tree[] = "/tmp/rp_tree_XXXXXX", streamed[] = "/tmp/rp_stream_XXXXXX";
	json_t *whole = rp_report_json(&info, r, n), *head = rp_report_json_head(&info, r, n), *a, *b;
	json_error_t jerr;
	int fd1 = mkstemp(tree), fd2 = mkstemp(streamed);

	assert_true(fd1 >= 0 && fd2 >= 0);
	close(fd1);
	close(fd2);
	assert_non_null(whole);
	assert_non_null(head);
	assert_null(json_object_get(head, "pairs"));
	if (extra) {
		assert_int_equal(json_object_set_new(whole, "nodes", json_pack("[{s:s}]", "node", "n1")), 0);
		assert_int_equal(json_object_set_new(head, "nodes", json_pack("[{s:s}]", "node", "n1")), 0);
	}
	assert_int_equal(rp_report_write_json(whole, tree), 0);
	assert_int_equal(rp_report_write_json_pairs(head, r, n, streamed), 0);
	a = json_load_file(tree, 0, &jerr);
	b = json_load_file(streamed, 0, &jerr);
	assert_non_null(a);
	if (!b)
		fail_msg("the streamed report does not parse: %s (line %d)", jerr.text, jerr.line);
	assert_true(json_equal(a, b));
	assert_int_equal(json_array_size(json_object_get(b, "pairs")), n);
	json_decref(a);
	json_decref(b);
	json_decref(whole);
	json_decref(head);
	unlink(tree);
	unlink(streamed);
}

static void test_json_streamed_pairs(void **state)
{
	struct rp_pair_result two[2], *many = calloc(300, sizeof(*many));
	struct rp_report_info info = { .command = "matrix", .version = "v" };
	char path[] = "/tmp/rp_stream_bad_XXXXXX";
	json_t *root, *arr;
	struct stat st;
	int fd = mkstemp(path);

	(void)state;
	assert_non_null(many);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	two_pairs(two);
	for (size_t i = 0; i < 300; i++) {
		many[i] = two[i % 2];
		many[i].gbps = 0.5 + (double)i / 7;      /* every pair different */
		many[i].iters = i;
	}
	streamed_matches(two, 0, false);
	streamed_matches(two, 0, true);
	streamed_matches(two, 1, false);
	streamed_matches(two, 2, true);
	streamed_matches(many, 300, true);

	root = rp_report_json(&info, two, 2);
	rp_log_set_sink(capture_log, NULL);
	last_error[0] = '\0';
	assert_int_equal(rp_report_write_json_pairs(root, two, 2, path), -EINVAL);
	assert_non_null(strstr(last_error, "without them"));
	assert_int_equal(stat(path, &st), -1);
	json_decref(root);
	arr = json_array();
	assert_int_equal(rp_report_write_json_pairs(arr, two, 2, path), -EINVAL);
	assert_int_equal(stat(path, &st), -1);
	json_decref(arr);
	rp_log_set_sink(NULL, NULL);
	free(many);
}

/* The CSV is streamed in chunks: with thousands of pairs (several chunks) every pair is one line,
 * in order, and the header comes once. */
static void test_csv_streamed_many(void **state)
{
	size_t n = 3000;
	struct rp_pair_result two[2], *many = calloc(n, sizeof(*many));
	char path[] = "/tmp/rp_csv_many_XXXXXX", line[4096];
	int fd = mkstemp(path);
	size_t lines = 0;
	FILE *f;

	(void)state;
	assert_non_null(many);
	assert_true(fd >= 0);
	close(fd);
	two_pairs(two);
	for (size_t i = 0; i < n; i++) {
		many[i] = two[0];
		many[i].iters = i;
	}
	assert_int_equal(rp_report_write_csv(many, n, path), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char want[64];

		if (lines == 0) {
			assert_non_null(strstr(line, "src_node"));
		} else {
			/* bytes,iters: "4096000,<i>," */
			snprintf(want, sizeof(want), ",4096000,%zu,", lines - 1);
			if (!strstr(line, want))
				fail_msg("line %zu is not pair %zu: %s", lines, lines - 1, line);
		}
		lines++;
	}
	fclose(f);
	assert_int_equal(lines, n + 1);
	unlink(path);
	free(many);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_json_streamed_pairs),
		cmocka_unit_test(test_csv_streamed_many),
		cmocka_unit_test(test_counters_and_new_warnings),
		cmocka_unit_test(test_atomic),
		cmocka_unit_test(test_planted_tmp_symlink_not_followed),
		cmocka_unit_test(test_refuses_what_is_not_a_regular_file),
		cmocka_unit_test(test_dev_full_refused),
		cmocka_unit_test(test_dash_is_stdout_and_errors_name_the_cause),
		cmocka_unit_test(test_json_hostile_peer_values),
		cmocka_unit_test(test_json_verdict_fields),
		cmocka_unit_test(test_csv_hostile_and_verdict_columns),
		cmocka_unit_test(test_bidir_reports),
		cmocka_unit_test(test_binary_refuses_bad_outputs_before_measuring),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
