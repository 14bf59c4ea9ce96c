/* mx_plan_json.c: a run's coverage and the plan as JSON; see mx_plan_json.h. */
#include "plan/mx_plan_json.h"

#include <stdlib.h>

static json_t *size_or_null(uint64_t v)
{
	return v ? json_integer((json_int_t)v) : json_null();
}

json_t *mx_coverage_json(const struct mx_coverage *c, const char *requested, const char *ran, double budget_s)
{
	return json_pack("{s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:f, s:o, s:o, s:o}", "pattern_requested",
			 requested, "pattern_run", ran, "budget_s", budget_s > 0 ? json_real(budget_s) : json_null(),
			 "peers_min", (json_int_t)c->peers_min, "peers_max", (json_int_t)c->peers_max, "rail_combinations",
			 (json_int_t)c->combos_allowed, "rail_combinations_covered", (json_int_t)c->combos_covered,
			 "all_rail_combinations", c->combos_covered == c->combos_allowed, "ordered_pairs",
			 (json_int_t)c->ordered_allowed, "ordered_pairs_measured", (json_int_t)c->ordered_measured,
			 "fraction", c->fraction, "msg_size_requested", size_or_null(c->msg_size_requested), "msg_size_run",
			 size_or_null(c->msg_size_run), "budget_choice",
			 c->budget_choice[0] ? json_string(c->budget_choice) : json_null());
}

static json_t *figure(double value, const char *source)
{
	return json_pack("{s:f, s:s}", "value", value, "source", source);
}

static json_t *model_json(const struct mx_plan_model *m)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "setup_s", figure(m->setup_s, m->setup_src), "rate_frac",
			 figure(m->rate_frac, m->rate_src), "round_overhead_s", figure(m->round_overhead_s, m->round_src),
			 "startup_s", figure(m->startup_s, m->startup_src), "startup_per_endpoint_s",
			 figure(m->startup_per_ep_s, m->startup_src), "sweep_probe_s",
			 json_pack("{s:o, s:s}", "value", m->sweep_probe_s > 0 ? json_real(m->sweep_probe_s) : json_null(),
				   "source", m->sweep_src), "calibrated", m->calibrated);
}

static json_t *measurement_json(const struct mx_settings *r, uint64_t msg_size_requested)
{
	json_int_t bytes = (json_int_t)(r->msg_size * (r->iters + r->warmup_iters));

	return json_pack("{s:I, s:I, s:I, s:I, s:o, s:b, s:b, s:o, s:o}", "msg_size", (json_int_t)r->msg_size,
			 "msg_size_requested", (json_int_t)msg_size_requested, "iters", (json_int_t)r->iters,
			 "warmup_iters", (json_int_t)r->warmup_iters, "duration_s",
			 r->duration_s > 0 ? json_real(r->duration_s) : json_null(), "bidir", r->bidir, "concurrent_rails",
			 r->concurrent_rails, "sweep", r->sweep ? json_integer(r->sweep) : json_null(), "bytes_per_direction",
			 r->duration_s > 0 ? json_null() : json_integer(bytes));
}

static json_t *estimate_json(const struct mx_plan_est *e)
{
	return json_pack("{s:f, s:I, s:I, s:f, s:f, s:f, s:s, s:I, s:f, s:f}", "startup_s", e->startup_s, "sweep_rounds",
			 (json_int_t)e->sweep_rounds, "sweep_probes_max", (json_int_t)e->sweep_probes_max, "sweep_s", e->sweep_s, "rounds_s", e->rounds_s, "total_s", e->total_s,
			 "retest", "not counted: retest rounds measure again only what fails or is slow (a healthy fabric "
			 "assumed: the worst case with dead endpoints is worst_s)", "dead_endpoints", (json_int_t)e->dead,
			 "faults_s", e->faults_s, "worst_s", e->worst_s);
}

static json_t *budget_json(const struct mx_plan_choice *c, const struct rp_pattern *requested)
{
	char text[320], rq[32], ch[32];

	if (!c)
		return json_null();
	mx_plan_choice_str(c, requested, text, sizeof(text));
	rp_pattern_str(requested, rq, sizeof(rq));
	rp_pattern_str(&c->pattern, ch, sizeof(ch));
	return json_pack("{s:f, s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:f, s:o}", "budget_s", c->budget_s, "choice", text,
			 "pattern_requested", rq, "pattern", ch, "reduced", c->reduced, "msg_size_requested",
			 (json_int_t)c->msg_size_requested, "msg_size", (json_int_t)c->msg_size, "floor_size",
			 (json_int_t)c->floor_size, "requested_s", c->requested_s, "floor_s",
			 c->floor_tried ? json_real(c->floor_s) : json_null());
}

/* Each planned round's estimate (solo rounds apart). */
static json_t *rounds_json(const struct mx_plan_doc *d)
{
	size_t cap = rp_sched_max_round_pairs(d->sched), got;
	struct rp_sched_pair *pairs = calloc(cap ? cap : 1, sizeof(*pairs));
	json_t *a = pairs ? json_array() : NULL;

	for (size_t r = 0; a && r < rp_sched_n_rounds(d->sched); r++) {
		if (rp_sched_round(d->sched, r, pairs, cap, &got) != 0 ||
		    json_array_append_new(a, json_real(mx_plan_round_s(d->m, d->run, d->ep_gbps, pairs, got))) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	free(pairs);
	return a;
}

static json_t *endpoints_json(const struct mx_plan_doc *d)
{
	json_t *rates = json_array();

	for (uint64_t r = 0; rates && r < d->per_node; r++)
		if (json_array_append_new(rates, json_real(d->ep_gbps[r])) != 0) {
			json_decref(rates);
			rates = NULL;
		}
	if (!rates)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:o, s:s}", "count", (json_int_t)(d->nodes * d->per_node), "nodes",
			 (json_int_t)d->nodes, "per_node", (json_int_t)d->per_node, "link_gbps", rates,
			 "link_gbps_source", d->rates_src);
}

json_t *mx_plan_json(const struct mx_plan_doc *d)
{
	char rq[32], pt[32];
	json_t *rounds = rounds_json(d), *eps = endpoints_json(d);

	rp_pattern_str(d->requested, rq, sizeof(rq));
	rp_pattern_str(d->pattern, pt, sizeof(pt));
	if (!rounds || !eps) {
		json_decref(rounds);
		json_decref(eps);
		return NULL;
	}
	/* json_pack's "o" takes each value, and releases it too when packing fails */
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "tool", "rdmaprobe", "version", d->version, "command", "matrix --plan", "pattern", pt,
			 "pattern_requested", rq, "seed", (json_int_t)d->seed, "endpoints", eps, "rounds",
			 (json_int_t)rp_sched_n_rounds(d->sched), "rounds_played", (json_int_t)d->est->rounds, "pairs",
			 (json_int_t)d->est->pairs, "measurements", (json_int_t)(2 * d->est->pairs), "max_round_pairs",
			 (json_int_t)d->est->max_round_pairs, "round_s", rounds, "measurement",
			 measurement_json(d->run, d->choice ? d->choice->msg_size_requested : d->run->msg_size), "model",
			 model_json(d->m), "estimate", estimate_json(d->est), "budget", budget_json(d->choice, d->requested),
			 "coverage", mx_coverage_json(d->cov, rq, pt, d->choice ? d->choice->budget_s : 0));
}
