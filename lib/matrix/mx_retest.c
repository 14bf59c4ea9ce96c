/* mx_retest.c: the matrix's retest rounds and final judgement; see mx_retest.h. */
#include "matrix/mx_retest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/retest.h"
#include "job/mx_schedule.h"

/* A direction to measure again: fresh (never measured again) or pending (measured again, still
 * failing, wanted again). */
struct want {
	uint32_t a, b;
	size_t idx;
	int dir;
	bool fresh;
};

static int want_cmp(const void *x, const void *y)
{
	const struct want *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return p->dir - q->dir;
}

/* Room in *arr (*cap elements of size elem, doubled from 64) for element n. 0 or -ENOMEM (*arr kept). */
static int room_for(void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t nc = *cap ? 2 * *cap : 64;
	void *na;

	if (n < *cap)
		return 0;
	na = realloc(*arr, nc * elem);
	if (!na)
		return -ENOMEM;
	*arr = na;
	*cap = nc;
	return 0;
}

static int want_push(struct want **w, size_t *k, size_t *cap, uint32_t s, uint32_t d, size_t i, bool fresh)
{
	if (room_for((void **)w, cap, *k, sizeof(**w)) != 0)
		return -ENOMEM;
	(*w)[(*k)++] = (struct want){ .a = s < d ? s : d, .b = s < d ? d : s, .idx = i, .dir = s < d ? 0 : 1, .fresh = fresh };
	return 0;
}

/* Whether pair i is wanted again: 0 no, 1 fresh, 2 pending. */
static int want_of(const struct rp_result_seq *res, size_t i, unsigned max_retest)
{
	struct rp_result_peek pk;
	struct rp_pair_result tmp;

	if (rp_result_seq_quiet(res, i))
		return 0;             /* a pass, known without reading it */
	rp_result_seq_peek(res, i, &pk);
	if (!rp_retest_status_wanted(pk.status))
		return 0;             /* a pass (most of them) is never built */
	const struct rp_pair_result *r = rp_result_seq_get(res, i, &tmp);

	if (!rp_retest_wanted(r, max_retest))
		return 0;
	return r->n_attempts > 1 ? 2 : 1;
}

/* The retested directed pairs, sorted by unordered pair. */
static int wanted(const uint32_t *pair_eps, const struct rp_result_seq *res, const bool *unavailable,
		  size_t n_eps, unsigned max_retest, struct want **w_p, size_t *n_p)
{
	size_t n = res->n, cap = 0, k = 0;
	struct want *w = NULL;        /* grown as wanted pairs are found: a few among millions */

	for (size_t i = 0; i < n; i++) {
		uint32_t s = pair_eps[2 * i], d = pair_eps[2 * i + 1];

		if (s >= n_eps || d >= n_eps || s == d) {
			free(w);
			return -EINVAL;
		}
		if (unavailable && (unavailable[s] || unavailable[d]))
			continue;
		int kind = want_of(res, i, max_retest);

		if (kind && want_push(&w, &k, &cap, s, d, i, kind == 1) != 0) {
			free(w);
			return -ENOMEM;
		}
	}
	if (k)
		qsort(w, k, sizeof(*w), want_cmp);
	*w_p = w;
	*n_p = k;
	return 0;
}

/* Sampled retest (mx_retest.h). An endpoint's part in this set's plan. */
enum ep_state {
	EP_PLAN = 0,                  /* its pairs measured again one by one */
	EP_SAMPLE,                    /* sampled now: its sample measured again, its other pairs wait */
	EP_WAIT,                      /* its sample still being measured again (--retest 2 or more) */
	EP_HELD                       /* its sample failed again: its waiting pairs are marked */
};

struct ep_plan {
	uint32_t fresh;               /* distinct peers with a direction wanting its first retest */
	uint32_t seen;                /* those met so far, choosing the sample */
	uint8_t state;                /* enum ep_state */
};

static size_t group_end(const struct want *w, size_t n, size_t from)
{
	size_t to = from + 1;

	while (to < n && w[to].a == w[from].a && w[to].b == w[from].b)
		to++;
	return to;
}

static bool group_fresh(const struct want *w, size_t from, size_t to)
{
	for (size_t j = from; j < to; j++)
		if (w[j].fresh)
			return true;
	return false;
}

/* How each sample taken held up, into t[e].state: EP_HELD when each of its directions failed again
 * and none is left to measure, EP_WAIT while one is still wanted again, EP_PLAN when one passed or was
 * not measured again; the decided ones recorded in sm. */
