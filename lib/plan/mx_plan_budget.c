/* mx_plan_budget.c: what fits a time budget (pattern, sample size, message size), and the words
 * that say what it changed; see mx_plan.h. */
#include "plan/mx_plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* What the search holds fixed. */
struct bud {
	const struct rp_sched_ep *eps;
	size_t n_eps;
	const double *gbps;
	uint64_t seed;
	const struct mx_plan_model *m;
	const struct mx_settings *run;
	double budget_s;
};

/* The estimate of pattern pat at message size `size`. */
static int est_at(const struct bud *b, const struct rp_pattern *pat, uint64_t size, struct mx_plan_est *e)
{
	struct mx_settings run = *b->run;
	struct rp_sched *s = NULL;
	int rc = rp_sched_create(b->eps, b->n_eps, pat, b->seed, &s);

	if (rc)
		return rc;
	run.msg_size = size;
	rc = mx_plan_estimate(s, b->gbps, b->n_eps, b->m, &run, e);
	rp_sched_destroy(s);
	return rc;
}

/* The size the budget tries after `size`: half of it, the floor the last; 0 when none is left (at
 * the floor, or a size the budget keeps: -D, -l). */
static uint64_t size_next(const struct mx_settings *run, uint64_t size)
{
	if (run->duration_s > 0 || run->latency || size <= MX_PLAN_MSG_FLOOR)
		return 0;
	return size / 2 > MX_PLAN_MSG_FLOOR ? size / 2 : MX_PLAN_MSG_FLOOR;
}

/* The largest size from `from` down (size_next) at which pat fits: 0 with *size_p and *e; -ENOSPC
 * none does (*e the last one tried: the floor's). */
static int largest_size(const struct bud *b, const struct rp_pattern *pat, uint64_t from, uint64_t *size_p,
			struct mx_plan_est *e)
{
	for (uint64_t s = from; s; s = size_next(b->run, s)) {
		int rc = est_at(b, pat, s, e);

		if (rc)
			return rc;
		if (e->worst_s <= b->budget_s) {
			*size_p = s;
			return 0;
		}
	}
	return -ENOSPC;
}

/* sample:K with the largest K in [1, hi] that fits at `size`, into c (pattern, est). -ENOSPC not even
 * sample:1 (c->est is sample:1's when it was estimated). */
static int largest_sample(const struct bud *b, uint32_t hi, uint64_t size, struct mx_plan_choice *c)
{
	struct mx_plan_est est;
	uint32_t lo = 1;
	int rc;

	c->pattern = (struct rp_pattern){ .kind = RP_PATTERN_SAMPLE, .k = 1 };
	c->reduced = true;
	c->msg_size = size;
	if (hi < 1)
		return -ENOSPC;
	rc = est_at(b, &c->pattern, size, &c->est);
	if (rc)
		return rc;
	if (c->est.worst_s > b->budget_s)
		return -ENOSPC;
	/* invariant: sample:lo fits (c->est is its estimate); the estimate grows with K */
	while (lo < hi) {
		struct rp_pattern p = { .kind = RP_PATTERN_SAMPLE, .k = lo + (hi - lo + 1) / 2 };

		rc = est_at(b, &p, size, &est);
		if (rc)
			return rc;
		if (est.worst_s <= b->budget_s) {
			lo = p.k;
			c->est = est;
		} else {
			hi = p.k - 1;
		}
	}
	c->pattern.k = lo;
	return 0;
}

int mx_plan_budget(const struct rp_sched_ep *eps, size_t n_eps, const double *ep_gbps, const struct rp_pattern *pat,
		   uint64_t seed, const struct mx_plan_model *m, const struct mx_settings *run, double budget_s,
		   struct mx_plan_choice *c)
{
	const struct bud b = { eps, n_eps, ep_gbps, seed, m, run, budget_s };
	uint64_t next = size_next(run, run->msg_size), size;
	uint32_t hi;
	int rc;

