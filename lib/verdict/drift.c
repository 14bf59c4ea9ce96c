/* drift.c: describe an endpoint, and find the odd ones out across the cluster; see drift.h. */
#include "verdict/drift.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <infiniband/verbs.h>

#include "health/health.h"
#include "base/log.h"
#include "discover/sysfs.h"
#include "base/util.h"

static const char *const field_names[RP_DF_COUNT_] = {
	[RP_DF_FIRMWARE] = "firmware", [RP_DF_RATE] = "rate", [RP_DF_MTU] = "mtu",
	[RP_DF_LINK_LAYER] = "link_layer", [RP_DF_GID_INDEX] = "gid_index", [RP_DF_PCIE] = "pcie",
	[RP_DF_DRIVER] = "driver", [RP_DF_RDMA_CORE] = "rdma_core", [RP_DF_NCCL] = "nccl",
};

/* For a person. */
static const char *const field_words[RP_DF_COUNT_] = {
	[RP_DF_FIRMWARE] = "firmware", [RP_DF_RATE] = "port rate", [RP_DF_MTU] = "active MTU",
	[RP_DF_LINK_LAYER] = "link layer", [RP_DF_GID_INDEX] = "NCCL GID index", [RP_DF_PCIE] = "PCIe link",
	[RP_DF_DRIVER] = "driver", [RP_DF_RDMA_CORE] = "rdma-core", [RP_DF_NCCL] = "NCCL",
};

const char *rp_drift_code(void)
{
	return "drift";
}

const char *rp_drift_field_str(enum rp_drift_field f)
{
	return (unsigned)f < RP_DF_COUNT_ ? field_names[f] : "";
}

/* ---- describing a local endpoint ---- */

/* "50.0" from the file name of the libibverbs this process loaded (libibverbs.so.1.14.50.0: ABI
 * 1.14, rdma-core 50.0); "" when it cannot be told. */
static void rdma_core_release(char *out, size_t size)
{
	Dl_info info;
	char real[PATH_MAX];
	const char *base, *so;
	unsigned abi_major, abi_minor, rel_major, rel_minor;

	out[0] = '\0';
	if (!dladdr((void *)ibv_get_device_list, &info) || !info.dli_fname || !realpath(info.dli_fname, real))
		return;
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	so = strstr(base, ".so.");
	if (so && sscanf(so, ".so.%u.%u.%u.%u", &abi_major, &abi_minor, &rel_major, &rel_minor) == 4)
		snprintf(out, size, "%u.%u", rel_major, rel_minor);
}

/* "mlx5_core 24.10-1.1.4" (an out-of-tree module's version), "mlx5_core (kernel 6.8.0-45)" for an
 * in-tree one when probe_host, "mlx5_core" otherwise; virtual devices: the kernel release only. */
static void driver_text(const struct rp_node *node, const struct rp_hca *hca, bool probe_host, char *out, size_t size)
{
	char rel[RP_PATHBUF + 16], real[RP_PATHBUF], ver[48] = "", text[RP_PATHBUF + 128] = "";
	const char *drv = NULL;
	struct utsname u;
	bool have_uname = probe_host && uname(&u) == 0;

	out[0] = '\0';
	if (hca->pci_path[0]) {
		snprintf(rel, sizeof(rel), "%s/driver", hca->pci_path);
		if (rp_sysfs_realpath_rel(node->sysfs_root, rel, real, sizeof(real)) == 0) {
			drv = strrchr(real, '/');
			drv = drv ? drv + 1 : real;
		}
	}
	if (drv && rp_sysfs_readf(node->sysfs_root, ver, sizeof(ver), "module/%s/version", drv) == 0 && ver[0])
		snprintf(text, sizeof(text), "%s %s", drv, ver);
	else if (drv && have_uname)
		snprintf(text, sizeof(text), "%s (kernel %s)", drv, u.release);
	else if (drv)
		snprintf(text, sizeof(text), "%s", drv);
	else if (have_uname)
		snprintf(text, sizeof(text), "kernel %s", u.release);
	rp_strlcpy(out, text, size);
}

void rp_drift_describe(const struct rp_node *node, const struct rp_hca *hca, const struct rp_port *port,
		       const char *node_name, int gid_index, const char *nccl, bool probe_host,
		       struct rp_drift_ep *ep)
{
	struct rp_health_rate r;

