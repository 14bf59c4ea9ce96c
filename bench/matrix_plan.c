/* matrix_plan.c: 'rdmaprobe matrix --plan': the schedule and its estimates, without MPI or hardware,
 * and --budget's choice (here and in a run). The model is lib/mx_plan's; this file prints it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "matrix.h"
#include "ops_cli.h"
#include "plan/mx_plan_json.h"
#include "matrix/mx_run.h"
#include "report/report.h"
#include "base/util.h"

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

int matrix_cli_plan_dead_opt(const char *s, size_t n_eps, bool decides, size_t *dead)
{
	char *end = NULL;
	double v;

	if (!s) {
		*dead = decides ? mx_plan_dead_default(n_eps) : 0;
		return RP_EXIT_GO_ON;
	}
	errno = 0;
	v = strtod(s, &end);
	if (errno == 0 && end != s && isfinite(v) && v >= 0 && strcmp(end, "%") == 0 && v <= 100) {
		*dead = (size_t)ceil(v / 100.0 * (double)n_eps);
		return RP_EXIT_GO_ON;
	}
	if (errno == 0 && end != s && *end == '\0' && v >= 0 && v <= 1e9 && v == floor(v)) {
		*dead = (size_t)v < n_eps ? (size_t)v : n_eps;
		return RP_EXIT_GO_ON;
	}
	fprintf(stderr, "rdmaprobe matrix: --plan-dead %s: a count of dead endpoints (0 or more) or a percentage of "
		"them (0%% to 100%%)\n", s);
	return RP_EXIT_USAGE;
}

int matrix_cli_sweep_opt(const char *s, unsigned *width_p, bool *auto_p)
{
	if (mx_sweep_parse(s, width_p, auto_p) == 0)
		return RP_EXIT_GO_ON;
	fprintf(stderr, "rdmaprobe matrix: --sweep %s: a width from 1 to %d, auto (%d) or off\n", s, MX_SWEEP_MAX_WIDTH,
		MX_SWEEP_AUTO_WIDTH);
	return RP_EXIT_USAGE;
}

int matrix_cli_model_load(const char *path, bool allow_simulated, struct mx_plan_model *m)
{
	int rc;

	mx_plan_model_default(m);
	if (!path)
		return RP_EXIT_GO_ON;
	rc = mx_plan_calibrate_opts(path, allow_simulated, m);   /* logged: the file and what is wrong with it */
	if (!rc)
		return RP_EXIT_GO_ON;
	return rc == -ENOMEM || rc == -EIO ? RP_EXIT_ENV : RP_EXIT_USAGE;
}

/* --budget's "does not fit" line. */
static void choose_fail(int rc, const struct mx_plan_choice *c, const char *pat_text, const char *budget_text)
{
	char s0[24], fl[24], at_floor[128] = "";

	mx_plan_size_str(c->msg_size_requested, s0, sizeof(s0));
	mx_plan_size_str(c->floor_size, fl, sizeof(fl));
	if (c->floor_size != c->msg_size_requested)
		snprintf(at_floor, sizeof(at_floor), " (~%.1f s at %s, the smallest size it chooses)", c->floor_s, fl);
	if (rc == -EDOM)
		fprintf(stderr, "rdmaprobe matrix: --budget %s: --pattern %s needs ~%.1f s at -s %s%s and does not fit; a "
				"smaller sample would pair any two endpoints, not only those %s allows: use --pattern full or "
				"sample:K, or a larger budget\n", budget_text, pat_text, c->requested_s, s0, at_floor, pat_text);
	else
		fprintf(stderr, "rdmaprobe matrix: --budget %s: nothing fits: --pattern %s needs ~%.1f s at -s %s%s, and even "
				"sample:1 (one round) ~%.1f s at -s %s (start-up ~%.1f s); not running\n", budget_text, pat_text,
			c->requested_s, s0, at_floor, c->est.worst_s, fl, c->est.startup_s);
}

