/* test_pairset_sweep.c: the reachability sweep of one node's directions (lib/matrix/pairset_sweep.h), over
 * a stand-in for the engine's loopback: 4 ports dev0..dev3, every ordered pair (self pairs too), 16
 * directions.
 * - dev3 dead: its 7 directions fail the screen and the confirmation and are DEAD with both attempts
 *   (screen settings first: 3 s, no MTU probe, at most 6 retries; then the full --timeout, the run's
 *   retry count, the MTU probe beside the probe, NCCL's ACK timeout); the others are probed once and
 *   left to be measured; every direction's screen runs at once (16 in flight), and the
 *   confirmations only after every screen: a dead port costs two probe windows, not one per
 *   direction (the loopback measured them one at a time, each to its deadline);
 * - a first failure that the screen's window can cause (timed_out) then a pass: OK (measured as if
 *   never screened); any other (retry_exceeded) then a pass: FLAKY, its failure kept;
 * - no usable port: DEAD at once, never probed again;
 * - without --retest (one sample decides): one round, not a screen: every direction at once with the
 *   full --timeout, the MTU probe beside it and its own ACK timeout, dev3's directions DEAD with that one
 *   attempt (the loopback with --retest 0 ran no sweep and waited a deadline per dead direction).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "matrix/mx_sweep.h"
#include "matrix/pairset_sweep.h"
#include "verdict/retest.h"

#define P 4

static struct {
	pthread_mutex_t lock;
	unsigned in_flight, max_in_flight, screens_done, confirm_early;
	unsigned probes[P][P];
	double to[P][P][2];
	bool nomtu[P][P][2];
	bool beside[P][P][2];          /* its MTU probe beside it (cfg.mtucheck_beside, when it runs one) */
	int qp[P][P][2];
	int retry[P][P][2];
	int dead;                     /* every direction of this port fails */
	int flaky_to, flaky_retry;    /* dev -> dev self pair: first try timed_out / retry_exceeded */
	int no_port;                  /* first try no_usable_port */
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int num(const char *dev)
{
	int n = -1;

	return sscanf(dev, "dev%d", &n) == 1 && n >= 0 && n < P ? n : -1;
}

static int standin(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src, const struct rp_engine_port *dst,
		   unsigned pass, struct rp_pair_result *res)
{
	struct rp_endpoint a = { .port = 1 }, b = { .port = 1 };
	int s = num(src->device), d = num(dst->device);
	unsigned k;
	bool screen = cfg->no_mtucheck;

	(void)pass;
	snprintf(a.device, sizeof(a.device), "%s", src->device);
	snprintf(b.device, sizeof(b.device), "%s", dst->device);
	rp_pair_result_init(res, &a, &b);
	res->status = RP_ST_OK;     /* (init leaves a result not run yet) */
	res->reason[0] = '\0';
	pthread_mutex_lock(&S.lock);
	k = S.probes[s][d]++;
	if (k < 2) {
		S.to[s][d][k] = cfg->timeout_s;
		S.nomtu[s][d][k] = cfg->no_mtucheck;
		S.beside[s][d][k] = cfg->mtucheck_beside;
		S.qp[s][d][k] = cfg->qp.qp_timeout;
		S.retry[s][d][k] = cfg->qp.retry_cnt;
	}
	if (!screen && S.screens_done < P * P)
		S.confirm_early++;
	S.in_flight++;
	S.max_in_flight = S.in_flight > S.max_in_flight ? S.in_flight : S.max_in_flight;
	pthread_mutex_unlock(&S.lock);
	nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);   /* a probe's time: overlap them */
	if (s == S.dead || d == S.dead)
		rp_pair_result_fail(res, RP_ST_TIMEOUT, "stand-in: no completion");
	else if (k == 0 && s == S.flaky_to && d == s)
		rp_pair_result_fail(res, RP_ST_TIMEOUT, "stand-in: slow first try");
	else if (k == 0 && s == S.flaky_retry && d == s)
		rp_pair_result_fail(res, RP_ST_RETRY_EXCEEDED, "stand-in: first try lost");
	else if (s == S.no_port && d == s)
		rp_pair_result_fail(res, RP_ST_NO_PORT, "stand-in: no port");
	res->gbps = res->status == RP_ST_OK ? 1.0 : 0;
	pthread_mutex_lock(&S.lock);
	S.in_flight--;
	S.screens_done += screen;
	pthread_mutex_unlock(&S.lock);
	return res->status == RP_ST_OK ? 0 : 1;
}

static void setup_jobs(struct rp_concurrent_job *jobs, char names[P][8])
{
	for (int i = 0; i < P; i++)
		snprintf(names[i], 8, "dev%d", i);
	for (int i = 0; i < P; i++)
		for (int j = 0; j < P; j++) {
			struct rp_concurrent_job *jb = &jobs[i * P + j];

			rp_engine_cfg_default(&jb->cfg);
			jb->cfg.timeout_s = 10;
			jb->src = (struct rp_engine_port){ "host", names[i], 1, -1 };
			jb->dst = (struct rp_engine_port){ "host", names[j], 1, -1 };
		}
}

static void reset(int dead, int flaky_to, int flaky_retry, int no_port)
{
	pthread_mutex_lock(&S.lock);
	S.in_flight = S.max_in_flight = S.screens_done = S.confirm_early = 0;
	memset(S.probes, 0, sizeof(S.probes));
	S.dead = dead;
	S.flaky_to = flaky_to;
	S.flaky_retry = flaky_retry;
	S.no_port = no_port;
	pthread_mutex_unlock(&S.lock);
}

