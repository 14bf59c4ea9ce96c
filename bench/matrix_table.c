/* matrix_table.c: the matrix's endpoint table: this rank's ports (NCCL_IB_HCA rules; a placeholder
 * when the selection has no ACTIVE port), the start-up exchange, one owner per endpoint. Every rank
 * builds the same table from the same exchanged bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "matrix.h"
#include "matrix_wire.h"
#include "nccl.h"
#include "node.h"
#include "oob_mpi.h"
#include "topo.h"
#include "util.h"

/* --- local ports --------------------------------------------------------------------------------- */

/* The endpoint of a rank whose selection has no ACTIVE port (or no such adapter): named after the
 * selection ("-d =mlx5_9" -> mlx5_9, port 0), so that the reports show and drain it. */
static void no_port_entry(const struct mx_opts *o, const char *host, struct mx_wire_ep *w)
{
	const char *spec = o->dev_spec ? o->dev_spec : "none";

	memset(w, 0, sizeof(*w));
	rp_strlcpy(w->node, host, sizeof(w->node));
	rp_strlcpy(w->device, spec[0] == '=' ? spec + 1 : spec, sizeof(w->device));
	w->gid_index = -1;
	w->flags = MX_EP_NO_PORT;
}

/* This rank's ports under -d / NCCL_IB_HCA (and, with --per-gpu, the GPU's nearest adapters).
 * Returns 0, or an exit status with the reason in err. When the selection has no ACTIVE port (or
 * the adapter is not there), 0 with one MX_EP_NO_PORT entry and the reason in err. */
int mx_local_ports(struct mx_opts *o, int local_rank, struct mx_wire_ep *out, size_t *n_p, char *err, size_t err_len)
{
	struct rp_node node;
	struct rp_nccl_env env;
	struct rp_nccl_result sel;
	size_t near[16], n_near = 0, n = 0;
	const struct rp_gpu *gpu = NULL;
	char host[RP_NAME_MAX] = "";
	int status = 0;

	memset(&sel, 0, sizeof(sel));
	memset(&node, 0, sizeof(node));
	if (o->node_name)
		rp_strlcpy(host, o->node_name, sizeof(host));
	else if (gethostname(host, sizeof(host) - 1) != 0)
		rp_strlcpy(host, "localhost", sizeof(host));
	if (rp_nccl_env_load(&env) != 0) {
		snprintf(err, err_len, "bad NCCL environment variable (see above)");
		return RP_EXIT_USAGE;
	}
	if (o->dev_spec)
		env.ib_hca = o->dev_spec;
	env.version = o->eng.ver.version;
	if (rp_node_discover(&node, &(struct rp_discover_opts){ .skip_gpus = !o->per_gpu }) != 0 || node.n_hcas == 0) {
		snprintf(err, err_len, "no RDMA adapter: %.200s", node.no_device_reason[0] ? node.no_device_reason : "none found");
		goto out;      /* the endpoint is the finding: a placeholder below */
	}
	if (rp_nccl_evaluate(&node, &env, &sel) != 0) {
		snprintf(err, err_len, "-d %s: not a valid NCCL_IB_HCA spec", o->dev_spec ? o->dev_spec : env.ib_hca);
		status = RP_EXIT_USAGE;
		goto out;
	}
	if (o->per_gpu) {
		if (!rp_mem_ops_find("cuda")) {
			snprintf(err, err_len, "--per-gpu needs CUDA memory, which this build does not have");
			status = RP_EXIT_ENV;
			goto out;
		}
		if ((size_t)local_rank >= node.n_gpus || node.gpus[local_rank].index < 0) {
			snprintf(err, err_len, "--per-gpu: local rank %d has no GPU (this node shows %zu)", local_rank, node.n_gpus);
			status = RP_EXIT_ENV;
			goto out;
		}
		gpu = &node.gpus[local_rank];
		n_near = rp_topo_nearest(&node, gpu, near, RP_ARRAY_SIZE(near));
		if (n_near > RP_ARRAY_SIZE(near))
			n_near = RP_ARRAY_SIZE(near);
		o->eng.cfg.src_mem.kind = o->eng.cfg.dst_mem.kind = "cuda";
		o->eng.cfg.src_mem.device = o->eng.cfg.dst_mem.device = gpu->index;
	}
	for (size_t i = 0; i < sel.n_selected && n < MX_MAX_LOCAL; i++) {
		const struct rp_nccl_sel *s = &sel.selected[i];
		const struct rp_hca *hca = &node.hcas[s->hca_idx];
		const struct rp_port *port = rp_hca_find_port(hca, s->port);
		bool keep = !gpu;

		for (size_t k = 0; k < n_near; k++)
			keep |= near[k] == s->hca_idx;
		if (!keep)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		rp_strlcpy(out[n].node, host, sizeof(out[n].node));
		rp_strlcpy(out[n].device, s->hca, sizeof(out[n].device));
		out[n].port = s->port;
		out[n].gid_index = o->eng.gid_seen ? o->eng.gid_index : s->gid_index;
		out[n].mtu = port ? port->active_mtu : 0;
		out[n].link_gbps = port ? port->rate_gbps : 0;
		n++;
	}
	if (n == 0)
		snprintf(err, err_len, "%s selects no active port%s", o->dev_spec ? o->dev_spec : "NCCL's selection",
			 gpu ? " near this rank's GPU" : "");
out:
	if (!status && n == 0)
		no_port_entry(o, host, &out[n++]);
	*n_p = n;
	rp_nccl_result_fini(&sel);
	rp_node_fini(&node);
	return status;
}

