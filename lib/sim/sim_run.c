/* sim_run.c: the matrix over a simulated fabric in one process; see sim_run.h. */
#include "sim/sim_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "job/mx_table.h"
#include "oob/oob.h"
#include "base/util.h"

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

#define SIM_WIRE_HELD 0x80000000u   /* in a side's endpoint word: it holds the connection */

/* One direction src -> dst (model numbers) as the engine would have ended it; on a held connection
 * (reused: both sides held one) without the set-up. */
static void sim_dir(struct rp_sim_run *S, const struct rp_engine_cfg *cfg, uint32_t s, uint32_t d, bool reused,
		    struct rp_pair_result *res)
{
	(void)rp_sim_dir(S->model, cfg, s, d, &S->rep_eps[S->table_of[s]], &S->rep_eps[S->table_of[d]], res);
	if (reused) {
		/* the pair's time and its one attempt's, as the engine records them after the run */
		res->elapsed_s = res->elapsed_s > S->model->setup_s ? res->elapsed_s - S->model->setup_s : 0;
		if (res->n_attempts)
			res->attempts[res->n_attempts - 1].elapsed_s = res->elapsed_s;
	}
	__atomic_add_fetch(&S->sides, 1, __ATOMIC_RELAXED);
}

/* A side's hold as the engine would leave it: reused when both sides held the connection, held
 * after a sequence that keeps it and passed, else not (a used connection is released). */
static void sim_hold(struct mx_hold_side *h, bool reused, const struct rp_pair_result *res)
{
	if (!h)
		return;
	h->eng.reused = reused;
	h->held = h->eng.keep && res->status == RP_ST_OK;
}

/* A side result that names what went wrong with the simulation itself (never a fabric finding). */
static int sim_fail(struct rp_pair_result *res, int err, const char *what, const char *node, const char *dev)
{
	struct rp_endpoint none = { .port = 1 };

	rp_pair_result_init(res, &none, &none);
	rp_pair_result_fail(res, RP_ST_SETUP, "simulated transport: %s/%s: %s", node, dev, what);
	return err;
}

/* A direction between two endpoints this rank drives: the model's answer. */
static int sim_loopback(void *arg, const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			const struct rp_engine_port *dst, struct mx_hold_side *hw, struct mx_hold_side *ht,
			struct rp_pair_result *res)
{
	struct rp_sim_run *S = arg;
	bool reused = hw && ht && hw->held && ht->held;
	uint32_t s, d;

	if (rp_sim_ep_find(S->model, src->node, src->device, &s) || rp_sim_ep_find(S->model, dst->node, dst->device, &d))
		return sim_fail(res, -ENOENT, "an endpoint of this direction is not in the model", src->node, src->device);
	sim_dir(S, cfg, s, d, reused, res);
	sim_hold(hw, reused, res);
	sim_hold(ht, reused, res);
	return 0;
}

/* A side whose peer another rank drives (MPI): the two sides tell each other their endpoint over the
 * pair's side channel (4 bytes each way, checked against the model), then both answer the direction
 * from the model, so the results rank 0 merges agree. */
static int sim_pair(void *arg, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		    const struct rp_engine_port *local, struct rp_oob *oob, struct mx_hold_side *hold,
		    struct rp_pair_result *res)
{
	struct rp_sim_run *S = arg;
	double deadline = rp_now() + (cfg->timeout_s > 0 ? cfg->timeout_s : 10);
	uint32_t me, peer = 0, wire, held = SIM_WIRE_HELD;
	bool reused;

	if (rp_sim_ep_find(S->model, local->node, local->device, &me) != 0)
		return sim_fail(res, -ENOENT, "not in the model", local->node, local->device);
	/* the top bit says this side holds the connection (the engine's offer and accept, in one bit) */
	wire = me | (hold && hold->held ? SIM_WIRE_HELD : 0);
	/* the writer speaks first, the target answers: no order in which both wait to send */
	if (role == RP_ROLE_WRITER ? rp_oob_send(oob, &wire, sizeof(wire), deadline) != 0 ||
					     rp_oob_recv(oob, &peer, sizeof(peer), deadline) != 0
				   : rp_oob_recv(oob, &peer, sizeof(peer), deadline) != 0 ||
					     rp_oob_send(oob, &wire, sizeof(wire), deadline) != 0)
		return sim_fail(res, -EPIPE, "the peer rank did not answer on the side channel", local->node, local->device);
	held &= peer;
	peer &= ~SIM_WIRE_HELD;
	if (peer >= rp_sim_n_eps(S->model) || peer == me)
		return sim_fail(res, -EPROTO, "the peer named an endpoint that is not in the model", local->node,
				local->device);
	reused = held && hold && hold->held;
	if (role == RP_ROLE_WRITER)
		sim_dir(S, cfg, me, peer, reused, res);
	else
		sim_dir(S, cfg, peer, me, reused, res);
	sim_hold(hold, reused, res);
	return 0;
}

