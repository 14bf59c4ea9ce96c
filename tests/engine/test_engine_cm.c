/* test_engine_cm.c: pair --cm (lib/engine/engine_cm.c) end to end through the engine, both sides in two
 * threads, over the rdmacm side of the verbs stand-in (verbs_standin.h): a good connection that
 * carries the data path, each CM error event with its own status and reason, each wait whose event
 * never comes (timed_out within --timeout, never a hang), slow events that still connect, and the
 * first cause when one side's CM fails and the other only waits.
 */
#include <rdma/rdma_cma.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "engine_harness.h"
#include "verbs_standin.h"

static void cm_cfg(struct rp_engine_cfg *cfg)
{
	small_cfg(cfg);
	cfg->cm = true;
	cfg->timeout_s = 1;
}

static void assert_reason_has(const char *reason, const char *word)
{
	if (!strstr(reason, word))
		fail_msg("reason '%s' does not name '%s'", reason, word);
}

/* A good connection: every QP goes through the whole CM exchange and the data path verifies. */
static void test_cm_ok(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	cm_cfg(&cfg);
	cfg.meas.n_qps = 3;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_int_equal(t.status, RP_ST_OK);
	assert_true(t.verified);
	assert_true(w.gbps > 0);
	assert_int_equal(fk_cm_delivered[RDMA_CM_EVENT_ADDR_RESOLVED], 3);
	assert_int_equal(fk_cm_delivered[RDMA_CM_EVENT_ROUTE_RESOLVED], 3);
	assert_int_equal(fk_cm_delivered[RDMA_CM_EVENT_CONNECT_REQUEST], 3);
	assert_int_equal(fk_cm_delivered[RDMA_CM_EVENT_CONNECT_RESPONSE], 3);
	assert_int_equal(fk_cm_delivered[RDMA_CM_EVENT_ESTABLISHED], 3);
	/* the probe's own ACK timeout and retry count, not librdmacm's */
	assert_int_equal(fk_rts.timeout, cfg.qp.qp_timeout);
	assert_int_equal(fk_rts.retry_cnt, cfg.qp.retry_cnt);
	assert_true(fk_all_released());
}

struct cm_case {
	enum rdma_cm_event_type on;      /* the event the fault hits */
	enum rdma_cm_event_type as;      /* what arrives instead */
	enum rp_status status;
	enum rp_side cause;
};

/* Each error event in place of the one a side waits for: its own status, the event named in the
 * reason, the same result on both sides, the side that saw it as the cause. */
static void test_cm_error_events(void **state)
{
	static const struct cm_case cases[] = {
		{ RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ADDR_ERROR, RP_ST_RESOLVE, RP_SIDE_SRC },
		{ RDMA_CM_EVENT_ROUTE_RESOLVED, RDMA_CM_EVENT_ROUTE_ERROR, RP_ST_RESOLVE, RP_SIDE_SRC },
		{ RDMA_CM_EVENT_CONNECT_RESPONSE, RDMA_CM_EVENT_UNREACHABLE, RP_ST_RESOLVE, RP_SIDE_SRC },
		{ RDMA_CM_EVENT_CONNECT_RESPONSE, RDMA_CM_EVENT_REJECTED, RP_ST_RTR, RP_SIDE_SRC },
		{ RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_DISCONNECTED, RP_ST_PEER_LOST, RP_SIDE_DST },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cm_case *k = &cases[i];
		struct rp_engine_cfg cfg;
		struct rp_pair_result w, t;

		setup(NULL);
		cm_cfg(&cfg);
		fk_cm_fault_on = (int)k->on;
		fk_cm_fault = FK_CM_REPLACE;
		fk_cm_replace_with = (int)k->as;
		fk_cm_replace_status = -110;
		run_both(&cfg, &w, &t);
		if (w.status != k->status || t.status != k->status || w.cause_side != k->cause || t.cause_side != k->cause)
			fail_msg("%s in place of %s: writer %s (cause %d) '%s', target %s (cause %d) '%s'",
				 rdma_event_str(k->as), rdma_event_str(k->on), rp_status_code(w.status), w.cause_side,
				 w.reason, rp_status_code(t.status), t.cause_side, t.reason);
		assert_reason_has(w.reason, rdma_event_str(k->as));
		assert_reason_has(w.reason, rdma_event_str(k->on));
		assert_string_equal(w.reason, t.reason);
		assert_true(fk_all_released());
	}
}

/* The target's own CM fails (CONNECT_ERROR in place of the request): the writer only waits for its
 * answer. The first cause is the target's error on both sides, not the writer's
 * wait running out. */
