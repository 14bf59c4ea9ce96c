/* nccl_select.c: the (device, port) list NCCL builds from NCCL_IB_HCA, release by release; see
 * nccl_int.h.
 *
 * ncclIbInitDevices (src/transport/net_ib.cc; src/transport/net_ib/init.cc since 2.29.2), the
 * same in every modelled release unless nccl_rules.h says otherwise:
 * - devices in ibv_get_device_list() order; a device is opened only while fewer than MAX_IB_DEVS
 *   ports are taken, but all its ACTIVE IB/Ethernet ports that the spec keeps are then added, so
 *   a multi-port device opened at 31 writes past the 32-entry table;
 * - since 2.29.7 the list is sorted by the PCI address of class/infiniband/<dev>/device (last
 *   path component read as hex), devices whose link does not resolve last (NCCL_IB_DEVICE_PCI_ORDER);
 *   glibc's qsort() is a merge sort here, so ties keep their order;
 * - every port is then compared with the ones before it by PCI path (the real-port count), and a
 *   NULL path among the earlier ones is passed to strcmp/strncmp: a device without a device link
 *   followed by one with a link crashes NCCL. The sort puts such devices last, so since 2.29.7
 *   only NCCL_IB_DEVICE_PCI_ORDER=0 reaches it;
 * - 2.20.3 to 2.23.4 (NCCL_IB_MERGE_NICS, default 1) also compare each new port, in the same
 *   order, with the first port of every merged NIC that has room for a second port
 *   (NCCL_IB_MAX_DEVS_PER_NIC 2): PCI path (strcmp, so a NULL path on either side crashes), then
 *   sys_image_guid and link layer; a match joins that NIC;
 * - 2.30.7 gives each port the rail and plane of the entry that kept it and checks the planes
 *   (ncclIbGetPlaneIndex): a plane id with bit 14 set, or a 13th distinct plane id, fails the
 *   whole IB initialisation.
 */
#include "nccl/nccl_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "discover/sysfs.h"
#include "base/util.h"

#define PLANE_MAX_INDEX 14            /* distinct plane ids NCCL tracks, the undefined one included */
#define PLANE_VIRT_BIT (1 << PLANE_MAX_INDEX)

bool rp_nccl_port_usable(const struct rp_port *p)
{
	return p->state == RP_PORT_ACTIVE && (p->link_layer == RP_LL_INFINIBAND || p->link_layer == RP_LL_ETHERNET);
}

bool rp_nccl_hca_visible(const struct rp_hca *h)
{
	return h->in_verbs != RP_TRI_FALSE;
}

/* busIdToInt64 over the last path component: hex digits with ':' and '.' skipped, stopping at
 * anything else, at most 16 of them, read by strtol(, 16) (so "virtio0" is 0). */
int64_t rp_nccl_pci_sort_id(const char *path)
{
	const char *last = strrchr(path, '/');
	char hex[17];
	size_t n = 0;

	last = last ? last + 1 : path;
	for (; *last && n < sizeof(hex) - 1; last++) {
		char c = *last;

		if (c == '.' || c == ':')
			continue;
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			break;
		hex[n++] = c;
	}
	hex[n] = '\0';
	return strtol(hex, NULL, 16);
}

