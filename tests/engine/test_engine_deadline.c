/* test_engine_deadline.c: the engine's deadlines and the first-cause rule, both sides of a pair in
 * two threads over the verbs stand-in (verbs_standin.h): a silent peer, a slow but healthy link,
 * writes that vanish, a port that goes DOWN or flaps on either side, flushes as consequences, a lost
 * latency completion, a final write that never arrives, a writer that goes silent after READY, and a
 * stop request. Each deadline is asserted as the status the pair ends with, never as a time.
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

/* A peer that never speaks: the pair ends as peer_lost at the deadline, not later. */
static void test_silent_peer(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;
	struct rp_oob a, b;
	double t0;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 0.3;
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	t0 = rp_now();
	assert_int_equal(rp_engine_pair_run(&cfg, RP_ROLE_WRITER, &port_a, &a, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_PEER_LOST);
	assert_true(rp_now() - t0 < 2);
	rp_oob_close(&a);
	rp_oob_close(&b);
	assert_true(fk_all_released());
}

/* A slow but healthy link (one write completes every 50 ms) whose run takes longer than the old flat
 * cap (run_limit_s, as the matrix sets it: 4 x --timeout there): the writer's progress reports keep
 * the target waiting, and the pair is ok. (Before: the target timed out at the cap and tore its QP
 * down, and the writer then reported a transport error.) */
static void test_slow_link_ok(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 2;       /* generous: the test bed's CPUs are shared */
	cfg.run_limit_s = 1.0;
	cfg.meas.n_qps = 1;
	cfg.meas.cq_mod = 1;
	cfg.meas.iters = 50;
	fk_write_gap_s = 0.05;   /* (8 + 50 + 1) writes: about 3 s, three times the old cap */
	run_both(&cfg, &w, &t);
	if (w.status != RP_ST_OK || t.status != RP_ST_OK)
		fail_msg("slow link: writer %s (%s), target %s (%s)", rp_status_code(w.status), w.reason,
			 rp_status_code(t.status), t.reason);
	assert_true(w.verified && t.verified);
	assert_int_equal(w.iters, 50);
	assert_true(w.gbps_min_at_s >= 0 && w.gbps_min <= w.gbps);
	assert_int_equal(w.n_attempts, 1);
	assert_int_equal(w.attempts[0].status, RP_ST_OK);
	assert_true(fk_all_released());
}

/* Writes that vanish (no completion ever): no progress for --timeout is TIMEOUT on both sides, the
 * writer's (it saw it first-hand) is the cause; nobody calls it a transport error. */
static void test_no_progress_timed_out(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_drop_from = 40;
	run_both(&cfg, &w, &t);
	if (w.status != RP_ST_TIMEOUT || t.status != RP_ST_TIMEOUT)
		fail_msg("writer %s (%s), target %s (%s)", rp_status_code(w.status), w.reason, rp_status_code(t.status),
			 t.reason);
	assert_string_equal(w.reason, t.reason);
	assert_int_equal(w.cause_side, t.cause_side);
	assert_true(fk_all_released());
}

/* A writer waiting out a dead path naps between polls once 2 ms passed with no completion, a tenth of
 * the stall so far up to 10 ms: over the 1 s it waits, not the millions of polls of a loop without a
 * pause, which took a core from whatever ran beside it (the matrix runs a dead-endpoint confirmation
 * beside its bandwidth rounds), and from 0.1 s into the stall a poll every 10 ms. The count is of
 * both sides' polls: the target looks every 2 ms (about 450 in the 0.9 s), the writer about 90 more
 * (525 in all here), where writer naps of 0.2 ms made 3,600 in all and naps of at most 2 ms 860
 * (eight such writers a suspect made healthy pairs outliers on a 2-vCPU test bed with either). */
static void test_stalled_writer_naps(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;
	unsigned long polls;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_drop_from = 40;
	run_both(&cfg, &w, &t);
	polls = __atomic_load_n(&fk_polls, __ATOMIC_SEQ_CST);
	assert_int_equal(w.status, RP_ST_TIMEOUT);
	if (polls > 200000)
		fail_msg("%lu polls in a 1 s stall", polls);
	polls = __atomic_load_n(&fk_polls_late, __ATOMIC_SEQ_CST);
	if (polls > 650)
		fail_msg("%lu polls from 0.1 s into a 1 s stall on", polls);
	assert_true(fk_all_released());
}

/* The target's port goes DOWN mid-run (writes vanish from then on): the target's port check names
 * it, PORT_DOWN on both sides with the target as the cause; the writer's transport error, if it saw
 * one when the target's QP went away, is only the secondary view. (Before: timed_out.) */
static void test_port_down_first_cause(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_down_open = 2;        /* the target opens the second device */
	fk_down_queries = 1;     /* its set-up query sees ACTIVE, every later one DOWN */
	fk_drop_from = 60;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_PORT_DOWN);
	assert_int_equal(t.status, RP_ST_PORT_DOWN);
	assert_int_equal(w.cause_side, RP_SIDE_DST);
	assert_int_equal(t.cause_side, RP_SIDE_DST);
	assert_non_null(strstr(w.reason, "left ACTIVE"));
	assert_true(w.secondary.status == RP_ST_OK || w.secondary.status == RP_ST_RETRY_EXCEEDED);
	assert_true(fk_all_released());
}

