/* test_retest.c: which pairs are measured again, with which ACK timeout, and how the attempts are
 * folded in and classified (flaky, confirmed, unconfirmed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "verdict/retest.h"

/* A measured pair: status st at gbps, its attempt recorded with qp_timeout. */
static void measured(struct rp_pair_result *r, enum rp_status st, double gbps, int qp_timeout)
{
	rp_pair_result_init(r, NULL, NULL);
	r->status = RP_ST_OK;
	r->gbps = r->gbps_min = gbps;
	if (st != RP_ST_OK)
		rp_pair_result_fail(r, st, "synthetic %s", rp_status_code(st));
	rp_pair_result_record_attempt(r, qp_timeout);
}

static void test_wanted(void **state)
{
	struct rp_pair_result r, again;

	(void)state;
	measured(&r, RP_ST_OK, 1, 14);
	assert_false(rp_retest_wanted(&r, 1));
	measured(&r, RP_ST_RTR, 0, 14);
	assert_true(rp_retest_wanted(&r, 1));
	assert_false(rp_retest_wanted(&r, 0));       /* --retest 0: one sample decides */
	measured(&r, RP_ST_INTERRUPTED, 0, 14);
	assert_false(rp_retest_wanted(&r, 1));       /* a stopped run is not measured again */
	measured(&r, RP_ST_RTR, 0, 14);
	measured(&again, RP_ST_RTR, 0, 14);
	rp_retest_merge(&r, &again);
	assert_false(rp_retest_wanted(&r, 1));
	assert_true(rp_retest_wanted(&r, 2));
}

/* A transport failure under the probe's short ACK timeout is retested with NCCL's; a pair below the
 * threshold keeps the probe's (a longer timeout only slows retransmissions on a lossy link), and a
 * timeout already longer is never lowered. */
static void test_cfg_timeout(void **state)
{
	struct rp_engine_cfg base, next;
	struct rp_pair_result r;

	(void)state;
	rp_engine_cfg_default(&base);
	base.qp.qp_timeout = 14;
	measured(&r, RP_ST_RETRY_EXCEEDED, 0, 14);
	rp_retest_cfg(&base, &r, &next);
	assert_int_equal(next.qp.qp_timeout, RP_RETEST_NCCL_QP_TIMEOUT);
	assert_int_equal(next.meas.msg_size, base.meas.msg_size);
	measured(&r, RP_ST_TIMEOUT, 0, 14);
	rp_retest_cfg(&base, &r, &next);
	assert_int_equal(next.qp.qp_timeout, RP_RETEST_NCCL_QP_TIMEOUT);
	/* a responder that mishandled a retransmission: retested as NCCL would run it */
	measured(&r, RP_ST_REMOTE_INVALID, 0, 14);
	rp_retest_cfg(&base, &r, &next);
	assert_int_equal(next.qp.qp_timeout, RP_RETEST_NCCL_QP_TIMEOUT);
	measured(&r, RP_ST_BELOW_THRESHOLD, 0.01, 14);
	rp_retest_cfg(&base, &r, &next);
	assert_int_equal(next.qp.qp_timeout, 14);
	measured(&r, RP_ST_RTR, 0, 14);
	rp_retest_cfg(&base, &r, &next);
	assert_int_equal(next.qp.qp_timeout, 14);
	base.qp.qp_timeout = 24;
	measured(&r, RP_ST_RETRY_EXCEEDED, 0, 24);
	rp_retest_cfg(&base, &r, &next);
	assert_int_equal(next.qp.qp_timeout, 24);
}

/* The engine recorded the first attempt as ok; the verdict then judged it below the threshold. The
 * merged history keeps that judgement, so a pass on the retest is flaky, not a clean pass. */
