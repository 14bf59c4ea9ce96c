/* engine_cli.c: shared options, validation, port selection and reports of loopback and pair; see
 * engine_cli.h. */
#include "engine_cli.h"
#include "ops_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "health/gpudirect.h"
#include "base/log.h"
#include "mem/mem.h"
#include "nccl/nccl.h"
#include "nccl/nccl_rules.h"
#include "report/report.h"
#include "verdict/retest.h"
#include "base/util.h"

void rp_cli_engine_init(struct rp_cli_engine *e)
{
	memset(e, 0, sizeof(*e));
	rp_engine_cfg_default(&e->cfg);
	e->size = e->cfg.meas.msg_size;
	e->iters = e->cfg.meas.iters;
	e->warmup = e->cfg.meas.warmup_iters;
	e->tx_depth = e->cfg.meas.tx_depth;
	e->qps = e->cfg.meas.n_qps;
	e->cq_mod = e->cfg.meas.cq_mod;
	e->timeout = e->cfg.timeout_s;
	e->interval = e->cfg.meas.interval_s;
	e->qp_timeout = e->cfg.qp.qp_timeout;
	e->retry_cnt = e->cfg.qp.retry_cnt;
	e->gid_index = -1;
	e->mem = "host";
	e->retest = RP_RETEST_DEFAULT;
	e->ver.version = RP_NCCL_VERSION_NEWEST;   /* until rp_cli_engine_finish() finds the release */
	e->ver.source = RP_NCCL_VSRC_DEFAULT;
}

size_t rp_cli_engine_opts(struct rp_cli_engine *e, struct rp_opt *t)
{
	const struct rp_opt opts[] = {
		{ "size", 's', RP_OPT_SIZE, &e->size, 1, 1ULL << 32, "SIZE", "bytes per write, units K/M/G, at most 1G (default 64K)", &e->size_seen },
		{ "all", 'a', RP_OPT_FLAG, &e->all, 0, 0, NULL, "sweep sizes 2 B to 8 MiB (powers of two)", NULL },
		{ "iters", 'n', RP_OPT_U64, &e->iters, 1, 1e12, "N", "measured writes or round trips (default 1000)", &e->iters_seen },
		{ "duration", 'D', RP_OPT_SECONDS, &e->duration, 0.01, 86400, "S", "measure for this long instead of -n", &e->duration_seen },
		{ "warmup", 0, RP_OPT_U64, &e->warmup, 0, 1e9, "N", "writes before the clock starts (default 16)", NULL },
		{ "tx-depth", 't', RP_OPT_U64, &e->tx_depth, 1, 8192, "N", "outstanding writes per QP (default 128)", NULL },
		{ "qps", 'q', RP_OPT_U64, &e->qps, 1, RP_ENGINE_MAX_QPS, "N", "QPs per pair (default 1)", NULL },
		{ "cq-mod", 0, RP_OPT_U64, &e->cq_mod, 1, 8192, "N", "signal one write in N (default 16, at most -t)", &e->cq_mod_seen },
		{ "latency", 'l', RP_OPT_FLAG, &e->latency, 0, 0, NULL, "latency mode: write ping-pong like ib_write_lat", NULL },
		{ "bidir", 'b', RP_OPT_FLAG, &e->bidir, 0, 0, NULL, "both directions of each pair at once, each verified and reported (like ib_write_bw -b)", NULL },
		{ "no-verify", 0, RP_OPT_FLAG, &e->no_verify, 0, 0, NULL, "skip the byte-by-byte check of the target", NULL },
		{ "gid-index", 'x', RP_OPT_INT, &e->gid_index, 0, 255, "N", "GID index (default: NCCL's rule)", &e->gid_seen },
		{ "qp-timeout", 0, RP_OPT_INT, &e->qp_timeout, 0, 31, "T", "ACK timeout exponent, 4.096us*2^T (default 14; NCCL 20)", NULL },
		{ "retry-cnt", 0, RP_OPT_INT, &e->retry_cnt, 0, 7, "N", "transport retries (default 7)", NULL },
		{ "tclass", 0, RP_OPT_INT, &e->tclass, 0, 255, "N", "traffic class (NCCL_IB_TC, default 0)", NULL },
		{ "timeout", 0, RP_OPT_SECONDS, &e->timeout, 0.1, 3600, "S", "deadline of each phase; in the run, the longest time without progress (default 10s)", NULL },
		{ "interval", 0, RP_OPT_SECONDS, &e->interval, 0.001, 3600, "S", "interval for the minimum Gb/s (default 100ms)", NULL },
		{ "mem", 0, RP_OPT_STR, &e->mem, 0, 0, "KIND", "buffers: host, cuda, cuda:IDX, auto (default host)", NULL },
		{ "src-mem", 0, RP_OPT_STR, &e->src_mem, 0, 0, "KIND", "the writer's buffer (overrides --mem)", NULL },
		{ "dst-mem", 0, RP_OPT_STR, &e->dst_mem, 0, 0, "KIND", "the target's buffer (overrides --mem)", NULL },
		{ "gpu", 0, RP_OPT_STR, &e->gpu, 0, 0, "N", "GPU index for cuda memory (default 0)", NULL },
		{ "gpu-reg", 0, RP_OPT_STR, &e->gpu_reg, 0, 0, "HOW", "GPU registration: auto, dmabuf, peermem", NULL },
		{ "hugepages", 0, RP_OPT_FLAG, &e->hugepages, 0, 0, NULL, "back host buffers with 2 MiB hugepages (fails if none are free)", NULL },
		{ "retest", 0, RP_OPT_U64, &e->retest, 0, RP_RETEST_MAX, "N", "measure a failed pair again up to N times before the verdict (default 1)", &e->retest_seen },
		{ "max-errors", 0, RP_OPT_STR, &e->max_errors, 0, 0, "LIMITS", "port counter limits per class, CLASS=N|N/GB|off,... (default link_flap=0,phys=0,retrans=10/GB)", NULL },
		{ "json", 0, RP_OPT_STR, &e->json, 0, 0, "FILE", "write every pair as JSON", NULL },
		{ "csv", 0, RP_OPT_STR, &e->csv, 0, 0, "FILE", "write every pair as CSV", NULL },
		{ "nccl-version", 0, RP_OPT_STR, &e->nccl_version, 0, 0, "X.Y.Z",
		  "select ports by this NCCL release's rules (default: the libnccl.so.2 found, else the newest)", NULL },
		{ "python", 0, RP_OPT_STR, &e->python, 0, 0, "ENV",
		  "look first for the nvidia-nccl-cu* wheel's libnccl in this Python environment (or its python)", NULL },
	};

	memcpy(t, opts, sizeof(opts));
	return RP_ARRAY_SIZE(opts);
}

