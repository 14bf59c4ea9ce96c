/* test_mx_schedule.c: every pattern yields exactly its pair set, in contention-free rounds, with the round
 * counts the tournament promises; sample:K is deterministic given the seed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "job/mx_schedule.h"
#include "base/util.h"

/* Endpoints of nodes with per_node[i] adapters each, in canonical order. */
static struct rp_sched_ep *eps_make(const unsigned *per_node, size_t n_nodes, size_t *n_p)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < n_nodes; i++)
		n += per_node[i];
	struct rp_sched_ep *eps = calloc(n ? n : 1, sizeof(*eps));

	assert_non_null(eps);
	for (size_t i = 0; i < n_nodes; i++)
		for (unsigned j = 0; j < per_node[i]; j++)
			eps[k++] = (struct rp_sched_ep){ .node = (uint32_t)i, .rail = j };
	*n_p = n;
	return eps;
}

/* Walk every round: check contention-freedom and a < b; count each pair in seen[a * n + b]. */
static void walk(const struct rp_sched *s, size_t n, unsigned *seen)
{
	size_t cap = rp_sched_max_round_pairs(s), got;
	struct rp_sched_pair *pairs = calloc(cap ? cap : 1, sizeof(*pairs));
	bool *busy = calloc(n ? n : 1, sizeof(*busy));
	uint64_t total = 0;

	assert_non_null(pairs);
	assert_non_null(busy);
	for (size_t r = 0; r < rp_sched_n_rounds(s); r++) {
		memset(busy, 0, n * sizeof(*busy));
		assert_int_equal(rp_sched_round(s, r, pairs, cap, &got), 0);
		assert_int_equal(got, rp_sched_round_size(s, r));
		for (size_t i = 0; i < got; i++) {
			assert_true(pairs[i].a < pairs[i].b);
			assert_true(pairs[i].b < n);
			assert_false(busy[pairs[i].a]);
			assert_false(busy[pairs[i].b]);
			busy[pairs[i].a] = busy[pairs[i].b] = true;
			seen[pairs[i].a * n + pairs[i].b]++;
		}
		total += got;
	}
	assert_int_equal(total, rp_sched_n_pairs(s));
	free(pairs);
	free(busy);
}

typedef bool (*expect_fn)(const struct rp_sched_ep *eps, size_t a, size_t b);

static bool expect_all(const struct rp_sched_ep *eps, size_t a, size_t b)
{
	(void)eps;
	(void)a;
	(void)b;
	return true;
}

static bool expect_rail(const struct rp_sched_ep *eps, size_t a, size_t b)
{
	return eps[a].rail == eps[b].rail && eps[a].node != eps[b].node;
}

static bool expect_intra(const struct rp_sched_ep *eps, size_t a, size_t b)
{
	return eps[a].node == eps[b].node;
}

/* Build the schedule and check that its pairs are exactly those expect() accepts, each once. */
static struct rp_sched *check_pattern(const unsigned *per_node, size_t n_nodes, const char *pattern, expect_fn expect)
{
	struct rp_pattern pat;
	struct rp_sched *s = NULL;
	size_t n;
	struct rp_sched_ep *eps = eps_make(per_node, n_nodes, &n);
	unsigned *seen = calloc(n * n + 1, sizeof(*seen));

	assert_non_null(seen);
	assert_int_equal(rp_pattern_parse(pattern, &pat), 0);
	assert_int_equal(rp_sched_create(eps, n, &pat, 1, &s), 0);
	walk(s, n, seen);
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			assert_int_equal(seen[a * n + b], expect(eps, a, b) ? 1 : 0);
	free(seen);
	free(eps);
	return s;
}

