/* mx_plan_json.c: a run's coverage as JSON (the matrix report's "coverage"); see mx_plan_json.h. */
#include "mx_plan_json.h"

json_t *mx_coverage_json(const struct mx_coverage *c, const char *requested, const char *ran, double budget_s)
{
	return json_pack("{s:s, s:s, s:o, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:f}", "pattern_requested", requested,
			 "pattern_run", ran, "budget_s", budget_s > 0 ? json_real(budget_s) : json_null(), "peers_min",
			 (json_int_t)c->peers_min, "peers_max", (json_int_t)c->peers_max, "rail_combinations",
			 (json_int_t)c->combos_allowed, "rail_combinations_covered", (json_int_t)c->combos_covered,
			 "all_rail_combinations", c->combos_covered == c->combos_allowed, "ordered_pairs",
			 (json_int_t)c->ordered_allowed, "ordered_pairs_measured", (json_int_t)c->ordered_measured,
			 "fraction", c->fraction);
}
