/* mx_schedule.c: contention-free rounds for the cluster matrix; see mx_schedule.h.
 *
 * full, rail and intra are unions of disjoint "groups" (all endpoints, one group per rail, one per
 * node), each playing a round-robin tournament (the circle method); groups are disjoint, so their
 * round r pairs can share round r. sample plays K rounds of the tournament of a random permutation.
 * shift walks the cycles of i -> i+k and colours their edges.
 */
#include "job/mx_schedule.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

struct shift_round {
	uint32_t k;                   /* the shift */
	uint8_t color;                /* which edges of the cycles: 0, 1 or 2 (the closing edge of odd cycles) */
};

struct rp_sched {
	struct rp_pattern pat;
	size_t n_eps;
	/* Groups (full, rail, intra, sample): members[start[g] .. start[g+1]) play one tournament. */
	size_t n_groups;
	size_t *start;
	uint32_t *members;
	/* sample: the tournament rounds played, in order. */
	uint32_t *rounds;
	/* shift: one entry per round. */
	struct shift_round *shift;
	size_t n_rounds;
	uint64_t n_pairs;
	size_t max_round_pairs;
};

int rp_pattern_parse(const char *s, struct rp_pattern *pat_p)
{
	static const struct { const char *name; enum rp_pattern_kind kind; } names[] = {
		{ "full", RP_PATTERN_FULL }, { "rail", RP_PATTERN_RAIL }, { "intra", RP_PATTERN_INTRA },
		{ "shift", RP_PATTERN_SHIFT },
	};
	uint64_t k;

	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < RP_ARRAY_SIZE(names); i++) {
		if (strcmp(s, names[i].name) == 0) {
			pat_p->kind = names[i].kind;
			pat_p->k = 0;
			return 0;
		}
	}
	if (strncmp(s, "sample:", 7) == 0 && rp_parse_u64(s + 7, 1, UINT32_MAX, false, &k) == 0) {
		pat_p->kind = RP_PATTERN_SAMPLE;
		pat_p->k = (uint32_t)k;
		return 0;
	}
	return -EINVAL;
}

const char *rp_pattern_str(const struct rp_pattern *pat, char *buf, size_t len)
{
	static const char *const names[] = { "full", "rail", "intra", "shift", "sample" };

	if (pat->kind == RP_PATTERN_SAMPLE)
		snprintf(buf, len, "sample:%u", pat->k);
	else if ((size_t)pat->kind < RP_ARRAY_SIZE(names))
		snprintf(buf, len, "%s", names[pat->kind]);
	else
		snprintf(buf, len, "unknown");
	return buf;
}

/* Rounds of a round-robin tournament among m players. */
static size_t tour_rounds(size_t m)
{
	if (m < 2)
		return 0;
	return (m & 1) ? m : m - 1;
}

/* Emit round r of the tournament among members[0..m) (circle method: position n-1 stays, the others
 * turn; with m odd, position m is the bye). Appends to pairs[*n_p...]. */
static void tour_round(const uint32_t *members, size_t m, size_t r, struct rp_sched_pair *pairs, size_t *n_p)
{
	size_t n = m + (m & 1);

	for (size_t i = 0; i < n / 2; i++) {
		size_t p, q;

		if (i == 0) {
			p = n - 1;
			q = r;
		} else {
			p = (r + i) % (n - 1);
			q = (r + (n - 1) - i) % (n - 1);
		}
		if (p >= m || q >= m)
			continue;
		uint32_t a = members[p], b = members[q];

		pairs[*n_p].a = a < b ? a : b;
		pairs[*n_p].b = a < b ? b : a;
		(*n_p)++;
	}
}

/* splitmix64: the seeded generator behind sample:K (same sequence on every rank). */
static uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A uniform number in [0, n), n >= 1 (multiply-shift; bias is below 2^-32 for n < 2^32). */
static uint64_t rng_below(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(state) * n) >> 64);
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Check the canonical order: nodes non-decreasing, rails 0,1,2.. within a node. */
static int eps_check(const struct rp_sched_ep *eps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool new_node = i == 0 || eps[i].node != eps[i - 1].node;

		if (i > 0 && eps[i].node < eps[i - 1].node)
			return rp_error(-EINVAL, "schedule: endpoint %zu: node %u after node %u (not sorted)", i,
					eps[i].node, eps[i - 1].node);
		if (new_node ? eps[i].rail != 0 : eps[i].rail != eps[i - 1].rail + 1)
			return rp_error(-EINVAL, "schedule: endpoint %zu: index %u within node %u out of order", i,
					eps[i].rail, eps[i].node);
	}
	return 0;
}

