/* mx_plan.c: the matrix's time model and the schedule digest; see mx_plan.h. */
#include "plan/mx_plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void mx_plan_model_default(struct mx_plan_model *m)
{
	static const char assumed[] = "assumed, no calibration";

	memset(m, 0, sizeof(*m));
	m->setup_s = MX_PLAN_SETUP_S;
	m->rate_frac = MX_PLAN_RATE_FRAC;
	m->round_overhead_s = MX_PLAN_ROUND_S;
	m->startup_s = MX_PLAN_STARTUP_S;
	m->startup_per_ep_s = 0;
	rp_strlcpy(m->setup_src, assumed, sizeof(m->setup_src));
	rp_strlcpy(m->rate_src, assumed, sizeof(m->rate_src));
	rp_strlcpy(m->round_src, assumed, sizeof(m->round_src));
	rp_strlcpy(m->startup_src, assumed, sizeof(m->startup_src));
	rp_strlcpy(m->sweep_src, "a set-up (its probes at once) + the per-round overhead", sizeof(m->sweep_src));
}

double mx_plan_sweep_round_s(const struct mx_plan_model *m, uint64_t n)
{
	return m->sweep_probe_s > 0 ? (double)n * m->sweep_probe_s : m->setup_s + m->round_overhead_s;
}

/* Add round r's pairs to cnt[] (probes per endpoint: writer and target of each pair) and to *max_p. */
static int sweep_count(const struct rp_sched *sched, size_t r, struct rp_sched_pair *pairs, size_t cap, unsigned *cnt,
		       unsigned *max_p)
{
	size_t got;

	if (rp_sched_round(sched, r, pairs, cap, &got) != 0)
		return -EINVAL;
	for (size_t i = 0; i < got; i++) {
		unsigned a = cnt[pairs[i].a] += 2, b = cnt[pairs[i].b] += 2;

		*max_p = a > *max_p ? a : *max_p;
		*max_p = b > *max_p ? b : *max_p;
	}
	return 0;
}

int mx_plan_sweep_load(const struct rp_sched *sched, size_t n_eps, unsigned width, size_t *rounds_p, uint64_t *probes_p,
		       size_t *max_p)
{
	size_t n = rp_sched_n_rounds(sched), cap = rp_sched_max_round_pairs(sched);
	unsigned *cnt = calloc(n_eps ? n_eps : 1, sizeof(*cnt));
	struct rp_sched_pair *pairs = calloc(cap ? cap : 1, sizeof(*pairs));
	int rc = cnt && pairs && width ? 0 : cnt && pairs ? -EINVAL : -ENOMEM;

	*rounds_p = width ? (n + width - 1) / width : 0;
	*probes_p = 0;
	*max_p = 0;
	for (size_t k = 0; !rc && k < *rounds_p; k++) {
		unsigned busiest = 0;

		memset(cnt, 0, (n_eps ? n_eps : 1) * sizeof(*cnt));
		for (size_t r = k * width; !rc && r < n && r < (k + 1) * width; r++)
			rc = sweep_count(sched, r, pairs, cap, cnt, &busiest);
		*probes_p += busiest;
		*max_p = busiest > *max_p ? busiest : *max_p;
	}
	free(cnt);
	free(pairs);
	return rc;
}

double mx_plan_dir_s(const struct mx_plan_model *m, const struct mx_settings *run, double gbps)
{
	double bytes = (double)run->msg_size * (double)(run->iters + run->warmup_iters);

	if (run->duration_s > 0)
		return m->setup_s + run->duration_s;
	return m->setup_s + bytes * 8 / (m->rate_frac * gbps * 1e9);
}

double mx_plan_round_s(const struct mx_plan_model *m, const struct mx_settings *run, const double *ep_gbps,
		       const struct rp_sched_pair *pairs, size_t n)
{
	double worst = 0;

	for (size_t i = 0; i < n; i++) {
		double ga = ep_gbps[pairs[i].a], gb = ep_gbps[pairs[i].b];
		double t = mx_plan_dir_s(m, run, ga < gb ? ga : gb) * (run->bidir ? 1 : 2);

		if (t > worst)
			worst = t;
	}
	return worst + m->round_overhead_s;
}

/* Round r's solo rounds (one per rail with pairs in it), as mx_run plays them before the round. */
static int solo_rounds_s(const struct rp_sched *sched, size_t r, const double *ep_gbps, const struct mx_plan_model *m,
			 const struct mx_settings *run, struct rp_sched_pair *pairs, size_t cap, size_t *n_solo_p,
			 double *s_p)
{
	*n_solo_p = 0;
	*s_p = 0;
	for (size_t g = 0; g < rp_sched_n_groups(sched); g++) {
		size_t got;

		if (!rp_sched_group_round_size(sched, r, g))
			continue;
		if (rp_sched_group_round(sched, r, g, pairs, cap, &got) != 0)
			return -EINVAL;
		*s_p += mx_plan_round_s(m, run, ep_gbps, pairs, got);
		(*n_solo_p)++;
	}
	return 0;
}