/* "host", "cuda", "cuda:IDX", "auto" into spec; gpu applies to cuda without an index. */
static int parse_mem(const char *cmd, const char *opt, const char *text, int gpu, enum rp_gpu_reg reg,
		     struct rp_mem_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->gpu_reg = reg;
	if (strcmp(text, "host") == 0 || strcmp(text, "auto") == 0) {
		/* auto: host until GPU placement lands (a GPU is chosen only when asked for) */
		spec->kind = gpu >= 0 && strcmp(text, "auto") == 0 ? "cuda" : "host";
		spec->device = gpu >= 0 ? gpu : 0;
		return 0;
	}
	if (strcmp(text, "cuda") == 0) {
		spec->kind = "cuda";
		spec->device = gpu >= 0 ? gpu : 0;
		return 0;
	}
	if (strncmp(text, "cuda:", 5) == 0) {
		int idx;

		if (rp_parse_int(text + 5, 0, 1023, &idx) != 0) {
			fprintf(stderr, "rdmaprobe %s: --%s %s: the GPU index must be a number 0 to 1023\n", cmd, opt, text);
			return RP_EXIT_USAGE;
		}
		spec->kind = "cuda";
		spec->device = idx;
		return 0;
	}
	fprintf(stderr, "rdmaprobe %s: --%s %s: unknown memory (host, cuda, cuda:IDX, auto)\n", cmd, opt, text);
	return RP_EXIT_USAGE;
}

