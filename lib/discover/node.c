/* node.c: discovery of the node's adapters, ports and GIDs, then its GPUs (node_gpus.c); see node.h.
 *
 * The real /sys: ibv_get_device_list() decides which adapters are usable; sysfs fills in the rest
 * (rate text, PCI address, NUMA node, firmware); ibv_query_port() overrides the port state, LIDs and
 * link layer and adds the active MTU when verbs answers, and the GID tables come from one
 * ibv_query_gid_table() per device (node_gids.h; sysfs when verbs cannot answer). Every
 * class/infiniband entry verbs does not list is kept with in_verbs FALSE and the likely reason.
 * A fixture root: sysfs only, in_verbs UNKNOWN, verbs_consulted false.
 */
#include "discover/node.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "discover/gpu.h"
#include "base/log.h"
#include "discover/node_gids.h"
#include "discover/sysfs.h"
#include "base/util.h"

#define GID_INDEX_MAX 4096   /* more entries than any driver has; guards a hostile tree */
#define PORT_NUM_MAX 255

/* ---- names for the reports ---- */

const char *rp_port_state_str(int state)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER" };

	return state >= 0 && state < (int)RP_ARRAY_SIZE(names) ? names[state] : "UNKNOWN";
}

const char *rp_phys_state_str(int phys_state)
{
	static const char *const names[] = {
		"UNKNOWN", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
		"LinkErrorRecovery", "Phy Test",
	};

	return phys_state >= 0 && phys_state < (int)RP_ARRAY_SIZE(names) ? names[phys_state] : "UNKNOWN";
}

const char *rp_link_layer_str(enum rp_link_layer ll)
{
	switch (ll) {
	case RP_LL_INFINIBAND:
		return "InfiniBand";
	case RP_LL_ETHERNET:
		return "Ethernet";
	default:
		return "Unknown";
	}
}

const char *rp_gid_type_str(enum rp_gid_type t)
{
	switch (t) {
	case RP_GID_TYPE_IB_ROCE_V1:
		return "IB/RoCE v1";
	case RP_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	case RP_GID_TYPE_NONE:
		return "";
	default:
		return "unknown";
	}
}

/* ---- lookups ---- */

const struct rp_hca *rp_node_find_hca(const struct rp_node *node, const char *name)
{
	for (size_t i = 0; node && name && i < node->n_hcas; i++)
		if (strcmp(node->hcas[i].name, name) == 0)
			return &node->hcas[i];
	return NULL;
}

const struct rp_port *rp_hca_find_port(const struct rp_hca *hca, int port_num)
{
	for (size_t i = 0; hca && i < hca->n_ports; i++)
		if (hca->ports[i].num == port_num)
			return &hca->ports[i];
	return NULL;
}

/* ---- teardown ---- */

static void hca_fini(struct rp_hca *hca)
{
	for (size_t p = 0; p < hca->n_ports; p++)
		free(hca->ports[p].gids);
	free(hca->ports);
	hca->ports = NULL;
	hca->n_ports = 0;
}

void rp_node_fini(struct rp_node *node)
{
	if (!node)
		return;
	for (size_t i = 0; i < node->n_hcas; i++)
		hca_fini(&node->hcas[i]);
	free(node->hcas);
	node->hcas = NULL;
	node->n_hcas = 0;
	free(node->gpus);
	node->gpus = NULL;
	node->n_gpus = 0;
}

/* ---- sysfs helpers ---- */

/* Read one attribute of a device; a missing file is silent (many are optional), any other failure
 * is a warning naming the file. Returns the reader's code. */
