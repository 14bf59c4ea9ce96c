/* cmd_matrix.c: 'rdmaprobe matrix': every (node, adapter) pair of a cluster under mpirun/srun, in
 * contention-free rounds, with a verdict per node. MPI is the only side channel.
 *
 * Every rank: select its ports (NCCL_IB_HCA rules), share them (one allgather at start), agree on the
 * endpoint table and the schedule (a pure function of both), then per round run its sides of the
 * round's pairs in threads (both directions of each pair), report to rank 0, and wait for rank 0's
 * "go" (which names ranks that stopped answering, so nobody waits on them again). Rank 0 keeps the
 * results, rewrites the reports after rounds, and prints the verdict. Only point-to-point calls polled
 * against deadlines after the start: a dead rank costs a deadline, never a hang.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "engine_cli.h"
#include "log.h"
#include "matrix.h"
#include "nccl.h"
#include "node.h"
#include "oob_mpi.h"
#include "opts.h"
#include "schedule.h"
#include "topo.h"
#include "util.h"
#include "verdict.h"

static volatile sig_atomic_t mx_stop;

#define MX_MAGIC 0x52504d58u   /* "RPMX" */
#define MX_VERSION 2             /* 2: EPS names the run's nonce; messages travel in oob_mpi's envelope */
#define MX_TAG_REPORT 11
#define MX_TAG_GO 12
#define MX_PLAN_SETUP_S 0.05   /* assumed set-up cost of one direction of a pair, for --plan */
#define MX_MAX_LOCAL 64        /* ports one rank may drive */

enum mx_kind { MX_KIND_EPS = 1, MX_KIND_REPORT, MX_KIND_GO };

/* --- wire: fixed, versioned, validated on receipt ---------------------------------------------- */

struct mx_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t kind;
	uint32_t length;              /* the whole message */
	int32_t rank;
	uint32_t round;
	uint32_t n;                   /* records after the header */
	int32_t status;               /* EPS: 0 or an exit status; GO: 1 = stop */
	uint64_t run;                 /* EPS: the sender's nonce for the run (rank 0's is the run's) */
	char error[236];              /* EPS: why this rank has no endpoints */
};

struct mx_wire_ep {
	char node[RP_NAME_MAX];
	char device[RP_NAME_MAX];
	int32_t port;
	int32_t gid_index;
	int32_t mtu;
	int32_t pad;
	double link_gbps;
};

struct mx_wire_res {
	uint32_t idx;                 /* pair number within the round */
	uint32_t dir;                 /* 0: a->b, 1: b->a */
	uint32_t writer;              /* 1 when the sender drove the writing side */
	uint32_t pad;
	struct rp_pair_result r;
};

static bool str_terminated(const char *s, size_t len)
{
	return memchr(s, '\0', len) != NULL;
}

/* Check a received message's header and size; rec_size = size of one record (0 for GO's int32s). */
static bool msg_ok(const void *buf, size_t len, enum mx_kind kind, size_t rec_size)
{
	const struct mx_hdr *h = buf;

	if (len < sizeof(*h) || h->magic != MX_MAGIC || h->version != MX_VERSION || h->kind != kind ||
	    h->length != len || !str_terminated(h->error, sizeof(h->error)))
		return false;
	return (len - sizeof(*h)) == (size_t)h->n * rec_size;
}

static void hdr_init(struct mx_hdr *h, enum mx_kind kind, int rank, size_t round, size_t n, size_t rec_size)
{
	memset(h, 0, sizeof(*h));
	h->magic = MX_MAGIC;
	h->version = MX_VERSION;
	h->kind = (uint16_t)kind;
	h->rank = rank;
	h->round = (uint32_t)round;
	h->n = (uint32_t)n;
	h->length = (uint32_t)(sizeof(*h) + n * rec_size);
}

/* --- options ------------------------------------------------------------------------------------ */

struct mx_opts {
	struct rp_cli_engine eng;
	const char *dev_spec, *node_name, *pattern_s, *min_bw_s, *html, *junit;
	bool per_gpu, plan, summary;
	uint64_t seed, nodes, hcas;
	double rate, outlier, round_timeout;
	bool nodes_seen, hcas_seen, rate_seen, outlier_seen, round_timeout_seen, mem_seen;
	/* derived */
	struct rp_pattern pattern;
	struct rp_verdict_cfg vcfg;
	char pattern_text[32];
};

static const char usage_text[] =
	"[options]   (under mpirun/srun; --plan needs neither MPI nor hardware)\n\n"
	"Measures every (node, adapter) pair the pattern names, in contention-free rounds, and says which\n"
	"adapters to drain and what NCCL_IB_HCA each node should use. Exit: 0 pass, 1 failures, 2 usage,\n"
	"3 environment.\n"
	"  --min-bw: 0.9 or 90% = fraction of the pair's link rate; 180G = absolute Gb/s; 0 = none";

static void sig_stop(int sig)
{
	(void)sig;
	mx_stop = 1;
}

