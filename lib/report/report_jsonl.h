/* report_jsonl.h: pairs streamed to a JSON Lines file as they are measured (matrix --jsonl FILE).
 *
 * The summary reports are rewritten as a whole; this file only grows, one line per measured
 * direction, each written with one write(2) as soon as rank 0 has it, so that a crash, a kill or a
 * full disk later loses nothing already written, and a reader (`tail -f`, jq) can follow the run.
 *
 * Lines (each one JSON object, keys only ever added):
 *   first:  {"record": "run", "schema": 1, "tool": "rdmaprobe", "version", "command", "started",
 *            "simulated": bool}
 *   then:   {"record": "pair", "round": N, "retest": bool, ...every key of a pair in the JSON
 *            report (report.h)...}
 *   last:   {"record": "end", "pairs": N, "complete": bool}   written by rp_jsonl_close(); missing
 *            when the run died, which is how a reader tells a cut-off file from a finished one.
 * A direction measured again (--retest) has a line for each measurement; its last line is its final
 * measurement, with every attempt in "attempts". Lines are measurements as they ended: the run-wide
 * judgement that needs every result (below_threshold from --min-bw/--outlier, "confirm") is made at
 * the end and is in the summary reports, not here.
 */
#ifndef RP_REPORT_JSONL_H
#define RP_REPORT_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/report.h"
#include "base/result.h"

struct rp_jsonl {
	int fd;                       /* -1: closed */
	uint64_t pairs;               /* pair lines written */
	int err;                      /* the first write error (negative errno); later writes are skipped */
	char path[4096];
};

/* Create (truncate) path and write the run line. info->command and version are recorded;
 * simulated marks a run of the simulated transport. 0 or negative errno (logged, naming the path);
 * a path that rp_report_path_check() refuses is refused. "-" is not accepted: the file is a record. */
int rp_jsonl_open(struct rp_jsonl *j, const char *path, const struct rp_report_info *info, bool simulated);
/* One line per result. After a write error nothing more is written and the error is returned
 * again (it was logged once). 0 or negative errno. */
int rp_jsonl_pairs(struct rp_jsonl *j, const struct rp_pair_result *res, size_t n, unsigned round, bool retest);
/* The end line (complete: every planned measurement ran), fsync, close. 0 or the first error. */
int rp_jsonl_close(struct rp_jsonl *j, bool complete);

#endif