/* Allocate a page of the kind once, so a missing backend or GPU is an environment error up front. */
static int probe_mem(const char *cmd, const char *opt, const char *text, const struct rp_mem_spec *spec)
{
	struct rp_mem_buf buf;
	int rc;

	if (strcmp(spec->kind, "host") == 0 && !spec->hugepages)
		return 0;
	if (!rp_mem_ops_find(spec->kind)) {
		fprintf(stderr, "rdmaprobe %s: --%s %s: %s memory is not available in this build\n", cmd, opt, text,
			spec->kind);
		return RP_EXIT_ENV;
	}
	rc = rp_mem_alloc(&buf, spec, 4096);
	rp_mem_free(&buf);
	if (rc && spec->hugepages) {
		fprintf(stderr, "rdmaprobe %s: --hugepages: cannot allocate host memory on 2 MiB hugepages: %s "
			"(reserve some: echo N > /proc/sys/vm/nr_hugepages)\n", cmd, strerror(-rc));
		return RP_EXIT_ENV;
	}
	if (rc) {
		fprintf(stderr, "rdmaprobe %s: --%s %s: cannot allocate %s memory (device %d): %s\n", cmd, opt, text,
			spec->kind, spec->device, strerror(-rc));
		return RP_EXIT_ENV;
	}
	return 0;
}

/* The measurement's options against each other and their ranges (a smaller -t carries the default
 * --cq-mod down with it). RP_EXIT_GO_ON, or RP_EXIT_USAGE (said why). */
static int meas_check(struct rp_cli_engine *e, const char *cmd)
{
	if (e->duration_seen && e->iters_seen) {
		fprintf(stderr, "rdmaprobe %s: give either -n/--iters or -D/--duration, not both\n", cmd);
		return RP_EXIT_USAGE;
	}
	if (e->all && e->size_seen) {
		fprintf(stderr, "rdmaprobe %s: give either -s/--size or -a/--all, not both\n", cmd);
		return RP_EXIT_USAGE;
	}
	if (e->size >= (1ULL << 32)) {
		fprintf(stderr, "rdmaprobe %s: --size %llu: a work request's length is 32 bits: the size must be below "
			"4 GiB (at most %lluM)\n", cmd, (unsigned long long)e->size, RP_ENGINE_MAX_MSG_SIZE >> 20);
		return RP_EXIT_USAGE;
	}
	if (e->size > RP_ENGINE_MAX_MSG_SIZE) {
		fprintf(stderr, "rdmaprobe %s: --size %llu: at most %lluM, the largest buffer a pair allocates\n", cmd,
			(unsigned long long)e->size, RP_ENGINE_MAX_MSG_SIZE >> 20);
		return RP_EXIT_USAGE;
	}
	if (!e->duration_seen && e->iters + e->warmup > UINT64_MAX / e->size) {
		fprintf(stderr, "rdmaprobe %s: --iters %llu x --size %llu: the byte count overflows 64 bits\n", cmd,
			(unsigned long long)e->iters, (unsigned long long)e->size);
		return RP_EXIT_USAGE;
	}
	if (e->latency && e->bidir) {
		fprintf(stderr, "rdmaprobe %s: --bidir measures bandwidth in both directions: not with -l/--latency\n", cmd);
		return RP_EXIT_USAGE;
	}
	if (e->latency && e->duration_seen) {
		fprintf(stderr, "rdmaprobe %s: latency mode counts round trips: use -n, not -D\n", cmd);
		return RP_EXIT_USAGE;
	}
	if (e->cq_mod > e->tx_depth) {
		if (e->cq_mod_seen) {
			fprintf(stderr, "rdmaprobe %s: --cq-mod %llu is larger than the tx depth %llu\n", cmd,
				(unsigned long long)e->cq_mod, (unsigned long long)e->tx_depth);
			return RP_EXIT_USAGE;
		}
		e->cq_mod = e->tx_depth;   /* the default follows a smaller -t; a given value is never changed */
	}
	return RP_EXIT_GO_ON;
}

/* --gpu, --gpu-reg and the buffers' memory (--mem, --src-mem, --dst-mem) into the cfg's memory specs.
 * 0 or an exit status (said why). */
