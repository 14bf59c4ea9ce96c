/* counters_json.c: a counter delta as JSON; see counters_json.h. */
#include "health/counters_json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"

json_t *rp_ctr_delta_to_json(const struct rp_ctr_delta *d, const struct rp_ctr_judgement *j)
{
	json_t *moved = json_object(), *at_least = json_object(), *unknown = json_object();
	json_t *o = NULL;
	int bad = !moved || !at_least || !unknown;

	for (size_t i = 0; i < d->n && !bad; i++) {
		const struct rp_ctr_change *c = &d->changes[i];
		char key[RP_CTR_NAME_MAX + 24];

		rp_ctr_change_key(d, i, key, sizeof(key));
		if (c->kind == RP_CK_UNKNOWN)
			bad = json_object_set_new(unknown, key, json_string(c->why));
		else
			bad = json_object_set_new(c->kind == RP_CK_EXACT ? moved : at_least, key,
						  json_integer((json_int_t)(c->delta > INT64_MAX ? INT64_MAX : c->delta)));
	}
	if (!bad)
		o = json_pack("{s:s, s:i, s:f, s:O, s:O, s:O, s:b, s:b, s:o, s:s, s:o}", "device", d->device, "port",
			      d->port, "seconds", d->seconds, "moved", moved, "at_least", at_least, "unknown", unknown,
			      "reregistered", d->reregistered, "unattributable", d->unattributable,
			      "unattributable_why", d->unattributable ? json_string(d->unattributable_why) : json_null(),
			      "verdict", rp_ctr_verdict_name(j->verdict), "reason",
			      j->reason[0] ? json_string(j->reason) : json_null());
	json_decref(moved);
	json_decref(at_least);
	json_decref(unknown);
	if (!o)
		rp_error(-ENOMEM, "counters of %s port %d as JSON: out of memory", d->device, d->port);
	return o;
}

static const char *source_name(enum rp_ctr_source src)
{
	return src == RP_CTR_PMA ? "counters" : src == RP_CTR_HW_PORT ? "hw_counters" : "device/hw_counters";
}

json_t *rp_ctr_snapshot_to_json(const struct rp_ctr_snapshot *s)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < s->n; i++) {
		const struct rp_ctr_value *v = &s->v[i];
		char key[RP_CTR_NAME_MAX + 24];
		bool clash = false;

		for (size_t k = 0; k < s->n && !clash; k++)
			clash = k != i && s->v[k].source != v->source && strcmp(s->v[k].name, v->name) == 0;
		snprintf(key, sizeof(key), "%s%s%s", clash && v->source != RP_CTR_PMA ? source_name(v->source) : "",
			 clash && v->source != RP_CTR_PMA ? "/" : "", v->name);
		if (json_object_set_new(o, key, json_pack("{s:o, s:s, s:s, s:o}", "value",
							  v->err ? json_null() : json_integer((json_int_t)(v->value > INT64_MAX ? INT64_MAX : v->value)),
							  "class", rp_ctr_class_name(rp_ctr_classify_name(v->name)),
							  "source", source_name(v->source), "error",
							  v->err ? json_string(strerror(-v->err)) : json_null()))) {
			json_decref(o);
			o = NULL;
		}
	}
	if (!o)
		rp_error(-ENOMEM, "counters of %s port %d as JSON: out of memory", s->device, s->port);
	return o;
}

json_t *rp_ctr_side_to_json(const struct rp_pair_ctr_side *s)
{
	json_t *moved, *at_least, *o = NULL;
	int bad;

	if (!s->measured)
		return json_null();
	moved = json_object();
	at_least = json_object();
	bad = !moved || !at_least;
	for (uint32_t i = 0; i < s->n && i < RP_PAIR_CTR_MAX && !bad; i++)
		bad = json_object_set_new(s->c[i].at_least ? at_least : moved, s->c[i].name,
					  json_integer((json_int_t)(s->c[i].delta > INT64_MAX ? INT64_MAX : s->c[i].delta)));
	if (!bad)
		o = json_pack("{s:O, s:O, s:I, s:I, s:b, s:s, s:o}", "moved", moved, "at_least", at_least, "n_moved",
			      (json_int_t)s->n_moved, "n_unknown", (json_int_t)s->n_unknown, "unattributable",
			      s->unattributable != 0, "verdict",
			      rp_ctr_verdict_name(s->verdict <= RP_CV_FAIL ? (enum rp_ctr_verdict)s->verdict : RP_CV_OK),
			      "reason", s->reason[0] ? json_string(s->reason) : json_null());
	json_decref(moved);
	json_decref(at_least);
	/* rank 0 of a matrix kept a plain pass's judgement, not its informational counters' names
	 * (lib/matrix/mx_results.h): say so rather than list none; --jsonl has them */
	if (o && s->brief && json_object_set_new(o, "listed", json_false()) != 0) {
		json_decref(o);
		o = NULL;
	}
	if (!o)
		rp_error(-ENOMEM, "a pair's port counters as JSON: out of memory");
	return o;
}
