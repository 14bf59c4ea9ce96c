/* mx_run_epdead.c: dead endpoints, decided during the sweep (mx_sweep.h, "dead endpoints"; mx_run.h,
 * mx_run_epdead): the suspects, their confirmation round (started beside the rounds that follow,
 * finished after the first pass), and what a dead endpoint's directions become. */
#include "matrix/mx_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/retest.h"
#include "base/util.h"

/* Rank 0: one suspect, what its confirmation found. */
struct suspect {
	uint32_t e;
	uint32_t peers;               /* distinct failed peers that passed with others */
	uint32_t refail[MX_EPDEAD_CONFIRM_PAIRS];   /* such peers (re-probed when no untried one is left) */
	uint32_t n_refail;
	uint32_t fresh[MX_EPDEAD_CONFIRM_PAIRS];    /* untried peers that passed with others */
	uint32_t n_fresh;
	unsigned failed, ok, cut;     /* its confirmation probes */
	unsigned small_ok;            /* their small writes (mx_job.small) that arrived: said in the reason
	                               * (none arriving is what a dead endpoint's do) */
};

static bool usable_peer(const struct mx_sweep *S, uint32_t p)
{
	return (S->ep[p] & MX_EP_PASSED) && !(S->ep[p] & (MX_EP_SUSPECT | MX_EP_DEAD));
}

/* Rank 0: the endpoints that passed nothing and failed with MX_EPDEAD_PEERS distinct peers that
 * passed with others; *n_p of them (malloc'd, NULL none). -ENOMEM. */
static int suspects_find(struct mx_sweep *S, struct suspect **sus_p, size_t *n_p)
{
	uint32_t *slot = NULL;
	struct suspect *sus = NULL;
	size_t n = 0, cand = 0;

	*sus_p = NULL;
	*n_p = 0;
	for (size_t e = 0; e < S->n_eps; e++)
		cand += !(S->ep[e] & (MX_EP_PASSED | MX_EP_DEAD | MX_EP_SPARED | MX_EP_SUSPECT)) && S->ep_failed[e] >= MX_EPDEAD_PEERS;
	if (!cand)
		return 0;
	slot = malloc(S->n_eps * sizeof(*slot));
	sus = calloc(cand, sizeof(*sus));
	if (!slot || !sus) {
		free(slot);
		free(sus);
		return -ENOMEM;
	}
	for (size_t e = 0; e < S->n_eps; e++) {
		slot[e] = UINT32_MAX;
		if (!(S->ep[e] & (MX_EP_PASSED | MX_EP_DEAD | MX_EP_SPARED | MX_EP_SUSPECT)) && S->ep_failed[e] >= MX_EPDEAD_PEERS) {
			slot[e] = (uint32_t)n;
			sus[n++].e = (uint32_t)e;
		}
	}
	/* one pass over the marks: each failed pair counts for a candidate end whose other end passed */
	for (size_t i = 0; i < S->n; i++) {
		const struct mx_sweep_mark *m = &S->marks[i];

		if (!m->failed || m->a >= S->n_eps || m->b >= S->n_eps)
			continue;
		for (int side = 0; side < 2; side++) {
			uint32_t e = side ? m->b : m->a, p = side ? m->a : m->b;
			struct suspect *x;

			if (slot[e] == UINT32_MAX || !(S->ep[p] & MX_EP_PASSED))
				continue;
			x = &sus[slot[e]];
			x->peers++;
			if (x->n_refail < MX_EPDEAD_CONFIRM_PAIRS)
				x->refail[x->n_refail++] = p;
		}
	}
	free(slot);
	for (size_t i = 0; i < n; i++) {
		if (sus[i].peers < MX_EPDEAD_PEERS)
			continue;
		S->ep[sus[i].e] |= MX_EP_SUSPECT;
		sus[(*n_p)++] = sus[i];
	}
	if (!*n_p) {
		free(sus);
		sus = NULL;
	}
	*sus_p = sus;
	return 0;
}

