/* health_pci.c: the PCIe checks of health.h (pcie_degraded, gpu_link_idle, acs_redirect,
 * acs_unreadable) and GPUDirect readiness (IOMMU, nvidia-peermem, dma-buf).
 *
 * pcie_degraded: every link on the paths of every adapter and GPU to their root port, each
 * physical link once (functions of one device share their link), current speed and width against
 * the smaller maximum of its two ends: a Gen5 device in a Gen4 slot is not degraded. On a GPU's own
 * link only the width is judged: GPUs lower the link speed when idle.
 *
 * acs_redirect: for each GPU and each of its nearest adapters that share a PCIe switch with it (path
 * PIX or PXB; through the root complex the traffic takes that way anyway), every bridge on the path
 * below their common ancestor. Upstream forwarding alone is not flagged: inside a switch it does not
 * change where a P2P request goes (doc/health-signals.md, section 3).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "health/gpudirect.h"
#include "health/health_int.h"
#include "discover/pcie.h"
#include "discover/sysfs.h"
#include "discover/topo.h"
#include "base/util.h"

/* ---- pcie_degraded ---- */

/* What the function at bdf is, for a message: "mlx5_0", "GPU", "bridge", "device". */
static const char *hop_role(const struct rp_node *node, const struct rp_pci_hop *hop, char *buf, size_t size)
{
	for (size_t i = 0; i < node->n_hcas; i++) {
		if (strcmp(node->hcas[i].pci, hop->bdf) == 0) {
			rp_strlcpy(buf, node->hcas[i].name, size);
			return buf;
		}
	}
	for (size_t i = 0; i < node->n_gpus; i++)
		if (strcmp(node->gpus[i].pci, hop->bdf) == 0)
			return "GPU";
	return hop->bridge ? "switch upstream port" : "device";
}

struct link_seen {
	char (*bdf)[RP_PCI_MAX];
	size_t n;
};

/* True (1) when bdf was already recorded in s, comparing the first len characters (10: the device,
 * so the functions of one device count once; RP_PCI_MAX: the function); else records it (0), or
 * -ENOMEM (logged). */
static int seen_once(struct link_seen *s, const char *bdf, size_t len)
{
	char (*nb)[RP_PCI_MAX];

	for (size_t i = 0; i < s->n; i++)
		if (strncmp(s->bdf[i], bdf, len) == 0)
			return 1;
	nb = realloc(s->bdf, (s->n + 1) * sizeof(*nb));
	if (!nb)
		return rp_error(-ENOMEM, "health check: out of memory");
	s->bdf = nb;
	rp_strlcpy(s->bdf[s->n++], bdf, RP_PCI_MAX);
	return 0;
}

/* Judge one link; is_gpu: the link ends at a GPU. */
static int judge_link(const struct rp_node *node, const struct rp_pcie_hop_link *l, bool is_gpu, struct rp_health *h)
{
	char cur[32], exp[32], role_buf[RP_NAME_MAX], up[48] = "", vf[48] = "";
	const char *role, *at = l->child->link_bdf;
	bool slow = l->cur_gts > 0 && l->exp_gts > 0 && l->cur_gts + 0.01 < l->exp_gts;
	bool narrow = l->cur_width > 0 && l->exp_width > 0 && l->cur_width < l->exp_width;

	if (!slow && !narrow)
		return 0;
	rp_pcie_link_text(l->cur_gts, l->cur_width, cur, sizeof(cur));
	rp_pcie_link_text(l->exp_gts, l->exp_width, exp, sizeof(exp));
	role = hop_role(node, l->child, role_buf, sizeof(role_buf));
	if (l->parent)
		snprintf(up, sizeof(up), " (link from %s)", l->parent->bdf);
	if (strcmp(at, l->child->bdf) != 0)
		snprintf(vf, sizeof(vf), ", the physical function of %s", l->child->bdf);
	if (is_gpu && !narrow)
		return rp_health_add(h, RP_HC_GPU_LINK_IDLE, l->child->bdf,
				     "GPU %s link at %s, its maximum %s: GPUs lower the link speed when idle, so "
				     "only its width is judged", l->child->bdf, cur, exp);
	return rp_health_add(h, RP_HC_PCIE_DEGRADED, at,
			     "PCIe link of %s (%s%s) at %s (%.0f Gb/s), both ends can do %s (%.0f Gb/s)%s", at,
			     role, vf, cur, rp_pcie_link_gbps(l->cur_gts, l->cur_width), exp,
			     rp_pcie_link_gbps(l->exp_gts, l->exp_width), up);
}