int mx_plan_estimate(const struct rp_sched *sched, const double *ep_gbps, size_t n_eps, const struct mx_plan_model *m,
		     const struct mx_settings *run, struct mx_plan_est *est_p)
{
	struct mx_plan_est e = { 0 };
	struct rp_sched_pair *pairs;
	size_t cap;
	int rc = 0;

	if (run->concurrent_rails && rp_sched_n_groups(sched) == 0)
		return -EINVAL;
	for (size_t i = 0; i < n_eps; i++)
		if (!(ep_gbps[i] > 0) || !isfinite(ep_gbps[i]))
			return -EINVAL;
	cap = rp_sched_max_round_pairs(sched);
	pairs = calloc(cap ? cap : 1, sizeof(*pairs));
	if (!pairs)
		return -ENOMEM;
	e.pairs = rp_sched_n_pairs(sched);
	e.max_round_pairs = cap;
	for (size_t r = 0; !rc && r < rp_sched_n_rounds(sched); r++) {
		size_t got, n_solo = 0;
		double solo = 0;

		rc = rp_sched_round(sched, r, pairs, cap, &got);
		if (!rc)
			e.rounds_s += mx_plan_round_s(m, run, ep_gbps, pairs, got);
		if (!rc && run->concurrent_rails)
			rc = solo_rounds_s(sched, r, ep_gbps, m, run, pairs, cap, &n_solo, &solo);
		e.rounds_s += solo;
		e.rounds += 1 + n_solo;
	}
	free(pairs);
	if (rc)
		return rc;
	if (run->sweep) {
		rc = mx_plan_sweep_load(sched, n_eps, run->sweep, &e.sweep_rounds, &e.sweep_probes, &e.sweep_probes_max);
		if (rc)
			return rc;
		e.sweep_s = m->sweep_probe_s > 0 ? (double)e.sweep_probes * m->sweep_probe_s
						 : (double)e.sweep_rounds * mx_plan_sweep_round_s(m, 0);
	}
	e.startup_s = m->startup_s + m->startup_per_ep_s * (double)n_eps;
	e.total_s = e.startup_s + e.sweep_s + e.rounds_s;
	e.worst_s = e.total_s;
	if (run->plan_dead) {
		struct mx_plan_faults f;

		rc = mx_plan_faults(sched, n_eps, run, run->plan_dead, run->hold ? e.sweep_s + e.rounds_s : e.sweep_s, &f);
		if (rc)
			return rc;
		e.dead = f.dead;
		e.faults_s = f.faults_s;
		e.worst_s = e.total_s + f.faults_s;
	}
	*est_p = e;
	return 0;
}

/* FNV-1a over bytes, for mx_plan_digest. */
static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static uint32_t fnv_u64(uint32_t h, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));   /* the same bytes on every host, whatever its order */
	return fnv(h, b, sizeof(b));
}

static uint32_t fnv_dbl(uint32_t h, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	return fnv_u64(h, bits);
}

uint32_t mx_plan_digest(const char *pattern, uint64_t seed, const struct mx_settings *run, double budget_s,
			const struct mx_plan_model *m)
{
	uint32_t h = 2166136261u;

	h = fnv(h, pattern, strlen(pattern) + 1);
	h = fnv_u64(h, seed);
	h = fnv_u64(h, run->msg_size);
	h = fnv_u64(h, run->iters);
	h = fnv_u64(h, run->warmup_iters);
	h = fnv_dbl(h, run->duration_s);
	h = fnv_u64(h, (uint64_t)run->bidir | (uint64_t)run->concurrent_rails << 1 | (uint64_t)run->latency << 2 |
			(uint64_t)run->sweep << 3);
	h = fnv_u64(h, (uint64_t)run->hold | (uint64_t)run->retest << 1);
	h = fnv_dbl(h, run->timeout_s);
	if (budget_s > 0) {
		h = fnv_dbl(h, budget_s);
		h = fnv_dbl(h, m->setup_s);
		h = fnv_dbl(h, m->rate_frac);
		h = fnv_dbl(h, m->round_overhead_s);
		h = fnv_dbl(h, m->startup_s);
		h = fnv_dbl(h, m->startup_per_ep_s);
		h = fnv_dbl(h, m->sweep_probe_s);
		h = fnv_u64(h, run->plan_dead);   /* the worst case the budget fits */
	}
	return h;
}
