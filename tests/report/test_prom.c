/* test_prom.c: the Prometheus exposition page, parsed by a real parser (the Prometheus Python
 * client's, through tests/prom_check.py): every family, hostile label values, values in base units,
 * the atomic write, repeated pairs. */
#include <errno.h>
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

#include "base/log.h"
#include "report/prom.h"
#include "testutil.h"
#include "base/util.h"

static struct rp_endpoint ep(const char *node, const char *dev, int port)
{
	struct rp_endpoint e = { .port = port, .gid_index = 1, .mtu = 4096, .link_gbps = 200 };

	rp_strlcpy(e.node, node, sizeof(e.node));
	rp_strlcpy(e.device, dev, sizeof(e.device));
	rp_strlcpy(e.mem, "host", sizeof(e.mem));
	rp_strlcpy(e.mem_reg, "host", sizeof(e.mem_reg));
	return e;
}

static void ok_pair(struct rp_pair_result *r, struct rp_endpoint s, struct rp_endpoint d, size_t size, double gbps)
{
	rp_pair_result_init(r, &s, &d);
	r->status = RP_ST_OK;
	r->msg_size = size;
	r->gbps = gbps;
	r->gbps_min = gbps / 4;
	r->iters = 1000;
	r->verified = true;
}

/* Parse path with the real parser; its canonical dump goes into out. Returns the checker's status;
 * skips, saying why, when no python3 with prometheus_client is installed. */
static int parse(const char *path, char *out, size_t len)
{
	char cmd[1024];
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "for py in python3 /usr/bin/python3; do if \"$py\" -c 'import prometheus_client' 2>/dev/null; then "
		 "exec \"$py\" tests/prom_check.py '%s' 2>&1; fi; done; exit 3", path);
	rc = rp_test_run(cmd, out, len);
	if (rc == 3) {
		print_message("SKIPPED: no python3 with prometheus_client (python3-prometheus-client, "
			      "scripts/install-deps.sh)\n");
		skip();
	}
	return rc;
}

static void has(const char *dump, const char *line)
{
	char want[1024];

	snprintf(want, sizeof(want), "%s\n", line);
	if (!strstr(dump, want))
		fail_msg("the parsed page lacks\n  %s\nit has:\n%s", line, dump);
}

static void lacks(const char *dump, const char *prefix)
{
	if (strstr(dump, prefix))
		fail_msg("the parsed page should not have %s:\n%s", prefix, dump);
}

#define PAIR_A "command=\"loopback\",dst_device=\"mlx5_1\",dst_node=\"node2\",dst_port=\"1\",msg_size=\"65536\"," \
	       "src_device=\"mlx5_0\",src_node=\"node1\",src_port=\"1\""

