/* test_session_run.c: a pair and its retests on one side channel (lib/session/session_run.c), both sessions in two
 * threads over a socketpair, the engine over the verbs stand-in (verbs_standin.h).
 *
 * What is checked: the writer's closing DONE goes only to a target that still waits for one. After
 * the last retest the target has left (its loop ends when no retest is left) and, over TCP, has
 * closed its socket: a DONE then met a closed socket ("Broken pipe" after the last retest). Here
 * the socket stays open, so a DONE sent too many is still there to read.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "engine_harness.h"
#include "base/log.h"
#include "oob/oob.h"
#include "session/session_run.h"
#include "session/session_wire.h"
#include "base/util.h"
#include "verbs_standin.h"

static int between_errors;   /* "no word from ... between attempts": a side waited for a NEXT in vain */

static void count_sink(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == RP_LOG_ERROR && strstr(msg, "between attempts"))
		__atomic_add_fetch(&between_errors, 1, __ATOMIC_RELAXED);
}

struct target_run {
	const struct rp_engine_cfg *cfg;
	struct rp_sw_hello hello;
	struct rp_oob *oob;
	struct rp_pair_result res;
};

static void *target_main(void *arg)
{
	struct target_run *t = arg;

	rp_session_target(t->cfg, &t->hello, &port_b, t->oob, &t->res);
	return NULL;
}

/* Run the two sessions; true when a message of the writer was left unread by the target. */
static bool session(const struct rp_engine_cfg *cfg, unsigned retest, struct rp_pair_result *w,
		    struct rp_pair_result *t)
{
	struct target_run tr = { .cfg = cfg };
	struct rp_verdict_cfg vcfg;
	struct rp_sw_msg left;
	struct rp_oob a, b;
	pthread_t tid;
	bool leftover;

	tr.hello.retest = retest;
	rp_session_vcfg(&tr.hello, &vcfg);
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	tr.oob = &b;
	assert_int_equal(pthread_create(&tid, NULL, target_main, &tr), 0);
	rp_session_writer(cfg, &vcfg, retest, &port_a, &a, w);
	pthread_join(tid, NULL);
	leftover = rp_oob_recv(&b, &left, sizeof(left), rp_now() + 0.2) == 0;
	rp_oob_close(&a);
	rp_oob_close(&b);
	*t = tr.res;
	return leftover;
}

static int pairsess_setup(void **state)
{
	setup(state);
	between_errors = 0;
	rp_log_set_sink(count_sink, NULL);
	return 0;
}

/* A pair that passes: the target waits for the writer's word, which is DONE, and it comes. */
static void test_done_when_target_waits(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	assert_false(session(&cfg, 1, &w, &t));
	assert_int_equal(w.status, RP_ST_OK);
	assert_int_equal(t.status, RP_ST_OK);
	assert_int_equal(w.n_attempts, 1);
	assert_int_equal(between_errors, 0);
	assert_true(fk_all_released());
}

/* A pair that fails on every attempt (the port's largest message is smaller than the message):
 * after the last retest the target does not wait for a DONE, and none is sent. */
static void test_no_done_after_last_retest(void **state)
{
	for (unsigned retest = 0; retest <= 2; retest++) {
		struct rp_engine_cfg cfg;
		struct rp_pair_result w, t;

		pairsess_setup(state);
		small_cfg(&cfg);
		fk_max_msg_sz = 1024;
		if (session(&cfg, retest, &w, &t))
			fail_msg("--retest %u: the writer sent a message after the target's last attempt", retest);
		assert_int_equal(w.status, RP_ST_SETUP);
		assert_int_equal(w.n_attempts, retest + 1);
		assert_int_equal(t.n_attempts, retest + 1);
		assert_int_equal(between_errors, 0);
		assert_true(fk_all_released());
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_done_when_target_waits, pairsess_setup),
		cmocka_unit_test_setup(test_no_done_after_last_retest, pairsess_setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
