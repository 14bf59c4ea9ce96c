/* mx_ports.c: the ports one matrix rank offers; see mx_ports.h. */
#include "job/mx_ports.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discover/gpu.h"
#include "mem/mem.h"
#include "nccl/nccl.h"
#include "nccl/nccl_version.h"
#include "discover/topo.h"
#include "base/util.h"

int mx_gpu_rule(size_t n_visible, int local_rank, int local_size, char *why, size_t why_len)
{
	if (n_visible == 1)
		return 0;
	if (n_visible > 0 && local_rank >= 0 && n_visible >= (size_t)local_size && (size_t)local_rank < n_visible)
		return local_rank;
	if (n_visible == 0)
		snprintf(why, why_len, "--per-gpu: local rank %d sees no GPU", local_rank);
	else
		snprintf(why, why_len, "--per-gpu: local rank %d of %d sees %zu GPUs: give each task one GPU "
			 "(srun --gpus-per-task=1, CUDA_VISIBLE_DEVICES) or run at most %zu ranks per node",
			 local_rank, local_size, n_visible, n_visible);
	return -ENODEV;
}

/* The endpoint of a rank whose selection has no ACTIVE port (or no such adapter): named after the
 * selection ("-d =mlx5_9" -> mlx5_9, port 0), so that the reports show and drain it. */
static void no_port_entry(const struct mx_port_opts *o, const char *host, struct mx_wire_ep *w)
{
	const char *spec = o->dev_spec ? o->dev_spec : "none";

	memset(w, 0, sizeof(*w));
	rp_strlcpy(w->node, host, sizeof(w->node));
	rp_strlcpy(w->device, spec[0] == '=' ? spec + 1 : spec, sizeof(w->device));
	w->gid_index = -1;
	w->flags = MX_EP_NO_PORT;
}

/* This rank's GPU under the rule: CUDA's visible GPUs, matched to the node's by bus id (for the
 * sysfs paths the topology walks). Its entry in node->gpus (index set to the CUDA index), or NULL
 * with the reason in out->why. */
static const struct rp_gpu *gpu_pick(struct rp_node *node, const struct mx_port_opts *o, struct mx_ports *out)
{
	struct rp_gpu *vis = NULL, *g = NULL;
	size_t n_vis = 0;
	int k;

	if (rp_gpu_cuda_list(&vis, &n_vis) != 0)
		n_vis = 0;
	k = mx_gpu_rule(n_vis, o->local_rank, o->local_size, out->why, sizeof(out->why));
	for (size_t i = 0; k >= 0 && i < node->n_gpus && !g; i++)
		if (strcmp(node->gpus[i].pci, vis[k].pci) == 0)
			g = &node->gpus[i];
	if (k >= 0 && !g)
		snprintf(out->why, sizeof(out->why), "--per-gpu: GPU %d (%s) is not in %.120s/bus/pci/devices", vis[k].index,
			 vis[k].pci, node->sysfs_root);
	if (g) {
		g->index = vis[k].index;
		out->gpu = g->index;
		rp_strlcpy(out->gpu_pci, g->pci, sizeof(out->gpu_pci));
	}
	free(vis);
	return g;
}

static void host_name(const struct mx_port_opts *o, char *host, size_t len)
{
	if (o->node_name)
		rp_strlcpy(host, o->node_name, len);
	else if (gethostname(host, len - 1) != 0)
		rp_strlcpy(host, "localhost", len);
	host[len - 1] = '\0';
}

uint64_t mx_host_id(void)
{
	const char *files[] = { "/proc/sys/kernel/random/boot_id", "/etc/machine-id" };
	uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */

	for (size_t f = 0; f < RP_ARRAY_SIZE(files); f++) {
		char buf[128];
		FILE *fp = fopen(files[f], "re");
		size_t n = fp ? fread(buf, 1, sizeof(buf), fp) : 0;

		if (fp)
			fclose(fp);
		if (n < 8)
			continue;
		for (size_t i = 0; i < n; i++)
			h = (h ^ (unsigned char)buf[i]) * 0x100000001b3ull;
		return h ? h : 1;
	}
	return 0;
}

/* The selected ports (near the GPU when there is one) into out. */
static void ports_fill(const struct rp_node *node, const struct rp_nccl_result *sel, const struct mx_port_opts *o,
		       const char *host, const size_t *near, size_t n_near, bool gpu, struct mx_ports *out)
{
	char nccl[16] = "";

	if (o->nccl_version)
		rp_nccl_version_format(o->nccl_version, nccl, sizeof(nccl));
	for (size_t i = 0; i < sel->n_selected && out->n < MX_MAX_LOCAL; i++) {
		const struct rp_nccl_sel *s = &sel->selected[i];
		const struct rp_port *port = rp_hca_find_port(&node->hcas[s->hca_idx], s->port);
		struct mx_wire_ep *w = &out->eps[out->n];
		bool keep = !gpu;

		for (size_t k = 0; k < n_near; k++)
			keep |= near[k] == s->hca_idx;
		if (!keep)
			continue;
		memset(w, 0, sizeof(*w));
		rp_strlcpy(w->node, host, sizeof(w->node));
		rp_strlcpy(w->device, s->hca, sizeof(w->device));
		w->port = s->port;
		w->gid_index = o->gid_set ? o->gid_index : s->gid_index;
		w->mtu = port ? port->active_mtu : 0;
		w->link_gbps = port ? port->rate_gbps : 0;
		if (port)
			rp_drift_describe(node, &node->hcas[s->hca_idx], port, host, w->gid_index, nccl, true, &w->drift);
		out->n++;
	}
}