static int mem_options(struct rp_cli_engine *e, const char *cmd)
{
	struct rp_engine_cfg *c = &e->cfg;
	enum rp_gpu_reg reg = RP_GPU_REG_AUTO;
	int gpu = -1, rc;

	if (e->gpu) {
		if (strcmp(e->gpu, "nearest") == 0) {
			e->gpu_nearest = true;
			gpu = 0;   /* probed now; each side gets the GPU nearest its adapter per pair */
		} else if (rp_parse_int(e->gpu, 0, 1023, &gpu) != 0) {
			fprintf(stderr, "rdmaprobe %s: --gpu %s: not a GPU index (0 to 1023) or 'nearest'\n", cmd, e->gpu);
			return RP_EXIT_USAGE;
		}
	}
	if (e->gpu_reg) {
		if (strcmp(e->gpu_reg, "auto") == 0)
			reg = RP_GPU_REG_AUTO;
		else if (strcmp(e->gpu_reg, "dmabuf") == 0)
			reg = RP_GPU_REG_DMABUF;
		else if (strcmp(e->gpu_reg, "peermem") == 0)
			reg = RP_GPU_REG_PEERMEM;
		else {
			fprintf(stderr, "rdmaprobe %s: --gpu-reg %s: one of auto, dmabuf, peermem\n", cmd, e->gpu_reg);
			return RP_EXIT_USAGE;
		}
	}
	rc = parse_mem(cmd, e->src_mem ? "src-mem" : "mem", e->src_mem ? e->src_mem : e->mem, gpu, reg, &c->src_mem);
	if (!rc)
		rc = parse_mem(cmd, e->dst_mem ? "dst-mem" : "mem", e->dst_mem ? e->dst_mem : e->mem, gpu, reg, &c->dst_mem);
	if (rc)
		return rc;
	c->src_mem.hugepages = e->hugepages && strcmp(c->src_mem.kind, "host") == 0;
	c->dst_mem.hugepages = e->hugepages && strcmp(c->dst_mem.kind, "host") == 0;
	return 0;
}

/* The measurement and the QPs' settings into the cfg, as checked. */
static void cfg_fill(const struct rp_cli_engine *e, struct rp_engine_cfg *c)
{
	c->meas.mode = e->latency ? RP_MODE_LAT : RP_MODE_BW;
	c->meas.msg_size = e->size;
	c->meas.iters = e->duration_seen ? 0 : e->iters;
	c->meas.duration_s = e->duration_seen ? e->duration : 0;
	c->meas.warmup_iters = e->warmup;
	c->meas.tx_depth = (unsigned)e->tx_depth;
	c->meas.n_qps = (unsigned)e->qps;
	c->meas.cq_mod = (unsigned)e->cq_mod;
	c->meas.interval_s = e->interval;
	c->meas.verify = !e->no_verify;
	c->meas.bidir = e->bidir;
	c->qp.qp_timeout = e->qp_timeout;
	c->qp.retry_cnt = e->retry_cnt;
	c->qp.traffic_class = e->tclass;
	c->timeout_s = e->timeout;
}

int rp_cli_engine_finish(struct rp_cli_engine *e, const char *cmd)
{
	struct rp_engine_cfg *c = &e->cfg;
	int rc = meas_check(e, cmd);

	if (rc != RP_EXIT_GO_ON)
		return rc;
	rc = mem_options(e, cmd);
	if (rc)
		return rc;
	cfg_fill(e, c);
	if (e->max_errors) {
		char why[160];

		if (rp_ctr_limits_parse(e->max_errors, &c->ctr_limits, why, sizeof(why)) != 0) {
			fprintf(stderr, "rdmaprobe %s: --max-errors %s: %s\n", cmd, e->max_errors, why);
			return RP_EXIT_USAGE;
		}
	}
	if (e->all) {
		for (size_t s = 2; s <= (8u << 20); s *= 2)
			e->sizes[e->n_sizes++] = s;
	} else {
		e->sizes[e->n_sizes++] = e->size;
	}
	if (rp_engine_cfg_validate(c) != 0)
		return RP_EXIT_USAGE;
	if (e->nccl_version) {
		if (rp_nccl_version_from_option(e->nccl_version, &e->ver) != 0)
			return RP_EXIT_USAGE;   /* logged, naming --nccl-version */
	} else {
		rp_nccl_version_find(e->python, &e->ver);
	}
	rc = probe_mem(cmd, e->src_mem ? "src-mem" : "mem", e->src_mem ? e->src_mem : e->mem, &c->src_mem);
	if (!rc && (strcmp(c->src_mem.kind, c->dst_mem.kind) || c->src_mem.device != c->dst_mem.device))
		rc = probe_mem(cmd, e->dst_mem ? "dst-mem" : "mem", e->dst_mem ? e->dst_mem : e->mem, &c->dst_mem);
	return rc;
}

