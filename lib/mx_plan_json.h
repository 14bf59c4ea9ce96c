/* mx_plan_json.h: a matrix run's coverage (mx_plan.h) as the JSON report's "coverage" object:
 * {"pattern_requested", "pattern_run", "budget_s" (null without --budget), "peers_min", "peers_max",
 *  "rail_combinations", "rail_combinations_covered", "all_rail_combinations", "ordered_pairs",
 *  "ordered_pairs_measured", "fraction"}. */
#ifndef RP_MX_PLAN_JSON_H
#define RP_MX_PLAN_JSON_H

#include <jansson.h>

#include "mx_plan.h"

/* A new object (the caller owns it), NULL when out of memory. */
json_t *mx_coverage_json(const struct mx_coverage *c, const char *requested, const char *ran, double budget_s);

#endif
