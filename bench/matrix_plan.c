/* matrix_plan.c: 'rdmaprobe matrix --plan': the schedule and its estimates, without MPI or hardware,
 * and --budget's choice (here and in a run). The model is lib/mx_plan's; this file prints it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmds.h"
#include "matrix.h"
#include "mx_run.h"
#include "util.h"

static void human_bytes(double b, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t u = 0;

	while (b >= 1024 && u + 1 < RP_ARRAY_SIZE(units)) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", b, units[u]);
}

void mx_plan_run_of(const struct rp_engine_cfg *cfg, bool concurrent_rails, unsigned sweep, struct mx_plan_run *run)
{
	*run = (struct mx_plan_run){ .msg_size = cfg->meas.msg_size, .iters = cfg->meas.iters,
				     .warmup_iters = cfg->meas.warmup_iters, .duration_s = cfg->meas.duration_s,
				     .bidir = cfg->meas.bidir, .concurrent_rails = concurrent_rails, .sweep = sweep };
}

int mx_plan_model_load(const char *path, struct mx_plan_model *m)
{
	int rc;

	mx_plan_model_default(m);
	if (!path)
		return -1;
	rc = mx_plan_calibrate(path, m);   /* logged: the file and what is wrong with it */
	if (!rc)
		return -1;
	return rc == -ENOMEM || rc == -EIO ? RP_EXIT_ENV : RP_EXIT_USAGE;
}

int mx_plan_choose(const struct rp_sched_ep *se, size_t n_eps, const double *gbps, const struct rp_pattern *pat,
		   const char *pat_text, uint64_t seed, const struct mx_plan_model *m, const struct mx_plan_run *run,
		   double budget_s, const char *budget_text, bool say, struct mx_plan_choice *c)
{
	char chosen[32];
	int rc = mx_plan_budget(se, n_eps, gbps, pat, seed, m, run, budget_s, c);

	if (rc == -ENOSPC || rc == -EDOM) {
		if (say && rc == -EDOM)
			fprintf(stderr, "rdmaprobe matrix: --budget %s: --pattern %s needs ~%.1f s and does not fit; a smaller "
					"sample would pair any two endpoints, not only those %s allows: use --pattern full or "
					"sample:K, or a larger budget\n", budget_text, pat_text, c->requested_s, pat_text);
		else if (say)
			fprintf(stderr, "rdmaprobe matrix: --budget %s: nothing fits: --pattern %s needs ~%.1f s, and even "
					"sample:1 (one round) ~%.1f s (start-up ~%.1f s); not running\n", budget_text, pat_text,
				c->requested_s, c->est.total_s, c->est.startup_s);
		return RP_EXIT_USAGE;
	}
	if (rc) {
		fprintf(stderr, "rdmaprobe matrix: --budget %s: the plan failed: %s\n", budget_text, strerror(-rc));
		return rc == -ENOMEM ? RP_EXIT_ENV : RP_EXIT_USAGE;
	}
	if (!say)
		return -1;
	rp_pattern_str(&c->pattern, chosen, sizeof(chosen));
	if (!c->reduced)
		fprintf(stderr, "rdmaprobe matrix: --budget %s: --pattern %s fits (~%.1f s)\n", budget_text, pat_text,
			c->requested_s);
	else
		fprintf(stderr, "rdmaprobe matrix: --budget %s: --pattern %s needs ~%.1f s; %s is the largest sample that "
				"fits (~%.1f s): each endpoint against %u random peer%s instead\n", budget_text, pat_text,
			c->requested_s, chosen, c->est.total_s, c->pattern.k, c->pattern.k == 1 ? "" : "s");
	return -1;
}

