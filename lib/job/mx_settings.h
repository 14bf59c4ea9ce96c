/* mx_settings.h: one matrix run's settings: what each direction measures and what orders the rounds
 * every rank runs. Derived once from the engine's configuration and the matrix's options
 * (mx_settings_init), then given whole to whatever needs them: the schedule digest every rank checks
 * at start-up (lib/plan/mx_plan.h mx_plan_digest), --plan and --budget (lib/plan), the rounds
 * (lib/matrix/mx_run.h) and the simulator (lib/sim/sim_run.h), so that none of them rebuilds them
 * field by field and forgets one.
 */
#ifndef RP_MX_SETTINGS_H
#define RP_MX_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

struct mx_settings {
	/* what a direction measures (the engine's; --budget may choose a smaller msg_size: the run
	 * then holds the chosen one here and in the engine's configuration) */
	uint64_t msg_size, iters, warmup_iters;
	double duration_s;            /* > 0: each direction runs this long (-D) */
	bool bidir;                   /* both directions at once */
	bool latency;                 /* -l: the size is what is measured; the budget keeps it */
	/* what orders or shapes the rounds every rank runs (issue 26 item 5): all in the digest */
	bool concurrent_rails;        /* solo rounds per rail before each round (groups needed) */
	unsigned sweep;               /* --sweep W; 0 none */
	bool hold;                    /* --hold as the run decided it (with a sweep, when mx_hold_allowed()):
	                               * the sweep's and the planned rounds interleave, late rounds follow */
	unsigned retest;              /* --retest: the screen, the second pass, dead endpoints, retest sets */
	double timeout_s;             /* --timeout: whether pass 1 screens (above its window) or not */
	size_t plan_dead;             /* --plan-dead: the estimate's worst case has this many dead
	                               * endpoints (0: a healthy fabric only); --budget fits it */
};

/* The settings of a run with the engine's configuration cfg and the matrix's options (hold as
 * decided: false without a sweep; plan_dead 0). */
void mx_settings_init(struct mx_settings *s, const struct rp_engine_cfg *cfg, bool concurrent_rails, unsigned sweep,
		      bool hold, unsigned retest);

#endif