/* Groups for full (one), rail (one per index within node) and intra (one per node). */
static int groups_build(struct rp_sched *s, const struct rp_sched_ep *eps)
{
	size_t n = s->n_eps, n_groups = 0;

	if (s->pat.kind == RP_PATTERN_FULL || s->pat.kind == RP_PATTERN_SAMPLE) {
		n_groups = n ? 1 : 0;
	} else {
		for (size_t i = 0; i < n; i++) {
			size_t key = s->pat.kind == RP_PATTERN_RAIL ? eps[i].rail : eps[i].node;

			if (key + 1 > n_groups)
				n_groups = key + 1;
		}
	}
	s->n_groups = n_groups;
	s->start = calloc(n_groups + 1, sizeof(*s->start));
	s->members = calloc(n ? n : 1, sizeof(*s->members));
	if (!s->start || !s->members)
		return rp_error(-ENOMEM, "schedule: allocate groups for %zu endpoints", n);
	if (n_groups <= 1) {
		for (size_t i = 0; i < n; i++)
			s->members[i] = (uint32_t)i;
		s->start[n_groups] = n;
		return 0;
	}
	/* Counting sort by group key; stable, so members stay in endpoint order. */
	for (size_t i = 0; i < n; i++)
		s->start[(s->pat.kind == RP_PATTERN_RAIL ? eps[i].rail : eps[i].node) + 1]++;
	for (size_t g = 0; g < n_groups; g++)
		s->start[g + 1] += s->start[g];

	size_t *fill = calloc(n_groups, sizeof(*fill));

	if (!fill)
		return rp_error(-ENOMEM, "schedule: allocate groups for %zu endpoints", n);
	for (size_t i = 0; i < n; i++) {
		size_t g = s->pat.kind == RP_PATTERN_RAIL ? eps[i].rail : eps[i].node;

		s->members[s->start[g] + fill[g]++] = (uint32_t)i;
	}
	free(fill);
	return 0;
}

/* sample:K: a seeded permutation of the endpoints and K distinct tournament rounds of it. */
static int sample_build(struct rp_sched *s, uint64_t seed)
{
	size_t n = s->n_eps, total = tour_rounds(n);
	uint64_t st = seed;

	if (s->pat.k > total || s->pat.k >= n)
		return rp_error(-EINVAL, "schedule: sample:%u needs more than %u endpoints (have %zu; use full)",
				s->pat.k, s->pat.k, n);
	for (size_t i = n; i > 1; i--) {
		size_t j = rng_below(&st, i);
		uint32_t t = s->members[i - 1];

		s->members[i - 1] = s->members[j];
		s->members[j] = t;
	}
	uint32_t *all = calloc(total, sizeof(*all));

	s->rounds = calloc(s->pat.k, sizeof(*s->rounds));
	if (!all || !s->rounds) {
		free(all);
		return rp_error(-ENOMEM, "schedule: allocate %zu rounds", total);
	}
	for (size_t i = 0; i < total; i++)
		all[i] = (uint32_t)i;
	for (size_t i = 0; i < s->pat.k; i++) {
		size_t j = i + rng_below(&st, total - i);
		uint32_t t = all[i];

		all[i] = all[j];
		all[j] = t;
		s->rounds[i] = all[i];
	}
	free(all);
	return 0;
}

/* The number of pairs of shift round e. */
static size_t shift_round_size(size_t n, const struct shift_round *e)
{
	size_t g = gcd_u64(e->k, n), len = n / g;

	if (2 * (size_t)e->k == n)
		return e->k;
	if (len % 2 == 0)
		return n / 2;
	return e->color == 2 ? g : g * (len - 1) / 2;
}