/* Rank 0: untried peers for the suspects, from the planned rounds after batch k (not probed yet),
 * each peer in at most W confirmation pairs; stops when every suspect has its pairs. */
static void fresh_find(struct mx_run *R, struct suspect *sus, size_t n, size_t from, unsigned *use)
{
	struct mx_sweep *S = &R->sweep;
	size_t n_rounds = rp_sched_n_rounds(R->sched), wanted = n * MX_EPDEAD_CONFIRM_PAIRS, found = 0;

	for (size_t r = from; r < n_rounds && found < wanted; r++) {
		size_t got = 0;

		if (rp_sched_round(R->sched, r, R->pairs, R->ctx.max_pairs, &got) != 0)
			break;
		for (size_t i = 0; i < got && found < wanted; i++) {
			for (size_t j = 0; j < n; j++) {
				struct suspect *x = &sus[j];
				uint32_t p = R->pairs[i].a == x->e ? R->pairs[i].b : R->pairs[i].b == x->e ? R->pairs[i].a : UINT32_MAX;

				if (p == UINT32_MAX || p >= S->n_eps || x->n_fresh == MX_EPDEAD_CONFIRM_PAIRS ||
				    !usable_peer(S, p) || use[p] >= S->width)
					continue;
				x->fresh[x->n_fresh++] = p;
				use[p]++;
				found++;
			}
		}
	}
}

/* Rank 0: the confirmation's jobs (both directions of each pair, one job a direction, at NCCL's
 * ACK timeout, each followed by its small write: the MTU probe's first half, beside the probe rather
 * than after it): untried peers first, failed ones again when too few are left. */
static size_t confirm_jobs(struct mx_run *R, struct suspect *sus, size_t n, size_t from, struct mx_job *jobs)
{
	unsigned *use = calloc(R->sweep.n_eps, sizeof(*use));
	size_t m = 0;

	if (!use)
		return 0;
	fresh_find(R, sus, n, from, use);
	for (size_t j = 0; j < n; j++) {
		struct suspect *x = &sus[j];

		for (uint32_t i = 0; i < x->n_refail && x->n_fresh < MX_EPDEAD_CONFIRM_PAIRS; i++)
			if (usable_peer(&R->sweep, x->refail[i]) && use[x->refail[i]] < R->sweep.width) {
				x->fresh[x->n_fresh++] = x->refail[i];
				use[x->refail[i]]++;
			}
		for (uint32_t i = 0; i < x->n_fresh; i++) {
			uint32_t a = x->e < x->fresh[i] ? x->e : x->fresh[i], b = x->e < x->fresh[i] ? x->fresh[i] : x->e;

			for (uint32_t d = 1; d <= 2; d++) {
				jobs[m++] = (struct mx_job){ .a = a, .b = b, .dirs = d, .qp_timeout = RP_RETEST_NCCL_QP_TIMEOUT };
				jobs[m++] = (struct mx_job){ .a = a, .b = b, .dirs = d, .qp_timeout = RP_RETEST_NCCL_QP_TIMEOUT,
							     .small = 1 };
			}
		}
	}
	free(use);
	return m;
}

/* Rank 0: what the confirmation said of each suspect; the dead ones marked MX_EP_NEW (and DEAD), the
 * spared ones SPARED. Returns how many died. */