/* --per-gpu on a discovered node: the GPU and its nearest adapters under env's merge. */
static int near_gpu(struct rp_node *node, const struct rp_nccl_env *env, const struct mx_port_opts *o,
		    struct mx_ports *out, size_t *near, size_t max, size_t *n_near_p)
{
	const struct rp_gpu *gpu;
	struct rp_topo_merge m;

	if (!rp_mem_ops_find("cuda")) {
		snprintf(out->why, sizeof(out->why), "--per-gpu needs CUDA memory, which this build does not have");
		return -ENOTSUP;
	}
	gpu = gpu_pick(node, o, out);
	if (!gpu)
		return -ENODEV;
	rp_nccl_topo_merge(env, &m);
	*n_near_p = rp_topo_nearest_m(node, gpu, &m, near, max);
	if (*n_near_p > max)
		*n_near_p = max;
	return 0;
}

/* The adapters a rank needs to read: an exact selection ("=rxe3", "=mlx5_0:1,mlx5_1") names them
 * all, and nothing else can be selected (NCCL filters by name before it merges or orders devices).
 * Anything else (unset, prefixes, '^', --per-gpu, which needs the topology): every adapter. The
 * names into names[] (pointing into spec); their number, 0 for every adapter. */
static size_t exact_names(const struct rp_nccl_spec *spec, bool per_gpu, const char **names, size_t max)
{
	size_t n = 0;

	if (per_gpu || !spec->set || spec->exclude || !spec->exact || spec->n_entries == 0)
		return 0;
	for (size_t i = 0; i < spec->n_entries && n < max; i++)
		names[n++] = spec->entries[i].name;
	return n == spec->n_entries ? n : 0;
}

/* Discover the node: only the named adapters when the selection names them exactly; when none of
 * those exists, the whole node (so that the reason names what there is). */
static int node_read(struct rp_node *node, const struct rp_nccl_env *env, const struct mx_port_opts *o, bool whole)
{
	struct rp_discover_opts d = { .sysfs_root = o->sysfs_root, .skip_gpus = !o->per_gpu };
	struct rp_nccl_spec spec;     /* names[] point into it */
	const char *names[RP_NCCL_MAX_ENTRIES];
	int rc;

	if (!whole && env->ib_hca && rp_nccl_spec_parse_v(env->ib_hca, o->nccl_version, &spec) == 0) {
		d.n_only = exact_names(&spec, o->per_gpu, names, RP_ARRAY_SIZE(names));
		d.only = d.n_only ? names : NULL;
	}
	rc = rp_node_discover(node, &d);
	if (rc || node->n_hcas || !d.only)
		return rc;
	rp_node_fini(node);
	d.only = NULL;
	d.n_only = 0;
	return rp_node_discover(node, &d);
}

static int select_on(const struct mx_port_opts *o, struct mx_ports *out, struct rp_node *nodep, bool whole)
{
	struct rp_node node;
	struct rp_nccl_env env;
	struct rp_nccl_result sel;
	size_t near[64], n_near = 0;
	char host[RP_NAME_MAX] = "";
	uint64_t host_id;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(&sel, 0, sizeof(sel));
	memset(&node, 0, sizeof(node));
	if (nodep)
		memset(nodep, 0, sizeof(*nodep));   /* rp_node_fini-able on every path */
	out->gpu = -1;
	host_name(o, host, sizeof(host));
	if (rp_nccl_env_load(&env) != 0) {
		snprintf(out->why, sizeof(out->why), "bad NCCL environment variable (see above)");
		return -EINVAL;
	}
	if (o->dev_spec)
		env.ib_hca = o->dev_spec;
	env.version = o->nccl_version;
	if (node_read(&node, &env, o, whole) != 0 || node.n_hcas == 0) {
		snprintf(out->why, sizeof(out->why), "no RDMA adapter: %.200s",
			 node.no_device_reason[0] ? node.no_device_reason : "none found");
		goto out;      /* the endpoint is the finding: a placeholder below */
	}
	if (rp_nccl_evaluate(&node, &env, &sel) != 0) {
		snprintf(out->why, sizeof(out->why), "-d %s: not a valid NCCL_IB_HCA spec", o->dev_spec ? o->dev_spec : env.ib_hca);
		rc = -EINVAL;
		goto out;
	}
	if (o->per_gpu && (rc = near_gpu(&node, &env, o, out, near, RP_ARRAY_SIZE(near), &n_near)) != 0)
		goto out;
	ports_fill(&node, &sel, o, host, near, n_near, o->per_gpu, out);
	if (out->n == 0)
		snprintf(out->why, sizeof(out->why), "%s selects no active port%s",
			 o->dev_spec ? o->dev_spec : "NCCL's selection", o->per_gpu ? " near this rank's GPU" : "");
out:
	if (!rc && out->n == 0)
		no_port_entry(o, host, &out->eps[out->n++]);
	host_id = mx_host_id();
	for (size_t i = 0; i < out->n; i++)
		out->eps[i].host_id = host_id;
	rp_nccl_result_fini(&sel);
	if (nodep)
		*nodep = node;
	else
		rp_node_fini(&node);
	return rc;
}

int mx_ports_select(const struct mx_port_opts *o, struct mx_ports *out)
{
	return select_on(o, out, NULL, false);
}

int mx_ports_select_node(const struct mx_port_opts *o, struct mx_ports *out, struct rp_node *node)
{
	return select_on(o, out, node, true);
}