/* --- the endpoint table -------------------------------------------------------------------------- */

struct claim {
	struct mx_wire_ep w;
	int rank;
	const char *why;              /* MX_EP_NO_PORT: the rank's reason */
};

static int claim_cmp(const void *x, const void *y)
{
	const struct claim *a = x, *b = y;
	int c = strcmp(a->w.node, b->w.node);

	if (!c)
		c = strcmp(a->w.device, b->w.device);
	if (!c)
		c = a->w.port - b->w.port;
	if (!c)
		c = a->rank - b->rank;
	return c;
}

/* Sort every rank's ports into (node, device, port) order and give each endpoint one owner: among the
 * ranks that offered it, the one owning the fewest so far (ranks on one node share its adapters,
 * nothing is measured twice). Same input on every rank, same table. */
static int table_build(struct claim *cl, size_t n_cl, size_t n_ranks, struct mx_ep **eps_p, size_t *n_p)
{
	struct mx_ep *eps = calloc(n_cl ? n_cl : 1, sizeof(*eps));
	size_t *owned = calloc(n_ranks ? n_ranks : 1, sizeof(*owned)), n = 0;

	if (!eps || !owned) {
		free(eps);
		free(owned);
		return -ENOMEM;
	}
	qsort(cl, n_cl, sizeof(*cl), claim_cmp);
	for (size_t i = 0; i < n_cl;) {
		size_t j = i;
		int best = cl[i].rank;

		while (j < n_cl && claim_cmp(&(struct claim){ cl[i].w, 0, NULL }, &(struct claim){ cl[j].w, 0, NULL }) == 0) {
			if (owned[cl[j].rank] < owned[best])
				best = cl[j].rank;
			j++;
		}
		owned[best]++;
		rp_strlcpy(eps[n].ep.node, cl[i].w.node, sizeof(eps[n].ep.node));
		rp_strlcpy(eps[n].ep.device, cl[i].w.device, sizeof(eps[n].ep.device));
		eps[n].ep.port = cl[i].w.port;
		eps[n].ep.gid_index = cl[i].w.gid_index;
		eps[n].ep.mtu = cl[i].w.mtu;
		eps[n].ep.link_gbps = cl[i].w.link_gbps;
		eps[n].owner = best;
		if (cl[i].w.flags & MX_EP_NO_PORT)
			snprintf(eps[n].no_port, sizeof(eps[n].no_port), "%s", cl[i].why && cl[i].why[0] ? cl[i].why : "no port");
		n++;
		i = j;
	}
	free(owned);
	*eps_p = eps;
	*n_p = n;
	return 0;
}

/* Schedule endpoints: node numbers and index within node, from the sorted table. */
struct rp_sched_ep *mx_sched_eps(const struct mx_ep *eps, size_t n, size_t *n_nodes_p)
{
	struct rp_sched_ep *s = calloc(n ? n : 1, sizeof(*s));
	size_t node = 0;

	if (!s)
		return NULL;
	for (size_t e = 0; e < n; e++) {
		bool new_node = e > 0 && strcmp(eps[e].ep.node, eps[e - 1].ep.node) != 0;

		node += new_node;
		s[e].node = (uint32_t)node;
		s[e].rail = e == 0 || new_node ? 0 : s[e - 1].rail + 1;
	}
	*n_nodes_p = n ? node + 1 : 0;
	return s;
}

