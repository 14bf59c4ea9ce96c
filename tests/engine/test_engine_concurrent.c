/* test_engine_concurrent.c: disjoint pairs at the same time (lib/engine/engine_concurrent.h). The engine's loopback is replaced
 * by a stand-in (-Wl,--wrap=rp_engine_loopback_run) that proves what the pair set does with it: all
 * pairs in flight together (each stand-in waits at a rendezvous that only a concurrent start fills),
 * a stop ending every one of them, overlapping pairs refused before anything runs; the round plan
 * covers every unordered pair once with disjoint rounds; the concurrent_drop rule. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "engine/engine_concurrent.h"
#include "base/stop.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int arrived, calls, wanted;
static bool wait_for_stop;    /* the stand-in waits for a stop instead of the rendezvous */

int __wrap_rp_engine_loopback_run(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
				  const struct rp_engine_port *dst, unsigned pass, struct rp_pair_result *res);

/* The stand-in: OK when every pair of the set arrived within 10 s (only possible when they run at
 * the same time), TIMEOUT otherwise; with wait_for_stop, INTERRUPTED once a stop is requested. */
int __wrap_rp_engine_loopback_run(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
				  const struct rp_engine_port *dst, unsigned pass, struct rp_pair_result *res)
{
	struct timespec until;
	bool all;

	(void)cfg;
	(void)pass;
	rp_pair_result_init(res, NULL, NULL);
	snprintf(res->src.device, sizeof(res->src.device), "%s", src->device);
	snprintf(res->dst.device, sizeof(res->dst.device), "%s", dst->device);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&mu);
	calls++;
	arrived++;
	pthread_cond_broadcast(&cv);
	while (!wait_for_stop && arrived < wanted && pthread_cond_timedwait(&cv, &mu, &until) == 0)
		;
	all = arrived >= wanted;
	pthread_mutex_unlock(&mu);
	while (wait_for_stop && !rp_stop_requested()) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	res->status = wait_for_stop ? RP_ST_INTERRUPTED : all ? RP_ST_OK : RP_ST_TIMEOUT;
	res->gbps = 1.0;
	return 0;
}

static const char *const devs[] = { "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7" };

static void reset(int n)
{
	arrived = calls = 0;
	wanted = n;
	wait_for_stop = false;
	rp_stop_reset();
}

/* Eight self pairs (the health check's set) all in flight at once: every stand-in saw the others. */
static void test_all_at_once(void **state)
{
	struct rp_concurrent_job jobs[8];
	struct rp_pair_result res[8];

	(void)state;
	memset(jobs, 0, sizeof(jobs));
	for (int i = 0; i < 8; i++) {
		jobs[i].src = (struct rp_engine_port){ "h", devs[i], 1, 0 };
		jobs[i].dst = jobs[i].src;
	}
	reset(8);
	assert_int_equal(rp_concurrent_run(jobs, 8, res), 0);
	assert_int_equal(calls, 8);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(res[i].status, RP_ST_OK);
		assert_string_equal(res[i].src.device, devs[i]);   /* res[i] is job i's */
	}
}

static void *stopper(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		bool all = arrived >= wanted;
		pthread_mutex_unlock(&mu);
		if (all)
			break;
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	rp_stop_request(SIGTERM);
	return NULL;
}