static void test_merge_keeps_judged_status(void **state)
{
	struct rp_pair_result r, again;
	char text[512];

	(void)state;
	measured(&r, RP_ST_OK, 0.014, 14);
	rp_pair_result_fail(&r, RP_ST_BELOW_THRESHOLD, "outlier");
	r.warnings = 1u << RP_WARN_NOMINAL_RATE;
	measured(&again, RP_ST_OK, 0.25, 14);
	rp_retest_merge(&r, &again);
	assert_int_equal(r.n_attempts, 2);
	assert_int_equal(r.attempts[0].status, RP_ST_BELOW_THRESHOLD);
	assert_string_equal(r.attempts[0].reason, "outlier");
	assert_int_equal(r.attempts[1].status, RP_ST_OK);
	assert_int_equal(r.status, RP_ST_OK);
	assert_true(r.gbps > 0.24);
	assert_int_equal(r.warnings, 0);             /* the verdict sets them again on the new sample */
	rp_retest_classify(&r, 1);
	assert_int_equal(r.confirm, RP_CONFIRM_FLAKY);
	assert_true(r.warnings & (1u << RP_WARN_FLAKY));
	rp_retest_describe(&r, text, sizeof(text));
	assert_non_null(strstr(text, "flaky: failed 1 of 2 attempts"));
	assert_non_null(strstr(text, "below_threshold 0.014 Gb/s with --qp-timeout 14"));
	assert_non_null(strstr(text, "ok 0.250 Gb/s"));
}

/* A front end or engine that recorded no attempt still gets both measurements in the history. */
static void test_merge_without_recorded_attempts(void **state)
{
	struct rp_pair_result r, again;

	(void)state;
	rp_pair_result_init(&r, NULL, NULL);
	rp_pair_result_fail(&r, RP_ST_RETRY_EXCEEDED, "first");
	rp_pair_result_init(&again, NULL, NULL);
	rp_pair_result_fail(&again, RP_ST_RETRY_EXCEEDED, "second");
	rp_retest_merge(&r, &again);
	assert_int_equal(r.n_attempts, 2);
	assert_string_equal(r.attempts[0].reason, "first");
	assert_string_equal(r.attempts[1].reason, "second");
	assert_int_equal(r.attempts[0].qp_timeout, -1);
	assert_string_equal(r.reason, "second");
}

/* A retest that failed before the peer named its endpoint (the target's port is down now: it refused
 * before sending its CONN) keeps the endpoints the first attempt learned, so the pair is still named
 * in the text and the reports. (Before: the writer reported "rxe0:1 -> :0".) One the retest names
 * wins. */
static void test_merge_keeps_endpoints(void **state)
{
	struct rp_pair_result r, again;

	(void)state;
	measured(&r, RP_ST_PORT_DOWN, 0, 14);
	snprintf(r.src.device, sizeof(r.src.device), "rxe0");
	r.src.port = 1;
	snprintf(r.dst.device, sizeof(r.dst.device), "rxe1");
	snprintf(r.dst.node, sizeof(r.dst.node), "target");
	r.dst.port = 1;
	measured(&again, RP_ST_NO_PORT, 0, 14);
	snprintf(again.src.device, sizeof(again.src.device), "rxe0");
	again.src.port = 2;
	rp_retest_merge(&r, &again);
	assert_int_equal(r.status, RP_ST_NO_PORT);
	assert_int_equal(r.n_attempts, 2);
	assert_string_equal(r.dst.device, "rxe1");
	assert_string_equal(r.dst.node, "target");
	assert_int_equal(r.dst.port, 1);
	assert_int_equal(r.src.port, 2);   /* named by the retest: its own */
}

/* Confirmed: every attempt failed, the deciding one under NCCL's timeout, and the text says so.
 * Unconfirmed: failed once, never measured again although a retest was asked for. */