/* Parse, validate, derive. Returns -1 to go on, or an exit status. */
static int opts_parse(struct mx_opts *o, int argc, char **argv)
{
	struct rp_opt table[RP_CLI_ENGINE_OPTS + 24];
	size_t n;
	int rc;

	memset(o, 0, sizeof(*o));
	rp_cli_engine_init(&o->eng);
	o->pattern_s = "full";
	o->seed = 1;
	o->rate = 400;
	o->nodes = 1;
	rp_verdict_cfg_default(&o->vcfg);
	o->outlier = o->vcfg.outlier;
	n = rp_cli_engine_opts(&o->eng, table);
	const struct rp_opt mine[] = {
		{ "dev", 'd', RP_OPT_STR, &o->dev_spec, 0, 0, "SPEC", "ports to use, NCCL_IB_HCA syntax (default: NCCL's selection)", NULL },
		{ "node", 0, RP_OPT_STR, &o->node_name, 0, 0, "NAME", "this rank's node name (default: host name)", NULL },
		{ "per-gpu", 0, RP_OPT_FLAG, &o->per_gpu, 0, 0, NULL, "one rank per GPU: the local rank's GPU and its nearest adapter(s)", NULL },
		{ "pattern", 'p', RP_OPT_STR, &o->pattern_s, 0, 0, "P", "full, rail, intra, shift, sample:K (default full)", NULL },
		{ "seed", 0, RP_OPT_U64, &o->seed, 0, 1.8e19, "N", "seed of sample:K (default 1)", NULL },
		{ "plan", 0, RP_OPT_FLAG, &o->plan, 0, 0, NULL, "print the schedule and estimates; no MPI, no hardware", NULL },
		{ "nodes", 0, RP_OPT_U64, &o->nodes, 1, 1 << 20, "N", "--plan: nodes (default 1)", &o->nodes_seen },
		{ "hcas", 0, RP_OPT_U64, &o->hcas, 1, 1024, "N", "--plan: ports per node (default: this node's selection)", &o->hcas_seen },
		{ "rate", 0, RP_OPT_DOUBLE, &o->rate, 0.001, 1e6, "GBPS", "--plan with --hcas: link rate (default 400)", &o->rate_seen },
		{ "min-bw", 0, RP_OPT_STR, &o->min_bw_s, 0, 0, "X", "fail pairs below X: 0.9 / 90% of link rate, or 180G (default 0.9)", NULL },
		{ "outlier", 0, RP_OPT_DOUBLE, &o->outlier, 0, 1, "F", "fail pairs below F x their row/column median (default 0.5; 0 off)", &o->outlier_seen },
		{ "html", 0, RP_OPT_STR, &o->html, 0, 0, "FILE", "write a self-contained HTML page", NULL },
		{ "junit", 0, RP_OPT_STR, &o->junit, 0, 0, "FILE", "write JUnit XML (each pair a test case)", NULL },
		{ "summary", 0, RP_OPT_FLAG, &o->summary, 0, 0, NULL, "per-node summary on stdout even for small runs", NULL },
		{ "round-timeout", 0, RP_OPT_SECONDS, &o->round_timeout, 1, 86400, "S", "wait this long for a round's reports (default: from --timeout)", &o->round_timeout_seen },
	};

	memcpy(table + n, mine, sizeof(mine));
	memset(table + n + RP_ARRAY_SIZE(mine), 0, sizeof(table[0]));
	rc = rp_opts_parse("matrix", usage_text, table, argc, argv, NULL, 0, NULL);
	if (rc == 1)
		return RP_EXIT_OK;
	if (rc)
		return RP_EXIT_USAGE;
	if (rp_pattern_parse(o->pattern_s, &o->pattern) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --pattern %s: one of full, rail, intra, shift, sample:K (K >= 1)\n", o->pattern_s);
		return RP_EXIT_USAGE;
	}
	rp_pattern_str(&o->pattern, o->pattern_text, sizeof(o->pattern_text));
	if (o->min_bw_s && rp_verdict_min_bw_parse(o->min_bw_s, &o->vcfg) != 0) {
		fprintf(stderr, "rdmaprobe matrix: --min-bw %s: a fraction of the link rate (0.9 or 90%%) or Gb/s with a "
				"unit (180G); 0 for none\n", o->min_bw_s);
		return RP_EXIT_USAGE;
	}
	o->vcfg.outlier = o->outlier;
	if (o->eng.all) {
		fprintf(stderr, "rdmaprobe matrix: -a/--all is for loopback and pair; give one -s\n");
		return RP_EXIT_USAGE;
	}
	if (o->eng.latency && !o->min_bw_s && !o->outlier_seen) {
		o->vcfg.min_bw = 0;     /* defaults only: latency mode measures no bandwidth */
		o->vcfg.outlier = 0;
	} else if (o->eng.latency) {
		fprintf(stderr, "rdmaprobe matrix: --min-bw and --outlier judge bandwidth; latency mode (-l) measures none\n");
		return RP_EXIT_USAGE;
	}
	if (!o->plan && (o->nodes_seen || o->hcas_seen || o->rate_seen)) {
		fprintf(stderr, "rdmaprobe matrix: --nodes, --hcas and --rate describe a cluster for --plan only\n");
		return RP_EXIT_USAGE;
	}
	if (o->rate_seen && !o->hcas_seen) {
		fprintf(stderr, "rdmaprobe matrix: --rate goes with --hcas (without it the plan uses this node's ports and rates)\n");
		return RP_EXIT_USAGE;
	}
	o->mem_seen = strcmp(o->eng.mem, "host") != 0 || o->eng.src_mem || o->eng.dst_mem;
	if (o->per_gpu && o->mem_seen) {
		fprintf(stderr, "rdmaprobe matrix: --per-gpu puts buffers on each rank's GPU; drop --mem/--src-mem/--dst-mem\n");
		return RP_EXIT_USAGE;
	}
	if (o->eng.gpu && strcmp(o->eng.gpu, "nearest") == 0) {
		fprintf(stderr, "rdmaprobe matrix: --gpu nearest: use --per-gpu (each rank's GPU and its nearest adapters)\n");
		return RP_EXIT_USAGE;
	}
	rc = rp_cli_engine_finish(&o->eng, "matrix");
	if (rc)
		return rc;
	if (o->eng.cfg.run_limit_s <= 0)
		o->eng.cfg.run_limit_s = o->eng.cfg.meas.duration_s > 0 ? o->eng.cfg.meas.duration_s + 2 * o->eng.cfg.timeout_s
									   : 4 * o->eng.cfg.timeout_s;
	return -1;
}

