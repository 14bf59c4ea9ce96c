/* mx_run_sweep.c: the reachability sweep's two passes on every rank (mx_sweep.h), before mx_run's
 * planned rounds: pass 1 probes every scheduled pair, pass 2 (with --retest) probes the failed
 * directions again with NCCL's ACK timeout, then rank 0 sends every rank the directions the
 * bandwidth rounds leave out (dead) and those they measure at NCCL's timeout (flaky). */
#include "matrix/mx_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "matrix/mx_retest.h"
#include "verdict/retest.h"
#include "base/util.h"

static void sweep_reason(struct rp_pair_result *r, double screen_s)
{
	char buf[sizeof(r->reason)];
	int n = screen_s > 0 ? snprintf(buf, sizeof(buf), "reachability screen (%.0f s): %s", screen_s, r->reason)
			     : snprintf(buf, sizeof(buf), "reachability sweep: %s", r->reason);

	if (n > 0)   /* a long reason loses its end, never the prefix */
		rp_strlcpy(r->reason, buf, sizeof(r->reason));
}

/* Rank 0: result g of direction d of (a, b) into the store, its index in the mark; touched (for
 * the round's hook) unless a fold that touches it follows. */
static int keep_result(struct mx_run *R, struct mx_sweep_mark *m, int d, const struct rp_pair_result *g, bool touch)
{
	if (mx_results_add(&R->mr, g, d ? m->b : m->a, d ? m->a : m->b) != 0)
		return -ENOMEM;
	m->res[d] = R->mr.n - 1;
	R->failed += g->status != RP_ST_OK;
	return touch ? mx_run_touch(R, R->mr.n - 1) : 0;
}

/* Rank 0, pass 1: mark a failed probe and keep it as the direction's result at once (a finding
 * every report written from now on holds: issue 26 item 4); a screen's is also pending, for pass 2
 * to decide what it was (kept as a first failure, unconfirmed, until then). */
