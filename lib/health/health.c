/* health.c: the static checks' item list, the port checks (link_degraded, port_down, port_no_sm)
 * and the expected rate of each adapter port; PCIe, ACS and GPUDirect are in health_pci.c. */
#include "health/health.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/health_int.h"
#include "base/log.h"
#include "discover/pcie.h"
#include "discover/sysfs.h"
#include "base/util.h"

static const char *const code_names[RP_HC_COUNT_] = {
	[RP_HC_LINK_DEGRADED] = "link_degraded",
	[RP_HC_PORT_DOWN] = "port_down",
	[RP_HC_PORT_NO_SM] = "port_no_sm",
	[RP_HC_PCIE_DEGRADED] = "pcie_degraded",
	[RP_HC_PCIE_BOTTLENECK] = "pcie_bottleneck",
	[RP_HC_ACS_REDIRECT] = "acs_redirect",
	[RP_HC_IOMMU_TRANSLATED] = "iommu_translated",
	[RP_HC_GPUDIRECT_UNAVAILABLE] = "gpudirect_unavailable",
	[RP_HC_MTU_MISMATCH] = "mtu_mismatch",
	[RP_HC_ACS_UNREADABLE] = "acs_unreadable",
	[RP_HC_GPU_LINK_IDLE] = "gpu_link_idle",
	[RP_HC_GPUDIRECT_UNKNOWN] = "gpudirect_unknown",
};

const char *rp_health_code_str(enum rp_health_code c)
{
	return (unsigned)c < RP_HC_COUNT_ ? code_names[c] : "";
}

bool rp_health_code_is_note(enum rp_health_code c)
{
	return c >= RP_HC_NOTE_FIRST_ && c < RP_HC_COUNT_;
}

int rp_health_add(struct rp_health *h, enum rp_health_code code, const char *device, const char *fmt, ...)
{
	struct rp_health_item *items = realloc(h->items, (h->n_items + 1) * sizeof(*items));
	struct rp_health_item *it;
	va_list ap;

	if (!items)
		return rp_error(-ENOMEM, "health check: out of memory");
	h->items = items;
	it = &items[h->n_items++];
	memset(it, 0, sizeof(*it));
	it->code = code;
	rp_strlcpy(it->device, device ? device : "", sizeof(it->device));
	va_start(ap, fmt);
	vsnprintf(it->message, sizeof(it->message), fmt, ap);
	va_end(ap);
	return 0;
}

size_t rp_health_count(const struct rp_health *h, enum rp_health_code c)
{
	size_t n = 0;

	for (size_t i = 0; i < h->n_items; i++)
		n += h->items[i].code == c;
	return n;
}

bool rp_health_clean(const struct rp_health *h)
{
	for (size_t i = 0; i < h->n_items; i++)
		if (!rp_health_code_is_note(h->items[i].code))
			return false;
	return true;
}

void rp_health_fini(struct rp_health *h)
{
	if (!h)
		return;
	free(h->items);
	free(h->rates);
	h->items = NULL;
	h->rates = NULL;
	h->n_items = h->n_rates = 0;
}

/* ---- ports ---- */

void rp_health_hca_model(const struct rp_node *node, const struct rp_hca *hca, char *out, size_t size)
{
	char v[16], d[16];
	size_t n = 0;

	if (hca->pci[0] && rp_sysfs_readf(node->sysfs_root, v, sizeof(v), "%s/vendor", hca->pci_path) == 0 &&
	    rp_sysfs_readf(node->sysfs_root, d, sizeof(d), "%s/device", hca->pci_path) == 0) {
		snprintf(out, size, "pci %s:%s", v, d);
		return;
	}
	while (hca->name[n] && !(hca->name[n] >= '0' && hca->name[n] <= '9') && n + 1 < size)
		n++;
	snprintf(out, size, "%.*s", (int)n, hca->name);
}

/* "4X HDR 200 Gb/s" (the rate text may be missing). */
static void rate_words(const struct rp_port *p, char *out, size_t size)
{
	snprintf(out, size, "%s%s%g Gb/s", p->rate_text, p->rate_text[0] ? " " : "", p->rate_gbps);
}

static bool port_usable(const struct rp_port *p)
{
	return p->state == RP_PORT_ACTIVE && p->rate_gbps > 0;
}

