/* health_json.c: the health section as JSON; see health_json.h. */
#include "health/health_json.h"

#include <errno.h>

#include "base/log.h"

static json_t *str_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

static json_t *gbps_or_null(double v)
{
	return v > 0 ? json_real(v) : json_null();
}

static json_t *tri_json(enum rp_tri t)
{
	return t == RP_TRI_UNKNOWN ? json_null() : json_boolean(t == RP_TRI_TRUE);
}

static json_t *items_json(const struct rp_health *h, bool notes)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < h->n_items; i++) {
		const struct rp_health_item *it = &h->items[i];

		if (rp_health_code_is_note(it->code) != notes)
			continue;
		if (json_array_append_new(a, json_pack("{s:s, s:s, s:o}", "code", rp_health_code_str(it->code),
						       "message", it->message, "device", str_or_null(it->device)))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *rates_json(const struct rp_health *h)
{
	static const char *const limits[] = { "port", "pcie", "unknown" };
	json_t *a = json_array();

	for (size_t i = 0; a && i < h->n_rates; i++) {
		const struct rp_health_rate *r = &h->rates[i];

		if (json_array_append_new(a, json_pack("{s:s, s:i, s:o, s:o, s:o, s:s, s:o, s:o, s:s}", "device", r->device,
						       "port", r->port, "port_gbps", gbps_or_null(r->port_gbps),
						       "pcie_gbps", gbps_or_null(r->pcie_gbps), "expected_gbps",
						       gbps_or_null(r->expected_gbps), "limit", limits[r->limit],
						       "pcie_link", str_or_null(r->pcie_text), "pcie_at",
						       str_or_null(r->pcie_at), "message", r->message))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *gdr_json(const struct rp_gdr_state *g)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:s, s:I, s:I}", "iommu", tri_json(g->iommu), "iommu_mode",
			 str_or_null(g->iommu_mode), "cmdline_hints",
			 g->cmdline_read ? json_string(g->cmdline_hints) : json_null(), "nvidia_peermem",
			 tri_json(g->peermem), "dmabuf", tri_json(g->dmabuf), "dmabuf_why", g->dmabuf_why,
			 "acs_bridges_checked", (json_int_t)g->acs_checked, "acs_bridges_unreadable",
			 (json_int_t)g->acs_unreadable);
}

json_t *rp_health_to_json(const struct rp_health *h)
{
	json_t *j = json_pack("{s:o?, s:o?, s:o?, s:o?}", "warnings", items_json(h, false), "notes", items_json(h, true),
			      "expected_rates", rates_json(h), "gpudirect", gdr_json(&h->gdr));

	if (!j || !json_is_array(json_object_get(j, "warnings")) || !json_is_array(json_object_get(j, "notes")) ||
	    !json_is_array(json_object_get(j, "expected_rates")) || !json_is_object(json_object_get(j, "gpudirect"))) {
		json_decref(j);
		rp_error(-ENOMEM, "health report: out of memory");
		return NULL;
	}
	return j;
}