/* --- the virtual clock: rank 0, from the round's results ----------------------------------------- */

/* The round's jobs as time: each endpoint's directions one after the other (busy), the round its
 * slowest endpoint; a sweep round's probes of an endpoint run at once: its slowest direction (max). */
static void round_time(struct rp_sim_run *S, double *busy_max, double *dir_max)
{
	const struct mx_run *R = &S->run;

	*busy_max = *dir_max = 0;
	memset(S->busy, 0, S->n_eps * sizeof(*S->busy));
	for (size_t i = 0; i < R->round_n; i++) {
		const struct mx_job *j = &R->round_jobs[i];

		for (int d = 0; d < 2; d++) {
			double t;

			if (!(j->dirs & (1u << d)) || mx_got_status(R->round_got, 2 * i + d) == RP_ST_INTERRUPTED)
				continue;
			t = mx_got_elapsed(R->round_got, 2 * i + d);
			t = t > 0 ? t : 0;
			S->busy[j->a] += t;
			S->busy[j->b] += t;
			*dir_max = t > *dir_max ? t : *dir_max;
			*busy_max = S->busy[j->a] > *busy_max ? S->busy[j->a] : *busy_max;
			*busy_max = S->busy[j->b] > *busy_max ? S->busy[j->b] : *busy_max;
		}
	}
}

/* Rank 0's real time after the last hook returned until that round's go (the settle, the go). */
static double after_hook(const struct rp_sim_run *S)
{
	double go = S->run.ctx.go_sent;

	return S->hook_end > 0 && go > S->hook_end ? go - S->hook_end : 0;
}

/* What a planned round kept after its go (mx_run.h) cost the run, once per keeping not yet counted:
 * kept while the next round's sides ran, only what it took beyond that round's time `overlap` (rank
 * 0 takes the next reports when it is done); kept at a batch's end, all of it. */
static double keep_charge(struct rp_sim_run *S, double overlap)
{
	const struct mx_run *R = &S->run;
	double t;

	if (R->keep_seq == S->keep_seen)
		return 0;
	S->keep_seen = R->keep_seq;
	t = R->keep_overlapped ? R->keep_s - overlap : R->keep_s;
	return t > 0 ? t : 0;
}

/* Rank 0's time the other ranks waited for at this hook, the round's virtual time t: a round kept
 * after its go, its collection before the go and what the previous such keeping took beyond this
 * round's time; any other, its real time since its sides ended (the collection and the keeping,
 * before the simulation's own bookkeeping and the caller's hook), the previous round's part after
 * its hook, and a keeping at a batch's end not counted yet. */
static void collect_time(struct rp_sim_run *S, double t)
{
	const struct mx_run *R = &S->run;

	if (R->hook_deferred)
		S->collect_last_s = R->pend_collect_s + keep_charge(S, t);
	else
		S->collect_last_s = rp_now() - R->ctx.sides_end + after_hook(S) + keep_charge(S, 0);
	S->collect_s += S->collect_last_s;
}

/* mx_run's hook: the round's virtual time, then the caller's hook. */
static void sim_round_done(void *arg, bool retest, size_t k, size_t n_rounds)
{
	struct rp_sim_run *S = arg;
	double busy, dir, t;

	if (!S->run.hook_deferred)
		collect_time(S, 0);   /* before round_time: the simulation's own work, not rank 0's */
	round_time(S, &busy, &dir);
	t = busy + S->model->round_overhead_s;
	if (S->run.hook_deferred)
		collect_time(S, t);   /* the keeping that ran beside this round, against its time */
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
	if (S->hooks.round_done)
		S->hooks.round_done(S->hooks.arg, retest, k, n_rounds);
	S->hook_end = rp_now();
}

