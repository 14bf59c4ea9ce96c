/* nccl_json.c: the JSON form of what NCCL would do (rp_nccl_result_json(); see nccl.h). */
#include "nccl/nccl.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* A JSON string; bytes that are not UTF-8 (a spec is user input) become '?'. NULL text: null. */
static json_t *jstr(const char *s)
{
	json_t *j;
	char *copy;

	if (!s)
		return json_null();
	j = json_string(s);
	if (j)
		return j;
	copy = strdup(s);
	if (!copy)
		return NULL;
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j;
}

/* Set key to v (stolen); false when v is NULL or the set fails. */
static bool set(json_t *obj, const char *key, json_t *v)
{
	return v && json_object_set_new(obj, key, v) == 0;
}

static bool push(json_t *arr, json_t *v)
{
	return v && json_array_append_new(arr, v) == 0;
}

static json_t *env_json(const struct rp_nccl_env *env)
{
	json_t *o = json_object();
	bool ok = o != NULL;

	ok = ok && set(o, "NCCL_IB_GID_INDEX", json_integer(rp_nccl_env_gid_index(env)));
	ok = ok && set(o, "NCCL_IB_ADDR_FAMILY", json_string(env->addr_family == AF_INET6 ? "AF_INET6" : "AF_INET"));
	ok = ok && set(o, "NCCL_IB_ADDR_RANGE", jstr(env->addr_range));
	ok = ok && set(o, "NCCL_IB_ROCE_VERSION_NUM", json_integer(env->roce_version));
	ok = ok && set(o, "NCCL_NET_GDR_LEVEL", json_string(rp_path_str(env->gdr_level)));
	ok = ok && set(o, "NCCL_IB_ROUTABLE_FLID_GID_INDEX", json_integer(env->flid_gid_index));
	ok = ok && set(o, "NCCL_IB_DEVICE_PCI_ORDER", json_boolean(env->pci_order));
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *ports_json(const struct rp_nccl_result *res, json_t *selected, json_t *gids)
{
	json_t *arr = json_array();
	bool ok = arr != NULL;
	char key[RP_NAME_MAX + 16];

	for (size_t i = 0; ok && i < res->n_selected; i++) {
		const struct rp_nccl_sel *s = &res->selected[i];
		json_t *o = json_object();

		snprintf(key, sizeof(key), "%s:%d", s->hca, s->port);
		ok = push(arr, o) && push(selected, jstr(key));
		ok = ok && set(o, "hca", jstr(s->hca)) && set(o, "port", json_integer(s->port));
		ok = ok && set(o, "link_layer", json_string(rp_link_layer_str(s->link_layer)));
		ok = ok && set(o, "gid_index", s->gid_index >= 0 ? json_integer(s->gid_index) : json_null());
		if (ok && s->rail != -1)
			ok = set(o, "rail", json_integer(s->rail));
		if (ok && s->plane != -1)
			ok = set(o, "plane", json_integer(s->plane));
		if (ok && s->link_layer == RP_LL_ETHERNET)
			ok = set(gids, key, s->gid_index >= 0 ? json_integer(s->gid_index) : json_null());
	}
	if (!ok) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

static json_t *gpus_json(const struct rp_nccl_result *res)
{
	json_t *arr = json_array();
	bool ok = arr != NULL;

	for (size_t i = 0; ok && i < res->n_gpus; i++) {
		const struct rp_nccl_gpu_choice *g = &res->gpus[i];
		json_t *o = json_object();
		bool has = g->hca[0] != '\0';

		ok = o && push(arr, o);
		ok = ok && set(o, "pci", jstr(g->pci));
		ok = ok && set(o, "hca", has ? jstr(g->hca) : json_null());
		ok = ok && set(o, "path", has ? json_string(rp_path_str(g->path)) : json_null());
		ok = ok && set(o, "gdr", json_boolean(has && g->gdr));
	}
	if (!ok) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

static json_t *warnings_json(const struct rp_nccl_result *res)
{
	json_t *arr = json_array();
	bool ok = arr != NULL;

	for (size_t i = 0; ok && i < res->n_warnings; i++) {
		const struct rp_nccl_warning *w = &res->warnings[i];
		json_t *o = json_object();

		ok = o && push(arr, o);
		ok = ok && set(o, "code", json_string(rp_nccl_warn_code(w->code)));
		ok = ok && set(o, "message", jstr(w->message));
		ok = ok && set(o, "fatal", json_boolean(rp_nccl_warn_fatal(w->code)));
	}
	if (!ok) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

struct json_t *rp_nccl_result_json(const struct rp_nccl_result *res, const struct rp_nccl_env *env)
{
	json_t *root = json_object();
	json_t *selected = json_array();
	json_t *gids = json_object();
	json_t *ports = NULL;
	bool ok = root && selected && gids;

	ok = ok && set(root, "hca_spec", jstr(res->hca_spec));
	ok = ok && (ports = ports_json(res, selected, gids)) != NULL;
	/* Each set steals its value, also when it fails; what was not handed over is released below. */
	if (ok) {
		ok = set(root, "selected", selected);
		selected = NULL;
	}
	if (ok) {
		ok = set(root, "ports", ports);
		ports = NULL;
	}
	if (ok) {
		ok = set(root, "gid_index", gids);
		gids = NULL;
	}
	ok = ok && set(root, "gpus", gpus_json(res));
	ok = ok && set(root, "warnings", warnings_json(res));
	ok = ok && set(root, "recommended_nccl_ib_hca", jstr(res->recommended));
	ok = ok && set(root, "usable", json_boolean(rp_nccl_result_usable(res)));
	if (ok) {
		char v[16];

		uint32_t m = rp_nccl_version_modelled(res->version);

		rp_nccl_version_format(m ? m : RP_NCCL_VERSION_OLDEST, v, sizeof(v));
		ok = set(root, "rules_version", json_string(v));
	}
	if (ok) {
		/* The per-release rules in force, by their stable names (nccl_rules.h). */
		json_t *rules = json_array();

		ok = set(root, "rules", rules);
		for (int r = 0; ok && r < RP_NCCL_R_COUNT_; r++)
			if (rp_nccl_rule_on(res->version, (enum rp_nccl_rule)r))
				ok = push(rules, json_string(rp_nccl_rule_info((enum rp_nccl_rule)r)->name));
	}
	ok = ok && (!env || set(root, "env", env_json(env)));
	json_decref(selected);
	json_decref(ports);
	json_decref(gids);
	if (!ok) {
		json_decref(root);
		return NULL;
	}
	return root;
}