/* Every link of one device's path. */
static int check_chain(const struct rp_node *node, const char *pci_path, bool is_gpu, struct link_seen *seen,
		       struct rp_health *h)
{
	struct rp_pci_hop hops[RP_PCIE_MAX_HOPS];
	size_t n = 0;

	if (!pci_path[0] || rp_pcie_chain(node->sysfs_root, pci_path, hops, RP_PCIE_MAX_HOPS, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct rp_pcie_hop_link l;
		int rc;

		if (!rp_pcie_hop_link(hops, n, i, &l))
			continue;
		rc = seen_once(seen, hops[i].link_bdf, 10);   /* the functions of a device share a link */
		if (rc > 0)
			continue;
		rc = rc ? rc : judge_link(node, &l, is_gpu && i == n - 1, h);
		if (rc)
			return rc;
	}
	return 0;
}

int rp_health_check_pcie(const struct rp_node *node, struct rp_health *h)
{
	struct link_seen seen = { NULL, 0 };
	int rc = 0;

	for (size_t i = 0; i < node->n_hcas && !rc; i++)
		if (node->hcas[i].pci[0])
			rc = check_chain(node, node->hcas[i].pci_path, false, &seen, h);
	for (size_t i = 0; i < node->n_gpus && !rc; i++)
		rc = check_chain(node, node->gpus[i].pci_path, true, &seen, h);
	free(seen.bdf);
	return rc;
}

/* ---- acs_redirect ---- */

struct acs_ctx {
	struct link_seen checked;     /* bridges already read */
	char first_unreadable[RP_PCI_MAX];
	int unreadable_err;
};

/* Read and judge one bridge between gpu and hca. */
static int acs_bridge(const struct rp_node *node, const struct rp_pci_hop *b, const struct rp_gpu *gpu,
		      const struct rp_hca *hca, struct acs_ctx *c, struct rp_health *h)
{
	char bits[48], all[48];
	uint16_t ctrl;
	int rc = seen_once(&c->checked, b->bdf, RP_PCI_MAX);   /* ACS is per function */

	if (rc)
		return rc < 0 ? rc : 0;
	h->gdr.acs_checked++;
	rc = rp_pcie_read_acs(node->sysfs_root, b->rel, &ctrl);
	if (rc == -ENXIO)
		return 0;
	if (rc) {
		if (!h->gdr.acs_unreadable++) {
			rp_strlcpy(c->first_unreadable, b->bdf, sizeof(c->first_unreadable));
			c->unreadable_err = rc;
		}
		return 0;
	}
	if (!(ctrl & RP_ACS_REDIRECT))
		return 0;
	rp_pcie_acs_text(ctrl & RP_ACS_REDIRECT, bits, sizeof(bits));
	rp_pcie_acs_text(ctrl, all, sizeof(all));
	return rp_health_add(h, RP_HC_ACS_REDIRECT, b->bdf,
			     "ACS on bridge %s between GPU %s and %s redirects P2P (%s set; control: %s): GPUDirect "
			     "traffic goes through the root complex, slowly or blocked by the IOMMU%s (clear it: setpci -s "
			     "%s ECAP_ACS+0x6.w=0000, or boot with pci=disable_acs_redir=%s)", b->bdf, gpu->pci, hca->name,
			     bits, all, ctrl & RP_ACS_DT ? "; DT is set, so only ATS-translated requests go direct" : "",
			     b->bdf, b->bdf);
}

/* The bridges below the common ancestor of a GPU and an adapter on one switch. */
static int acs_pair(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_hca *hca,
		    struct acs_ctx *c, struct rp_health *h)
{
	struct rp_pci_hop g[RP_PCIE_MAX_HOPS], a[RP_PCIE_MAX_HOPS];
	size_t ng = 0, na = 0, k = 0;
	int rc = 0;