static void test_full_rounds_and_pairs(void **state)
{
	(void)state;
	for (unsigned e = 1; e <= 13; e++) {
		unsigned per_node[13];

		for (unsigned i = 0; i < e; i++)
			per_node[i] = 1;
		struct rp_sched *s = check_pattern(per_node, e, "full", expect_all);

		assert_int_equal(rp_sched_n_rounds(s), e < 2 ? 0 : (e % 2 ? e : e - 1));
		assert_int_equal(rp_sched_n_pairs(s), e * (e - 1) / 2);
		rp_sched_destroy(s);
	}
	/* Several adapters per node: full covers intra-node pairs too. */
	unsigned mixed[] = { 2, 3, 1, 2 };
	struct rp_sched *s = check_pattern(mixed, 4, "full", expect_all);

	assert_int_equal(rp_sched_n_rounds(s), 7);
	rp_sched_destroy(s);
}

static void test_rail(void **state)
{
	unsigned even[] = { 4, 4, 4, 4 };
	unsigned ragged[] = { 3, 1, 3, 2, 3 };
	struct rp_sched *s;

	(void)state;
	s = check_pattern(even, 4, "rail", expect_rail);
	assert_int_equal(rp_sched_n_rounds(s), 3);
	assert_int_equal(rp_sched_max_round_pairs(s), 8);
	rp_sched_destroy(s);
	/* Rails of 5, 4 and 3 endpoints: the longest tournament (5 players, odd) sets the rounds. */
	s = check_pattern(ragged, 5, "rail", expect_rail);
	assert_int_equal(rp_sched_n_rounds(s), 5);
	assert_int_equal(rp_sched_n_pairs(s), 10 + 6 + 3);
	rp_sched_destroy(s);
}

static void test_intra(void **state)
{
	unsigned per_node[] = { 3, 1, 4, 2 };
	struct rp_sched *s;

	(void)state;
	s = check_pattern(per_node, 4, "intra", expect_intra);
	assert_int_equal(rp_sched_n_rounds(s), 3);
	assert_int_equal(rp_sched_n_pairs(s), 3 + 0 + 6 + 1);
	rp_sched_destroy(s);
}

static void test_shift_covers_all_pairs(void **state)
{
	(void)state;
	for (unsigned e = 2; e <= 16; e++) {
		unsigned per_node[16];

		for (unsigned i = 0; i < e; i++)
			per_node[i] = 1;
		struct rp_sched *s = check_pattern(per_node, e, "shift", expect_all);

		assert_true(rp_sched_n_rounds(s) >= (e % 2 ? e : e - 1));
		assert_true(rp_sched_n_rounds(s) <= 3 * (e / 2));
		rp_sched_destroy(s);
	}
}

/* In shift round r every pair has the same distance min(|a-b|, E-|a-b|). */
static void test_shift_rounds_keep_one_distance(void **state)
{
	unsigned per_node[] = { 2, 2, 2, 2, 2, 2 };
	struct rp_pattern pat = { .kind = RP_PATTERN_SHIFT };
	struct rp_sched *s;
	struct rp_sched_pair pairs[12];
	size_t n, got;
	struct rp_sched_ep *eps = eps_make(per_node, 6, &n);

	(void)state;
	assert_int_equal(rp_sched_create(eps, n, &pat, 0, &s), 0);
	for (size_t r = 0; r < rp_sched_n_rounds(s); r++) {
		assert_int_equal(rp_sched_round(s, r, pairs, 12, &got), 0);
		assert_true(got > 0);
		for (size_t i = 1; i < got; i++) {
			size_t d0 = pairs[0].b - pairs[0].a, d = pairs[i].b - pairs[i].a;

			d0 = d0 < n - d0 ? d0 : n - d0;
			d = d < n - d ? d : n - d;
			assert_int_equal(d, d0);
		}
	}
	rp_sched_destroy(s);
	free(eps);
}