int matrix_cli_budget_choose(const struct rp_sched_ep *se, size_t n_eps, const double *gbps, const struct rp_pattern *pat,
		   const char *pat_text, uint64_t seed, const struct mx_plan_model *m, const struct mx_settings *run,
		   double budget_s, const char *budget_text, bool say, struct mx_plan_choice *c)
{
	char why[320];
	int rc = mx_plan_budget(se, n_eps, gbps, pat, seed, m, run, budget_s, c);

	if (rc == -ENOSPC || rc == -EDOM) {
		if (say)
			choose_fail(rc, c, pat_text, budget_text);
		return RP_EXIT_USAGE;
	}
	if (rc) {
		fprintf(stderr, "rdmaprobe matrix: --budget %s: the plan failed: %s\n", budget_text, strerror(-rc));
		return rc == -ENOMEM ? RP_EXIT_ENV : RP_EXIT_USAGE;
	}
	if (!say)
		return RP_EXIT_GO_ON;
	if (!c->reduced && c->msg_size == c->msg_size_requested) {
		fprintf(stderr, "rdmaprobe matrix: --budget %s: --pattern %s fits (~%.1f s)\n", budget_text, pat_text,
			c->requested_s);
		return RP_EXIT_GO_ON;
	}
	mx_plan_choice_str(c, pat, why, sizeof(why));
	fprintf(stderr, "rdmaprobe matrix: --budget %s: %s\n", budget_text, why);
	return RP_EXIT_GO_ON;
}

void matrix_cli_coverage_print(const struct mx_coverage *c, const char *requested, const char *ran, double budget_s)
{
	char s0[24], s1[24];

	printf("coverage: %s", ran);
	if (c->msg_size_run && c->msg_size_run != c->msg_size_requested) {
		mx_plan_size_str(c->msg_size_run, s1, sizeof(s1));
		mx_plan_size_str(c->msg_size_requested, s0, sizeof(s0));
		printf(" at -s %s", s1);
		if (budget_s > 0)
			printf(" (--budget %g s; requested %s at -s %s)", budget_s, requested, s0);
	} else if (budget_s > 0) {
		printf(" (--budget %g s; requested %s)", budget_s, requested);
	}
	printf(": every endpoint against %u", c->peers_min);
	if (c->peers_max != c->peers_min)
		printf(" to %u", c->peers_max);
	printf(" peer%s; %llu of %llu (rail, rail) combinations%s; %llu of %llu ordered pairs %s allows (%.1f%%)\n",
	       c->peers_max == 1 ? "" : "s", (unsigned long long)c->combos_covered, (unsigned long long)c->combos_allowed,
	       c->combos_covered == c->combos_allowed ? " (all)" : "", (unsigned long long)c->ordered_measured,
	       (unsigned long long)c->ordered_allowed, requested, 100.0 * c->fraction);
}

/* The model's figures and where each came from. */
static void model_print(FILE *out, const struct mx_plan_model *m, const struct mx_settings *run,
			const struct mx_plan_est *e, size_t n_eps)
{
	fprintf(out, "model:\n  set-up %.3f s per direction: %s\n", m->setup_s, m->setup_src);
	fprintf(out, "  transfer at %.3g%% of the lower link rate of a pair: %s\n", 100 * m->rate_frac, m->rate_src);
	fprintf(out, "  per-round overhead %.3f s beyond the slowest pair: %s\n", m->round_overhead_s, m->round_src);
	if (m->startup_per_ep_s > 0)
		fprintf(out, "  start-up %.1f s (%.3f s per endpoint x %zu): %s\n", e->startup_s, m->startup_per_ep_s, n_eps,
			m->startup_src);
	else
		fprintf(out, "  start-up %.1f s: %s\n", e->startup_s, m->startup_src);
	if (run->sweep && m->sweep_probe_s > 0)
		fprintf(out, "  sweep: %zu probe round%s, at most %zu probes at an endpoint, %.3f s a probe of the busiest "
			"endpoint: %.1f s: %s\n", e->sweep_rounds, e->sweep_rounds == 1 ? "" : "s", e->sweep_probes_max,
			m->sweep_probe_s, e->sweep_s, m->sweep_src);
	else if (run->sweep)
		fprintf(out, "  sweep: %zu probe round%s (at most %zu probes at an endpoint) of %.3f s: %.1f s: %s\n",
			e->sweep_rounds, e->sweep_rounds == 1 ? "" : "s", e->sweep_probes_max, mx_plan_sweep_round_s(m, 0),
			e->sweep_s, m->sweep_src);
	fprintf(out, "  retest: no extra rounds (they measure again only what fails or is slow)\n");
}

