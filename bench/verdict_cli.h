/* verdict_cli.h: the verdict options every command shares (loopback, pair, matrix: --min-bw,
 * --outlier, --interval-drop, --retest), their validation into a struct rp_verdict_cfg, and the text
 * a person reads: each pair's confirmation and warnings, and the verdict line with its counts. */
#ifndef RP_VERDICT_CLI_H
#define RP_VERDICT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opts.h"
#include "verdict/verdict.h"

#define RP_CLI_VERDICT_OPTS 4   /* how many options rp_cli_verdict_opts() appends */

struct rp_cli_verdict {
	/* raw option values */
	const char *min_bw_s;
	const char *topology_s;       /* --topology FILE (lib/discover/fabtopo.h) */
	double outlier, interval_drop;
	uint64_t retest;
	bool outlier_seen, interval_drop_seen;
	/* derived */
	struct rp_verdict_cfg cfg;
	struct rp_fabtopo *topo;      /* --topology, loaded; cfg.topology points to it */
};

/* Defaults into *v (rp_verdict_cfg_default). */
void rp_cli_verdict_init(struct rp_cli_verdict *v);
/* Append the verdict options to table (room for RP_CLI_VERDICT_OPTS); returns how many. */
size_t rp_cli_verdict_opts(struct rp_cli_verdict *v, struct rp_opt *table);
/* Validate and derive v->cfg. In latency mode the bandwidth rules are off by default and giving one
 * is a usage error. Prints one specific message; returns 0 or 2 (usage). */
int rp_cli_verdict_finish(struct rp_cli_verdict *v, const char *cmd, bool latency);

/* Free what rp_cli_verdict_finish loaded (the topology). */
void rp_cli_verdict_fini(struct rp_cli_verdict *v);

/* The lines under a pair's result: how it held up on retest, and each warning (nominal_link_rate is
 * said once, by rp_cli_print_verdict). */
void rp_cli_print_judgement(const struct rp_pair_result *r);

/* "verdict: PASS (...)", "verdict: FAIL (...)" or, when stop_sig is not 0, "verdict: INTERRUPTED
 * (...)" with counts per failure code, confirmed/unconfirmed/flaky and warnings; a note when a
 * fractional --min-bw was not applied to soft devices; one "drain:" line per drained endpoint.
 * planned: how many pairs the run was to measure. */
void rp_cli_print_verdict(const struct rp_cli_verdict *vc, const struct rp_verdict *v, const struct rp_endpoint *eps,
			  const struct rp_pair_result *res, size_t n, size_t planned, int stop_sig);

/* The verdict's suspects (when any is more than the path faults as a whole) and its path faults, at
 * most max_paths of them listed; ep_of(arg, e) gives endpoint e. */
void rp_cli_print_suspects(const struct rp_verdict *v, const struct rp_endpoint *(*ep_of)(const void *arg, size_t e),
			   const void *arg, size_t max_paths);

#endif
