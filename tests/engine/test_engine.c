/* test_engine.c: the RC engine's set-up and data path against the verbs stand-in (verbs_standin.h).
 *
 * What is checked: a failure injected at EVERY step of set-up, connection and data path ends as the
 * right rp_status with the call named in the reason, and nothing leaks; completion errors map to
 * their codes and reach the other side; corrupted data is caught at the right offset; the QP
 * attributes are NCCL's; port counters, duration and latency runs; message size limits, least
 * privilege, the rate table and soft devices, the slowest interval, a long UTF-8 --node.
 * Deadlines and first cause: test_engine_deadline.c; a hostile peer and the wire:
 * test_engine_peer.c; pure rules and the CLI: test_engine_rules.c; --cm: test_engine_cm.c.
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

/* The status a failure at this step must end as. */
static enum rp_status expected_status(enum fk_step st)
{
	switch (st) {
	case ST_QUERY_GID: return RP_ST_RESOLVE;
	case ST_REG: return RP_ST_REGISTRATION;
	case ST_RTR: return RP_ST_RTR;
	case ST_RTS: return RP_ST_RTS;
	default: return RP_ST_SETUP;
	}
}

/* The name of the failed call, as the reason must contain it. */
static const char *expected_word(enum fk_step st)
{
	switch (st) {
	case ST_DEVLIST: return "ibv_get_device_list";
	case ST_OPEN: return "ibv_open_device";
	case ST_QUERY_PORT: return "ibv_query_port";
	case ST_QUERY_GID: return "ibv_query_gid";
	case ST_PD: return "ibv_alloc_pd";
	case ST_CQ: return "ibv_create_cq";
	case ST_QP: return "ibv_create_qp";
	case ST_INIT: return "to INIT";
	case ST_REG: return "register";
	case ST_RTR: return "to RTR";
	case ST_RTS: return "to RTS";
	case ST_POST_RECV: return "ibv_post_recv";
	case ST_POST_SEND: return "ibv_post_send";
	case ST_POLL: return "ibv_poll_cq";
	default: return "";
	}
}

/* A failure injected at every failable call, one run each, until a run passes untouched. */
static void test_fail_at_every_step(void **state)
{
	struct rp_engine_cfg cfg;
	int steps_seen = 0, seen_mask = 0;

	(void)state;
	small_cfg(&cfg);
	for (int n = 1; n < 100000; n++) {
		struct rp_pair_result r;

		fk_reset();
		fk_fail_at = n;
		drive_pair(&cfg, &r);
		assert_true(fk_all_released());
		if (fk_failed_step == ST_NONE) {
			/* past the last failable call: the pair passed and verified */
			assert_int_equal(r.status, RP_ST_OK);
			assert_true(r.verified);
			break;
		}
		steps_seen++;
		seen_mask |= 1 << fk_failed_step;
		if (r.status != expected_status(fk_failed_step) || !strstr(r.reason, expected_word(fk_failed_step)))
			fail_msg("failure at call %d (step %d): status %s, reason '%s'", n, fk_failed_step,
				 rp_status_code(r.status), r.reason);
	}
	/* every kind of step was reached and failed at least once */
	for (int st = ST_DEVLIST; st <= ST_POLL; st++)
		if (!(seen_mask & (1 << st)))
			fail_msg("step %d was never failed", st);
	assert_true(steps_seen > 20);
}

/* An RTR refused with a resolution errno is reported as address resolution. */
static void test_rtr_resolution(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.n_qps = 1;
	/* calls: devlist, open, qport, qgid, pd, cq, cq, qp, init, reg (writer) x2, then RTR */
	fk_fail_at = 21;
	fk_fail_errno = ETIMEDOUT;
	drive_pair(&cfg, &r);
	assert_int_equal(fk_failed_step, ST_RTR);
	assert_int_equal(r.status, RP_ST_RESOLVE);
	assert_non_null(strstr(r.reason, "to RTR toward fake0 port 1 (address resolution)"));
	assert_non_null(strstr(r.reason, strerror(ETIMEDOUT)));
	assert_true(fk_all_released());
}

/* Issue 26 item 20: an RTR refused (EINVAL) on a port whose GID is link-local says that no routable
 * GID exists, naming the port and the address, not just "Invalid argument". Failed before: the
 * reason was "modify qp ... to RTR toward fake0 port 1: Invalid argument". */