/* --- local ports --------------------------------------------------------------------------------- */

/* This rank's ports under -d / NCCL_IB_HCA (and, with --per-gpu, the GPU's nearest adapters).
 * Returns 0, or an exit status with the reason in err. */
static int local_ports(struct mx_opts *o, int local_rank, struct mx_wire_ep *out, size_t *n_p, char *err, size_t err_len)
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
	if (rp_node_discover(&node, &(struct rp_discover_opts){ .skip_gpus = !o->per_gpu }) != 0 || node.n_hcas == 0) {
		snprintf(err, err_len, "no RDMA adapter: %.200s", node.no_device_reason[0] ? node.no_device_reason : "none found");
		status = RP_EXIT_ENV;
		goto out;
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
	if (n == 0) {
		snprintf(err, err_len, "%s selects no active port%s", o->dev_spec ? o->dev_spec : "NCCL's selection",
			 gpu ? " near this rank's GPU" : "");
		status = o->dev_spec ? RP_EXIT_USAGE : RP_EXIT_ENV;
	}
out:
	*n_p = n;
	rp_nccl_result_fini(&sel);
	rp_node_fini(&node);
	return status;
}

/* --- the endpoint table -------------------------------------------------------------------------- */

struct claim {
	struct mx_wire_ep w;
	int rank;
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

		while (j < n_cl && claim_cmp(&(struct claim){ cl[i].w, 0 }, &(struct claim){ cl[j].w, 0 }) == 0) {
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
		n++;
		i = j;
	}
	free(owned);
	*eps_p = eps;
	*n_p = n;
	return 0;
}

/* Schedule endpoints: node numbers and index within node, from the sorted table. */
static struct rp_sched_ep *sched_eps(const struct mx_ep *eps, size_t n, size_t *n_nodes_p)
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

/* --- --plan ---------------------------------------------------------------------------------------- */

static void human_bytes(double b, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t u = 0;

	while (b >= 1024 && u + 1 < RP_ARRAY_SIZE(units)) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", b, units[u]);
}