static size_t confirm_decide(struct mx_run *R, struct suspect *sus, size_t n, const struct mx_job *jobs, size_t n_jobs,
			     const struct mx_got *got)
{
	struct mx_sweep *S = &R->sweep;
	size_t died = 0;

	for (size_t i = 0; i < n_jobs; i++) {
		enum rp_status st = mx_got_status(got, 2 * i + (jobs[i].dirs == 2));

		for (size_t j = 0; j < n; j++) {
			if (sus[j].e != jobs[i].a && sus[j].e != jobs[i].b)
				continue;
			/* a probe a stop cut short, or whose peer's rank stopped answering, says nothing of the
			 * suspect */
			bool cut = st == RP_ST_INTERRUPTED || st == RP_ST_PEER_LOST;

			if (jobs[i].small) {
				/* the MTU probe's small write beside a probe: of the path, not a probe of it */
				sus[j].small_ok += st == RP_ST_OK;
				continue;
			}

			sus[j].cut += cut;
			sus[j].ok += st == RP_ST_OK;
			sus[j].failed += st != RP_ST_OK && !cut;
		}
	}
	for (size_t j = 0; j < n; j++) {
		uint8_t *b = &S->ep[sus[j].e];

		*b &= (uint8_t)~MX_EP_SUSPECT;
		if (sus[j].ok) {
			*b |= MX_EP_SPARED;           /* judged direction by direction, as before */
		} else if (sus[j].failed && !sus[j].cut) {
			*b |= MX_EP_DEAD | MX_EP_NEW;
			S->n_ep_dead++;
			died++;
		}                                     /* cut short (a stop, a rank lost): undecided, as it was */
	}
	return died;
}

/* Is every endpoint of e's node dead? (Endpoints are in node order.) */
static bool node_dead(const struct mx_run *R, uint32_t e)
{
	const struct rp_endpoint *ep = R->rep_eps;
	size_t lo = e, hi = e;

	while (lo > 0 && strcmp(ep[lo - 1].node, ep[e].node) == 0)
		lo--;
	while (hi + 1 < R->sweep.n_eps && strcmp(ep[hi + 1].node, ep[e].node) == 0)
		hi++;
	for (size_t i = lo; i <= hi; i++)
		if (!mx_sweep_ep_dead(&R->sweep, (uint32_t)i))
			return false;
	return hi > lo;
}

/* Rank 0: direction src -> dst of a dead endpoint as its result; how it was found in why. */
static void dead_result(const struct mx_run *R, uint32_t src, uint32_t dst, const struct suspect *x, const char *seen,
			struct rp_pair_result *r)
{
	const struct rp_endpoint *e = &R->rep_eps[x->e];
	char node[96] = "", small[128] = "";

	if (node_dead(R, x->e))
		snprintf(node, sizeof(node), "; every adapter of %s is dead", e->node);
	rp_pair_result_init(r, &R->rep_eps[src], &R->rep_eps[dst]);
	if (x->small_ok)
		snprintf(small, sizeof(small), " (%u 64-byte writes beside them arrived: small packets get through, "
			 "a path MTU below the ports'?)", x->small_ok);
	rp_pair_result_fail(r, RP_ST_ENDPOINT_DEAD,
			    "endpoint %s/%s:%d is dead: it failed its first probes with %u peers that reach others, and %u "
			    "probes at NCCL's ACK timeout with %s%s%s; this direction %s",
			    e->node, e->device, e->port, x->peers, x->failed,
			    x->n_refail && x->n_fresh && x->fresh[0] == x->refail[0] ? "peers it had failed with" : "peers it had not tried",
			    small, node, seen);
}

/* Rank 0: the suspect a direction of a newly dead endpoint belongs to (the first dead end). */
static const struct suspect *which(const struct mx_sweep *S, const struct suspect *sus, size_t n, uint32_t a,
				   uint32_t b)
{
	for (size_t j = 0; j < n; j++)
		if ((sus[j].e == a || sus[j].e == b) && (S->ep[sus[j].e] & MX_EP_NEW))
			return &sus[j];
	return NULL;
}