static void test_rtr_no_routable_gid(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.n_qps = 1;
	fk_gid_link_local = true;
	fk_fail_at = 21;
	fk_fail_errno = EINVAL;
	drive_pair(&cfg, &r);
	assert_int_equal(fk_failed_step, ST_RTR);
	assert_int_equal(r.status, RP_ST_RTR);
	if (!strstr(r.reason, "no routable GID: fake0 port 1 uses GID fe80::") || !strstr(r.reason, "(link-local)") ||
	    !strstr(r.reason, strerror(EINVAL)))
		fail_msg("reason: %s", r.reason);
	assert_true(fk_all_released());
}

/* The QP attributes are NCCL's, except the probe's timeout and retry count from the config. */
static void test_nccl_attributes(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.qp.qp_timeout = 9;
	cfg.qp.retry_cnt = 3;
	cfg.qp.traffic_class = 106;
	drive_pair(&cfg, &r);
	assert_int_equal(r.status, RP_ST_OK);
	assert_int_equal(fk_rtr.path_mtu, IBV_MTU_1024);
	assert_int_equal(fk_rtr.min_rnr_timer, 12);
	assert_int_equal(fk_rtr.max_dest_rd_atomic, 1);
	assert_int_equal(fk_rtr.ah_attr.is_global, 1);
	assert_int_equal(fk_rtr.ah_attr.grh.hop_limit, 255);
	assert_int_equal(fk_rtr.ah_attr.grh.sgid_index, 3);
	assert_int_equal(fk_rtr.ah_attr.grh.traffic_class, 106);
	assert_int_equal(fk_rtr.ah_attr.grh.dgid.raw[15], 3);
	assert_true(fk_rtr_mask & IBV_QP_AV);
	assert_int_equal(fk_rts.timeout, 9);
	assert_int_equal(fk_rts.retry_cnt, 3);
	assert_int_equal(fk_rts.rnr_retry, 7);
	assert_true(fk_all_released());
}

/* Two threads over the socketpair side channel: the whole pair sequence passes and verifies. */
static void test_loopback_ok(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.status, RP_ST_OK);
	assert_string_equal(r.reason, "");
	assert_true(r.verified);
	assert_int_equal(r.bad_offset, -1);
	assert_int_equal(r.iters, 200);
	assert_int_equal(r.bytes, 200 * 4096);
	assert_true(r.gbps > 0);
	assert_true(r.gbps_min > 0 && r.gbps_min <= r.gbps);
	/* warm-up (8) + measured (200) + the final WRITE WITH IMM */
	assert_int_equal(fk_writes, 8 + 200 + 1);
	assert_string_equal(r.src.device, "fake0");
	assert_string_equal(r.dst.device, "fake0");
	assert_string_equal(r.src.mem, "host");
	assert_int_equal(r.src.mtu, 1024);
	assert_true(fk_all_released());
}

/* Port counters around the run: each side snapshots its own port (here both ends are fake0:1 of an
 * rxe-like fixture tree), a sequence-gap counter (rcvd_seq_err: loss) that moves during the run makes both sides'
 * judgement lossy with the counter named, and the target's side reaches the writer's result through
 * the RESULT message (nothing else fills counters.dst there). With the counter left alone both sides
 * are measured and ok, nothing moved but what rxe counts for every packet. Fails before the engine
 * read counters (counters.src/dst stayed unmeasured). */
static void test_loopback_counters(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fxh_rxe_counters(&fx, "fake0"), 0);
	small_cfg(&cfg);
	cfg.sysfs_root = fx.root;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.status, RP_ST_OK);
	assert_int_equal(r.counters.src.measured, 1);
	assert_int_equal(r.counters.dst.measured, 1);
	assert_int_equal(r.counters.src.verdict, RP_CV_OK);
	assert_int_equal(r.counters.dst.verdict, RP_CV_OK);
	assert_int_equal(r.counters.src.n_moved, 0);

	fk_reset();
	fk_ctr_fx = &fx;
	fk_ctr_rel = "class/infiniband/fake0/ports/1/hw_counters/rcvd_seq_err";
	fk_ctr_at = 50;
	fk_ctr_value = 37;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.status, RP_ST_OK);
	for (int k = 0; k < 2; k++) {
		const struct rp_pair_ctr_side *sd = k ? &r.counters.dst : &r.counters.src;

		assert_int_equal(sd->measured, 1);
		assert_int_equal(sd->verdict, RP_CV_LOSSY);
		assert_int_equal(sd->cls, RP_CC_RETRANS);
		assert_int_equal(sd->n, 1);
		assert_string_equal(sd->c[0].name, "rcvd_seq_err");
		assert_int_equal(sd->c[0].delta, 37);
		assert_non_null(strstr(sd->reason, "rcvd_seq_err +37"));
	}
	/* no sysfs at all: nothing read, nothing judged, the pair unaffected */
	fk_reset();
	cfg.sysfs_root = "";
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.counters.src.measured, 0);
	assert_int_equal(r.counters.dst.measured, 0);
	rp_fx_destroy(&fx);
	assert_true(fk_all_released());
}

