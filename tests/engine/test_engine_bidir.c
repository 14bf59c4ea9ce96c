/* test_engine_bidir.c: --bidir (both directions of a pair at once, each verified and reported on its
 * own) and the MTU probe after a pair that moved nothing (mtu_blackhole), over the verbs stand-in
 * (verbs_standin.h): a device whose writes vanish, writes longer than a limit that vanish.
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

/* --bidir in loopback: both directions run, each verified with its own measurement, over twice the
 * writes; the pair is ok. (Before: there was no reverse direction, reverse.measured stayed false.) */
static void test_bidir_loopback_both_verified(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.bidir = 1;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	if (r.status != RP_ST_OK || r.reverse.status != RP_ST_OK)
		fail_msg("forward %s (%s), reverse %s (%s)", rp_status_code(r.status), r.reason,
			 rp_status_code(r.reverse.status), r.reverse.reason);
	assert_true(r.verified);
	assert_int_equal(r.iters, 200);
	assert_true(r.reverse.measured);
	assert_false(r.reverse.folded);
	assert_true(r.reverse.verified);
	assert_int_equal(r.reverse.bad_offset, -1);
	assert_int_equal(r.reverse.iters, 200);
	assert_int_equal(r.reverse.bytes, 200 * 4096);
	assert_true(r.reverse.gbps > 0);
	assert_true(rp_pair_gbps_sum(&r) > r.gbps);
	/* each direction: warm-up (8) + measured (200) + its final WRITE WITH IMM */
	assert_int_equal(fk_writes, 2 * (8 + 200 + 1));
	assert_int_equal(r.n_attempts, 1);
	assert_true(fk_all_released());
}

/* --bidir over rp_engine_pair_run on both sides (the pair path: the target learns from the writer's
 * CONN that it writes too): the forward writer's writes vanish (its device is the first opened), the
 * reverse direction's arrive. Both sides report the same two outcomes: forward timed_out, reverse ok
 * and verified; the pair fails on its forward direction and no MTU probe runs (not for bidir).
 * (Before: the target never wrote, reverse.measured stayed false.) */
static void test_bidir_directions_differ(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 3;   /* the reverse completes while the forward waits out its deadline: 1 s was too
	                      * short for the reverse's exchange on a host loaded with twice its cores */
	cfg.meas.bidir = 1;
	fk_drop_open = 1;
	run_both(&cfg, &w, &t);
	if (w.status != RP_ST_TIMEOUT || t.status != RP_ST_TIMEOUT)
		fail_msg("forward: writer %s (%s), target %s (%s)", rp_status_code(w.status), w.reason,
			 rp_status_code(t.status), t.reason);
	for (int k = 0; k < 2; k++) {
		const struct rp_pair_result *r = k ? &t : &w;

		assert_true(r->reverse.measured);
		if (r->reverse.status != RP_ST_OK)
			fail_msg("reverse on the %s side: %s (%s)", k ? "target" : "writer",
				 rp_status_code(r->reverse.status), r->reverse.reason);
		assert_true(r->reverse.verified);
		assert_int_equal(r->reverse.iters, 200);
		assert_false(r->reverse.folded);
		assert_null(strstr(r->reason, "probe"));
	}
	assert_true(fk_all_released());
}

/* A path MTU black hole (writes longer than 512 bytes vanish; the stand-in's ports are at MTU 1024):
 * the 4096-byte pair completes nothing and times out, a 64-byte probe write arrives, a 1024-byte one
 * does not: mtu_blackhole on both sides, the original reason kept, one attempt. (Before: timed_out.) */
static void test_mtu_blackhole(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_drop_over = 512;
	run_both(&cfg, &w, &t);
	if (w.status != RP_ST_MTU_BLACKHOLE || t.status != RP_ST_MTU_BLACKHOLE)
		fail_msg("writer %s (%s), target %s (%s)", rp_status_code(w.status), w.reason, rp_status_code(t.status),
			 t.reason);
	assert_string_equal(rp_status_code(RP_ST_MTU_BLACKHOLE), "mtu_blackhole");
	assert_non_null(strstr(w.reason, "a 64-byte write arrives, a 1024-byte one"));
	/* The original time-out is kept: the writer's (no completion) or the target's (no progress),
	 * whichever deadline fired first; under load either side can be first. */
	if (!strstr(w.reason, "first: no completion on") &&
	    !(strstr(w.reason, "first: ") && strstr(w.reason, ": no progress for ")))
		fail_msg("reason: %s", w.reason);
	assert_string_equal(w.reason, t.reason);
	assert_int_equal(w.n_attempts, 1);
	assert_int_equal(w.attempts[0].status, RP_ST_MTU_BLACKHOLE);
	assert_true(fk_all_released());
}

/* Everything vanishes, small writes too: the probe's small write does not arrive, the pair stays
 * timed_out (no MTU write is tried), the reason says what the probe saw. In loopback, with the probe
 * after the pair and beside it (cfg.mtucheck_beside): the same outcome. */
