/* mx_results.h: the results rank 0 keeps, one per measured direction, in memory that grows with the
 * pairs by 56 bytes each (a 48-byte record and its two endpoint numbers), not by
 * sizeof(struct rp_pair_result) (3.4 KB): at 1,024 nodes x 8 rails the rail pattern keeps 8.4 million
 * directions.
 *
 * A result is kept in one of two forms, and read and written through one interface (lib/verdict/result_seq.h):
 *   - a plain pass (lib/job/mx_plain.h) between both endpoints as this store first saw them, as a
 *     record (struct mx_rec). The record rebuilds such a result exactly, except its informational
 *     counters' names and deltas (a rebuilt side has `brief` set: "listed": false). A result added
 *     whole keeps those names until it is settled (the --jsonl stream is written before), one added
 *     as a plain record (mx_results_add_plain: a REPORT's plain side) never had them.
 *   - anything else whole (failures, retests, warnings beyond the bits, --bidir, latency): O(what
 *     is not a plain pass), every byte of it kept, but packed (lib/base/result_pack.h): the runs of zero
 *     bytes of a struct rp_pair_result (empty reasons, unused attempts and counters, the ends of
 *     names) are stored as their length, so an unreachable pair takes a few hundred bytes, not 3.4 KB.
 *     It is unpacked into the caller's tmp by every get, exactly as it was put.
 * A result stays whole from mx_results_add() until mx_results_settle() (rank 0 settles after each
 * round's hook has streamed it); a plain pass's record is made as it is added (MX_REC_PENDING), so
 * that settling it unpacks nothing, unless a put changed it meanwhile. A settled plain pass written
 * back with put becomes a record again, anything else becomes (or stays) whole.
 */
#ifndef RP_MX_RESULTS_H
#define RP_MX_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verdict/result_seq.h"
#include "base/result.h"
#include "base/result_pack.h"
#include "job/mx_plain.h"

#define MX_REC_WHOLE_NONE UINT32_MAX
#define MX_REC_PENDING 0x4u       /* in ctr_measured of a whole result: the rest of the record is what
                                   * it settles into (made as it was added; a put clears it) */

/* A plain pass in 48 bytes, not mx_plain's 64: its bytes are iters * msg_size (as the engine counts
 * them), and its small fields are bit fields as wide as their ranges. A plain pass whose fields do not
 * fit (2^32 iterations or more, bytes other than that product, a warning bit past the seventh, more
 * than 255 counters moved) has no record: it is kept whole, every byte of it. */
struct mx_rec {                   /* 48 bytes */
	double gbps, gbps_min, gbps_min_at_s, elapsed_s;
	uint32_t iters;
	uint32_t msg_size;
	uint32_t whole;               /* index into whole[], or MX_REC_WHOLE_NONE: the record is the result */
	uint32_t warnings : 7;
	uint32_t qp_timeout : 5;      /* its one attempt's */
	uint32_t ctr_measured : 3;    /* bit 0: src's counters measured (judged ok), bit 1: dst's; MX_REC_PENDING */
	uint32_t n_moved_src : 8;     /* src's, dst's informational counters that moved */
	uint32_t n_moved_dst : 8;
};

struct mx_ep_facts {             /* of an endpoint as kept (ep[]): what the verdict's passes read */
	double link_gbps;
	int32_t mtu;
	uint8_t soft;
};

struct mx_results {
	struct mx_rec *rec;
	uint32_t *pair_eps;           /* 2 per result: source and destination endpoint */
	size_t n, cap;
	size_t settled;               /* results [0, settled) may be records */
	struct rp_packed *whole;      /* the results kept whole; slots listed in free_slot are unused */
	struct rp_result_peek *whole_pk; /* per slot, rp_result_peek_of() of what it packs, made as it was
	                               * packed: a peek unpacks nothing (the verdict peeks every failure
	                               * several times) */
	size_t packed_bytes;          /* their bytes in all */
	size_t n_whole, whole_cap;
	uint32_t *free_slot;
	size_t n_free, free_cap;
	struct rp_endpoint *ep;       /* per endpoint number, as first seen in a result (a record's src/dst) */
	uint64_t gen;                 /* bumped by every change to the results (an add, a put, a settle): a
	                               * judgement of the store holds while it is unchanged (mx_retest.h) */
	struct mx_ep_facts *facts;    /* per endpoint number, what a peek reads of ep[] (16 bytes, not ~190) */
	bool *ep_seen;
	size_t n_eps;
	uint64_t *quiet;              /* bit i: result i is a record not warned flaky (result_seq.h's quiet
	                               * pass: what a record always is, but for that warning); cap bits */
};

