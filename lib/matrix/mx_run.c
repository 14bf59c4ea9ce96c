/* mx_run.c: the matrix's rounds from first to last; see mx_run.h. */
#include "matrix/mx_run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "matrix/mx_retest.h"
#include "verdict/retest.h"
#include "base/util.h"

static void run_between(void *arg);

size_t mx_run_scheduled_rounds(const struct rp_sched *sched, bool concurrent_rails)
{
	size_t n = rp_sched_n_rounds(sched), total = n;

	if (!concurrent_rails)
		return n;
	for (size_t r = 0; r < n; r++)
		for (size_t g = 0; g < rp_sched_n_groups(sched); g++)
			total += rp_sched_group_round_size(sched, r, g) > 0;
	return total;
}

int mx_run_init(struct mx_run *R)
{
	size_t n_eps = R->ctx.n_eps;

	R->sweep.width = R->set.sweep;
	R->set.hold = R->set.hold && R->set.sweep;
	if (R->set.concurrent_rails && rp_sched_n_groups(R->sched) == 0)
		return -EINVAL;
	if (mx_results_init(&R->mr, n_eps) != 0)
		return -ENOMEM;
	R->ctx.max_pairs = rp_sched_max_round_pairs(R->sched);
	/* a plan (retest, the sweep's second pass, its marks) names each scheduled direction at most
	 * once; a dead-endpoint confirmation each of its directions twice (a probe, its small write),
	 * from suspects with 4 pairs each to endpoints that are no suspects (mx_run_epdead.c): 8 jobs a
	 * suspect, 2 a direction, at most */
	R->ctx.max_retest_jobs = 4 * rp_sched_n_pairs(R->sched) + 1;
	R->ctx.hold_go = R->ctx.rank == 0;   /* mx_run sends each go itself: before or after the hook (mx_run.h) */
	R->n_scheduled = mx_run_scheduled_rounds(R->sched, R->set.concurrent_rails);
	/* a retest round holds at most one job per endpoint pair, so E/2 jobs; a planned one max_pairs */
	R->jobs = calloc(R->ctx.max_pairs + n_eps + 1, sizeof(*R->jobs));
	R->pairs = calloc(R->ctx.max_pairs ? R->ctx.max_pairs : 1, sizeof(*R->pairs));
	R->kept = calloc(2 * (R->ctx.max_pairs + 1), sizeof(*R->kept));
	R->solo = calloc(2 * (R->ctx.max_pairs + 1), sizeof(*R->solo));
	R->touched_cap = 2 * (R->ctx.max_pairs + n_eps + 1);
	R->touched = calloc(R->touched_cap, sizeof(*R->touched));
	R->spairs = calloc(R->ctx.max_pairs ? R->ctx.max_pairs : 1, sizeof(*R->spairs));
	R->ep_table = calloc(n_eps ? n_eps : 1, sizeof(*R->ep_table));
	if (R->ctx.rank == 0 && !R->set.concurrent_rails) {
		/* a planned round kept while the next one runs (mx_run.h) */
		R->pend_jobs = calloc(R->ctx.max_pairs + n_eps + 1, sizeof(*R->pend_jobs));
		R->pend_pairs = calloc(R->ctx.max_pairs ? R->ctx.max_pairs : 1, sizeof(*R->pend_pairs));
		if (!R->pend_jobs || !R->pend_pairs)
			return -ENOMEM;
		R->ctx.between = run_between;
		R->ctx.between_arg = R;
	}
	/* dead endpoints are confirmed by a second probe: looked for only when failures get one */
	if (R->sweep.width && R->set.retest && !R->set.concurrent_rails && mx_sweep_ep_init(&R->sweep, n_eps) != 0)
		return -ENOMEM;
	return R->jobs && R->pairs && R->kept && R->solo && R->touched && R->spairs && R->ep_table ? 0 : -ENOMEM;
}

