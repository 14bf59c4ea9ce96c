/* mx_plan_cov.c: what a run measured against what its requested pattern allows; see mx_plan.h. */
#include "plan/mx_plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Whether the requested pattern allows the pair (a, b). */
static bool pair_allowed(const struct rp_sched_ep *eps, const struct rp_pattern *req, uint32_t a, uint32_t b)
{
	switch (req->kind) {
	case RP_PATTERN_RAIL:
		return eps[a].rail == eps[b].rail && eps[a].node != eps[b].node;
	case RP_PATTERN_INTRA:
		return eps[a].node == eps[b].node;
	default:
		return true;
	}
}

/* The ordered pairs and (rail, rail) combinations the requested pattern allows, from per-rail and
 * per-node counts. on_rail[r]: endpoints with rail r (each on its own node); node_max: the most
 * endpoints of one node; per_node: sum over nodes of n x (n - 1). */
static void allowed(const struct rp_pattern *req, size_t n_eps, const uint64_t *on_rail, uint32_t n_rails,
		    uint32_t node_max, uint64_t per_node, struct mx_coverage *cov)
{
	cov->ordered_allowed = 0;
	cov->combos_allowed = 0;
	for (uint32_t r = 0; r < n_rails; r++) {
		if (req->kind == RP_PATTERN_RAIL) {
			cov->ordered_allowed += on_rail[r] ? on_rail[r] * (on_rail[r] - 1) : 0;
			cov->combos_allowed += on_rail[r] >= 2;
		} else if (req->kind == RP_PATTERN_INTRA) {
			cov->combos_allowed += r + 1 < node_max ? node_max - 1 - r : 0;   /* (r, s), r < s < node_max */
		} else {
			cov->combos_allowed += on_rail[r] >= 2;                          /* (r, r) */
			cov->combos_allowed += n_rails - 1 - r;                          /* (r, s), s > r: s exists */
		}
	}
	if (req->kind == RP_PATTERN_INTRA)
		cov->ordered_allowed = per_node;
	else if (req->kind != RP_PATTERN_RAIL)
		cov->ordered_allowed = (uint64_t)n_eps * (n_eps - 1);
}

/* Walk the measured rounds: distinct peers per endpoint (each pair is in one round only) and the
 * combinations seen. */
static int walk(const struct rp_sched_ep *eps, const struct rp_pattern *req, const struct rp_sched *sched,
		size_t done, uint32_t n_rails, uint32_t *peers, bool *seen, struct mx_coverage *cov)
{
	size_t cap = rp_sched_max_round_pairs(sched), got;
	struct rp_sched_pair *pairs = calloc(cap ? cap : 1, sizeof(*pairs));
	int rc = pairs ? 0 : -ENOMEM;

	for (size_t r = 0; !rc && r < done; r++) {
		rc = rp_sched_round(sched, r, pairs, cap, &got);
		for (size_t i = 0; !rc && i < got; i++) {
			uint32_t a = pairs[i].a, b = pairs[i].b;
			uint32_t lo = eps[a].rail < eps[b].rail ? eps[a].rail : eps[b].rail;
			uint32_t hi = eps[a].rail < eps[b].rail ? eps[b].rail : eps[a].rail;

			if (!pair_allowed(eps, req, a, b))
				continue;
			peers[a]++;
			peers[b]++;
			cov->ordered_measured += 2;
			if (!seen[(size_t)lo * n_rails + hi]) {
				seen[(size_t)lo * n_rails + hi] = true;
				cov->combos_covered++;
			}
		}
	}
	free(pairs);
	return rc;
}

int mx_coverage_compute(const struct rp_sched_ep *eps, size_t n_eps, const struct rp_pattern *requested,
			const struct rp_sched *sched, size_t sched_rounds_done, struct mx_coverage *cov)
{
	uint32_t n_rails = 0, node_max = 0, run_len = 0;
	uint64_t per_node = 0, *on_rail = NULL;
	uint32_t *peers = NULL;
	bool *seen = NULL;
	int rc = -ENOMEM;

	if (!n_eps || sched_rounds_done > rp_sched_n_rounds(sched))
		return -EINVAL;
	memset(cov, 0, sizeof(*cov));
	for (size_t e = 0; e < n_eps; e++) {
		n_rails = eps[e].rail + 1 > n_rails ? eps[e].rail + 1 : n_rails;
		run_len = e && eps[e].node == eps[e - 1].node ? run_len + 1 : 1;   /* endpoints of this node so far */
		per_node += 2 * (uint64_t)(run_len - 1);                          /* n (n - 1) summed as it grows */
		node_max = run_len > node_max ? run_len : node_max;
	}
	on_rail = calloc(n_rails, sizeof(*on_rail));
	peers = calloc(n_eps, sizeof(*peers));
	seen = calloc((size_t)n_rails * n_rails, sizeof(*seen));
	if (!on_rail || !peers || !seen)
		goto out;
	for (size_t e = 0; e < n_eps; e++)
		on_rail[eps[e].rail]++;
	allowed(requested, n_eps, on_rail, n_rails, node_max, per_node, cov);
	rc = walk(eps, requested, sched, sched_rounds_done, n_rails, peers, seen, cov);
	if (rc)
		goto out;
	cov->peers_min = UINT32_MAX;
	for (size_t e = 0; e < n_eps; e++) {
		cov->peers_min = peers[e] < cov->peers_min ? peers[e] : cov->peers_min;
		cov->peers_max = peers[e] > cov->peers_max ? peers[e] : cov->peers_max;
	}
	cov->fraction = cov->ordered_allowed ? (double)cov->ordered_measured / (double)cov->ordered_allowed : 1.0;
out:
	free(on_rail);
	free(peers);
	free(seen);
	return rc;
}

size_t mx_coverage_sched_rounds(const struct rp_sched *sched, bool concurrent_rails, size_t scheduled_done)
{
	size_t n = rp_sched_n_rounds(sched), used = 0;

	if (!concurrent_rails)
		return scheduled_done < n ? scheduled_done : n;
	for (size_t r = 0; r < n; r++) {
		size_t solo = 0;

		for (size_t g = 0; g < rp_sched_n_groups(sched); g++)
			solo += rp_sched_group_round_size(sched, r, g) > 0;
		if (used + solo > scheduled_done)
			return r;
		used += solo + 1;
	}
	return n;
}

void mx_coverage_set_run(struct mx_coverage *cov, uint64_t msg_size_requested, uint64_t msg_size_run,
			 const struct mx_plan_choice *c, const struct rp_pattern *requested)
{
	cov->msg_size_requested = msg_size_requested;
	cov->msg_size_run = msg_size_run;
	cov->budget_choice[0] = '\0';
	if (c)
		mx_plan_choice_str(c, requested, cov->budget_choice, sizeof(cov->budget_choice));
}