static int keep_first(struct mx_run *R, const struct mx_job *j, int d, struct rp_pair_result *g)
{
	struct mx_sweep *S = &R->sweep;
	struct mx_sweep_mark *m = mx_sweep_mark(S, j->a, j->b);

	if (!m)
		return -ENOMEM;
	sweep_reason(g, S->screen_s);
	if (!m->failed && S->ep_failed && j->a < S->n_eps && j->b < S->n_eps) {
		S->ep_failed[j->a]++;    /* a pair's first failed direction: one more failed peer each */
		S->ep_failed[j->b]++;
	}
	m->failed |= 1u << d;
	if (m->dead & (1u << d))
		return 0;          /* a pair the pattern scheduled twice, decided at its first probe */
	if (!rp_retest_wanted(g, 1)) {
		/* what no second probe can change (no usable port), whatever the window: dead now, never
		 * probed again (mx_sweep_pack), as the retest rounds never measure it again */
		m->dead |= 1u << d;
		return keep_result(R, m, d, g, true);
	}
	if (!(S->screen_s > 0))
		return keep_result(R, m, d, g, true);
	if (m->first[d] != SIZE_MAX)
		return 0;          /* a pair the pattern scheduled twice: its first screen decides */
	if (S->n_pending == S->cap_pending) {
		size_t cap = S->cap_pending ? 2 * S->cap_pending : 16;
		struct mx_sweep_pending *np = realloc(S->pending, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		S->pending = np;
		S->cap_pending = cap;
	}
	if (keep_result(R, m, d, g, true) != 0)
		return -ENOMEM;
	/* pending with the result kept: pass 2 reads its status here, the rest there */
	S->pending[S->n_pending] = (struct mx_sweep_pending){ .a = j->a, .b = j->b, .d = (uint8_t)d,
							     .status = (uint8_t)g->status };
	m->first[d] = S->n_pending++;
	return 0;
}

/* Rank 0: a screen failure that pass 2 cleared (the full probe passed): kept, unconfirmed, until
 * the bandwidth round that measures the direction replaces it (mx_run_keep_cleared); its reason
 * says so, should the run end before. 0 or -ENOMEM. */
static int note_cleared(struct mx_run *R, size_t k)
{
	struct rp_pair_result tmp, *r = mx_results_get(&R->mr, k, &tmp);
	char buf[sizeof(r->reason)];

	snprintf(buf, sizeof(buf), "%.160s; a full probe passed since: to be measured", r->reason);
	rp_strlcpy(r->reason, buf, sizeof(r->reason));
	if (mx_results_put(&R->mr, k, r) != 0)
		return -ENOMEM;
	return mx_run_touch(R, k);
}

/* Rank 0, pass 2: fold the second probe into the first; dead or flaky from it. After a screen,
 * the screen's failure becomes the direction's result first, unless this probe passed and the
 * screen's short window alone may have caused it: cleared (nothing kept, measured as any
 * direction). */
static int keep_second(struct mx_run *R, const struct mx_job *j, int d, struct rp_pair_result *g,
		       const struct rp_engine_cfg *probe)
{
	struct mx_sweep_mark *m = (struct mx_sweep_mark *)mx_sweep_find(&R->sweep, j->a, j->b);
	bool ok = g->status == RP_ST_OK;

	if (!ok)
		sweep_reason(g, 0);
	if (m && m->first[d] != SIZE_MAX && !R->sweep.pending[m->first[d]].used) {
		struct mx_sweep_pending *p = &R->sweep.pending[m->first[d]];
		bool cleared = ok && mx_sweep_inconclusive((enum rp_status)p->status);

		p->used = true;
		if (cleared) {
			m->cleared |= 1u << d;
			return m->res[d] != SIZE_MAX ? note_cleared(R, m->res[d]) : 0;
		}
		/* the screen's failure is the direction's result since pass 1 (keep_first) */
	}
	if (!m || m->res[d] == SIZE_MAX)
		return 0;   /* impossible: pass 2 is built from the marks */
	if (ok)
		m->flaky |= 1u << d;
	else
		m->dead |= 1u << d;
	return mx_run_fold(R, m->res[d], probe->qp.qp_timeout, g, j->qp_timeout);
}

/* Rank 0, after the sweep however it ended: a failed screen pass 2 did not decide (its probe
 * interrupted) stays the result it has been since pass 1 (keep_first), a first failure left out of
 * the bandwidth rounds (the retest rounds measure it again; after a stop it stays unconfirmed). A
 * second screen of a direction pass 2 did decide (a pattern that schedules a pair twice) goes with
 * that decision. */
static void keep_undecided(struct mx_run *R)
{
	mx_sweep_sort(&R->sweep);
	for (size_t i = 0; i < R->sweep.n_pending; i++) {
		struct mx_sweep_pending *p = &R->sweep.pending[i];
		struct mx_sweep_mark *m = (struct mx_sweep_mark *)mx_sweep_find(&R->sweep, p->a, p->b);
		uint32_t bit = 1u << p->d;

		if (p->used || !m || ((m->dead | m->flaky | m->cleared) & bit))
			continue;     /* decided (every pending screen has its mark: keep_first made it) */
		p->used = true;
		m->dead |= bit;       /* not measured again: left out, unconfirmed */
	}
	free(R->sweep.pending);
	R->sweep.pending = NULL;
	R->sweep.n_pending = R->sweep.cap_pending = 0;
}

int mx_run_sweep_round(struct mx_run *R, const struct mx_job *jobs, size_t n, struct mx_got *got, int pass,
		       size_t k, size_t n_rounds, const struct rp_engine_cfg *probe)
{
	struct mx_ctx *c = &R->ctx;
	double t0 = rp_now();
	int rc, krc = 0;

	/* pass 1's passes are worth that they passed, nothing more: brief (mx_round.h) */
	c->brief = pass == 1;
	rc = pass >= 3 ? mx_round_finish(c, R->next_round++, R->started, got) : mx_round(c, R->next_round++, jobs, n, got);
	c->brief = false;
	if (rc < 0 || c->rank != 0)
		return rc;
	R->n_touched = 0;
	if (pass == 3)
		krc = mx_run_epdead_keep(R, jobs, n, got);
	for (size_t i = 0; i < n && !krc && pass != 3; i++) {
		for (int d = 0; d < 2 && !krc; d++) {
			struct rp_pair_result tmp, *g;
			enum rp_status st;

			if (!(jobs[i].dirs & (1u << d)))
				continue;
			/* a probe a stop cut short says nothing: the direction stays in the bandwidth rounds; a
			 * probe that passed the screen needs nothing of its result */
			st = mx_got_status(got, 2 * i + d);
			if (pass == 1 && st == RP_ST_OK && R->sweep.ep && jobs[i].a < R->sweep.n_eps &&
			    jobs[i].b < R->sweep.n_eps) {
				R->sweep.ep[jobs[i].a] |= MX_EP_PASSED;
				R->sweep.ep[jobs[i].b] |= MX_EP_PASSED;
			}
			if (st == RP_ST_INTERRUPTED || (pass == 1 && st == RP_ST_OK))
				continue;
			g = mx_got_get(got, 2 * i + d, &tmp);
			if (pass == 1 && g->status != RP_ST_OK)
				krc = keep_first(R, &jobs[i], d, g);
			else if (pass == 2 || pass == 4)
				krc = keep_second(R, &jobs[i], d, g, probe);
		}
	}
	R->sweep.rounds++;
	R->hook_round = R->next_round - 1;
	R->round_jobs = jobs;
	R->round_got = got;
	R->round_n = n;
	if (!krc && R->hooks.sweep_done)
		R->hooks.sweep_done(R->hooks.arg, pass, k, n_rounds);
	rc = mx_round_go(c, R->next_round - 1);
	R->sweep.elapsed_s += rp_now() - t0;
	return krc ? krc : rc;
}

/* Pass 1: every scheduled pair, W planned rounds at a time; after each round, the dead endpoints
 * (mx_run_epdead: confirmed at full's settings). */
static int pass_one(struct mx_run *R, const struct rp_engine_cfg *probe, const struct rp_engine_cfg *full)
{
	unsigned w = R->sweep.width;
	size_t n_rounds = mx_sweep_n_rounds(R->sched, w), cap = 2 * (size_t)w * (R->ctx.max_pairs ? R->ctx.max_pairs : 1);
	struct mx_job *jobs = calloc(cap, sizeof(*jobs));
	struct mx_got got = { 0 };
	int rc = jobs ? 0 : -ENOMEM;

	for (size_t k = 0; k < n_rounds && rc == 0; k++) {
		size_t n = 0;

		rc = mx_sweep_round_jobs(R->sched, w, k, R->pairs, jobs, cap, &n);
		if (rc == 0)
			rc = mx_run_sweep_round(R, jobs, mx_sweep_drop_dead(&R->sweep, jobs, n), &got, 1, k, n_rounds, probe);
		if (rc == 0)
			rc = mx_run_epdead(R, k, n_rounds, full, false);
	}
	free(jobs);
	mx_got_fini(&got);
	return mx_run_epdead_finish(R, rc, false);
}

/* Rank 0: pass 2's jobs, one per failed direction, packed W per endpoint per round, to every rank. */
static int pass_two_jobs(struct mx_run *R, struct mx_job **jobs_p, uint32_t **round_of_p, size_t *n_p)
{
	size_t cap = R->set.retest ? 2 * R->sweep.n : 0, n = 0;
	unsigned *count = calloc(R->ctx.n_eps ? 2 * R->ctx.n_eps : 1, sizeof(*count));
	int rc = 0;

	*jobs_p = calloc(cap ? cap : 1, sizeof(**jobs_p));
	*round_of_p = calloc(cap ? cap : 1, sizeof(**round_of_p));
	if (!count || !*jobs_p || !*round_of_p)
		rc = -ENOMEM;   /* the others are told there is nothing: rank 0 reports the error */
	else if (cap)
		mx_sweep_pack(&R->sweep, R->sweep.width, R->ctx.n_eps, *jobs_p, *round_of_p, &n, count);
	mx_jobs_send(&R->ctx, R->next_round, *jobs_p, *round_of_p, n);
	free(count);
	*n_p = n;
	return rc;
}

/* The jobs of round k of a plan (jobs[0..n), round_of[i] each one's round) into batch; their count. */
static size_t round_batch(const struct mx_job *jobs, const uint32_t *round_of, size_t n, size_t k, struct mx_job *batch)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (round_of[i] == k)
			batch[m++] = jobs[i];
	return m;
}