/* The path from each CUDA-indexed GPU to hca, and the nearest GPU's CUDA index, under m (NCCL's
 * NIC bus-id merge of the release in use). */
static void port_gpus(const struct rp_node *node, const struct rp_hca *hca, const struct rp_topo_merge *m,
		      struct rp_cli_port *p)
{
	int pos;

	p->gpu_nearest = -1;
	memset(p->gpu_path, RP_CLI_PATH_UNKNOWN, sizeof(p->gpu_path));
	if (!hca)
		return;
	for (size_t g = 0; g < node->n_gpus; g++) {
		int idx = node->gpus[g].index;

		if (idx >= 0 && idx < RP_CLI_MAX_GPUS)
			p->gpu_path[idx] = (signed char)rp_topo_path_m(node, &node->gpus[g], hca, m);
	}
	pos = rp_topo_nearest_gpu_m(node, hca, m, NULL);
	if (pos >= 0)
		p->gpu_nearest = node->gpus[pos].index;
}

/* The GPU that holds side's buffer for port p: the nearest one with --gpu nearest, else the spec's. */
static int side_gpu(const struct rp_cli_engine *e, const struct rp_mem_spec *side, const struct rp_cli_port *p)
{
	if (strcmp(side->kind, "cuda") != 0)
		return -1;
	if (e->gpu_nearest && p && p->gpu_nearest >= 0)
		return p->gpu_nearest;
	return side->device;
}

void rp_cli_pair_cfg(const struct rp_cli_engine *e, const struct rp_cli_port *src, const struct rp_cli_port *dst,
		     struct rp_engine_cfg *cfg)
{
	*cfg = e->cfg;
	if (!e->gpu_nearest)
		return;
	if (src && side_gpu(e, &cfg->src_mem, src) >= 0)
		cfg->src_mem.device = side_gpu(e, &cfg->src_mem, src);
	if (dst && side_gpu(e, &cfg->dst_mem, dst) >= 0)
		cfg->dst_mem.device = side_gpu(e, &cfg->dst_mem, dst);
}

size_t rp_cli_warn_gdr(const struct rp_cli_engine *e, const struct rp_cli_port *ports, size_t n, bool as_src,
		       bool as_dst)
{
	struct rp_nccl_env env;
	size_t warned = 0;

	if (rp_nccl_env_load(&env) != 0)
		return 0;   /* already reported when the ports were selected */
	if (e->gpu_nearest && n) {
		char rel[RP_PATHBUF + 320];

		rp_nccl_version_describe(&e->ver, rel, sizeof(rel));
		fprintf(stderr, "--gpu nearest, as NCCL %s places GPUs and adapters:", rel);
		for (size_t i = 0; i < n; i++)
			if (ports[i].gpu_nearest >= 0)
				fprintf(stderr, "%s %s:%d cuda:%d", i ? "," : "", ports[i].device, ports[i].port,
					ports[i].gpu_nearest);
			else
				fprintf(stderr, "%s %s:%d no GPU", i ? "," : "", ports[i].device, ports[i].port);
		fprintf(stderr, "\n");
	}
	for (size_t i = 0; i < n; i++) {
		int g_src = as_src ? side_gpu(e, &e->cfg.src_mem, &ports[i]) : -1;
		int g_dst = as_dst ? side_gpu(e, &e->cfg.dst_mem, &ports[i]) : -1;
		int gpus[2] = { g_src, g_dst == g_src ? -1 : g_dst };

		for (int k = 0; k < 2; k++) {
			char label[16];
			int g = gpus[k];

			if (g < 0 || g >= RP_CLI_MAX_GPUS || ports[i].gpu_path[g] == RP_CLI_PATH_UNKNOWN)
				continue;
			snprintf(label, sizeof(label), "cuda:%d", g);
			if (rp_gdr_warn_unused(label, ports[i].device, (enum rp_path)ports[i].gpu_path[g], env.gdr_level))
				warned++;
		}
	}
	return warned;
}

/* No port selected: says why (spec, from -d or NCCL_IB_HCA, selected none, or no port is active at
 * all), with the adapters here. */