	memset(ep, 0, sizeof(*ep));
	rp_strlcpy(ep->node, node_name ? node_name : "", sizeof(ep->node));
	rp_strlcpy(ep->device, hca->name, sizeof(ep->device));
	ep->port = port->num;
	rp_health_hca_model(node, hca, ep->model, sizeof(ep->model));
	rp_strlcpy(ep->value[RP_DF_FIRMWARE], hca->fw_ver, RP_DRIFT_VALUE);
	if (port->rate_gbps > 0)
		snprintf(ep->value[RP_DF_RATE], RP_DRIFT_VALUE, "%s%s%g Gb/s", port->rate_text,
			 port->rate_text[0] ? " " : "", port->rate_gbps);
	if (port->active_mtu > 0)
		snprintf(ep->value[RP_DF_MTU], RP_DRIFT_VALUE, "%d", port->active_mtu);
	if (port->link_layer != RP_LL_UNKNOWN)
		rp_strlcpy(ep->value[RP_DF_LINK_LAYER], rp_link_layer_str(port->link_layer), RP_DRIFT_VALUE);
	snprintf(ep->value[RP_DF_GID_INDEX], RP_DRIFT_VALUE, "%d", gid_index);
	rp_health_expected_rate(node, hca, port, &r);
	rp_strlcpy(ep->value[RP_DF_PCIE], r.pcie_text, RP_DRIFT_VALUE);
	driver_text(node, hca, probe_host, ep->value[RP_DF_DRIVER], RP_DRIFT_VALUE);
	if (probe_host)
		rdma_core_release(ep->value[RP_DF_RDMA_CORE], RP_DRIFT_VALUE);
	rp_strlcpy(ep->value[RP_DF_NCCL], nccl ? nccl : "", RP_DRIFT_VALUE);
}

/* ---- comparing ---- */

/* The distinct values of one field within one model group. */
struct tally {
	const char *value;
	size_t count;
};

static bool in_group(const struct rp_drift_ep *e, const char *model, enum rp_drift_field f)
{
	return strcmp(e->model, model) == 0 && e->value[f][0];
}

/* Does an earlier endpoint of the group, on the same node, count for it already? (node fields) */
static bool counted_before(const struct rp_drift_ep *eps, size_t i, const char *model, enum rp_drift_field f,
			   const char *value)
{
	if (f < RP_DF_NODE_FIRST_)
		return false;
	for (size_t k = 0; k < i; k++)
		if (in_group(&eps[k], model, f) && strcmp(eps[k].node, eps[i].node) == 0 &&
		    (!value || strcmp(eps[k].value[f], value) == 0))
			return true;
	return false;
}

/* "a (mlx5_0:1, mlx5_1:1), b (mlx5_0:1)"; node fields: "a, b". Cut with ", ..." when long. */
static void list_nodes(const struct rp_drift_ep *eps, size_t n, const char *model, enum rp_drift_field f,
		       const char *value, char *out, size_t size)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char item[RP_NAME_MAX * 2 + 16];
		bool first_port = true;
		size_t il = 0;

		if (!in_group(&eps[i], model, f) || strcmp(eps[i].value[f], value) != 0)
			continue;
		/* Each node once, at its first endpoint with the value. */
		for (size_t k = 0; k < i && first_port; k++)
			if (in_group(&eps[k], model, f) && strcmp(eps[k].node, eps[i].node) == 0 &&
			    strcmp(eps[k].value[f], value) == 0)
				first_port = false;
		if (!first_port)
			continue;
		il = (size_t)snprintf(item, sizeof(item), "%s%s", len ? ", " : "", eps[i].node);
		if (f < RP_DF_NODE_FIRST_) {
			bool open = false;

			for (size_t k = i; k < n && il < sizeof(item); k++) {
				if (!in_group(&eps[k], model, f) || strcmp(eps[k].node, eps[i].node) != 0 ||
				    strcmp(eps[k].value[f], value) != 0)
					continue;
				il += (size_t)snprintf(item + il, sizeof(item) - il, "%s%s:%d", open ? ", " : " (", eps[k].device,
						       eps[k].port);
				open = true;
			}
			if (il < sizeof(item))
				il += (size_t)snprintf(item + il, sizeof(item) - il, ")");
		}
		if (il >= sizeof(item) || len + il + 6 >= size) {
			if (len + 6 < size)
				snprintf(out + len, size - len, ", ...");
			return;
		}
		memcpy(out + len, item, il + 1);
		len += il;
	}
}