static void test_cm_first_cause_target(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	cm_cfg(&cfg);
	fk_cm_fault_on = RDMA_CM_EVENT_CONNECT_REQUEST;
	fk_cm_fault = FK_CM_REPLACE;
	fk_cm_replace_with = RDMA_CM_EVENT_CONNECT_ERROR;
	fk_cm_replace_status = -110;
	run_both(&cfg, &w, &t);
	if (w.status != RP_ST_RTR || t.status != RP_ST_RTR || w.cause_side != RP_SIDE_DST || t.cause_side != RP_SIDE_DST)
		fail_msg("writer %s (cause %d) '%s' [secondary %s '%s'], target %s (cause %d) '%s'",
			 rp_status_code(w.status), w.cause_side, w.reason, rp_status_code(w.secondary.status),
			 w.secondary.reason, rp_status_code(t.status), t.cause_side, t.reason);
	assert_reason_has(w.reason, "RDMA_CM_EVENT_CONNECT_ERROR");
	assert_true(fk_all_released());
}

struct never_case {
	enum rdma_cm_event_type on;      /* this event never comes */
	enum rp_side cause;
	const char *named;               /* the wait the pair's reason names */
	unsigned n_qps;
};

/* Each wait whose event never comes ends timed_out (within --timeout: the test would hang
 * otherwise), naming the event that did not come, on both sides. When both sides time out the
 * writer's wait is the first cause (the target's wait for a request follows from it). */
static void test_cm_event_never_comes(void **state)
{
	static const struct never_case cases[] = {
		{ RDMA_CM_EVENT_ADDR_RESOLVED, RP_SIDE_SRC, "ADDR_RESOLVED", 2 },
		{ RDMA_CM_EVENT_ROUTE_RESOLVED, RP_SIDE_SRC, "ROUTE_RESOLVED", 2 },
		{ RDMA_CM_EVENT_CONNECT_REQUEST, RP_SIDE_SRC, "CONNECT_RESPONSE", 2 },
		{ RDMA_CM_EVENT_CONNECT_RESPONSE, RP_SIDE_SRC, "CONNECT_RESPONSE", 2 },
		/* one QP: with more, the writer's wait for the next QP's response (the target, stuck on
		 * the first, never answers it) ends first and names CONNECT_RESPONSE */
		{ RDMA_CM_EVENT_ESTABLISHED, RP_SIDE_DST, "ESTABLISHED", 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct never_case *k = &cases[i];
		struct rp_engine_cfg cfg;
		struct rp_pair_result w, t;

		setup(NULL);
		cm_cfg(&cfg);
		cfg.meas.n_qps = k->n_qps;
		fk_cm_fault_on = (int)k->on;
		fk_cm_fault = FK_CM_NEVER;
		run_both(&cfg, &w, &t);
		if (w.status != RP_ST_TIMEOUT || t.status != RP_ST_TIMEOUT || w.cause_side != k->cause ||
		    t.cause_side != k->cause)
			fail_msg("no %s: writer %s (cause %d) '%s', target %s (cause %d) '%s'", rdma_event_str(k->on),
				 rp_status_code(w.status), w.cause_side, w.reason, rp_status_code(t.status),
				 t.cause_side, t.reason);
		assert_reason_has(w.reason, k->named);
		assert_string_equal(w.reason, t.reason);
		assert_true(fk_all_released());
	}
}

/* Events that come late but within --timeout each: the pair connects and passes. */
static void test_cm_slow_events_ok(void **state)
{
	static const enum rdma_cm_event_type slow[] = {
		RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ROUTE_RESOLVED, RDMA_CM_EVENT_CONNECT_REQUEST,
		RDMA_CM_EVENT_CONNECT_RESPONSE, RDMA_CM_EVENT_ESTABLISHED,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(slow) / sizeof(slow[0]); i++) {
		struct rp_engine_cfg cfg;
		struct rp_pair_result w, t;

		setup(NULL);
		cm_cfg(&cfg);
		cfg.timeout_s = 2;   /* the writer's connect (both QPs) waits 0.4 s in all for a late event */
		fk_cm_fault_on = (int)slow[i];
		fk_cm_fault = FK_CM_DELAY;
		fk_cm_delay_s = 0.2;
		run_both(&cfg, &w, &t);
		if (w.status != RP_ST_OK || t.status != RP_ST_OK)
			fail_msg("%s late by 0.2 s: writer %s '%s', target %s '%s'", rdma_event_str(slow[i]),
				 rp_status_code(w.status), w.reason, rp_status_code(t.status), t.reason);
		assert_int_equal(fk_cm_delivered[slow[i]], cfg.meas.n_qps);
		assert_true(fk_all_released());
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_cm_ok, setup),
		cmocka_unit_test_setup(test_cm_error_events, setup),
		cmocka_unit_test_setup(test_cm_first_cause_target, setup),
		cmocka_unit_test_setup(test_cm_event_never_comes, setup),
		cmocka_unit_test_setup(test_cm_slow_events_ok, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
