/* health_json.h: the static health checks (health.h) as JSON, the "health" section of 'devices'.
 *
 * Keys: {"warnings": [{"code", "message", "device"}], "notes": [{"code", "message", "device"}],
 * "expected_rates": [{"device", "port", "port_gbps", "pcie_gbps", "expected_gbps", "limit"
 * ("port" | "pcie" | "unknown"), "pcie_link" ("Gen4 x8" or null), "pcie_at" (a BDF or null),
 * "message"}], "gpudirect": {"iommu" (true|false|null), "iommu_mode" (string or null),
 * "cmdline_hints" (string or null when not read), "nvidia_peermem", "dmabuf" (true|false|null),
 * "dmabuf_why", "acs_bridges_checked", "acs_bridges_unreadable"}}. "device" is null for the node
 * as a whole; rates of 0 (unknown) are null.
 *
 * Memory: the caller owns the returned reference; NULL when memory runs out (logged).
 */
#ifndef RP_HEALTH_JSON_H
#define RP_HEALTH_JSON_H

#include <jansson.h>

#include "health/health.h"

json_t *rp_health_to_json(const struct rp_health *h);

#endif