/* Peers of every endpoint under sample:K with this seed, as an n x n matrix. */
static unsigned *sample_run(size_t n, unsigned k, uint64_t seed, size_t *rounds_p)
{
	struct rp_pattern pat = { .kind = RP_PATTERN_SAMPLE, .k = k };
	struct rp_sched_ep *eps = calloc(n, sizeof(*eps));
	unsigned *seen = calloc(n * n, sizeof(*seen));
	struct rp_sched *s;

	assert_non_null(eps);
	assert_non_null(seen);
	for (size_t i = 0; i < n; i++)
		eps[i] = (struct rp_sched_ep){ .node = (uint32_t)i / 4, .rail = (uint32_t)i % 4 };
	assert_int_equal(rp_sched_create(eps, n, &pat, seed, &s), 0);
	walk(s, n, seen);
	*rounds_p = rp_sched_n_rounds(s);
	rp_sched_destroy(s);
	free(eps);
	return seen;
}

static void test_sample_k_peers_deterministic(void **state)
{
	size_t n = 64, rounds;
	unsigned *a = sample_run(n, 3, 42, &rounds);
	unsigned *b = sample_run(n, 3, 42, &rounds);
	unsigned *c = sample_run(n, 3, 43, &rounds);

	(void)state;
	assert_int_equal(rounds, 3);
	for (size_t i = 0; i < n; i++) {
		unsigned peers = 0;

		for (size_t j = 0; j < n; j++) {
			unsigned v = i < j ? a[i * n + j] : a[j * n + i];

			assert_true(v <= 1);     /* distinct peers */
			peers += v;
		}
		assert_int_equal(peers, 3);
	}
	assert_memory_equal(a, b, n * n * sizeof(*a));
	assert_true(memcmp(a, c, n * n * sizeof(*a)) != 0);
	free(a);
	free(b);
	free(c);

	/* Odd E: each round leaves one endpoint out, so K or K-1 peers. */
	n = 9;
	a = sample_run(n, 4, 7, &rounds);
	for (size_t i = 0; i < n; i++) {
		unsigned peers = 0;

		for (size_t j = 0; j < n; j++)
			peers += i < j ? a[i * n + j] : a[j * n + i];
		assert_true(peers == 4 || peers == 3);
	}
	free(a);
}

static void test_sample_too_many_peers_rejected(void **state)
{
	struct rp_sched_ep eps[4] = { { 0, 0 }, { 1, 0 }, { 2, 0 }, { 3, 0 } };
	struct rp_pattern pat = { .kind = RP_PATTERN_SAMPLE, .k = 4 };
	struct rp_sched *s = NULL;

	(void)state;
	assert_int_equal(rp_sched_create(eps, 4, &pat, 1, &s), -EINVAL);
	pat.k = 3;
	assert_int_equal(rp_sched_create(eps, 4, &pat, 1, &s), 0);
	assert_int_equal(rp_sched_n_pairs(s), 6);   /* K = E-1 is every pair */
	rp_sched_destroy(s);
}

static void test_unsorted_endpoints_rejected(void **state)
{
	struct rp_sched_ep backwards[] = { { 1, 0 }, { 0, 0 } };
	struct rp_sched_ep gap[] = { { 0, 0 }, { 0, 2 } };
	struct rp_pattern pat = { .kind = RP_PATTERN_FULL };
	struct rp_sched *s = NULL;

	(void)state;
	assert_int_equal(rp_sched_create(backwards, 2, &pat, 0, &s), -EINVAL);
	assert_int_equal(rp_sched_create(gap, 2, &pat, 0, &s), -EINVAL);
	assert_null(s);
}

static void test_pattern_parse(void **state)
{
	struct rp_pattern p;
	char buf[32];

	(void)state;
	assert_int_equal(rp_pattern_parse("rail", &p), 0);
	assert_int_equal(p.kind, RP_PATTERN_RAIL);
	assert_int_equal(rp_pattern_parse("sample:5", &p), 0);
	assert_int_equal(p.kind, RP_PATTERN_SAMPLE);
	assert_int_equal(p.k, 5);
	assert_string_equal(rp_pattern_str(&p, buf, sizeof(buf)), "sample:5");
	assert_int_equal(rp_pattern_parse("sample:0", &p), -EINVAL);
	assert_int_equal(rp_pattern_parse("sample:", &p), -EINVAL);
	assert_int_equal(rp_pattern_parse("sample:-1", &p), -EINVAL);
	assert_int_equal(rp_pattern_parse("Full", &p), -EINVAL);
	assert_int_equal(rp_pattern_parse("", &p), -EINVAL);
}