/* One port of model/link layer against the best port of the same group. */
static int check_port_rate(const struct rp_node *node, const struct rp_hca *hca, const struct rp_port *port,
			   const char *model, struct rp_health *h)
{
	const struct rp_port *best = NULL;
	size_t others = 0, at_best = 0;
	char m[64], dev[RP_NAME_MAX + 8], mine[80], theirs[80];

	for (size_t i = 0; i < node->n_hcas; i++) {
		const struct rp_hca *o = &node->hcas[i];

		rp_health_hca_model(node, o, m, sizeof(m));
		if (strcmp(m, model) != 0)
			continue;
		for (size_t p = 0; p < o->n_ports; p++) {
			const struct rp_port *op = &o->ports[p];

			if (op == port || !port_usable(op) || op->link_layer != port->link_layer)
				continue;
			others++;
			if (!best || op->rate_gbps > best->rate_gbps)
				best = op;
		}
	}
	if (!best || best->rate_gbps <= port->rate_gbps)
		return 0;
	for (size_t i = 0; i < node->n_hcas; i++) {
		rp_health_hca_model(node, &node->hcas[i], m, sizeof(m));
		for (size_t p = 0; strcmp(m, model) == 0 && p < node->hcas[i].n_ports; p++) {
			const struct rp_port *op = &node->hcas[i].ports[p];

			at_best += op != port && port_usable(op) && op->link_layer == port->link_layer &&
				   op->rate_gbps == best->rate_gbps;
		}
	}
	snprintf(dev, sizeof(dev), "%s:%d", hca->name, port->num);
	rate_words(port, mine, sizeof(mine));
	rate_words(best, theirs, sizeof(theirs));
	if (at_best == others)
		return rp_health_add(h, RP_HC_LINK_DEGRADED, dev, "%s at %s, the other %zu port%s at %s", dev, mine,
				     others, others == 1 ? "" : "s", theirs);
	return rp_health_add(h, RP_HC_LINK_DEGRADED, dev, "%s at %s, %zu of the other %zu ports at %s", dev, mine,
			     at_best, others, theirs);
}

/* The likely cause of a physical state other than LinkUp. */
static const char *phys_cause(int phys)
{
	switch (phys) {
	case 1:
		return "the port is asleep (Sleep): the far end is absent or powered down";
	case 2:
		return "no link partner (Polling): no cable, a bad cable or transceiver, or the switch port is down";
	case 3:
		return "the port is disabled (Disabled): by an administrator (ibportstate, ip link) or the subnet manager";
	case 4:
		return "the link is training (PortConfigurationTraining): stuck there, the cable or the far end's speed does not match";
	case 6:
		return "the link is recovering from errors (LinkErrorRecovery): a bad cable or transceiver";
	case 7:
		return "the port is in a physical test mode (Phy Test)";
	default:
		return "its physical state is unknown";
	}
}

static int check_port_state(const struct rp_hca *hca, const struct rp_port *p, struct rp_health *h)
{
	char dev[RP_NAME_MAX + 8];

	snprintf(dev, sizeof(dev), "%s:%d", hca->name, p->num);
	if (p->phys_state > 0 && p->phys_state != 5)
		return rp_health_add(h, RP_HC_PORT_DOWN, dev, "%s is %s: %s", dev,
				     p->state >= 0 ? rp_port_state_str(p->state) : "in an unknown state",
				     phys_cause(p->phys_state));
	if (p->phys_state == 5 && (p->state == RP_PORT_INIT || p->state == RP_PORT_ARMED))
		return rp_health_add(h, RP_HC_PORT_NO_SM, dev,
				     "%s is %s with the physical link up: no subnet manager has configured it "
				     "(start opensm, or check the fabric's SM and the port's partition)", dev,
				     rp_port_state_str(p->state));
	if (p->phys_state == 5 && p->state == RP_PORT_DOWN)
		return rp_health_add(h, RP_HC_PORT_DOWN, dev, "%s is DOWN with the physical link up: the driver or "
				     "the far end is resetting the port", dev);
	/* DOWN is unhealthy whatever the physical state says: missing, NOP (0) or unparseable. */
	if (p->state == RP_PORT_DOWN)
		return rp_health_add(h, RP_HC_PORT_DOWN, dev, "%s is DOWN and its physical state is %s: the port "
				     "carries no traffic", dev, p->phys_state == 0 ? "NOP (no state reported)" :
				     "unknown (phys_state missing or unreadable)");
	return 0;
}

static int check_ports(const struct rp_node *node, struct rp_health *h)
{
	int rc = 0;

	for (size_t i = 0; i < node->n_hcas && !rc; i++) {
		const struct rp_hca *hca = &node->hcas[i];
		char model[64];

		rp_health_hca_model(node, hca, model, sizeof(model));
		for (size_t p = 0; p < hca->n_ports && !rc; p++) {
			rc = check_port_state(hca, &hca->ports[p], h);
			if (!rc && port_usable(&hca->ports[p]))
				rc = check_port_rate(node, hca, &hca->ports[p], model, h);
		}
	}
	return rc;
}

/* ---- MTU ---- */