/* Rank 0: the seen text of a direction: its confirmation probe's reason, its screen's, or none. */
static const char *seen_text(const struct mx_run *R, const struct mx_sweep_mark *m, int d, const struct mx_job *jobs,
			     size_t n_jobs, const struct mx_got *got, char *buf, size_t len)
{
	struct rp_pair_result tmp;

	for (size_t i = 0; i < n_jobs; i++)
		if (!jobs[i].small && jobs[i].a == m->a && jobs[i].b == m->b && jobs[i].dirs == 1u << d) {
			const struct rp_pair_result *g = mx_got_get((struct mx_got *)got, 2 * i + d, &tmp);

			snprintf(buf, len, "was one of them: %s: %.120s", rp_status_code(g->status), g->reason);
			return buf;
		}
	if (m->first[d] != SIZE_MAX && !R->sweep.pending[m->first[d]].used) {
		snprintf(buf, len, "failed its first probe (%s) and was not probed again",
			 rp_status_code((enum rp_status)R->sweep.pending[m->first[d]].status));
		return buf;
	}
	return "was not measured";
}

/* Rank 0: every scheduled direction of the newly dead endpoints becomes its RP_ST_ENDPOINT_DEAD
 * result (a failure kept before is replaced: its reason says it failed), marked dead (never probed
 * or measured again), touched for the round's hook. 0 or -ENOMEM. */
static int dead_record(struct mx_run *R, const struct suspect *sus, size_t n, const struct mx_job *jobs, size_t n_jobs,
		       const struct mx_got *got)
{
	struct mx_sweep *S = &R->sweep;
	size_t n_rounds = rp_sched_n_rounds(R->sched);
	int rc = 0;

	/* every scheduled pair of theirs gets a mark (a pair scheduled twice: merged by the sort) */
	for (size_t r = 0; r < n_rounds && rc == 0; r++) {
		size_t cnt = 0;

		if (rp_sched_round(R->sched, r, R->pairs, R->ctx.max_pairs, &cnt) != 0)
			return -EINVAL;
		for (size_t i = 0; i < cnt && rc == 0; i++) {
			uint32_t a = R->pairs[i].a, b = R->pairs[i].b;
			struct mx_sweep_mark *m;

			if (a >= S->n_eps || b >= S->n_eps || !((S->ep[a] | S->ep[b]) & MX_EP_NEW))
				continue;
			m = mx_sweep_mark(S, a < b ? a : b, a < b ? b : a);
			if (!m)
				rc = -ENOMEM;
			else
				m->epdead |= 3;
		}
	}
	mx_sweep_sort(S);
	for (size_t i = 0; i < S->n && rc == 0; i++) {
		struct mx_sweep_mark *m = &S->marks[i];
		const struct suspect *x = which(S, sus, n, m->a, m->b);

		if (!x || !((S->ep[m->a] | S->ep[m->b]) & MX_EP_NEW))
			continue;
		for (int d = 0; d < 2 && rc == 0; d++) {
			struct rp_pair_result r;
			char seen[200];
			uint32_t src = d ? m->b : m->a, dst = d ? m->a : m->b;

			if ((m->dead & (1u << d)) && m->res[d] != SIZE_MAX)
				continue;          /* decided already (no usable port, ...): kept as it was */
			dead_result(R, src, dst, x, seen_text(R, m, d, jobs, n_jobs, got, seen, sizeof(seen)), &r);
			if (m->first[d] != SIZE_MAX)
				S->pending[m->first[d]].used = true;
			if (m->res[d] != SIZE_MAX) {
				/* a failed first probe kept as a result (no screen): replaced, still failed */
				rc = mx_results_put(&R->mr, m->res[d], &r);
				rc = rc ? rc : mx_run_touch(R, m->res[d]);
			} else {
				rc = mx_results_add(&R->mr, &r, src, dst);
				if (rc == 0) {
					m->res[d] = R->mr.n - 1;
					R->failed++;
					rc = mx_run_touch(R, R->mr.n - 1);
				}
			}
			m->dead |= 1u << d;
			m->epdead |= 1u << d;
			S->n_ep_dirs++;
		}
	}
	for (size_t j = 0; j < n; j++)
		S->ep[sus[j].e] &= (uint8_t)~MX_EP_NEW;
	return rc;
}

