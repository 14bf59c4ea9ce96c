/* verdict_json.c: suspects and path faults as JSON; see verdict_json.h. */
#include "verdict/verdict_json.h"

#include <stdio.h>

json_t *rp_verdict_suspects_json(const struct rp_verdict *v)
{
	json_t *arr = json_array();

	for (size_t k = 0; arr && k < v->n_suspects; k++) {
		const struct rp_verdict_suspect *s = &v->suspects[k];
		json_t *o = json_pack("{s:I, s:s, s:s, s:I, s:I, s:f, s:b, s:s}", "rank", (json_int_t)(k + 1), "kind",
				      rp_component_str(s->kind), "name", s->name, "failed", (json_int_t)s->failed,
				      "measured", (json_int_t)s->measured, "confidence", s->confidence, "drain", s->drain,
				      "why", s->why);

		if (!o || json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *rp_verdict_paths_json(const struct rp_verdict *v, const struct rp_endpoint *(*ep_of)(const void *arg, size_t e),
			      const void *arg, size_t max)
{
	json_t *list = json_array(), *o;

	for (size_t i = 0; list && i < v->n_paths && i < max; i++) {
		const struct rp_endpoint *a = ep_of(arg, v->paths[i].a), *b = ep_of(arg, v->paths[i].b);
		char na[300], nb[300];
		json_t *p;

		snprintf(na, sizeof(na), "%s/%s:%d", a->node, a->device, a->port);
		snprintf(nb, sizeof(nb), "%s/%s:%d", b->node, b->device, b->port);
		p = json_pack("{s:s, s:s, s:I}", "a", na, "b", nb, "failed", (json_int_t)v->paths[i].failed);
		if (!p || json_array_append_new(list, p) != 0) {
			json_decref(list);
			return NULL;
		}
	}
	if (!list)
		return NULL;
	o = json_pack("{s:I, s:I, s:f, s:s, s:o}", "pairs", (json_int_t)v->n_paths, "results", (json_int_t)v->n_ambiguous,
		      "background", v->background, "text", RP_VERDICT_PATH_TEXT, "list", list);
	return o;
}
