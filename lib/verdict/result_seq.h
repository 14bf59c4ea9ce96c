/* result_seq.h: a sequence of measured pairs that need not be one array of results.
 *
 * Rank 0 of a large matrix is to keep most of its results in a compact form (issue 12: memory
 * O(endpoints + failures), not O(pairs) x sizeof(struct rp_pair_result)); the verdict reads and
 * judges pairs through this interface, so it judges an array and such a store by one code path.
 *
 *   struct rp_pair_result tmp, *r = rp_result_seq_get(ps, i, &tmp);   pair i: in the array, or built in tmp
 *   ... change r ...
 *   rc = rp_result_seq_put(ps, i, r);                                  keep the change (arrays: nothing to do)
 *
 * For an array (rp_result_seq_array), get returns the element itself and put does nothing, so a caller
 * that changes r changes the array, as before: no copy, no cost.
 *
 *   struct rp_result_peek pk; rp_result_seq_peek(ps, i, &pk);           the few fields a pass only reads
 *
 * A pass that only reads a pair's status, rate and warnings peeks: a store whose pair is a compact
 * record answers from the record without building a whole result (lib/matrix/mx_results.h). A peek is always
 * exactly rp_result_peek_of() of what get returns.
 *
 *   if (rp_result_seq_quiet(ps, i)) continue;                          a pass that looks for failures
 *
 * A store may also say, one bit per pair, which pairs are quiet passes (below): a pass that only looks
 * at failures, retests and flaky pairs skips them without reading them. At 8 million pairs, most of
 * them quiet, that is a bitmap of 1 MiB read instead of half a gigabyte of records, every such pass.
 */
#ifndef RP_RESULT_SEQ_H
#define RP_RESULT_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/result.h"

/* What the verdict's reading passes need of a pair. */
struct rp_result_peek {
	enum rp_status status;
	enum rp_confirm confirm;
	size_t msg_size;
	double gbps;
	uint32_t warnings;            /* the forward direction's */
	bool lat_measured;
	bool rev_measured;            /* --bidir: the reverse's status and warnings below */
	enum rp_status rev_status;
	uint32_t rev_warnings;
	bool plain;                   /* rp_result_plain(): a bandwidth pass and nothing else (lib/verdict/verdict.c
	                               * judges such a pair in one pass and writes it back only if changed) */
	/* what the bandwidth rules read besides: */
	double gbps_min;
	double link_gbps;             /* the lower of src's and dst's link rate */
	bool soft;                    /* src or dst a software device */
	bool mtu_mismatch;            /* both MTUs known and different */
};

/* A pass measured once and nothing else: ok with no reason, one attempt (ok, no reason), no latency,
 * no reverse direction, neither side's port counters failed or lossy. What a compact record of
 * lib/matrix/mx_results.h always is. */
static inline bool rp_result_plain(const struct rp_pair_result *r)
{
	return r->status == RP_ST_OK && !r->reason[0] && r->n_attempts == 1 && r->attempts[0].status == RP_ST_OK &&
	       !r->attempts[0].reason[0] && !r->lat.measured && !r->reverse.measured && !r->reverse.folded &&
	       r->counters.src.verdict == 0 && r->counters.dst.verdict == 0;
}

static inline void rp_result_peek_of(const struct rp_pair_result *r, struct rp_result_peek *pk)
{
	*pk = (struct rp_result_peek){ .status = r->status, .confirm = r->confirm, .msg_size = r->msg_size,
				     .gbps = r->gbps, .warnings = r->warnings, .lat_measured = r->lat.measured,
				     .rev_measured = r->reverse.measured, .rev_status = r->reverse.status,
				     .rev_warnings = r->reverse.warnings, .plain = rp_result_plain(r), .gbps_min = r->gbps_min,
				     .link_gbps = r->src.link_gbps < r->dst.link_gbps ? r->src.link_gbps : r->dst.link_gbps,
				     .soft = r->src.soft || r->dst.soft,
				     .mtu_mismatch = r->src.mtu > 0 && r->dst.mtu > 0 && r->src.mtu != r->dst.mtu };
}

struct rp_result_seq {
	size_t n;
	struct rp_pair_result *arr;   /* the pairs as one array; NULL: get/put below */
	/* Pair i (< n) built into tmp; returns tmp. */
	struct rp_pair_result *(*get)(const struct rp_result_seq *ps, size_t i, struct rp_pair_result *tmp);
	/* Keep r as pair i. 0 or -ENOMEM (pair i unchanged). */
	int (*put)(const struct rp_result_seq *ps, size_t i, const struct rp_pair_result *r);
	/* Optional (NULL: peek what get builds): rp_result_peek_of() of pair i, without building it. It
	 * only reads: the verdict peeks from two threads at once (lib/verdict/verdict_rates.c), but
	 * only where the sequence is an array or has a peek. */
	void (*peek)(const struct rp_result_seq *ps, size_t i, struct rp_result_peek *pk);
	/* Optional (NULL: none known): bit i % 64 of quiet[i / 64] set when pair i is a quiet pass, that is
	 * a plain pass (rp_result_plain) that is ok, confirm none, and warned of nothing but a nominal link
	 * rate (RP_WARN_NOMINAL_RATE: not flaky, nothing a report lists it for). A clear bit says nothing.
	 * Kept current by the sequence's own puts; valid while the store has no pair added. */
	const uint64_t *quiet;
	void *arg;
};

/* The n results of arr as pairs (arr may be NULL when n is 0). */
static inline struct rp_result_seq rp_result_seq_array(struct rp_pair_result *arr, size_t n)
{
	return (struct rp_result_seq){ .n = n, .arr = arr };
}

/* The same for a reader that never changes a pair (the report writers): a const array. */
static inline struct rp_result_seq rp_result_seq_const(const struct rp_pair_result *arr, size_t n)
{
	return (struct rp_result_seq){ .n = n, .arr = (struct rp_pair_result *)(uintptr_t)arr };
}

static inline struct rp_pair_result *rp_result_seq_get(const struct rp_result_seq *ps, size_t i, struct rp_pair_result *tmp)
{
	return ps->arr ? &ps->arr[i] : ps->get(ps, i, tmp);
}

static inline int rp_result_seq_put(const struct rp_result_seq *ps, size_t i, const struct rp_pair_result *r)
{
	return ps->arr ? 0 : ps->put(ps, i, r);
}

/* Whether pair i is known to be a quiet pass (above); false when not known. */
static inline bool rp_result_seq_quiet(const struct rp_result_seq *ps, size_t i)
{
	return ps->quiet && (ps->quiet[i / 64] >> (i % 64) & 1u);
}

static inline void rp_result_seq_peek(const struct rp_result_seq *ps, size_t i, struct rp_result_peek *pk)
{
	struct rp_pair_result tmp;

	if (ps->arr)
		rp_result_peek_of(&ps->arr[i], pk);
	else if (ps->peek)
		ps->peek(ps, i, pk);
	else
		rp_result_peek_of(ps->get(ps, i, &tmp), pk);
}

#endif