static int attr_read(const char *root, char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int attr_read(const char *root, char *buf, size_t size, const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	rc = rp_sysfs_read(root, rel, buf, size);
	if (rc && rc != -ENOENT)
		rp_warn("read %s/%s: %s", root, rel, strerror(-rc));
	return rc;
}

static void warn_malformed(const char *root, const char *hca, int port, const char *file, const char *text)
{
	if (port > 0)
		rp_warn("%s port %d: malformed %s '%.64s' in %s/class/infiniband/%s/ports/%d/%s, ignored", hca,
			port, file, text, root, hca, port, file);
	else
		rp_warn("%s: malformed %s '%.64s' in %s/class/infiniband/%s/%s, ignored", hca, file, text, root,
			hca, file);
}

/* Natural order: mlx5_2 before mlx5_10. */
static int name_natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *ea = a, *eb = b;

			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			for (ea = a; isdigit((unsigned char)*ea); ea++)
				;
			for (eb = b; isdigit((unsigned char)*eb); eb++)
				;
			if (ea - a != eb - b)
				return ea - a < eb - b ? -1 : 1;
			for (; a < ea; a++, b++)
				if (*a != *b)
					return *a < *b ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

static int hca_cmp(const void *x, const void *y)
{
	return name_natural_cmp(((const struct rp_hca *)x)->name, ((const struct rp_hca *)y)->name);
}

/* ---- ports and GIDs from sysfs ---- */

/* The GID table of one port: gids[i].index == i; missing or unreadable entries are empty. */
static int port_read_gids(const char *root, const char *hca, struct rp_port *port)
{
	char rel[PATH_MAX], buf[128];
	char **names = NULL;
	size_t n = 0;
	int max_index = -1, rc;
	enum rp_gid_type_read empty_read;

	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%d/gids", hca, port->num);
	rc = rp_sysfs_list_dir(root, rel, &names, &n);
	if (rc)
		return rc == -ENOMEM ? rp_error(rc, "list %s/%s: out of memory", root, rel) : 0;
	for (size_t i = 0; i < n; i++) {
		int idx;

		if (rp_parse_int(names[i], 0, GID_INDEX_MAX - 1, &idx)) {
			rp_warn("%s port %d: unexpected GID entry '%.64s', ignored", hca, port->num, names[i]);
			continue;
		}
		if (idx > max_index)
			max_index = idx;
	}
	rp_sysfs_free_names(names);
	if (max_index < 0)
		return 0;
	port->gids = calloc((size_t)max_index + 1, sizeof(*port->gids));
	if (!port->gids)
		return rp_error(-ENOMEM, "allocate the GID table of %s port %d: out of memory", hca, port->num);
	port->n_gids = (size_t)max_index + 1;
	empty_read = rp_gid_empty_type_read(root, hca, port->num);
	for (int i = 0; i <= max_index; i++) {
		struct rp_gid *g = &port->gids[i];

		g->index = i;
		g->type = RP_GID_TYPE_NONE;
		rp_sysfs_gid_to_text(g->raw, g->text);
		g->type_read = empty_read;
		if (attr_read(root, buf, sizeof(buf), "%s/%d", rel, i))
			continue;
		if (rp_sysfs_parse_gid(buf, g->raw)) {
			char file[32];

			snprintf(file, sizeof(file), "gids/%d", i);
			warn_malformed(root, hca, port->num, file, buf);
			continue;
		}
		rp_sysfs_gid_to_text(g->raw, g->text);
		if (rp_sysfs_gid_is_zero(g->raw))
			continue;
		/* A valid entry: its type and netdev (reads of empty entries fail with EINVAL). */
		g->type_read = rp_gid_read_type(root, hca, port->num, i, &g->type);
		if (rp_sysfs_readf(root, buf, sizeof(buf), "class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", hca,
				   port->num, i) == 0 && buf[0])
			if (rp_sysfs_parse_ndev(buf, g->ndev, sizeof(g->ndev)))
				g->ndev[0] = '\0';
	}
	return 0;
}

/* A RoCE port's active MTU as the drivers derive it from the netdev MTU when verbs does not answer
 * (a fixture root, a device verbs does not list): the largest IB MTU that fits in the netdev MTU
 * less the RoCE headers (GRH, UDP, BTH, the largest extended header, ICRC: 96 bytes, as the
 * kernel's iboe_get_mtu() counts them; rxe counts 80, which gives the same IB MTU for every
 * common netdev MTU). The first GID with a netdev names it. Verbs' answer replaces this. */
static void port_mtu_from_netdev(const char *root, struct rp_port *port)
{
	char buf[32];
	int mtu;

	if (port->link_layer != RP_LL_ETHERNET)
		return;
	for (size_t i = 0; i < port->n_gids; i++) {
		if (!port->gids[i].ndev[0])
			continue;
		if (attr_read(root, buf, sizeof(buf), "class/net/%s/mtu", port->gids[i].ndev) != 0 ||
		    rp_parse_int(buf, 68, 1 << 20, &mtu))
			return;
		mtu -= 96;
		for (int ib = 4096; ib >= 256; ib /= 2) {
			if (mtu >= ib) {
				port->active_mtu = ib;
				return;
			}
		}
		return;
	}
}

/* Fill one port from ports/<num>/ files. */
/* gids: read the GID table from sysfs too (not for a device verbs lists: hca_query_verbs reads it). */
static int port_read_sysfs(const char *root, const char *hca, struct rp_port *port, bool gids)
{
	char buf[128];
	int rc;

	port->state = -1;
	port->phys_state = -1;
	if (attr_read(root, buf, sizeof(buf), "class/infiniband/%s/ports/%d/state", hca, port->num) == 0 &&
	    rp_sysfs_parse_state(buf, &port->state))
		warn_malformed(root, hca, port->num, "state", buf);
	if (attr_read(root, buf, sizeof(buf), "class/infiniband/%s/ports/%d/phys_state", hca, port->num) == 0 &&
	    rp_sysfs_parse_phys_state(buf, &port->phys_state))
		warn_malformed(root, hca, port->num, "phys_state", buf);
	if (attr_read(root, buf, sizeof(buf), "class/infiniband/%s/ports/%d/rate", hca, port->num) == 0 &&
	    rp_sysfs_parse_rate(buf, &port->rate_gbps, port->rate_text, sizeof(port->rate_text))) {
		warn_malformed(root, hca, port->num, "rate", buf);
		port->rate_gbps = 0;
		port->rate_text[0] = '\0';
	}
	if (attr_read(root, buf, sizeof(buf), "class/infiniband/%s/ports/%d/link_layer", hca, port->num) == 0 &&
	    rp_sysfs_parse_link_layer(buf, &port->link_layer))
		warn_malformed(root, hca, port->num, "link_layer", buf);
	if (attr_read(root, buf, sizeof(buf), "class/infiniband/%s/ports/%d/lid", hca, port->num) == 0 &&
	    rp_sysfs_parse_lid(buf, &port->lid))
		warn_malformed(root, hca, port->num, "lid", buf);
	if (attr_read(root, buf, sizeof(buf), "class/infiniband/%s/ports/%d/sm_lid", hca, port->num) == 0 &&
	    rp_sysfs_parse_lid(buf, &port->sm_lid))
		warn_malformed(root, hca, port->num, "sm_lid", buf);
	if (!gids)
		return 0;
	rc = port_read_gids(root, hca, port);
	if (!rc)
		port_mtu_from_netdev(root, port);
	return rc;
}

/* Ports listed under class/infiniband/<hca>/ports. */
static int hca_read_ports(const char *root, struct rp_hca *hca, bool gids)
{
	char rel[PATH_MAX];
	char **names = NULL;
	size_t n = 0;
	int rc;

	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports", hca->name);
	rc = rp_sysfs_list_dir(root, rel, &names, &n);
	if (rc == -ENOMEM)
		return rp_error(rc, "list %s/%s: out of memory", root, rel);
	if (rc) {
		if (rc != -ENOENT)
			rp_warn("list %s/%s: %s", root, rel, strerror(-rc));
		return 0;
	}
	hca->ports = n ? calloc(n, sizeof(*hca->ports)) : NULL;
	if (n && !hca->ports) {
		rp_sysfs_free_names(names);
		return rp_error(-ENOMEM, "allocate the ports of %s: out of memory", hca->name);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct rp_port *port = &hca->ports[hca->n_ports];

		if (rp_parse_int(names[i], 1, PORT_NUM_MAX, &port->num)) {
			rp_warn("%s: unexpected port entry '%.64s', ignored", hca->name, names[i]);
			continue;
		}
		hca->n_ports++;
		rc = port_read_sysfs(root, hca->name, port, gids);
	}
	rp_sysfs_free_names(names);
	return rc;
}

/* True when root/<rel>/subsystem resolves to .../bus/pci: NCCL's test that a device is on PCI. */
static bool is_pci_device(const char *root, const char *rel)
{
	char sub[PATH_MAX], out[PATH_MAX];
	size_t n;

	if (snprintf(sub, sizeof(sub), "%s/subsystem", rel) >= (int)sizeof(sub))
		return false;
	if (rp_sysfs_realpath_rel(root, sub, out, sizeof(out)))
		return false;
	n = strlen(out);
	return n >= 7 && strcmp(out + n - 7, "bus/pci") == 0 && (n == 7 || out[n - 8] == '/');
}

/* Device attributes: firmware, GUID, node type, PCI address and path, NUMA node. */
static void hca_read_attrs(const char *root, struct rp_hca *hca)
{
	char buf[256], rel[PATH_MAX], real[RP_PATHBUF];
	const char *last;
	uint64_t guid;
	int rc;

	hca->numa_node = -1;
	hca->node_type = -1;
	if (attr_read(root, buf, sizeof(buf), "class/infiniband/%s/fw_ver", hca->name) == 0 && buf[0] &&
	    rp_sysfs_parse_fw_ver(buf, hca->fw_ver, sizeof(hca->fw_ver)))
		warn_malformed(root, hca->name, 0, "fw_ver", buf);
	if (attr_read(root, buf, sizeof(buf), "class/infiniband/%s/node_guid", hca->name) == 0 &&
	    rp_sysfs_parse_node_guid(buf, &guid, hca->node_guid))
		warn_malformed(root, hca->name, 0, "node_guid", buf);
	if (attr_read(root, buf, sizeof(buf), "class/infiniband/%s/node_type", hca->name) == 0 &&
	    rp_sysfs_parse_node_type(buf, &hca->node_type))
		warn_malformed(root, hca->name, 0, "node_type", buf);

	snprintf(rel, sizeof(rel), "class/infiniband/%s/device", hca->name);
	rc = rp_sysfs_realpath_rel(root, rel, real, sizeof(real));
	if (rc == -EXDEV) {
		rp_warn("%s: device link %s/%s leads outside the root, ignored", hca->name, root, rel);
		return;
	}
	if (rc) {
		struct stat st;
		char abs[PATH_MAX];

		/* No link is normal (rxe, siw); a link that exists but leads nowhere is worth saying. */
		if (rc != -ENOENT)
			rp_warn("%s: resolve %s/%s: %s", hca->name, root, rel, strerror(-rc));
		else if (rp_sysfs_join(root, rel, abs, sizeof(abs)) == 0 && lstat(abs, &st) == 0)
			rp_warn("%s: device link %s is dangling", hca->name, abs);
		return;
	}
	rp_strlcpy(hca->pci_path, real, sizeof(hca->pci_path));
	last = strrchr(real, '/');
	last = last ? last + 1 : real;
	if (is_pci_device(root, real) && rp_sysfs_parse_pci(last, hca->pci) != 0)
		hca->pci[0] = '\0';
	if (attr_read(root, buf, sizeof(buf), "%s/numa_node", real) == 0 &&
	    rp_sysfs_parse_numa(buf, &hca->numa_node))
		warn_malformed(root, hca->name, 0, "device/numa_node", buf);
}

/* ---- verbs ---- */

static int mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : 0;
}

