/* baseline.h: judge a run against an accepted earlier report (--baseline FILE on loopback and matrix).
 *
 * The rules are lib/compare/diff.h's, unchanged: the run's own report (rp_report_json() of its judged pairs)
 * is compared with the baseline file as 'rdmaprobe diff BASELINE NOW' would compare them. Any finding
 * rp_diff marks as a regression (a new failure, a pair measured in the baseline and not now, a pair's
 * or an endpoint's Gb/s below the baseline's x (1 - drop), a lower link rate or MTU) fails the run.
 * The baseline is loaded and validated when the options are parsed, before anything is measured.
 */
#ifndef RP_BASELINE_H
#define RP_BASELINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "compare/diff.h"
#include "report/report.h"

struct rp_baseline {
	struct rp_diff_report old;    /* the accepted report */
	double drop;                  /* threshold, a fraction */
	/* after rp_baseline_judge() */
	struct rp_diff_report cur;    /* this run */
	struct rp_diff d;
	bool judged;
	size_t n_regressions;
};

/* Load and validate path (rp_diff_report_load()). 0, or a negative errno (logged, naming the file and
 * the field). *b is safe to rp_baseline_fini() either way. */
int rp_baseline_load(struct rp_baseline *b, const char *path, double drop);
void rp_baseline_fini(struct rp_baseline *b);

/* Compare this run's judged pairs (info as for rp_report_json()) with the baseline; may be called
 * again (the earlier comparison is dropped). 0, or a negative errno (logged). */
int rp_baseline_judge(struct rp_baseline *b, const struct rp_report_info *info, const struct rp_pair_result *pairs,
		      size_t n);
/* The same for a run that lists only its notable pairs (a matrix's default above 100,000 directions):
 * pairs[0..n) are the listed ones, n_unlisted plain passes are counted, eps[0..n_eps) are the run's
 * endpoints: a pair between two of them that is not listed is a plain pass (diff.h). n_eps 0: every
 * pair is listed (rp_baseline_judge). */
int rp_baseline_judge_notable(struct rp_baseline *b, const struct rp_report_info *info,
			      const struct rp_pair_result *pairs, size_t n, const struct rp_endpoint *eps, size_t n_eps,
			      size_t n_unlisted);
/* True when judged and some finding is a regression. */
bool rp_baseline_regressed(const struct rp_baseline *b);

/* The "baseline" section of the run's JSON (new reference): {"file", "drop", "regression",
 * "regressions", "comparison": rp_diff_json()}; NULL when not judged or out of memory (logged). */
json_t *rp_baseline_json(const struct rp_baseline *b);

/* One finding for a person, into buf: "new_failure: h/rxe0:1 -> h/rxe1:1 65536 B: now timed_out",
 * "drop: ... 10.000 -> 5.000 Gb/s (-50.0%)", "changed: h/rxe0:1 link_gbps 100 -> 25". Returns buf. */
const char *rp_baseline_item_text(const struct rp_diff_item *it, char *buf, size_t len);

#endif
