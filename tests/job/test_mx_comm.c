/* test_mx_comm.c: the envelope's checks over the in-process transport (tests/mx_tcomm): a control
 * receive of round R takes round R's message from behind an earlier round's and another run's; a
 * side channel drops another pair's message and a duplicate (same sequence number) and still gets
 * every message once, in order; -ETIMEDOUT consumes nothing; a wrong length is -EMSGSIZE; a take that
 * fails after the match comes back as the transport's error with nothing left allocated. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "job/mx_comm.h"
#include "mx_tcomm.h"
#include "base/util.h"

static int dup_all(void *arg, const struct mxt_event *ev, double *delay_s)
{
	(void)arg;
	(void)delay_s;
	return ev->op == MXT_SEND ? MXT_DUP : MXT_DELIVER;
}

static int fail_takes(void *arg, const struct mxt_event *ev, double *delay_s)
{
	(void)arg;
	(void)delay_s;
	return ev->op == MXT_TAKE ? MXT_FAIL : MXT_DELIVER;
}

static void test_control_rounds_and_runs(void **state)
{
	struct mxt_world *w = mxt_world_new(2, 1, 32767);
	struct mx_comm a, b, foreign;
	void *m = NULL;
	size_t len = 0;
	int src = -1;

	(void)state;
	mxt_comm(w, 0, &a);
	mxt_comm(w, 1, &b);
	mx_comm_set_run(&a, 0x11);
	mx_comm_set_run(&b, 0x11);
	foreign = b;
	mx_comm_set_run(&foreign, 0x22);
	assert_int_equal(mx_comm_send(&b, 0, 5, 6, "old", 4, rp_now() + 1), 0);
	assert_int_equal(mx_comm_send(&foreign, 0, 5, 7, "alien", 6, rp_now() + 1), 0);
	assert_int_equal(mx_comm_send(&b, 0, 5, 7, "new", 4, rp_now() + 1), 0);
	assert_int_equal(mx_comm_recv(&a, -1, 5, 7, &m, &len, &src, rp_now() + 1), 0);
	assert_int_equal(len, 4);
	assert_string_equal(m, "new");
	assert_int_equal(src, 1);
	assert_int_equal(mx_comm_dropped(&a), 2);
	free(m);
	/* nothing of round 8 yet: times out, and the one sent afterwards is still received */
	assert_int_equal(mx_comm_recv(&a, 1, 5, 8, &m, &len, NULL, rp_now() + 0.05), -ETIMEDOUT);
	assert_int_equal(mx_comm_send(&b, 0, 5, 8, "later", 6, rp_now() + 1), 0);
	assert_int_equal(mx_comm_recv(&a, 1, 5, 8, &m, &len, NULL, rp_now() + 1), 0);
	assert_string_equal(m, "later");
	free(m);
	mxt_world_free(w);
}

static void test_side_channel_drops_stale_and_duplicates(void **state)
{
	struct mxt_world *w = mxt_world_new(2, 1, 32767);
	struct mx_comm a, b;
	struct rp_oob ra, rb, other;
	const struct mx_addr here = { .round = 3, .pair = 5 };
	char buf[8];

	(void)state;
	mxt_comm(w, 0, &a);
	mxt_comm(w, 1, &b);
	assert_int_equal(mx_comm_oob_open(&a, &ra, 1, 9, &here), 0);
	assert_int_equal(mx_comm_oob_open(&b, &rb, 0, 9, &here), 0);
	assert_int_equal(mx_comm_oob_open(&b, &other, 0, 9, &(struct mx_addr){ .round = 3, .pair = 4 }), 0);
	mxt_set_fault(w, dup_all, NULL);
	assert_int_equal(rp_oob_send(&other, "pair-4!", 8, rp_now() + 1), 0);
	assert_int_equal(rp_oob_send(&rb, "first!!", 8, rp_now() + 1), 0);
	assert_int_equal(rp_oob_send(&rb, "second!", 8, rp_now() + 1), 0);
	assert_int_equal(rp_oob_recv(&ra, buf, 8, rp_now() + 1), 0);
	assert_string_equal(buf, "first!!");
	assert_int_equal(rp_oob_recv(&ra, buf, 8, rp_now() + 1), 0);
	assert_string_equal(buf, "second!");
	/* the other pair's two copies and one duplicate of "first!!" were dropped on the way */
	assert_int_equal(mx_comm_dropped(&a), 3);
	assert_int_equal(rp_oob_recv(&ra, buf, 8, rp_now() + 0.05), -ETIMEDOUT);
	assert_int_equal(mx_comm_dropped(&a), 4);   /* the duplicate of "second!" */
	mxt_set_fault(w, NULL, NULL);
	assert_int_equal(rp_oob_send(&rb, "short", 6, rp_now() + 1), 0);
	assert_int_equal(rp_oob_recv(&ra, buf, 8, rp_now() + 1), -EMSGSIZE);
	rp_oob_close(&ra);
	rp_oob_close(&rb);
	rp_oob_close(&other);
	mxt_world_free(w);
}

static void test_failed_take_is_the_error(void **state)
{
	struct mxt_world *w = mxt_world_new(2, 1, 32767);
	struct mx_comm a, b;
	void *m = NULL;
	size_t len = 0;

	(void)state;
	mxt_comm(w, 0, &a);
	mxt_comm(w, 1, &b);
	assert_int_equal(mx_comm_send(&b, 0, 5, 1, "x", 2, rp_now() + 1), 0);
	mxt_set_fault(w, fail_takes, NULL);
	assert_int_equal(mx_comm_recv(&a, 1, 5, 1, &m, &len, NULL, rp_now() + 1), -EIO);
	assert_null(m);
	assert_int_equal(mxt_queued(w), 0);
	mxt_world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_control_rounds_and_runs),
		cmocka_unit_test(test_side_channel_drops_stale_and_duplicates),
		cmocka_unit_test(test_failed_take_is_the_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