	if (!(budget_s > 0) || n_eps < 2)
		return -EINVAL;
	*c = (struct mx_plan_choice){ .pattern = *pat, .msg_size = run->msg_size, .msg_size_requested = run->msg_size,
				      .floor_size = next ? MX_PLAN_MSG_FLOOR : run->msg_size, .budget_s = budget_s };
	rc = est_at(&b, pat, run->msg_size, &c->est);
	if (rc)
		return rc;
	c->requested_s = c->est.worst_s;
	if (c->est.worst_s <= budget_s)
		return 0;
	c->floor_tried = true;
	c->floor_s = c->requested_s;
	if (next) {
		rc = largest_size(&b, pat, next, &c->msg_size, &c->est);
		c->floor_tried = rc == -ENOSPC;
		if (rc != -ENOSPC)
			return rc;
		c->floor_s = c->est.worst_s;
	}
	if (pat->kind == RP_PATTERN_RAIL || pat->kind == RP_PATTERN_INTRA)
		return -EDOM;
	/* sample:K below the requested K: any two endpoints, as the requested pattern's pairs */
	hi = pat->kind == RP_PATTERN_SAMPLE ? pat->k - 1 : (uint32_t)(n_eps - 1 < UINT32_MAX ? n_eps - 1 : UINT32_MAX);
	rc = largest_sample(&b, hi, c->floor_size, c);
	if (rc || !next)
		return rc;
	/* coverage chosen at the floor: now the largest size that still fits with it (the floor does) */
	rc = largest_size(&b, &c->pattern, run->msg_size, &size, &c->est);
	if (!rc)
		c->msg_size = size;
	return rc;
}

void mx_plan_size_str(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (bytes && bytes % 1024 == 0 && u < 3) {
		bytes /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)bytes, units[u]);
}

void mx_plan_dur_str(double s, char *buf, size_t len)
{
	if (s >= 3600 && fmod(s, 3600) == 0)
		snprintf(buf, len, "%gh", s / 3600);
	else if (s >= 60 && fmod(s, 60) == 0)
		snprintf(buf, len, "%gm", s / 60);
	else
		snprintf(buf, len, "%gs", s);
}

void mx_plan_choice_str(const struct mx_plan_choice *c, const struct rp_pattern *requested, char *buf, size_t len)
{
	char rq[32], ch[32], s0[24], s1[24], fl[24], bd[24], what[96], at_floor[128] = "";
	bool sized = c->msg_size != c->msg_size_requested;

	rp_pattern_str(requested, rq, sizeof(rq));
	rp_pattern_str(&c->pattern, ch, sizeof(ch));
	mx_plan_size_str(c->msg_size_requested, s0, sizeof(s0));
	mx_plan_size_str(c->msg_size, s1, sizeof(s1));
	mx_plan_size_str(c->floor_size, fl, sizeof(fl));
	mx_plan_dur_str(c->budget_s, bd, sizeof(bd));
	if (!c->reduced && !sized) {
		snprintf(buf, len, "%s at -s %s fits %s (~%.1f s)", rq, s0, bd, c->requested_s);
		return;
	}
	what[0] = '\0';
	if (c->reduced)
		snprintf(what, sizeof(what), "%s -> %s", rq, ch);
	if (sized)
		snprintf(what + strlen(what), sizeof(what) - strlen(what), "%s-s %s -> %s", c->reduced ? ", " : "", s0, s1);
	if (!c->reduced) {
		snprintf(buf, len, "%s to fit %s: %s needs ~%.1f s at -s %s, ~%.1f s at %s", what, bd, rq, c->requested_s,
			 s0, c->est.worst_s, s1);
		return;
	}
	if (c->floor_size != c->msg_size_requested)
		snprintf(at_floor, sizeof(at_floor), " and ~%.1f s at %s (the smallest size it chooses)", c->floor_s, fl);
	snprintf(buf, len, "%s to fit %s: %s needs ~%.1f s at -s %s%s; %s is the largest sample that fits (~%.1f s at "
		 "-s %s): each endpoint against %u random peer%s", what, bd, rq, c->requested_s, s0, at_floor, ch,
		 c->est.worst_s, s1, c->pattern.k, c->pattern.k == 1 ? "" : "s");
}