static void test_page(void **state)
{
	struct rp_endpoint a = ep("node1", "mlx5_0", 1), b = ep("node2", "mlx5_1", 1), idle = ep("node3", "mlx5_7", 2);
	struct rp_endpoint hostile = ep("n\"1\\x\ny\xff", "rxe0", 1);
	struct rp_pair_result r[5];
	struct rp_endpoint eps[2] = { a, idle };
	const bool drain[2] = { false, true };
	struct rp_prom_run run = { .command = "loopback", .version = "rdmaprobe 0.1.0 (abc) \"x\"", .timestamp = 1.7e9,
				   .eps = eps, .n_eps = 2, .drain = drain };
	char path[512], dump[65536];

	(void)state;
	ok_pair(&r[0], a, b, 65536, 180.5);
	r[0].warnings = 1u << RP_WARN_INTERVAL_DROP;
	ok_pair(&r[1], a, b, 4096, 20);                     /* a sweep: the same pair at another size */
	r[1].lat.measured = true;
	r[1].lat.min_us = 2;
	r[1].lat.median_us = 2.5;
	r[1].lat.p99_us = 4;
	r[1].lat.max_us = 10;
	rp_pair_result_init(&r[2], &b, &a);
	r[2].msg_size = 65536;
	rp_pair_result_fail(&r[2], RP_ST_RETRY_EXCEEDED, "retry exceeded");
	ok_pair(&r[3], hostile, hostile, 65536, 1);
	r[3].warnings = (1u << RP_WARN_NOMINAL_RATE) | (1u << RP_WARN_FLAKY);
	r[4] = r[0];                                        /* repeats r[0]: left out, the first wins */
	r[4].gbps = 1;
	snprintf(path, sizeof(path), "%s/page.prom", rp_test_tmpdir());
	assert_int_equal(rp_prom_write(path, &run, r, 5), 0);
	assert_int_equal(parse(path, dump, sizeof(dump)), 0);
	has(dump, "rdmaprobe_run_info{command=\"loopback\",version=\"rdmaprobe 0.1.0 (abc) \\\"x\\\"\"} 1.0");
	has(dump, "rdmaprobe_run_timestamp_seconds{command=\"loopback\"} 1700000000.0");
	has(dump, "rdmaprobe_run_pass{command=\"loopback\"} 0.0");
	has(dump, "rdmaprobe_run_pairs{command=\"loopback\"} 4.0");
	has(dump, "rdmaprobe_run_failed_pairs{command=\"loopback\"} 1.0");
	/* pairs: pass, status, bandwidth in bytes/s (base units: promtool rejected bits), latency in seconds, warnings */
	has(dump, "rdmaprobe_pair_pass{" PAIR_A "} 1.0");
	has(dump, "rdmaprobe_pair_bandwidth_bytes_per_second{" PAIR_A "} 22562500000.0");
	has(dump, "rdmaprobe_pair_min_interval_bandwidth_bytes_per_second{" PAIR_A "} 5640625000.0");
	has(dump, "rdmaprobe_pair_warning{code=\"interval_drop\"," PAIR_A "} 1.0");
	has(dump, "rdmaprobe_pair_latency_seconds{command=\"loopback\",dst_device=\"mlx5_1\",dst_node=\"node2\","
		  "dst_port=\"1\",msg_size=\"4096\",src_device=\"mlx5_0\",src_node=\"node1\",src_port=\"1\",stat=\"median\"} 2.5e-06");
	has(dump, "rdmaprobe_pair_pass{command=\"loopback\",dst_device=\"mlx5_0\",dst_node=\"node1\",dst_port=\"1\","
		  "msg_size=\"65536\",src_device=\"mlx5_1\",src_node=\"node2\",src_port=\"1\"} 0.0");
	has(dump, "rdmaprobe_pair_status{command=\"loopback\",dst_device=\"mlx5_0\",dst_node=\"node1\",dst_port=\"1\","
		  "msg_size=\"65536\",src_device=\"mlx5_1\",src_node=\"node2\",src_port=\"1\",status=\"retry_exceeded\"} 1.0");
	lacks(dump, "rdmaprobe_pair_bandwidth_bytes_per_second{command=\"loopback\",dst_device=\"mlx5_0\"");
	lacks(dump, "bits_per_second");
	lacks(dump, "} 125000000.0\nrdmaprobe_pair_bandwidth_bytes_per_second{" PAIR_A);   /* the repeat */
	/* the hostile node name: quote, backslash and newline escaped, the stray byte replaced */
	has(dump, "rdmaprobe_pair_warning{code=\"flaky\",command=\"loopback\",dst_device=\"rxe0\","
		  "dst_node=\"n\\\"1\\\\x\\ny?\",dst_port=\"1\",msg_size=\"65536\",src_device=\"rxe0\","
		  "src_node=\"n\\\"1\\\\x\\ny?\",src_port=\"1\"} 1.0");
	/* endpoints: a in 3 pairs (one failed), b in 2, the idle one only in eps with its verdict */
	has(dump, "rdmaprobe_endpoint_pairs{command=\"loopback\",device=\"mlx5_0\",node=\"node1\",port=\"1\"} 3.0");
	has(dump, "rdmaprobe_endpoint_failed_pairs{command=\"loopback\",device=\"mlx5_0\",node=\"node1\",port=\"1\"} 1.0");
	has(dump, "rdmaprobe_endpoint_pass{command=\"loopback\",device=\"mlx5_0\",node=\"node1\",port=\"1\"} 0.0");
	has(dump, "rdmaprobe_endpoint_drain{command=\"loopback\",device=\"mlx5_0\",node=\"node1\",port=\"1\"} 0.0");
	has(dump, "rdmaprobe_endpoint_drain{command=\"loopback\",device=\"mlx5_7\",node=\"node3\",port=\"2\"} 1.0");
	has(dump, "rdmaprobe_endpoint_pairs{command=\"loopback\",device=\"mlx5_7\",node=\"node3\",port=\"2\"} 0.0");
	lacks(dump, "rdmaprobe_endpoint_pass{command=\"loopback\",device=\"mlx5_7\"");
	lacks(dump, "rdmaprobe_endpoint_drain{command=\"loopback\",device=\"mlx5_1\"");
	has(dump, "rdmaprobe_endpoint_min_bandwidth_bytes_per_second{command=\"loopback\",device=\"mlx5_1\","
		  "node=\"node2\",port=\"1\"} 2500000000.0");
	has(dump, "rdmaprobe_endpoint_link_rate_bytes_per_second{command=\"loopback\",device=\"mlx5_1\","
		  "node=\"node2\",port=\"1\"} 25000000000.0");
	has(dump, "rdmaprobe_endpoint_mtu_bytes{command=\"loopback\",device=\"mlx5_1\",node=\"node2\",port=\"1\"} 4096.0");
	has(dump, "rdmaprobe_endpoint_warnings{code=\"interval_drop\",command=\"loopback\",device=\"mlx5_0\","
		  "node=\"node1\",port=\"1\"} 1.0");
	lacks(dump, "rdmaprobe_endpoint_warnings{code=\"flaky\",command=\"loopback\",device=\"mlx5_0\",");   /* none: no series */
	has(dump, "rdmaprobe_endpoint_warnings{code=\"nominal_link_rate\",command=\"loopback\",device=\"rxe0\","
		  "node=\"n\\\"1\\\\x\\ny?\",port=\"1\"} 1.0");
}