static int run_plan(struct mx_opts *o)
{
	struct mx_wire_ep local[MX_MAX_LOCAL];
	size_t n_local = 0, n_eps, max_pairs, got;
	struct rp_sched_ep *se = NULL;
	struct rp_sched *s = NULL;
	struct rp_sched_pair *pairs = NULL;
	double *rate = NULL, total_s = 0, bytes_dir;
	const struct rp_engine_cfg *c = &o->eng.cfg;
	char err[256], b1[32], b2[32];
	int status = RP_EXIT_OK;

	if (!o->hcas_seen) {
		status = local_ports(o, 0, local, &n_local, err, sizeof(err));
		if (status) {
			fprintf(stderr, "rdmaprobe matrix: --plan without --hcas uses this node's ports: %s\n", err);
			return status;
		}
		o->hcas = n_local;
	}
	n_eps = (size_t)(o->nodes * o->hcas);
	se = calloc(n_eps, sizeof(*se));
	rate = calloc(n_eps, sizeof(*rate));
	if (!se || !rate) {
		fprintf(stderr, "rdmaprobe matrix: out of memory for %zu endpoints\n", n_eps);
		status = RP_EXIT_ENV;
		goto out;
	}
	for (size_t e = 0; e < n_eps; e++) {
		se[e].node = (uint32_t)(e / o->hcas);
		se[e].rail = (uint32_t)(e % o->hcas);
		rate[e] = o->hcas_seen ? o->rate : local[e % o->hcas].link_gbps;
		if (rate[e] <= 0)
			rate[e] = o->rate;
	}
	if (rp_sched_create(se, n_eps, &o->pattern, o->seed, &s) != 0) {
		status = RP_EXIT_USAGE;
		goto out;
	}
	max_pairs = rp_sched_max_round_pairs(s);
	pairs = calloc(max_pairs ? max_pairs : 1, sizeof(*pairs));
	if (!pairs) {
		status = RP_EXIT_ENV;
		goto out;
	}
	bytes_dir = (double)c->meas.msg_size * (double)(c->meas.iters + c->meas.warmup_iters);
	printf("plan: pattern %s, %zu endpoints on %llu nodes (%llu per node), seed %llu\n", o->pattern_text, n_eps,
	       (unsigned long long)o->nodes, (unsigned long long)o->hcas, (unsigned long long)o->seed);
	printf("rounds: %zu; pairs: %llu (each measured both ways: %llu measurements); at most %zu pairs per round\n",
	       rp_sched_n_rounds(s), (unsigned long long)rp_sched_n_pairs(s), 2ULL * rp_sched_n_pairs(s), max_pairs);
	for (size_t r = 0; r < rp_sched_n_rounds(s); r++) {
		double worst = 0;

		rp_sched_round(s, r, pairs, max_pairs, &got);
		for (size_t i = 0; i < got; i++) {
			double g = rate[pairs[i].a] < rate[pairs[i].b] ? rate[pairs[i].a] : rate[pairs[i].b];
			double t = c->meas.duration_s > 0 ? c->meas.duration_s : bytes_dir * 8 / (g * 1e9);

			if (t > worst)
				worst = t;
		}
		worst = 2 * (worst + MX_PLAN_SETUP_S);
		total_s += worst;
		if (rp_sched_n_rounds(s) <= 32 || r < 3 || r + 1 == rp_sched_n_rounds(s)) {
			printf("  round %zu: %zu pairs, ~%.2f s", r + 1, got, worst);
			if (n_eps <= 16) {
				printf(":");
				for (size_t i = 0; i < got; i++)
					printf(" %u<->%u", pairs[i].a, pairs[i].b);
			}
			printf("\n");
		} else if (r == 3) {
			printf("  ...\n");
		}
	}
	if (c->meas.duration_s > 0) {
		printf("bytes: each measurement runs %.2f s\n", c->meas.duration_s);
	} else {
		human_bytes(bytes_dir, b1, sizeof(b1));
		human_bytes(bytes_dir * 2.0 * (double)rp_sched_n_pairs(s), b2, sizeof(b2));
		printf("bytes: %s per measurement (%llu x %zu B, %llu warm-up), %s in all\n", b1,
		       (unsigned long long)c->meas.iters, c->meas.msg_size, (unsigned long long)c->meas.warmup_iters, b2);
	}
	printf("estimated time: %.1f s at the ports' rates (%s), assuming %.0f ms set-up per direction\n", total_s,
	       o->hcas_seen ? "--rate" : "this node's ports", MX_PLAN_SETUP_S * 1e3);
out:
	free(pairs);
	rp_sched_destroy(s);
	free(se);
	free(rate);
	return status;
}

/* --- one round ------------------------------------------------------------------------------------- */

struct mx_ctx {
	const struct mx_opts *o;
	const struct mx_ep *eps;
	size_t n_eps;
	int rank, n_ranks;
	bool *dead;                   /* ranks that stopped answering */
	size_t max_pairs;
	size_t n_rounds;
};

struct mx_task {
	const struct mx_ctx *ctx;
	size_t round, idx;
	uint32_t a, b;
	pthread_t thread;
	bool threaded;
	struct mx_wire_res out[2];
};

/* Tags only spread the traffic (they wrap on long runs): the envelope's round and pair decide. */
static int pair_tag(const struct mx_ctx *c, size_t round, size_t idx, int dir)
{
	uint64_t t = ((uint64_t)round * c->max_pairs + idx) * 2 + (uint64_t)dir;

	return (int)(t % (uint64_t)rp_mpi_tag_ub());
}

static void port_of(const struct mx_ep *x, struct rp_engine_port *p)
{
	p->node = x->ep.node;
	p->device = x->ep.device;
	p->port = x->ep.port;
	p->gid_index = x->ep.gid_index;
}

/* Both directions of one pair, this rank's side(s). */
static void *task_run(void *arg)
{
	struct mx_task *t = arg;
	const struct mx_ctx *c = t->ctx;

	for (int dir = 0; dir < 2; dir++) {
		uint32_t src = dir ? t->b : t->a, dst = dir ? t->a : t->b;
		const struct mx_ep *S = &c->eps[src], *D = &c->eps[dst];
		struct rp_engine_port ps, pd;
		struct rp_pair_result *r = &t->out[dir].r;
		bool writer = S->owner == c->rank;
		int peer = writer ? D->owner : S->owner;

		port_of(S, &ps);
		port_of(D, &pd);
		t->out[dir].idx = (uint32_t)t->idx;
		t->out[dir].dir = (uint32_t)dir;
		t->out[dir].writer = writer;
		if (S->owner == c->rank && D->owner == c->rank) {
			rp_engine_loopback_run(&c->o->eng.cfg, &ps, &pd, 0, r);
			continue;
		}
		if (c->dead[peer]) {
			rp_pair_result_init(r, &S->ep, &D->ep);
			rp_pair_result_fail(r, RP_ST_PEER_LOST, "rank %d (driving %s/%s:%d) stopped answering before round %zu",
					    peer, (writer ? D : S)->ep.node, (writer ? D : S)->ep.device,
					    (writer ? D : S)->ep.port, t->round + 1);
			continue;
		}
		struct rp_oob oob;

		struct rp_mpi_addr addr = { .round = (uint32_t)t->round, .pair = (uint32_t)(t->idx * 2 + (size_t)dir) };

		if (rp_oob_mpi_open(&oob, peer, pair_tag(c, t->round, t->idx, dir), &addr) != 0) {
			rp_pair_result_init(r, &S->ep, &D->ep);
			rp_pair_result_fail(r, RP_ST_SETUP, "side channel to rank %d: out of memory", peer);
			continue;
		}
		rp_engine_pair_run(&c->o->eng.cfg, writer ? RP_ROLE_WRITER : RP_ROLE_TARGET, writer ? &ps : &pd, &oob, 0, r);
		rp_oob_close(&oob);
	}
	return NULL;
}