/* The one rate table of the project: verbs' width and speed codes to the DATA rate (what sysfs and
 * `ibstat` show: 4X EDR is 100 Gb/s, not the 103.125 Gb/s signalling rate). The engine uses it for
 * the pair's link_gbps, devices for a port whose sysfs rate is missing. */
double rp_port_data_rate(int width_code, int speed_code, char *text, size_t text_len)
{
	static const struct { int code; int x; } widths[] = { { 1, 1 }, { 2, 4 }, { 4, 8 }, { 8, 12 }, { 16, 2 } };
	static const struct { int code; double gbps; const char *name; } speeds[] = {
		{ 1, 2.5, "SDR" }, { 2, 5, "DDR" }, { 4, 10, "QDR" }, { 8, 10, "FDR10" }, { 16, 14, "FDR" },
		{ 32, 25, "EDR" }, { 64, 50, "HDR" }, { 128, 100, "NDR" }, { 256, 200, "XDR" },
	};
	int x = 0;

	if (text && text_len)
		text[0] = '\0';
	for (size_t i = 0; i < RP_ARRAY_SIZE(widths); i++)
		if (widths[i].code == width_code)
			x = widths[i].x;
	for (size_t i = 0; x && i < RP_ARRAY_SIZE(speeds); i++) {
		if (speeds[i].code == speed_code) {
			if (text && text_len)
				snprintf(text, text_len, "%dX %s", x, speeds[i].name);
			return x * speeds[i].gbps;
		}
	}
	return 0;
}