void mx_coverage_print(const struct mx_coverage *c, const char *requested, const char *ran, double budget_s)
{
	printf("coverage: %s", ran);
	if (budget_s > 0)
		printf(" (--budget %g s; requested %s)", budget_s, requested);
	printf(": every endpoint against %u", c->peers_min);
	if (c->peers_max != c->peers_min)
		printf(" to %u", c->peers_max);
	printf(" peer%s; %llu of %llu (rail, rail) combinations%s; %llu of %llu ordered pairs %s allows (%.1f%%)\n",
	       c->peers_max == 1 ? "" : "s", (unsigned long long)c->combos_covered, (unsigned long long)c->combos_allowed,
	       c->combos_covered == c->combos_allowed ? " (all)" : "", (unsigned long long)c->ordered_measured,
	       (unsigned long long)c->ordered_allowed, requested, 100.0 * c->fraction);
}

/* The model's figures and where each came from. */
static void model_print(const struct mx_plan_model *m, const struct mx_plan_run *run, const struct mx_plan_est *e,
			size_t n_eps)
{
	printf("model:\n  set-up %.3f s per direction: %s\n", m->setup_s, m->setup_src);
	printf("  transfer at %.3g%% of the lower link rate of a pair: %s\n", 100 * m->rate_frac, m->rate_src);
	printf("  per-round overhead %.3f s beyond the slowest pair: %s\n", m->round_overhead_s, m->round_src);
	if (m->startup_per_ep_s > 0)
		printf("  start-up %.1f s (%.3f s per endpoint x %zu): %s\n", e->startup_s, m->startup_per_ep_s, n_eps,
		       m->startup_src);
	else
		printf("  start-up %.1f s: %s\n", e->startup_s, m->startup_src);
	if (run->sweep)
		printf("  sweep: %zu probe round%s of 2 x set-up + overhead: %.1f s\n", e->sweep_rounds,
		       e->sweep_rounds == 1 ? "" : "s", e->sweep_s);
	printf("  retest: no extra rounds (they measure again only what fails or is slow: a healthy fabric assumed)\n");
}

/* The rounds, each with its estimate: all of them up to 32, else the first three and the last. */
static int rounds_print(const struct rp_sched *s, const double *rate, size_t n_eps, const struct mx_plan_model *m,
			const struct mx_plan_run *run)
{
	size_t max_pairs = rp_sched_max_round_pairs(s), got, n = rp_sched_n_rounds(s);
	struct rp_sched_pair *pairs = calloc(max_pairs ? max_pairs : 1, sizeof(*pairs));

	if (!pairs)
		return RP_EXIT_ENV;
	for (size_t r = 0; r < n; r++) {
		if (n > 32 && r >= 3 && r + 1 != n) {
			if (r == 3)
				printf("  ...\n");
			continue;
		}
		rp_sched_round(s, r, pairs, max_pairs, &got);
		printf("  round %zu: %zu pairs, ~%.2f s", r + 1, got, mx_plan_round_s(m, run, rate, pairs, got));
		if (n_eps <= 16) {
			printf(":");
			for (size_t i = 0; i < got; i++)
				printf(" %u<->%u", pairs[i].a, pairs[i].b);
		}
		printf("\n");
	}
	free(pairs);
	return -1;
}

