/* cmd_devices.c: 'rdmaprobe devices': adapters, ports, GIDs, GPUs and GPU x adapter affinity, as a
 * table for a person or as JSON (lib/report/node_json.h), then the static health checks (lib/health/health.h).
 * Health warnings do not change the exit status: 'devices' reports what the node has; the checks
 * that pass or fail a node are 'nccl' and the measurements. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cmds.h"
#include "health/counters.h"
#include "health/counters_json.h"
#include "health/health.h"
#include "health/health_json.h"
#include "base/log.h"
#include "nccl/nccl.h"
#include "nccl/nccl_version.h"
#include "discover/node.h"
#include "report/node_json.h"
#include "ops_cli.h"
#include "report/report.h"
#include "discover/lldp.h"
#include "opts.h"
#include "discover/sysfs.h"
#include "discover/topo.h"

static const char devices_usage[] = "[--json FILE] [--counters] [--sysfs-root DIR] [--nccl-version X.Y.Z] [--python ENV] "
				     "[--lldp FILE [--node NAME]]";

static const char *dash(const char *s)
{
	return s && s[0] ? s : "-";
}

static const char *tri_text(enum rp_tri t)
{
	return t == RP_TRI_TRUE ? "yes" : t == RP_TRI_FALSE ? "NO" : "?";
}

static void print_port(const struct rp_port *p, const struct rp_nccl_env *env)
{
	char rate[64], mtu[16];
	int gid_index = rp_nccl_gid_index(p, env);
	size_t shown = 0;

	if (p->rate_gbps > 0)
		snprintf(rate, sizeof(rate), "%g Gb/s%s%s%s", p->rate_gbps, p->rate_text[0] ? " (" : "",
			 p->rate_text, p->rate_text[0] ? ")" : "");
	else
		snprintf(rate, sizeof(rate), "rate ?");
	if (p->active_mtu)
		snprintf(mtu, sizeof(mtu), "%d", p->active_mtu);
	else
		snprintf(mtu, sizeof(mtu), "?");
	printf("  port %d  %-12s %-10s %-22s %-10s lid 0x%x sm_lid 0x%x mtu %s\n", p->num,
	       p->state >= 0 ? rp_port_state_str(p->state) : "state ?",
	       p->phys_state >= 0 ? rp_phys_state_str(p->phys_state) : "phys ?", rate,
	       p->link_layer != RP_LL_UNKNOWN ? rp_link_layer_str(p->link_layer) : "link ?", p->lid, p->sm_lid, mtu);
	for (size_t i = 0; i < p->n_gids; i++) {
		const struct rp_gid *g = &p->gids[i];

		if (rp_sysfs_gid_is_zero(g->raw))
			continue;
		printf("    gid %-3d %s  %-10s %s%s\n", g->index, g->text,
		       g->type == RP_GID_TYPE_NONE ? "-" : rp_gid_type_str(g->type), dash(g->ndev),
		       g->index == gid_index && p->link_layer == RP_LL_ETHERNET ? "  <- NCCL" : "");
		shown++;
	}
	if (!shown)
		printf("    (no valid GID)\n");
	if (p->link_layer == RP_LL_ETHERNET)
		printf("    NCCL GID index: %s%d%s\n", gid_index < 0 ? "none (" : "", gid_index,
		       gid_index < 0 ? ": no GID passes NCCL's rule)" : "");
}

static void print_adapters(const struct rp_node *node, const struct rp_nccl_env *env)
{
	printf("%-10s %-5s %-13s %-5s %-14s %-20s %s\n", "ADAPTER", "VERBS", "PCI", "NUMA", "FIRMWARE", "NODE GUID",
	       "TYPE");
	for (size_t i = 0; i < node->n_hcas; i++) {
		const struct rp_hca *h = &node->hcas[i];
		char numa[16];

		snprintf(numa, sizeof(numa), "%d", h->numa_node);
		printf("%-10s %-5s %-13s %-5s %-14s %-20s %s\n", h->name, tri_text(h->in_verbs),
		       h->pci[0] ? h->pci : "(not PCI)", numa, dash(h->fw_ver), dash(h->node_guid),
		       h->node_type == 1 ? "CA" : h->node_type < 0 ? "-" : "other");
		if (h->unusable_reason[0])
			printf("  NOT USABLE: %s\n", h->unusable_reason);
		for (size_t p = 0; p < h->n_ports; p++)
			print_port(&h->ports[p], env);
	}
}

static void print_gpus(const struct rp_node *node)
{
	printf("\nGPUs (found by %s)\n", strcmp(node->gpu_source, "cuda") == 0 ? "the CUDA runtime" : "a PCI scan of sysfs");
	printf("%-6s %-13s %-5s %s\n", "INDEX", "PCI", "NUMA", "NAME");
	for (size_t i = 0; i < node->n_gpus; i++) {
		const struct rp_gpu *g = &node->gpus[i];
		char index[16];

		snprintf(index, sizeof(index), g->index >= 0 ? "%d" : "-", g->index);
		printf("%-6s %-13s %-5d %s\n", index, g->pci, g->numa_node, dash(g->name));
	}
}

/* The GPU x adapter matrix of NCCL path types, then each GPU's nearest adapters, both under the
 * NIC bus-id merge of env's release (as the JSON's "affinity" and "nearest"). */