static void samples_judge(struct mx_retest_samples *sm, const struct rp_result_seq *res, unsigned max_retest,
			  struct ep_plan *t)
{
	for (size_t e = 0; e < sm->n_eps; e++)
		if (sm->state[e] == MX_SAMPLE_TAKEN)
			t[e].state = EP_HELD;
	for (size_t k = 0; k < sm->n; k++) {
		struct ep_plan *x = &t[sm->dir[k].ep];
		struct rp_pair_result tmp;
		const struct rp_pair_result *r;

		if (sm->state[sm->dir[k].ep] != MX_SAMPLE_TAKEN || x->state == EP_PLAN)
			continue;
		r = rp_result_seq_get(res, sm->dir[k].idx, &tmp);
		if (r->status == RP_ST_OK || r->n_attempts < 2)
			x->state = EP_PLAN;
		else if (rp_retest_wanted(r, max_retest))
			x->state = EP_WAIT;
	}
	for (size_t e = 0; e < sm->n_eps; e++)
		if (sm->state[e] == MX_SAMPLE_TAKEN && t[e].state != EP_WAIT)
			sm->state[e] = t[e].state == EP_HELD ? MX_SAMPLE_HELD : MX_SAMPLE_FAILED;
}

/* Every endpoint's part: fresh peers counted; the samples taken judged; sampled now when it has none
 * and more than MX_RETEST_SAMPLE_OVER fresh peers; else one by one. */
static int ep_plans(const struct want *w, size_t n, struct mx_retest_samples *sm, const struct rp_result_seq *res,
		    unsigned max_retest, struct ep_plan **t_p)
{
	struct ep_plan *t = calloc(sm->n_eps ? sm->n_eps : 1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0, to; i < n; i = to) {
		to = group_end(w, n, i);
		if (group_fresh(w, i, to)) {
			t[w[i].a].fresh++;
			t[w[i].b].fresh++;
		}
	}
	samples_judge(sm, res, max_retest, t);
	for (size_t e = 0; e < sm->n_eps; e++)
		if (sm->state[e] == MX_SAMPLE_NONE && t[e].fresh > MX_RETEST_SAMPLE_OVER)
			t[e].state = EP_SAMPLE;
	*t_p = t;
	return 0;
}

/* Whether the pair is in sampling endpoint x's sample: MX_RETEST_SAMPLE of its fresh peers, evenly
 * spread over them in peer order (exactly that many: one j a multiple of its count falls in each
 * window of MX_RETEST_SAMPLE). Called once per fresh pair of x, in order. */
static bool sample_pick(struct ep_plan *x)
{
	uint64_t j = x->seen++;

	return x->state == EP_SAMPLE && j * MX_RETEST_SAMPLE % x->fresh < MX_RETEST_SAMPLE;
}

/* Record w[from .. to)'s fresh directions in endpoint e's sample. 0 or -ENOMEM. */
static int sample_add(struct mx_retest_samples *sm, uint32_t e, const struct want *w, size_t from, size_t to)
{
	for (size_t j = from; j < to; j++) {
		if (!w[j].fresh)
			continue;
		if (room_for((void **)&sm->dir, &sm->cap, sm->n, sizeof(*sm->dir)) != 0)
			return -ENOMEM;
		sm->dir[sm->n++] = (struct mx_sample_dir){ .ep = e, .idx = w[j].idx };
	}
	sm->state[e] = MX_SAMPLE_TAKEN;
	return 0;
}

enum fate { FATE_PLAN, FATE_DEFER, FATE_MARK };

/* What becomes of the fresh directions of w[from .. to), a pair of endpoints a and b: marked when
 * either's sample held, measured when in either's sample taken now (recorded there) or neither is
 * sampling, else left for a later set. -ENOMEM or the fate. */
static int fresh_fate(struct mx_retest_samples *sm, struct ep_plan *t, const struct want *w, size_t from, size_t to)
{
	uint32_t a = w[from].a, b = w[from].b;
	bool pick_a = sample_pick(&t[a]), pick_b = sample_pick(&t[b]);

	if (t[a].state == EP_HELD || t[b].state == EP_HELD)
		return FATE_MARK;
	if ((pick_a && sample_add(sm, a, w, from, to) != 0) || (pick_b && sample_add(sm, b, w, from, to) != 0))
		return -ENOMEM;
	if (pick_a || pick_b)
		return FATE_PLAN;
	if (t[a].state == EP_SAMPLE || t[a].state == EP_WAIT || t[b].state == EP_SAMPLE || t[b].state == EP_WAIT)
		return FATE_DEFER;
	return FATE_PLAN;
}