/* The rounds, each with its estimate: all of them up to 32, else the first three and the last. */
static int rounds_print(FILE *out, const struct rp_sched *s, const double *rate, size_t n_eps,
			const struct mx_plan_model *m, const struct mx_settings *run)
{
	size_t max_pairs = rp_sched_max_round_pairs(s), got, n = rp_sched_n_rounds(s);
	struct rp_sched_pair *pairs = calloc(max_pairs ? max_pairs : 1, sizeof(*pairs));

	if (!pairs)
		return RP_EXIT_ENV;
	for (size_t r = 0; r < n; r++) {
		if (n > 32 && r >= 3 && r + 1 != n) {
			if (r == 3)
				fprintf(out, "  ...\n");
			continue;
		}
		rp_sched_round(s, r, pairs, max_pairs, &got);
		fprintf(out, "  round %zu: %zu pairs, ~%.2f s", r + 1, got, mx_plan_round_s(m, run, rate, pairs, got));
		if (n_eps <= 16) {
			fprintf(out, ":");
			for (size_t i = 0; i < got; i++)
				fprintf(out, " %u<->%u", pairs[i].a, pairs[i].b);
		}
		fprintf(out, "\n");
	}
	free(pairs);
	return RP_EXIT_GO_ON;
}

/* What the plan is of: the schedule, its estimate, the model and what each direction measures. */
struct plan_view {
	const struct matrix_plan_in *o;
	FILE *out;                    /* the text: stdout, stderr when the JSON goes to stdout */
	const struct rp_sched_ep *se;
	const double *rate;
	size_t n_eps;
	const struct rp_pattern *pat; /* planned (the budget's choice) */
	const struct rp_sched *s;
	const struct mx_plan_model *m;
	const struct mx_settings *run;   /* the budget's size */
	struct mx_plan_est e;
};

/* The plan of one pattern over the endpoints, as text. */
static int plan_print(const struct plan_view *v)
{
	const struct matrix_plan_in *o = v->o;
	const struct mx_settings *run = v->run;
	const struct mx_plan_est *e = &v->e;
	double bytes_dir = (double)run->msg_size * (double)(run->iters + run->warmup_iters);
	char b1[32], b2[32], pt[32], sweep[48] = "";
	int status;

	fprintf(v->out, "plan: pattern %s, %zu endpoints on %llu nodes (%llu per node), seed %llu\n",
		rp_pattern_str(v->pat, pt, sizeof(pt)), v->n_eps, (unsigned long long)o->nodes, (unsigned long long)o->hcas,
		(unsigned long long)o->seed);
	fprintf(v->out, "rounds: %zu; pairs: %llu (each measured both ways: %llu measurements); at most %zu pairs per "
		"round\n", rp_sched_n_rounds(v->s), (unsigned long long)e->pairs, 2ULL * e->pairs, e->max_round_pairs);
	if (o->settings->concurrent_rails)
		fprintf(v->out, "concurrent rails: each round is played rail by rail alone, then with every rail at once: %zu "
			"rounds in all, every pair measured twice\n", e->rounds);
	status = rounds_print(v->out, v->s, v->rate, v->n_eps, v->m, run);
	if (run->duration_s > 0) {
		fprintf(v->out, "bytes: each measurement runs %.2f s\n", run->duration_s);
	} else {
		human_bytes(bytes_dir, b1, sizeof(b1));
		human_bytes(bytes_dir * 2.0 * (o->settings->concurrent_rails ? 2.0 : 1.0) * (double)e->pairs, b2, sizeof(b2));
		fprintf(v->out, "bytes: %s per measurement (%llu x %llu B, %llu warm-up), %s in all\n", b1,
			(unsigned long long)run->iters, (unsigned long long)run->msg_size, (unsigned long long)run->warmup_iters,
			b2);
	}
	model_print(v->out, v->m, run, e, v->n_eps);
	if (run->sweep)
		snprintf(sweep, sizeof(sweep), "sweep %.1f s + ", e->sweep_s);
	fprintf(v->out, "estimated time: %.1f s = start-up %.1f s + %s%.1f s of rounds, at the ports' rates (%s), %s\n",
		e->total_s, e->startup_s, sweep, e->rounds_s,
		o->rail_gbps ? "this node's ports" : "--rate",
		v->m->calibrated ? "calibrated (see model)" : "uncalibrated: assumed figures (--calibrate-from FILE fits them)");
	if (e->dead)
		fprintf(v->out, "worst case with %zu dead endpoint%s (--plan-dead): %.1f s (+%.1f s: %s)%s\n", e->dead,
			e->dead == 1 ? "" : "s", e->worst_s, e->faults_s,
			run->sweep && run->retest ? "a screen deadline in each sweep round that finds one dead, and what "
						    "the confirmations take beyond the rounds they run beside"
						  : "every round a dead endpoint is in waits a full deadline",
			o->budget_s > 0 ? "; --budget fits this" : "");
	else
		fprintf(v->out, "worst case: not priced (--plan-dead 0%s: a healthy fabric)\n",
			run->sweep && run->retest ? "" : ", the default without the sweep or --retest");
	return status;
}

