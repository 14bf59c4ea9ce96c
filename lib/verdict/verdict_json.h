/* verdict_json.h: the verdict's suspects and path faults as JSON (for the reports).
 *
 *   "suspects": [ { "rank": 1, "kind": "adapter"|"cable"|"leaf"|"uplink"|"spine"|"fabric", "name": "...",
 *                   "failed": N, "measured": N, "confidence": 0..1, "drain": bool, "why": "..." } ],
 *   "path_faults": { "pairs": N, "results": N, "background": rate, "text": RP_VERDICT_PATH_TEXT,
 *                    "list": [ { "a": "node/dev:port", "b": "node/dev:port", "failed": N } ] (at most max) }
 */
#ifndef RP_VERDICT_JSON_H
#define RP_VERDICT_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "verdict/verdict.h"

/* The "suspects" array; NULL on allocation failure. */
json_t *rp_verdict_suspects_json(const struct rp_verdict *v);
/* The "path_faults" object with at most max pairs listed; ep_of(arg, e) is endpoint e. NULL on
 * allocation failure. */
json_t *rp_verdict_paths_json(const struct rp_verdict *v, const struct rp_endpoint *(*ep_of)(const void *arg, size_t e),
			      const void *arg, size_t max);

#endif
