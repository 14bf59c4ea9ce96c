/* localize_score.c: random fault scenarios on a simulated rail-optimized fat tree, judged by the verdict
 * with and without the fabric's topology, scored against the fault put in (scripts/bench-localize.sh).
 *
 *   build/localize-score NODES ADAPTERS FIRST COUNT [LEAF_PORTS SPINES]
 *
 * Scenario i (FIRST <= i < FIRST + COUNT) is a function of i alone: a background rate uniform in
 * [0, 2%] (random-dead, seed i) and one fault (kind i % 10: none, adapter dead / lossy / flaky, cable
 * dead, leaf dead / flaky, uplink dead / flaky, spine dead) on a component drawn from a hash of i.
 * Every direction of the rail pattern (every ordered pair of endpoints on one rail) is answered from the
 * model as the simulator answers it (rp_sim_dir: dead, or its bandwidth through losses); a failure is
 * confirmed (the model is deterministic: a retest fails the same way). The verdict runs with the
 * default settings, then again with the model's topology (build/sim-topology's file, parsed by
 * lib/fabtopo). One line per scenario and verdict on stdout:
 *
 *   i kind component bg topo drains correct expected top1 top3 paths seconds
 *
 * RP_LOC_ROUTE=unknown: the topology without its route line (which spine a pair uses is unknown, as
 * with Slurm's topology.conf).
 *
 * correct: drains of the faulty adapter (adapter and cable faults: the adapter is the one to pull);
 * expected: 1 for those, else 0; top1/top3: the fault among the first 1/3 suspects (-1: no fault). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "discover/fabtopo.h"
#include "verdict/result_seq.h"
#include "sim/sim_fabric.h"
#include "sim/sim_model.h"
#include "verdict/verdict.h"

struct store {
	const struct rp_endpoint *eps;
	uint32_t *pair_eps;
	uint8_t *status, *confirm;
	float *gbps;
	size_t n;
};

static struct rp_pair_result *store_get(const struct rp_result_seq *ps, size_t i, struct rp_pair_result *tmp)
{
	const struct store *s = ps->arg;

	rp_pair_result_init(tmp, &s->eps[s->pair_eps[2 * i]], &s->eps[s->pair_eps[2 * i + 1]]);
	tmp->msg_size = 65536;
	tmp->gbps = tmp->gbps_min = s->gbps[i];
	tmp->status = (enum rp_status)s->status[i];
	tmp->verified = s->status[i] == RP_ST_OK;
	if (s->status[i] != RP_ST_OK)
		snprintf(tmp->reason, sizeof(tmp->reason), "simulated");
	tmp->confirm = (enum rp_confirm)s->confirm[i];
	tmp->n_attempts = 1;
	tmp->attempts[0].status = tmp->status;
	return tmp;
}

/* What get would build, without building it (the verdict's reading passes). */
static void store_peek(const struct rp_result_seq *ps, size_t i, struct rp_result_peek *pk)
{
	const struct store *s = ps->arg;

	*pk = (struct rp_result_peek){ .status = (enum rp_status)s->status[i], .confirm = (enum rp_confirm)s->confirm[i],
				     .msg_size = 65536, .gbps = s->gbps[i], .gbps_min = s->gbps[i],
				     .link_gbps = s->eps[s->pair_eps[2 * i]].link_gbps,
				     .plain = s->status[i] == RP_ST_OK && s->confirm[i] == RP_CONFIRM_NONE };
}