/* Size the endpoint table (endpoint numbers < n_eps). 0 or -ENOMEM. */
int mx_results_init(struct mx_results *mr, size_t n_eps);
/* Append a copy of r (src -> dst), whole until settled. 0, -EINVAL (an endpoint number >= n_eps) or
 * -ENOMEM (nothing changed). */
int mx_results_add(struct mx_results *mr, const struct rp_pair_result *r, uint32_t src, uint32_t dst);
/* The same with r's packed bytes[0..len) at hand (a round's slot whose bytes pack r exactly,
 * lib/matrix/mx_got.h): kept as they are instead of packing r again. -EINVAL also for a length no
 * packed result has. */
int mx_results_add_packed(struct mx_results *mr, const struct rp_pair_result *r, const uint8_t *bytes, size_t len,
			  uint32_t src, uint32_t dst);
/* Append the plain pass p between the endpoints src_ep and dst_ep (src -> dst) as its record, with
 * nothing to unpack or compare; whole instead (as mx_results_add of its expansion) when an endpoint
 * differs from what this store first saw of it. 0, -EINVAL (an endpoint number >= n_eps) or -ENOMEM. */
int mx_results_add_plain(struct mx_results *mr, const struct mx_plain *p, const struct rp_endpoint *src_ep,
			 const struct rp_endpoint *dst_ep, uint32_t src, uint32_t dst);
/* Append the plain pass p between endpoints src and dst as they are kept (both seen; the caller knows
 * p's endpoints are those, byte for byte: mx_got_plain_ends_are) as its record. 0, -EINVAL (an
 * endpoint number >= n_eps, or one not seen yet) or -ENOMEM. */
int mx_results_add_record(struct mx_results *mr, const struct mx_plain *p, uint32_t src, uint32_t dst);
/* Endpoint e as this store keeps it (what its records rebuild); NULL when not seen yet. */
static inline const struct rp_endpoint *mx_results_ep(const struct mx_results *mr, uint32_t e)
{
	return e < mr->n_eps && mr->ep_seen[e] ? &mr->ep[e] : NULL;
}
/* Result i (< n), built or unpacked into tmp; returns tmp (keep a change with mx_results_put). */
struct rp_pair_result *mx_results_get(const struct mx_results *mr, size_t i, struct rp_pair_result *tmp);
/* Keep r as result i (r may be what mx_results_get returned). 0 or -ENOMEM (i unchanged). */
int mx_results_put(struct mx_results *mr, size_t i, const struct rp_pair_result *r);
/* Turn the plain passes added since the last call into records. */
void mx_results_settle(struct mx_results *mr);
/* rp_result_peek_of() of result i, a record's without building it. */
void mx_results_peek(const struct mx_results *mr, size_t i, struct rp_result_peek *pk);
/* The results as pairs (lib/verdict/result_seq.h), for the verdict and the writers; valid while mr is. */
struct rp_result_seq mx_results_pairs(struct mx_results *mr);
/* How many results are not ok now (after a verdict judged them in place, its statuses count); reads
 * the whole results only, not the records. */
size_t mx_results_failed(const struct mx_results *mr);
/* Bytes the store holds now (records, endpoints, whole results as packed). */
size_t mx_results_bytes(const struct mx_results *mr);
size_t mx_results_n_whole(const struct mx_results *mr);
void mx_results_fini(struct mx_results *mr);

#endif
