/* test_verdict_blame.c: blame by evidence (lib/verdict/verdict_blame.c): a fabric's background of random pair
 * failures drains nobody; dead, mostly failing and wholly failing adapters are still drained; two
 * endpoints failing only with each other, or two halves of a fabric, are path faults; adapters failing
 * with the same peers share a cause and are not drained. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "discover/fabtopo.h"
#include "verdict/result_seq.h"
#include "sim/sim_fabric.h"
#include "sim/sim_model.h"
#include "verdict/verdict.h"
#include "verdict/verdict_int.h"

/* A fabric of nodes x adapters measured as the rail pattern does (every ordered pair of endpoints with
 * the same adapter number), kept compact: per result its status and confirmation only. */
struct scene {
	struct rp_endpoint *eps;
	size_t n_eps, nodes, adapters;
	uint32_t *pair_eps;
	uint8_t *status, *confirm;
	bool *slow;                   /* NULL, or per endpoint: every pair with it runs at half the rate */
	size_t n;
};

static struct rp_pair_result *scene_get(const struct rp_result_seq *ps, size_t i, struct rp_pair_result *tmp)
{
	const struct scene *s = ps->arg;

	rp_pair_result_init(tmp, &s->eps[s->pair_eps[2 * i]], &s->eps[s->pair_eps[2 * i + 1]]);
	tmp->gbps = s->slow && (s->slow[s->pair_eps[2 * i]] || s->slow[s->pair_eps[2 * i + 1]]) ? 195 : 380;
	tmp->verified = s->status[i] == RP_ST_OK;
	tmp->status = (enum rp_status)s->status[i];
	if (s->status[i] != RP_ST_OK)
		snprintf(tmp->reason, sizeof(tmp->reason), "synthetic");
	tmp->confirm = (enum rp_confirm)s->confirm[i];
	return tmp;
}

static int scene_put(const struct rp_result_seq *ps, size_t i, const struct rp_pair_result *r)
{
	const struct scene *s = ps->arg;

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

/* Whether the unordered pair {a, b} is dead at rate p under seed (as the simulator's random-dead). */
static bool random_dead(uint64_t seed, uint32_t a, uint32_t b, double p)
{
	uint64_t lo = a < b ? a : b, hi = a < b ? b : a;

	return (double)(mix(seed ^ mix(lo << 32 | hi)) >> 11) / 9007199254740992.0 < p;
}

static void scene_init(struct scene *s, size_t nodes, size_t adapters)
{
	size_t cap;

	memset(s, 0, sizeof(*s));
	s->nodes = nodes;
	s->adapters = adapters;
	s->n_eps = nodes * adapters;
	cap = s->n_eps * nodes;
	s->eps = calloc(s->n_eps, sizeof(*s->eps));
	s->pair_eps = calloc(2 * cap, sizeof(*s->pair_eps));
	s->status = calloc(cap, 1);
	s->confirm = calloc(cap, 1);
	assert_non_null(s->eps);
	assert_non_null(s->pair_eps);
	assert_non_null(s->status);
	assert_non_null(s->confirm);
	for (size_t e = 0; e < s->n_eps; e++) {
		snprintf(s->eps[e].node, sizeof(s->eps[e].node), "node%03zu", e / adapters);
		snprintf(s->eps[e].device, sizeof(s->eps[e].device), "mlx5_%zu", e % adapters);
		s->eps[e].port = 1;
		s->eps[e].link_gbps = 400;
	}
	for (uint32_t a = 0; a < s->n_eps; a++)
		for (uint32_t b = 0; b < s->n_eps; b++)
			if (a != b && a % adapters == b % adapters) {
				s->pair_eps[2 * s->n] = a;
				s->pair_eps[2 * s->n + 1] = b;
				s->status[s->n++] = RP_ST_OK;
			}
}

static void scene_fini(struct scene *s)
{
	free(s->slow);
	free(s->eps);
	free(s->pair_eps);
	free(s->status);
	free(s->confirm);
}

/* Every result between a and b (both directions) fails. */
static void scene_kill(struct scene *s, uint32_t a, uint32_t b)
{
	for (size_t i = 0; i < s->n; i++) {
		uint32_t x = s->pair_eps[2 * i], y = s->pair_eps[2 * i + 1];

		if ((x == a && y == b) || (x == b && y == a))
			s->status[i] = RP_ST_RETRY_EXCEEDED;
	}
}

/* Random dead pairs at rate p; returns how many unordered pairs died. */
static size_t scene_random_dead(struct scene *s, uint64_t seed, double p)
{
	size_t dead = 0;

	for (size_t i = 0; i < s->n; i++) {
		uint32_t a = s->pair_eps[2 * i], b = s->pair_eps[2 * i + 1];

		if (random_dead(seed, a, b, p)) {
			s->status[i] = RP_ST_RETRY_EXCEEDED;
			dead += a < b;
		}
	}
	return dead;
}

static int scene_judge(struct scene *s, struct rp_verdict *v)
{
	struct rp_verdict_cfg c = { .min_bw = 0, .outlier = 0 };   /* retest 0: one sample decides */
	struct rp_result_seq ps = { .n = s->n, .get = scene_get, .put = scene_put, .arg = s };

	return rp_verdict_judge(&c, s->eps, s->n_eps, s->pair_eps, &ps, v);
}

static size_t drained(const struct rp_verdict *v)
{
	size_t n = 0;

	for (size_t e = 0; e < v->n_eps; e++)
		n += v->eps[e].drain;
	return n;
}

/* The case, unit-sized: rail over 256 nodes (two rails here, eight in the issue; each rail is
 * its own fabric), every unordered pair dead at 1% or 2%. The count-based verdict drained most
 * adapters; now nobody is drained and every dead pair is a path fault. */
static void test_background_drains_nobody(void **state)
{
	static const double rates[] = { 0.005, 0.01, 0.02 };

	(void)state;
	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		for (uint64_t seed = 12; seed < 15; seed++) {
			struct scene s;
			struct rp_verdict v;
			size_t dead;

			scene_init(&s, 256, 2);
			dead = scene_random_dead(&s, seed, rates[r]);
			assert_true(dead > 0);
			assert_int_equal(scene_judge(&s, &v), 0);
			if (drained(&v))
				fail_msg("rate %.3f seed %llu: %zu adapters drained, e.g. %s", rates[r],
					 (unsigned long long)seed, drained(&v), v.n_suspects ? v.suspects[0].why : "");
			assert_false(v.pass);
			assert_int_equal(v.n_paths, dead);
			assert_int_equal(v.n_ambiguous, 2 * dead);
			assert_true(v.background > rates[r] / 2 && v.background < rates[r] * 2);
			assert_int_equal(v.n_suspects, 1);
			assert_int_equal(v.suspects[0].kind, RP_COMP_FABRIC);
			assert_int_equal(v.suspects[0].failed, dead);
			assert_non_null(strstr(v.suspects[0].why, RP_VERDICT_PATH_TEXT));
			for (size_t k = 0; k < s.nodes; k++)
				assert_int_equal(v.nodes[k].n_drain, 0);
			rp_verdict_fini(&v);
			scene_fini(&s);
		}
	}
}

