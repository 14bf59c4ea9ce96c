/* node_json.c: the 'devices' JSON; see node_json.h. */
#include "report/node_json.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/log.h"
#include "discover/sysfs.h"
#include "discover/topo.h"

/* A string, or null when empty. */
static json_t *str_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

/* json_object_set_new that remembers a failure instead of stopping at it. */
static void set(json_t *obj, const char *key, json_t *val, bool *ok)
{
	if (!val || json_object_set_new(obj, key, val) != 0)
		*ok = false;
}

static void append(json_t *arr, json_t *val, bool *ok)
{
	if (!val || json_array_append_new(arr, val) != 0)
		*ok = false;
}

static json_t *gid_json(const struct rp_gid *g, bool *ok)
{
	json_t *o = json_object();

	if (!o) {
		*ok = false;
		return NULL;
	}
	set(o, "index", json_integer(g->index), ok);
	set(o, "gid", json_string(g->text), ok);
	set(o, "type", g->type == RP_GID_TYPE_IB_ROCE_V1 || g->type == RP_GID_TYPE_ROCE_V2 ?
		       json_string(rp_gid_type_str(g->type)) : json_null(), ok);
	set(o, "ndev", str_or_null(g->ndev), ok);
	return o;
}

static json_t *port_json(const struct rp_port *p, const struct rp_nccl_env *env, bool *ok)
{
	json_t *o = json_object(), *gids = json_array();
	int gid_index;

	if (!o || !gids) {
		json_decref(o);
		json_decref(gids);
		*ok = false;
		return NULL;
	}
	set(o, "port", json_integer(p->num), ok);
	set(o, "state", p->state >= 0 ? json_string(rp_port_state_str(p->state)) : json_null(), ok);
	set(o, "phys_state", p->phys_state >= 0 ? json_string(rp_phys_state_str(p->phys_state)) : json_null(), ok);
	set(o, "rate_gbps", p->rate_gbps > 0 ? json_real(p->rate_gbps) : json_null(), ok);
	set(o, "rate_text", str_or_null(p->rate_text), ok);
	set(o, "link_layer", p->link_layer != RP_LL_UNKNOWN ? json_string(rp_link_layer_str(p->link_layer)) :
							      json_null(), ok);
	set(o, "lid", json_integer(p->lid), ok);
	set(o, "sm_lid", json_integer(p->sm_lid), ok);
	set(o, "active_mtu", p->active_mtu > 0 ? json_integer(p->active_mtu) : json_null(), ok);
	for (size_t i = 0; i < p->n_gids; i++)
		if (!rp_sysfs_gid_is_zero(p->gids[i].raw))
			append(gids, gid_json(&p->gids[i], ok), ok);
	set(o, "gids", gids, ok);
	gid_index = rp_nccl_gid_index(p, env);
	set(o, "nccl_gid_index", gid_index >= 0 ? json_integer(gid_index) : json_null(), ok);
	return o;
}

static json_t *tri_json(enum rp_tri t)
{
	return t == RP_TRI_UNKNOWN ? json_null() : json_boolean(t == RP_TRI_TRUE);
}

static const char *node_type_str(int t)
{
	static const char *const names[] = { NULL, "CA", "switch", "router", "RNIC", "usNIC", "usNIC UDP" };

	return t > 0 && t < (int)(sizeof(names) / sizeof(names[0])) ? names[t] : NULL;
}

static json_t *hca_json(const struct rp_hca *h, const struct rp_nccl_env *env, bool *ok)
{
	json_t *o = json_object(), *ports = json_array();
	const char *nt = node_type_str(h->node_type);

	if (!o || !ports) {
		json_decref(o);
		json_decref(ports);
		*ok = false;
		return NULL;
	}
	set(o, "name", json_string(h->name), ok);
	set(o, "in_verbs", tri_json(h->in_verbs), ok);
	set(o, "unusable_reason", str_or_null(h->unusable_reason), ok);
	set(o, "pci", str_or_null(h->pci), ok);
	set(o, "pci_path", str_or_null(h->pci_path), ok);
	set(o, "numa_node", json_integer(h->numa_node), ok);
	set(o, "fw_ver", str_or_null(h->fw_ver), ok);
	set(o, "node_guid", str_or_null(h->node_guid), ok);
	set(o, "node_type", nt ? json_string(nt) : json_null(), ok);
	for (size_t i = 0; i < h->n_ports; i++)
		append(ports, port_json(&h->ports[i], env, ok), ok);
	set(o, "ports", ports, ok);
	return o;
}