/* A stop ends every pair of the set: each one's wait sees it (none is left running). */
static void test_stop_ends_all(void **state)
{
	struct rp_concurrent_job jobs[4];
	struct rp_pair_result res[4];
	pthread_t t;

	(void)state;
	memset(jobs, 0, sizeof(jobs));
	for (int i = 0; i < 4; i++) {
		jobs[i].src = (struct rp_engine_port){ "h", devs[2 * i], 1, 0 };
		jobs[i].dst = (struct rp_engine_port){ "h", devs[2 * i + 1], 1, 0 };
	}
	reset(4);
	wait_for_stop = true;
	assert_int_equal(pthread_create(&t, NULL, stopper, NULL), 0);
	assert_int_equal(rp_concurrent_run(jobs, 4, res), 0);
	pthread_join(t, NULL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(res[i].status, RP_ST_INTERRUPTED);
	rp_stop_reset();
}

/* A port in two pairs (as destination of one, source of another; or the same pair twice) is refused
 * with the port named, and nothing runs. */
static void test_overlap_refused(void **state)
{
	struct rp_concurrent_job jobs[2];
	struct rp_pair_result res[2];
	char why[160];

	(void)state;
	memset(jobs, 0, sizeof(jobs));
	jobs[0].src = (struct rp_engine_port){ "h", "mlx5_0", 1, 0 };
	jobs[0].dst = (struct rp_engine_port){ "h", "mlx5_1", 1, 0 };
	jobs[1].src = (struct rp_engine_port){ "h", "mlx5_1", 1, 0 };
	jobs[1].dst = (struct rp_engine_port){ "h", "mlx5_2", 1, 0 };
	reset(2);
	assert_int_equal(rp_concurrent_check(jobs, 2, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "mlx5_1:1"));
	assert_int_equal(rp_concurrent_run(jobs, 2, res), -EINVAL);
	assert_int_equal(calls, 0);
	/* another port of the same device is another port */
	jobs[1].src = (struct rp_engine_port){ "h", "mlx5_1", 2, 0 };
	assert_int_equal(rp_concurrent_check(jobs, 2, why, sizeof(why)), 0);
	/* a self pair is one port; two self pairs of one port are not */
	jobs[0].dst = jobs[0].src;
	jobs[1] = jobs[0];
	assert_int_equal(rp_concurrent_check(jobs, 1, why, sizeof(why)), 0);
	assert_int_equal(rp_concurrent_check(jobs, 2, why, sizeof(why)), -EINVAL);
}

/* For 2..9 ports: every round disjoint with n/2 pairs (a < b), every unordered pair in exactly one. */
static void test_rounds_cover(void **state)
{
	(void)state;
	assert_int_equal(rp_concurrent_rounds(0), 0);
	assert_int_equal(rp_concurrent_rounds(1), 0);
	for (size_t n = 2; n <= 9; n++) {
		int seen[9][9] = { { 0 } };
		uint32_t p[10];
		size_t rounds = rp_concurrent_rounds(n);

		assert_int_equal(rounds, n % 2 ? n : n - 1);
		for (size_t r = 0; r < rounds; r++) {
			int busy[9] = { 0 };
			size_t np = rp_concurrent_round(n, r, p);

			assert_int_equal(np, n / 2);
			for (size_t k = 0; k < np; k++) {
				assert_true(p[2 * k] < p[2 * k + 1]);
				assert_true(p[2 * k + 1] < n);
				assert_int_equal(busy[p[2 * k]]++, 0);
				assert_int_equal(busy[p[2 * k + 1]]++, 0);
				seen[p[2 * k]][p[2 * k + 1]]++;
			}
		}
		for (size_t a = 0; a < n; a++)
			for (size_t b = a + 1; b < n; b++)
				assert_int_equal(seen[a][b], 1);
		assert_int_equal(rp_concurrent_round(n, rounds, p), 0);
	}
}

/* concurrent_drop: below (1 - drop) x solo, not at or above it; nothing to compare when either
 * failed or measured latency; the bit is cleared when a pair is judged again. */
static void test_compare(void **state)
{
	struct rp_pair_result solo, conc;

	(void)state;
	rp_pair_result_init(&solo, NULL, NULL);
	rp_pair_result_init(&conc, NULL, NULL);
	solo.status = conc.status = RP_ST_OK;
	solo.gbps = 100;
	conc.gbps = 74;
	assert_float_equal(rp_concurrent_compare(&solo, &conc, 0.25), 0.74, 1e-9);
	assert_true(conc.warnings & (1u << RP_WARN_CONCURRENT_DROP));
	conc.gbps = 75;
	assert_float_equal(rp_concurrent_compare(&solo, &conc, 0.25), 0.75, 1e-9);
	assert_false(conc.warnings & (1u << RP_WARN_CONCURRENT_DROP));
	conc.gbps = 10;
	conc.status = RP_ST_RETRY_EXCEEDED;
	assert_float_equal(rp_concurrent_compare(&solo, &conc, 0.25), 0, 0);
	assert_false(conc.warnings & (1u << RP_WARN_CONCURRENT_DROP));
	conc.status = RP_ST_OK;
	solo.status = RP_ST_TIMEOUT;
	assert_float_equal(rp_concurrent_compare(&solo, &conc, 0.25), 0, 0);
	assert_string_equal(rp_pair_warning_code(RP_WARN_CONCURRENT_DROP), "concurrent_drop");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_at_once),
		cmocka_unit_test(test_stop_ends_all),
		cmocka_unit_test(test_overlap_refused),
		cmocka_unit_test(test_rounds_cover),
		cmocka_unit_test(test_compare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