/* Rate from verbs' width and speed codes, for a port whose sysfs rate is missing. */
static void rate_from_verbs(const struct ibv_port_attr *pa, struct rp_port *port)
{
	port->rate_gbps = rp_port_data_rate(pa->active_width, pa->active_speed, port->rate_text,
					    sizeof(port->rate_text));
}

/* The GID tables of every port in one ibv_query_gid_table() call (tbl_len[p - 1]: port p's length);
 * a port verbs gave no answer for, or a device that cannot answer (a kernel without the ioctl),
 * reads its table from sysfs instead. 0 or -ENOMEM. */
static int hca_read_gids(const char *root, struct ibv_context *ctx, struct rp_hca *hca, const size_t *tbl_len,
			 int n_ports)
{
	struct ibv_gid_entry *entries = NULL;
	size_t total = 0;
	ssize_t n = -1;
	int rc = 0;

	for (int p = 0; p < n_ports; p++)
		total += tbl_len[p];
	if (total) {
		entries = calloc(total, sizeof(*entries));
		if (!entries)
			return rp_error(-ENOMEM, "allocate the GID tables of %s: out of memory", hca->name);
		n = ibv_query_gid_table(ctx, entries, total, 0);
		if (n < 0)
			rp_debug("%s: ibv_query_gid_table: %s; reading the GID tables from sysfs", hca->name,
				 strerror((int)-n));
	}
	for (size_t i = 0; i < hca->n_ports && !rc; i++) {
		struct rp_port *port = &hca->ports[i];
		size_t len = port->num >= 1 && port->num <= n_ports ? tbl_len[port->num - 1] : 0;

		if (n >= 0 && len) {
			rc = rp_port_gids_from_verbs(port, len, entries, (size_t)n, root, hca->name);
		} else {
			rc = port_read_gids(root, hca->name, port);
			if (!rc)
				port_mtu_from_netdev(root, port);
		}
	}
	free(entries);
	return rc;
}