/* The checker is a real check: a page with an unescaped quote, a repeated series or a family
 * split in two is rejected. */
static void test_checker_rejects(void **state)
{
	static const char *const broken[] = {
		"# HELP a x\n# TYPE a gauge\na{node=\"n\"1\"} 1\n",
		"# HELP a x\n# TYPE a gauge\na{node=\"n1\"} 1\na{node=\"n1\"} 2\n",
		"# HELP a x\n# TYPE a gauge\na{node=\"n1\"} 1\n# HELP b y\n# TYPE b gauge\nb 1\na{node=\"n2\"} 1\n",
		"# HELP a x\n# TYPE a gauge\na{node=\"n1\",node=\"n2\"} 1\n",
		"a 1\n",
		"# HELP a x\n# TYPE a gauge\na{node=\"n1\"} 1 1700000000000\n",
		"# HELP a x\n# TYPE a gauge\na{node=\"n1\"} 1\n# HELP a x\n# TYPE a gauge\na{node=\"n2\"} 1\n",
	};
	char path[512], dump[4096];

	(void)state;
	snprintf(path, sizeof(path), "%s/broken.prom", rp_test_tmpdir());
	for (size_t i = 0; i < RP_ARRAY_SIZE(broken); i++) {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(broken[i], f);
		assert_int_equal(fclose(f), 0);
		if (parse(path, dump, sizeof(dump)) != 1)
			fail_msg("the checker accepted broken page %zu:\n%s", i, broken[i]);
	}
}

/* Names that differ only in bytes the page shows as '?' ("bad\xffname", "bad\xfename") are one
 * endpoint and one series per pair: they were two series with the same labels, a page Prometheus
 * rejects whole. */
