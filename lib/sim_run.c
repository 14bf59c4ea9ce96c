/* sim_run.c: the matrix over a simulated fabric in one process; see sim_run.h. */
#include "sim_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mx_table.h"
#include "util.h"

/* --- a communicator of one rank ---------------------------------------------------------------- */

static int one_send(struct mx_comm *c, enum mx_chan chan, int dst, int tag, void *msg, size_t len, double deadline)
{
	(void)c, (void)chan, (void)tag, (void)len, (void)deadline;
	free(msg);
	return rp_error(-ENOTCONN, "simulated transport: no rank %d to send to (one rank drives every endpoint)", dst);
}

static int one_take(struct mx_comm *c, enum mx_chan chan, int src, int tag, size_t max_len, void **msg_p,
		    size_t *len_p, int *src_p, double deadline)
{
	(void)c, (void)chan, (void)tag, (void)max_len, (void)msg_p, (void)len_p, (void)src_p, (void)deadline;
	return rp_error(-ENOTCONN, "simulated transport: no rank %d to receive from (one rank drives every endpoint)",
			src);
}

static int one_allgather(struct mx_comm *c, const void *mine, size_t len, double deadline, char **all_p,
			 size_t **lens_p, size_t **offs_p)
{
	(void)c, (void)deadline;
	*all_p = malloc(len ? len : 1);
	*lens_p = calloc(1, sizeof(**lens_p));
	*offs_p = calloc(1, sizeof(**offs_p));
	if (!*all_p || !*lens_p || !*offs_p) {
		free(*all_p);
		free(*lens_p);
		free(*offs_p);
		return -ENOMEM;
	}
	if (len)
		memcpy(*all_p, mine, len);
	(*lens_p)[0] = len;
	return 0;
}

static void one_abort(struct mx_comm *c, int code)
{
	(void)c, (void)code;
}

static const struct mx_comm_ops one_ops = { one_send, one_take, one_allgather, one_abort };

void rp_sim_comm_init(struct mx_comm *c)
{
	*c = (struct mx_comm){ .ops = &one_ops, .rank = 0, .size = 1, .local_rank = 0, .local_size = 1,
			       .tag_ub = 32767 };
	mx_comm_set_run(c, mx_comm_nonce_new());
}

/* --- the measurement from the model ------------------------------------------------------------ */

/* A direction between two endpoints of this one rank: the model's answer; the endpoints' time in
 * the round grows by it. */
static int sim_loopback(void *arg, const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			const struct rp_engine_port *dst, struct rp_pair_result *res)
{
	struct rp_sim_run *S = arg;
	uint32_t s, d;
	double t;

	if (rp_sim_ep_find(S->model, src->node, src->device, &s) || rp_sim_ep_find(S->model, dst->node, dst->device, &d)) {
		struct rp_endpoint none = { .port = 1 };

		rp_pair_result_init(res, &none, &none);
		rp_pair_result_fail(res, RP_ST_SETUP, "simulated transport: %s/%s or %s/%s is not in the model", src->node,
				    src->device, dst->node, dst->device);
		return -ENOENT;
	}
	t = rp_sim_dir(S->model, cfg, s, d, &S->rep_eps[s], &S->rep_eps[d], res);
	pthread_mutex_lock(&S->lock);
	if (S->run.ctx.cfg != S->cfg) {
		/* a sweep probe (mx_run_sweep swaps in the probe's configuration): an endpoint's probes run
		 * at the same time, so the round lasts its slowest job (two directions in turn) */
		if (t > S->probe_max)
			S->probe_max = t;
		S->sides++;
		pthread_mutex_unlock(&S->lock);
		return 0;
	}
	S->busy[s] += t;
	S->busy[d] += t;
	if (S->busy[s] > S->round_max)
		S->round_max = S->busy[s];
	if (S->busy[d] > S->round_max)
		S->round_max = S->busy[d];
	S->sides++;
	pthread_mutex_unlock(&S->lock);
	return 0;
}

/* A side whose peer is another rank: there is none in this transport. */
static int sim_pair(void *arg, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		    const struct rp_engine_port *local, struct rp_oob *oob, struct rp_pair_result *res)
{
	struct rp_endpoint none = { .port = 1 };

	(void)arg, (void)cfg, (void)role, (void)oob;
	rp_pair_result_init(res, &none, &none);
	rp_pair_result_fail(res, RP_ST_SETUP, "simulated transport: %s/%s has a peer on another rank", local->node,
			    local->device);
	return -ENOTCONN;
}