static void no_port_error(const char *cmd, const char *spec, int only_port, const struct rp_node *node)
{
	char names[512] = "";

	for (size_t h = 0; h < node->n_hcas; h++) {
		strncat(names, h ? ", " : "", sizeof(names) - strlen(names) - 1);
		strncat(names, node->hcas[h].name, sizeof(names) - strlen(names) - 1);
	}
	if (spec)
		fprintf(stderr, "rdmaprobe %s: '%s'%s selects no active port (adapters here: %s)\n", cmd, spec,
			only_port > 0 ? " with that port" : "", names);
	else
		fprintf(stderr, "rdmaprobe %s: no active port on any adapter (%s)\n", cmd, names);
}

int rp_cli_select_ports(const char *cmd, const char *spec, int only_port, int gid_override, uint32_t nccl_version,
			struct rp_cli_port **ports_p, size_t *n_p, struct rp_node *keep)
{
	struct rp_node node;
	struct rp_nccl_env env;
	struct rp_nccl_result sel;
	struct rp_topo_merge merge;
	struct rp_cli_port *ports = NULL;
	size_t n = 0;
	int rc, status = 0;

	*ports_p = NULL;
	*n_p = 0;
	if (keep)
		memset(keep, 0, sizeof(*keep));
	memset(&sel, 0, sizeof(sel));
	rc = rp_nccl_env_load(&env);
	if (rc) {
		fprintf(stderr, "rdmaprobe %s: bad NCCL environment variable (see above)\n", cmd);
		return RP_EXIT_USAGE;
	}
	if (spec)
		env.ib_hca = spec;
	env.version = nccl_version;
	rc = rp_node_discover(&node, &(struct rp_discover_opts){ .skip_gpus = false });
	if (rc) {
		fprintf(stderr, "rdmaprobe %s: cannot discover adapters: %s\n", cmd, strerror(-rc));
		rp_node_fini(&node);
		return RP_EXIT_ENV;
	}
	if (node.n_hcas == 0) {
		fprintf(stderr, "rdmaprobe %s: no RDMA adapter: %s\n", cmd,
			node.no_device_reason[0] ? node.no_device_reason : "none found");
		rp_node_fini(&node);
		return RP_EXIT_ENV;
	}
	rp_nccl_topo_merge(&env, &merge);   /* --gpu nearest follows the release's topology */
	rc = rp_nccl_evaluate(&node, &env, &sel);
	if (rc) {
		fprintf(stderr, "rdmaprobe %s: -d %s: not a valid NCCL_IB_HCA spec\n", cmd, spec ? spec : "(NCCL_IB_HCA)");
		status = RP_EXIT_USAGE;
		goto out;
	}
	ports = calloc(sel.n_selected ? sel.n_selected : 1, sizeof(*ports));
	if (!ports) {
		fprintf(stderr, "rdmaprobe %s: out of memory\n", cmd);
		status = RP_EXIT_ENV;
		goto out;
	}
	for (size_t i = 0; i < sel.n_selected; i++) {
		if (only_port > 0 && sel.selected[i].port != only_port)
			continue;
		rp_strlcpy(ports[n].device, sel.selected[i].hca, sizeof(ports[n].device));
		ports[n].port = sel.selected[i].port;
		ports[n].gid_index = gid_override >= 0 ? gid_override : sel.selected[i].gid_index;
		port_gpus(&node, rp_node_find_hca(&node, ports[n].device), &merge, &ports[n]);
		n++;
	}
	if (n == 0) {
		no_port_error(cmd, spec ? spec : env.ib_hca, only_port, &node);
		status = spec || only_port > 0 ? RP_EXIT_USAGE : RP_EXIT_ENV;
		free(ports);
		ports = NULL;
		goto out;
	}
	*ports_p = ports;
	*n_p = n;
out:
	rp_nccl_result_fini(&sel);
	if (keep)
		*keep = node;
	else
		rp_node_fini(&node);
	return status;
}