static void test_labels_dedup_after_sanitising(void **state)
{
	struct rp_endpoint a = ep("bad\xffname", "rxe0", 1), a2 = ep("bad\xfename", "rxe0", 1), b = ep("n2", "rxe0", 1);
	struct rp_endpoint eps[2] = { a, a2 };
	const bool drain[2] = { false, false };
	struct rp_pair_result r[2];
	struct rp_prom_run run = { .command = "matrix", .eps = eps, .n_eps = 2, .drain = drain };
	char path[512], dump[65536];
	const char *p;
	int n = 0;

	(void)state;
	ok_pair(&r[0], a, b, 65536, 10);
	ok_pair(&r[1], a2, b, 65536, 20);
	snprintf(path, sizeof(path), "%s/dedup.prom", rp_test_tmpdir());
	assert_int_equal(rp_prom_write(path, &run, r, 2), 0);
	assert_int_equal(parse(path, dump, sizeof(dump)), 0);
	has(dump, "rdmaprobe_endpoint_pairs{command=\"matrix\",device=\"rxe0\",node=\"bad?name\",port=\"1\"} 1.0");
	for (p = dump; (p = strstr(p, "rdmaprobe_pair_pass{")) != NULL; p++)
		n++;
	assert_int_equal(n, 1);
}

/* Written whole or not at all: the old file stays when the new one cannot be written, and no
 * temporary is left beside it. */
static void test_atomic(void **state)
{
	struct rp_pair_result r;
	struct rp_prom_run run = { .command = "matrix" };
	char path[512], dump[8192], cmd[1024];

	(void)state;
	ok_pair(&r, ep("n1", "d0", 1), ep("n2", "d0", 1), 1024, 5);
	snprintf(path, sizeof(path), "%s/atomic.prom", rp_test_tmpdir());
	assert_int_equal(rp_prom_write(path, &run, &r, 1), 0);
	assert_int_equal(parse(path, dump, sizeof(dump)), 0);
	has(dump, "rdmaprobe_run_pass{command=\"matrix\"} 1.0");
	lacks(dump, "rdmaprobe_run_info");
	lacks(dump, "rdmaprobe_endpoint_drain");
	lacks(dump, "rdmaprobe_endpoint_unusable");   /* not given: left out, as _drain */
	lacks(dump, "rdmaprobe_pair_latency_seconds");
	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -c 'atomic.prom.tmp' || true", rp_test_tmpdir());
	assert_int_equal(rp_test_run(cmd, dump, sizeof(dump)), 0);
	assert_string_equal(dump, "0\n");
	snprintf(cmd, sizeof(cmd), "%s/no-such-dir/x.prom", rp_test_tmpdir());
	assert_true(rp_prom_write(cmd, &run, &r, 1) < 0);
	run.command = "";
	assert_int_equal(rp_prom_write(path, &run, &r, 1), -EINVAL);
	assert_int_equal(parse(path, dump, sizeof(dump)), 0);     /* the earlier file is intact */
	has(dump, "rdmaprobe_run_pairs{command=\"matrix\"} 1.0");
}

/* A matrix's page is bounded by its endpoints and findings: no series per pair, the verdict's counts
 * for the endpoints (the listed pairs are only the notable ones), a series per finding, and the run's
 * pass from the verdict, not from the listed pairs (which all passed here). Before, every listed pair
 * had its series and run_pass said 1. */
