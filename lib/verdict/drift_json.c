/* drift_json.c: drift warnings as JSON; see drift.h. */
#include <errno.h>

#include <jansson.h>

#include "verdict/drift.h"
#include "base/log.h"

json_t *rp_drift_to_json(const struct rp_drift *d)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < d->n_warnings; i++) {
		const struct rp_drift_warning *w = &d->warnings[i];

		if (json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:I, s:I, s:I, s:s}", "code",
						       rp_drift_code(), "field", rp_drift_field_str(w->field), "model",
						       w->model, "value", w->value, "majority",
						       w->majority[0] ? json_string(w->majority) : json_null(), "nodes",
						       w->nodes, "n_odd", (json_int_t)w->n_odd, "n_majority",
						       (json_int_t)w->n_majority, "n_known", (json_int_t)w->n_known,
						       "message", w->message))) {
			json_decref(a);
			a = NULL;
		}
	}
	if (!a)
		rp_error(-ENOMEM, "drift report: out of memory");
	return a;
}