static json_t *gpu_json(const struct rp_gpu *g, bool *ok)
{
	json_t *o = json_object();

	if (!o) {
		*ok = false;
		return NULL;
	}
	set(o, "index", g->index >= 0 ? json_integer(g->index) : json_null(), ok);
	set(o, "pci", json_string(g->pci), ok);
	set(o, "numa_node", json_integer(g->numa_node), ok);
	set(o, "name", str_or_null(g->name), ok);
	return o;
}

/* "affinity" (every GPU x adapter) and "nearest" (per GPU, ties listed). */
static void affinity_json(const struct rp_node *node, const struct rp_nccl_env *env, json_t *aff, json_t *nearest,
			  bool *ok)
{
	struct rp_topo_merge m;

	rp_nccl_topo_merge(env, &m);   /* the bus-id merge of env's release (and NCCL_IB_MERGE_VFS) */
	for (size_t g = 0; g < node->n_gpus; g++) {
		const struct rp_gpu *gpu = &node->gpus[g];
		size_t *idx = node->n_hcas ? calloc(node->n_hcas, sizeof(*idx)) : NULL;
		json_t *list = json_array();
		size_t n;

		for (size_t h = 0; h < node->n_hcas; h++) {
			json_t *o = json_object();
			float bw;

			if (!o) {
				*ok = false;
				continue;
			}
			set(o, "gpu", json_string(gpu->pci), ok);
			set(o, "hca", json_string(node->hcas[h].name), ok);
			set(o, "path", json_string(rp_path_str(rp_topo_path_m(node, gpu, &node->hcas[h], &m))), ok);
			/* GB/s, as NCCL ranks adapters by it (ncclTopoGetLocal: widest, then smallest type) */
			bw = rp_topo_path_bw_m(node, gpu, &node->hcas[h], &m);
			set(o, "bw", bw < 1e30f ? json_real(bw) : json_null(), ok);
			append(aff, o, ok);
		}
		if (!list || (node->n_hcas && !idx)) {
			json_decref(list);
			free(idx);
			*ok = false;
			continue;
		}
		n = idx ? rp_topo_nearest_m(node, gpu, &m, idx, node->n_hcas) : 0;
		for (size_t i = 0; i < n && i < node->n_hcas; i++)
			append(list, json_string(node->hcas[idx[i]].name), ok);
		set(nearest, gpu->pci, list, ok);
		free(idx);
	}
}

json_t *rp_node_to_json(const struct rp_node *node, const struct rp_nccl_env *env)
{
	json_t *root = json_object(), *devs = json_array(), *gpus = json_array();
	json_t *aff = json_array(), *nearest = json_object();
	struct rp_nccl_env defaults;
	bool ok = root && devs && gpus && aff && nearest;

	if (!env) {
		rp_nccl_env_default(&defaults);
		env = &defaults;
	}
	if (!ok) {
		json_decref(root);
		json_decref(devs);
		json_decref(gpus);
		json_decref(aff);
		json_decref(nearest);
		rp_error(-ENOMEM, "build the devices JSON: out of memory");
		return NULL;
	}
	set(root, "sysfs_root", json_string(node->sysfs_root), &ok);
	set(root, "verbs_consulted", json_boolean(node->verbs_consulted), &ok);
	set(root, "no_device_reason", str_or_null(node->no_device_reason), &ok);
	set(root, "gpu_source", json_string(node->gpu_source), &ok);
	for (size_t i = 0; i < node->n_hcas; i++)
		append(devs, hca_json(&node->hcas[i], env, &ok), &ok);
	for (size_t i = 0; i < node->n_gpus; i++)
		append(gpus, gpu_json(&node->gpus[i], &ok), &ok);
	affinity_json(node, env, aff, nearest, &ok);
	{
		/* The CPU whose inter-socket figure caps SYS paths, and where it was read from. */
		struct rp_topo_cpu cpu;

		rp_topo_cpu_read(node->sysfs_root, env->version, &cpu);
		set(root, "topology_cpu", rp_topo_cpu_json(&cpu), &ok);
	}
	set(root, "devices", devs, &ok);
	set(root, "gpus", gpus, &ok);
	set(root, "affinity", aff, &ok);
	set(root, "nearest", nearest, &ok);
	if (!ok) {
		json_decref(root);
		rp_error(-ENOMEM, "build the devices JSON: out of memory");
		return NULL;
	}
	return root;
}