/* 1024 nodes x 8 adapters, rail: sizes come out right and nothing O(E^2) is built (the round buffer
 * holds one round; the walk touches each pair once). */
static void test_rail_1024x8_sizes(void **state)
{
	size_t n = 1024 * 8, cap, got;
	struct rp_sched_ep *eps = calloc(n, sizeof(*eps));
	struct rp_pattern pat = { .kind = RP_PATTERN_RAIL };
	struct rp_sched *s;
	struct rp_sched_pair *pairs;
	uint64_t total = 0;

	(void)state;
	assert_non_null(eps);
	for (size_t i = 0; i < n; i++)
		eps[i] = (struct rp_sched_ep){ .node = (uint32_t)(i / 8), .rail = (uint32_t)(i % 8) };
	assert_int_equal(rp_sched_create(eps, n, &pat, 0, &s), 0);
	assert_int_equal(rp_sched_n_rounds(s), 1023);
	assert_int_equal(rp_sched_n_pairs(s), 8ULL * 1024 * 1023 / 2);
	cap = rp_sched_max_round_pairs(s);
	assert_int_equal(cap, 4096);
	pairs = calloc(cap, sizeof(*pairs));
	assert_non_null(pairs);
	for (size_t r = 0; r < rp_sched_n_rounds(s); r++) {
		assert_int_equal(rp_sched_round(s, r, pairs, cap, &got), 0);
		for (size_t i = 0; i < got; i++)
			assert_true(eps[pairs[i].a].rail == eps[pairs[i].b].rail);
		total += got;
	}
	assert_int_equal(total, rp_sched_n_pairs(s));
	assert_int_equal(rp_sched_round(s, 1023, pairs, cap, &got), -EINVAL);
	assert_int_equal(rp_sched_round(s, 0, pairs, cap - 1, &got), -ENOSPC);
	free(pairs);
	rp_sched_destroy(s);
	free(eps);
}

/* Packing arbitrary pairs: no endpoint twice in a round, every pair placed once, first fit. */
static void test_pack_contention_free(void **state)
{
	/* a star on endpoint 0 (4 pairs: 4 rounds at least), plus pairs that fit beside it */
	const struct rp_sched_pair p[] = { { 0, 1 }, { 0, 2 }, { 2, 3 }, { 0, 3 }, { 1, 3 }, { 0, 70 }, { 4, 70 }, { 5, 6 } };
	uint32_t round_of[RP_ARRAY_SIZE(p)];
	size_t n_rounds = 0, n = RP_ARRAY_SIZE(p);

	(void)state;
	assert_int_equal(rp_sched_pack(p, n, 80, round_of, &n_rounds), 0);
	assert_int_equal(n_rounds, 4);
	for (size_t i = 0; i < n; i++) {
		assert_true(round_of[i] < n_rounds);
		for (size_t j = i + 1; j < n; j++)
			if (round_of[i] == round_of[j])
				assert_true(p[i].a != p[j].a && p[i].a != p[j].b && p[i].b != p[j].a && p[i].b != p[j].b);
	}
	/* first fit: {0,1} and {2,3} and {5,6} share round 0; {0,2} and {1,3} round 1 */
	assert_int_equal(round_of[0], 0);
	assert_int_equal(round_of[2], 0);
	assert_int_equal(round_of[7], 0);
	assert_int_equal(round_of[1], 1);
	assert_int_equal(round_of[4], 1);
	assert_int_equal(round_of[3], 2);
	assert_int_equal(round_of[5], 3);
	assert_int_equal(round_of[6], 0);
	/* nothing to pack: no round */
	assert_int_equal(rp_sched_pack(p, 0, 80, round_of, &n_rounds), 0);
	assert_int_equal(n_rounds, 0);
	/* an endpoint out of range, a self pair */
	assert_int_equal(rp_sched_pack(p, n, 70, round_of, &n_rounds), -EINVAL);
	assert_int_equal(rp_sched_pack(&(struct rp_sched_pair){ 3, 3 }, 1, 80, round_of, &n_rounds), -EINVAL);
}