/* Run this rank's pairs of the round, all at once. *tasks_p (malloc'd) and *n_p hold the outcome. */
static int round_run(const struct mx_ctx *c, size_t round, struct rp_sched *s, struct rp_sched_pair *pairs,
		     struct mx_task **tasks_p, size_t *n_p)
{
	size_t got = 0, n = 0;
	struct mx_task *tasks;

	rp_sched_round(s, round, pairs, c->max_pairs, &got);
	tasks = calloc(got ? got : 1, sizeof(*tasks));
	if (!tasks)
		return -ENOMEM;
	for (size_t i = 0; i < got; i++) {
		if (c->eps[pairs[i].a].owner != c->rank && c->eps[pairs[i].b].owner != c->rank)
			continue;
		tasks[n] = (struct mx_task){ .ctx = c, .round = round, .idx = i, .a = pairs[i].a, .b = pairs[i].b };
		tasks[n].threaded = pthread_create(&tasks[n].thread, NULL, task_run, &tasks[n]) == 0;
		if (!tasks[n].threaded)
			task_run(&tasks[n]);        /* no thread to be had: run it here, still within deadlines */
		n++;
	}
	for (size_t k = 0; k < n; k++)
		if (tasks[k].threaded)
			pthread_join(tasks[k].thread, NULL);
	*tasks_p = tasks;
	*n_p = n;
	return 0;
}

/* The round's report of a non-zero rank: every side it ran. */
static int report_send(const struct mx_ctx *c, size_t round, const struct mx_task *tasks, size_t n, double deadline)
{
	size_t len = sizeof(struct mx_hdr) + 2 * n * sizeof(struct mx_wire_res);
	char *buf = malloc(len);
	struct mx_wire_res *rec = (struct mx_wire_res *)(buf + sizeof(struct mx_hdr));
	int rc;

	if (!buf)
		return -ENOMEM;
	hdr_init((struct mx_hdr *)buf, MX_KIND_REPORT, c->rank, round, 2 * n, sizeof(*rec));
	for (size_t k = 0; k < n; k++)
		for (int d = 0; d < 2; d++)
			rec[2 * k + d] = tasks[k].out[d];
	rc = rp_mpi_ctl_send(0, MX_TAG_REPORT, (uint32_t)round, buf, len, deadline);
	free(buf);
	return rc;
}

/* Keep a received or local side in slot[idx*2+dir], preferring the writer's view. */
static void slot_put(struct mx_wire_res *slot, bool *have, const struct mx_wire_res *w)
{
	size_t k = (size_t)w->idx * 2 + w->dir;

	if (have[k] && slot[k].writer && !w->writer)
		return;
	slot[k] = *w;
	have[k] = true;
}

static bool wire_res_ok(const struct mx_wire_res *w, size_t got)
{
	const struct rp_pair_result *r = &w->r;

	return w->idx < got && w->dir < 2 && (int)r->status >= 0 && r->status < RP_ST_COUNT_ &&
	       str_terminated(r->reason, sizeof(r->reason)) && str_terminated(r->src.node, sizeof(r->src.node)) &&
	       str_terminated(r->dst.node, sizeof(r->dst.node)) && str_terminated(r->src.device, sizeof(r->src.device)) &&
	       str_terminated(r->dst.device, sizeof(r->dst.device)) && str_terminated(r->src.mem, sizeof(r->src.mem)) &&
	       str_terminated(r->dst.mem, sizeof(r->dst.mem)) && str_terminated(r->src.mem_reg, sizeof(r->src.mem_reg)) &&
	       str_terminated(r->dst.mem_reg, sizeof(r->dst.mem_reg));
}

/* The table's description of an endpoint, with what the engine learned (MTU, memory) kept. */
static void ep_merge(struct rp_endpoint *dst, const struct rp_endpoint *table)
{
	struct rp_endpoint e = *table;

	if (dst->mtu)
		e.mtu = dst->mtu;
	if (dst->mem[0])
		memcpy(e.mem, dst->mem, sizeof(e.mem));
	if (dst->mem_reg[0])
		memcpy(e.mem_reg, dst->mem_reg, sizeof(e.mem_reg));
	*dst = e;
}

/* Rank 0: collect the round's reports until the deadline; ranks that sent none are dead from now on.
 * Every directed pair of the round ends up in mr, in (pair, direction) order. */