/* shift: one table entry per round, 1-3 per shift k. */
static int shift_build(struct rp_sched *s)
{
	size_t n = s->n_eps, cap = 3 * (n / 2) + 1, r = 0;

	s->shift = calloc(cap, sizeof(*s->shift));
	if (!s->shift)
		return rp_error(-ENOMEM, "schedule: allocate %zu shift rounds", cap);
	for (size_t k = 1; k <= n / 2; k++) {
		size_t len = n / gcd_u64(k, n);
		int colors = 2 * k == n ? 1 : len % 2 == 0 ? 2 : 3;

		for (int c = 0; c < colors; c++)
			s->shift[r++] = (struct shift_round){ .k = (uint32_t)k, .color = (uint8_t)c };
	}
	s->n_rounds = r;
	return 0;
}

/* Pairs in round r of a group-based schedule. */
static size_t groups_round_size(const struct rp_sched *s, size_t r)
{
	size_t sum = 0;

	for (size_t g = 0; g < s->n_groups; g++) {
		size_t m = s->start[g + 1] - s->start[g];

		if (r < tour_rounds(m))
			sum += m / 2;
	}
	return sum;
}

size_t rp_sched_round_size(const struct rp_sched *s, size_t r)
{
	if (r >= s->n_rounds)
		return 0;
	if (s->pat.kind == RP_PATTERN_SHIFT)
		return shift_round_size(s->n_eps, &s->shift[r]);
	if (s->pat.kind == RP_PATTERN_SAMPLE)
		return s->n_eps / 2;
	return groups_round_size(s, r);
}

/* Rounds, pairs and the widest round, from the sizes alone (O(rounds x groups), never O(pairs)). */
static void totals_compute(struct rp_sched *s)
{
	if (s->pat.kind == RP_PATTERN_SAMPLE) {
		s->n_rounds = s->pat.k;
	} else if (s->pat.kind != RP_PATTERN_SHIFT) {
		s->n_rounds = 0;
		for (size_t g = 0; g < s->n_groups; g++) {
			size_t t = tour_rounds(s->start[g + 1] - s->start[g]);

			if (t > s->n_rounds)
				s->n_rounds = t;
		}
	}
	s->n_pairs = 0;
	s->max_round_pairs = 0;
	for (size_t r = 0; r < s->n_rounds; r++) {
		size_t sz = rp_sched_round_size(s, r);

		s->n_pairs += sz;
		if (sz > s->max_round_pairs)
			s->max_round_pairs = sz;
	}
}

int rp_sched_create(const struct rp_sched_ep *eps, size_t n_eps, const struct rp_pattern *pat, uint64_t seed,
		    struct rp_sched **sched_p)
{
	struct rp_sched *s;
	int rc;

	if (n_eps > UINT32_MAX)
		return rp_error(-EINVAL, "schedule: %zu endpoints is too many", n_eps);
	rc = eps_check(eps, n_eps);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return rp_error(-ENOMEM, "schedule: allocate");
	s->pat = *pat;
	s->n_eps = n_eps;
	rc = groups_build(s, eps);
	if (!rc && pat->kind == RP_PATTERN_SAMPLE)
		rc = sample_build(s, seed);
	if (!rc && pat->kind == RP_PATTERN_SHIFT)
		rc = shift_build(s);
	if (rc) {
		rp_sched_destroy(s);
		return rc;
	}
	totals_compute(s);
	*sched_p = s;
	return 0;
}

void rp_sched_destroy(struct rp_sched *s)
{
	if (!s)
		return;
	free(s->start);
	free(s->members);
	free(s->rounds);
	free(s->shift);
	free(s);
}

size_t rp_sched_n_rounds(const struct rp_sched *s)
{
	return s->n_rounds;
}

uint64_t rp_sched_n_pairs(const struct rp_sched *s)
{
	return s->n_pairs;
}

size_t rp_sched_max_round_pairs(const struct rp_sched *s)
{
	return s->max_round_pairs;
}