/* How many ACTIVE ports of link layer ll on the node run active MTU mtu. */
static size_t ports_at_mtu(const struct rp_node *node, enum rp_link_layer ll, int mtu)
{
	size_t n = 0;

	for (size_t i = 0; i < node->n_hcas; i++)
		for (size_t p = 0; p < node->hcas[i].n_ports; p++) {
			const struct rp_port *op = &node->hcas[i].ports[p];

			n += op->state == RP_PORT_ACTIVE && op->link_layer == ll && op->active_mtu == mtu;
		}
	return n;
}

/* The MTU most ACTIVE ports of ll run; a tie goes to the larger MTU (see health.h). 0: none known. */
static int majority_mtu(const struct rp_node *node, enum rp_link_layer ll)
{
	size_t best_n = 0;
	int best = 0;

	for (int mtu = 256; mtu <= 4096; mtu *= 2) {
		size_t n = ports_at_mtu(node, ll, mtu);

		if (n && n >= best_n) {
			best_n = n;
			best = mtu;
		}
	}
	return best;
}

static int check_mtu(const struct rp_node *node, struct rp_health *h)
{
	for (size_t i = 0; i < node->n_hcas; i++) {
		for (size_t p = 0; p < node->hcas[i].n_ports; p++) {
			const struct rp_port *port = &node->hcas[i].ports[p];
			char dev[RP_NAME_MAX + 8], theirs[64];
			size_t others, at_ref;
			int ref;

			if (port->state != RP_PORT_ACTIVE || port->active_mtu <= 0)
				continue;
			ref = majority_mtu(node, port->link_layer);
			if (ref == port->active_mtu)
				continue;
			at_ref = ports_at_mtu(node, port->link_layer, ref);
			others = 0;
			for (int mtu = 256; mtu <= 4096; mtu *= 2)
				others += ports_at_mtu(node, port->link_layer, mtu);
			others--;
			snprintf(dev, sizeof(dev), "%s:%d", node->hcas[i].name, port->num);
			if (at_ref == others)
				snprintf(theirs, sizeof(theirs), "the other %zu port%s at %d", others, others == 1 ? "" : "s", ref);
			else
				snprintf(theirs, sizeof(theirs), "%zu of the other %zu ports at %d", at_ref, others, ref);
			if (rp_health_add(h, RP_HC_MTU_MISMATCH, dev, "%s at active MTU %d, %s: a pair with it runs at %d", dev,
					  port->active_mtu, theirs, port->active_mtu < ref ? port->active_mtu : ref))
				return -ENOMEM;
		}
	}
	return 0;
}

/* ---- expected rates ---- */

void rp_health_expected_rate(const struct rp_node *node, const struct rp_hca *hca, const struct rp_port *port,
			     struct rp_health_rate *r)
{
	struct rp_pci_hop hops[RP_PCIE_MAX_HOPS];
	size_t n = 0;

	memset(r, 0, sizeof(*r));
	rp_strlcpy(r->device, hca->name, sizeof(r->device));
	r->port = port->num;
	r->port_gbps = port->rate_gbps;
	if (hca->pci[0] && rp_pcie_chain(node->sysfs_root, hca->pci_path, hops, RP_PCIE_MAX_HOPS, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			struct rp_pcie_hop_link l;
			double g;

			if (!rp_pcie_hop_link(hops, n, i, &l))
				continue;
			g = rp_pcie_link_gbps(l.cur_gts, l.cur_width);
			if (g > 0 && (r->pcie_gbps == 0 || g < r->pcie_gbps)) {
				r->pcie_gbps = g;
				rp_pcie_link_text(l.cur_gts, l.cur_width, r->pcie_text, sizeof(r->pcie_text));
				rp_strlcpy(r->pcie_at, l.child->link_bdf, sizeof(r->pcie_at));
			}
		}
	}
	if (r->pcie_gbps > 0 && (r->port_gbps == 0 || r->pcie_gbps < r->port_gbps)) {
		r->limit = RP_LIMIT_PCIE;
		r->expected_gbps = r->pcie_gbps;
		snprintf(r->message, sizeof(r->message), "expected %.0f Gb/s: PCIe %s%s%s limits the %g Gb/s port",
			 r->pcie_gbps, r->pcie_text, strcmp(r->pcie_at, hca->pci) ? " at " : "",
			 strcmp(r->pcie_at, hca->pci) ? r->pcie_at : "", r->port_gbps);
	} else if (r->port_gbps > 0) {
		r->limit = RP_LIMIT_PORT;
		r->expected_gbps = r->port_gbps;
		if (r->pcie_gbps > 0)
			snprintf(r->message, sizeof(r->message), "expected %g Gb/s: the port limits (PCIe %s: %.0f Gb/s)",
				 r->port_gbps, r->pcie_text, r->pcie_gbps);
		else
			snprintf(r->message, sizeof(r->message), "expected %g Gb/s: the port rate (%s)", r->port_gbps,
				 hca->pci[0] ? "PCIe link unknown" : "not on PCI");
	} else {
		r->limit = RP_LIMIT_UNKNOWN;
		snprintf(r->message, sizeof(r->message), "expected rate unknown: no port rate%s",
			 r->pcie_gbps > 0 ? "" : " and no PCIe link");
	}
}