/* A confirmation started beside the rounds (every rank; rank 0's suspects), until it is finished. */
struct epdead_round {
	struct suspect *sus;          /* rank 0 */
	size_t n_sus;
	uint32_t *out;                /* every rank: the suspects, MX_EP_OUT until decided */
	size_t n_out;
	struct mx_job *jobs;
	size_t n;
	struct mx_started *st;
	size_t k, n_rounds;           /* the first-pass round that found them, of how many */
};

int mx_run_epdead_keep(struct mx_run *R, const struct mx_job *jobs, size_t n, const struct mx_got *got)
{
	const struct epdead_round *er = R->epdead;

	if (!er || !confirm_decide(R, er->sus, er->n_sus, jobs, n, got))
		return 0;
	return dead_record(R, er->sus, er->n_sus, jobs, n, got);
}

/* Rank 0 to every rank: the endpoints that died now (one job each: a pair with a neighbour, dirs 1
 * when a is the dead one, 2 when b is). The others mark them. 0, or the plan's error. */
static int dead_share(struct mx_run *R, const struct suspect *sus, size_t n)
{
	struct mx_ctx *c = &R->ctx;
	struct mx_job *jobs = NULL;
	uint32_t *round_of = NULL;
	size_t m = 0;
	int rc = 0;

	if (c->rank == 0) {
		jobs = calloc(n ? n : 1, sizeof(*jobs));
		round_of = calloc(n ? n : 1, sizeof(*round_of));
		rc = jobs && round_of ? 0 : -ENOMEM;
		for (size_t j = 0; rc == 0 && j < n; j++) {
			uint32_t e = sus[j].e;

			if (!mx_sweep_ep_dead(&R->sweep, e) || c->n_eps < 2)
				continue;
			jobs[m++] = e + 1 < c->n_eps ? (struct mx_job){ .a = e, .b = e + 1, .dirs = 1 }
						     : (struct mx_job){ .a = e - 1, .b = e, .dirs = 2 };
		}
		mx_jobs_send(c, R->next_round, jobs, round_of, rc ? 0 : m);
	} else {
		rc = mx_jobs_wait(c, R->next_round, &jobs, &round_of, &m, rp_now() + mx_ctx_go_wait(c));
		for (size_t i = 0; rc == 0 && i < m; i++) {
			uint32_t e = jobs[i].dirs == 1 ? jobs[i].a : jobs[i].b;

			if (e < R->sweep.n_eps && !(R->sweep.ep[e] & MX_EP_DEAD)) {
				R->sweep.ep[e] |= MX_EP_DEAD;
				R->sweep.n_ep_dead++;
			}
		}
	}
	R->next_round++;
	free(jobs);
	free(round_of);
	return rc;
}

/* Rank 0: pick the suspects and their confirmation jobs (jobs: room for 4 x pairs x suspects: two
 * directions a pair, a probe and its small write each). */
static int confirm_plan(struct mx_run *R, size_t k, struct suspect **sus_p, size_t *n_sus_p, struct mx_job **jobs_p,
			size_t *n_p)
{
	int rc = suspects_find(&R->sweep, sus_p, n_sus_p);
	size_t from = (k + 1) * R->sweep.width;

	*jobs_p = NULL;
	*n_p = 0;
	if (rc || !*n_sus_p)
		return rc;
	*jobs_p = calloc(*n_sus_p * 4 * MX_EPDEAD_CONFIRM_PAIRS, sizeof(**jobs_p));
	if (!*jobs_p)
		return -ENOMEM;
	*n_p = confirm_jobs(R, *sus_p, *n_sus_p, from, *jobs_p);
	return 0;
}

/* Rank 0 to every rank: the suspects (one job each, as dead_share's), each rank's *out_p (malloc'd),
 * every one of them marked MX_EP_OUT. 0, the plan's error, or -ENOMEM. */