/* Pass 2 over jobs[0..n) (round_of[i]: its round). */
static int pass_two(struct mx_run *R, const struct mx_job *jobs, const uint32_t *round_of, size_t n,
		    const struct rp_engine_cfg *probe)
{
	size_t n_rounds = 0;
	struct mx_job *batch = calloc(n ? n : 1, sizeof(*batch));
	struct mx_got got = { 0 };
	int rc = batch ? 0 : -ENOMEM;

	for (size_t i = 0; i < n; i++)
		n_rounds = round_of[i] + 1 > n_rounds ? round_of[i] + 1 : n_rounds;
	for (size_t k = 0; k < n_rounds && rc == 0; k++)
		rc = mx_run_sweep_round(R, batch, round_batch(jobs, round_of, n, k, batch), &got, 2, k, n_rounds, probe);
	free(batch);
	mx_got_fini(&got);
	return rc;
}

enum mark_bits { MB_FAILED, MB_DEAD, MB_FLAKY };

/* The others: a plan from rank 0 (jobs[0..n), dirs) into the marks' bits of one kind. 0 or -ENOMEM. */
static int marks_or(struct mx_sweep *sw, const struct mx_job *jobs, size_t n, enum mark_bits which)
{
	for (size_t i = 0; i < n; i++) {
		struct mx_sweep_mark *m = mx_sweep_mark(sw, jobs[i].a, jobs[i].b);

		if (!m)
			return -ENOMEM;
		*(which == MB_FAILED ? &m->failed : which == MB_DEAD ? &m->dead : &m->flaky) |= jobs[i].dirs;
	}
	return 0;
}

