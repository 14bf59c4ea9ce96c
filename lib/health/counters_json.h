/* counters_json.h: one port's counter delta and its judgement as JSON, for a pair's
 * "counters": {"src": ..., "dst": ...} (lib/health/counters.h).
 *
 * Keys: {"device", "port", "seconds", "moved": {"<name>": N} (exact changes), "at_least":
 * {"<name>": N} (saturated or reset: a lower bound), "unknown": {"<name>": "<why>"},
 * "reregistered", "unattributable", "unattributable_why" (null when attributable), "verdict"
 * ("ok" | "lossy" | "fail"), "reason" (null when ok)}. A driver counter whose name is also a PMA
 * counter of the port is keyed "hw_counters/<name>" (device-level ones "device/hw_counters/<name>").
 *
 * Memory: the caller owns the returned reference; NULL when memory runs out (logged).
 */
#ifndef RP_COUNTERS_JSON_H
#define RP_COUNTERS_JSON_H

#include <jansson.h>

#include "health/counters.h"

json_t *rp_ctr_delta_to_json(const struct rp_ctr_delta *d, const struct rp_ctr_judgement *j);

/* One snapshot ('devices --counters'): {"<name>": {"value" (null when unreadable), "class",
 * "source" ("counters" | "hw_counters" | "device/hw_counters"), "error" (null, or why it could not
 * be read)}}, names qualified as above when a driver counter shares a PMA counter's name. */
json_t *rp_ctr_snapshot_to_json(const struct rp_ctr_snapshot *s);

/* One side of a pair's compact counters (struct rp_pair_ctr_side), for "counters": {"src", "dst"}:
 * {"moved": {"<name>": N}, "at_least": {...}, "n_moved" (in all; at most RP_PAIR_CTR_MAX are named),
 * "n_unknown", "unattributable", "verdict", "reason"}; JSON null when the side was not measured. */
json_t *rp_ctr_side_to_json(const struct rp_pair_ctr_side *s);

#endif