static int out_share(struct mx_run *R, const struct suspect *sus, size_t n_sus, uint32_t **out_p, size_t *n_p)
{
	struct mx_ctx *c = &R->ctx;
	struct mx_job *jobs = NULL;
	uint32_t *round_of = NULL;
	size_t m = 0;
	int rc = 0;

	*out_p = NULL;
	*n_p = 0;
	if (c->rank == 0) {
		jobs = calloc(n_sus ? n_sus : 1, sizeof(*jobs));
		round_of = calloc(n_sus ? n_sus : 1, sizeof(*round_of));
		rc = jobs && round_of && c->n_eps >= 2 ? 0 : -ENOMEM;
		for (size_t j = 0; rc == 0 && j < n_sus; j++) {
			uint32_t e = sus[j].e;

			jobs[m++] = e + 1 < c->n_eps ? (struct mx_job){ .a = e, .b = e + 1, .dirs = 1 }
						     : (struct mx_job){ .a = e - 1, .b = e, .dirs = 2 };
		}
		mx_jobs_send(c, R->next_round, jobs, round_of, rc ? 0 : m);
	} else {
		rc = mx_jobs_wait(c, R->next_round, &jobs, &round_of, &m, rp_now() + mx_ctx_go_wait(c));
	}
	R->next_round++;
	*out_p = rc == 0 ? calloc(m ? m : 1, sizeof(**out_p)) : NULL;
	if (rc == 0 && !*out_p)
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < m; i++) {
		uint32_t e = jobs[i].dirs == 1 ? jobs[i].a : jobs[i].b;

		(*out_p)[(*n_p)++] = e;
		if (e < R->sweep.n_eps && !(R->sweep.ep[e] & MX_EP_OUT)) {
			R->sweep.ep[e] |= MX_EP_OUT;
			R->sweep.n_ep_out++;
		}
	}
	free(jobs);
	free(round_of);
	return rc;
}

/* Every rank: er's suspects are no longer left out (decided, or the run ends). */
static void out_clear(struct mx_run *R, struct epdead_round *er)
{
	for (size_t i = 0; i < er->n_out; i++)
		if (er->out[i] < R->sweep.n_eps && (R->sweep.ep[er->out[i]] & MX_EP_OUT)) {
			R->sweep.ep[er->out[i]] &= (uint8_t)~MX_EP_OUT;
			R->sweep.n_ep_out--;
		}
}

static void epdead_round_free(struct mx_run *R, struct epdead_round *er)
{
	out_clear(R, er);
	for (size_t j = 0; j < er->n_sus; j++)
		R->sweep.ep[er->sus[j].e] &= (uint8_t)~MX_EP_SUSPECT;   /* undecided: suspected again later */
	free(er->sus);
	free(er->out);
	free(er->jobs);
	free(er);
}

static int finish(struct mx_run *R, int rc, bool held, size_t to);