/* --json FILE: the plan as a document (lib/plan/mx_plan_json.h), with the coverage the run would report. */
static int plan_json(const struct plan_view *v, const struct mx_plan_choice *choice)
{
	const struct matrix_plan_in *o = v->o;
	struct mx_coverage cov;
	json_t *root;
	int rc = mx_coverage_compute(v->se, v->n_eps, o->pattern, v->s, rp_sched_n_rounds(v->s), &cov);

	if (rc)
		return rc == -ENOMEM ? RP_EXIT_ENV : RP_EXIT_USAGE;
	mx_coverage_set_run(&cov, o->cfg->meas.msg_size, v->run->msg_size, choice, o->pattern);
	root = mx_plan_json(&(struct mx_plan_doc){ .version = rp_version_string(), .requested = o->pattern,
						   .sched = v->s, .pattern = v->pat, .seed = o->seed, .nodes = o->nodes,
						   .per_node = o->hcas, .ep_gbps = v->rate,
						   .rates_src = o->rail_gbps ? "this node's ports" : "--rate", .m = v->m,
						   .run = v->run, .est = &v->e, .choice = choice, .cov = &cov });
	if (!root) {
		rp_cli_write_failed("matrix", o->json, 0, "plan document");
		return RP_EXIT_ENV;
	}
	rc = rp_report_write_json(root, o->json);   /* logged: the file and what failed */
	json_decref(root);
	if (rc)
		rp_cli_write_failed("matrix", o->json, rc, NULL);
	return rc ? RP_EXIT_ENV : -1;
}

/* The planned schedule, its estimate, the text and the document. */
static int plan_out(struct plan_view *v, const struct mx_plan_choice *choice)
{
	struct rp_sched *s = NULL;
	int status, rc;

	if (rp_sched_create(v->se, v->n_eps, v->pat, v->o->seed, &s) != 0)
		return RP_EXIT_USAGE;
	v->s = s;
	rc = mx_plan_estimate(s, v->rate, v->n_eps, v->m, v->run, &v->e);
	status = rc ? (rc == -ENOMEM ? RP_EXIT_ENV : RP_EXIT_USAGE) : plan_print(v);
	if (status < 0 && v->o->json)
		status = plan_json(v, choice);
	rp_sched_destroy(s);
	return status;
}

int matrix_cli_plan_print(const struct matrix_plan_in *o)
{
	size_t n_eps = (size_t)(o->nodes * o->hcas);
	struct rp_sched_ep *se = calloc(n_eps ? n_eps : 1, sizeof(*se));
	double *rate = calloc(n_eps ? n_eps : 1, sizeof(*rate));
	struct mx_plan_model m;
	struct mx_settings run;
	struct mx_plan_choice choice;
	struct plan_view v = { .o = o, .out = o->json && strcmp(o->json, "-") == 0 ? stderr : stdout, .se = se,
			       .rate = rate, .n_eps = n_eps, .pat = o->pattern, .m = &m, .run = &run };
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
	run = *o->settings;
	status = matrix_cli_plan_dead_opt(o->plan_dead, n_eps, run.sweep && run.retest, &run.plan_dead);
	if (status != RP_EXIT_GO_ON)
		goto out;
	status = matrix_cli_model_load(o->calibrate_from, o->allow_simulated, &m);
	if (status != RP_EXIT_GO_ON)
		goto out;
	if (o->budget_s > 0) {
		if (n_eps < 2) {
			fprintf(stderr, "rdmaprobe matrix: --budget: %zu endpoint(s): nothing to pair\n", n_eps);
			status = RP_EXIT_USAGE;
			goto out;
		}
		status = matrix_cli_budget_choose(se, n_eps, rate, o->pattern, o->pattern_text, o->seed, &m, &run, o->budget_s,
					o->budget_text, true, &choice);
		if (status != RP_EXIT_GO_ON)
			goto out;
		v.pat = &choice.pattern;
		run.msg_size = choice.msg_size;
	}
	status = plan_out(&v, o->budget_s > 0 ? &choice : NULL);
	if (status < 0)
		status = RP_EXIT_OK;
out:
	free(se);
	free(rate);
	return status;
}