static int print_affinity(const struct rp_node *node, const struct rp_nccl_env *env,
			  const struct rp_nccl_version_found *ver)
{
	size_t *idx = calloc(node->n_hcas, sizeof(*idx));
	struct rp_topo_merge m;
	struct rp_topo_cpu cpu;
	char v[16], rel[RP_PATHBUF + 320];

	if (!idx) {
		fprintf(stderr, "rdmaprobe devices: out of memory\n");
		return -ENOMEM;
	}
	rp_nccl_topo_merge(env, &m);
	rp_nccl_version_format(ver->version, v, sizeof(v));
	rp_nccl_version_describe(ver, rel, sizeof(rel));
	printf("\nAffinity (path type as NCCL %s computes it: PIX < PXB < PHB < SYS)\n%-13s", rel, "GPU");
	for (size_t h = 0; h < node->n_hcas; h++)
		printf(" %-8s", node->hcas[h].name);
	printf("\n");
	for (size_t g = 0; g < node->n_gpus; g++) {
		printf("%-13s", node->gpus[g].pci);
		for (size_t h = 0; h < node->n_hcas; h++)
			printf(" %-8s", rp_path_str(rp_topo_path_m(node, &node->gpus[g], &node->hcas[h], &m)));
		printf("\n");
	}
	rp_topo_cpu_read(node->sysfs_root, env->version, &cpu);
	printf("\nNearest adapter(s) per GPU (NCCL %s's choice: widest path, then path type; between CPUs NCCL "
	       "counts %g GB/s for this CPU, %s %s, read from %s)\n", v, cpu.sys_bw, cpu.vendor[0] ? cpu.vendor : cpu.arch,
	       cpu.cls, cpu.source);
	for (size_t g = 0; g < node->n_gpus; g++) {
		size_t n = rp_topo_nearest_m(node, &node->gpus[g], &m, idx, node->n_hcas);

		printf("%-13s", node->gpus[g].pci);
		for (size_t i = 0; i < n && i < node->n_hcas; i++)
			printf("%s%s", i ? ", " : " ", node->hcas[idx[i]].name);
		if (n)
			printf("  (%s)", rp_path_str(rp_topo_path_m(node, &node->gpus[g], &node->hcas[idx[0]], &m)));
		printf("\n");
	}
	free(idx);
	return 0;
}

/* The health section: warnings, then notes, expected rates and GPUDirect readiness. */
static void print_health(const struct rp_health *h)
{
	const struct rp_gdr_state *g = &h->gdr;
	size_t warnings = 0;

	printf("\nHealth\n");
	for (size_t i = 0; i < h->n_items; i++)
		warnings += !rp_health_code_is_note(h->items[i].code);
	if (!warnings)
		printf("  no warning\n");
	for (int notes = 0; notes < 2; notes++)
		for (size_t i = 0; i < h->n_items; i++)
			if (rp_health_code_is_note(h->items[i].code) == (notes == 1))
				printf("  %-7s %-22s %s\n", notes ? "note" : "WARNING", rp_health_code_str(h->items[i].code),
				       h->items[i].message);
	for (size_t i = 0; i < h->n_rates; i++)
		printf("  rate    %s:%d %s\n", h->rates[i].device, h->rates[i].port, h->rates[i].message);
	printf("  GPUDirect: IOMMU %s%s%s%s, nvidia-peermem %s, dma-buf %s (%s)", g->iommu == RP_TRI_TRUE ? "on" : "off",
	       g->iommu_mode[0] ? " (" : "", g->iommu_mode, g->iommu_mode[0] ? ")" : "",
	       g->peermem == RP_TRI_TRUE ? "loaded" : "not loaded",
	       g->dmabuf == RP_TRI_TRUE ? "possible" : g->dmabuf == RP_TRI_FALSE ? "not possible" : "unknown", g->dmabuf_why);
	if (g->cmdline_read)
		printf(", command line: %s", g->cmdline_hints[0] ? g->cmdline_hints : "no IOMMU/ACS option");
	printf("\n");
}