int mx_run_fold(struct mx_run *R, size_t k, int kept_qp, struct rp_pair_result *again,
		int again_qp)
{
	struct rp_pair_result tmp, *kept = mx_results_get(&R->mr, k, &tmp);
	bool was_failed = kept->status != RP_ST_OK;

	/* kept carries the latest verdict's status (judged in place): its earlier attempt keeps it */
	mx_retest_fold(kept, kept->status, kept_qp, again, again_qp);
	if (mx_results_put(&R->mr, k, kept) != 0)
		return -ENOMEM;
	R->failed -= was_failed;
	R->failed += kept->status != RP_ST_OK;
	return mx_run_touch(R, k);
}

int mx_run_replace(struct mx_run *R, size_t k, const struct rp_pair_result *r)
{
	struct rp_pair_result tmp;
	bool was_failed = mx_results_get(&R->mr, k, &tmp)->status != RP_ST_OK;

	if (mx_results_put(&R->mr, k, r) != 0)
		return -ENOMEM;
	R->failed -= was_failed;
	R->failed += r->status != RP_ST_OK;
	return mx_run_touch(R, k);
}

int mx_run_touch(struct mx_run *R, size_t idx)
{
	if (R->n_touched == R->touched_cap) {
		size_t cap = R->touched_cap ? 2 * R->touched_cap : 16;
		size_t *nt = realloc(R->touched, cap * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		R->touched = nt;
		R->touched_cap = cap;
	}
	R->touched[R->n_touched++] = idx;
	return 0;
}

void mx_run_fini(struct mx_run *R)
{
	mx_round_spent_free(&R->ctx);
	mx_judged_fini(&R->judged);
	mx_retest_samples_fini(&R->samples);
	free(R->jobs);
	mx_got_fini(&R->got);
	free(R->pairs);
	free(R->kept);
	free(R->solo);
	free(R->touched);
	free(R->spairs);
	free(R->ep_table);
	free(R->pend_jobs);
	free(R->pend_pairs);
	mx_got_fini(&R->pend_got);
	R->pend_jobs = NULL;
	R->pend_pairs = NULL;
	R->pending = false;
	R->touched = NULL;
	R->spairs = NULL;
	mx_sweep_fini(&R->sweep);
	mx_holds_fini(&R->holds);
	R->jobs = NULL;
	R->pairs = NULL;
	R->kept = NULL;
	R->solo = NULL;
	mx_results_fini(&R->mr);
	mx_conc_fini(&R->conc);
}

/* Endpoint e as the results keep it, when that is the table's entry but for what an engine learns
 * (decided once: the results keep an endpoint as first seen); NULL otherwise or not seen yet. */
static const struct rp_endpoint *ep_as_table(struct mx_run *R, const struct mx_got *g, uint32_t e)
{
	const struct rp_endpoint *ep = mx_results_ep(&R->mr, e);

	if (ep && !R->ep_table[e])
		R->ep_table[e] = mx_got_ep_from_table(g, e, ep) ? 1 : 2;
	return ep && R->ep_table[e] == 1 ? ep : NULL;
}

/* Rank 0: slot i's plain side (src -> dst) kept as its record: on the endpoints' learned fields
 * alone when the results already keep both as the side would build them, else built and compared
 * whole (mx_results_add_plain). 0 with *kept_p false when the slot holds no plain side, -ENOMEM. */
static int plain_keep(struct mx_run *R, const struct mx_got *g, size_t i, uint32_t src, uint32_t dst, bool *kept_p)
{
	const struct rp_endpoint *s = ep_as_table(R, g, src), *d = s ? ep_as_table(R, g, dst) : NULL;
	const struct mx_plain *pass = mx_got_pass(g, i);
	struct rp_endpoint ep[2];
	struct mx_plain pl;

	*kept_p = false;
	if (!pass)
		return 0;
	*kept_p = true;
	if (d && mx_got_plain_ends_are(g, i, s, d))
		return mx_results_add_record(&R->mr, pass, src, dst);
	(void)mx_got_plain(g, i, &pl, &ep[0], &ep[1]);
	return mx_results_add_plain(&R->mr, &pl, &ep[0], &ep[1], src, dst);
}

/* Rank 0: keep a planned round's results, jobs[0..got) and their results g (not the interrupted
 * ones: not measured, never a drain); R->kept[i] says where direction i went (-1: not kept). */
static int scheduled_keep(struct mx_run *R, const struct mx_job *jobs, const struct mx_got *g,
			  const struct rp_sched_pair *pairs, size_t got)
{
	struct rp_pair_result tmp;

	for (size_t i = 0; i < 2 * got; i++) {
		const struct rp_sched_pair *p = &pairs[i / 2];
		uint32_t src = i % 2 ? p->b : p->a, dst = i % 2 ? p->a : p->b;
		const struct rp_packed *bytes;
		bool as_packed;

		R->kept[i] = -1;
		if (!(jobs[i / 2].dirs & (1u << (i % 2))) || mx_got_status(g, i) == RP_ST_INTERRUPTED)
			continue;         /* not run (--bidir: b -> a is a's reverse), or stopped */
		const struct mx_sweep_mark *m = R->sweep.n ? mx_sweep_find(&R->sweep, p->a, p->b) : NULL;

		if (!m || m->res[i % 2] == SIZE_MAX) {
			/* a plain side: its record kept as it came, nothing expanded */
			size_t at = R->mr.n;
			bool plain;

			if (plain_keep(R, g, i, src, dst, &plain) != 0)
				return -ENOMEM;
			if (plain) {
				R->kept[i] = (int64_t)at;
				if (mx_run_touch(R, at) != 0)
					return -ENOMEM;
				continue;
			}
		}
		mx_got_get_kept(g, i, &tmp, &as_packed);

		if (m && m->res[i % 2] != SIZE_MAX && (m->cleared & (1u << (i % 2)))) {
			/* a screen failure pass 2 cleared: this measurement replaces it, as if never screened */
			if (mx_run_replace(R, m->res[i % 2], &tmp) != 0)
				return -ENOMEM;
			R->kept[i] = (int64_t)m->res[i % 2];
			continue;
		}
		if (m && m->res[i % 2] != SIZE_MAX) {
			/* the sweep failed this direction once: this measurement is its retest */
			size_t k = m->res[i % 2];
			int qp = R->ctx.cfg->qp.qp_timeout;

			R->kept[i] = (int64_t)k;
			if (mx_run_fold(R, k, qp, &tmp, jobs[i / 2].qp_timeout ? jobs[i / 2].qp_timeout : qp) != 0)
				return -ENOMEM;
			continue;
		}
		R->failed += tmp.status != RP_ST_OK;
		R->kept[i] = (int64_t)R->mr.n;
		/* the round's packed bytes as they came when they are tmp's: not packed again */
		bytes = as_packed ? mx_got_packed(g, i) : NULL;
		if ((bytes ? mx_results_add_packed(&R->mr, &tmp, bytes->buf, bytes->len, src, dst)
			   : mx_results_add(&R->mr, &tmp, src, dst)) != 0)
			return -ENOMEM;
		if (mx_run_touch(R, R->mr.n - 1) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* Rank 0: keep a concurrent round's results, each with its solo result (R->solo, by place). */
static int conc_keep(struct mx_run *R, size_t r, size_t got)
{
	struct rp_pair_result tmp;

	for (size_t i = 0; i < 2 * got; i++) {
		const struct rp_sched_pair *p = &R->pairs[i / 2];

		if (!(R->jobs[i / 2].dirs & (1u << (i % 2))) || mx_got_status(&R->got, i) == RP_ST_INTERRUPTED)
			continue;
		if (mx_conc_add(&R->conc, mx_got_get(&R->got, i, &tmp), i % 2 ? p->b : p->a, i % 2 ? p->a : p->b, R->solo[i], (uint32_t)r) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* Did a stop leave any asked-for direction of the round's jobs[0..n) (results g) unmeasured? */
static bool round_cut(const struct mx_job *jobs, const struct mx_got *g, size_t n)
{
	for (size_t k = 0; k < 2 * n; k++)
		if ((jobs[k / 2].dirs & (1u << (k % 2))) && mx_got_status(g, k) == RP_ST_INTERRUPTED)
			return true;
	return false;
}

/* Rank 0: keep a round over jobs[0..n) with results g (pairs[] parallel; concurrent: round r's
 * concurrent results), count it, and call the hook with it (the run-wide round number). A planned
 * round (not late) counts as run and, when no stop cut it short, done. 0 or -ENOMEM (not hooked);
 * *hook_s the hook's real seconds. */
static int keep_round(struct mx_run *R, const struct mx_job *jobs, const struct mx_got *g,
		      const struct rp_sched_pair *pairs, size_t n, size_t r, bool conc, bool late, size_t round,
		      double *hook_s)
{
	R->n_touched = 0;
	if ((conc ? conc_keep(R, r, n) : scheduled_keep(R, jobs, g, pairs, n)) != 0)
		return -ENOMEM;
	/* a round counts as done only when a stop cut none of it short: its interrupted directions
	 * were not measured (the coverage and "complete" must not claim them) */
	if (late) {
		R->late_run++;
	} else {
		R->scheduled_run++;
		R->rounds_done += !round_cut(jobs, g, n);
	}
	R->in_late = late;
	R->round_jobs = jobs;
	R->round_got = g;
	R->round_n = n;
	R->hook_round = round;
	*hook_s = rp_now();
	if (R->hooks.round_done)
		R->hooks.round_done(R->hooks.arg, false, late ? R->late_run - 1 : R->scheduled_run - 1,
				    late ? R->n_late : R->n_scheduled);
	*hook_s = rp_now() - *hook_s;
	return 0;
}

/* Rank 0: keep the round released before it was kept (mx_run.h), if any: while the next round's
 * sides run (overlapped, from ctx.between), or at a batch's end. An error waits in keep_rc. */
static void keep_pending(struct mx_run *R, bool overlapped)
{
	double t0 = rp_now(), hook_s = 0;
	int rc;

	if (!R->pending)
		return;
	R->pending = false;
	R->hook_deferred = true;
	rc = keep_round(R, R->pend_jobs, &R->pend_got, R->pend_pairs, R->pend_n, 0, false, false, R->pend_round,
			&hook_s);
	R->hook_deferred = false;
	if (rc) {
		R->keep_rc = rc;
		return;
	}
	mx_results_settle(&R->mr);   /* after the hook: it streamed the round's results whole */
	R->keep_s = rp_now() - t0 - hook_s;
	R->keep_overlapped = overlapped;
	R->keep_seq++;
}

static void run_between(void *arg)
{
	keep_pending(arg, true);
}

/* A bandwidth round over R->jobs[0..got) (pairs[] parallel): every rank measures; rank 0 keeps the
 * results (solo or concurrent) and calls the hook, then releases the ranks; a planned round
 * (ctx.between set: not concurrent_rails) is released first and kept while the next one runs
 * (mx_run.h). MX_GO_ON, MX_STOPPED, negative errno. */
static int bw_step(struct mx_run *R, const struct rp_sched_pair *pairs, size_t got, size_t r, bool conc, bool late)
{
	struct mx_ctx *c = &R->ctx;
	size_t round = R->next_round++;
	double hook_s;
	int rc = mx_round(c, round, R->jobs, got, &R->got);

	if (rc < 0 || c->rank != 0)
		return rc;
	if (R->keep_rc) {             /* the previous round's keeping, in this round's between */
		mx_round_go(c, round);
		return R->keep_rc;
	}
	if (c->between && !late) {
		struct mx_job *j = R->pend_jobs;
		struct mx_got g = R->pend_got;

		rc = mx_round_go(c, round);
		R->pend_collect_s = c->go_sent - c->sides_end;
		R->pend_jobs = R->jobs;       /* the round's buffers become the pending ones */
		R->jobs = j;
		R->pend_got = R->got;
		R->got = g;
		memcpy(R->pend_pairs, pairs, got * sizeof(*pairs));
		R->pend_n = got;
		R->pend_round = round;
		R->pending = true;
		return rc;
	}
	if (keep_round(R, R->jobs, &R->got, pairs, got, r, conc, late, round, &hook_s) != 0) {
		mx_round_go(c, round);
		return -ENOMEM;
	}
	mx_results_settle(&R->mr);   /* after the hook: it streamed the round's results whole */
	return mx_round_go(c, round);
}

/* One planned round over pairs[0..got), as the sweep leaves it. */
static int scheduled_step(struct mx_run *R, const struct rp_sched_pair *pairs, size_t got, size_t r, bool conc)
{
	const struct mx_ctx *c = &R->ctx;

	for (size_t i = 0; i < got; i++)
		/* --bidir: one job per unordered pair, a -> b, whose engine runs b -> a at the same
		 * time (the result carries it as its reverse); else both directions, one by one */
		R->jobs[i] = (struct mx_job){ .a = pairs[i].a, .b = pairs[i].b, .dirs = c->cfg->meas.bidir ? 1u : 3u };
	if (R->sweep.width && !conc) {
		/* what the sweep found dead is not measured again; a flaky direction at NCCL's timeout;
		 * in a held sweep's batch, what failed its probe waits for the late rounds */
		memcpy(R->spairs, pairs, got * sizeof(*pairs));
		got = mx_sweep_apply(&R->sweep, R->jobs, R->spairs, got, R->holds.mode == MX_HOLD_USE);
		pairs = R->spairs;
	}
	return bw_step(R, pairs, got, r, conc, false);
}

int mx_run_late_round(struct mx_run *R, const struct mx_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		R->jobs[i] = jobs[i];
		R->spairs[i] = (struct rp_sched_pair){ .a = jobs[i].a, .b = jobs[i].b };
	}
	return bw_step(R, R->spairs, n, 0, false, true);
}

/* concurrent_rails, round r: each rail's pairs alone (their results' places kept in R->solo, at the
 * rail's place in the whole round), then the whole round. MX_GO_ON, MX_STOPPED, negative errno. */
static int rails_round(struct mx_run *R, size_t r)
{
	size_t cap = R->ctx.max_pairs, off = 0, got = 0;
	int rc = 0;

	for (size_t i = 0; i < 2 * (cap + 1); i++)
		R->solo[i] = -1;
	for (size_t g = 0; g < rp_sched_n_groups(R->sched) && rc == 0; g++) {
		if (rp_sched_group_round(R->sched, r, g, R->pairs + off, cap - off, &got) != 0 || got == 0)
			continue;
		rc = scheduled_step(R, R->pairs + off, got, r, false);
		if (R->ctx.rank == 0)
			memcpy(R->solo + 2 * off, R->kept, 2 * got * sizeof(*R->solo));
		off += got;
	}
	if (rc)
		return rc;
	rp_sched_round(R->sched, r, R->pairs, cap, &got);
	return scheduled_step(R, R->pairs, got, r, true);
}

int mx_run_scheduled(struct mx_run *R, size_t from, size_t to)
{
	int rc = 0;

	for (size_t r = from; r < to && rc == 0; r++) {
		size_t got = 0;

		if (R->set.concurrent_rails) {
			rc = rails_round(R, r);
		} else {
			rp_sched_round(R->sched, r, R->pairs, R->ctx.max_pairs, &got);
			rc = scheduled_step(R, R->pairs, got, r, false);
		}
	}
	keep_pending(R, false);       /* the batch's last round, before anything else runs */
	return rc ? rc : R->keep_rc;
}

/* Rank 0: the pairs to measure again, from the results as the verdict judges them now. The verdict
 * judges the kept results in place (it judges afresh every time: verdict.h), never a copy of them all. */
static int retest_jobs(struct mx_run *R, struct mx_retest_job **retest_p, size_t *n_p, size_t *n_rounds_p)
{
	struct mx_ctx *c = &R->ctx;
	bool *gone = calloc(c->n_eps ? c->n_eps : 1, sizeof(*gone));
	size_t marked = 0;
	int rc;

	if (!gone || (!R->samples.state && mx_retest_samples_init(&R->samples, c->n_eps) != 0)) {
		free(gone);
		return -ENOMEM;
	}
	struct rp_result_seq ps = mx_results_pairs(&R->mr);

	/* its verdict kept: the final one when no retest changes a result (mx_retest.h) */
	rc = mx_judge_keep(&R->judged, R->vcfg, R->rep_eps, c->n_eps, &R->mr, R->vcfg->retest);
	R->failed = mx_results_failed(&R->mr);
	for (size_t e = 0; !rc && e < c->n_eps; e++)
		gone[e] = c->dead[c->eps[e].owner] || c->eps[e].no_port[0];
	if (!rc)
		rc = mx_retest_jobs(c->cfg, R->mr.pair_eps, &ps, gone, c->n_eps, R->set.retest, &R->samples,
				       retest_p, n_p, n_rounds_p, &marked);
	R->retest_by_endpoint += marked;   /* the kept verdict is then stale: the store's generation says so */
	free(gone);
	return rc;
}

/* Rank 0: fold one retest round's results into the kept ones. */
static void retest_fold(struct mx_run *R, const struct mx_retest_job *plan, const size_t *which, size_t n)
{
	struct rp_pair_result tmp;

	for (size_t i = 0; i < n; i++) {
		const struct mx_retest_job *p = &plan[which[i]];

		for (int d = 0; d < 2; d++) {
			if (!(p->dirs & (1u << d)) || mx_got_status(&R->got, 2 * i + d) == RP_ST_INTERRUPTED)
				continue;         /* not measured again: the pair stays unconfirmed */
			/* within the capacity mx_run_init gave, the touch cannot fail, nor the put: a
			 * result measured again failed, so it is kept whole already (mx_results.h) */
			(void)mx_run_fold(R, p->res[d], R->ctx.cfg->qp.qp_timeout,
					  mx_got_get(&R->got, 2 * i + d, &tmp), p->qp_timeout);
		}
	}
}

/* One set of retest rounds over a plan every rank has; rank 0 adds to *folded the results it measured
 * again (an interrupted direction is not one). MX_GO_ON, MX_STOPPED, negative errno. */
static int retest_run(struct mx_run *R, const struct mx_job *jobs, const uint32_t *round_of, size_t n,
		      const struct mx_retest_job *plan, size_t *folded)
{
	size_t n_rounds = 0, *which = calloc(n ? n : 1, sizeof(*which));
	int rc = 0;

	if (!which)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		n_rounds = round_of[i] + 1 > n_rounds ? round_of[i] + 1 : n_rounds;
	for (size_t k = 0; k < n_rounds && rc == 0; k++) {
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (round_of[i] == k) {
				R->jobs[m] = jobs[i];
				which[m++] = i;
			}
		rc = mx_round(&R->ctx, R->next_round++, R->jobs, m, &R->got);
		if (rc >= 0 && R->ctx.rank == 0) {
			R->n_touched = 0;
			retest_fold(R, plan, which, m);
			*folded += R->n_touched;
			R->retest_rounds++;
			R->hook_round = R->next_round - 1;
			R->round_jobs = R->jobs;
			R->round_got = &R->got;
			R->round_n = m;
			if (R->hooks.round_done)
				R->hooks.round_done(R->hooks.arg, true, k, n_rounds);
			mx_results_settle(&R->mr);
			rc = mx_round_go(&R->ctx, R->next_round - 1);
		}
	}
	free(which);
	return rc;
}

/* Rank 0: the next retest plan as jobs, sent to every rank. */
static int retest_jobs_send(struct mx_run *R, struct mx_retest_job **retest_p, struct mx_job **jobs_p, uint32_t **round_of_p, size_t *n_p)
{
	size_t n = 0, n_rounds = 0;
	double t0;
	int rc;

	if (R->hooks.judging)
		R->hooks.judging(R->hooks.arg, true);
	t0 = rp_now();
	rc = retest_jobs(R, retest_p, &n, &n_rounds);
	if (R->hooks.judging)
		R->hooks.judging(R->hooks.arg, false);

	*jobs_p = calloc(n ? n : 1, sizeof(**jobs_p));
	*round_of_p = calloc(n ? n : 1, sizeof(**round_of_p));
	if (!rc && (!*jobs_p || !*round_of_p))
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++) {
		const struct mx_retest_job *p = &(*retest_p)[i];

		(*jobs_p)[i] = (struct mx_job){ .a = p->a, .b = p->b, .dirs = p->dirs, .qp_timeout = (int16_t)p->qp_timeout };
		(*round_of_p)[i] = p->round;
	}
	if (rc)
		n = 0;        /* the others are told there is nothing more; rank 0 reports the error */
	mx_jobs_send(&R->ctx, R->next_round, *jobs_p, *round_of_p, n);
	R->retest_plan_s += rp_now() - t0;
	if (n && R->hooks.retest_scheduled)
		R->hooks.retest_scheduled(R->hooks.arg, n, n_rounds);
	*n_p = n;
	return rc;
}

/* After the planned rounds: sets of extra rounds, each over the pairs that still fail and were
 * measured again fewer than `retest` times, until a set finds none (lib/verdict/retest.h: each pair
 * is measured again at most `retest` times, so the sets end). The later sets are for pairs that only
 * failed once the sets before had moved the medians: measured again like any other before they are
 * condemned. MX_GO_ON, MX_STOPPED, negative errno. */
static int retest_rounds(struct mx_run *R)
{
	struct mx_ctx *c = &R->ctx;
	size_t folded = 1;            /* rank 0: what the last set measured again (before the first: go) */
	int rc = 0;

	while (R->set.retest && rc == 0) {
		struct mx_retest_job *plan = NULL;
		struct mx_job *jobs = NULL;
		uint32_t *round_of = NULL;
		size_t n = 0;

		if (c->rank == 0 && folded == 0) {
			/* a set that measured nothing again (every direction of it interrupted) changed no
			 * pair's count: the next would be the same, so none follows */
			mx_jobs_send(c, R->next_round, NULL, NULL, 0);
			break;
		}
		folded = 0;
		if (c->rank == 0)
			rc = retest_jobs_send(R, &plan, &jobs, &round_of, &n);
		else
			rc = mx_jobs_wait(c, R->next_round, &jobs, &round_of, &n, rp_now() + mx_ctx_go_wait(c));
		if (!rc && n)
			rc = retest_run(R, jobs, round_of, n, plan, &folded);
		free(plan);
		free(jobs);
		free(round_of);
		if (!rc && n == 0)
			break;
	}
	return rc;
}

int mx_run_rounds(struct mx_run *R)
{
	int rc;

	if (R->sweep.width && R->set.hold)
		rc = mx_run_sweep_held(R);   /* the planned rounds interleaved with the sweep's, then the late ones */
	else if ((rc = R->sweep.width ? mx_run_sweep(R) : 0) == 0)
		rc = mx_run_scheduled(R, 0, rp_sched_n_rounds(R->sched));

	if (rc == 0)
		rc = retest_rounds(R);
	return rc;
}