bool rp_cli_nccl_crash(struct rp_cli_engine *e, const char *cmd, const struct rp_node *known)
{
	struct rp_nccl_env env;
	struct rp_node own;
	const struct rp_node *node = known;
	char rel[RP_PATHBUF + 320];

	e->nccl_crash[0] = '\0';
	if (rp_nccl_env_load(&env) != 0)
		return false;   /* rp_cli_select_ports() says what is wrong */
	env.version = e->ver.version;
	if (!known) {
		if (rp_node_discover(&own, &(struct rp_discover_opts){ .skip_gpus = true }) != 0) {
			rp_node_fini(&own);
			return false;
		}
		node = &own;
	}
	if (node->n_hcas && rp_nccl_crash_check(node, &env, e->nccl_crash, sizeof(e->nccl_crash)) == 1) {
		rp_nccl_version_describe(&e->ver, rel, sizeof(rel));
		fprintf(stderr, "rdmaprobe %s: WARNING nccl_crash: NCCL %s would crash on this node: %s\n", cmd, rel,
			e->nccl_crash);
	}
	if (!known)
		rp_node_fini(&own);
	return e->nccl_crash[0] != '\0';
}

void rp_cli_named_unusable(struct rp_cli_engine *e, const char *cmd, const char *spec, const struct rp_node *node)
{
	struct rp_nccl_env env;
	struct rp_nccl_result sel;

	e->unusable[0] = '\0';
	if (!node->n_hcas || rp_nccl_env_load(&env) != 0)
		return;
	if (spec)
		env.ib_hca = spec;
	if (!env.ib_hca)
		return;   /* nothing named: NCCL's own choice drops nothing the user asked for */
	env.version = e->ver.version;
	memset(&sel, 0, sizeof(sel));
	if (rp_nccl_evaluate(node, &env, &sel) == 0)
		for (size_t i = 0; i < sel.n_warnings; i++) {
			size_t len = strlen(e->unusable);

			if (sel.warnings[i].code == RP_NCCL_W_PORT_NOT_ACTIVE)
				snprintf(e->unusable + len, sizeof(e->unusable) - len, "%s%s", len ? "; " : "",
					 sel.warnings[i].message);
		}
	rp_nccl_result_fini(&sel);
	if (e->unusable[0])
		fprintf(stderr, "rdmaprobe %s: WARNING port_not_active: %s names an adapter that is not usable: %s\n", cmd,
			spec ? "-d" : "NCCL_IB_HCA", e->unusable);
}

int rp_cli_nccl_crash_status(const struct rp_cli_engine *e, int status)
{
	char v[16];

	if (e->unusable[0]) {
		printf("port_not_active: an adapter named explicitly is not usable and was not measured: %s; exit 1\n",
		       e->unusable);
		if (status == RP_EXIT_OK)
			status = RP_EXIT_FAIL;
	}
	if (!e->nccl_crash[0])
		return status;
	rp_nccl_version_format(e->ver.version, v, sizeof(v));
	printf("nccl_crash: NCCL %s (%s) would crash on this node: %s; exit 1 (a job's setting, not the "
	       "fabric: no adapter is drained for it; 'rdmaprobe nccl' shows the selection)\n", v,
	       rp_nccl_version_source_str(e->ver.source), e->nccl_crash);
	return status == RP_EXIT_OK ? RP_EXIT_FAIL : status;
}

/* {"code": "nccl_crash" or "port_not_active", "message", "fatal": true} in a top-level "warnings"
 * array of root. */
static int add_crash_warning(const struct rp_cli_engine *e, json_t *root, bool unusable)
{
	json_t *list = json_object_get(root, "warnings"), *w;
	char v[16], msg[480];

	rp_nccl_version_format(e->ver.version, v, sizeof(v));
	if (unusable)
		snprintf(msg, sizeof(msg), "an adapter named explicitly is not usable and was not measured: %s", e->unusable);
	else
		snprintf(msg, sizeof(msg), "NCCL %s would crash on this node: %s", v, e->nccl_crash);
	w = json_pack("{s:s, s:s, s:b}", "code", unusable ? "port_not_active" : "nccl_crash", "message", msg, "fatal", 1);
	if (!w)
		return -ENOMEM;
	if (!list) {
		list = json_array();
		if (!list || json_object_set_new(root, "warnings", list) != 0) {
			json_decref(w);
			return -ENOMEM;
		}
	}
	return json_array_append_new(list, w) ? -ENOMEM : 0;   /* w is released on failure too */
}