/* The list in ibv_get_device_list() order with NCCL's per-device table check. */
static int pick_in_verbs_order(const struct rp_node *node, const struct rp_nccl_spec *spec, struct rp_nccl_pick *pick)
{
	size_t max = (size_t)rp_nccl_max_devs(spec->version), cap = 0;

	for (size_t d = 0; d < node->n_hcas; d++)
		cap += node->hcas[d].n_ports;
	pick->sel = calloc(cap ? cap : 1, sizeof(*pick->sel));
	if (!pick->sel)
		return rp_error(-ENOMEM, "nccl rules: out of memory for the selection");
	for (size_t d = 0; d < node->n_hcas; d++) {
		const struct rp_hca *h = &node->hcas[d];
		bool full = pick->n >= max;

		if (!rp_nccl_hca_visible(h))
			continue;
		for (size_t i = 0; i < h->n_ports; i++) {
			const struct rp_port *p = &h->ports[i];
			struct rp_nccl_sel *s;
			int entry;

			if (!rp_nccl_port_usable(p) || !rp_nccl_spec_keeps_at(spec, h->name, p->num, &entry))
				continue;
			if (full) {
				pick->dropped++;
				continue;
			}
			s = &pick->sel[pick->n++];
			pick->overflow += pick->n > max;
			rp_strlcpy(s->hca, h->name, sizeof(s->hca));
			s->port = p->num;
			s->link_layer = p->link_layer;
			s->hca_idx = d;
			s->rail = entry >= 0 && rp_nccl_rule_on(spec->version, RP_NCCL_R_HCA_FIELDS) ? spec->entries[entry].rail : -1;
			s->plane = entry >= 0 && rp_nccl_rule_on(spec->version, RP_NCCL_R_HCA_FIELDS) ? spec->entries[entry].plane : -1;
		}
	}
	return 0;
}

/* Stable insertion sort by NCCL's key: devices with a device link by PCI id, the others last. */
static void pick_sort_pci(const struct rp_node *node, struct rp_nccl_pick *pick)
{
	for (size_t i = 1; i < pick->n; i++) {
		struct rp_nccl_sel s = pick->sel[i];
		const char *ps = node->hcas[s.hca_idx].pci_path;
		size_t j = i;

		while (j > 0) {
			const char *pj = node->hcas[pick->sel[j - 1].hca_idx].pci_path;
			bool after;

			if (!ps[0] || !pj[0])
				after = !pj[0] && ps[0];
			else
				after = rp_nccl_pci_sort_id(pj) > rp_nccl_pci_sort_id(ps);
			if (!after)
				break;
			pick->sel[j] = pick->sel[j - 1];
			j--;
		}
		pick->sel[j] = s;
	}
}

/* The first port without a device link followed by one with a link. */
static void pick_check_null_path(const struct rp_node *node, struct rp_nccl_pick *pick)
{
	int nopath = -1;

	pick->crash_nopath = pick->crash_path = -1;
	for (size_t i = 0; i < pick->n; i++) {
		bool has = node->hcas[pick->sel[i].hca_idx].pci_path[0] != '\0';

		if (!has && nopath < 0)
			nopath = (int)i;
		if (has && nopath >= 0) {
			pick->crash_nopath = nopath;
			pick->crash_path = (int)i;
			return;
		}
	}
}

/* The PCI path as ncclIbGetPciPath hands it on in 2.18.3 to 2.23.4: function digit zeroed, and the
 * two device digits with NCCL_IB_MERGE_VFS. */
static void merged_pci_path(const char *path, bool vfs, char *out, size_t len)
{
	size_t n;

	rp_strlcpy(out, path, len);
	n = strlen(out);
	if (n >= 1)
		out[n - 1] = '0';
	if (vfs && n >= 4)
		out[n - 3] = out[n - 4] = '0';
}

/* The same NIC for ncclIbFindMatchingDev: same device, or equal sys_image_guid (sysfs; node_guid
 * when it cannot be read). */
static bool same_guid(const struct rp_node *node, size_t a, size_t b)
{
	char ga[32] = "", gb[32] = "";

	if (a == b)
		return true;
	if (!node->sysfs_root[0] || rp_sysfs_readf(node->sysfs_root, ga, sizeof(ga), "class/infiniband/%s/sys_image_guid", node->hcas[a].name) ||
	    rp_sysfs_readf(node->sysfs_root, gb, sizeof(gb), "class/infiniband/%s/sys_image_guid", node->hcas[b].name)) {
		rp_strlcpy(ga, node->hcas[a].node_guid, sizeof(ga));
		rp_strlcpy(gb, node->hcas[b].node_guid, sizeof(gb));
	}
	return ga[0] && strcmp(ga, gb) == 0;
}

