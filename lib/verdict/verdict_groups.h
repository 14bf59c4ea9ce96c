/* verdict_groups.h: a run's failed directions grouped by suspect, so that a report is sized by its
 * findings, not by the fabric, and one loud fault (a dead adapter's thousands of directions) cannot
 * hide another (one dead link elsewhere).
 *
 * Every failed direction (status not ok, below-threshold included) goes to exactly one group, by the
 * first rule that names a suspect:
 *   ADAPTER  an end the verdict drains (lib/verdict/verdict.h); both drained: the one with more failed
 *            directions (a tie: the source). The group is keyed by that endpoint.
 *   UNUSABLE an end the verdict leaves out of NCCL_IB_HCA without draining it (unusable: a switch or
 *            route around it is the suspect); both: as ADAPTER. Keyed by that endpoint.
 *   LINK     neither end is drained nor unusable: the path between the two endpoints is the suspect (a cable, a
 *            port, a switch between them). Keyed by the unordered pair, so both directions of one
 *            link are one group.
 * A new suspect kind (a component from lib's localisation: a leaf, a spine, a rail) slots in as a kind
 * of its own: a rule in rp_fail_suspect() ahead of LINK, a key, a name in
 * rp_suspect_kind_name(); the groups' order and the writers stay as they are.
 *
 * Memory: O(endpoints + failed directions); the pairs are read once (peeked, lib/verdict/result_seq.h) and the
 * failures a second time for their examples. */
#ifndef RP_VERDICT_GROUPS_H
#define RP_VERDICT_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "verdict/result_seq.h"
#include "verdict/verdict.h"

enum rp_suspect_kind { RP_SUSPECT_ADAPTER = 0, RP_SUSPECT_UNUSABLE, RP_SUSPECT_LINK, RP_SUSPECT_KIND_COUNT_ };

#define RP_GROUP_EXAMPLES 3           /* the first failed directions a group keeps, by pair index */

struct rp_fail_group {
	enum rp_suspect_kind kind;
	uint32_t a, b;                /* ADAPTER, UNUSABLE: the endpoint (b == a); LINK: its two ends, a < b */
	size_t n;                     /* failed directions in the group */
	size_t confirmed;             /* of them confirmed on retest (lib/verdict/retest.h) */
	size_t by_endpoint;           /* of those, by their endpoint's sample: not measured again themselves */
	size_t ex[RP_GROUP_EXAMPLES]; /* pair indices of its first failures */
	size_t n_ex;
};

struct rp_fail_groups {
	struct rp_fail_group *g;      /* by kind (enum order), then by n descending, then a, b */
	size_t n;
	size_t kind_first[RP_SUSPECT_KIND_COUNT_];   /* kind k's groups: g[kind_first[k] .. + kind_groups[k]) */
	size_t kind_groups[RP_SUSPECT_KIND_COUNT_];
	size_t kind_failed[RP_SUSPECT_KIND_COUNT_];  /* failed directions of kind k */
	size_t n_failed;
};

/* Group the failed pairs of ps (pair i between endpoints pair_eps[2i] -> pair_eps[2i+1]) by the
 * suspects of verdict v (judged on the same pairs). 0 with *fg filled (free with rp_fail_groups_fini),
 * -EINVAL (an endpoint number out of range) or -ENOMEM; *fg is empty after a failure. */
int rp_fail_groups_build(const struct rp_verdict *v, const uint32_t *pair_eps, const struct rp_result_seq *ps,
			 struct rp_fail_groups *fg);
void rp_fail_groups_fini(struct rp_fail_groups *fg);

/* The suspect of one failed direction s -> d under v (the rules above): its kind, and its key in
 * *a, *b (ADAPTER: *a == *b the endpoint). s and d must be below v->n_eps. */
enum rp_suspect_kind rp_fail_suspect(const struct rp_verdict *v, uint32_t s, uint32_t d, uint32_t *a, uint32_t *b);

/* "adapter", "unusable", "link": the kind as the reports name it. */
const char *rp_suspect_kind_name(enum rp_suspect_kind k);

#endif
