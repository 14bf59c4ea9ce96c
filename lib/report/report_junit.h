/* report_junit.h: the matrix as a JUnit XML file, so CI systems on RDMA hosts show it.
 *
 * By endpoint (rp_junit_opts.per_pair false, what matrix writes unless --junit-pairs): one test case
 * per endpoint, so that a file stays small at any scale (8,192 endpoints: a few MB, not 84,000 cases).
 * An endpoint's case fails when the verdict drains it, or when it is an end of a failure that no
 * drain explains (lib/verdict/verdict_groups.h: a LINK suspect); the failure counts those directions and
 * names the first RP_JUNIT_EP_PAIRS of them (status, and the reason where it changes). Failures blamed on a drained peer are
 * counted in the case's system-out, and fail the peer's case. Without a verdict every failure is its
 * ends' own.
 *
 * By pair (per_pair, or rp_report_junit_write): each directed pair is a test case (failures carry
 * their status and reason).
 *
 * Both: each node is one more test case that fails when adapters are to be drained; a simulated run
 * (opts->simulated: the model file) says SIMULATED in the suites' names and in a "simulated" and a
 * "fabric_model" property. A flaky pair (failed, then passed on a retest) is a
 * passing case whose system-out says so, with every attempt; a confirmed failure is a failure; an
 * unconfirmed one (could not be measured again) is a failure whose message says it was not confirmed.
 * Peer strings are escaped (invalid UTF-8 as '?'); a number that is not finite is "n/a". */
#ifndef RP_REPORT_JUNIT_H
#define RP_REPORT_JUNIT_H

#include "base/strbuf.h"
#include "verdict/verdict.h"

#define RP_JUNIT_EP_PAIRS 3   /* failed directions an endpoint's case names */

struct rp_junit_opts {
	bool per_pair;                /* a test case per pair (else per endpoint) */
	const char *simulated;        /* the fabric model of a simulated run; NULL for a real one */
};

/* Append the document to sb: per pair, a real run. */
void rp_report_junit_build(const struct rp_matrix_view *mv, struct rp_sb *sb);
/* Build and write atomically, streamed (memory: one chunk of test cases, whatever mv->n). 0 or a
 * negative errno (logged). */
int rp_report_junit_write(const struct rp_matrix_view *mv, const char *path);
/* The same with opts (NULL: per pair, a real run). */
void rp_report_junit_build_opts(const struct rp_matrix_view *mv, const struct rp_junit_opts *opts, struct rp_sb *sb);
int rp_report_junit_write_opts(const struct rp_matrix_view *mv, const struct rp_junit_opts *opts, const char *path);

#endif