/* mx_run's hook after a sweep round: its probes (one direction each) run at once, so its time is its
 * slowest probe plus the round overhead; a round started beside the rounds (a confirmation since
 * confirm_at, pass 3; pass 2's first round since beside_at, pass 4), only what is left of its
 * slowest probe. */
static void sim_sweep_done(void *arg, int pass, size_t k, size_t n_rounds)
{
	struct rp_sim_run *S = arg;
	double busy, dir, t;

	collect_time(S, 0);
	round_time(S, &busy, &dir);
	if (pass >= 3) {   /* started beside the rounds, each slot's at its own time */
		double at = pass == 3 ? S->confirm_at : S->beside_at;

		dir = dir > S->vclock - at ? dir - (S->vclock - at) : 0;
	}
	t = dir + S->model->round_overhead_s;
	S->vclock += t;
	S->rounds_s += t;
	S->sweep_s += t;
	if (S->hooks.sweep_done)
		S->hooks.sweep_done(S->hooks.arg, pass, k, n_rounds);
	S->hook_end = rp_now();
}

static void sim_confirm_started(void *arg)
{
	struct rp_sim_run *S = arg;

	S->confirm_at = S->vclock;
}

static void sim_beside_started(void *arg)
{
	struct rp_sim_run *S = arg;

	S->beside_at = S->vclock;
}

static void sim_judging(void *arg, bool start)
{
	struct rp_sim_run *S = arg;

	if (S->hooks.judging)
		S->hooks.judging(S->hooks.arg, start);
}

static void sim_retest_scheduled(void *arg, size_t n, size_t n_rounds)
{
	struct rp_sim_run *S = arg;

	if (S->hooks.retest_scheduled)
		S->hooks.retest_scheduled(S->hooks.arg, n, n_rounds);
}

/* --- the run ------------------------------------------------------------------------------------ */