int mx_run_epdead(struct mx_run *R, size_t k, size_t n_rounds, const struct rp_engine_cfg *full, bool held)
{
	struct mx_ctx *c = &R->ctx;
	const struct rp_engine_cfg *saved = c->cfg;
	struct epdead_round *er;
	uint32_t *round_of = NULL;
	int rc = 0;

	if (!R->sweep.ep)
		return 0;
	er = calloc(1, sizeof(*er));
	if (!er)
		return -ENOMEM;
	er->k = k;
	er->n_rounds = n_rounds;
	if (c->rank == 0) {
		rc = confirm_plan(R, k, &er->sus, &er->n_sus, &er->jobs, &er->n);
		round_of = calloc(er->n ? er->n : 1, sizeof(*round_of));
		if (!round_of)
			rc = -ENOMEM;
		mx_jobs_send(c, R->next_round, er->jobs, round_of, rc ? 0 : er->n);
	} else {
		rc = mx_jobs_wait(c, R->next_round, &er->jobs, &round_of, &er->n, rp_now() + mx_ctx_go_wait(c));
	}
	free(round_of);
	R->next_round++;
	/* one confirmation at a time: the one running is finished first (the planned rounds before
	 * batch k have run without its suspects) */
	if (rc == 0 && er->n && R->epdead)
		rc = finish(R, 0, held, k * R->sweep.width);
	if (rc == 0 && er->n)
		rc = out_share(R, er->sus, er->n_sus, &er->out, &er->n_out);
	if (rc == 0 && er->n) {
		/* the probes' MTU probe runs beside them (their small writes), not after them: the
		 * confirmation takes one deadline, not the deadline and the MTU probe's */
		struct rp_engine_cfg conf = *full;

		conf.no_mtucheck = true;
		c->cfg = &conf;
		rc = mx_round_start(c, R->next_round++, MX_SLOT_CONFIRM, er->jobs, er->n, &er->st);   /* (copies conf) */
		c->cfg = saved;
	}
	if (rc != 0 || !er->n) {
		epdead_round_free(R, er);
		return rc;
	}
	R->epdead = er;
	if (c->rank == 0 && R->hooks.confirm_started)
		R->hooks.confirm_started(R->hooks.arg);
	return 0;
}

/* Rank 0: every scheduled direction of a suspect not decided dead (spared, or undecided) in planned
 * rounds [from, to) (left out of its bandwidth round while the confirmation ran) to the late rounds.
 * 0, -EINVAL or -ENOMEM. */
static int left_late(struct mx_run *R, const struct epdead_round *er, size_t from, size_t to)
{
	size_t n_rounds = rp_sched_n_rounds(R->sched);
	int rc = 0;

	for (size_t r = from; r < n_rounds && r < to && rc == 0; r++) {
		size_t cnt = 0;

		if (rp_sched_round(R->sched, r, R->pairs, R->ctx.max_pairs, &cnt) != 0)
			return -EINVAL;
		for (size_t i = 0; i < cnt && rc == 0; i++) {
			uint32_t a = R->pairs[i].a, b = R->pairs[i].b;
			bool left = false;
			struct mx_sweep_mark *m;

			for (size_t j = 0; j < er->n_sus && !left; j++)
				left = er->sus[j].e == a || er->sus[j].e == b;
			if (!left || mx_sweep_ep_dead(&R->sweep, a) || mx_sweep_ep_dead(&R->sweep, b))
				continue;
			m = mx_sweep_mark(&R->sweep, a < b ? a : b, a < b ? b : a);
			if (!m)
				rc = -ENOMEM;
			else
				m->late |= 3;
		}
	}
	mx_sweep_sort(&R->sweep);
	return rc;
}

/* mx_run_epdead_finish, the planned rounds before `to` run (with --hold) while it ran. */
static int finish(struct mx_run *R, int rc, bool held, size_t to)
{
	struct epdead_round *er = R->epdead;
	struct mx_got got = { 0 };

	if (!er)
		return rc;
	if (rc != 0) {
		/* the run ends first: the sides are waited for and dropped, the suspects undecided */
		mx_round_abandon(&R->ctx, er->st);
		R->epdead = NULL;
		epdead_round_free(R, er);
		return rc;
	}
	R->started = er->st;
	rc = mx_run_sweep_round(R, er->jobs, er->n, &got, 3, er->k, er->n_rounds, NULL);
	R->started = NULL;
	R->sweep.n_confirm++;
	if (rc >= 0) {
		int src = dead_share(R, er->sus, er->n_sus);

		rc = rc ? rc : src;
	}
	R->epdead = NULL;
	out_clear(R, er);
	if (rc == 0 && held && R->ctx.rank == 0)
		rc = left_late(R, er, (er->k + 1) * R->sweep.width, to);
	epdead_round_free(R, er);
	mx_got_fini(&got);
	return rc;
}

int mx_run_epdead_finish(struct mx_run *R, int rc, bool held)
{
	return finish(R, rc, held, rp_sched_n_rounds(R->sched));
}
