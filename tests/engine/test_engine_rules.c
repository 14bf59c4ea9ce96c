/* test_engine_rules.c: the engine's pure functions (Gb/s, latency statistics, the completion-status
 * map, the first-cause rule, the seed, the configuration check) and the CLI's bad input (exit 2 with
 * a message that names the problem). No verbs calls: no .wrap.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine_harness.h"
#include "fixture_health.h"
#include "base/log.h"
#include "discover/node.h"
#include "base/sanitize.h"
#include "base/stop.h"
#include "oob/oob.h"
#include "base/util.h"
#include "testutil.h"
#include "verbs_standin.h"

/* ---------------------------------------------------------------------------------------------- */
/* arithmetic */

static void test_gbps(void **state)
{
	(void)state;
	assert_float_equal(rp_engine_gbps(1000000000ULL, 1.0), 8.0, 1e-9);
	assert_float_equal(rp_engine_gbps(125000000ULL, 0.5), 2.0, 1e-9);   /* 10^9 bit/s, not 2^30 */
	assert_float_equal(rp_engine_gbps(1024, 0), 0.0, 0);
	assert_float_equal(rp_engine_gbps(1024, -1), 0.0, 0);
}

static void test_lat_stats(void **state)
{
	double s[100];
	struct rp_latency lat;

	(void)state;
	for (int i = 0; i < 100; i++)
		s[i] = 100 - i;   /* unsorted */
	rp_engine_lat_stats(s, 100, &lat);
	assert_true(lat.measured);
	assert_int_equal(lat.samples, 100);
	assert_float_equal(lat.min_us, 1, 0);
	assert_float_equal(lat.median_us, 50.5, 1e-9);
	assert_float_equal(lat.p99_us, 99, 0);
	assert_float_equal(lat.max_us, 100, 0);
	s[0] = 5;
	s[1] = 3;
	s[2] = 4;
	rp_engine_lat_stats(s, 3, &lat);
	assert_float_equal(lat.median_us, 4, 0);
	assert_float_equal(lat.p99_us, 5, 0);
	rp_engine_lat_stats(s, 0, &lat);
	assert_false(lat.measured);
}

static void test_wc_status_map(void **state)
{
	(void)state;
	assert_int_equal(rp_engine_wc_status(IBV_WC_SUCCESS), RP_ST_OK);
	assert_int_equal(rp_engine_wc_status(IBV_WC_RETRY_EXC_ERR), RP_ST_RETRY_EXCEEDED);
	assert_int_equal(rp_engine_wc_status(IBV_WC_RNR_RETRY_EXC_ERR), RP_ST_RNR_RETRY);
	assert_int_equal(rp_engine_wc_status(IBV_WC_REM_ACCESS_ERR), RP_ST_REMOTE_ACCESS);
	assert_int_equal(rp_engine_wc_status(IBV_WC_LOC_PROT_ERR), RP_ST_LOCAL_PROT);
	assert_int_equal(rp_engine_wc_status(IBV_WC_REM_INV_REQ_ERR), RP_ST_REMOTE_INVALID);
	assert_int_equal(rp_engine_wc_status(IBV_WC_REM_OP_ERR), RP_ST_REMOTE_OP);
	assert_int_equal(rp_engine_wc_status(IBV_WC_REM_ABORT_ERR), RP_ST_REMOTE_ABORT);
	assert_int_equal(rp_engine_wc_status(IBV_WC_LOC_LEN_ERR), RP_ST_LOCAL_LENGTH);
	assert_int_equal(rp_engine_wc_status(IBV_WC_LOC_QP_OP_ERR), RP_ST_LOCAL_QP_OP);
	assert_int_equal(rp_engine_wc_status(IBV_WC_BAD_RESP_ERR), RP_ST_BAD_RESPONSE);
	assert_int_equal(rp_engine_wc_status(IBV_WC_WR_FLUSH_ERR), RP_ST_FLUSHED);
	assert_int_equal(rp_engine_wc_status(IBV_WC_GENERAL_ERR), RP_ST_COMPLETION_ERROR);
	assert_int_equal(rp_engine_wc_status(IBV_WC_MW_BIND_ERR), RP_ST_COMPLETION_ERROR);
}

/* The first-cause rule on every kind of pair of first-hand failures. */
static void test_first_cause_rule(void **state)
{
	static const struct { enum rp_status w, t; bool target; } cases[] = {
		{ RP_ST_FLUSHED, RP_ST_TIMEOUT, true },            /* a flush follows from something */
		{ RP_ST_TIMEOUT, RP_ST_FLUSHED, false },
		{ RP_ST_PEER_LOST, RP_ST_DATA_MISMATCH, true },
		{ RP_ST_RETRY_EXCEEDED, RP_ST_PEER_LOST, false },
		{ RP_ST_TIMEOUT, RP_ST_PORT_DOWN, true },           /* the port explains the time-out */
		{ RP_ST_PORT_DOWN, RP_ST_TIMEOUT, false },
		{ RP_ST_RETRY_EXCEEDED, RP_ST_TIMEOUT, true },      /* the target's QP went away */
		{ RP_ST_REMOTE_ACCESS, RP_ST_INTERRUPTED, true },
		{ RP_ST_RETRY_EXCEEDED, RP_ST_REMOTE_OP, false },   /* both transport: the writer's */
		{ RP_ST_TIMEOUT, RP_ST_TIMEOUT, false },
		{ RP_ST_SETUP, RP_ST_DATA_MISMATCH, false },
	};

	(void)state;
	for (size_t i = 0; i < RP_ARRAY_SIZE(cases); i++)
		if (rp_engine_target_first(cases[i].w, cases[i].t) != cases[i].target)
			fail_msg("writer %s, target %s: the %s's should be the cause", rp_status_code(cases[i].w),
				 rp_status_code(cases[i].t), cases[i].target ? "target" : "writer");
}