static int add_warning(struct rp_drift *d, const struct rp_drift_warning *w)
{
	struct rp_drift_warning *nw = realloc(d->warnings, (d->n_warnings + 1) * sizeof(*nw));

	if (!nw)
		return rp_error(-ENOMEM, "drift: out of memory");
	d->warnings = nw;
	nw[d->n_warnings++] = *w;
	return 0;
}

/* The warning of one odd value (majority != NULL) or one side of a split (others: the tied values). */
static void word_warning(struct rp_drift_warning *w, const char *unit, const char *tied)
{
	const char *fw = field_words[w->field];
	size_t others = w->n_known - w->n_odd;

	if (w->majority[0] && w->n_majority == others)
		snprintf(w->message, sizeof(w->message), "%s %s on %s; the other %zu %s%s of model %s have %s", fw,
			 w->value, w->nodes, others, unit, others == 1 ? "" : "s", w->model, w->majority);
	else if (w->majority[0])
		snprintf(w->message, sizeof(w->message), "%s %s on %s; %zu of the other %zu %ss of model %s have %s", fw,
			 w->value, w->nodes, w->n_majority, others, unit, w->model, w->majority);
	else
		snprintf(w->message, sizeof(w->message), "%s %s on %s; no majority among the %zu %ss of model %s (%zu each "
			 "at %s): none is taken as the reference", fw, w->value, w->nodes, w->n_known, unit, w->model,
			 w->n_majority, tied);
}

static int find_field(const struct rp_drift_ep *eps, size_t n, const char *model, enum rp_drift_field f,
		      struct tally *t, struct rp_drift *d)
{
	size_t nt = 0, known = 0, best = 0, n_best = 0;
	char tied[256] = "";
	const char *unit = f < RP_DF_NODE_FIRST_ ? "endpoint" : "node";

	for (size_t i = 0; i < n; i++) {
		size_t k;

		if (!in_group(&eps[i], model, f) || counted_before(eps, i, model, f, eps[i].value[f]))
			continue;
		for (k = 0; k < nt && strcmp(t[k].value, eps[i].value[f]) != 0; k++)
			;
		if (k == nt)
			t[nt++] = (struct tally){ eps[i].value[f], 0 };
		t[k].count++;
		known++;
	}
	if (nt < 2)
		return 0;
	for (size_t k = 0; k < nt; k++)
		best = t[k].count > best ? t[k].count : best;
	for (size_t k = 0; k < nt; k++) {
		if (t[k].count != best)
			continue;
		n_best++;
		snprintf(tied + strlen(tied), sizeof(tied) - strlen(tied), "%s%s", tied[0] ? " and " : "", t[k].value);
	}
	for (size_t k = 0; k < nt; k++) {
		struct rp_drift_warning w;
		const char *majority = NULL;

		if (n_best == 1 && t[k].count == best)
			continue;
		for (size_t m = 0; n_best == 1 && m < nt; m++)
			if (t[m].count == best)
				majority = t[m].value;
		memset(&w, 0, sizeof(w));
		w.field = f;
		rp_strlcpy(w.model, model, sizeof(w.model));
		rp_strlcpy(w.value, t[k].value, sizeof(w.value));
		rp_strlcpy(w.majority, majority ? majority : "", sizeof(w.majority));
		w.n_odd = t[k].count;
		w.n_majority = best;
		w.n_known = known;
		list_nodes(eps, n, model, f, t[k].value, w.nodes, sizeof(w.nodes));
		word_warning(&w, unit, tied);
		if (add_warning(d, &w))
			return -ENOMEM;
	}
	return 0;
}

int rp_drift_find(const struct rp_drift_ep *eps, size_t n, struct rp_drift *d)
{
	struct tally *t;
	int rc = 0;

	memset(d, 0, sizeof(*d));
	if (n == 0)
		return 0;
	t = calloc(n, sizeof(*t));
	if (!t)
		return rp_error(-ENOMEM, "drift: out of memory");
	for (size_t i = 0; i < n && !rc; i++) {
		bool seen = false;

		/* Each model once, at its first endpoint. */
		for (size_t k = 0; k < i && !seen; k++)
			seen = strcmp(eps[k].model, eps[i].model) == 0;
		for (int f = 0; !seen && f < RP_DF_COUNT_ && !rc; f++)
			rc = find_field(eps, n, eps[i].model, (enum rp_drift_field)f, t, d);
	}
	free(t);
	return rc;
}

void rp_drift_fini(struct rp_drift *d)
{
	if (!d)
		return;
	free(d->warnings);
	d->warnings = NULL;
	d->n_warnings = 0;
}