/* The plan of one pattern over the endpoints. */
static int plan_print(const struct mx_plan_in *o, const struct rp_sched_ep *se, const double *rate, size_t n_eps,
		      const struct rp_pattern *pat, const struct mx_plan_model *m, const struct mx_plan_run *run)
{
	const struct rp_engine_cfg *c = o->cfg;
	struct rp_sched *s = NULL;
	struct mx_plan_est e;
	double bytes_dir = (double)c->meas.msg_size * (double)(c->meas.iters + c->meas.warmup_iters);
	char b1[32], b2[32], pt[32];
	int status, rc;

	if (rp_sched_create(se, n_eps, pat, o->seed, &s) != 0)
		return RP_EXIT_USAGE;
	rc = mx_plan_estimate(s, rate, n_eps, m, run, &e);
	if (rc) {
		rp_sched_destroy(s);
		return rc == -ENOMEM ? RP_EXIT_ENV : RP_EXIT_USAGE;
	}
	printf("plan: pattern %s, %zu endpoints on %llu nodes (%llu per node), seed %llu\n", rp_pattern_str(pat, pt, sizeof(pt)),
	       n_eps, (unsigned long long)o->nodes, (unsigned long long)o->hcas, (unsigned long long)o->seed);
	printf("rounds: %zu; pairs: %llu (each measured both ways: %llu measurements); at most %zu pairs per round\n",
	       rp_sched_n_rounds(s), (unsigned long long)e.pairs, 2ULL * e.pairs, e.max_round_pairs);
	if (o->concurrent_rails)
		printf("concurrent rails: each round is played rail by rail alone, then with every rail at once: %zu "
		       "rounds in all, every pair measured twice\n", e.rounds);
	status = rounds_print(s, rate, n_eps, m, run);
	if (c->meas.duration_s > 0) {
		printf("bytes: each measurement runs %.2f s\n", c->meas.duration_s);
	} else {
		human_bytes(bytes_dir, b1, sizeof(b1));
		human_bytes(bytes_dir * 2.0 * (o->concurrent_rails ? 2.0 : 1.0) * (double)e.pairs, b2, sizeof(b2));
		printf("bytes: %s per measurement (%llu x %zu B, %llu warm-up), %s in all\n", b1,
		       (unsigned long long)c->meas.iters, c->meas.msg_size, (unsigned long long)c->meas.warmup_iters, b2);
	}
	model_print(m, run, &e, n_eps);
	printf("estimated time: %.1f s = start-up %.1f s + %s%.1f s of rounds, at the ports' rates (%s), %s\n", e.total_s,
	       e.startup_s, run->sweep ? "sweep " : "", e.rounds_s + e.sweep_s, o->rail_gbps ? "this node's ports" : "--rate",
	       m->calibrated ? "calibrated (see model)" : "uncalibrated: assumed figures (--calibrate-from FILE fits them)");
	rp_sched_destroy(s);
	return status;
}

int mx_plan_print(const struct mx_plan_in *o)
{
	size_t n_eps = (size_t)(o->nodes * o->hcas);
	struct rp_sched_ep *se = calloc(n_eps ? n_eps : 1, sizeof(*se));
	double *rate = calloc(n_eps ? n_eps : 1, sizeof(*rate));
	struct mx_plan_model m;
	struct mx_plan_run run;
	struct mx_plan_choice choice;
	int status;

	if (!se || !rate) {
		fprintf(stderr, "rdmaprobe matrix: out of memory for %zu endpoints\n", n_eps);
		status = RP_EXIT_ENV;
		goto out;
	}
	for (size_t e = 0; e < n_eps; e++) {
		se[e].node = (uint32_t)(e / o->hcas);
		se[e].rail = (uint32_t)(e % o->hcas);
		rate[e] = o->rail_gbps ? o->rail_gbps[e % o->hcas] : o->rate;
		if (rate[e] <= 0)
			rate[e] = o->rate;
	}
	mx_plan_run_of(o->cfg, o->concurrent_rails, o->sweep, &run);
	status = mx_plan_model_load(o->calibrate_from, &m);
	if (status >= 0)
		goto out;
	choice.pattern = *o->pattern;
	if (o->budget_s > 0) {
		if (n_eps < 2) {
			fprintf(stderr, "rdmaprobe matrix: --budget: %zu endpoint(s): nothing to pair\n", n_eps);
			status = RP_EXIT_USAGE;
			goto out;
		}
		status = mx_plan_choose(se, n_eps, rate, o->pattern, o->pattern_text, o->seed, &m, &run, o->budget_s,
					o->budget_text, true, &choice);
		if (status >= 0)
			goto out;
	}
	status = plan_print(o, se, rate, n_eps, &choice.pattern, &m, &run);
	if (status < 0)
		status = RP_EXIT_OK;
out:
	free(se);
	free(rate);
	return status;
}