/* Share the ports; build the table. Every rank gets the same table, or all stop with the same status. */
int mx_gather_table(struct mx_opts *o, const struct rp_mpi_info *mi, struct mx_ep **eps_p, size_t *n_p)
{
	struct { struct mx_hdr h; struct mx_wire_ep e[MX_MAX_LOCAL]; } mine;
	size_t n_local = 0, *lens = NULL, *offs = NULL, n_cl = 0;
	char *all = NULL, err[sizeof(mine.h.error)] = "";
	struct claim *cl = NULL;
	int status, worst = 0;

	status = mx_local_ports(o, mi->local_rank, mine.e, &n_local, err, sizeof(err));
	mx_hdr_init(&mine.h, MX_KIND_EPS, mi->rank, 0, status ? 0 : n_local, sizeof(struct mx_wire_ep));
	mine.h.status = status;
	mine.h.run = rp_mpi_nonce_new();
	mine.h.nccl_version = o->eng.ver.version;
	rp_strlcpy(mine.h.error, err, sizeof(mine.h.error));
	/* Discovery on every node has had its time; the exchange itself waits a generous minute. */
	if (rp_mpi_allgather(&mine, mine.h.length, rp_now() + 60 + o->eng.cfg.timeout_s, &all, &lens, &offs) != 0) {
		fprintf(stderr, "rdmaprobe matrix: rank %d: start-up exchange failed (see above): stopping the job\n", mi->rank);
		rp_mpi_abort(RP_EXIT_ENV);
		exit(RP_EXIT_ENV);
	}
	for (int r = 0; r < mi->size; r++) {
		const struct mx_hdr *h = (const void *)(all + offs[r]);

		if (r == 0 && lens[0] >= sizeof(*h))
			rp_mpi_set_run(h->run);   /* rank 0's nonce names every message of this run */
		if (!mx_msg_ok(h, lens[r], MX_KIND_EPS, sizeof(struct mx_wire_ep))) {
			if (mi->rank == 0)
				fprintf(stderr, "rdmaprobe matrix: rank %d sent malformed endpoints (another rdmaprobe version?)\n", r);
			worst = RP_EXIT_ENV;
			continue;
		}
		if (h->status) {
			if (mi->rank == 0)
				fprintf(stderr, "rdmaprobe matrix: rank %d: %s\n", r, h->error);
			if (h->status > worst)
				worst = h->status;
		}
		n_cl += h->n;
	}
	cl = calloc(n_cl ? n_cl : 1, sizeof(*cl));
	o->rank_ver = calloc(mi->size > 0 ? (size_t)mi->size : 1, sizeof(*o->rank_ver));
	if (!worst && (!cl || !o->rank_ver))
		worst = RP_EXIT_ENV;
	for (int r = 0, k = 0; !worst && r < mi->size; r++) {
		const struct mx_hdr *h = (const void *)(all + offs[r]);
		const struct mx_wire_ep *w = (const void *)(h + 1);

		o->rank_ver[r].rank = r;
		o->rank_ver[r].version = h->nccl_version;
		snprintf(o->rank_ver[r].node, sizeof(o->rank_ver[r].node), "%.*s", RP_NAME_MAX - 1, h->n ? w[0].node : "?");
		o->n_rank_ver = (size_t)r + 1;
		for (uint32_t i = 0; i < h->n; i++, k++) {
			cl[k].w = w[i];
			cl[k].w.node[RP_NAME_MAX - 1] = cl[k].w.device[RP_NAME_MAX - 1] = '\0';
			cl[k].rank = r;
			cl[k].why = h->error;
			if ((w[i].flags & MX_EP_NO_PORT) && mi->rank == 0)
				fprintf(stderr, "rdmaprobe matrix: rank %d (%s): %s: its endpoint is reported as %s and not measured\n",
					r, cl[k].w.node, h->error, rp_status_code(RP_ST_NO_PORT));
		}
	}
	if (!worst && table_build(cl, n_cl, (size_t)(mi->size > 0 ? mi->size : 1), eps_p, n_p) != 0)
		worst = RP_EXIT_ENV;
	free(cl);
	free(all);
	free(lens);
	free(offs);
	return worst;
}