static void test_matrix_bounded(void **state)
{
	struct rp_endpoint eps[3] = { ep("n1", "d0", 1), ep("n2", "d0", 1), ep("n3", "d0", 1) };
	const bool drain[3] = { false, false, true }, unusable[3] = { false, true, false }, pass = false;
	const uint32_t pairs[3] = { 4, 4, 4 }, failed[3] = { 2, 2, 4 };
	const struct rp_prom_finding fd[2] = { { .kind = "adapter", .a = &eps[2], .failed = 4 },
					       { .kind = "link", .a = &eps[0], .b = &eps[1], .failed = 0 } };
	struct rp_prom_run run = { .command = "matrix", .eps = eps, .n_eps = 3, .drain = drain, .unusable = unusable,
				   .pass = &pass,
				   .ep_pairs = pairs, .ep_failed = failed, .pairs_partial = true, .no_pairs = true,
				   .totals = true, .total_pairs = 6, .total_failed = 4,
				   .findings = fd, .n_findings = 2 };
	struct rp_pair_result r;
	char path[512], dump[16384];

	(void)state;
	ok_pair(&r, eps[0], eps[1], 65536, 100);
	r.warnings = 1u << RP_WARN_FLAKY;
	snprintf(path, sizeof(path), "%s/matrix.prom", rp_test_tmpdir());
	assert_int_equal(rp_prom_write(path, &run, &r, 1), 0);
	assert_int_equal(parse(path, dump, sizeof(dump)), 0);
	has(dump, "rdmaprobe_run_pass{command=\"matrix\"} 0.0");
	has(dump, "rdmaprobe_run_pairs{command=\"matrix\"} 6.0");
	has(dump, "rdmaprobe_run_failed_pairs{command=\"matrix\"} 4.0");
	lacks(dump, "rdmaprobe_pair_");
	has(dump, "rdmaprobe_endpoint_pairs{command=\"matrix\",device=\"d0\",node=\"n3\",port=\"1\"} 4.0");
	has(dump, "rdmaprobe_endpoint_failed_pairs{command=\"matrix\",device=\"d0\",node=\"n1\",port=\"1\"} 2.0");
	lacks(dump, "rdmaprobe_endpoint_min_bandwidth");
	/* unusable: left out of NCCL_IB_HCA without a drain (a shared component's failures) */
	has(dump, "rdmaprobe_endpoint_unusable{command=\"matrix\",device=\"d0\",node=\"n2\",port=\"1\"} 1.0");
	has(dump, "rdmaprobe_endpoint_unusable{command=\"matrix\",device=\"d0\",node=\"n3\",port=\"1\"} 0.0");
	has(dump, "rdmaprobe_endpoint_warnings{code=\"flaky\",command=\"matrix\",device=\"d0\",node=\"n1\",port=\"1\"} 1.0");
	has(dump, "rdmaprobe_finding_failed_directions{command=\"matrix\",device=\"d0\",kind=\"adapter\",node=\"n3\","
		  "peer_device=\"\",peer_node=\"\",peer_port=\"\",port=\"1\"} 4.0");
	has(dump, "rdmaprobe_finding_failed_directions{command=\"matrix\",device=\"d0\",kind=\"link\",node=\"n1\","
		  "peer_device=\"d0\",peer_node=\"n2\",peer_port=\"1\",port=\"1\"} 0.0");
}

/* `check` on an unhealthy node: run_pass is 0 beside check_status 1 (before: run_pass 1 because the
 * pairs, none here, all passed). */
static void test_check_pass(void **state)
{
	struct rp_check_problem p = { .sev = RP_CHECK_FAIL, .src = RP_CHECK_SRC_HEALTH, .code = "port_down",
				      .device = "d0:1" };
	struct rp_check c = { .items = &p, .n = 1 };
	struct rp_prom_run run = { .command = "check", .check = &c };
	char path[512], dump[8192];

	(void)state;
	snprintf(path, sizeof(path), "%s/check.prom", rp_test_tmpdir());
	assert_int_equal(rp_prom_write(path, &run, NULL, 0), 0);
	assert_int_equal(parse(path, dump, sizeof(dump)), 0);
	has(dump, "rdmaprobe_check_status{command=\"check\"} 1.0");
	has(dump, "rdmaprobe_run_pass{command=\"check\"} 0.0");
}

static void log_drop(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static int setup(void **state)
{
	rp_log_set_sink(log_drop, NULL);
	return rp_test_tmpdir_setup(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page),
		cmocka_unit_test(test_checker_rejects),
		cmocka_unit_test(test_atomic),
		cmocka_unit_test(test_matrix_bounded),
		cmocka_unit_test(test_check_pass),
		cmocka_unit_test(test_labels_dedup_after_sanitising),
	};

	return cmocka_run_group_tests_name("prom", tests, setup, rp_test_tmpdir_teardown);
}