	if (rp_pcie_chain(node->sysfs_root, gpu->pci_path, g, RP_PCIE_MAX_HOPS, &ng) ||
	    rp_pcie_chain(node->sysfs_root, hca->pci_path, a, RP_PCIE_MAX_HOPS, &na) || !ng || !na)
		return 0;
	while (k < ng && k < na && strcmp(g[k].bdf, a[k].bdf) == 0)
		k++;
	for (size_t i = k; i + 1 < ng && !rc; i++)
		if (g[i].bridge)
			rc = acs_bridge(node, &g[i], gpu, hca, c, h);
	for (size_t i = k; i + 1 < na && !rc; i++)
		if (a[i].bridge)
			rc = acs_bridge(node, &a[i], gpu, hca, c, h);
	return rc;
}

int rp_health_check_acs(const struct rp_node *node, const struct rp_topo_merge *m, struct rp_health *h)
{
	struct acs_ctx c;
	size_t *idx;
	int rc = 0;

	memset(&c, 0, sizeof(c));
	if (!node->n_hcas || !node->n_gpus)
		return 0;
	idx = calloc(node->n_hcas, sizeof(*idx));
	if (!idx)
		return rp_error(-ENOMEM, "health check: out of memory");
	for (size_t g = 0; g < node->n_gpus && !rc; g++) {
		size_t n = rp_topo_nearest_m(node, &node->gpus[g], m, idx, node->n_hcas);

		for (size_t i = 0; i < n && i < node->n_hcas && !rc; i++) {
			const struct rp_hca *hca = &node->hcas[idx[i]];
			enum rp_path p = rp_topo_path_m(node, &node->gpus[g], hca, m);

			if (hca->pci[0] && (p == RP_PATH_PIX || p == RP_PATH_PXB))
				rc = acs_pair(node, &node->gpus[g], hca, &c, h);
		}
	}
	free(idx);
	free(c.checked.bdf);
	if (!rc && h->gdr.acs_unreadable)
		rc = rp_health_add(h, RP_HC_ACS_UNREADABLE, "",
				   "ACS of %zu of %zu bridges between GPUs and their nearest adapters cannot be read "
				   "(%s/config: %s%s): run as root to check acs_redirect", h->gdr.acs_unreadable,
				   h->gdr.acs_checked, c.first_unreadable, strerror(-c.unreadable_err),
				   c.unreadable_err == -EPERM ? ", config space past byte 64 needs CAP_SYS_ADMIN" : "");
	return rc;
}

/* ---- GPUDirect readiness ---- */

/* The IOMMU group type of the function at pci_path ("identity", "DMA", ...); false when none. */
static bool group_type(const char *root, const char *pci_path, char *out, size_t size)
{
	char rel[RP_PATHBUF + 16], group[RP_PATHBUF];

	if (!pci_path[0] || snprintf(rel, sizeof(rel), "%s/iommu_group", pci_path) >= (int)sizeof(rel) ||
	    rp_sysfs_realpath_rel(root, rel, group, sizeof(group)))
		return false;
	return rp_sysfs_readf(root, out, size, "%s/type", group) == 0 && out[0];
}

/* iommu, iommu_mode: class/iommu and the group types of the GPUs and PCI adapters. */
static void gdr_iommu(const struct rp_node *node, struct rp_gdr_state *g)
{
	char **names = NULL, type[32];
	size_t n = 0;

	g->iommu = RP_TRI_FALSE;
	if (rp_sysfs_list_dir(node->sysfs_root, "class/iommu", &names, &n) == 0 && n > 0)
		g->iommu = RP_TRI_TRUE;
	rp_sysfs_free_names(names);
	for (size_t i = 0; i < node->n_hcas + node->n_gpus; i++) {
		const char *path = i < node->n_hcas ? node->hcas[i].pci_path : node->gpus[i - node->n_hcas].pci_path;

		if (i < node->n_hcas && !node->hcas[i].pci[0])
			continue;
		if (!group_type(node->sysfs_root, path, type, sizeof(type)))
			continue;
		if (!g->iommu_mode[0])
			rp_strlcpy(g->iommu_mode, type, sizeof(g->iommu_mode));
		else if (strcmp(g->iommu_mode, type) != 0)
			rp_strlcpy(g->iommu_mode, "mixed", sizeof(g->iommu_mode));
	}
}

/* The IOMMU and ACS words of the kernel command line. */
static void gdr_cmdline(const char *path, struct rp_gdr_state *g)
{
	static const char *const prefixes[] = { "iommu=", "intel_iommu=", "amd_iommu=", "iommu.", "pci=" };
	char line[4096];
	size_t len = 0;
	FILE *f;

	if (!path || !(f = fopen(path, "re")))
		return;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	g->cmdline_read = true;
	for (char *save = NULL, *w = strtok_r(line, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		bool keep = false;
		int n;

		for (size_t i = 0; i < RP_ARRAY_SIZE(prefixes) && !keep; i++)
			keep = strncmp(w, prefixes[i], strlen(prefixes[i])) == 0;
		if (keep && strncmp(w, "pci=", 4) == 0)
			keep = strstr(w, "acs") != NULL;
		if (!keep || len >= sizeof(g->cmdline_hints))
			continue;
		n = snprintf(g->cmdline_hints + len, sizeof(g->cmdline_hints) - len, "%s%s", len ? " " : "", w);
		if (n > 0)
			len += (size_t)n;
	}
}

/* dma-buf on this host: libibverbs exports ibv_reg_dmabuf_mr and the kernel is 5.12 or newer. */
static void gdr_dmabuf_query(struct rp_gdr_state *g)
{
	struct utsname u;
	int major = 0, minor = 0;
	bool verbs = dlsym(RTLD_DEFAULT, "ibv_reg_dmabuf_mr") != NULL;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2) {
		g->dmabuf = RP_TRI_UNKNOWN;
		snprintf(g->dmabuf_why, sizeof(g->dmabuf_why), "the kernel version cannot be read");
		return;
	}
	g->dmabuf = verbs && (major > 5 || (major == 5 && minor >= 12)) ? RP_TRI_TRUE : RP_TRI_FALSE;
	snprintf(g->dmabuf_why, sizeof(g->dmabuf_why), "kernel %.40s%s, libibverbs %s ibv_reg_dmabuf_mr%s", u.release,
		 major > 5 || (major == 5 && minor >= 12) ? "" : " (dma-buf needs 5.12)", verbs ? "has" : "lacks",
		 g->dmabuf == RP_TRI_TRUE ? "; the GPU driver must export dma-buf too" : "");
}

/* True when mode means DMA translation for P2P. */
static bool translated(const char *mode)
{
	return strcmp(mode, "DMA") == 0 || strcmp(mode, "DMA-FQ") == 0 || strcmp(mode, "mixed") == 0;
}

int rp_health_check_gdr(const struct rp_node *node, const struct rp_health_opts *opts, struct rp_health *h)
{
	struct rp_gdr_state *g = &h->gdr;
	bool pci_hca = false;
	int rc = 0;

	gdr_iommu(node, g);
	gdr_cmdline(opts->cmdline_path, g);
	g->peermem = rp_gdr_peermem_loaded(node->sysfs_root) ? RP_TRI_TRUE : RP_TRI_FALSE;
	g->dmabuf = opts->dmabuf;
	if (g->dmabuf == RP_TRI_UNKNOWN && opts->probe_host)
		gdr_dmabuf_query(g);
	else if (g->dmabuf == RP_TRI_UNKNOWN)
		snprintf(g->dmabuf_why, sizeof(g->dmabuf_why), "not probed: a fixture root stands in for /sys");
	else
		snprintf(g->dmabuf_why, sizeof(g->dmabuf_why), "as given");
	for (size_t i = 0; i < node->n_hcas; i++)
		pci_hca = pci_hca || node->hcas[i].pci[0];
	/* GPUDirect matters only where GPUs and PCI adapters meet. */
	if (!node->n_gpus || !pci_hca)
		return 0;
	if (g->iommu == RP_TRI_TRUE && translated(g->iommu_mode))
		rc = rp_health_add(h, RP_HC_IOMMU_TRANSLATED, "",
				   "the IOMMU translates DMA of the GPUs and adapters (group type %s%s%s): P2P goes "
				   "through the root complex and the kernel enables ACS redirect; for GPUDirect RDMA boot "
				   "with iommu=pt (passthrough)", g->iommu_mode, g->cmdline_hints[0] ? "; command line: " : "",
				   g->cmdline_hints);
	if (!rc && g->peermem == RP_TRI_FALSE && g->dmabuf == RP_TRI_FALSE)
		rc = rp_health_add(h, RP_HC_GPUDIRECT_UNAVAILABLE, "",
				   "GPUDirect RDMA is not available: nvidia-peermem is not loaded (modprobe nvidia-peermem) "
				   "and dma-buf is not possible (%s)", g->dmabuf_why);
	if (!rc && g->peermem == RP_TRI_FALSE && g->dmabuf == RP_TRI_UNKNOWN)
		rc = rp_health_add(h, RP_HC_GPUDIRECT_UNKNOWN, "",
				   "nvidia-peermem is not loaded and dma-buf support is unknown (%s)", g->dmabuf_why);
	return rc;
}
