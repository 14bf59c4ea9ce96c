/* counters_json.c: a counter delta as JSON; see counters_json.h. */
#include "counters_json.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

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
