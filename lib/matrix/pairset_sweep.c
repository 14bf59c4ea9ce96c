/* pairset_sweep.c: the reachability sweep of one node's directions; see pairset_sweep.h. */
#include "matrix/pairset_sweep.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix/mx_sweep.h"
#include "verdict/retest.h"
#include "base/util.h"

struct reach_task {
	rp_reach_run_fn run;
	struct rp_engine_cfg cfg;
	const struct rp_concurrent_job *job;
	struct rp_pair_result res;
	pthread_t thread;
	bool threaded, wanted;
};

static void *reach_main(void *arg)
{
	struct reach_task *t = arg;

	t->run(&t->cfg, &t->job->src, &t->job->dst, t->job->pass, &t->res);
	if (t->res.n_attempts == 0)
		rp_pair_result_record_attempt(&t->res, t->cfg.qp.qp_timeout);
	return NULL;
}

/* Every wanted task at once (ports shared), the stop signals left to the caller's thread. */
static void run_all(struct reach_task *tasks, size_t n)
{
	sigset_t stop_sigs, old;

	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, &old);
	for (size_t i = 0; i < n; i++)
		tasks[i].threaded = tasks[i].wanted && pthread_create(&tasks[i].thread, NULL, reach_main, &tasks[i]) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (size_t i = 0; i < n; i++)
		if (tasks[i].wanted && !tasks[i].threaded)
			reach_main(&tasks[i]);   /* no thread to be had: here, within its own deadlines */
	for (size_t i = 0; i < n; i++)
		if (tasks[i].threaded)
			pthread_join(tasks[i].thread, NULL);
}

static void prefix(struct rp_pair_result *r, double screen_s)
{
	char buf[sizeof(r->reason)];
	int k = screen_s > 0 ? snprintf(buf, sizeof(buf), "reachability screen (%.0f s): %s", screen_s, r->reason)
			     : snprintf(buf, sizeof(buf), "reachability sweep: %s", r->reason);

	if (k > 0)
		rp_strlcpy(r->reason, buf, sizeof(r->reason));
}

int rp_pairset_reach(const struct rp_concurrent_job *jobs, size_t n, unsigned retest, rp_reach_run_fn run,
		     enum rp_reach *reach, struct rp_pair_result *res, unsigned *rounds_p)
{
	struct reach_task *first = calloc(n ? n : 1, sizeof(*first)), *second = calloc(n ? n : 1, sizeof(*second));
	double screen_s = 0;
	bool any = false;

	*rounds_p = 0;
	for (size_t i = 0; i < n; i++)
		reach[i] = RP_REACH_OK;
	if (!first || !second) {
		free(first);
		free(second);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		first[i] = (struct reach_task){ .run = run, .job = &jobs[i], .wanted = true };
		screen_s = mx_sweep_cfg(&jobs[i].cfg, retest > 0, &first[i].cfg);
		first[i].cfg.mtucheck_beside = true;   /* inert in a screen (no MTU probe) */
		if (screen_s > 0 && first[i].cfg.qp.retry_cnt > RP_PAIRSET_SCREEN_RETRY_MAX)
			first[i].cfg.qp.retry_cnt = RP_PAIRSET_SCREEN_RETRY_MAX;
	}
	run_all(first, n);
	*rounds_p = 1;
	for (size_t i = 0; i < n; i++) {
		enum rp_status st = first[i].res.status;

		second[i] = (struct reach_task){ .run = run, .job = &jobs[i] };
		if (st == RP_ST_OK || st == RP_ST_INTERRUPTED)
			continue;
		mx_sweep_cfg(&jobs[i].cfg, false, &second[i].cfg);
		second[i].cfg.mtucheck_beside = true;
		if (second[i].cfg.qp.qp_timeout < RP_RETEST_NCCL_QP_TIMEOUT)
			second[i].cfg.qp.qp_timeout = RP_RETEST_NCCL_QP_TIMEOUT;
		/* no usable port, or no --retest (the one pass was at the full settings): decided now */
		second[i].wanted = rp_retest_wanted(&first[i].res, retest ? 1 : 0);
		any |= second[i].wanted;
		prefix(&first[i].res, screen_s);
		if (!second[i].wanted) {
			reach[i] = RP_REACH_DEAD;
			res[i] = first[i].res;
		}
	}
	if (any) {
		run_all(second, n);
		*rounds_p = 2;
	}
	for (size_t i = 0; i < n; i++) {
		enum rp_status st = second[i].res.status;

		if (!second[i].wanted || st == RP_ST_INTERRUPTED)
			continue;
		if (st != RP_ST_OK) {
			prefix(&second[i].res, 0);
			res[i] = first[i].res;
			rp_retest_merge(&res[i], &second[i].res);
			reach[i] = RP_REACH_DEAD;
		} else if (!(screen_s > 0 && mx_sweep_inconclusive(first[i].res.status))) {
			res[i] = first[i].res;
			reach[i] = RP_REACH_FLAKY;
		}
	}
	free(first);
	free(second);
	return 0;
}