/* A port that flapped (an async PORT_ERR, the port ACTIVE again by the next query) while the writes
 * stalled: PORT_DOWN named after the event, the target as the cause. (Before: timed_out.) */
static void test_port_error_event(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	assert_int_equal(pipe(fk_event_pipe), 0);
	fk_event_open = 2;
	assert_int_equal(write(fk_event_pipe[1], "e", 1), 1);
	fk_drop_from = 60;
	run_both(&cfg, &w, &t);
	close(fk_event_pipe[0]);
	close(fk_event_pipe[1]);
	fk_event_pipe[0] = fk_event_pipe[1] = -1;
	assert_int_equal(t.status, RP_ST_PORT_DOWN);
	assert_int_equal(w.status, RP_ST_PORT_DOWN);
	assert_int_equal(w.cause_side, RP_SIDE_DST);
	assert_non_null(strstr(t.reason, "async event"));
	assert_true(fk_all_released());
}

/* The writer's own port goes DOWN while its writes stall: PORT_DOWN with the writer as the cause. */
static void test_writer_port_down(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_down_open = 1;
	fk_down_queries = 1;
	fk_drop_from = 60;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_PORT_DOWN);
	assert_int_equal(t.status, RP_ST_PORT_DOWN);
	assert_int_equal(w.cause_side, RP_SIDE_SRC);
	assert_int_equal(t.cause_side, RP_SIDE_SRC);
	assert_true(fk_all_released());
}

/* The writer's queue flushes because the target's port went down: FLUSHED is a consequence, the
 * target's PORT_DOWN is the cause whichever side reports; FLUSHED is the secondary view.
 * (Before: a flush was peer_lost and became the pair's status.) */
static void test_flush_is_secondary(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	fk_down_open = 2;
	fk_down_queries = 1;
	fk_bad_write_at = 60;
	fk_bad_status = IBV_WC_WR_FLUSH_ERR;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_PORT_DOWN);
	assert_int_equal(t.status, RP_ST_PORT_DOWN);
	assert_int_equal(w.cause_side, RP_SIDE_DST);
	assert_int_equal(t.cause_side, RP_SIDE_DST);
	assert_int_equal(w.secondary.status, RP_ST_FLUSHED);
	assert_int_equal(t.secondary.status, RP_ST_FLUSHED);
	assert_non_null(strstr(w.secondary.reason, ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR)));
	assert_true(fk_all_released());
}

/* A target that sees nothing wrong adopts the writer's failure: one status, the writer's side. */
static void test_writer_cause(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	fk_bad_write_at = 50;
	fk_bad_status = IBV_WC_REM_INV_REQ_ERR;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_REMOTE_INVALID);
	assert_int_equal(t.status, RP_ST_REMOTE_INVALID);
	assert_int_equal(w.cause_side, RP_SIDE_SRC);
	assert_int_equal(t.cause_side, RP_SIDE_SRC);
	assert_int_equal(w.secondary.status, RP_ST_OK);
	assert_int_equal(t.n_attempts, 1);
	assert_int_equal(t.attempts[0].status, RP_ST_REMOTE_INVALID);
	assert_int_equal(t.attempts[0].side, RP_SIDE_SRC);
	assert_true(fk_all_released());
}

/* Latency mode: the last ping lands but its completion is lost. The drain waits for every signalled
 * write and ends as TIMEOUT. (Before: it left on the first empty poll and the pair passed.) */
static void test_latency_drain_waits(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	cfg.meas.mode = RP_MODE_LAT;
	cfg.meas.msg_size = 64;
	cfg.meas.iters = 100;
	cfg.meas.n_qps = 1;
	fk_drop_lat_at = 2 * (8 + 100) - 1;   /* the writer's last ping (writes alternate writer, target) */
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_TIMEOUT);
	if (!strstr(r.reason, "latency writes"))
		fail_msg("reason: %s", r.reason);
	assert_int_equal(r.cause_side, RP_SIDE_SRC);
	assert_true(fk_all_released());
}

/* The final write's receive never completes although the writer reported its end: TIMEOUT on the
 * target, within one --timeout of the writer's report. */
static void test_final_never_arrives(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_drop_recv = true;
	run_both(&cfg, &w, &t);
	assert_int_equal(t.status, RP_ST_TIMEOUT);
	assert_int_equal(t.cause_side, RP_SIDE_DST);
	assert_non_null(strstr(t.reason, "final write"));
	assert_int_equal(w.status, RP_ST_TIMEOUT);
	assert_true(fk_all_released());
}

/* A writer played by hand: a valid CONN (with an hour as its progress period) and READY, then
 * PROGRESS reports that never advance. "No progress" is what counts: the target ends TIMEOUT within
 * one of its own --timeout and says so. */