/* A duration run stops on time and still completes every write it posted. */
static void test_loopback_duration(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.iters = 0;
	cfg.meas.duration_s = 0.2;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.status, RP_ST_OK);
	assert_true(r.verified);
	assert_true(r.iters > 0);
	assert_int_equal(r.bytes, r.iters * 4096);
	assert_int_equal(fk_writes, 8 + r.iters + 1);
	assert_true(r.elapsed_s < 5);
}

/* Completion errors in the middle of the run map to their codes, and the target learns it. */
static void test_wc_errors(void **state)
{
	static const struct { enum ibv_wc_status wc; enum rp_status st; } cases[] = {
		{ IBV_WC_RETRY_EXC_ERR, RP_ST_RETRY_EXCEEDED },
		{ IBV_WC_RNR_RETRY_EXC_ERR, RP_ST_RNR_RETRY },
		{ IBV_WC_REM_ACCESS_ERR, RP_ST_REMOTE_ACCESS },
		{ IBV_WC_LOC_PROT_ERR, RP_ST_LOCAL_PROT },
		{ IBV_WC_REM_INV_REQ_ERR, RP_ST_REMOTE_INVALID },
		{ IBV_WC_REM_OP_ERR, RP_ST_REMOTE_OP },
		{ IBV_WC_REM_ABORT_ERR, RP_ST_REMOTE_ABORT },
		{ IBV_WC_LOC_LEN_ERR, RP_ST_LOCAL_LENGTH },
		{ IBV_WC_LOC_QP_OP_ERR, RP_ST_LOCAL_QP_OP },
		{ IBV_WC_BAD_RESP_ERR, RP_ST_BAD_RESPONSE },
		{ IBV_WC_WR_FLUSH_ERR, RP_ST_FLUSHED },
		{ IBV_WC_GENERAL_ERR, RP_ST_COMPLETION_ERROR },
		{ IBV_WC_MW_BIND_ERR, RP_ST_COMPLETION_ERROR },
	};

	(void)state;
	for (size_t i = 0; i < RP_ARRAY_SIZE(cases); i++) {
		struct rp_engine_cfg cfg;
		struct rp_pair_result r;
		double t0 = rp_now();

		fk_reset();
		small_cfg(&cfg);
		fk_bad_write_at = 50;
		fk_bad_status = cases[i].wc;
		assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
		if (r.status != cases[i].st || !strstr(r.reason, ibv_wc_status_str(cases[i].wc)))
			fail_msg("%s: %s (%s)", ibv_wc_status_str(cases[i].wc), rp_status_code(r.status), r.reason);
		assert_int_equal(r.cause_side, RP_SIDE_SRC);
		assert_false(r.verified);
		/* the target heard it over the side channel, well before its own deadline */
		assert_true(rp_now() - t0 < cfg.timeout_s);
		assert_true(fk_all_released());
	}
}

/* A flipped byte in the final write is caught at its offset. */
static void test_data_mismatch(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	fk_corrupt_off = 1234;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_DATA_MISMATCH);
	assert_int_equal(r.bad_offset, 1234);
	assert_false(r.verified);
	assert_non_null(strstr(r.reason, "offset 1234"));
	assert_true(fk_all_released());
}

/* Latency mode: the ping-pong runs across the two threads and reports ordered statistics. */
static void test_latency(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.mode = RP_MODE_LAT;
	cfg.meas.msg_size = 64;
	cfg.meas.iters = 300;
	cfg.meas.n_qps = 1;
	if (rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r) != 0)
		fail_msg("latency pair: %s: %s", rp_status_code(r.status), r.reason);
	assert_int_equal(r.status, RP_ST_OK);
	assert_true(r.verified);
	assert_true(r.lat.measured);
	assert_int_equal(r.lat.samples, 300);
	assert_true(r.lat.min_us > 0);
	assert_true(r.lat.min_us <= r.lat.median_us && r.lat.median_us <= r.lat.p99_us && r.lat.p99_us <= r.lat.max_us);
	/* two writes per round trip (8 warm-up + 300), then the final one */
	assert_int_equal(fk_writes, 2 * 308 + 1);
	assert_true(fk_all_released());
}

