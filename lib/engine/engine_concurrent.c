/* engine_concurrent.c: disjoint pairs of this node's ports measured at the same time; see engine_concurrent.h. */
#include "engine/engine_concurrent.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

struct ps_task {
	const struct rp_concurrent_job *job;
	struct rp_pair_result *res;
	pthread_t thread;
	bool threaded;
};

static bool same_port(const struct rp_engine_port *a, const struct rp_engine_port *b)
{
	return a->port == b->port && strcmp(a->device, b->device) == 0;
}

/* True when port p of job i is also in a job before i (or is both ends of a non-self job: never). */
static bool port_used_before(const struct rp_concurrent_job *jobs, size_t i, const struct rp_engine_port *p)
{
	for (size_t k = 0; k < i; k++)
		if (same_port(&jobs[k].src, p) || same_port(&jobs[k].dst, p))
			return true;
	return false;
}

int rp_concurrent_check(const struct rp_concurrent_job *jobs, size_t n, char *why, size_t why_len)
{
	for (size_t i = 0; i < n; i++) {
		const struct rp_engine_port *ends[2] = { &jobs[i].src, &jobs[i].dst };

		for (int e = 0; e < 2; e++) {
			if (!ends[e]->device || ends[e]->port < 1) {
				snprintf(why, why_len, "pair %zu has no %s port", i, e ? "destination" : "source");
				return -EINVAL;
			}
			if (e == 1 && same_port(ends[0], ends[1]))
				continue;   /* a self pair: one port */
			if (port_used_before(jobs, i, ends[e])) {
				snprintf(why, why_len, "%s:%d is in two pairs of the set", ends[e]->device, ends[e]->port);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static void *task_main(void *arg)
{
	struct ps_task *t = arg;

	rp_engine_loopback_run(&t->job->cfg, &t->job->src, &t->job->dst, t->job->pass, t->res);
	return NULL;
}

int rp_concurrent_run(const struct rp_concurrent_job *jobs, size_t n, struct rp_pair_result *res)
{
	struct ps_task *tasks;
	sigset_t stop_sigs, old;
	char why[160];

	if (rp_concurrent_check(jobs, n, why, sizeof(why)))
		return rp_error(-EINVAL, "pair set: %s", why);
	tasks = calloc(n ? n : 1, sizeof(*tasks));
	if (!tasks)
		return rp_error(-ENOMEM, "pair set of %zu pairs: out of memory", n);
	/* the threads inherit the mask: no EINTR in the middle of a measurement, the caller takes them */
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, &old);
	for (size_t i = 0; i < n; i++) {
		tasks[i] = (struct ps_task){ .job = &jobs[i], .res = &res[i] };
		tasks[i].threaded = pthread_create(&tasks[i].thread, NULL, task_main, &tasks[i]) == 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (size_t i = 0; i < n; i++)
		if (!tasks[i].threaded)
			task_main(&tasks[i]);   /* no thread to be had: here, still within its deadlines */
	for (size_t i = 0; i < n; i++)
		if (tasks[i].threaded)
			pthread_join(tasks[i].thread, NULL);
	free(tasks);
	return 0;
}

size_t rp_concurrent_rounds(size_t n)
{
	if (n < 2)
		return 0;
	return n % 2 ? n : n - 1;
}

/* The circle method over m = n rounded up to even: position 0 stays, the others rotate by one per
 * round; position k meets position m - 1 - k. The extra position of an odd n is the idle one. */
size_t rp_concurrent_round(size_t n, size_t r, uint32_t *pairs)
{
	size_t m = n + n % 2, got = 0;

	if (r >= rp_concurrent_rounds(n))
		return 0;
	for (size_t k = 0; k < m / 2; k++) {
		size_t pa = k, pb = m - 1 - k;
		/* the player at position p in round r: 0 stays, the others rotate through 1..m-1 */
		size_t a = pa == 0 ? 0 : 1 + (pa - 1 + r) % (m - 1);
		size_t b = pb == 0 ? 0 : 1 + (pb - 1 + r) % (m - 1);

		if (a >= n || b >= n)
			continue;   /* the idle position of an odd n */
		pairs[2 * got] = (uint32_t)(a < b ? a : b);
		pairs[2 * got + 1] = (uint32_t)(a < b ? b : a);
		got++;
	}
	return got;
}

double rp_concurrent_compare(const struct rp_pair_result *solo, struct rp_pair_result *conc, double max_drop)
{
	double ratio;

	conc->warnings &= ~(1u << RP_WARN_CONCURRENT_DROP);
	if (solo->status != RP_ST_OK || conc->status != RP_ST_OK || solo->lat.measured || conc->lat.measured ||
	    !(solo->gbps > 0) || !(conc->gbps >= 0))
		return 0;
	ratio = conc->gbps / solo->gbps;
	if (ratio < 1.0 - max_drop)
		conc->warnings |= 1u << RP_WARN_CONCURRENT_DROP;
	return ratio;
}
