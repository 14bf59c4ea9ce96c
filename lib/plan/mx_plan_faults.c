/* mx_plan_faults.c: the worst case of dead adapters in the plan (matrix --plan-dead); see mx_plan.h. */
#include "plan/mx_plan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "matrix/mx_sweep.h"

/* The engine's MTU probe after a direction that moved nothing, at most one deadline: on a dead path
 * its small write does not arrive and the MTU-size one is never tried; on a black hole the small one
 * arrives in milliseconds and the MTU-size one waits the deadline (lib/engine/engine.h). A pass-2
 * probe's comes after it; a confirmation's small writes run beside its probes. */
#define MTU_PROBE_S RP_ENGINE_MTUCHECK_TIMEOUT_S

/* Per endpoint: the first-pass sweep round after which it has MX_EPDEAD_PEERS distinct peers (when
 * the run decides endpoints, it is found dead there), or SIZE_MAX never; and its pairs. */
static int detect_rounds(const struct rp_sched *sched, size_t n_eps, unsigned width, size_t *found, uint32_t *peers)
{
	size_t n = rp_sched_n_rounds(sched), cap = rp_sched_max_round_pairs(sched);
	struct rp_sched_pair *pairs = calloc(cap ? cap : 1, sizeof(*pairs));

	if (!pairs)
		return -ENOMEM;
	for (size_t e = 0; e < n_eps; e++) {
		found[e] = SIZE_MAX;
		peers[e] = 0;
	}
	for (size_t r = 0; r < n; r++) {
		size_t got = 0;

		if (rp_sched_round(sched, r, pairs, cap, &got) != 0) {
			free(pairs);
			return -EINVAL;
		}
		for (size_t i = 0; i < got; i++)
			for (int s = 0; s < 2; s++) {
				uint32_t e = s ? pairs[i].b : pairs[i].a;

				if (e < n_eps && ++peers[e] == MX_EPDEAD_PEERS && width)
					found[e] = r / width;
			}
	}
	free(pairs);
	return 0;
}

int mx_plan_faults(const struct rp_sched *sched, size_t n_eps, const struct mx_settings *run, size_t dead,
		   double room_s, struct mx_plan_faults *f)
{
	size_t *found = NULL, n_rounds = rp_sched_n_rounds(sched);
	uint32_t *peers = NULL;
	unsigned char *seen = NULL;
	double full = run->timeout_s > 0 ? run->timeout_s : 10;
	int rc;

	*f = (struct mx_plan_faults){ .dead = dead < n_eps ? dead : n_eps };
	if (!f->dead)
		return 0;
	found = calloc(n_eps, sizeof(*found));
	peers = calloc(n_eps, sizeof(*peers));
	seen = calloc(n_rounds + 1, 1);
	rc = found && peers && seen ? detect_rounds(sched, n_eps, run->sweep, found, peers) : -ENOMEM;
	if (rc == 0 && run->sweep && run->retest) {
		/* decided endpoints: each distinct detection round costs the screen's deadline there and one
		 * confirmation (its window: its MTU probe's small writes run beside its probes), the
		 * confirmations one after the other beside
		 * the rounds after the first of them; the worst D endpoints are those whose detection rounds
		 * differ most, the latest. An endpoint never detectable (too few peers) is judged direction
		 * by direction: a screen deadline in each of its sweep rounds, a full one per W of its
		 * directions in the second pass. */
		double screen = full > MX_SWEEP_SCREEN_TIMEOUT_S ? MX_SWEEP_SCREEN_TIMEOUT_S : full;
		double confirm = full;        /* its probes and their small writes at once */
		size_t distinct = 0, undetected = 0, n_sweep = (n_rounds + run->sweep - 1) / run->sweep, first = 0;
		uint32_t undetected_peers = 0;
		double beside;

		for (size_t e = 0; e < n_eps; e++) {
			if (found[e] == SIZE_MAX) {
				undetected++;
				undetected_peers = peers[e] > undetected_peers ? peers[e] : undetected_peers;
			} else if (!seen[found[e]]) {
				seen[found[e]] = 1;
				distinct++;
			}
		}
		f->per_s = screen + confirm;
		f->confirm_rounds = distinct < f->dead ? distinct : f->dead;
		/* the earliest of the latest confirm_rounds detection rounds: the rounds after it run beside */
		for (size_t r = n_rounds + 1, taken = 0; r-- > 0 && taken < f->confirm_rounds;)
			if (seen[r]) {
				first = r;
				taken++;
			}
		beside = n_sweep > first + 1 ? room_s * (double)(n_sweep - first - 1) / (double)n_sweep : 0;
		f->faults_s = (double)f->confirm_rounds * screen;
		if ((double)f->confirm_rounds * confirm > beside)
			f->faults_s += (double)f->confirm_rounds * confirm - beside;
		if (f->dead > distinct && undetected) {
			size_t k = f->dead - distinct < undetected ? f->dead - distinct : undetected;
			double one = (double)n_sweep * screen +
				     ceil(2.0 * undetected_peers / run->sweep) * (full + MTU_PROBE_S);

			f->faults_s += (double)k * one;
		}
	} else if (rc == 0) {
		/* direction by direction: a dead endpoint's every round (sweep or planned) waits a full
		 * deadline; its rounds are all of them at worst */
		size_t rounds = run->sweep ? (n_rounds + run->sweep - 1) / run->sweep : n_rounds;

		f->per_s = (double)rounds * (full + MTU_PROBE_S);
		f->faults_s = f->per_s;   /* the dead endpoints' deadlines overlap round by round */
	}
	free(found);
	free(peers);
	free(seen);
	return rc;
}

size_t mx_plan_dead_default(size_t n_eps)
{
	return n_eps ? (n_eps + 99) / 100 : 0;   /* 1% of the endpoints, at least one */
}