/* A device that does not exist is a SETUP failure naming it; the target hears it too. */
static void test_unknown_device(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;
	struct rp_engine_port bad = { NULL, "nosuch9", 1, 0 };

	(void)state;
	small_cfg(&cfg);
	assert_int_equal(rp_engine_loopback_run(&cfg, &bad, &port_b, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_SETUP);
	assert_non_null(strstr(r.reason, "no RDMA device 'nosuch9'"));
	assert_true(fk_all_released());
}

/* A RoCE port without a usable GID is a resolution failure. */
static void test_no_gid(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;
	struct rp_engine_port nogid = { NULL, "fake0", 1, -1 };

	(void)state;
	small_cfg(&cfg);
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &nogid, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_RESOLVE);
	assert_non_null(strstr(r.reason, "no usable RoCE GID"));
	assert_true(fk_all_released());
}

/* A 4 GiB message cannot be posted (the length is 32 bits: it would be 0); a message larger than the
 * port's max_msg_sz is refused when the endpoint opens. */
static void test_message_size_limits(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.msg_size = 1ULL << 32;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	cfg.meas.msg_size = RP_ENGINE_MAX_MSG_SIZE + 1;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	cfg.meas.msg_size = RP_ENGINE_MAX_MSG_SIZE;
	assert_int_equal(rp_engine_cfg_validate(&cfg), 0);
	cfg.meas.iters = RP_ENGINE_MAX_ITERS;   /* x 1 GiB overflows 64 bits */
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	small_cfg(&cfg);
	fk_max_msg_sz = 2048;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_SETUP);
	assert_non_null(strstr(r.reason, "exceeds the largest message"));
	assert_true(fk_all_released());
}

/* Least privilege: the writer's MR and QPs grant no remote access and its rkey is never sent; the
 * target's grant remote WRITE only. The send CQ holds a flush of every QP plus the final write. */
static void test_least_privilege(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_engine_ep *w = NULL, *t = NULL;
	struct rp_pair_result rw, rt;
	struct rp_conn_info iw, it;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.n_qps = 8;
	rp_pair_result_init(&rw, NULL, NULL);
	rp_pair_result_init(&rt, NULL, NULL);
	assert_int_equal(rp_engine_ep_create(&cfg, RP_ROLE_WRITER, &port_a, &rw, &w), 0);
	assert_int_equal(fk_max_cqe, (16 + 1) * 8 + 1);
	assert_int_equal(rp_engine_ep_create(&cfg, RP_ROLE_TARGET, &port_b, &rt, &t), 0);
	assert_int_equal(fk_n_mr_access, 2);
	assert_int_equal(fk_mr_access[0] & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC), 0);
	assert_int_equal(fk_mr_access[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(fk_n_qp_access, 16);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(fk_qp_access[i], 0);
		assert_int_equal(fk_qp_access[8 + i], IBV_ACCESS_REMOTE_WRITE);
	}
	rp_engine_ep_info(w, 1, &iw);
	rp_engine_ep_info(t, 1, &it);
	assert_int_equal(iw.rkey, 0);
	assert_true(iw.addr == 0 && iw.buf_len == 0);
	assert_true(it.rkey != 0 && it.buf_len == 4096);
	rp_engine_ep_destroy(t);
	rp_engine_ep_destroy(w);
	assert_true(fk_all_released());
}

/* One rate table, data rates: 4X EDR is 100 Gb/s (not 103.125); a soft device is marked on both
 * sides, the peer's through the wire. */
static void test_rate_and_soft(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	fk_active_width = 2;     /* 4X */
	fk_active_speed = 32;    /* EDR */
	fk_vendor_id = 0xffffff; /* rxe */
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_float_equal(w.src.link_gbps, 100.0, 1e-9);
	assert_float_equal(w.dst.link_gbps, 100.0, 1e-9);
	assert_float_equal(t.src.link_gbps, 100.0, 1e-9);
	assert_true(w.src.soft && w.dst.soft && t.src.soft && t.dst.soft);
	assert_float_equal(rp_port_data_rate(2, 32, NULL, 0), 100.0, 1e-9);
	assert_float_equal(rp_port_data_rate(2, 128, NULL, 0), 400.0, 1e-9);
	assert_true(fk_all_released());
}

/* A soft device whose vendor id is not one of the known ones (kernels differ in what rxe reports)
 * is still soft when sysfs lists it without a "device" link; with the link it is hardware. */