/* Over a 2% background: a dead adapter, one failing with 60% of its peers, a node whose adapters all
 * fail, and one that works with a single peer only: exactly those are drained. */
static void test_faulty_adapters_drained_over_background(void **state)
{
	struct scene s;
	struct rp_verdict v;
	const uint32_t dead = 2 * 17, most = 2 * 90 + 1, node = 200, single = 2 * 33;

	(void)state;
	scene_init(&s, 256, 2);
	scene_random_dead(&s, 7, 0.02);
	for (uint32_t p = 0; p < s.n_eps; p++) {
		if (p % 2 == dead % 2)
			scene_kill(&s, dead, p);
		if (p % 2 == most % 2 && mix(p) % 10 < 6)
			scene_kill(&s, most, p);
		if (p % 2 == single % 2 && p != 2 * 34)
			scene_kill(&s, single, p);
		scene_kill(&s, 2 * node, p);
		scene_kill(&s, 2 * node + 1, p);
	}
	assert_int_equal(scene_judge(&s, &v), 0);
	for (uint32_t e = 0; e < s.n_eps; e++) {
		bool want = e == dead || e == most || e / 2 == node || e == single;

		if (v.eps[e].drain != want)
			fail_msg("endpoint %u: drain %d, want %d (%s)", e, v.eps[e].drain, want, v.eps[e].why);
	}
	assert_int_equal(v.nodes[node].n_drain, 2);
	assert_null(v.nodes[node].recommended);
	assert_non_null(strstr(v.eps[dead].why, "reached no peer"));
	assert_non_null(strstr(v.eps[most].why, "failed on its fabric"));
	assert_non_null(strstr(v.eps[single].why, "failed on its fabric"));
	/* the drained adapters first among the suspects, the rest of the failures as path faults */
	assert_int_equal(v.n_suspects, 6);
	for (size_t k = 0; k < 5; k++) {
		assert_int_equal(v.suspects[k].kind, RP_COMP_ADAPTER);
		assert_true(v.suspects[k].drain);
		assert_true(v.suspects[k].confidence > 0.999);
	}
	assert_int_equal(v.suspects[5].kind, RP_COMP_FABRIC);
	assert_true(v.n_paths > 0);
	rp_verdict_fini(&v);
	scene_fini(&s);
}

/* Two nodes, one adapter each, one dead link between them: nobody can tell which end is bad. The
 * count-based verdict drained both ("reached no peer"); now neither, one path fault. */
static void test_two_endpoints_one_dead_link(void **state)
{
	struct scene s;
	struct rp_verdict v;

	(void)state;
	scene_init(&s, 2, 1);
	scene_kill(&s, 0, 1);
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_false(v.pass);
	assert_false(v.eps[0].drain);
	assert_false(v.eps[1].drain);
	assert_int_equal(v.n_paths, 1);
	assert_int_equal(v.paths[0].a, 0);
	assert_int_equal(v.paths[0].b, 1);
	assert_int_equal(v.paths[0].failed, 2);
	assert_int_equal(v.n_ambiguous, 2);
	assert_string_equal(v.nodes[0].recommended, "=mlx5_0:1");
	assert_int_equal(v.n_suspects, 1);
	assert_int_equal(v.suspects[0].kind, RP_COMP_FABRIC);
	/* one pair is one path, not failures spread over the fabric */
	assert_string_equal(v.suspects[0].why, "1 failed peer pair that no adapter explains: "
			    "suspect the switches or routing on their paths");
	rp_verdict_fini(&v);
	scene_fini(&s);
}