/* Ports as verbs reports them: state, LIDs, link layer and active MTU override sysfs; the GID tables
 * come from verbs too (hca_read_gids). A port verbs knows but sysfs lacks is added. Returns 0, or
 * -ENOMEM; an open/query failure is the reason. */
static int hca_query_verbs(const char *root, struct ibv_device *dev, struct rp_hca *hca)
{
	struct ibv_device_attr da;
	struct ibv_context *ctx;
	size_t *tbl_len;
	int rc;

	ctx = ibv_open_device(dev);
	if (!ctx) {
		snprintf(hca->unusable_reason, sizeof(hca->unusable_reason), "ibv_open_device failed: %s",
			 strerror(errno ? errno : EIO));
		return hca_read_gids(root, NULL, hca, NULL, 0);
	}
	rc = ibv_query_device(ctx, &da);
	if (rc) {
		snprintf(hca->unusable_reason, sizeof(hca->unusable_reason), "ibv_query_device failed: %s",
			 strerror(rc));
		ibv_close_device(ctx);
		return hca_read_gids(root, NULL, hca, NULL, 0);
	}
	tbl_len = calloc(da.phys_port_cnt ? da.phys_port_cnt : 1, sizeof(*tbl_len));
	if (!tbl_len) {
		ibv_close_device(ctx);
		return rp_error(-ENOMEM, "allocate the ports of %s: out of memory", hca->name);
	}
	for (int pn = 1; pn <= da.phys_port_cnt; pn++) {
		struct ibv_port_attr pa;
		struct rp_port *port = NULL;

		for (size_t i = 0; i < hca->n_ports && !port; i++)
			if (hca->ports[i].num == pn)
				port = &hca->ports[i];
		memset(&pa, 0, sizeof(pa));
		if (ibv_query_port(ctx, (uint8_t)pn, &pa)) {
			rp_warn("ibv_query_port %s port %d: %s", hca->name, pn, strerror(errno ? errno : EIO));
			continue;
		}
		if (!port) {
			struct rp_port *np = realloc(hca->ports, (hca->n_ports + 1) * sizeof(*np));

			if (!np) {
				free(tbl_len);
				ibv_close_device(ctx);
				return rp_error(-ENOMEM, "allocate a port of %s: out of memory", hca->name);
			}
			hca->ports = np;
			port = &np[hca->n_ports++];
			memset(port, 0, sizeof(*port));
			port->num = pn;
		}
		tbl_len[pn - 1] = (size_t)pa.gid_tbl_len;
		port->state = pa.state;
		port->phys_state = pa.phys_state;
		port->lid = pa.lid;
		port->sm_lid = pa.sm_lid;
		port->active_mtu = mtu_bytes(pa.active_mtu);
		port->link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? RP_LL_ETHERNET :
				   pa.link_layer == IBV_LINK_LAYER_INFINIBAND ? RP_LL_INFINIBAND : port->link_layer;
		if (port->rate_gbps == 0)
			rate_from_verbs(&pa, port);
	}
	rc = hca_read_gids(root, ctx, hca, tbl_len, da.phys_port_cnt);
	free(tbl_len);
	ibv_close_device(ctx);
	return rc;
}

