/* test_report.c: the JSON and CSV reports: every field of a pair, run info, atomic writes. */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "report.h"
#include "util.h"

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
			assert_non_null(strstr(line, ",\"modify qp 0x11 to RTR, \"\"address\"\" resolution: Connection timed out\"\n"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_atomic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
