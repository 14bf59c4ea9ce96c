/* mx_schedule.h: who measures whom in a cluster matrix, in contention-free rounds.
 *
 * Endpoints are (node, device, port) triples, numbered 0..E-1 in the caller's canonical order
 * (sorted by node, then by index within the node). The schedule is a pure function of the endpoint
 * list, the pattern and the seed, so every rank computes the same one without sending it around.
 *
 * A round is a set of unordered pairs {a, b} (a < b) in which no endpoint appears twice; each pair is
 * measured in both directions (a->b and b->a) within its round. Rounds are generated on demand
 * (rp_sched_round()) in O(E) time and memory per round, so a schedule costs O(E) memory and a full
 * walk O(pairs): a plan for 1024 nodes x 8 adapters never builds an E x E table.
 *
 * Patterns:
 *   full      every unordered pair (both directions): a round-robin tournament, E-1 rounds (E odd: E).
 *   rail      pairs of endpoints with the same index within their nodes, across nodes: one tournament
 *             per rail, all rails in the same rounds (max rail size - 1 rounds).
 *   intra     pairs within each node: one tournament per node, all nodes in the same rounds.
 *   shift     mpiGraph-style: for each shift k = 1..E/2, the pairs {i, i+k mod E}; the edges of one
 *             shift form cycles, split into 2 rounds (even cycles), 3 (odd cycles) or 1 (k = E/2).
 *             Same pair set as full, ordered so that every round stresses one "distance".
 *   sample:K  each endpoint gets K random distinct peers: K rounds picked at random from the
 *             tournament of a random relabelling of the endpoints; deterministic given the seed.
 *             With E odd every round leaves one endpoint out, so an endpoint may get K-1 peers.
 */
#ifndef RP_MX_SCHEDULE_H
#define RP_MX_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

enum rp_pattern_kind { RP_PATTERN_FULL = 0, RP_PATTERN_RAIL, RP_PATTERN_INTRA, RP_PATTERN_SHIFT, RP_PATTERN_SAMPLE };

struct rp_pattern {
	enum rp_pattern_kind kind;
	uint32_t k;                   /* sample:K, else 0 */
};

/* Parse "full", "rail", "intra", "shift" or "sample:K" (K >= 1). 0 or -EINVAL; does not log. */
int rp_pattern_parse(const char *s, struct rp_pattern *pat_p);
/* "full", ..., "sample:4" into buf; returns buf. */
const char *rp_pattern_str(const struct rp_pattern *pat, char *buf, size_t len);

/* One endpoint as the schedule sees it. */
struct rp_sched_ep {
	uint32_t node;                /* node number, 0..n_nodes-1, non-decreasing along the list */
	uint32_t rail;                /* index within its node: 0, 1, 2, ... in list order */
};

struct rp_sched_pair {
	uint32_t a, b;                /* endpoint numbers, a < b; measured a->b and b->a */
};

struct rp_sched;

/* Build the schedule for eps[0..n_eps) (copied). Fails with -EINVAL (logged) when the endpoint list
 * is not in canonical order or the pattern cannot apply (sample:K with K >= E), -ENOMEM. */
int rp_sched_create(const struct rp_sched_ep *eps, size_t n_eps, const struct rp_pattern *pat, uint64_t seed,
		    struct rp_sched **sched_p);
void rp_sched_destroy(struct rp_sched *sched);

size_t rp_sched_n_rounds(const struct rp_sched *sched);
/* Unordered pairs over all rounds (each is two directed measurements). */
uint64_t rp_sched_n_pairs(const struct rp_sched *sched);
/* The most pairs any round has: the capacity rp_sched_round() needs. */
size_t rp_sched_max_round_pairs(const struct rp_sched *sched);
/* Pairs in round r, without listing them. */
size_t rp_sched_round_size(const struct rp_sched *sched, size_t r);

/* The pairs of round r into pairs[0..cap) and their number into *n_p. -EINVAL when r is out of
 * range, -ENOSPC when cap is too small (neither logs: both are programming errors the caller sees). */
int rp_sched_round(const struct rp_sched *sched, size_t r, struct rp_sched_pair *pairs, size_t cap, size_t *n_p);

/* Groups: the players of one tournament. rail has one per rail (index within the node), intra one per
 * node, full one; shift and sample have none (0: their rounds are not played per group). For full,
 * rail and intra, round r is the union of its groups' round r: rp_sched_round() lists the pairs of
 * rp_sched_group_round(r, 0), then (r, 1), ..., in that order, so the k-th pair of a group's round
 * has a known place in the round (matrix --concurrent-rails measures each rail's round alone, then
 * the whole round, and matches the pairs by that place). */
size_t rp_sched_n_groups(const struct rp_sched *sched);
/* Pairs of group g in round r (0 when r or g is out of range). */
size_t rp_sched_group_round_size(const struct rp_sched *sched, size_t r, size_t g);
/* The pairs of group g in round r, as rp_sched_round(). -EINVAL when r or g is out of range or the
 * pattern has no groups, -ENOSPC when cap is too small (neither logs). */
int rp_sched_group_round(const struct rp_sched *sched, size_t r, size_t g, struct rp_sched_pair *pairs, size_t cap,
			 size_t *n_p);

/* Pack arbitrary pairs (a != b, both < n_eps) into contention-free rounds, first fit in the given
 * order: round_of[i] gets pair i's round (0-based), *n_rounds_p their number (at most 2 x the
 * largest number of pairs one endpoint is in, minus 1). For extra rounds over a set the patterns do
 * not describe, such as the pairs to measure again. 0, -EINVAL (an endpoint out of range or a == b;
 * not logged) or -ENOMEM. */
int rp_sched_pack(const struct rp_sched_pair *pairs, size_t n, size_t n_eps, uint32_t *round_of, size_t *n_rounds_p);

#endif
