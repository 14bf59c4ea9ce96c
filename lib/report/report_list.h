/* report_list.h: which pairs a matrix report lists one by one.
 *
 * A report that lists every pair grows with the pairs: at 1,024 nodes x 8 adapters the rail pattern
 * measures 8.4 million directions, a 6.7 GB JSON file rewritten between rounds, and every write
 * holds rank 0 (and so every rank) for minutes. Listing only the notable pairs keeps a report
 * O(endpoints + what went wrong):
 *   - notable: anything a person is to be told about: a pair that did not measure ok (failed, below
 *     threshold: the verdict's statuses), a flaky one, and one with a warning other than
 *     nominal_link_rate (a soft device's; it is on every pair of such a device and says nothing
 *     about the pair);
 *   - the rest, the plain passes, are counted (per endpoint too: the verdict's pairs and failed),
 *     and every one of them is in the --jsonl stream when one is written.
 * The mode (--list-pairs): all, notable, or auto: all while the schedule has at most
 * RP_REPORT_LIST_AUTO_MAX directions, notable beyond. --baseline compares every pair's rate with the
 * baseline, so it needs them all: with it, auto lists all and notable is refused (by the front end).
 * The verdict is never changed by the listing: it judges every pair either way.
 */
#ifndef RP_REPORT_LIST_H
#define RP_REPORT_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verdict/result_seq.h"

#define RP_REPORT_LIST_AUTO_MAX 100000

enum rp_report_list_mode { RP_REPORT_LIST_AUTO = 0, RP_REPORT_LIST_ALL, RP_REPORT_LIST_NOTABLE };

/* "all", "notable", "auto". 0 or -EINVAL. */
int rp_report_list_parse(const char *s, enum rp_report_list_mode *m);
/* Whether a run of n_directions (both directions of every scheduled pair) lists only the notable
 * pairs under mode m; need_all: something reads every pair (--baseline). */
bool rp_report_list_notable_only(enum rp_report_list_mode m, uint64_t n_directions, bool need_all);
/* A pair is notable (see above). */
bool rp_result_notable(const struct rp_result_peek *pk);

/* The notable pairs of a sequence, as pairs of their own (get, put and peek go to the base pair);
 * the base and *l must outlive the view. */
struct rp_report_listed {
	const struct rp_result_seq *base;
	size_t *idx;                  /* the base's index of each listed pair */
	uint32_t *pair_eps;           /* 2 per listed pair: the base's pair_eps, picked */
	size_t n;
};

/* The notable pairs of base (pair_eps: 2 per base pair). 0 or -ENOMEM (l empty). */
int rp_report_list_build(struct rp_report_listed *l, const struct rp_result_seq *base, const uint32_t *pair_eps);
/* The listed pairs as a sequence. */
struct rp_result_seq rp_report_listed_view(struct rp_report_listed *l);
void rp_report_listed_fini(struct rp_report_listed *l);

#endif