int rp_cli_check_outputs(const struct rp_cli_engine *e, const char *cmd)
{
	const char *opt[2] = { "json", "csv" }, *path[2] = { e->json, e->csv };

	for (int i = 0; i < 2; i++) {
		if (path[i] && rp_report_path_check(path[i]) != 0) {
			fprintf(stderr, "rdmaprobe %s: --%s %s: cannot write the report there; nothing was measured\n", cmd,
				opt[i], path[i]);
			return RP_EXIT_USAGE;
		}
	}
	return 0;
}

int rp_cli_write_reports(const struct rp_cli_engine *e, const char *cmd, int argc, char **argv,
			 const struct rp_pair_result *pairs, size_t n)
{
	return rp_cli_write_reports_with(e, cmd, argc, argv, pairs, n, NULL, NULL);
}

int rp_cli_write_reports_with(const struct rp_cli_engine *e, const char *cmd, int argc, char **argv,
			      const struct rp_pair_result *pairs, size_t n, const char *key, json_t *section)
{
	struct rp_report_info info = { .command = cmd, .version = rp_version_string(), .cfg = &e->cfg };
	char **full = calloc((size_t)argc + 2, sizeof(*full));
	int status = 0;

	/* the command line as typed: "rdmaprobe CMD" and the command's arguments */
	if (!full) {
		fprintf(stderr, "rdmaprobe %s: out of memory\n", cmd);
		return RP_EXIT_ENV;
	}
	full[0] = (char *)"rdmaprobe";
	full[1] = (char *)cmd;
	memcpy(full + 2, argv, (size_t)argc * sizeof(*argv));
	info.argc = argc + 2;
	info.argv = full;

	if (e->json) {
		json_t *root = rp_report_json(&info, pairs, n);
		const char *bad = root ? NULL : "report";
		int rc = 0;

		/* key NULL: every key of section joins the report */
		if (!bad && section && (key ? json_object_set(root, key, section) : json_object_update(root, section)) != 0)
			bad = key ? key : "report";
		if (!bad && json_object_set_new(root, "nccl_version", rp_nccl_version_json(&e->ver)) != 0)
			bad = "nccl_version";
		if (!bad && e->nccl_crash[0] && add_crash_warning(e, root, false) != 0)
			bad = "warnings";
		if (!bad && e->unusable[0] && add_crash_warning(e, root, true) != 0)
			bad = "warnings";
		if (!bad)
			rc = rp_report_write_json(root, e->json);
		if (bad || rc) {
			rp_cli_write_failed(cmd, e->json, rc, bad);
			status = RP_EXIT_ENV;
		}
		json_decref(root);
	}
	if (e->csv) {
		int rc = rp_report_write_csv(pairs, n, e->csv);

		if (rc) {
			rp_cli_write_failed(cmd, e->csv, rc, NULL);
			status = RP_EXIT_ENV;
		}
	}
	free(full);
	return status;
}

/* One direction: "src -> dst  status  size N  rate ..." without the elapsed time. */
static void print_direction(const struct rp_pair_result *r)
{
	printf("%s:%d -> %s:%d  %-14s", r->src.device, r->src.port, r->dst.device, r->dst.port, rp_status_code(r->status));
	if (r->status == RP_ST_OK) {
		if (r->lat.measured)
			printf(" size %zu  latency us: min %.2f median %.2f p99 %.2f max %.2f", r->msg_size, r->lat.min_us,
			       r->lat.median_us, r->lat.p99_us, r->lat.max_us);
		else
			printf(" size %zu  %.3f Gb/s (min %.3f)", r->msg_size, r->gbps, r->gbps_min);
		printf("  %s", r->verified ? "verified" : "not verified");
	} else {
		printf(" %s", r->reason);
	}
}

void rp_cli_print_result(const struct rp_pair_result *r)
{
	struct rp_pair_result fwd, rev;

	if (!r->reverse.measured) {
		print_direction(r);
		printf("  (%.1f s)\n", r->elapsed_s);
		return;
	}
	/* --bidir: each direction on its own line, then the sum */
	fwd = *r;
	rp_pair_reverse_unfold(&fwd);
	rp_pair_reverse_view(r, &rev);
	print_direction(&fwd);
	printf("\n");
	print_direction(&rev);
	printf("\nboth directions: %s, %.3f Gb/s in all  (%.1f s)\n", rp_status_code(r->status), rp_pair_gbps_sum(r),
	       r->elapsed_s);
}