/* ---- building the list ---- */

static struct rp_hca *node_add_hca(struct rp_node *node, const char *name)
{
	struct rp_hca *nh = realloc(node->hcas, (node->n_hcas + 1) * sizeof(*nh));
	struct rp_hca *hca;

	if (!nh)
		return NULL;
	node->hcas = nh;
	hca = &nh[node->n_hcas++];
	memset(hca, 0, sizeof(*hca));
	rp_strlcpy(hca->name, name, sizeof(hca->name));
	hca->numa_node = -1;
	hca->node_type = -1;
	hca->in_verbs = RP_TRI_UNKNOWN;
	return hca;
}

/* Why verbs does not list a device that sysfs shows (real /sys only). */
static void explain_not_in_verbs(const char *root, struct rp_hca *hca)
{
	char **names = NULL, buf[RP_NAME_MAX + 8], devpath[64];
	const char *uverbs = NULL;
	size_t n = 0;

	if (rp_sysfs_list_dir(root, "class/infiniband_verbs", &names, &n) == 0) {
		for (size_t i = 0; i < n && !uverbs; i++)
			if (strncmp(names[i], "uverbs", 6) == 0 &&
			    rp_sysfs_readf(root, buf, sizeof(buf), "class/infiniband_verbs/%s/ibdev", names[i]) == 0 &&
			    strcmp(buf, hca->name) == 0)
				uverbs = names[i];
	}
	if (!uverbs)
		snprintf(hca->unusable_reason, sizeof(hca->unusable_reason),
			 "not listed by ibv_get_device_list: it has no uverbs device (kernel module ib_uverbs not loaded?)");
	else if (snprintf(devpath, sizeof(devpath), "/dev/infiniband/%s", uverbs) < (int)sizeof(devpath) &&
		 access(devpath, F_OK) != 0)
		snprintf(hca->unusable_reason, sizeof(hca->unusable_reason),
			 "not listed by ibv_get_device_list: %s is missing (no /dev/infiniband/uverbsN in this container?)",
			 devpath);
	else
		snprintf(hca->unusable_reason, sizeof(hca->unusable_reason),
			 "not listed by ibv_get_device_list: libibverbs has no provider for its driver "
			 "(install ibverbs-providers / rdma-core)");
	rp_sysfs_free_names(names);
}