static void test_silent_after_ready(void **state)
{
	struct hand_target h;
	struct rp_engine_ep *w = NULL;
	struct rp_pair_result rw;
	struct rp_engine_msg m, in;
	struct rp_oob a, b;
	pthread_t tid;
	bool got_result = false;

	(void)state;
	small_cfg(&h.cfg);
	h.cfg.timeout_s = 0.5;
	h.oob = &b;
	rp_pair_result_init(&rw, NULL, NULL);
	assert_int_equal(rp_engine_ep_create(&h.cfg, RP_ROLE_WRITER, &port_a, &rw, &w), 0);
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(pthread_create(&tid, NULL, hand_target_main, &h), 0);
	hand_msg(&m, RP_MSG_CONN);
	rp_engine_ep_info(w, 42, &m.u.conn);
	m.u.conn.progress_s = 3600;   /* a writer that promises reports once an hour buys no extra time */
	assert_int_equal(rp_oob_send(&a, &m, sizeof(m), rp_now() + 2), 0);
	assert_int_equal(rp_oob_recv(&a, &in, sizeof(in), rp_now() + 2), 0);
	assert_int_equal(rp_engine_msg_validate(&in, sizeof(in), RP_MSG_CONN, NULL, 0), 0);
	hand_msg(&m, RP_MSG_READY);
	assert_int_equal(rp_oob_send(&a, &m, sizeof(m), rp_now() + 2), 0);
	assert_int_equal(rp_oob_recv(&a, &in, sizeof(in), rp_now() + 2), 0);
	assert_int_equal(in.type, RP_MSG_READY);
	/* reports that say nothing new, for up to 40 x --timeout: the target's RESULT must come first */
	for (int i = 0; i < 160 && !got_result; i++) {
		hand_msg(&m, RP_MSG_PROGRESS);
		m.u.progress.completed = 5;
		rp_oob_send(&a, &m, sizeof(m), rp_now() + 1);
		got_result = rp_oob_recv(&a, &in, sizeof(in), rp_now() + h.cfg.timeout_s / 4) == 0;
	}
	assert_true(got_result);
	assert_int_equal(in.type, RP_MSG_RESULT);
	assert_int_equal(in.status, RP_ST_TIMEOUT);
	rp_oob_close(&a);
	pthread_join(tid, NULL);
	rp_oob_close(&b);
	assert_int_equal(h.res.status, RP_ST_TIMEOUT);
	assert_non_null(strstr(h.res.reason, "no progress for"));
	rp_engine_ep_destroy(w);
	assert_true(fk_all_released());
}

static void *writer_side(void *arg)
{
	struct side_thread *t = arg;

	t->rc = rp_engine_pair_run(t->cfg, RP_ROLE_WRITER, &port_a, t->oob, 0, &t->res);
	return NULL;
}

/* A stop that arrives while the engine waits for the peer in exchange() (here the writer, for the
 * target's CONN: the target received the writer's and then the process was asked to stop) ends the
 * pair INTERRUPTED: the wait cut short says nothing about the peer, it is not peer_lost. */
static void test_stop_during_exchange(void **state)
{
	struct rp_engine_cfg cfg;
	struct side_thread st = { .cfg = &cfg };
	struct rp_engine_msg in;
	struct rp_oob a, b;
	pthread_t tid;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 0.5;
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	st.oob = &a;
	assert_int_equal(pthread_create(&tid, NULL, writer_side, &st), 0);
	assert_int_equal(rp_oob_recv(&b, &in, sizeof(in), rp_now() + 2), 0);
	assert_int_equal(rp_engine_msg_validate(&in, sizeof(in), RP_MSG_CONN, NULL, 0), 0);
	rp_stop_request(SIGTERM);   /* and no answer */
	pthread_join(tid, NULL);
	rp_stop_reset();
	rp_oob_close(&a);
	rp_oob_close(&b);
	if (st.res.status != RP_ST_INTERRUPTED)
		fail_msg("writer %s '%s'", rp_status_code(st.res.status), st.res.reason);
	assert_non_null(strstr(st.res.reason, "signal 15"));
	assert_true(fk_all_released());
}

/* A stop request (SIGINT/SIGTERM) ends the pair as INTERRUPTED, not as a failure of the link. */
static void test_interrupted(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	rp_stop_request(SIGINT);
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
	rp_stop_reset();
	assert_int_equal(r.status, RP_ST_INTERRUPTED);
	assert_true(fk_all_released());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_silent_peer, setup),
		cmocka_unit_test_setup(test_slow_link_ok, setup),
		cmocka_unit_test_setup(test_no_progress_timed_out, setup),
		cmocka_unit_test_setup(test_port_down_first_cause, setup),
		cmocka_unit_test_setup(test_flush_is_secondary, setup),
		cmocka_unit_test_setup(test_stalled_writer_naps, setup),
		cmocka_unit_test_setup(test_port_error_event, setup),
		cmocka_unit_test_setup(test_writer_port_down, setup),
		cmocka_unit_test_setup(test_writer_cause, setup),
		cmocka_unit_test_setup(test_latency_drain_waits, setup),
		cmocka_unit_test_setup(test_final_never_arrives, setup),
		cmocka_unit_test_setup(test_silent_after_ready, setup),
		cmocka_unit_test_setup(test_interrupted, setup),
		cmocka_unit_test_setup(test_stop_during_exchange, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