/* matrix --concurrent-rails's solo rounds: for rail, one group per rail, and round r of group g has
 * only rail g's endpoints, each node at most once (a node has one adapter busy: nothing else on its
 * adapters); the groups' round r pairs, in group order, are exactly round r's pairs in their places
 * (the concurrent round's results are matched to the solo ones by place). Ragged rails included;
 * shift and sample have no groups. Before, the schedule had no per-group rounds. */
static void test_rail_group_rounds_make_the_round(void **state)
{
	unsigned ragged[] = { 3, 1, 3, 2, 3 };
	const char *const none[] = { "shift", "sample:2" };
	size_t n, got, gsz;
	struct rp_sched_ep *eps = eps_make(ragged, 5, &n);
	struct rp_pattern pat;
	struct rp_sched *s;
	struct rp_sched_pair round[16], part[16];

	(void)state;
	assert_int_equal(rp_pattern_parse("rail", &pat), 0);
	assert_int_equal(rp_sched_create(eps, n, &pat, 1, &s), 0);
	assert_int_equal(rp_sched_n_groups(s), 3);
	for (size_t r = 0; r < rp_sched_n_rounds(s); r++) {
		size_t off = 0;

		assert_int_equal(rp_sched_round(s, r, round, 16, &got), 0);
		for (size_t g = 0; g < 3; g++) {
			bool node_busy[5] = { false };

			assert_int_equal(rp_sched_group_round(s, r, g, part, 16, &gsz), 0);
			assert_int_equal(gsz, rp_sched_group_round_size(s, r, g));
			for (size_t i = 0; i < gsz; i++) {
				assert_int_equal(eps[part[i].a].rail, g);
				assert_int_equal(eps[part[i].b].rail, g);
				assert_false(node_busy[eps[part[i].a].node] || node_busy[eps[part[i].b].node]);
				node_busy[eps[part[i].a].node] = node_busy[eps[part[i].b].node] = true;
				assert_true(off + i < got);
				assert_int_equal(part[i].a, round[off + i].a);
				assert_int_equal(part[i].b, round[off + i].b);
			}
			off += gsz;
		}
		assert_int_equal(off, got);
	}
	assert_int_equal(rp_sched_group_round(s, 0, 3, part, 16, &gsz), -EINVAL);
	assert_int_equal(rp_sched_group_round(s, rp_sched_n_rounds(s), 0, part, 16, &gsz), -EINVAL);
	assert_int_equal(rp_sched_group_round(s, 0, 0, part, 0, &gsz), -ENOSPC);
	rp_sched_destroy(s);
	for (size_t k = 0; k < 2; k++) {
		assert_int_equal(rp_pattern_parse(none[k], &pat), 0);
		assert_int_equal(rp_sched_create(eps, n, &pat, 1, &s), 0);
		assert_int_equal(rp_sched_n_groups(s), 0);
		assert_int_equal(rp_sched_group_round(s, 0, 0, part, 16, &gsz), -EINVAL);
		rp_sched_destroy(s);
	}
	free(eps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_rounds_and_pairs),
		cmocka_unit_test(test_rail),
		cmocka_unit_test(test_intra),
		cmocka_unit_test(test_shift_covers_all_pairs),
		cmocka_unit_test(test_shift_rounds_keep_one_distance),
		cmocka_unit_test(test_sample_k_peers_deterministic),
		cmocka_unit_test(test_sample_too_many_peers_rejected),
		cmocka_unit_test(test_unsorted_endpoints_rejected),
		cmocka_unit_test(test_pattern_parse),
		cmocka_unit_test(test_rail_1024x8_sizes),
		cmocka_unit_test(test_pack_contention_free),
		cmocka_unit_test(test_rail_group_rounds_make_the_round),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