/* Append printf text to a reason buffer, cutting quietly at its end. */
static void reason_add(char *r, size_t size, size_t *len_p, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void reason_add(char *r, size_t size, size_t *len_p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len_p >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(r + *len_p, size - *len_p, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len_p += (size_t)n;
}

/* Why there is no adapter at all, for a person. */
static void explain_no_device(struct rp_node *node, bool fixture, int verbs_err)
{
	char *r = node->no_device_reason;
	size_t size = sizeof(node->no_device_reason), len = 0;
	char path[PATH_MAX];
	struct stat st;
	char **names = NULL;
	size_t n = 0;
	int rc;

	if (!fixture) {
		if (verbs_err == -ENOSYS)
			reason_add(r, size, &len, "libibverbs: no kernel support (ibv_get_device_list: %s)", strerror(-verbs_err));
		else if (verbs_err)
			reason_add(r, size, &len, "ibv_get_device_list failed: %s", strerror(-verbs_err));
		else
			reason_add(r, size, &len, "libibverbs lists no devices");
	} else {
		reason_add(r, size, &len, "no adapter in the fixture");
	}
	rc = rp_sysfs_list_dir(node->sysfs_root, "class/infiniband", &names, &n);
	if (rc == -ENOENT)
		reason_add(r, size, &len, "; %s/class/infiniband missing: no RDMA driver loaded (mlx5_ib, rdma_rxe...)",
		    node->sysfs_root);
	else if (rc)
		reason_add(r, size, &len, "; %s/class/infiniband cannot be read: %s", node->sysfs_root, strerror(-rc));
	else if (n == 0)
		reason_add(r, size, &len, "; %s/class/infiniband is empty: no RDMA adapter registered", node->sysfs_root);
	rp_sysfs_free_names(names);
	if (!fixture) {
		if (rp_sysfs_join(node->sysfs_root, "module/ib_uverbs", path, sizeof(path)) == 0 && stat(path, &st) != 0)
			reason_add(r, size, &len, "; kernel module ib_uverbs not loaded");
		if (stat("/dev/infiniband", &st) != 0)
			reason_add(r, size, &len, "; /dev/infiniband missing");
	}
}

/* Adapters: verbs first (real /sys), then every class/infiniband entry. */
static bool hca_wanted(const struct rp_discover_opts *o, const char *name)
{
	if (!o || !o->only)
		return true;
	for (size_t i = 0; i < o->n_only; i++)
		if (strcmp(o->only[i], name) == 0)
			return true;
	return false;
}

/* The adapters verbs lists (list[0..n)), in its order, as wanted. 0 or -ENOMEM. */
static int add_verbs_hcas(struct rp_node *node, struct ibv_device **list, int n, const struct rp_discover_opts *opts)
{
	int rc = 0;

	for (int i = 0; i < n && !rc; i++) {
		const char *name = ibv_get_device_name(list[i]);
		struct rp_hca *hca;

		if (!name || strlen(name) >= RP_NAME_MAX) {
			rp_warn("verbs device name '%.64s...' is too long, ignored", name ? name : "(null)");
			continue;
		}
		if (!hca_wanted(opts, name))
			continue;
		hca = node_add_hca(node, name);
		if (!hca)
			return rp_error(-ENOMEM, "allocate adapter %s: out of memory", name);
		hca->in_verbs = RP_TRI_TRUE;
		hca_read_attrs(node->sysfs_root, hca);
		rc = hca_read_ports(node->sysfs_root, hca, false);
		if (!rc)
			rc = hca_query_verbs(node->sysfs_root, list[i], hca);
	}
	return rc;
}

/* The adapters sysfs lists (names[0..n)) that verbs did not, as wanted: a fixture's, or what verbs
 * missed (each explained). 0 or -ENOMEM. */
static int add_sysfs_hcas(struct rp_node *node, char **names, size_t n, bool fixture,
			  const struct rp_discover_opts *opts)
{
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		struct rp_hca *hca;

		if (strlen(names[i]) >= RP_NAME_MAX) {
			rp_warn("%s/class/infiniband/%.64s...: name too long, ignored", node->sysfs_root, names[i]);
			continue;
		}
		if (rp_node_find_hca(node, names[i]) || !hca_wanted(opts, names[i]))
			continue;
		hca = node_add_hca(node, names[i]);
		if (!hca)
			return rp_error(-ENOMEM, "allocate adapter %s: out of memory", names[i]);
		hca->in_verbs = fixture ? RP_TRI_UNKNOWN : RP_TRI_FALSE;
		hca_read_attrs(node->sysfs_root, hca);
		rc = hca_read_ports(node->sysfs_root, hca, true);
		if (!fixture)
			explain_not_in_verbs(node->sysfs_root, hca);
	}
	return rc;
}

static int node_find_hcas(struct rp_node *node, bool fixture, const struct rp_discover_opts *opts)
{
	struct ibv_device **list = NULL;
	char **names = NULL;
	size_t n_names = 0, n_listed;
	int n_verbs = 0, verbs_err = 0, rc;

	if (!fixture) {
		errno = 0;
		list = ibv_get_device_list(&n_verbs);
		node->verbs_consulted = true;
		if (!list) {
			verbs_err = errno ? -errno : -ENOSYS;
			n_verbs = 0;
		}
	}
	rc = rp_sysfs_list_dir(node->sysfs_root, "class/infiniband", &names, &n_names);
	if (rc == -ENOMEM)
		goto out;
	if (rc && rc != -ENOENT)
		rp_warn("list %s/class/infiniband: %s", node->sysfs_root, strerror(-rc));
	rc = add_verbs_hcas(node, list, n_verbs, opts);
	n_listed = node->n_hcas;
	if (!rc)
		rc = add_sysfs_hcas(node, names, n_names, fixture, opts);
	if (rc)
		goto out;
	for (size_t i = 0; i < node->n_hcas; i++)
		if (node->hcas[i].n_ports == 0 && !node->hcas[i].unusable_reason[0])
			snprintf(node->hcas[i].unusable_reason, sizeof(node->hcas[i].unusable_reason),
				 "no ports found (%s/class/infiniband/%s/ports)", node->sysfs_root, node->hcas[i].name);
	/* Verbs-listed adapters keep ibv_get_device_list() order (NCCL's order); the others follow in
	 * natural name order. */
	if (node->n_hcas > n_listed + 1)
		qsort(node->hcas + n_listed, node->n_hcas - n_listed, sizeof(*node->hcas), hca_cmp);
	if (node->n_hcas == 0)
		explain_no_device(node, fixture, verbs_err);
out:
	rp_sysfs_free_names(names);
	if (list)
		ibv_free_device_list(list);
	return rc;
}

/* ---- entry point ---- */

int rp_node_discover(struct rp_node *node, const struct rp_discover_opts *opts)
{
	const char *root = opts && opts->sysfs_root ? opts->sysfs_root : "/sys";
	bool fixture = opts && opts->sysfs_root;
	struct stat st;
	int rc;

	memset(node, 0, sizeof(*node));
	rp_strlcpy(node->gpu_source, "none", sizeof(node->gpu_source));
	if (!root[0])
		return rp_error(-EINVAL, "sysfs root is an empty path");
	if (rp_strlcpy(node->sysfs_root, root, sizeof(node->sysfs_root)))
		return rp_error(-ENAMETOOLONG, "sysfs root %.64s...: path too long (at most %d bytes)", root,
				RP_PATHBUF - 1);
	/* Strip trailing slashes so that joined paths read well ("/sys/class", not "/sys//class"). */
	for (size_t n = strlen(node->sysfs_root); n > 1 && node->sysfs_root[n - 1] == '/'; n--)
		node->sysfs_root[n - 1] = '\0';
	if (stat(node->sysfs_root, &st) != 0)
		return rp_error(-errno, "sysfs root %s: %s", node->sysfs_root, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return rp_error(-ENOTDIR, "sysfs root %s: not a directory", node->sysfs_root);
	if (access(node->sysfs_root, R_OK | X_OK) != 0)
		return rp_error(-errno, "sysfs root %s: %s", node->sysfs_root, strerror(errno));

	rc = node_find_hcas(node, fixture, opts);
	if (!rc && !(opts && opts->skip_gpus))
		rc = rp_node_find_gpus(node, fixture);
	return rc;
}