/* --counters, text: each port's counters that are not zero, with their class (other and traffic
 * counters left out). */
static void print_counters(const struct rp_node *node)
{
	static struct rp_ctr_snapshot snap;   /* large: not on the stack */

	printf("\nCounters (non-zero error, retransmission, congestion and RNR counters)\n");
	for (size_t i = 0; i < node->n_hcas; i++) {
		for (size_t p = 0; p < node->hcas[i].n_ports; p++) {
			size_t shown = 0;

			if (rp_ctr_snapshot(node->sysfs_root, node->hcas[i].name, node->hcas[i].ports[p].num, &snap))
				continue;
			printf("  %s:%d", snap.device, snap.port);
			for (size_t k = 0; k < snap.n; k++) {
				enum rp_ctr_class c = rp_ctr_classify_name(snap.v[k].name);

				if (c == RP_CC_OTHER || c == RP_CC_TRAFFIC || (!snap.v[k].err && !snap.v[k].value))
					continue;
				if (snap.v[k].err)
					printf("%s%s unreadable (%s)", shown++ ? ", " : " ", snap.v[k].name, rp_ctr_class_name(c));
				else
					printf("%s%s %llu (%s)", shown++ ? ", " : " ", snap.v[k].name,
					       (unsigned long long)snap.v[k].value, rp_ctr_class_name(c));
			}
			printf("%s\n", shown ? "" : snap.n ? " all zero" : " no counters");
		}
	}
}

/* --counters, JSON: "counters" in each port object of "devices". */
static int add_counters_json(const struct rp_node *node, json_t *j)
{
	static struct rp_ctr_snapshot snap;
	json_t *devs = json_object_get(j, "devices");

	for (size_t i = 0; i < node->n_hcas && i < json_array_size(devs); i++) {
		json_t *ports = json_object_get(json_array_get(devs, i), "ports");

		for (size_t p = 0; p < node->hcas[i].n_ports && p < json_array_size(ports); p++) {
			json_t *c = NULL;

			if (rp_ctr_snapshot(node->sysfs_root, node->hcas[i].name, node->hcas[i].ports[p].num, &snap) == 0 &&
			    !(c = rp_ctr_snapshot_to_json(&snap)))
				return -ENOMEM;
			if (json_object_set_new(json_array_get(ports, p), "counters", c ? c : json_null()))
				return -ENOMEM;
		}
	}
	return 0;
}

static int print_text(const struct rp_node *node, const struct rp_nccl_env *env,
		      const struct rp_nccl_version_found *ver, const struct rp_health *h, bool counters)
{
	char msg[256];

	if (node->verbs_consulted)
		printf("sysfs %s, adapters from ibv_get_device_list()\n\n", node->sysfs_root);
	else
		printf("sysfs root %s (a stand-in for /sys: verbs not consulted)\n\n", node->sysfs_root);
	if (node->n_hcas == 0)
		printf("No RDMA adapter found: %s\n", node->no_device_reason);
	else
		print_adapters(node, env);
	if (node->n_gpus == 0) {
		printf("\nNo GPU found (%s)\n", strcmp(node->gpu_source, "none") == 0 ?
			"no CUDA device and no NVIDIA display/3D controller in bus/pci/devices" : node->gpu_source);
	} else {
		print_gpus(node);
		if (node->n_hcas && print_affinity(node, env, ver))
			return -ENOMEM;
	}
	print_health(h);
	if (counters)
		print_counters(node);
	if (rp_nccl_newer_than_model(ver->version, msg, sizeof(msg)))
		printf("\nwarning nccl_newer_than_model: %s\n", msg);
	return 0;
}