/* mx_run's hook: the round's virtual time, then the caller's hook. */
static void sim_round_done(void *arg, bool retest, size_t k, size_t n_rounds)
{
	struct rp_sim_run *S = arg;
	double t = S->round_max + S->model->round_overhead_s;

	if (S->n_round_s == S->cap_round_s) {
		size_t cap = S->cap_round_s ? 2 * S->cap_round_s : 256;
		double *n = realloc(S->round_s, cap * sizeof(*n));

		if (n) {
			S->round_s = n;
			S->cap_round_s = cap;
		}
	}
	if (S->n_round_s < S->cap_round_s)
		S->round_s[S->n_round_s++] = t;
	S->vclock += t;
	S->rounds_s += t;
	S->round_max = 0;
	memset(S->busy, 0, S->n_eps * sizeof(*S->busy));
	if (S->hooks.round_done)
		S->hooks.round_done(S->hooks.arg, retest, k, n_rounds);
}

/* mx_run's hook after a sweep round: its time is its slowest probe job (two directions in turn:
 * taken as twice the slowest direction) plus the round overhead. */
static void sim_sweep_done(void *arg, int pass, size_t k, size_t n_rounds)
{
	struct rp_sim_run *S = arg;
	double t = 2 * S->probe_max + S->model->round_overhead_s;

	S->vclock += t;
	S->rounds_s += t;
	S->sweep_s += t;
	S->probe_max = 0;
	if (S->hooks.sweep_done)
		S->hooks.sweep_done(S->hooks.arg, pass, k, n_rounds);
}

static void sim_retest_planned(void *arg, size_t n, size_t n_rounds)
{
	struct rp_sim_run *S = arg;

	if (S->hooks.retest_planned)
		S->hooks.retest_planned(S->hooks.arg, n, n_rounds);
}

/* --- the run ------------------------------------------------------------------------------------ */

/* The model's endpoints as the matrix's table: one owner (rank 0), port 1, the model's rate. */
static int eps_build(struct rp_sim_run *S)
{
	const struct rp_sim_model *m = S->model;

	S->n_eps = rp_sim_n_eps(m);
	S->eps = calloc(S->n_eps, sizeof(*S->eps));
	S->rep_eps = calloc(S->n_eps, sizeof(*S->rep_eps));
	S->busy = calloc(S->n_eps, sizeof(*S->busy));
	if (!S->eps || !S->rep_eps || !S->busy)
		return -ENOMEM;
	for (uint32_t e = 0; e < S->n_eps; e++) {
		struct rp_endpoint *x = &S->eps[e].ep;

		rp_sim_ep_names(m, e, x->node, sizeof(x->node), x->device, sizeof(x->device));
		x->port = 1;
		x->gid_index = -1;
		x->mtu = 4096;
		x->link_gbps = m->rate_gbps;
		snprintf(x->mem, sizeof(x->mem), "host");
		snprintf(x->mem_reg, sizeof(x->mem_reg), "host");
		S->eps[e].owner = 0;
		S->rep_eps[e] = *x;
	}
	return 0;
}

int rp_sim_run_init(struct rp_sim_run *S)
{
	struct rp_sched_ep *se;
	int rc;

	pthread_mutex_init(&S->lock, NULL);
	rc = eps_build(S);
	if (rc)
		return rc;
	se = mx_sched_eps(S->eps, S->n_eps, &S->n_nodes);
	if (!se)
		return -ENOMEM;
	rc = rp_sched_create(se, S->n_eps, &S->pattern, S->seed, &S->sched);
	free(se);
	if (rc)
		return rc;
	rp_sim_comm_init(&S->comm);
	S->dead[0] = false;
	S->measure = (struct mx_measure){ .pair = sim_pair, .loopback = sim_loopback, .arg = S };
	S->run.ctx = (struct mx_ctx){ .comm = &S->comm, .cfg = S->cfg, .eps = S->eps, .n_eps = S->n_eps, .rank = 0,
				      .n_ranks = 1, .dead = S->dead, .budget = 3600, .measure = &S->measure };
	S->run.sched = S->sched;
	S->run.vcfg = S->vcfg;
	S->run.rep_eps = S->rep_eps;
	S->run.retest = S->retest;
	S->run.sweep.width = S->sweep;
	S->run.hooks = (struct mx_run_hooks){ .round_done = sim_round_done, .retest_planned = sim_retest_planned,
					      .sweep_done = sim_sweep_done, .arg = S };
	return mx_run_init(&S->run);
}

int rp_sim_run_rounds(struct rp_sim_run *S)
{
	return mx_run_rounds(&S->run);
}

void rp_sim_run_advance(struct rp_sim_run *S, double seconds)
{
	S->vclock += seconds;
}

void rp_sim_run_fini(struct rp_sim_run *S)
{
	mx_run_fini(&S->run);
	rp_sched_destroy(S->sched);
	free(S->eps);
	free(S->rep_eps);
	free(S->busy);
	free(S->round_s);
	S->sched = NULL;
	S->eps = NULL;
	S->rep_eps = NULL;
	S->busy = NULL;
	S->round_s = NULL;
	pthread_mutex_destroy(&S->lock);
}