/* Rank 0: what the bandwidth rounds leave out and what they measure at NCCL's timeout, as two plans
 * (dirs: the dead, then the flaky directions); the others take them into their marks. */
static int marks_share(struct mx_run *R)
{
	struct mx_ctx *c = &R->ctx;
	int rc = 0;

	for (int which = 0; which < 2 && rc == 0; which++) {
		struct mx_job *jobs = NULL;
		uint32_t *round_of = NULL;
		size_t n = 0;

		if (c->rank == 0) {
			jobs = calloc(R->sweep.n ? R->sweep.n : 1, sizeof(*jobs));
			round_of = calloc(R->sweep.n ? R->sweep.n : 1, sizeof(*round_of));
			if (!jobs || !round_of)
				rc = -ENOMEM;
			for (size_t i = 0; !rc && i < R->sweep.n; i++) {
				const struct mx_sweep_mark *m = &R->sweep.marks[i];
				uint32_t dirs = which ? m->flaky : m->dead;

				if (dirs)
					jobs[n++] = (struct mx_job){ .a = m->a, .b = m->b, .dirs = dirs };
			}
			mx_jobs_send(c, R->next_round, jobs, round_of, rc ? 0 : n);
		} else {
			rc = mx_jobs_wait(c, R->next_round, &jobs, &round_of, &n, rp_now() + mx_ctx_go_wait(c));
			if (!rc)
				rc = marks_or(&R->sweep, jobs, n, which ? MB_FLAKY : MB_DEAD);
		}
		R->next_round++;
		free(jobs);
		free(round_of);
	}
	mx_sweep_sort(&R->sweep);
	return rc;
}

/* After pass 1, held or not: pass 2's plan and rounds (at the probe's settings), what pass 2 left
 * undecided, the counts, the marks to every rank. rc: pass 1's outcome (pass 2 runs only after 0). */
static int sweep_second(struct mx_run *R, int rc, const struct rp_engine_cfg *saved, const struct rp_engine_cfg *probe)
{
	struct mx_job *jobs = NULL;
	uint32_t *round_of = NULL;
	size_t n = 0;

	R->ctx.cfg = probe;
	if (rc == 0 && R->ctx.rank == 0) {
		mx_sweep_sort(&R->sweep);
		rc = pass_two_jobs(R, &jobs, &round_of, &n);
	} else if (rc == 0) {
		rc = mx_jobs_wait(&R->ctx, R->next_round, &jobs, &round_of, &n, rp_now() + mx_ctx_go_wait(&R->ctx));
	}
	R->next_round++;
	if (rc == 0 && n)
		rc = pass_two(R, jobs, round_of, n, probe);
	R->ctx.cfg = saved;
	if (R->ctx.rank == 0)
		keep_undecided(R);
	if (rc == 0 && R->ctx.rank == 0) {
		for (size_t i = 0; i < R->sweep.n; i++) {
			struct mx_sweep_mark *m = &R->sweep.marks[i];

			if (!R->set.retest)
				m->dead = m->failed;   /* not probed again: left out, unconfirmed */
			R->sweep.n_dead += (size_t)__builtin_popcount(m->dead & ~m->epdead);
			R->sweep.n_flaky += (size_t)__builtin_popcount(m->flaky);
			R->sweep.n_cleared += (size_t)__builtin_popcount(m->cleared);
		}
	}
	if (rc == 0)
		rc = marks_share(R);
	free(jobs);
	free(round_of);
	return rc;
}