/* Mark result idx confirmed by its endpoint's sample. 0 or as the store's put. */
static int mark_held(const struct rp_result_seq *res, size_t idx)
{
	struct rp_pair_result tmp, *r = rp_result_seq_get(res, idx, &tmp);

	r->confirm = RP_CONFIRM_BY_ENDPOINT;
	return rp_result_seq_put(res, idx, r);
}

/* Direction w of the plan's pairs: added to the last job, or a new one. */
static void plan_add(const struct rp_engine_cfg *base, const struct rp_result_seq *res, const struct want *w,
		     struct mx_retest_job *plan, size_t *n_jobs)
{
	struct rp_engine_cfg next;
	struct rp_pair_result tmp;
	struct mx_retest_job *p;

	if (!*n_jobs || plan[*n_jobs - 1].a != w->a || plan[*n_jobs - 1].b != w->b)
		plan[(*n_jobs)++] = (struct mx_retest_job){ .a = w->a, .b = w->b, .res = { SIZE_MAX, SIZE_MAX } };
	p = &plan[*n_jobs - 1];
	rp_retest_cfg(base, rp_result_seq_get(res, w->idx, &tmp), &next);
	p->dirs |= 1u << w->dir;
	p->res[w->dir] = w->idx;
	if (next.qp.qp_timeout > p->qp_timeout)
		p->qp_timeout = next.qp.qp_timeout;
}

/* Into plan, the directions of w's pairs to measure again now; the fresh ones of an endpoint whose
 * sample held marked instead, those a sample leaves out left for a later set. */
static int plan_fill(const struct rp_engine_cfg *base, const struct rp_result_seq *res, const struct want *w,
		     size_t n_w, struct mx_retest_samples *sm, struct ep_plan *t, struct mx_retest_job *plan,
		     size_t *n_jobs_p, size_t *n_marked_p)
{
	size_t n_jobs = 0;

	for (size_t i = 0, to; i < n_w; i = to) {
		int fate = FATE_PLAN;

		to = group_end(w, n_w, i);
		if (sm && group_fresh(w, i, to))
			fate = fresh_fate(sm, t, w, i, to);
		if (fate < 0)
			return fate;
		for (size_t j = i; j < to; j++) {
			if (w[j].fresh && fate == FATE_DEFER)
				continue;
			if (w[j].fresh && fate == FATE_MARK) {
				int rc = mark_held(res, w[j].idx);

				if (rc)
					return rc;
				++*n_marked_p;
				continue;
			}
			plan_add(base, res, &w[j], plan, &n_jobs);
		}
	}
	*n_jobs_p = n_jobs;
	return 0;
}

int mx_retest_samples_init(struct mx_retest_samples *sm, size_t n_eps)
{
	memset(sm, 0, sizeof(*sm));
	sm->state = calloc(n_eps ? n_eps : 1, sizeof(*sm->state));
	if (!sm->state)
		return -ENOMEM;
	sm->n_eps = n_eps;
	return 0;
}

void mx_retest_samples_fini(struct mx_retest_samples *sm)
{
	free(sm->state);
	free(sm->dir);
	memset(sm, 0, sizeof(*sm));
}

int mx_retest_jobs(const struct rp_engine_cfg *base, const uint32_t *pair_eps, const struct rp_result_seq *res,
		      const bool *unavailable, size_t n_eps, unsigned max_retest, struct mx_retest_samples *sm,
		      struct mx_retest_job **retest_p, size_t *n_jobs_p, size_t *n_rounds_p, size_t *n_marked_p)
{
	struct want *w = NULL;
	struct ep_plan *t = NULL;
	struct mx_retest_job *plan = NULL;
	struct rp_sched_pair *sp = NULL;
	uint32_t *round_of = NULL;
	size_t n_w = 0, n_jobs = 0, n_marked = 0;
	int rc;