/* 32 endpoints on one fabric: two that fail only with each other, then two halves that fail with each
 * other (a switch between them): path faults, nothing drained. */
static void test_shared_failures_drain_nobody(void **state)
{
	struct scene s;
	struct rp_verdict v;

	(void)state;
	scene_init(&s, 32, 1);
	scene_kill(&s, 3, 9);
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_int_equal(v.n_paths, 1);
	rp_verdict_fini(&v);
	scene_fini(&s);

	scene_init(&s, 32, 1);
	for (uint32_t a = 0; a < 16; a++)
		for (uint32_t b = 16; b < 32; b++)
			scene_kill(&s, a, b);
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_int_equal(v.n_paths, 16 * 16);
	rp_verdict_fini(&v);
	scene_fini(&s);
}

/* Failures that were never confirmed are no evidence: a dead adapter measured once with retest on is
 * not drained until a retest confirms it ("retest before you condemn"). */
static void test_unconfirmed_is_no_evidence(void **state)
{
	struct scene s;
	struct rp_verdict v;
	struct rp_verdict_cfg c = { .min_bw = 0, .outlier = 0, .retest = 1 };
	struct rp_result_seq ps;

	(void)state;
	scene_init(&s, 16, 1);
	for (uint32_t p = 1; p < 16; p++)
		scene_kill(&s, 0, p);
	ps = (struct rp_result_seq){ .n = s.n, .get = scene_get, .put = scene_put, .arg = &s };
	assert_int_equal(rp_verdict_judge(&c, s.eps, s.n_eps, s.pair_eps, &ps, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_int_equal(v.n_unconfirmed, 30);
	rp_verdict_fini(&v);
	scene_fini(&s);
}

/* A scene from a simulated fat tree (lib/sim/sim_fabric.h): the rail pattern's directions dead where the
 * model's route crosses a dead component or a random-dead pair; *topo the model's topology file, read. */
static void scene_from_model(struct scene *s, const char *text, struct rp_fabtopo **topo)
{
	struct rp_sim_model m;
	struct rp_sim_error err;
	char *buf = NULL, e_text[256];
	size_t len = 0;
	FILE *f;

	assert_int_equal(rp_sim_model_parse(text, strlen(text), &m, &err), 0);
	scene_init(s, m.nodes, m.adapters);
	for (uint32_t e = 0; e < s->n_eps; e++)
		rp_sim_ep_names(&m, e, s->eps[e].node, sizeof(s->eps[e].node), s->eps[e].device, sizeof(s->eps[e].device));
	for (size_t i = 0; i < s->n; i++) {
		uint32_t a = s->pair_eps[2 * i], b = s->pair_eps[2 * i + 1];
		double v, loss;

		if (rp_sim_link_of(&m, a, b, &v) == RP_SIM_LINK_DEAD || rp_sim_fabric_dir(&m, a, b, &loss))
			s->status[i] = RP_ST_RETRY_EXCEEDED;
	}
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(rp_sim_fabric_write_topology(&m, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rp_fabtopo_parse("sim", buf, len, topo, e_text, sizeof(e_text)), 0);
	free(buf);
	rp_sim_model_fini(&m);
}

static int scene_judge_topo(struct scene *s, const struct rp_fabtopo *topo, struct rp_verdict *v)
{
	struct rp_verdict_cfg c = { .min_bw = 0, .outlier = 0, .topology = topo };
	struct rp_result_seq ps = { .n = s->n, .get = scene_get, .put = scene_put, .arg = s };

	for (size_t i = 0; i < s->n; i++)
		s->confirm[i] = 0;
	return rp_verdict_judge(&c, s->eps, s->n_eps, s->pair_eps, &ps, v);
}

#define FAT_TREE "nodes 64\nadapters 2\nfabric 8 4 dmodk\nrandom-dead 0.01 5\n"

/* A dead leaf-spine link over a 1% background: without the topology the adapters whose every
 * cross-leaf direction crosses it fail with the same peers (all but their leaf's), so they are
 * unusable, not drained, under one group suspect (rule 4); with it, the link is the first suspect,
 * nothing is drained, and only the background is left as path faults. */
static void test_localize_uplink(void **state)
{
	struct scene s;
	struct rp_fabtopo *topo;
	struct rp_verdict v;
	size_t bg;

	(void)state;
	scene_from_model(&s, FAT_TREE, &topo);
	bg = 0;
	for (size_t i = 0; i < s.n; i++)
		bg += s.status[i] != RP_ST_OK && s.pair_eps[2 * i] < s.pair_eps[2 * i + 1];
	rp_fabtopo_destroy(topo);
	scene_fini(&s);
	scene_from_model(&s, FAT_TREE "fault uplink leaf1-3:spine2 dead\n", &topo);
	assert_int_equal(scene_judge_topo(&s, NULL, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_true(v.n_unusable >= 2);
	assert_int_equal(v.suspects[0].kind, RP_COMP_GROUP);
	assert_false(v.localized);
	rp_verdict_fini(&v);
	assert_int_equal(scene_judge_topo(&s, topo, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_true(v.localized);
	assert_true(v.n_suspects >= 1);
	assert_int_equal(v.suspects[0].kind, RP_COMP_UPLINK);
	assert_string_equal(v.suspects[0].name, "leaf1-3 - spine2");
	assert_int_equal(v.suspects[0].failed, v.suspects[0].measured);
	assert_true(v.suspects[0].confidence > 0.9);
	assert_false(v.suspects[0].drain);
	assert_true(v.n_paths <= bg);   /* the background (less what the link's pairs already had) */
	rp_verdict_fini(&v);
	rp_fabtopo_destroy(topo);
	scene_fini(&s);
}

/* Two faults at once: a dead leaf and a dead adapter elsewhere. Only the adapter is drained (the
 * adapters under the leaf are not at fault); both are the first two suspects. A node whose adapters
 * are all dead has both drained. */
static void test_localize_leaf_and_adapters(void **state)
{
	struct scene s;
	struct rp_fabtopo *topo;
	struct rp_verdict v;
	uint32_t bad = 2 * 40 + 1;

	(void)state;
	scene_from_model(&s, FAT_TREE "fault leaf leaf0-2 dead\nfault adapter node40/mlx5_1 dead\n"
			 "fault cable node50/mlx5_0 dead\nfault adapter node50/mlx5_1 dead\n", &topo);
	assert_int_equal(scene_judge_topo(&s, topo, &v), 0);
	for (uint32_t e = 0; e < s.n_eps; e++) {
		bool want = e == bad || e / 2 == 50;

		if (v.eps[e].drain != want)
			fail_msg("endpoint %u: drain %d, want %d (%s)", e, v.eps[e].drain, want, v.eps[e].why);
	}
	assert_non_null(strstr(v.eps[bad].why, "adapter or its cable (leaf1-5 port 1)"));
	for (uint32_t e = 0; e < s.n_eps; e++)   /* leaf0-2: rail 0 of nodes 16-23, not drained, not usable */
		if (v.eps[e].unusable != (e % 2 == 0 && e / 2 >= 16 && e / 2 < 24))
			fail_msg("endpoint %u: unusable %d (%s)", e, v.eps[e].unusable, v.eps[e].why);
	assert_string_equal(v.nodes[16].recommended, "=mlx5_1:1");
	assert_int_equal(v.nodes[50].n_drain, v.nodes[50].n_eps);
	assert_true(v.n_suspects >= 4);
	for (size_t k = 0; k < 4; k++)
		assert_true(v.suspects[k].kind == RP_COMP_LEAF ? strcmp(v.suspects[k].name, "leaf0-2") == 0
				  : v.suspects[k].kind == RP_COMP_ADAPTER && v.suspects[k].drain);
	rp_verdict_fini(&v);
	rp_fabtopo_destroy(topo);
	scene_fini(&s);
}

/* The test bed's three leaves (e2e 81): six adapters on one host, two a leaf, one spine; leaf 1's
 * uplink dead. The uplink is the first suspect (the other uplinks carried passing pairs, the leaf
 * its own pair), nothing is drained, with or without the topology; with it, the leaves' failures are
 * no longer taken for separate rails (the file says the leaves share a spine). */
static void test_localize_three_leaves(void **state)
{
	static const char topo_text[] = "route dmodk\nadapter vm/mlx5_0:1 br0 1\nadapter vm/mlx5_1:1 br0 2\n"
				       "adapter vm/mlx5_2:1 br1 1\nadapter vm/mlx5_3:1 br1 2\nadapter vm/mlx5_4:1 br2 1\n"
				       "adapter vm/mlx5_5:1 br2 2\nuplink br0 sp0\nuplink br1 sp0\nuplink br2 sp0\n";
	struct rp_fabtopo *topo;
	struct scene s;
	struct rp_verdict v;
	char err[256];

	(void)state;
	scene_init(&s, 6, 1);      /* room for 36 results; then one node "vm" with mlx5_0..5 */
	s.n = 0;
	for (uint32_t a = 0; a < 6; a++) {
		snprintf(s.eps[a].node, sizeof(s.eps[a].node), "vm");
		snprintf(s.eps[a].device, sizeof(s.eps[a].device), "mlx5_%u", a);
	}
	for (uint32_t a = 0; a < 6; a++)
		for (uint32_t b = 0; b < 6; b++) {
			if (a == b)
				continue;
			s.pair_eps[2 * s.n] = a;
			s.pair_eps[2 * s.n + 1] = b;
			s.status[s.n++] = (a / 2 == 1) != (b / 2 == 1) ? RP_ST_RETRY_EXCEEDED : RP_ST_OK;
		}
	assert_int_equal(rp_fabtopo_parse("t", topo_text, strlen(topo_text), &topo, err, sizeof(err)), 0);
	/* one host without the file: leaf 1 looks like a rail of its own (as separate bridges do, e2e 10) */
	assert_int_equal(scene_judge_topo(&s, NULL, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_int_equal(v.n_paths, 0);
	assert_false(v.pass);
	rp_verdict_fini(&v);
	assert_int_equal(scene_judge_topo(&s, topo, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_int_equal(v.n_paths, 0);
	assert_int_equal(v.suspects[0].kind, RP_COMP_UPLINK);
	assert_string_equal(v.suspects[0].name, "br1 - sp0");
	assert_true(v.suspects[0].confidence > 0.9);
	rp_verdict_fini(&v);
	rp_fabtopo_destroy(topo);
	scene_fini(&s);
}

/* Every pair of endpoint e with anyone fails (a dead adapter, as the probes see it). */
static void scene_kill_ep(struct scene *s, uint32_t e)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->pair_eps[2 * i] == e || s->pair_eps[2 * i + 1] == e)
			s->status[i] = RP_ST_RETRY_EXCEEDED;
}

/* A dead spine without the topology: under D-mod-K every destination routed through it (a quarter
 * of the nodes here, on both rails) fails with the peers behind other leaves. The count used to drain
 * all 32 of them and Slurm-drain their 16 nodes; now none is drained, each is unusable (left out of
 * its node's NCCL_IB_HCA), and one group suspect per rail names them. */
static void test_spine_dead_drains_nobody(void **state)
{
	struct scene s;
	struct rp_fabtopo *topo;
	struct rp_verdict v;

	(void)state;
	scene_from_model(&s, FAT_TREE "fault spine spine1 dead\n", &topo);
	assert_int_equal(scene_judge_topo(&s, NULL, &v), 0);
	assert_int_equal(drained(&v), 0);
	for (uint32_t e = 0; e < s.n_eps; e++)
		if (v.eps[e].unusable != (e / 2 % 4 == 1))
			fail_msg("endpoint %u: unusable %d (%s)", e, v.eps[e].unusable, v.eps[e].why);
	assert_int_equal(v.n_unusable, 32);
	assert_non_null(strstr(v.eps[2].why, "one of 16 adapters of its fabric blamed together"));
	assert_int_equal(v.suspects[0].kind, RP_COMP_GROUP);
	assert_int_equal(v.suspects[1].kind, RP_COMP_GROUP);
	assert_false(v.suspects[0].drain);
	assert_null(v.nodes[1].recommended);            /* node001: both adapters behind the spine */
	assert_int_equal(v.nodes[1].n_drain, 0);        /* and not a node to drain */
	assert_string_equal(v.nodes[0].recommended, "=mlx5_0:1,mlx5_1:1");
	assert_false(v.pass);
	rp_verdict_fini(&v);
	/* with the topology: the spine is the suspect, the same endpoints unusable, nothing drained */
	assert_int_equal(scene_judge_topo(&s, topo, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_int_equal(v.suspects[0].kind, RP_COMP_SPINE);
	assert_string_equal(v.suspects[0].name, "spine1");
	for (uint32_t e = 0; e < s.n_eps; e++)
		if (v.eps[e].unusable != (e / 2 % 4 == 1))
			fail_msg("endpoint %u with the topology: unusable %d (%s)", e, v.eps[e].unusable, v.eps[e].why);
	assert_null(v.nodes[1].recommended);
	rp_verdict_fini(&v);
	/* the topology without its routes (Slurm's topology.conf, ibnetdiscover): no spine can be blamed
	 * alone, the localization took the 16 victims of each rail for adapter faults and drained them;
	 * blamed together, they are unusable, not drained, and a group suspect names them */
	topo->dmodk = false;
	assert_int_equal(scene_judge_topo(&s, topo, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_int_equal(v.n_unusable, 32);
	assert_int_equal(v.suspects[0].kind, RP_COMP_GROUP);      /* one per rail, first; no spared adapter */
	assert_int_equal(v.suspects[1].kind, RP_COMP_GROUP);
	for (size_t k = 0; k < v.n_suspects; k++)
		assert_false(v.suspects[k].kind == RP_COMP_ADAPTER);
	assert_non_null(strstr(v.eps[2].why, "the topology's routes are unknown"));
	rp_verdict_fini(&v);
	rp_fabtopo_destroy(topo);
	scene_fini(&s);
}

/* The rule's edge: RP_VERDICT_TOGETHER dead adapters on one rail are drained, one more and none is
 * (each unusable instead); a dead adapter that failed on its own side (its port down) is drained
 * whatever the count. */
static void test_together_edge(void **state)
{
	struct scene s;
	struct rp_verdict v;

	(void)state;
	for (int extra = 0; extra < 2; extra++) {
		scene_init(&s, 40, 1);
		for (uint32_t e = 0; e < RP_VERDICT_TOGETHER + (uint32_t)extra; e++)
			scene_kill_ep(&s, 3 * e + 1);
		assert_int_equal(scene_judge(&s, &v), 0);
		assert_int_equal(drained(&v), extra ? 0 : RP_VERDICT_TOGETHER);
		assert_int_equal(v.n_unusable, extra ? RP_VERDICT_TOGETHER + 1 : 0);
		assert_int_equal(v.nodes[1].recommended == NULL, 1);
		assert_int_equal(v.suspects[0].kind, extra ? RP_COMP_GROUP : RP_COMP_ADAPTER);
		rp_verdict_fini(&v);
		scene_fini(&s);
	}
}

/* Rule 4 at a fabric's scale: 8 rails of 128 adapters. Dead adapters (they reach no peer) spread over
 * every rail alike, more than RP_VERDICT_TOGETHER a rail, are independent faults: each is drained
 * (the rule used to spare them all as a shared switch, and drained none of 82 at 1,024 x 8). A
 * leaf's worth dead on one rail, the others all but clean, is still spared: unusable, not drained,
 * under one group suspect; the lone dead adapters of the other rails are drained. Adapters slow with
 * every peer, as many a rail, are drained as the dead are (they pass with no peer: rule 2), and ten
 * dead nodes (ten dead adapters a rail) are drained whole (all were left undrained as a switch). */
static void test_together_at_scale(void **state)
{
	const size_t nodes = 128, rails = 8;
	struct scene s;
	struct rp_verdict v;

	(void)state;
	scene_init(&s, nodes, rails);
	for (uint32_t r = 0; r < rails; r++)
		for (uint32_t k = 0; k < 9 + r % 4; k++)            /* 9 to 12 a rail, on nodes spread out */
			scene_kill_ep(&s, (uint32_t)(((11 * k + 3 * r) % nodes) * rails + r));
	assert_int_equal(scene_judge(&s, &v), 0);
	for (uint32_t e = 0; e < s.n_eps; e++) {
		uint32_t r = e % rails, node = e / rails;
		bool dead = false;

		for (uint32_t k = 0; k < 9 + r % 4; k++)
			dead |= node == (11 * k + 3 * r) % nodes;
		if (v.eps[e].drain != dead || v.eps[e].unusable)
			fail_msg("endpoint %u: drain %d unusable %d, dead %d (%s)", e, v.eps[e].drain, v.eps[e].unusable,
				 dead, v.eps[e].why);
	}
	assert_int_equal(v.suspects[0].kind, RP_COMP_ADAPTER);
	rp_verdict_fini(&v);
	scene_fini(&s);

	/* rail 0: 16 consecutive nodes dead (a leaf that forwards nothing); rails 1-7: one dead each */
	scene_init(&s, nodes, rails);
	for (uint32_t k = 0; k < 16; k++)
		scene_kill_ep(&s, (32 + k) * (uint32_t)rails);
	for (uint32_t r = 1; r < rails; r++)
		scene_kill_ep(&s, (uint32_t)((5 + 9 * r) * rails + r));
	assert_int_equal(scene_judge(&s, &v), 0);
	for (uint32_t e = 0; e < s.n_eps; e++) {
		uint32_t r = e % rails, node = e / rails;
		bool leaf = r == 0 && node >= 32 && node < 48, lone = r > 0 && node == 5 + 9 * r;

		if (v.eps[e].unusable != leaf || v.eps[e].drain != lone)
			fail_msg("endpoint %u: drain %d unusable %d (%s)", e, v.eps[e].drain, v.eps[e].unusable, v.eps[e].why);
	}
	assert_non_null(strstr(v.eps[32 * rails].why, "one of 16 adapters of its fabric blamed together"));
	size_t groups = 0;

	for (size_t k = 0; k < v.n_suspects; k++)
		groups += v.suspects[k].kind == RP_COMP_GROUP;
	assert_int_equal(groups, 1);
	rp_verdict_fini(&v);
	scene_fini(&s);

	/* 9 to 12 adapters a rail at half the rate with every peer (below --min-bw 0.9): each drained */
	struct rp_verdict_cfg c = { .min_bw = 0.9, .outlier = 0 };
	struct rp_result_seq ps;
	size_t n_slow = 0;

	scene_init(&s, nodes, rails);
	s.slow = calloc(s.n_eps, sizeof(*s.slow));
	assert_non_null(s.slow);
	for (uint32_t r = 0; r < rails; r++)
		for (uint32_t k = 0; k < 9 + r % 4; k++, n_slow++)
			s.slow[((11 * k + 5 * r) % nodes) * rails + r] = true;
	ps = (struct rp_result_seq){ .n = s.n, .get = scene_get, .put = scene_put, .arg = &s };
	assert_int_equal(rp_verdict_judge(&c, s.eps, s.n_eps, s.pair_eps, &ps, &v), 0);
	for (uint32_t e = 0; e < s.n_eps; e++)
		if (v.eps[e].drain != s.slow[e] || v.eps[e].unusable)
			fail_msg("endpoint %u: drain %d unusable %d, slow %d (%s)", e, v.eps[e].drain, v.eps[e].unusable,
				 s.slow[e], v.eps[e].why);
	assert_int_equal(drained(&v), n_slow);
	rp_verdict_fini(&v);
	scene_fini(&s);

	/* 10 whole nodes dead (10 dead adapters on every rail): every adapter drained, each node whole */
	scene_init(&s, nodes, rails);
	for (uint32_t k = 0; k < 10; k++)
		for (uint32_t r = 0; r < rails; r++)
			scene_kill_ep(&s, (7 + 12 * k) * (uint32_t)rails + r);
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_int_equal(drained(&v), 10 * rails);
	assert_int_equal(v.n_unusable, 0);
	for (uint32_t k = 0; k < 10; k++)
		assert_int_equal(v.nodes[7 + 12 * k].n_drain, v.nodes[7 + 12 * k].n_eps);
	rp_verdict_fini(&v);
	scene_fini(&s);
}

/* A loopback of one adapter with itself (a self pair, which never leaves the adapter) that only
 * failed: the adapter is drained, although it has no peer; one that passed, nothing; two adapters
 * whose self pairs pass and whose pair with each other fails: a path fault. */
static void test_self_pair(void **state)
{
	struct scene s;
	struct rp_verdict v;

	(void)state;
	memset(&s, 0, sizeof(s));
	scene_init(&s, 2, 1);
	s.n = 0;
	for (uint32_t e = 0; e < 2; e++) {
		s.pair_eps[2 * s.n] = s.pair_eps[2 * s.n + 1] = e;
		s.status[s.n++] = e == 1 ? RP_ST_RETRY_EXCEEDED : RP_ST_OK;
	}
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_false(v.eps[0].drain);
	assert_true(v.eps[1].drain);
	assert_non_null(strstr(v.eps[1].why, "reached no peer"));
	rp_verdict_fini(&v);
	s.status[1] = RP_ST_OK;
	s.pair_eps[2 * s.n] = 0;
	s.pair_eps[2 * s.n + 1] = 1;
	s.status[s.n++] = RP_ST_RETRY_EXCEEDED;
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_int_equal(v.n_paths, 1);
	rp_verdict_fini(&v);
	scene_fini(&s);
}

/* e2e 42's loopback: one host, three adapters, no self pairs, rxe2 behind a link that drops
 * everything. rxe2 moved no data, so it is no rail of its own (a fabric is endpoints that moved data
 * with each other) and its failures with the two that do are evidence: it is drained, they are not.
 * Before, a lone dead adapter covered the one host as fully as the healthy pair's fabric did, its
 * pairs were taken for separate rails, and nothing was drained. */
static void test_loopback_dead_adapter(void **state)
{
	struct scene s;
	struct rp_verdict v;

	(void)state;
	scene_init(&s, 3, 1);
	s.n = 0;
	for (uint32_t e = 0; e < 3; e++)
		snprintf(s.eps[e].node, sizeof(s.eps[e].node), "vm");
	for (uint32_t a = 0; a < 3; a++)
		for (uint32_t b = 0; b < 3; b++)
			if (a != b) {
				s.pair_eps[2 * s.n] = a;
				s.pair_eps[2 * s.n + 1] = b;
				s.status[s.n++] = a == 2 || b == 2 ? RP_ST_TIMEOUT : RP_ST_OK;
			}
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_false(v.eps[0].drain);
	assert_false(v.eps[1].drain);
	assert_true(v.eps[2].drain);
	assert_non_null(strstr(v.eps[2].why, "reached no peer: all 4 pairs failed"));
	assert_string_equal(v.nodes[0].recommended, "=mlx5_0:1,mlx5_0:1");
	rp_verdict_fini(&v);
	scene_fini(&s);
}

/* Two nodes, one of whose adapters has no usable port (port 0, every result no_usable_port): that one
 * is drained, its peer is not (before, as a lone dead link, neither would be). Three such ends with no
 * port at all: all three. */
static void test_no_port_is_its_own(void **state)
{
	struct scene s;
	struct rp_verdict v;

	(void)state;
	scene_init(&s, 2, 1);
	s.eps[1].port = 0;
	for (size_t i = 0; i < s.n; i++)
		s.status[i] = RP_ST_NO_PORT;
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_false(v.eps[0].drain);
	assert_true(v.eps[1].drain);
	assert_non_null(strstr(v.eps[1].why, "on its own side"));
	rp_verdict_fini(&v);
	scene_fini(&s);

	scene_init(&s, 3, 1);
	for (size_t e = 0; e < 3; e++)
		s.eps[e].port = 0;
	for (size_t i = 0; i < s.n; i++)
		s.status[i] = RP_ST_NO_PORT;
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_int_equal(drained(&v), 3);
	rp_verdict_fini(&v);
	scene_fini(&s);
}

/* The tail against a direct sum of the binomial terms. */
/* Adapters failing with the same peers (rule 4, no topology): three adapters of one fabric each fail
 * with the same twelve of their 63 peers and pass with the rest, as the destinations routed over one
 * bad leaf-spine link fail with that leaf's hosts. Each alone is far above the background, but three
 * independent faults would not pick the same twelve peers: none is drained, all three are unusable,
 * one group suspect names them. Two adapters failing with different halves of the fabric are two
 * faults: both drained. */
static void test_same_peers_drain_nobody(void **state)
{
	static const uint32_t victims[] = { 5, 20, 40 };
	struct scene s;
	struct rp_verdict v;

	(void)state;
	scene_init(&s, 64, 1);
	for (size_t i = 0; i < 3; i++)
		for (uint32_t q = 50; q < 62; q++)
			scene_kill(&s, victims[i], q);
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_int_equal(drained(&v), 0);
	assert_int_equal(v.n_unusable, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_true(v.eps[victims[i]].unusable);
		assert_non_null(strstr(v.eps[victims[i]].why, "the same peers as 2 other adapters"));
	}
	assert_int_equal(v.suspects[0].kind, RP_COMP_GROUP);
	assert_null(v.nodes[5].recommended);     /* unusable: out of its node's NCCL_IB_HCA */
	assert_non_null(v.nodes[50].recommended);
	rp_verdict_fini(&v);
	scene_fini(&s);

	scene_init(&s, 64, 1);
	for (uint32_t p = 0; p < 64; p++) {
		if (p != 5 && p % 2 == 0)
			scene_kill(&s, 5, p);
		if (p != 20 && p != 5 && (p % 4 == 1 || p % 4 == 2))
			scene_kill(&s, 20, p);
	}
	assert_int_equal(scene_judge(&s, &v), 0);
	assert_int_equal(drained(&v), 2);
	assert_true(v.eps[5].drain && v.eps[20].drain);
	assert_int_equal(v.n_unusable, 0);
	rp_verdict_fini(&v);
	scene_fini(&s);
}

static void test_binom_tail(void **state)
{
	static const struct { uint32_t k, n; double p; } t[] = {
		{ 5, 20, 0.1 }, { 12, 255, 0.01 }, { 3, 3, 0.2 }, { 40, 200, 0.05 }, { 1, 1, 0.5 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		double sum = 0;

		for (uint32_t x = t[i].k; x <= t[i].n; x++)
			sum += exp(lgamma(t[i].n + 1.0) - lgamma(x + 1.0) - lgamma(t[i].n - x + 1.0) + x * log(t[i].p) +
				   (t[i].n - x) * log1p(-t[i].p));
		assert_true(fabs(rp_verdict_log_binom_tail(t[i].k, t[i].n, t[i].p) - log(sum)) < 1e-9);
	}
	assert_true(rp_verdict_log_binom_tail(0, 10, 0.1) == 0);
	assert_true(rp_verdict_log_binom_tail(1, 10, 0.5) == 0);       /* k below the mean: 1 */
	assert_true(isinf(rp_verdict_log_binom_tail(1, 10, 0)));
	assert_true(rp_verdict_log_binom_tail(255, 255, 0.02) < -900);  /* no underflow to 0 */
}

/* The hypergeometric tail against its sum, term by term. */
static void test_hyper_tail(void **state)
{
	static const struct { uint32_t k, N, K, m; } t[] = {
		{ 5, 10, 5, 5 }, { 12, 60, 12, 12 }, { 4, 60, 12, 12 }, { 20, 1000, 100, 50 }, { 30, 255, 40, 121 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		double sum = 0, c = lgamma(t[i].N + 1.0) - lgamma(t[i].m + 1.0) - lgamma(t[i].N - t[i].m + 1.0);

		for (uint32_t x = t[i].k; x <= t[i].K && x <= t[i].m; x++)
			sum += exp(lgamma(t[i].K + 1.0) - lgamma(x + 1.0) - lgamma(t[i].K - x + 1.0) +
				   lgamma(t[i].N - t[i].K + 1.0) - lgamma(t[i].m - x + 1.0) -
				   lgamma(t[i].N - t[i].K - t[i].m + x + 1.0) - c);
		assert_true(fabs(rp_verdict_log_hyper_tail(t[i].k, t[i].N, t[i].K, t[i].m) - log(sum)) < 1e-9);
	}
	assert_true(fabs(rp_verdict_log_hyper_tail(5, 10, 5, 5) + log(252.0)) < 1e-12);   /* 1 / C(10, 5) */
	assert_true(rp_verdict_log_hyper_tail(2, 60, 12, 12) == 0);       /* below the mean 2.4: 1 */
	assert_true(isinf(rp_verdict_log_hyper_tail(13, 60, 12, 12)));    /* more than either set */
	assert_true(rp_verdict_log_hyper_tail(990, 1022, 992, 993) < -100);   /* no underflow to 0 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_background_drains_nobody),
		cmocka_unit_test(test_faulty_adapters_drained_over_background),
		cmocka_unit_test(test_two_endpoints_one_dead_link),
		cmocka_unit_test(test_shared_failures_drain_nobody),
		cmocka_unit_test(test_unconfirmed_is_no_evidence),
		cmocka_unit_test(test_localize_uplink),
		cmocka_unit_test(test_localize_leaf_and_adapters),
		cmocka_unit_test(test_localize_three_leaves),
		cmocka_unit_test(test_spine_dead_drains_nobody),
		cmocka_unit_test(test_together_edge),
		cmocka_unit_test(test_together_at_scale),
		cmocka_unit_test(test_self_pair),
		cmocka_unit_test(test_loopback_dead_adapter),
		cmocka_unit_test(test_no_port_is_its_own),
		cmocka_unit_test(test_same_peers_drain_nobody),
		cmocka_unit_test(test_binom_tail),
		cmocka_unit_test(test_hyper_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