static int round_collect(const struct mx_ctx *c, size_t round, struct rp_sched *s, struct rp_sched_pair *pairs,
			 const struct mx_task *tasks, size_t n_tasks, double deadline, struct mx_results *mr,
			 size_t *failed_p)
{
	size_t got = 0, waiting = 0;
	struct mx_wire_res *slot;
	bool *have, *reported = calloc((size_t)c->n_ranks, sizeof(*reported));
	int rc = 0;

	rp_sched_round(s, round, pairs, c->max_pairs, &got);
	slot = calloc(2 * got + 1, sizeof(*slot));
	have = calloc(2 * got + 1, sizeof(*have));
	if (!slot || !have || !reported) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < n_tasks; k++)
		for (int d = 0; d < 2; d++)
			slot_put(slot, have, &tasks[k].out[d]);
	for (int r = 1; r < c->n_ranks; r++)
		waiting += !c->dead[r];
	while (waiting > 0) {
		void *buf = NULL;
		size_t len = 0;
		int src = -1;
		const struct mx_hdr *h;

		rc = rp_mpi_ctl_recv(-1, MX_TAG_REPORT, (uint32_t)round, &buf, &len, &src, deadline);
		if (rc == -ETIMEDOUT) {
			rc = 0;
			break;
		}
		if (rc)
			goto out;
		h = buf;
		if (!msg_ok(buf, len, MX_KIND_REPORT, sizeof(struct mx_wire_res)) || h->rank != src ||
		    src <= 0 || src >= c->n_ranks) {
			rp_warn("matrix: rank %d sent a malformed round report (%zu bytes): ignored", src, len);
		} else if (h->round == round && !reported[src] && !c->dead[src]) {
			const struct mx_wire_res *rec = (const void *)(h + 1);

			for (uint32_t i = 0; i < h->n; i++)
				if (wire_res_ok(&rec[i], got))
					slot_put(slot, have, &rec[i]);
			reported[src] = true;
			waiting--;
		}
		free(buf);
	}
	for (int r = 1; r < c->n_ranks; r++) {
		if (!c->dead[r] && !reported[r]) {
			fprintf(stderr, "rdmaprobe matrix: rank %d sent no report for round %zu before the deadline: "
					"its pairs are lost from now on\n", r, round + 1);
			c->dead[r] = true;
		}
	}
	for (size_t i = 0; i < got; i++) {
		for (int d = 0; d < 2; d++) {
			uint32_t src = d ? pairs[i].b : pairs[i].a, dst = d ? pairs[i].a : pairs[i].b;
			struct rp_pair_result r;

			if (have[2 * i + d]) {
				r = slot[2 * i + d].r;
			} else {
				rp_pair_result_init(&r, &c->eps[src].ep, &c->eps[dst].ep);
				rp_pair_result_fail(&r, RP_ST_PEER_LOST, "no report from rank %d or rank %d for round %zu",
						    c->eps[src].owner, c->eps[dst].owner, round + 1);
			}
			ep_merge(&r.src, &c->eps[src].ep);
			ep_merge(&r.dst, &c->eps[dst].ep);
			*failed_p += r.status != RP_ST_OK;
			if (mx_results_add(mr, &r, src, dst) != 0) {
				rc = -ENOMEM;
				goto out;
			}
		}
	}
out:
	free(slot);
	free(have);
	free(reported);
	return rc;
}

/* Rank 0 to every live rank: round done; who is dead; whether to stop. */
static void go_send(const struct mx_ctx *c, size_t round, bool stop)
{
	size_t n_dead = 0, len;
	char *buf;
	int32_t *dead;

	for (int r = 0; r < c->n_ranks; r++)
		n_dead += c->dead[r];
	len = sizeof(struct mx_hdr) + n_dead * sizeof(int32_t);
	buf = calloc(1, len);
	if (!buf)
		return;
	hdr_init((struct mx_hdr *)buf, MX_KIND_GO, 0, round, n_dead, sizeof(int32_t));
	((struct mx_hdr *)buf)->status = stop;
	dead = (int32_t *)(buf + sizeof(struct mx_hdr));
	for (int r = 0, k = 0; r < c->n_ranks; r++)
		if (c->dead[r])
			dead[k++] = r;
	for (int r = 1; r < c->n_ranks; r++)
		if (!c->dead[r] && rp_mpi_ctl_send(r, MX_TAG_GO, (uint32_t)round, buf, len, rp_now() + 5) != 0)
			c->dead[r] = true;
	free(buf);
}

/* Non-zero ranks: wait for rank 0's go. 0 go on, 1 stop (told so), -ETIMEDOUT rank 0 is gone,
 * -ECANCELED rank 0 counts this rank as dead. */
static int go_wait(const struct mx_ctx *c, size_t round, double deadline)
{
	for (;;) {
		void *buf = NULL;
		size_t len = 0;
		int rc = rp_mpi_ctl_recv(0, MX_TAG_GO, (uint32_t)round, &buf, &len, NULL, deadline);
		const struct mx_hdr *h = buf;

		if (rc)
			return rc;
		if (!msg_ok(buf, len, MX_KIND_GO, sizeof(int32_t)) || h->round != round) {
			free(buf);
			continue;
		}
		const int32_t *dead = (const void *)(h + 1);
		bool stop = h->status != 0;

		for (uint32_t i = 0; i < h->n; i++)
			if (dead[i] >= 0 && dead[i] < c->n_ranks)
				c->dead[dead[i]] = true;
		free(buf);
		if (c->dead[c->rank])
			return -ECANCELED;
		return stop ? 1 : 0;
	}
}