static void test_classify_confirmed_unconfirmed(void **state)
{
	struct rp_pair_result r, again;
	char text[512];

	(void)state;
	measured(&r, RP_ST_RETRY_EXCEEDED, 0, 14);
	rp_retest_classify(&r, 1);
	assert_int_equal(r.confirm, RP_CONFIRM_UNCONFIRMED);
	rp_retest_describe(&r, text, sizeof(text));
	assert_non_null(strstr(text, "unconfirmed"));
	assert_non_null(strstr(text, "not measured again"));
	rp_retest_classify(&r, 0);
	assert_int_equal(r.confirm, RP_CONFIRM_CONFIRMED);

	measured(&again, RP_ST_RETRY_EXCEEDED, 0, RP_RETEST_NCCL_QP_TIMEOUT);
	rp_retest_merge(&r, &again);
	rp_retest_classify(&r, 1);
	assert_int_equal(r.confirm, RP_CONFIRM_CONFIRMED);
	assert_false(r.warnings & (1u << RP_WARN_FLAKY));
	rp_retest_describe(&r, text, sizeof(text));
	assert_non_null(strstr(text, "confirmed: failed 2 of 2 attempts"));
	assert_non_null(strstr(text, "retry_exceeded with --qp-timeout 20 (NCCL's)"));
	assert_non_null(strstr(text, "the last decided it"));

	/* a flaky bit left over from an earlier classification goes when the pair fails again */
	r.warnings |= 1u << RP_WARN_FLAKY;
	rp_retest_classify(&r, 1);
	assert_false(r.warnings & (1u << RP_WARN_FLAKY));

	/* a pair that passed the first time has no story */
	measured(&r, RP_ST_OK, 1, 14);
	rp_retest_classify(&r, 1);
	assert_int_equal(r.confirm, RP_CONFIRM_NONE);
	assert_string_equal(rp_retest_describe(&r, text, sizeof(text)), "");
}

/* The history is bounded: more retests than slots keep the first and overwrite the last. */
static void test_history_bounded(void **state)
{
	struct rp_pair_result r, again;

	(void)state;
	measured(&r, RP_ST_RTR, 0, 14);
	for (int k = 0; k < RP_MAX_ATTEMPTS + 2; k++) {
		measured(&again, RP_ST_RTR, 0, 14);
		rp_retest_merge(&r, &again);
	}
	assert_int_equal(r.n_attempts, RP_MAX_ATTEMPTS);
	assert_false(rp_retest_wanted(&r, RP_RETEST_MAX + 5));
}

/* A failure its endpoint's sample confirmed (the matrix's retest planner marks it: mx_retest.h) is
 * not wanted again, keeps its mark through every judgement while it fails, is a held failure, and
 * says how it was confirmed; judged a pass, it is a pass like any other. */
static void test_confirmed_by_endpoint(void **state)
{
	struct rp_pair_result r, again;
	char text[512];

	(void)state;
	measured(&r, RP_ST_BELOW_THRESHOLD, 40, 14);
	rp_retest_classify(&r, 1);
	assert_int_equal(r.confirm, RP_CONFIRM_UNCONFIRMED);
	assert_true(rp_retest_wanted(&r, 1));
	r.confirm = RP_CONFIRM_BY_ENDPOINT;
	assert_false(rp_retest_wanted(&r, 1));
	assert_false(rp_retest_wanted(&r, 3));
	rp_retest_classify(&r, 1);
	rp_retest_classify(&r, 1);
	assert_int_equal(r.confirm, RP_CONFIRM_BY_ENDPOINT);
	assert_true(rp_confirm_held(r.confirm));
	assert_false(rp_confirm_held(RP_CONFIRM_UNCONFIRMED));
	assert_string_equal(rp_confirm_code(r.confirm), "confirmed_by_endpoint");
	rp_retest_describe(&r, text, sizeof(text));
	assert_non_null(strstr(text, "confirmed_by_endpoint: failed 1 of 1 attempt ("));
	assert_non_null(strstr(text, "not measured again: a sample of its endpoint's failed pairs was"));
	/* measured again after all (a later set, --retest 2): its own attempts decide */
	measured(&again, RP_ST_BELOW_THRESHOLD, 40, 14);
	rp_retest_merge(&r, &again);
	rp_retest_classify(&r, 1);
	assert_int_equal(r.confirm, RP_CONFIRM_CONFIRMED);
	/* judged a pass (other thresholds): no mark */
	measured(&r, RP_ST_BELOW_THRESHOLD, 40, 14);
	r.confirm = RP_CONFIRM_BY_ENDPOINT;
	r.status = RP_ST_OK;
	rp_retest_classify(&r, 1);
	assert_int_equal(r.confirm, RP_CONFIRM_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wanted),
		cmocka_unit_test(test_cfg_timeout),
		cmocka_unit_test(test_merge_keeps_judged_status),
		cmocka_unit_test(test_merge_without_recorded_attempts),
		cmocka_unit_test(test_merge_keeps_endpoints),
		cmocka_unit_test(test_classify_confirmed_unconfirmed),
		cmocka_unit_test(test_history_bounded),
		cmocka_unit_test(test_confirmed_by_endpoint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
