/* matrix_plan.c: 'rdmaprobe matrix --plan': the schedule and its estimates, without MPI or hardware. */
#include <stdio.h>
#include <stdlib.h>

#include "cmds.h"
#include "matrix.h"
#include "mx_run.h"
#include "util.h"

#define MX_PLAN_SETUP_S 0.05   /* assumed set-up cost of one direction of a pair */

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

int mx_plan_print(const struct mx_plan_in *o)
{
	size_t n_eps, max_pairs, got;
	struct rp_sched_ep *se = NULL;
	struct rp_sched *s = NULL;
	struct rp_sched_pair *pairs = NULL;
	double *rate = NULL, total_s = 0, bytes_dir;
	const struct rp_engine_cfg *c = o->cfg;
	char b1[32], b2[32];
	int status = RP_EXIT_OK;

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
		rate[e] = o->rail_gbps ? o->rail_gbps[e % o->hcas] : o->rate;
		if (rate[e] <= 0)
			rate[e] = o->rate;
	}
	if (rp_sched_create(se, n_eps, o->pattern, o->seed, &s) != 0) {
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
	if (o->concurrent_rails)
		printf("concurrent rails: each round is played rail by rail alone, then with every rail at once: %zu "
		       "rounds in all, every pair measured twice\n", mx_run_planned_rounds(s, true));
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
		for (size_t g = 0; o->concurrent_rails && g < rp_sched_n_groups(s); g++)
			total_s += rp_sched_group_round_size(s, r, g) ? worst : 0;   /* each rail alone first */
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
		human_bytes(bytes_dir * 2.0 * (o->concurrent_rails ? 2.0 : 1.0) * (double)rp_sched_n_pairs(s), b2, sizeof(b2));
		printf("bytes: %s per measurement (%llu x %zu B, %llu warm-up), %s in all\n", b1,
		       (unsigned long long)c->meas.iters, c->meas.msg_size, (unsigned long long)c->meas.warmup_iters, b2);
	}
	printf("estimated time: %.1f s at the ports' rates (%s), assuming %.0f ms set-up per direction\n", total_s,
	       o->rail_gbps ? "this node's ports" : "--rate", MX_PLAN_SETUP_S * 1e3);
out:
	free(pairs);
	rp_sched_destroy(s);
	free(se);
	free(rate);
	return status;
}