/* This rank's offer: every adapter of the model's nodes k with k % ranks == rank, port 1. */
static int offer_build(struct rp_sim_run *S, struct mx_wire_ep **w_p, size_t *n_p)
{
	const struct rp_sim_model *m = S->model;
	int rank = S->c->rank, size = S->c->size;
	size_t n = 0, mine = (m->nodes / (uint32_t)size + 1) * m->adapters;
	struct mx_wire_ep *w = calloc(mine ? mine : 1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	for (uint32_t k = (uint32_t)rank; k < m->nodes; k += (uint32_t)size)
		for (uint32_t a = 0; a < m->adapters; a++) {
			struct mx_wire_ep *x = &w[n++];

			rp_sim_ep_names(m, k * m->adapters + a, x->node, sizeof(x->node), x->device, sizeof(x->device));
			x->port = 1;
			x->gid_index = -1;
			x->mtu = 4096;
			x->link_gbps = m->rate_gbps;
		}
	*w_p = w;
	*n_p = n;
	return 0;
}

/* One rank's table from its own offer (mx_table_build, as the exchange does with every rank's). */
static int claims_table(struct rp_sim_run *S, const struct mx_wire_ep *w, size_t n)
{
	struct mx_claim *cl = calloc(n ? n : 1, sizeof(*cl));
	int rc;

	if (!cl)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		cl[i] = (struct mx_claim){ .w = w[i], .rank = 0, .why = "" };
	rc = mx_table_build(cl, n, 1, &S->table.eps, &S->table.n_eps);
	free(cl);
	return rc;
}

/* The start-up exchange of the real matrix (mx_table_gather) over this run's communicator, and the
 * maps between the table's order and the model's; with one rank, its own offer is the table. */
static int eps_build(struct rp_sim_run *S)
{
	struct mx_wire_ep *w = NULL;
	size_t n = 0;
	int rc = offer_build(S, &w, &n);

	if (rc)
		return rc;
	if (S->c->size == 1) {
		/* one rank: the table straight from its offer (what the exchange would hand back; an offer
		 * on the wire is bounded by MX_MAX_LOCAL ports, one process here drives them all) */
		rc = claims_table(S, w, n);
	} else {
		rc = mx_table_gather(S->c, &(struct mx_offer){ .eps = w, .n = n, .why = "", .nccl_version = S->nccl_version },
				     60, 0, &S->table);
		rc = rc ? rc : S->table.err ? -EINVAL : 0;
	}
	free(w);
	if (rc)
		return rc;
	S->eps = S->table.eps;
	S->n_eps = S->table.n_eps;
	if (S->n_eps != rp_sim_n_eps(S->model))
		return rp_error(-EPROTO, "simulated transport: the ranks offered %zu endpoints, the model has %u (a rank drives "
				"at most %d: use more ranks)", S->n_eps, rp_sim_n_eps(S->model), MX_MAX_LOCAL);
	S->rep_eps = calloc(S->n_eps, sizeof(*S->rep_eps));
	S->busy = calloc(S->n_eps, sizeof(*S->busy));
	S->table_of = calloc(S->n_eps, sizeof(*S->table_of));
	if (!S->rep_eps || !S->busy || !S->table_of)
		return -ENOMEM;
	for (size_t e = 0; e < S->n_eps; e++) {
		struct rp_endpoint *x = &S->table.eps[e].ep;
		uint32_t mi;

		if (rp_sim_ep_find(S->model, x->node, x->device, &mi) != 0)
			return rp_error(-EPROTO, "simulated transport: endpoint %s/%s is not in the model", x->node, x->device);
		snprintf(x->mem, sizeof(x->mem), "host");
		snprintf(x->mem_reg, sizeof(x->mem_reg), "host");
		S->rep_eps[e] = *x;
		S->table_of[mi] = (uint32_t)e;
	}
	return 0;
}

int rp_sim_run_init(struct rp_sim_run *S)
{
	struct rp_sched_ep *se;
	int rc;

	pthread_mutex_init(&S->lock, NULL);
	if (!S->c) {
		rp_sim_comm_init(&S->comm);
		S->c = &S->comm;
	}
	S->dead = calloc((size_t)S->c->size, sizeof(*S->dead));
	if (!S->dead)
		return -ENOMEM;
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
	/* one rank: every direction is between two of its endpoints, answered from the model at once */
	S->measure = (struct mx_measure){ .pair = sim_pair, .loopback = sim_loopback, .arg = S,
					  .inline_sides = S->c->size == 1, .check_own_sides = S->c->size == 1 };
	S->run.ctx = (struct mx_ctx){ .comm = S->c, .cfg = S->cfg, .eps = S->eps, .n_eps = S->n_eps, .rank = S->c->rank,
				      .n_ranks = S->c->size, .dead = S->dead, .round_wait_s = 3600, .measure = &S->measure };
	S->run.sched = S->sched;
	S->run.vcfg = S->vcfg;
	S->run.rep_eps = S->rep_eps;
	S->run.set = S->settings;
	S->run.hooks = (struct mx_run_hooks){ .round_done = sim_round_done, .retest_scheduled = sim_retest_scheduled,
					      .judging = sim_judging, .confirm_started = sim_confirm_started,
					      .beside_started = sim_beside_started,
					      .sweep_done = sim_sweep_done, .arg = S };
	return mx_run_init(&S->run);
}

int rp_sim_run_rounds(struct rp_sim_run *S)
{
	int rc = mx_run_rounds(&S->run);

	S->collect_tail_s = after_hook(S) + keep_charge(S, 0);
	S->collect_s += S->collect_tail_s;
	/* rank 0's retest plans (the verdict over every result): every rank waits for the jobs, whatever
	 * the ranks (before, left out of the projection) */
	S->vclock += S->run.retest_plan_s;
	return rc;
}

void rp_sim_run_advance(struct rp_sim_run *S, double seconds)
{
	S->vclock += seconds;
}

void rp_sim_run_fini(struct rp_sim_run *S)
{
	mx_run_fini(&S->run);
	rp_sched_destroy(S->sched);
	mx_table_fini(&S->table);
	free(S->rep_eps);
	free(S->busy);
	free(S->round_s);
	free(S->table_of);
	free(S->dead);
	S->sched = NULL;
	S->eps = NULL;
	S->rep_eps = NULL;
	S->busy = NULL;
	S->round_s = NULL;
	S->table_of = NULL;
	S->dead = NULL;
	pthread_mutex_destroy(&S->lock);
}
