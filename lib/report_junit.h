/* report_junit.h: the matrix as a JUnit XML file, so CI systems on RDMA hosts show it: each directed
 * pair is a test case (failures carry their status and reason), and each node is one more test case
 * that fails when adapters are to be drained. A flaky pair (failed, then passed on a retest) is a
 * passing case whose system-out says so, with every attempt; a confirmed failure is a failure; an
 * unconfirmed one (could not be measured again) is a failure whose message says it was not confirmed.
 * Peer strings are escaped (invalid UTF-8 as '?'); a number that is not finite is "n/a". */
#ifndef RP_REPORT_JUNIT_H
#define RP_REPORT_JUNIT_H

#include "strbuf.h"
#include "verdict.h"

/* Append the document to sb. */
void rp_report_junit_build(const struct rp_matrix_view *mv, struct rp_sb *sb);
/* Build and write atomically, streamed (memory: one chunk of test cases, whatever mv->n). 0 or a
 * negative errno (logged). */
int rp_report_junit_write(const struct rp_matrix_view *mv, const char *path);

#endif