/* --json FILE ("-": stdout); a failure said with its cause. 0 or a negative errno. */
static int write_json(const char *path, const struct rp_node *node, const struct rp_nccl_env *env,
		      const struct rp_nccl_version_found *ver, const struct rp_health *h, bool counters)
{
	json_t *j = rp_node_to_json(node, env);
	json_t *hj = j ? rp_health_to_json(h) : NULL;
	const char *bad = !j ? "device list" : !hj ? "health" : NULL;
	int rc = 0;

	if (!bad && json_object_set_new(j, "health", hj) != 0)
		bad = "health";
	else if (!bad && counters && add_counters_json(node, j))
		bad = "counters";
	else if (!bad && json_object_set_new(j, "nccl_version", rp_nccl_version_json(ver)))
		bad = "nccl_version";
	if (!bad)
		rc = rp_report_write_json(j, path);
	json_decref(j);
	if (bad || rc)
		rp_cli_write_failed("devices", path, rc, bad);
	return bad ? -ENOMEM : rc;
}

/* Read all of path ("-": stdin) into a malloc'ed buffer, at most 64 MiB; NULL with errno set. */
static char *read_all(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	size_t cap = 1 << 16, got;
	char *buf = f ? malloc(cap) : NULL;

	*len = 0;
	while (buf && (got = fread(buf + *len, 1, cap - *len, f)) > 0) {
		char *x;

		*len += got;
		if (*len < cap)
			continue;
		x = cap >= (64u << 20) ? NULL : realloc(buf, cap *= 2);
		if (!x) {
			free(buf);
			buf = NULL;
			errno = cap >= (64u << 20) ? EFBIG : ENOMEM;
		}
		buf = x;
	}
	if (buf && ferror(f)) {
		free(buf);
		buf = NULL;
		errno = EIO;
	}
	if (f && f != stdin)
		fclose(f);
	return buf;
}

/* --lldp: this node's adapters on their leaf switches, as native --topology lines on stdout. */
static int lldp_lines(const char *path, const char *host_opt, const char *root)
{
	struct rp_discover_opts dopts = { .sysfs_root = root, .skip_gpus = true };
	struct rp_lldp_neighbor *nb = NULL;
	char err[256], host[RP_NAME_MAX] = "", *text, *out = NULL;
	size_t len, n = 0;
	struct rp_node node;
	int rc, lines;

	text = read_all(path, &len);
	if (!text) {
		fprintf(stderr, "rdmaprobe devices: --lldp %s: %s\n", path, strerror(errno));
		return RP_EXIT_USAGE;
	}
	rc = rp_lldp_parse(text, len, &nb, &n, err, sizeof(err));
	free(text);
	if (rc) {
		fprintf(stderr, "rdmaprobe devices: --lldp %s: %s\n", path, rc == -ENOMEM ? "out of memory" : err);
		return rc == -ENOMEM ? RP_EXIT_ENV : RP_EXIT_USAGE;
	}
	if (host_opt)
		snprintf(host, sizeof(host), "%s", host_opt);
	else if (gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "localhost");
	if (rp_node_discover(&node, &dopts) != 0) {
		rp_node_fini(&node);
		free(nb);
		return RP_EXIT_ENV;
	}
	lines = rp_lldp_topology(&node, host, nb, n, &out);
	if (lines > 0)
		fputs(out, stdout);
	else if (lines == 0)
		fprintf(stderr, "rdmaprobe devices: --lldp %s: none of this node's %zu adapters has a netdev that heard an LLDP "
			"neighbour (%zu interfaces did: %s%s)\n", path, node.n_hcas, n, n ? nb[0].ifname : "none",
			n > 1 ? ", ..." : "");
	free(out);
	free(nb);
	rp_node_fini(&node);
	return lines > 0 ? RP_EXIT_OK : RP_EXIT_ENV;
}

/* The options that go together, said once on stderr when they do not. */
static bool args_ok(const char *root, const char *host, const char *lldp, const char *json)
{
	if (root && !root[0]) {
		fprintf(stderr, "rdmaprobe devices: --sysfs-root needs a directory, not an empty string\n");
		return false;
	}
	if (host && (!lldp || !host[0] || strpbrk(host, " \t/#"))) {
		fprintf(stderr, "rdmaprobe devices: --node %s\n", !lldp ? "goes with --lldp" : "needs a name without spaces, '/' or '#'");
		return false;
	}
	if (!lldp && json && rp_report_path_check(json) != 0) {
		fprintf(stderr, "rdmaprobe devices: --json %s: cannot write the report there\n", json);
		return false;
	}
	return true;
}

