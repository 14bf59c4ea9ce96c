/* fabtopo_map.c: a --topology applied to a run's endpoints; see fabtopo.h. */
#include "discover/fabtopo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

static int cmp_adapter(const void *x, const void *y)
{
	const struct rp_fabtopo_adapter *a = *(const struct rp_fabtopo_adapter *const *)x;
	const struct rp_fabtopo_adapter *b = *(const struct rp_fabtopo_adapter *const *)y;
	int c = strcmp(a->node, b->node);

	return c ? c : strcmp(a->device, b->device);
}

/* The adapter line of (node, device, port): exact, else the device's any-port line, else the node's
 * any-device line (Slurm); NULL none. by[] is sorted by (node, device). */
static const struct rp_fabtopo_adapter *adapter_find(const struct rp_fabtopo_adapter *const *by, size_t n,
						     const struct rp_endpoint *ep)
{
	const struct rp_fabtopo_adapter *found = NULL;
	struct rp_fabtopo_adapter key;
	const struct rp_fabtopo_adapter *kp = &key;
	size_t lo = 0, hi = n;

	rp_strlcpy(key.node, ep->node, sizeof(key.node));
	rp_strlcpy(key.device, "*", sizeof(key.device));
	/* lower bound of (node, "*"): '*' sorts before every device name that starts with a letter or digit */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cmp_adapter(&by[mid], &kp) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && strcmp(by[i]->node, ep->node) == 0; i++) {
		const struct rp_fabtopo_adapter *a = by[i];

		if (strcmp(a->device, ep->device) == 0 && a->port == ep->port)
			return a;
		if (strcmp(a->device, ep->device) == 0 && a->port == 0)
			found = a;
		else if (!found && strcmp(a->device, "*") == 0)
			found = a;
	}
	return found;
}

/* The map's leaf for an endpoint on topology leaf l: l itself (native), or "SWITCH/DEVICE" (Slurm). */
static int map_leaf(const struct rp_fabtopo *t, struct rp_fabtopo_map *mp, size_t *cap, uint32_t l, const char *dev,
		    uint32_t *leaf_p)
{
	char name[2 * RP_NAME_MAX + 2];
	char **names;

	if (!t->slurm) {
		*leaf_p = l;
		return 0;
	}
	snprintf(name, sizeof(name), "%s/%s", t->leaves[l], dev);
	for (size_t i = mp->n_leaves; i-- > 0;)
		if (strcmp(mp->leaf_names[i], name) == 0) {
			*leaf_p = (uint32_t)i;
			return 0;
		}
	if (mp->n_leaves == *cap) {
		names = realloc(mp->leaf_names, (*cap ? 2 * *cap : 64) * sizeof(*names));
		if (!names)
			return -ENOMEM;
		mp->leaf_names = names;
		*cap = *cap ? 2 * *cap : 64;
	}
	mp->leaf_names[mp->n_leaves] = strdup(name);
	if (!mp->leaf_names[mp->n_leaves])
		return -ENOMEM;
	*leaf_p = (uint32_t)mp->n_leaves++;
	return 0;
}

/* The uplinks of the map's leaves: native, as listed; Slurm, SWITCH/DEVICE has SWITCH's. */
static int map_uplinks(const struct rp_fabtopo *t, struct rp_fabtopo_map *mp)
{
	mp->up = calloc(mp->n_leaves * mp->n_spines + 1, 1);
	if (!mp->up)
		return -ENOMEM;
	for (size_t u = 0; u < t->n_up; u++) {
		if (!t->slurm) {
			mp->up[(size_t)t->up[u].leaf * mp->n_spines + t->up[u].spine] = 1;
			continue;
		}
		for (size_t l = 0; l < mp->n_leaves; l++) {
			size_t k = strlen(t->leaves[t->up[u].leaf]);

			if (strncmp(mp->leaf_names[l], t->leaves[t->up[u].leaf], k) == 0 && mp->leaf_names[l][k] == '/')
				mp->up[l * mp->n_spines + t->up[u].spine] = 1;
		}
	}
	return 0;
}

int rp_fabtopo_map_build(const struct rp_fabtopo *t, const struct rp_endpoint *eps, size_t n_eps,
			 struct rp_fabtopo_map *mp)
{
	const struct rp_fabtopo_adapter **by = calloc(t->n_adapters + 1, sizeof(*by));
	size_t cap = 0;
	int rc = 0;

	memset(mp, 0, sizeof(*mp));
	mp->n_eps = n_eps;
	mp->leaf = calloc(n_eps + 1, sizeof(*mp->leaf));
	mp->leaf_port = calloc(n_eps + 1, sizeof(*mp->leaf_port));
	mp->node_idx = calloc(n_eps + 1, sizeof(*mp->node_idx));
	mp->spine_names = (const char *const *)t->spines;
	mp->n_spines = t->n_spines;
	mp->dmodk = t->dmodk && t->n_spines > 0;
	if (!by || !mp->leaf || !mp->leaf_port || !mp->node_idx) {
		rc = -ENOMEM;
		goto out;
	}
	if (!t->slurm) {
		mp->leaf_names = calloc(t->n_leaves + 1, sizeof(*mp->leaf_names));
		if (!mp->leaf_names) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t l = 0; l < t->n_leaves && !rc; l++, mp->n_leaves++)
			if (!(mp->leaf_names[l] = strdup(t->leaves[l])))
				rc = -ENOMEM;
	}
	for (size_t i = 0; i < t->n_adapters; i++)
		by[i] = &t->adapters[i];
	if (t->n_adapters > 1)   /* qsort's array may be NULL when empty */
		qsort(by, t->n_adapters, sizeof(*by), cmp_adapter);
	for (size_t e = 0; e < n_eps && !rc; e++) {
		const struct rp_fabtopo_adapter *a = adapter_find(by, t->n_adapters, &eps[e]);

		mp->leaf[e] = RP_FABTOPO_NONE;
		if (!a) {
			mp->n_unknown++;
			continue;
		}
		rc = map_leaf(t, mp, &cap, a->leaf, eps[e].device, &mp->leaf[e]);
		mp->leaf_port[e] = a->leaf_port;
		mp->node_idx[e] = a->node_idx;
	}
	if (!rc)
		rc = map_uplinks(t, mp);
out:
	free(by);
	if (rc) {
		rp_fabtopo_map_fini(mp);
		return rp_error(rc, "topology: map %zu endpoints", n_eps);
	}
	return 0;
}

void rp_fabtopo_map_fini(struct rp_fabtopo_map *mp)
{
	for (size_t l = 0; mp->leaf_names && l < mp->n_leaves; l++)
		free(mp->leaf_names[l]);
	free(mp->leaf_names);
	free(mp->leaf);
	free(mp->leaf_port);
	free(mp->node_idx);
	free(mp->up);
	memset(mp, 0, sizeof(*mp));
}

uint32_t rp_fabtopo_map_spine(const struct rp_fabtopo_map *mp, uint32_t src, uint32_t dst)
{
	if (!mp->dmodk || mp->leaf[src] == mp->leaf[dst] || mp->leaf[src] == RP_FABTOPO_NONE ||
	    mp->leaf[dst] == RP_FABTOPO_NONE)
		return RP_FABTOPO_NONE;
	return mp->node_idx[dst] % (uint32_t)mp->n_spines;
}