int mx_run_sweep(struct mx_run *R)
{
	const struct rp_engine_cfg *saved = R->ctx.cfg;
	struct rp_engine_cfg screen, probe;

	/* pass 1 screens when a second probe will confirm what fails it */
	R->sweep.screen_s = mx_sweep_cfg(saved, R->set.retest > 0, &screen);
	mx_sweep_cfg(saved, false, &probe);
	R->ctx.cfg = &screen;
	return sweep_second(R, pass_one(R, &screen, &probe), saved, &probe);
}

/* A held sweep, after its round of jobs[0..n): the directions that failed their probe, from rank 0 to
 * every rank (into the marks' failed bits), so that every rank leaves them out of the batch's
 * planned rounds alike. */
static int failed_share(struct mx_run *R, const struct mx_job *jobs, size_t n, size_t *n_failed)
{
	struct mx_ctx *c = &R->ctx;
	struct mx_job *out = NULL;
	uint32_t *round_of = NULL;
	size_t m = 0;
	int rc = 0;

	if (c->rank == 0) {
		mx_sweep_sort(&R->sweep);
		out = calloc(n ? n : 1, sizeof(*out));
		round_of = calloc(n ? n : 1, sizeof(*round_of));
		rc = out && round_of ? 0 : -ENOMEM;
		for (size_t i = 0; !rc && i < n; i++) {
			const struct mx_sweep_mark *mk = mx_sweep_find(&R->sweep, jobs[i].a, jobs[i].b);
			uint32_t dirs = mk ? mk->failed & jobs[i].dirs : 0;

			if (dirs)
				out[m++] = (struct mx_job){ .a = jobs[i].a, .b = jobs[i].b, .dirs = dirs };
		}
		mx_jobs_send(c, R->next_round, out, round_of, rc ? 0 : m);
	} else {
		rc = mx_jobs_wait(c, R->next_round, &out, &round_of, &m, rp_now() + mx_ctx_go_wait(c));
		if (!rc)
			rc = marks_or(&R->sweep, out, m, MB_FAILED);
		mx_sweep_sort(&R->sweep);
	}
	R->next_round++;
	*n_failed = rc ? 0 : m;
	free(out);
	free(round_of);
	return rc;
}

/* Pass 2 started beside the rounds (every rank; rank 0 decides from its sides when it is finished). */
struct beside_round {
	struct mx_job *jobs;
	size_t n;
	struct mx_started *st;
	const struct rp_engine_cfg *probe;   /* pass 2's settings (mx_run_sweep_held's, alive while it runs) */
	size_t k, n_rounds;                  /* the sweep round after which it started, of how many */
};

static void beside_free(struct beside_round *b)
{
	if (b)
		free(b->jobs);
	free(b);
}

/* May a direction of (a, b) wait for a dead-endpoint decision: an end suspected, left out or dead
 * (its confirmation decides), or one that passed no probe yet (what a dead endpoint is, before it
 * meets enough peers to be suspected)? Its second probe is then pass 2's, after the decision. */
static bool of_suspect(const struct mx_sweep *S, uint32_t a, uint32_t b)
{
	const uint8_t mask = MX_EP_SUSPECT | MX_EP_OUT | MX_EP_DEAD;

	if (!S->ep)
		return false;
	if (a >= S->n_eps || b >= S->n_eps)
		return true;
	return (S->ep[a] & mask) || (S->ep[b] & mask) || !(S->ep[a] & MX_EP_PASSED) || !(S->ep[b] & MX_EP_PASSED);
}

/* Rank 0: what pass 2's first round would probe now (mx_sweep_pack: every failed direction not
 * decided, each endpoint the writer of at most W and the target of at most W), but those that may
 * wait for a dead-endpoint decision (of_suspect), into *jobs_p. The directions left over wait for
 * pass 2 itself. 0 or -ENOMEM. */
