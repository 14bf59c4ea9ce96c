/* mx_plan_json.h: the plan as JSON: a run's coverage (the report's "coverage" object) and the whole
 * plan document of `matrix --plan --json FILE`.
 *
 * "coverage": {"pattern_requested", "pattern_run", "budget_s" (null without --budget), "peers_min",
 *  "peers_max", "rail_combinations", "rail_combinations_covered", "all_rail_combinations",
 *  "ordered_pairs", "ordered_pairs_measured", "fraction", "msg_size_requested", "msg_size_run" (null
 *  when not stated), "budget_choice" (what --budget changed and why, mx_plan_choice_str; null
 *  without --budget)}.
 *
 * The plan document (mx_plan_json): {"tool": "rdmaprobe", "version", "command": "matrix --plan",
 *  "pattern" (what is planned), "pattern_requested", "seed",
 *  "endpoints": {"count", "nodes", "per_node", "link_gbps" (one per rail), "link_gbps_source"},
 *  "rounds" (the schedule's), "rounds_played" (with --concurrent-rails' solo rounds), "pairs",
 *  "measurements" (2 x pairs), "max_round_pairs", "round_s" (each planned round's estimate),
 *  "measurement": {"msg_size", "msg_size_requested", "iters", "warmup_iters", "duration_s" (null
 *   without -D), "bidir", "concurrent_rails", "sweep" (W, null without), "bytes_per_direction" (null
 *   with -D)},
 *  "model": {"setup_s", "rate_frac", "round_overhead_s", "startup_s", "startup_per_endpoint_s",
 *   "sweep_probe_s" (value null: derived, a sweep round is a set-up + the overhead): each
 *   {"value", "source"}; "calibrated"},
 *  "estimate": {"startup_s", "sweep_rounds", "sweep_probes_max" (the most probes one endpoint is in
 *   in one sweep round), "sweep_s", "rounds_s", "total_s", "retest"},
 *  "budget": null, or {"budget_s", "choice" (mx_plan_choice_str), "pattern_requested", "pattern",
 *   "reduced", "msg_size_requested", "msg_size", "floor_size", "requested_s", "floor_s" (null when
 *   not tried)},
 *  "coverage": the coverage object above, of the planned schedule against the requested pattern}. */
#ifndef RP_MX_PLAN_JSON_H
#define RP_MX_PLAN_JSON_H

#include <jansson.h>

#include "plan/mx_plan.h"

/* A new object (the caller owns it), NULL when out of memory. */
json_t *mx_coverage_json(const struct mx_coverage *c, const char *requested, const char *ran, double budget_s);

/* What the plan document is made of (all borrowed). */
struct mx_plan_doc {
	const char *version;                    /* rdmaprobe's */
	const struct rp_pattern *requested;     /* asked for */
	const struct rp_sched *sched;           /* the planned schedule (the budget's choice) */
	const struct rp_pattern *pattern;       /* its pattern */
	uint64_t seed, nodes, per_node;         /* endpoints: nodes x per_node, canonical order */
	const double *ep_gbps;                  /* each endpoint's link rate */
	const char *rates_src;                  /* where the rates came from */
	const struct mx_plan_model *m;
	const struct mx_settings *run;          /* as measured (the budget's size) */
	const struct mx_plan_est *est;          /* of sched under m and run */
	const struct mx_plan_choice *choice;    /* --budget; NULL without */
	const struct mx_coverage *cov;          /* of sched against requested */
};

/* The plan document; NULL when out of memory or when sched cannot be walked. */
json_t *mx_plan_json(const struct mx_plan_doc *d);

#endif
