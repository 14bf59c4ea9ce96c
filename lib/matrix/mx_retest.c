/* mx_retest.c: the matrix's retest rounds and final judgement; see mx_retest.h. */
#include "matrix/mx_retest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/retest.h"
#include "job/mx_schedule.h"

struct want {
	uint32_t a, b;
	size_t idx;
	int dir;
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

/* The retested directed pairs, sorted by unordered pair. */
static int wanted(const struct rp_engine_cfg *base, const uint32_t *pair_eps, const struct rp_result_seq *res,
		  const bool *unavailable, size_t n_eps, unsigned max_retest, struct want **w_p, size_t *n_p)
{
	size_t n = res->n, cap = 64;
	struct want *w = malloc(cap * sizeof(*w));   /* grown as wanted pairs are found: a few among millions */
	struct rp_pair_result tmp;
	size_t k = 0;

	(void)base;
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t s = pair_eps[2 * i], d = pair_eps[2 * i + 1];

		if (s >= n_eps || d >= n_eps || s == d) {
			free(w);
			return -EINVAL;
		}
		struct rp_result_peek pk;

		if (rp_result_seq_quiet(res, i))
			continue;             /* a pass, known without reading it */
		rp_result_seq_peek(res, i, &pk);
		if (!rp_retest_status_wanted(pk.status))
			continue;             /* a pass (most of them) is never built */
		const struct rp_pair_result *r = rp_result_seq_get(res, i, &tmp);

		if (r->status == RP_ST_NO_PORT || !rp_retest_wanted(r, max_retest))
			continue;
		if (unavailable && (unavailable[s] || unavailable[d]))
			continue;
		if (k == cap) {
			struct want *nw = realloc(w, 2 * cap * sizeof(*w));

			if (!nw) {
				free(w);
				return -ENOMEM;
			}
			w = nw;
			cap *= 2;
		}
		w[k++] = (struct want){ .a = s < d ? s : d, .b = s < d ? d : s, .idx = i, .dir = s < d ? 0 : 1 };
	}
	qsort(w, k, sizeof(*w), want_cmp);
	*w_p = w;
	*n_p = k;
	return 0;
}

int mx_retest_jobs(const struct rp_engine_cfg *base, const uint32_t *pair_eps, const struct rp_result_seq *res,
		      const bool *unavailable, size_t n_eps, unsigned max_retest,
		      struct mx_retest_job **retest_p, size_t *n_jobs_p, size_t *n_rounds_p)
{
	struct want *w = NULL;
	struct mx_retest_job *plan = NULL;
	struct rp_sched_pair *sp = NULL;
	uint32_t *round_of = NULL;
	size_t n_w = 0, n_jobs = 0;
	int rc;

	*retest_p = NULL;
	*n_jobs_p = *n_rounds_p = 0;
	rc = wanted(base, pair_eps, res, unavailable, n_eps, max_retest, &w, &n_w);
	if (rc || n_w == 0)
		goto out;
	plan = calloc(n_w, sizeof(*plan));
	sp = calloc(n_w, sizeof(*sp));
	round_of = calloc(n_w, sizeof(*round_of));
	if (!plan || !sp || !round_of) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n_w; i++) {
		struct rp_engine_cfg next;
		struct rp_pair_result tmp;
		struct mx_retest_job *p;

		if (!n_jobs || plan[n_jobs - 1].a != w[i].a || plan[n_jobs - 1].b != w[i].b) {
			plan[n_jobs] = (struct mx_retest_job){ .a = w[i].a, .b = w[i].b, .res = { SIZE_MAX, SIZE_MAX } };
			n_jobs++;
		}
		p = &plan[n_jobs - 1];
		rp_retest_cfg(base, rp_result_seq_get(res, w[i].idx, &tmp), &next);
		p->dirs |= 1u << w[i].dir;
		p->res[w[i].dir] = w[i].idx;
		if (next.qp.qp_timeout > p->qp_timeout)
			p->qp_timeout = next.qp.qp_timeout;
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