static int beside_jobs(struct mx_run *R, struct mx_job **jobs_p, size_t *n_p)
{
	size_t cap = 2 * R->sweep.n, n = 0, m = 0;
	struct mx_job *jobs = calloc(cap ? cap : 1, sizeof(*jobs));
	uint32_t *round_of = calloc(cap ? cap : 1, sizeof(*round_of));
	unsigned *count = calloc(R->ctx.n_eps ? 2 * R->ctx.n_eps : 1, sizeof(*count));
	int rc = jobs && round_of && count ? 0 : -ENOMEM;

	if (rc == 0) {
		mx_sweep_pack(&R->sweep, R->sweep.width, R->ctx.n_eps, jobs, round_of, &n, count);
		for (size_t i = 0; i < n; i++)
			if (round_of[i] == 0 && !of_suspect(&R->sweep, jobs[i].a, jobs[i].b))
				jobs[m++] = jobs[i];
	}
	free(round_of);
	free(count);
	*jobs_p = jobs;
	*n_p = rc ? 0 : m;
	return rc;
}

/* After sweep round k of pass 1 (held) and its failures shared (n_failed of them), on every rank:
 * when the first pass screens (its failures wait for pass 2), some failed and pass 2 runs no round
 * beside the rounds yet, pass 2's first round over what is undecided (but what may wait for a
 * dead-endpoint decision, of_suspect: a confirmation runs in a slot of its own) starts beside the
 * planned rounds that follow, at probe's settings: a dead link found early costs its deadline
 * there, not after the last planned round. Rank 0 sends the jobs (maybe none) and every rank
 * starts its sides. 0 or negative errno. */
static int beside_start(struct mx_run *R, size_t k, size_t n_rounds, const struct rp_engine_cfg *probe,
			size_t n_failed)
{
	struct mx_ctx *c = &R->ctx;
	const struct rp_engine_cfg *saved = c->cfg;
	struct beside_round *b;
	uint32_t *round_of = NULL;
	int rc = 0;

	if (!n_failed || R->sweep.screen_s <= 0 || !R->set.retest || R->beside)
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	*b = (struct beside_round){ .probe = probe, .k = k, .n_rounds = n_rounds };
	if (c->rank == 0) {
		mx_sweep_sort(&R->sweep);
		rc = beside_jobs(R, &b->jobs, &b->n);
		round_of = calloc(b->n ? b->n : 1, sizeof(*round_of));
		rc = rc ? rc : round_of ? 0 : -ENOMEM;
		mx_jobs_send(c, R->next_round, b->jobs, round_of, rc ? 0 : b->n);
	} else {
		rc = mx_jobs_wait(c, R->next_round, &b->jobs, &round_of, &b->n, rp_now() + mx_ctx_go_wait(c));
	}
	free(round_of);
	R->next_round++;
	if (rc == 0 && b->n) {
		c->cfg = probe;
		rc = mx_round_start(c, R->next_round++, MX_SLOT_BESIDE, b->jobs, b->n, &b->st);   /* (copies probe) */
		c->cfg = saved;
	}
	if (rc != 0 || !b->n) {
		beside_free(b);
		return rc;
	}
	R->beside = b;
	if (c->rank == 0 && R->hooks.beside_started)
		R->hooks.beside_started(R->hooks.arg);
	return 0;
}

int mx_run_beside_finish(struct mx_run *R, int rc)
{
	struct beside_round *b = R->beside;
	struct mx_got got = { 0 };

	if (!b)
		return rc;
	R->beside = NULL;
	if (rc != 0) {
		/* the run ends first: the sides are waited for and dropped, their directions undecided */
		mx_round_abandon(&R->ctx, b->st);
		beside_free(b);
		return rc;
	}
	R->started = b->st;
	rc = mx_run_sweep_round(R, b->jobs, b->n, &got, 4, b->k, b->n_rounds, b->probe);
	R->started = NULL;
	beside_free(b);
	mx_got_fini(&got);
	return rc;
}

/* A held sweep's late rounds: rank 0 packs what failed its probe and is not dead (mx_sweep_late) and
 * sends the plan; every rank runs it. MX_GO_ON, MX_STOPPED, negative errno. */
