/* report_matrix.h: what a matrix report says beside its pairs, and whether the run passed.
 *
 * A matrix run passes only when its verdict passes AND every scheduled round was run AND no signal
 * stopped it AND no pair failed under --concurrent-rails: a round that did not happen is never
 * reported as passed, whatever the rounds that did happen say (rp_matrix_passed). Every writer (JSON,
 * Prometheus, the text, the exit status) asks this one rule.
 *
 * The JSON report's keys beside the engine's "pairs" (rp_matrix_report_json):
 *   "matrix":   pattern, seed, rounds, rounds_done, rounds_run (a round a stop cut short is run, not
 *               done), complete, retest, retest_rounds, sweep (null without one: width, rounds,
 *               unreachable, flaky, cleared, screen_s, elapsed_s; with the run's counts: hold,
 *               dead_endpoints, endpoint_dead_directions, confirm_rounds, hold_off, late_rounds,
 *               rank0_writes_on_held, rank0_writes_fresh), sweep_off, pairs_listed (which, listed,
 *               total, not_listed, every_pair_in), interrupted, signal, elapsed_s, startup_s (when
 *               known), endpoints [{node, device, port, rank, gid_index, link_gbps, no_port?, pairs,
 *               failed}]
 *   "verdict":  pass (rp_matrix_passed), concurrent_failed / concurrent_drop (--concurrent-rails),
 *               pairs, ok, failed, below_threshold, min_bw, min_bw_unit, outlier, interval_drop,
 *               suspects, path_faults (lib/verdict/verdict_json.h), localized,
 *               topology_unknown_endpoints
 *   "nodes":    [{node, endpoints, drain, drain_reasons, unusable, unusable_reasons,
 *               recommended_nccl_ib_hca (null: no adapter left)}]
 *   "coverage": the final write's (lib/plan/mx_plan_json.h), when given.
 *   "nccl_version" (rank 0's release), "nccl_versions" (every rank's), "warnings" (nccl_version_mismatch
 *               when they differ, then the drift warnings across the endpoints).
 * Strings that are not clean UTF-8 (a --node name, a reason) are written with '?' for their bad
 * bytes: never a reason to lose the report.
 *
 * Nothing here prints or exits.
 */
#ifndef RP_REPORT_MATRIX_H
#define RP_REPORT_MATRIX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job/mx_table.h"
#include "matrix/mx_conc.h"
#include "verdict/verdict.h"

struct mx_coverage;
struct mx_run;
struct mx_sweep;
struct rp_drift;
struct rp_nccl_rank_version;
struct rp_nccl_version_found;
struct rp_result_seq;

/* The facts of one matrix run that its reports state (the front end's view of its run, built when a
 * report is written; nothing here is owned). */
struct rp_matrix_facts {
	const char *pattern;          /* what ran: "full", "rail", "sample:4" */
	const char *pattern_requested; /* what was asked for (--budget may choose a smaller sample) */
	uint64_t seed;
	const struct mx_ep *eps;      /* the endpoint table, n_eps entries, grouped by node */
	size_t n_eps;
	size_t n_rounds;              /* scheduled rounds */
	size_t rounds_done;           /* of them, finished */
	size_t rounds_run;            /* started: rounds_done, plus one a stop cut short */
	size_t retest_rounds;         /* extra rounds run to measure failures again */
	unsigned max_retest;          /* --retest */
	const struct mx_sweep *sweep; /* --sweep's rounds and counts; NULL without a sweep */
	double sweep_s;               /* the sweep's own rounds' time */
	const char *sweep_off;        /* the default sweep left out, and why; NULL */
	bool hold;                    /* --hold: the sweep's connections held for the bandwidth rounds */
	const char *hold_off;         /* why not (--hold auto); "" or NULL: it held, or --hold off */
	const struct mx_run *run;     /* rank 0's run: its holds' counts, the late rounds; NULL none */
	bool list_notable;            /* the reports list only the notable pairs */
	const char *jsonl;            /* where every pair is (--jsonl); NULL nowhere */
	size_t n_results;             /* directions measured, listed or not */
	int stop_sig;                 /* the signal that stopped the run; 0 none */
	double elapsed_s, startup_s;  /* the run's time; rank 0's start-up (0: not known) */
	const struct rp_verdict_cfg *vcfg;
	bool conc;                    /* --concurrent-rails ran */
	struct mx_conc_sum conc_sum;  /* its pairs as judged */
	const struct mx_coverage *coverage;   /* the final write's; NULL before */
	double budget_s;              /* --budget; 0 none */
	const struct rp_nccl_version_found *nccl_ver;   /* rank 0's release; NULL none */
	const struct rp_nccl_rank_version *rank_ver;    /* every rank's, by rank */
	size_t n_rank_ver;
	const struct rp_drift *drift; /* drift across the endpoints; NULL none */
};

/* The run passed (the rule above). */
bool rp_matrix_passed(const struct rp_matrix_facts *f, const struct rp_verdict *v);

/* Add "matrix", "verdict", "nodes", (f->coverage) "coverage", "nccl_version", "nccl_versions" and
 * "warnings" to root, n_listed of f->n_results pairs listed. NULL, or the first key that could not be
 * added (out of memory; what was added stays). */
const char *rp_matrix_report_json(json_t *root, const struct rp_matrix_facts *f, const struct rp_verdict *v,
				  size_t n_listed);

/* A notable report's "matrix.pairs_listed.ok_sample" (after rp_matrix_report_json): up to
 * RP_MATRIX_OK_SAMPLE of the plain passes of judged it does not list, spread over the run (one in every
 * n / RP_MATRIX_OK_SAMPLE), whole: what --calibrate-from fits its set-up and rate from (the listed
 * pairs are the failed, flaky and warned ones). 0 or -ENOMEM. */
#define RP_MATRIX_OK_SAMPLE 256
int rp_matrix_ok_sample_json(json_t *root, const struct rp_result_seq *judged);

/* --concurrent-rails: "concurrent_rails": {"max_drop", "pairs": [{"round", "solo_gbps", "ratio",
 * "pair"}]}, each pair measured with every rail busy, beside the same pair measured alone (its index
 * in solo). NULL, or the key that could not be added. */
const char *rp_matrix_conc_json(json_t *root, const struct rp_matrix_conc *mc, const struct rp_result_seq *solo);

#endif