static void test_soft_by_sysfs(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_mkdir(&fx, "class/infiniband/fake0/ports/1"), 0);
	small_cfg(&cfg);
	cfg.sysfs_root = fx.root;
	fk_vendor_id = 0x02c9;   /* not rxe's nor siw's */
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_true(w.src.soft && w.dst.soft && t.src.soft && t.dst.soft);

	assert_int_equal(rp_fx_symlink(&fx, "class/infiniband/fake0/device", "../../../devices/pci0000:00/0000:00:03.0"), 0);
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_false(w.src.soft || w.dst.soft || t.src.soft || t.dst.soft);
	rp_fx_destroy(&fx);
	assert_true(fk_all_released());
}

/* The link slows down for a while in the middle of the run: the slowest interval is found, and
 * where it starts (seconds into the measured run) is reported on both sides. (Before: never set.) */
static void test_interval_minimum_located(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.n_qps = 1;
	cfg.meas.cq_mod = 1;
	cfg.meas.warmup_iters = 0;
	cfg.meas.iters = 300;
	cfg.meas.interval_s = 0.05;
	fk_write_gap_s = 0.001;                   /* writes 1..100: 0.1 s */
	fk_slow_from = 101;                       /* writes 101..110: 20 ms each, 0.2 s */
	fk_slow_to = 111;
	fk_slow_gap_s = 0.02;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_true(w.gbps_min < w.gbps / 4);
	if (w.gbps_min_at_s < 0.05 || w.gbps_min_at_s > w.elapsed_s)
		fail_msg("slowest interval at %.3f s of %.3f", w.gbps_min_at_s, w.elapsed_s);
	assert_float_equal(t.gbps_min_at_s, w.gbps_min_at_s, 1e-12);
	assert_true(fk_all_released());
}

/* A --node longer than the name field, in a 2-byte script, is cut between characters: the names in
 * the result (both sides, one through the wire) are valid UTF-8. (Before: cut mid-character.) */
static void test_long_utf8_node(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;
	char node[3 * RP_NAME_MAX];
	struct rp_engine_port pa = port_a;

	(void)state;
	small_cfg(&cfg);
	node[0] = 'x';   /* "xy" then 2-byte characters: a cut at 63 bytes falls inside one */
	node[1] = 'y';
	for (size_t i = 2; i + 2 < sizeof(node); i += 2)
		memcpy(node + i, "\xc3\xa9", 2);   /* U+00E9 */
	node[sizeof(node) - 2] = '\0';
	pa.node = node;
	{
		struct rp_oob a, b;
		struct side_thread st = { .cfg = &cfg, .oob = &b };
		pthread_t tid;

		assert_int_equal(rp_oob_local_pair(&a, &b), 0);
		assert_int_equal(pthread_create(&tid, NULL, target_side, &st), 0);
		rp_engine_pair_run(&cfg, RP_ROLE_WRITER, &pa, &a, 0, &w);
		rp_oob_close(&a);
		pthread_join(tid, NULL);
		rp_oob_close(&b);
		t = st.res;
	}
	assert_int_equal(w.status, RP_ST_OK);
	assert_true(rp_str_is_clean(w.src.node));
	assert_true(rp_str_is_clean(t.src.node));
	assert_null(strchr(t.src.node, '?'));
	assert_true(strlen(w.src.node) >= RP_NAME_MAX - 3);
	assert_string_equal(w.src.node, t.src.node);
	assert_true(fk_all_released());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_fail_at_every_step, setup),
		cmocka_unit_test_setup(test_rtr_resolution, setup),
		cmocka_unit_test_setup(test_rtr_no_routable_gid, setup),
		cmocka_unit_test_setup(test_nccl_attributes, setup),
		cmocka_unit_test_setup(test_loopback_ok, setup),
		cmocka_unit_test_setup(test_loopback_counters, setup),
		cmocka_unit_test_setup(test_loopback_duration, setup),
		cmocka_unit_test_setup(test_wc_errors, setup),
		cmocka_unit_test_setup(test_data_mismatch, setup),
		cmocka_unit_test_setup(test_latency, setup),
		cmocka_unit_test_setup(test_unknown_device, setup),
		cmocka_unit_test_setup(test_no_gid, setup),
		cmocka_unit_test_setup(test_message_size_limits, setup),
		cmocka_unit_test_setup(test_least_privilege, setup),
		cmocka_unit_test_setup(test_rate_and_soft, setup),
		cmocka_unit_test_setup(test_soft_by_sysfs, setup),
		cmocka_unit_test_setup(test_long_utf8_node, setup),
		cmocka_unit_test_setup(test_interval_minimum_located, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