static void test_mtu_probe_all_dropped(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	for (int beside = 0; beside < 2; beside++) {
		fk_reset();
		small_cfg(&cfg);
		cfg.timeout_s = 1;
		cfg.mtucheck_beside = beside;
		fk_drop_from = 1;
		assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
		if (r.status != RP_ST_TIMEOUT)
			fail_msg("beside %d: %s (%s)", beside, rp_status_code(r.status), r.reason);
		assert_non_null(strstr(r.reason, "a 64-byte probe write did not arrive either"));
		assert_true(fk_all_released());
	}
}

/* Nothing vanishes (the limit is above every write): the pair passes and no probe write is made. */
static void test_mtu_probe_not_when_ok(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	fk_drop_over = 1u << 20;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.status, RP_ST_OK);
	assert_int_equal(fk_writes, 8 + 200 + 1);
	assert_true(fk_all_released());
}

/* A pair that moved data before its writes vanished is not probed: timed_out as before. */
static void test_mtu_probe_not_after_progress(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_drop_from = 40;
	rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r);
	assert_int_equal(r.status, RP_ST_TIMEOUT);
	assert_null(strstr(r.reason, "probe"));
	assert_true(fk_all_released());
}

/* cfg.no_mtucheck (a screening probe, lib/matrix/mx_sweep.h): the same black hole as test_mtu_blackhole
 * stays timed_out, no probe write is made and the reason does not mention one. */
static void test_mtu_probe_off(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;
	uint64_t before;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	cfg.no_mtucheck = true;
	fk_drop_over = 512;
	before = fk_writes;
	run_both(&cfg, &w, &t);
	if (w.status != RP_ST_TIMEOUT)
		fail_msg("writer %s (%s)", rp_status_code(w.status), w.reason);
	assert_null(strstr(w.reason, "probe"));
	assert_null(strstr(t.reason, "probe"));
	assert_true(fk_writes - before <= 8 + 200 + 1);   /* the run's own writes, none more */
	assert_true(fk_all_released());
}

/* cfg.mtucheck_beside (loopback): the black hole of test_mtu_blackhole is found by the probe's
 * sequences running beside the pair, not after it: its 64-byte write is posted before any QP was
 * destroyed (after the pair, the pair's were), and the outcome is the same as after: mtu_blackhole,
 * the original reason kept, one attempt. (Before: the flag did not exist; the probe ran after the
 * pair had torn its QPs down.) */
static void test_mtu_probe_beside_blackhole(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 2;   /* the pair's QPs stay this long: the probe beside it has written by then */
	cfg.mtucheck_beside = true;
	fk_drop_over = 512;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
	if (r.status != RP_ST_MTU_BLACKHOLE)
		fail_msg("%s (%s)", rp_status_code(r.status), r.reason);
	assert_non_null(strstr(r.reason, "a 64-byte write arrives, a 1024-byte one"));
	assert_non_null(strstr(r.reason, "; first: "));
	assert_int_equal(fk_small_qps_destroyed, 0);
	assert_int_equal(r.n_attempts, 1);
	assert_int_equal(r.attempts[0].status, RP_ST_MTU_BLACKHOLE);
	assert_true(fk_all_released());
}

/* Beside the pair, the probe's outcome is dropped when the pair's does not call for it: a pair that
 * passes stays a plain pass, and one that moved data before its writes vanished stays timed_out with
 * no word of a probe, though the probe's writes were made (its small write is counted). */
static void test_mtu_probe_beside_only_when_wanted(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.mtucheck_beside = true;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	if (r.status != RP_ST_OK)
		fail_msg("%s (%s)", rp_status_code(r.status), r.reason);
	assert_string_equal(r.reason, "");
	assert_int_equal(r.iters, 200);
	assert_true(fk_small_qps_destroyed >= 0);   /* the probe wrote, and was dropped */
	assert_true(fk_all_released());

	fk_reset();
	cfg.timeout_s = 1;
	fk_drop_from = 40;
	rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r);
	if (r.status != RP_ST_TIMEOUT)
		fail_msg("%s (%s)", rp_status_code(r.status), r.reason);
	assert_null(strstr(r.reason, "probe"));
	assert_true(fk_all_released());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_bidir_loopback_both_verified, setup),
		cmocka_unit_test_setup(test_bidir_directions_differ, setup),
		cmocka_unit_test_setup(test_mtu_blackhole, setup),
		cmocka_unit_test_setup(test_mtu_probe_all_dropped, setup),
		cmocka_unit_test_setup(test_mtu_probe_not_when_ok, setup),
		cmocka_unit_test_setup(test_mtu_probe_not_after_progress, setup),
		cmocka_unit_test_setup(test_mtu_probe_off, setup),
		cmocka_unit_test_setup(test_mtu_probe_beside_blackhole, setup),
		cmocka_unit_test_setup(test_mtu_probe_beside_only_when_wanted, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