	*retest_p = NULL;
	*n_jobs_p = *n_rounds_p = 0;
	if (n_marked_p)
		*n_marked_p = 0;
	if (sm && sm->n_eps != n_eps)
		return -EINVAL;
	rc = wanted(pair_eps, res, unavailable, n_eps, max_retest, &w, &n_w);
	if (rc || n_w == 0)
		goto out;
	if (sm)
		rc = ep_plans(w, n_w, sm, res, max_retest, &t);
	plan = calloc(n_w, sizeof(*plan));
	if (!rc && !plan)
		rc = -ENOMEM;
	if (!rc)
		rc = plan_fill(base, res, w, n_w, sm, t, plan, &n_jobs, &n_marked);
	if (n_marked_p)
		*n_marked_p = n_marked;    /* a store's marks stay, whatever follows */
	if (rc || n_jobs == 0)
		goto out;
	sp = calloc(n_jobs, sizeof(*sp));
	round_of = calloc(n_jobs, sizeof(*round_of));
	if (!sp || !round_of) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n_jobs; i++)
		sp[i] = (struct rp_sched_pair){ plan[i].a, plan[i].b };
	rc = rp_sched_pack(sp, n_jobs, n_eps, round_of, n_rounds_p);
	if (rc)
		goto out;
	for (size_t i = 0; i < n_jobs; i++)
		plan[i].round = round_of[i];
	*retest_p = plan;
	*n_jobs_p = n_jobs;
	plan = NULL;
out:
	free(w);
	free(t);
	free(plan);
	free(sp);
	free(round_of);
	return rc;
}

void mx_retest_fold(struct rp_pair_result *kept, enum rp_status judged_status, int kept_qp_timeout,
		       struct rp_pair_result *again, int again_qp_timeout)
{
	if (kept->n_attempts == 0)
		rp_pair_result_record_attempt(kept, kept_qp_timeout);   /* the first sample, as the engine left it */
	kept->status = judged_status;   /* rp_retest_merge() keeps the judged status in the history */
	if (again->n_attempts == 0)
		rp_pair_result_record_attempt(again, again_qp_timeout);
	rp_retest_merge(kept, again);
}

int mx_judge(const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps, size_t n_eps,
		const uint32_t *pair_eps, const struct rp_result_seq *res, unsigned max_retest, struct rp_verdict *v)
{
	struct rp_verdict_cfg c = *cfg;

	/* rp_verdict_apply() judges afresh and classifies every pair (rp_retest_classify) before its
	 * drain cover, so one call sees how each failure held up */
	c.retest = max_retest;
	return rp_verdict_judge(&c, eps, n_eps, pair_eps, res, v);
}

void mx_judged_fini(struct mx_judged *kept)
{
	if (kept->valid)
		rp_verdict_fini(&kept->v);
	memset(kept, 0, sizeof(*kept));
}

/* The configuration a judgement with max_retest runs under, padding and all as cfg's. */
static void judge_cfg(const struct rp_verdict_cfg *cfg, unsigned max_retest, struct rp_verdict_cfg *out)
{
	memcpy(out, cfg, sizeof(*out));
	out->retest = max_retest;
}

int mx_judge_keep(struct mx_judged *kept, const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps,
		  size_t n_eps, struct mx_results *mr, unsigned max_retest)
{
	struct rp_result_seq ps = mx_results_pairs(mr);
	struct rp_verdict v;
	int rc;

	mx_judged_fini(kept);
	rc = mx_judge(cfg, eps, n_eps, mr->pair_eps, &ps, max_retest, &v);
	if (rc) {
		rp_verdict_fini(&v);
		return rc;
	}
	kept->valid = true;
	kept->gen = mr->gen;          /* after the judgement's own puts */
	judge_cfg(cfg, max_retest, &kept->cfg);
	kept->eps = eps;
	kept->n_eps = n_eps;
	kept->v = v;
	return 0;
}

int mx_judge_results(struct mx_judged *kept, const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps,
		     size_t n_eps, struct mx_results *mr, unsigned max_retest, struct rp_verdict *v, bool *taken_p)
{
	struct rp_result_seq ps = mx_results_pairs(mr);
	struct rp_verdict_cfg c;

	if (taken_p)
		*taken_p = false;
	judge_cfg(cfg, max_retest, &c);
	if (kept && kept->valid && kept->gen == mr->gen && kept->n_eps == n_eps && memcmp(&kept->cfg, &c, sizeof(c)) == 0 &&
	    (n_eps == 0 || memcmp(kept->eps, eps, n_eps * sizeof(*eps)) == 0)) {
		*v = kept->v;
		kept->valid = false;
		mx_judged_fini(kept);
		if (taken_p)
			*taken_p = true;
		return 0;
	}
	return mx_judge(cfg, eps, n_eps, mr->pair_eps, &ps, max_retest, v);
}