static int store_put(const struct rp_result_seq *ps, size_t i, const struct rp_pair_result *r)
{
	const struct store *s = ps->arg;

	s->status[i] = (uint8_t)r->status;
	s->confirm[i] = (uint8_t)r->confirm;
	return 0;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static const char *const kinds[] = { "none", "adapter-dead", "adapter-lossy", "adapter-flaky", "cable-dead",
				     "leaf-dead", "leaf-flaky", "uplink-dead", "uplink-flaky", "spine-dead" };

/* Scenario i's model text into buf; the fault's suspect name into want (empty: none), its endpoint
 * into *ep (UINT32_MAX: not an adapter). */
static void scenario(unsigned long i, unsigned nodes, unsigned adapters, unsigned ports, unsigned spines, char *buf,
		     size_t len, char *want, size_t want_len, uint32_t *ep, const char **kind_p)
{
	uint64_t h = mix(i * 7919 + 1);
	double bg = (double)(mix(h) >> 11) * 0x1.0p-53 * 0.02, p = 0.3 + 0.4 * (double)(mix(h + 1) >> 11) * 0x1.0p-53;
	unsigned kind = (unsigned)(i % 10), node = (unsigned)(mix(h + 2) % nodes), rail = (unsigned)(mix(h + 3) % adapters);
	unsigned lpr = (nodes + ports - 1) / ports, leaf = (unsigned)(mix(h + 4) % lpr), sp = (unsigned)(mix(h + 5) % spines);
	int digits = snprintf(NULL, 0, "%u", nodes - 1);
	size_t n;

	*kind_p = kinds[kind];
	*ep = UINT32_MAX;
	want[0] = '\0';
	n = (size_t)snprintf(buf, len, "nodes %u\nadapters %u\nrate 400\nbandwidth 390\nrandom-dead %.6f %lu\n"
			     "fabric %u %u dmodk\n", nodes, adapters, bg, i, ports, spines);
	switch (kind) {
	case 1: case 2: case 3: case 4:
		snprintf(buf + n, len - n, "fault %s node%0*u/mlx5_%u %s\n", kind == 4 ? "cable" : "adapter", digits, node, rail,
			 kind == 1 || kind == 4 ? "dead" : kind == 2 ? "lossy:0.3" : p > 0.5 ? "flaky:0.6" : "flaky:0.4");
		snprintf(want, want_len, "node%0*u/mlx5_%u:1", digits, node, rail);
		*ep = node * adapters + rail;
		break;
	case 5: case 6:
		snprintf(buf + n, len - n, "fault leaf leaf%u-%u %s\n", rail, leaf, kind == 5 ? "dead" : "flaky:0.5");
		snprintf(want, want_len, "leaf%u-%u", rail, leaf);
		break;
	case 7: case 8:
		snprintf(buf + n, len - n, "fault uplink leaf%u-%u:spine%u %s\n", rail, leaf, sp, kind == 7 ? "dead" : "flaky:0.5");
		snprintf(want, want_len, "leaf%u-%u - spine%u", rail, leaf, sp);
		break;
	case 9:
		snprintf(buf + n, len - n, "fault spine spine%u dead\n", sp);
		snprintf(want, want_len, "spine%u", sp);
		break;
	default:
		break;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Judge the store, score and print one line. */
static int judge(unsigned long i, const char *kind, const char *want_in, uint32_t ep, double bg, struct store *st,
		 const struct rp_endpoint *eps, size_t n_eps, const struct rp_fabtopo *topo)
{
	char want[160];
	struct rp_verdict_cfg cfg;
	struct rp_result_seq ps = { .n = st->n, .get = store_get, .put = store_put, .peek = store_peek, .arg = st };
	struct rp_verdict v;
	size_t drains = 0, correct = 0, rank = 0, found = 0;
	double t0 = now();
	int rc;

	snprintf(want, sizeof(want), "%s", want_in);
	rp_verdict_cfg_default(&cfg);
	cfg.retest = 0;               /* deterministic model: a retest fails the same way */
	cfg.topology = topo;
	for (size_t k = 0; k < st->n; k++)
		st->confirm[k] = 0;
	rc = rp_verdict_judge(&cfg, eps, n_eps, st->pair_eps, &ps, &v);
	if (rc)
		return rc;
	for (size_t e = 0; e < n_eps; e++) {
		drains += v.eps[e].drain;
		correct += v.eps[e].drain && e == ep;
		if (v.eps[e].drain && getenv("RP_LOC_VERBOSE"))   /* which, and why */
			fprintf(stderr, "%lu topo %d: drain %s/%s: %s\n", i, topo != NULL, eps[e].node, eps[e].device,
				v.eps[e].why);
	}
	for (size_t k = 0; k < v.n_suspects && want[0]; k++) {
		if (v.suspects[k].kind == RP_COMP_FABRIC)
			continue;
		rank++;
		if (strcmp(v.suspects[k].name, want) == 0) {
			found = rank;
			break;
		}
	}
	for (char *c = want; *c; c++)
		*c = *c == ' ' ? '_' : *c;   /* one word: "leaf1-3_-_spine5" */
	printf("%lu %s %s %.5f %d %zu %zu %d %d %d %zu %.3f\n", i, kind, want[0] ? want : "-", bg, topo != NULL, drains,
	       correct, ep != UINT32_MAX, want[0] ? found == 1 : -1, want[0] ? found >= 1 && found <= 3 : -1, v.n_paths,
	       now() - t0);
	rp_verdict_fini(&v);
	return 0;
}

static int run_one(unsigned long i, unsigned nodes, unsigned adapters, unsigned ports, unsigned spines)
{
	char text[1024], want[160], err_text[512];
	const char *kind;
	uint32_t ep;
	struct rp_sim_model m;
	struct rp_sim_error err;
	struct rp_engine_cfg cfg;
	struct rp_fabtopo *topo = NULL;
	struct rp_endpoint *eps;
	struct store st = { 0 };
	size_t n_eps = (size_t)nodes * adapters, cap = n_eps * nodes, tlen = 0;
	char *tbuf = NULL;
	FILE *tf;
	double bg;
	int rc;

	scenario(i, nodes, adapters, ports, spines, text, sizeof(text), want, sizeof(want), &ep, &kind);
	rc = rp_sim_model_parse(text, strlen(text), &m, &err);
	if (rc) {
		fprintf(stderr, "scenario %lu: line %u: %s\n", i, err.line, err.msg);
		return rc;
	}
	bg = m.random_dead;
	tf = open_memstream(&tbuf, &tlen);
	if (!tf || rp_sim_fabric_write_topology(&m, tf) || fclose(tf))
		return -1;
	if (getenv("RP_LOC_ROUTE") && strcmp(getenv("RP_LOC_ROUTE"), "unknown") == 0) {
		char *r = strstr(tbuf, "\nroute dmodk\n");

		if (r)
			r[1] = '#';   /* the route line commented out: routes unknown, as from Slurm's topology.conf */
	}
	rc = rp_fabtopo_parse("topology", tbuf, tlen, &topo, err_text, sizeof(err_text));
	free(tbuf);
	if (rc) {
		fprintf(stderr, "scenario %lu: %s\n", i, err_text);
		return rc;
	}
	rp_engine_cfg_default(&cfg);
	eps = calloc(n_eps, sizeof(*eps));
	st.pair_eps = malloc(2 * cap * sizeof(*st.pair_eps));
	st.status = malloc(cap);
	st.confirm = malloc(cap);
	st.gbps = malloc(cap * sizeof(*st.gbps));
	st.eps = eps;
	if (!eps || !st.pair_eps || !st.status || !st.confirm || !st.gbps)
		return -1;
	for (uint32_t e = 0; e < n_eps; e++) {
		rp_sim_ep_names(&m, e, eps[e].node, sizeof(eps[e].node), eps[e].device, sizeof(eps[e].device));
		eps[e].port = 1;
		eps[e].link_gbps = m.rate_gbps;
	}
	for (uint32_t a = 0; a < n_eps; a++) {
		for (uint32_t b = a % adapters; b < n_eps; b += adapters) {
			struct rp_pair_result r;

			if (a == b)
				continue;
			rp_sim_dir(&m, &cfg, a, b, &eps[a], &eps[b], &r);
			st.pair_eps[2 * st.n] = a;
			st.pair_eps[2 * st.n + 1] = b;
			st.status[st.n] = (uint8_t)r.status;
			st.gbps[st.n] = (float)r.gbps;
			st.n++;
		}
	}
	rc = judge(i, kind, want, ep, bg, &st, eps, n_eps, NULL);
	if (!rc)
		rc = judge(i, kind, want, ep, bg, &st, eps, n_eps, topo);
	fflush(stdout);
	rp_fabtopo_destroy(topo);
	rp_sim_model_fini(&m);
	free(eps);
	free(st.pair_eps);
	free(st.status);
	free(st.confirm);
	free(st.gbps);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned long first, count;
	unsigned nodes, adapters, ports = 32, spines = 16;

	if (argc != 5 && argc != 7) {
		fprintf(stderr, "usage: localize-score NODES ADAPTERS FIRST COUNT [LEAF_PORTS SPINES]\n");
		return 2;
	}
	nodes = (unsigned)strtoul(argv[1], NULL, 10);
	adapters = (unsigned)strtoul(argv[2], NULL, 10);
	first = strtoul(argv[3], NULL, 10);
	count = strtoul(argv[4], NULL, 10);
	if (argc == 7) {
		ports = (unsigned)strtoul(argv[5], NULL, 10);
		spines = (unsigned)strtoul(argv[6], NULL, 10);
	}
	if (nodes < 2 || adapters < 1 || adapters > 64 || ports < 1 || spines < 1) {
		fprintf(stderr, "localize-score: bad sizes\n");
		return 2;
	}
	for (unsigned long i = first; i < first + count; i++)
		if (run_one(i, nodes, adapters, ports, spines)) {
			fprintf(stderr, "localize-score: scenario %lu failed\n", i);
			return 1;
		}
	return 0;
}