/* --- the run --------------------------------------------------------------------------------------- */

static double round_budget(const struct mx_opts *o)
{
	const struct rp_engine_cfg *c = &o->eng.cfg;

	if (o->round_timeout_seen)
		return o->round_timeout;
	return 2 * (4 * c->timeout_s + c->run_limit_s + 1) + 2;
}

/* Share the ports; build the table. Every rank gets the same table, or all stop with the same status. */
static int gather_table(struct mx_opts *o, const struct rp_mpi_info *mi, struct mx_ep **eps_p, size_t *n_p)
{
	struct { struct mx_hdr h; struct mx_wire_ep e[MX_MAX_LOCAL]; } mine;
	size_t n_local = 0, *lens = NULL, *offs = NULL, n_cl = 0;
	char *all = NULL, err[sizeof(mine.h.error)] = "";
	struct claim *cl = NULL;
	int status, worst = 0;

	status = local_ports(o, mi->local_rank, mine.e, &n_local, err, sizeof(err));
	hdr_init(&mine.h, MX_KIND_EPS, mi->rank, 0, status ? 0 : n_local, sizeof(struct mx_wire_ep));
	mine.h.status = status;
	mine.h.run = rp_mpi_nonce_new();
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
		if (!msg_ok(h, lens[r], MX_KIND_EPS, sizeof(struct mx_wire_ep))) {
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
	if (!worst && !cl)
		worst = RP_EXIT_ENV;
	for (int r = 0, k = 0; !worst && r < mi->size; r++) {
		const struct mx_hdr *h = (const void *)(all + offs[r]);
		const struct mx_wire_ep *w = (const void *)(h + 1);

		for (uint32_t i = 0; i < h->n; i++, k++) {
			cl[k].w = w[i];
			cl[k].w.node[RP_NAME_MAX - 1] = cl[k].w.device[RP_NAME_MAX - 1] = '\0';
			cl[k].rank = r;
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

static void progress(size_t round, size_t n_rounds, size_t pairs, size_t failed, double t0)
{
	double took = rp_now() - t0, per = took / (double)(round + 1);

	fprintf(stderr, "rdmaprobe matrix: round %zu of %zu done: %zu pairs measured, %zu failed so far, %.0f s in, "
			"~%.0f s left\n", round + 1, n_rounds, pairs, failed, took, per * (double)(n_rounds - round - 1));
}

static char *cmd_line_join(int argc, char **argv)
{
	size_t len = 32;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	strcat(s, "rdmaprobe matrix");
	for (int i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static int run_matrix(struct mx_opts *o, int argc, char **argv)
{
	struct rp_mpi_info mi;
	struct mx_ep *eps = NULL;
	size_t n_eps = 0, n_nodes = 0, failed = 0, rounds_done = 0;
	struct rp_sched_ep *se = NULL;
	struct rp_sched *s = NULL;
	struct rp_sched_pair *pairs = NULL;
	struct mx_results mr = { 0 };
	struct mx_ctx ctx;
	bool *dead = NULL, any_dead = false;
	double t0 = rp_now(), budget = round_budget(o), last_write = 0, write_cost = 0;
	char *cmd_line = cmd_line_join(argc, argv);
	int status = RP_EXIT_OK, rc;

	if (rp_mpi_init(&argc, &argv, &mi) != 0) {
		fprintf(stderr, "rdmaprobe matrix: MPI did not start (see above)\n");
		free(cmd_line);
		return RP_EXIT_ENV;
	}
	status = gather_table(o, &mi, &eps, &n_eps);
	if (!status && n_eps < 2) {
		if (mi.rank == 0)
			fprintf(stderr, "rdmaprobe matrix: %zu endpoint(s) in all: nothing to pair\n", n_eps);
		status = RP_EXIT_ENV;
	}
	if (status)
		goto out;
	se = sched_eps(eps, n_eps, &n_nodes);
	dead = calloc((size_t)mi.size, sizeof(*dead));
	if (!se || !dead || rp_sched_create(se, n_eps, &o->pattern, o->seed, &s) != 0) {
		status = se && dead ? RP_EXIT_USAGE : RP_EXIT_ENV;
		goto out;
	}
	ctx = (struct mx_ctx){ .o = o, .eps = eps, .n_eps = n_eps, .rank = mi.rank, .n_ranks = mi.size, .dead = dead,
			       .max_pairs = rp_sched_max_round_pairs(s), .n_rounds = rp_sched_n_rounds(s) };
	pairs = calloc(ctx.max_pairs ? ctx.max_pairs : 1, sizeof(*pairs));
	if (!pairs) {
		status = RP_EXIT_ENV;
		goto out;
	}
	if (mi.rank == 0)
		fprintf(stderr, "rdmaprobe matrix: %zu endpoints on %zu nodes, %d ranks, pattern %s: %zu rounds, %llu pairs "
				"(both directions), round deadline %.0f s\n", n_eps, n_nodes, mi.size, o->pattern_text,
			ctx.n_rounds, (unsigned long long)rp_sched_n_pairs(s), budget);
	signal(SIGINT, sig_stop);
	signal(SIGTERM, sig_stop);
	t0 = rp_now();              /* "time left" counts the rounds, not the start-up */

	struct mx_out out = {
		.cmd_line = cmd_line, .argc = argc, .argv = argv, .cfg = &o->eng.cfg, .pattern = o->pattern_text,
		.seed = o->seed, .vcfg = &o->vcfg, .n_eps = n_eps, .results = &mr, .n_rounds = ctx.n_rounds,
		.started_wall = (double)time(NULL), .json = o->eng.json, .csv = o->eng.csv, .html = o->html,
		.junit = o->junit, .summary_only = o->summary,
	};
	out.eps = eps;

	for (size_t r = 0; r < ctx.n_rounds; r++) {
		struct mx_task *tasks = NULL;
		size_t n_tasks = 0;
		double start = rp_now();

		if (round_run(&ctx, r, s, pairs, &tasks, &n_tasks) != 0) {
			status = RP_EXIT_ENV;
			break;
		}
		if (mi.rank != 0) {
			report_send(&ctx, r, tasks, n_tasks, start + budget);
			free(tasks);
			rc = go_wait(&ctx, r, start + 2 * budget + 10);
			if (rc == -ETIMEDOUT) {
				fprintf(stderr, "rdmaprobe matrix: rank %d: rank 0 did not answer after round %zu: stopping\n",
					mi.rank, r + 1);
				status = RP_EXIT_ENV;
				any_dead = true;
				break;
			}
			if (rc == -ECANCELED) {
				fprintf(stderr, "rdmaprobe matrix: rank %d: rank 0 gave up on this rank after round %zu\n", mi.rank, r + 1);
				status = RP_EXIT_FAIL;
				any_dead = true;
				break;
			}
			if (rc) {
				status = RP_EXIT_FAIL;
				break;
			}
			rounds_done = r + 1;
			continue;
		}
		rc = round_collect(&ctx, r, s, pairs, tasks, n_tasks, start + budget, &mr, &failed);
		free(tasks);
		if (rc) {
			fprintf(stderr, "rdmaprobe matrix: out of memory keeping results\n");
			status = RP_EXIT_ENV;
			break;
		}
		rounds_done = r + 1;
		go_send(&ctx, r, mx_stop != 0);
		progress(r, ctx.n_rounds, mr.n, failed, t0);
		/* Rewrite the files after every round, but spend at most a fifth of the time writing. */
		if (rp_now() - last_write >= 4 * write_cost || r + 1 == ctx.n_rounds) {
			double w0 = rp_now();

			out.rounds_done = rounds_done;
			out.elapsed_s = w0 - t0;
			if (mx_write_files(&out, NULL, NULL) != 0)
				status = RP_EXIT_ENV;
			last_write = rp_now();
			write_cost = last_write - w0;
		}
		if (mx_stop) {
			fprintf(stderr, "rdmaprobe matrix: interrupted after round %zu of %zu\n", r + 1, ctx.n_rounds);
			break;
		}
	}
	for (int r = 0; r < mi.size; r++)
		any_dead |= dead[r];
	if (mi.rank == 0 && status != RP_EXIT_ENV) {
		struct rp_verdict v;
		struct rp_pair_result *judged = NULL;

		out.rounds_done = rounds_done;
		out.elapsed_s = rp_now() - t0;
		if (mx_write_files(&out, &v, &judged) != 0) {
			status = RP_EXIT_ENV;
		} else {
			mx_print(&out, &v, judged);
			if (!status)
				status = v.pass && rounds_done == ctx.n_rounds ? RP_EXIT_OK : RP_EXIT_FAIL;
			rp_verdict_fini(&v);
			free(judged);
		}
	}
out:
	free(pairs);
	rp_sched_destroy(s);
	free(se);
	free(eps);
	free(dead);
	mx_results_fini(&mr);
	free(cmd_line);
	fflush(stdout);
	fflush(stderr);
	/* MPI_Finalize synchronises with every rank; with one gone it could wait forever. */
	if (!any_dead)
		rp_mpi_finalize();
	return status;
}

int cmd_matrix(int argc, char **argv)
{
	struct mx_opts o;
	int rc = opts_parse(&o, argc, argv);

	if (rc >= 0)
		return rc;
	if (o.plan)
		return run_plan(&o);
	if (!rp_mpi_compiled()) {
		fprintf(stderr, "rdmaprobe matrix: this rdmaprobe was built without MPI (install an MPI with mpicc and "
				"rebuild); only --plan works\n");
		return RP_EXIT_ENV;
	}
	if (!rp_mpi_launched()) {
		fprintf(stderr, "rdmaprobe matrix: not started by an MPI launcher: run it as 'mpirun -np N rdmaprobe matrix "
				"...' or 'srun rdmaprobe matrix ...' (or use --plan)\n");
		return RP_EXIT_ENV;
	}
	return run_matrix(&o, argc, argv);
}