int cmd_devices(int argc, char **argv)
{
	bool counters = false;
	const char *root = NULL, *nccl_version = NULL, *python = NULL, *json = NULL, *lldp = NULL, *host = NULL;
	const struct rp_opt opts[] = {
		{ "json", 'j', RP_OPT_OUTPUT, &json, 0, 0, "FILE", "write JSON to FILE (- or a bare --json: stdout, instead of the table)", NULL },
		{ "counters", 0, RP_OPT_FLAG, &counters, 0, 0, NULL,
		  "also show each port's error and hardware counters (counters/, hw_counters/) with their class", NULL },
		{ "sysfs-root", 0, RP_OPT_STR, &root, 0, 0, "DIR",
		  "read DIR instead of /sys (a fixture tree; verbs is then not consulted)", NULL },
		{ "nccl-version", 0, RP_OPT_STR, &nccl_version, 0, 0, "X.Y.Z",
		  "NCCL release whose GID rules the NCCL column follows (default: the libnccl.so.2 found)", NULL },
		{ "python", 0, RP_OPT_STR, &python, 0, 0, "ENV",
		  "look first for the nvidia-nccl-cu* wheel's libnccl in this Python environment", NULL },
		{ "lldp", 0, RP_OPT_STR, &lldp, 0, 0, "FILE",
		  "print this node's adapters on their leaf switches, read from `lldpctl -f json` output in FILE (- stdin), "
		  "as --topology lines (join every node's into one file), instead of the table", NULL },
		{ "node", 0, RP_OPT_STR, &host, 0, 0, "NAME", "--lldp: the node's name in the lines (default: the host name, "
		  "as matrix names it)", NULL },
		{ 0 },
	};
	struct rp_discover_opts dopts = { 0 };
	struct rp_health_opts hopts = { 0 };
	struct rp_health health = { 0 };
	struct rp_nccl_version_found ver;
	struct rp_nccl_env env;
	struct rp_topo_merge merge;
	struct rp_node node;
	int rc;

	rc = rp_opts_parse("devices", devices_usage, opts, argc, argv, NULL, 0, NULL);
	if (rc)
		return rc > 0 ? RP_EXIT_OK : RP_EXIT_USAGE;
	if (!args_ok(root, host, lldp, json))
		return RP_EXIT_USAGE;
	if (lldp)
		return lldp_lines(lldp, host, root);
	if (nccl_version) {
		if (rp_nccl_version_from_option(nccl_version, &ver))
			return RP_EXIT_USAGE;
	} else {
		rp_nccl_version_find(python, &ver);
	}
	/* The GID index shown is the one that NCCL release would pick under this environment. */
	if (rp_nccl_env_load(&env)) {
		fprintf(stderr, "rdmaprobe devices: NCCL_IB_HCA above is too long; GID indexes use NCCL's defaults\n");
		rp_nccl_env_default(&env);
	}
	env.version = ver.version;
	dopts.sysfs_root = root;
	rc = rp_node_discover(&node, &dopts);
	if (rc) {
		/* rp_node_discover() has said what failed (the root, or memory). */
		rp_node_fini(&node);
		return RP_EXIT_ENV;
	}
	hopts.cmdline_path = root ? NULL : "/proc/cmdline";
	hopts.dmabuf = RP_TRI_UNKNOWN;
	hopts.probe_host = !root;
	rp_nccl_topo_merge(&env, &merge);   /* the ACS check's nearest adapters, as NCCL's release picks them */
	hopts.merge = &merge;
	rc = rp_health_check(&node, &hopts, &health);
	fflush(stderr);
	if (!rc && (!json || strcmp(json, "-") != 0))
		rc = print_text(&node, &env, &ver, &health, counters);
	if (!rc && json)
		rc = write_json(json, &node, &env, &ver, &health, counters);
	rp_health_fini(&health);
	rp_node_fini(&node);
	return rc ? RP_EXIT_ENV : RP_EXIT_OK;
}