/* The pairs of shift round e: edges (a, a+k) of the cycles of i -> i+k with colour e->color. */
static void shift_round(size_t n, const struct shift_round *e, struct rp_sched_pair *pairs, size_t *n_p)
{
	size_t k = e->k, g = gcd_u64(k, n), len = n / g;

	for (size_t c = 0; c < g; c++) {
		size_t a = c;

		for (size_t j = 0; j < len; j++, a = (a + k) % n) {
			size_t b = (a + k) % n;
			int color = (len % 2 == 1 && j == len - 1) ? 2 : (int)(j & 1);

			if (2 * k == n && a >= k)
				break;        /* k = n/2: {a, a+k} and {a+k, a} are one pair */
			if (2 * k != n && color != e->color)
				continue;
			pairs[*n_p].a = (uint32_t)(a < b ? a : b);
			pairs[*n_p].b = (uint32_t)(a < b ? b : a);
			(*n_p)++;
		}
	}
}

int rp_sched_round(const struct rp_sched *s, size_t r, struct rp_sched_pair *pairs, size_t cap, size_t *n_p)
{
	size_t n = 0;

	if (r >= s->n_rounds)
		return -EINVAL;
	if (cap < rp_sched_round_size(s, r))
		return -ENOSPC;
	switch (s->pat.kind) {
	case RP_PATTERN_SHIFT:
		shift_round(s->n_eps, &s->shift[r], pairs, &n);
		break;
	case RP_PATTERN_SAMPLE:
		tour_round(s->members, s->n_eps, s->rounds[r], pairs, &n);
		break;
	default:
		for (size_t g = 0; g < s->n_groups; g++) {
			size_t m = s->start[g + 1] - s->start[g];

			if (r < tour_rounds(m))
				tour_round(s->members + s->start[g], m, r, pairs, &n);
		}
		break;
	}
	*n_p = n;
	return 0;
}

size_t rp_sched_n_groups(const struct rp_sched *s)
{
	if (s->pat.kind == RP_PATTERN_SHIFT || s->pat.kind == RP_PATTERN_SAMPLE)
		return 0;
	return s->n_groups;
}

size_t rp_sched_group_round_size(const struct rp_sched *s, size_t r, size_t g)
{
	size_t m;

	if (g >= rp_sched_n_groups(s) || r >= s->n_rounds)
		return 0;
	m = s->start[g + 1] - s->start[g];
	return r < tour_rounds(m) ? m / 2 : 0;
}

int rp_sched_group_round(const struct rp_sched *s, size_t r, size_t g, struct rp_sched_pair *pairs, size_t cap,
			 size_t *n_p)
{
	size_t n = 0, m;

	if (g >= rp_sched_n_groups(s) || r >= s->n_rounds)
		return -EINVAL;
	if (cap < rp_sched_group_round_size(s, r, g))
		return -ENOSPC;
	m = s->start[g + 1] - s->start[g];
	if (r < tour_rounds(m))
		tour_round(s->members + s->start[g], m, r, pairs, &n);
	*n_p = n;
	return 0;
}

/* busy[r] is a bitmap of the endpoints round r already holds; rounds are added as needed. */
int rp_sched_pack(const struct rp_sched_pair *pairs, size_t n, size_t n_eps, uint32_t *round_of, size_t *n_rounds_p)
{
	size_t words = (n_eps + 63) / 64, n_rounds = 0, cap = 0;
	uint64_t **busy = NULL;
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		uint32_t a = pairs[i].a, b = pairs[i].b;
		size_t r = 0;

		if (a >= n_eps || b >= n_eps || a == b) {
			rc = -EINVAL;
			break;
		}
		while (r < n_rounds && ((busy[r][a / 64] >> (a % 64)) & 1 || (busy[r][b / 64] >> (b % 64)) & 1))
			r++;
		if (r == n_rounds) {
			if (n_rounds == cap) {
				size_t ncap = cap ? 2 * cap : 8;
				uint64_t **nb = realloc(busy, ncap * sizeof(*nb));

				if (!nb) {
					rc = -ENOMEM;
					break;
				}
				busy = nb;
				cap = ncap;
			}
			busy[r] = calloc(words ? words : 1, sizeof(**busy));
			if (!busy[r]) {
				rc = -ENOMEM;
				break;
			}
			n_rounds++;
		}
		busy[r][a / 64] |= 1ull << (a % 64);
		busy[r][b / 64] |= 1ull << (b % 64);
		round_of[i] = (uint32_t)r;
	}
	for (size_t r = 0; r < n_rounds; r++)
		free(busy[r]);
	free(busy);
	*n_rounds_p = rc ? 0 : n_rounds;
	return rc;
}