static int late_rounds(struct mx_run *R)
{
	struct mx_ctx *c = &R->ctx;
	struct mx_job *jobs = NULL, *batch = NULL;
	uint32_t *round_of = NULL;
	uint64_t *used = NULL;
	size_t n = 0;
	int rc = 0;

	if (c->rank == 0) {
		jobs = calloc(R->sweep.n ? R->sweep.n : 1, sizeof(*jobs));
		round_of = calloc(R->sweep.n ? R->sweep.n : 1, sizeof(*round_of));
		used = calloc(c->n_eps ? 2 * c->n_eps : 1, sizeof(*used));
		rc = jobs && round_of && used ? 0 : -ENOMEM;
		if (!rc)
			mx_sweep_late(&R->sweep, c->n_eps, jobs, round_of, &n, used);
		mx_jobs_send(c, R->next_round, jobs, round_of, rc ? 0 : n);
		free(used);
	} else {
		rc = mx_jobs_wait(c, R->next_round, &jobs, &round_of, &n, rp_now() + mx_ctx_go_wait(c));
	}
	R->next_round++;
	R->n_late = 0;
	for (size_t i = 0; !rc && i < n; i++)
		R->n_late = round_of[i] + 1 > R->n_late ? round_of[i] + 1 : R->n_late;
	if (!rc && n && c->rank == 0 && R->hooks.retest_scheduled)
		R->hooks.retest_scheduled(R->hooks.arg, n, R->n_late);
	batch = calloc(n ? n : 1, sizeof(*batch));
	if (!rc && !batch)
		rc = -ENOMEM;
	for (size_t k = 0; !rc && k < R->n_late; k++)
		rc = mx_run_late_round(R, batch, round_batch(jobs, round_of, n, k, batch));
	R->in_late = false;
	free(batch);
	free(jobs);
	free(round_of);
	return rc;
}

int mx_run_sweep_held(struct mx_run *R)
{
	const struct rp_engine_cfg *saved = R->ctx.cfg;
	struct rp_engine_cfg screen, probe;
	unsigned w = R->sweep.width;
	size_t n_rounds = mx_sweep_n_rounds(R->sched, w), n_scheduled = rp_sched_n_rounds(R->sched);
	size_t cap = 2 * (size_t)w * (R->ctx.max_pairs ? R->ctx.max_pairs : 1);
	struct mx_job *jobs = calloc(cap, sizeof(*jobs));
	struct mx_got got = { 0 };
	int rc = jobs ? 0 : -ENOMEM;

	R->sweep.screen_s = mx_sweep_cfg(saved, R->set.retest > 0, &screen);
	mx_sweep_cfg(saved, false, &probe);
	/* the bandwidth run's QPs, so that its measurement can run on the probe's (mx_hold_allowed) */
	screen.meas.n_qps = saved->meas.n_qps;
	R->holds.room = &saved->meas;
	R->ctx.holds = &R->holds;
	for (size_t k = 0; k < n_rounds && rc == 0; k++) {
		size_t n = 0, n_failed = 0, to = (k + 1) * w < n_scheduled ? (k + 1) * w : n_scheduled;

		R->holds.mode = MX_HOLD_MAKE;
		R->ctx.cfg = &screen;
		rc = mx_sweep_round_jobs(R->sched, w, k, R->pairs, jobs, cap, &n);
		n = rc == 0 ? mx_sweep_drop_dead(&R->sweep, jobs, n) : 0;
		if (rc == 0)
			rc = mx_run_sweep_round(R, jobs, n, &got, 1, k, n_rounds, &screen);
		if (rc == 0)
			rc = mx_run_epdead(R, k, n_rounds, &probe, true);   /* (its sides hold nothing) */
		if (rc == 0)
			rc = failed_share(R, jobs, n, &n_failed);
		if (rc == 0)
			rc = beside_start(R, k, n_rounds, &probe, n_failed);
		/* the sweep round's sides are kept or decided: not held through its batch (their buffers
		 * freed), the slots kept for the next sweep round (the same size: fresh ones were a page
		 * fault per 4 KiB of every sweep round's sides at rank 0, and a peak no lower) */
		(void)mx_got_reset(&got, 0, NULL, NULL);
		R->holds.mode = MX_HOLD_USE;
		R->ctx.cfg = saved;
		if (rc == 0)
			rc = mx_run_scheduled(R, k * w, to);
		mx_holds_release(&R->holds);
	}
	R->holds.mode = MX_HOLD_OFF;
	R->ctx.holds = NULL;
	mx_holds_fini(&R->holds);   /* its entries' memory too (the counts stay) */
	free(jobs);
	mx_got_fini(&got);
	rc = mx_run_beside_finish(R, rc);
	rc = mx_run_epdead_finish(R, rc, true);
	rc = sweep_second(R, rc, saved, &probe);
	return rc == 0 ? late_rounds(R) : rc;
}