/* ncclIbFindMatchingDev as each port is added (2.20.3 to 2.23.4). */
static void pick_check_merge_nics(const struct rp_node *node, const struct rp_nccl_env *env,
				  struct rp_nccl_pick *pick)
{
	size_t *first = calloc(pick->n ? pick->n : 1, sizeof(*first));
	int *ndevs = calloc(pick->n ? pick->n : 1, sizeof(*ndevs));
	size_t groups = 0;

	pick->merge_crash = pick->merge_crash_with = -1;
	if (!first || !ndevs)
		goto out;   /* no answer rather than a wrong one: the other checks still run */
	for (size_t k = 0; k < pick->n; k++) {
		const struct rp_nccl_sel *s = &pick->sel[k];
		const char *pk = node->hcas[s->hca_idx].pci_path;
		size_t g;

		for (g = 0; g < groups; g++) {
			const struct rp_nccl_sel *f = &pick->sel[first[g]];
			const char *pf = node->hcas[f->hca_idx].pci_path;
			char mk[RP_PATHBUF], mf[RP_PATHBUF];

			if (ndevs[g] >= 2)
				continue;
			if (!pk[0] || !pf[0]) {
				pick->merge_crash = (int)k;
				pick->merge_crash_with = (int)first[g];
				goto out;
			}
			merged_pci_path(pk, env->merge_vfs, mk, sizeof(mk));
			merged_pci_path(pf, env->merge_vfs, mf, sizeof(mf));
			if (strcmp(mk, mf) == 0 && same_guid(node, s->hca_idx, f->hca_idx) && s->link_layer == f->link_layer)
				break;
		}
		if (g < groups) {
			ndevs[g]++;
		} else {
			first[groups] = k;
			ndevs[groups++] = 1;
		}
	}
out:
	free(first);
	free(ndevs);
}

/* ncclIbGetPlaneIndex over the list (2.30.7). */
static void pick_check_planes(struct rp_nccl_pick *pick)
{
	int planes[PLANE_MAX_INDEX] = { -1 };
	int count = 1;

	pick->bad_plane = -1;
	for (size_t i = 0; i < pick->n; i++) {
		int plane = pick->sel[i].plane, p = 0;

		while (p < count && planes[p] != plane)
			p++;
		if (p < count)
			continue;
		if (p == PLANE_MAX_INDEX - 1 || (plane != -1 && (plane & PLANE_VIRT_BIT))) {
			pick->bad_plane = (int)i;
			pick->too_many_planes = p == PLANE_MAX_INDEX - 1;
			return;
		}
		planes[count++] = plane;
	}
}

int rp_nccl_pick_ports(const struct rp_node *node, const struct rp_nccl_env *env, const struct rp_nccl_spec *spec,
		       struct rp_nccl_pick *pick)
{
	int rc;

	memset(pick, 0, sizeof(*pick));
	pick->crash_nopath = pick->crash_path = pick->bad_plane = -1;
	pick->merge_crash = pick->merge_crash_with = -1;
	rc = pick_in_verbs_order(node, spec, pick);
	if (rc)
		return rc;
	if (rp_nccl_rule_on(spec->version, RP_NCCL_R_MERGE_NICS_STRCMP) && env->merge_nics)
		pick_check_merge_nics(node, env, pick);   /* in the order the list is built, before any sort */
	if (rp_nccl_rule_on(spec->version, RP_NCCL_R_PCI_ORDER) && env->pci_order)
		pick_sort_pci(node, pick);
	pick_check_null_path(node, pick);
	if (rp_nccl_rule_on(spec->version, RP_NCCL_R_HCA_FIELDS))
		pick_check_planes(pick);
	return 0;
}