static void test_seed(void **state)
{
	struct rp_endpoint a = { .node = "n1", .device = "rxe0", .port = 1 };
	struct rp_endpoint b = { .node = "n1", .device = "rxe1", .port = 1 };
	struct rp_endpoint c = { .node = "n2", .device = "rxe0", .port = 1 };

	(void)state;
	assert_true(rp_engine_seed(1, &a, &b, 0) == rp_engine_seed(1, &a, &b, 0));
	assert_true(rp_engine_seed(1, &a, &b, 0) != rp_engine_seed(1, &b, &a, 0));
	assert_true(rp_engine_seed(1, &a, &b, 0) != rp_engine_seed(1, &a, &b, 1));
	assert_true(rp_engine_seed(1, &a, &b, 0) != rp_engine_seed(2, &a, &b, 0));
	assert_true(rp_engine_seed(1, &a, &a, 0) != rp_engine_seed(1, &c, &c, 0));
}

static void test_cfg_validate(void **state)
{
	struct rp_engine_cfg cfg;

	(void)state;
	rp_engine_cfg_default(&cfg);
	assert_int_equal(rp_engine_cfg_validate(&cfg), 0);
	cfg.meas.msg_size = 0;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	rp_engine_cfg_default(&cfg);
	cfg.meas.cq_mod = cfg.meas.tx_depth + 1;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	rp_engine_cfg_default(&cfg);
	cfg.meas.n_qps = RP_ENGINE_MAX_QPS + 1;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	rp_engine_cfg_default(&cfg);
	cfg.meas.mode = RP_MODE_LAT;
	cfg.meas.duration_s = 1;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
}

/* ---------------------------------------------------------------------------------------------- */
/* the command line: bad input exits 2 with a message that names the problem */

/* Run "rdmaprobe ARGS" with its stderr into err (stdout dropped); returns the exit status. */
static int run_cli(const char *args, char *err, size_t err_len)
{
	return rp_test_run_bin(err, err_len, "%s 2>&1 >/dev/null", args);
}

static void test_cli_bad_input(void **state)
{
	static const struct { const char *args, *msg; } cases[] = {
		{ "loopback -s 0", "--size 0: out of range (1 B to 4 GiB)" },   /* units (issue 26 item 15) */
		{ "loopback -D 25h", "--duration 25h: out of range (10 ms to 24 h)" },
		{ "loopback --timeout 0.01", "--timeout 0.01: out of range (100 ms to 1 h)" },
		{ "loopback -n 0", "--iters 0: out of range (1 to 1000000000000)" },
		{ "loopback -s 12Q", "--size 12Q: not a valid size" },
		{ "loopback -s 4G --no-verify", "the size must be below 4 GiB" },
		{ "loopback -s 3G", "--size 3221225472: at most 1024M" },
		{ "loopback -s 1G -n 1000000000000", "the byte count overflows 64 bits" },
		{ "loopback -n abc", "--iters abc: not a valid number" },
		{ "loopback -n 10 -D 2", "either -n/--iters or -D/--duration" },
		{ "loopback -s 4K -a", "either -s/--size or -a/--all" },
		{ "loopback -t 8 --cq-mod 16", "--cq-mod 16 is larger than the tx depth 8" },
		{ "loopback --qp-timeout 40", "--qp-timeout 40: out of range" },
		{ "loopback --retry-cnt 8", "--retry-cnt 8: out of range" },
		{ "loopback -q 0", "--qps 0: out of range" },
		{ "loopback --mem gpu", "--mem gpu: unknown memory" },
		{ "loopback --mem cuda:x", "--mem cuda:x: the GPU index" },
		{ "loopback --gpu-reg magic", "--gpu-reg magic: one of auto, dmabuf, peermem" },
		{ "loopback --latency -D 1", "latency mode counts round trips" },
		{ "loopback --bogus", "unknown option '--bogus'" },
		{ "pair", "give either --listen or the peer's HOST" },
		{ "pair --listen somehost", "give either --listen or the peer's HOST" },
		{ "pair host:99999", "the port must be a number 1 to 65535" },
		{ "pair -a host", "-a is for loopback" },
	};
	char err[4096];

	(void)state;
	rp_test_bin();
	for (size_t i = 0; i < RP_ARRAY_SIZE(cases); i++) {
		int st = run_cli(cases[i].args, err, sizeof(err));

		if (st != 2 || !strstr(err, cases[i].msg))
			fail_msg("rdmaprobe %s: exit %d, stderr '%s' (wanted 2 and '%s')", cases[i].args, st, err,
				 cases[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gbps),
		cmocka_unit_test(test_lat_stats),
		cmocka_unit_test(test_wc_status_map),
		cmocka_unit_test(test_seed),
		cmocka_unit_test(test_first_cause_rule),
		cmocka_unit_test(test_cfg_validate),
		cmocka_unit_test(test_cli_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