static int check_rates(const struct rp_node *node, struct rp_health *h)
{
	for (size_t i = 0; i < node->n_hcas; i++) {
		const struct rp_hca *hca = &node->hcas[i];

		for (size_t p = 0; p < hca->n_ports; p++) {
			struct rp_health_rate *nr;
			char dev[RP_NAME_MAX + 8];

			if (!port_usable(&hca->ports[p]))
				continue;
			nr = realloc(h->rates, (h->n_rates + 1) * sizeof(*nr));
			if (!nr)
				return rp_error(-ENOMEM, "health check: out of memory");
			h->rates = nr;
			rp_health_expected_rate(node, hca, &hca->ports[p], &nr[h->n_rates]);
			if (nr[h->n_rates].limit != RP_LIMIT_PCIE) {
				h->n_rates++;
				continue;
			}
			snprintf(dev, sizeof(dev), "%s:%d", hca->name, hca->ports[p].num);
			if (rp_health_add(h, RP_HC_PCIE_BOTTLENECK, dev, "%s: %s", dev, nr[h->n_rates].message))
				return -ENOMEM;
			h->n_rates++;
		}
	}
	return 0;
}

int rp_health_check(const struct rp_node *node, const struct rp_health_opts *opts, struct rp_health *h)
{
	static const struct rp_health_opts none = { NULL, RP_TRI_UNKNOWN, false, NULL };
	int rc;

	memset(h, 0, sizeof(*h));
	if (!opts)
		opts = &none;
	rc = check_ports(node, h);
	rc = rc ? rc : check_mtu(node, h);
	rc = rc ? rc : rp_health_check_pcie(node, h);
	rc = rc ? rc : check_rates(node, h);
	rc = rc ? rc : rp_health_check_acs(node, opts->merge ? opts->merge : &rp_topo_merge_newest, h);
	rc = rc ? rc : rp_health_check_gdr(node, opts, h);
	return rc;
}

/* ---- the part that concerns some ports ---- */

/* Does item it concern port (hca, port)? */
static bool item_concerns(const struct rp_node *node, const struct rp_health_item *it, const struct rp_hca *hca,
			  int port)
{
	struct rp_pci_hop hops[RP_PCIE_MAX_HOPS];
	char dev[RP_NAME_MAX + 8];
	size_t n = 0;

	if (!it->device[0])
		return true;
	snprintf(dev, sizeof(dev), "%s:%d", hca->name, port);
	if (strcmp(it->device, dev) == 0 || it->code == RP_HC_ACS_REDIRECT)
		return true;
	if (!hca->pci[0] || rp_pcie_chain(node->sysfs_root, hca->pci_path, hops, RP_PCIE_MAX_HOPS, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(it->device, hops[i].bdf) == 0 || strcmp(it->device, hops[i].link_bdf) == 0)
			return true;
	return false;
}

int rp_health_for_ports(const struct rp_node *node, const struct rp_health *all, const struct rp_health_port_ref *ports,
			size_t n, struct rp_health *out)
{
	memset(out, 0, sizeof(*out));
	out->gdr = all->gdr;
	for (size_t i = 0; i < all->n_items; i++) {
		bool keep = false;

		for (size_t k = 0; k < n && !keep; k++) {
			const struct rp_hca *hca = rp_node_find_hca(node, ports[k].hca);

			keep = hca && item_concerns(node, &all->items[i], hca, ports[k].port);
		}
		if (keep && rp_health_add(out, all->items[i].code, all->items[i].device, "%s", all->items[i].message))
			return -ENOMEM;
	}
	for (size_t i = 0; i < all->n_rates; i++) {
		bool keep = false;

		for (size_t k = 0; k < n && !keep; k++)
			keep = strcmp(all->rates[i].device, ports[k].hca) == 0 && all->rates[i].port == ports[k].port;
		if (keep) {
			struct rp_health_rate *nr = realloc(out->rates, (out->n_rates + 1) * sizeof(*nr));

			if (!nr)
				return rp_error(-ENOMEM, "health check: out of memory");
			out->rates = nr;
			nr[out->n_rates++] = all->rates[i];
		}
	}
	return 0;
}