static void test_dead_port_two_windows(void **state)
{
	static struct rp_concurrent_job jobs[P * P];
	static struct rp_pair_result res[P * P];
	static char names[P][8];
	enum rp_reach reach[P * P];
	unsigned rounds = 0;

	(void)state;
	setup_jobs(jobs, names);
	reset(3, -1, -1, -1);
	assert_int_equal(rp_pairset_reach(jobs, P * P, 1, standin, reach, res, &rounds), 0);
	assert_int_equal(rounds, 2);
	assert_int_equal(S.max_in_flight, P * P);     /* every screen at once */
	assert_int_equal(S.confirm_early, 0);         /* the confirmations after them, at once */
	for (int i = 0; i < P; i++)
		for (int j = 0; j < P; j++) {
			const struct rp_pair_result *r = &res[i * P + j];

			if (i == 3 || j == 3) {
				assert_int_equal(reach[i * P + j], RP_REACH_DEAD);
				assert_int_equal(S.probes[i][j], 2);
				assert_true(S.to[i][j][0] == MX_SWEEP_SCREEN_TIMEOUT_S && S.nomtu[i][j][0]);
				assert_true(S.to[i][j][1] == 10 && !S.nomtu[i][j][1] && S.beside[i][j][1]);
				assert_int_equal(S.qp[i][j][1], RP_RETEST_NCCL_QP_TIMEOUT);
				/* the screen gives up on its retries on every provider; the confirmation keeps
				 * the run's (NCCL's 7) */
				assert_int_equal(S.retry[i][j][0], RP_PAIRSET_SCREEN_RETRY_MAX);
				assert_int_equal(S.retry[i][j][1], 7);
				assert_int_equal(r->status, RP_ST_TIMEOUT);
				assert_int_equal(r->n_attempts, 2);
				assert_non_null(strstr(r->reason, "reachability sweep: stand-in: no completion"));
			} else {
				assert_int_equal(reach[i * P + j], RP_REACH_OK);
				assert_int_equal(S.probes[i][j], 1);
			}
		}
}

static void test_cleared_flaky_no_port(void **state)
{
	static struct rp_concurrent_job jobs[P * P];
	static struct rp_pair_result res[P * P];
	static char names[P][8];
	enum rp_reach reach[P * P];
	unsigned rounds = 0;

	(void)state;
	setup_jobs(jobs, names);
	reset(-1, 0, 1, 2);
	assert_int_equal(rp_pairset_reach(jobs, P * P, 1, standin, reach, res, &rounds), 0);
	assert_int_equal(rounds, 2);
	assert_int_equal(reach[0 * P + 0], RP_REACH_OK);        /* timed out at 3 s, then passed: cleared */
	assert_int_equal(reach[1 * P + 1], RP_REACH_FLAKY);     /* retry_exceeded, then passed */
	assert_int_equal(res[1 * P + 1].status, RP_ST_RETRY_EXCEEDED);
	assert_int_equal(reach[2 * P + 2], RP_REACH_DEAD);      /* no usable port: decided at once */
	assert_int_equal(S.probes[2][2], 1);
	assert_int_equal(res[2 * P + 2].status, RP_ST_NO_PORT);
	/* nothing else failed: one probe each */
	assert_int_equal(S.probes[3][3] + S.probes[0][1], 2);
	/* healthy only: one round */
	reset(-1, -1, -1, -1);
	assert_int_equal(rp_pairset_reach(jobs, P * P, 1, standin, reach, res, &rounds), 0);
	assert_int_equal(rounds, 1);
	for (int k = 0; k < P * P; k++)
		assert_int_equal(reach[k], RP_REACH_OK);
}

static void test_no_retest_one_full_round(void **state)
{
	static struct rp_concurrent_job jobs[P * P];
	static struct rp_pair_result res[P * P];
	static char names[P][8];
	enum rp_reach reach[P * P];
	unsigned rounds = 0;

	(void)state;
	setup_jobs(jobs, names);
	reset(3, -1, -1, -1);
	assert_int_equal(rp_pairset_reach(jobs, P * P, 0, standin, reach, res, &rounds), 0);
	assert_int_equal(rounds, 1);
	assert_int_equal(S.max_in_flight, P * P);     /* every direction at once */
	for (int i = 0; i < P; i++)
		for (int j = 0; j < P; j++) {
			const struct rp_pair_result *r = &res[i * P + j];

			assert_int_equal(S.probes[i][j], 1);
			assert_true(S.to[i][j][0] == 10 && !S.nomtu[i][j][0]);   /* the full settings */
			assert_true(S.beside[i][j][0]);                           /* its MTU probe beside it */
			assert_int_equal(S.retry[i][j][0], 7);                    /* not a screen: the run's retries */
			assert_int_equal(S.qp[i][j][0], jobs[i * P + j].cfg.qp.qp_timeout);
			if (i == 3 || j == 3) {
				assert_int_equal(reach[i * P + j], RP_REACH_DEAD);
				assert_int_equal(r->status, RP_ST_TIMEOUT);
				assert_int_equal(r->n_attempts, 1);
				assert_non_null(strstr(r->reason, "reachability sweep: stand-in: no completion"));
			} else {
				assert_int_equal(reach[i * P + j], RP_REACH_OK);
			}
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dead_port_two_windows),
		cmocka_unit_test(test_cleared_flaky_no_port),
		cmocka_unit_test(test_no_retest_one_full_round),
	};

	return cmocka_run_group_tests_name("node sweep", tests, NULL, NULL);
}
