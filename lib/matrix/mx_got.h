/* mx_got.h: a round's results as rank 0 collects them, one slot per direction of every job
 * (slot 2 * job + dir), each kept as it came: a plain side (a pass as its record, lib/job/mx_plain.h,
 * 144 bytes) or packed (lib/base/result_pack.h): a sweep round of 131,072 one-way probes (1,024 nodes
 * x 8 adapters at width 16) holds a few hundred bytes a probe at most, not two 3.4 KB results a job.
 * Rank 0's sides and the REPORTs of the others go in with mx_got_side_plain or mx_got_side_packed,
 * the round's fix-ups with mx_got_side (the same rule of which view of a direction wins); the run
 * reads them with mx_got_plain (a plain side's record, nothing built) or mx_got_get, which merges the
 * table's description of both endpoints in (mx_got_reset's eps and jobs) as it unpacks or rebuilds:
 * a side's bytes are kept as they came, never unpacked and packed again only to be kept or merged.
 */
#ifndef RP_MX_GOT_H
#define RP_MX_GOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job/mx_table.h"
#include "job/mx_wire.h"
#include "base/result.h"
#include "base/result_pack.h"

struct mx_got {
	struct rp_packed *d;          /* per slot; len 0: nothing packed in it */
	struct mx_wire_plain *plain;  /* per slot (plain_cap of them): a plain side (is_plain 1), kept as it came */
	uint8_t *is_plain;            /* per slot: 1 a plain side, 2 a brief pass (elapsed), 0 neither */
	uint8_t *writer;              /* per slot: the result is the writing side's view */
	double *elapsed;              /* per slot: a brief pass's time */
	size_t n, cap, plain_cap;     /* slots in use, allocated; plain sides' room */
	bool brief;                   /* set before a reset, for the round that follows: its passes are kept
	                               * as brief passes, their status and time alone, and no room is made
	                               * for plain sides (a sweep's first pass: lib/matrix/mx_round.h) */
	const struct mx_ep *eps;      /* the table, merged in by mx_got_get; NULL: nothing merged */
	const struct mx_job *jobs;    /* slot k is direction k % 2 of jobs[k / 2] (a -> b, then b -> a) */
};

/* Empty every slot (their buffers freed) and make room for n_slots; from now on mx_got_get merges
 * the table eps (NULL: none) into slot k's endpoints, those of direction k % 2 of jobs[k / 2]
 * (both must outlive the reads). 0 or -ENOMEM (g empty). */
int mx_got_reset(struct mx_got *g, size_t n_slots, const struct mx_ep *eps, const struct mx_job *jobs);
/* The table's description of an endpoint into dst, with what the engine learned (MTU, memory,
 * soft) kept. Merging twice is merging once. */
void mx_got_ep_merge(struct rp_endpoint *dst, const struct rp_endpoint *table);
/* Keep r in slot k (< n) whatever it held. 0 or -ENOMEM (slot k unchanged). */
int mx_got_set(struct mx_got *g, size_t k, const struct rp_pair_result *r, bool writer);
/* One side's view of slot k: kept unless the slot holds a view that wins over it: the other side
 * saw the pair interrupted (it was not measured, whatever the writer saw after), or the writer's
 * view against the target's (unless the target's says interrupted). 0 or -ENOMEM. */
int mx_got_side(struct mx_got *g, size_t k, const struct rp_pair_result *r, bool writer);
/* The same for a side as it came packed (bytes[0..len), a REPORT's checked side or one this rank
 * wrote), kept as it is, never unpacked here. 0, -EPROTO (no status in the bytes), -ENOMEM. */
int mx_got_side_packed(struct mx_got *g, size_t k, const uint8_t *bytes, size_t len, bool writer);
/* The same for a REPORT's plain side (checked by mx_side_plain): a pass, kept as its 144 bytes (as a
 * brief pass of its time in a brief round). 0. */
int mx_got_side_plain(struct mx_got *g, size_t k, const struct mx_wire_plain *wp, bool writer);
/* The same for a brief pass (a REPORT's, checked by mx_side_brief): status ok and its time. 0. */
int mx_got_side_brief(struct mx_got *g, size_t k, double elapsed_s, bool writer);
/* Slot k's time (holding a result): a brief pass's or a plain side's as kept, else its result's. */
double mx_got_elapsed(const struct mx_got *g, size_t k);
static inline bool mx_got_have(const struct mx_got *g, size_t k)
{
	return k < g->n && (g->d[k].len > 0 || g->is_plain[k]);
}
/* Slot k's plain pass as it came; NULL when the slot holds no plain side (a brief pass is none). */
static inline const struct mx_plain *mx_got_pass(const struct mx_got *g, size_t k)
{
	return k < g->n && g->is_plain[k] == 1 ? &g->plain[k].p : NULL;
}
/* Whether slot k holds a plain side; when so, *p its pass and *src, *dst its endpoints with the
 * table's merged in (what mx_got_get's result holds), with nothing expanded. */
bool mx_got_plain(const struct mx_got *g, size_t k, struct mx_plain *p, struct rp_endpoint *src, struct rp_endpoint *dst);
/* Whether ep, endpoint e as a store keeps it, is the table's entry for e but for what an engine
 * learns (MTU, memory, soft): the fields a plain side carries (mx_plain_eps). false without a table. */
bool mx_got_ep_from_table(const struct mx_got *g, uint32_t e, const struct rp_endpoint *ep);
/* Whether slot k holds a plain side whose ends, as mx_got_plain builds them, are src and dst byte for
 * byte, where each of src and dst is known to be its table entry but for what an engine learns
 * (mx_got_ep_from_table): only those fields are compared, nothing is built. */
bool mx_got_plain_ends_are(const struct mx_got *g, size_t k, const struct rp_endpoint *src, const struct rp_endpoint *dst);
/* Slot k's status without unpacking it (slot k holds a result). */
static inline enum rp_status mx_got_status(const struct mx_got *g, size_t k)
{
	return (enum rp_status)g->d[k].status;
}
/* Slot k (holding a result) into tmp, the table's endpoints merged in; returns tmp. A brief pass
 * comes back as what is known of it: ok, its time, the table's endpoints, nothing measured. */
struct rp_pair_result *mx_got_get(const struct mx_got *g, size_t k, struct rp_pair_result *tmp);
/* The same, and *as_packed says whether slot k's bytes (mx_got_packed) are a packing of *tmp as it
 * is returned (the table's merge changed none of its bytes), so that a keeper may copy them instead
 * of packing *tmp again. */
struct rp_pair_result *mx_got_get_kept(const struct mx_got *g, size_t k, struct rp_pair_result *tmp, bool *as_packed);
static inline const struct rp_packed *mx_got_packed(const struct mx_got *g, size_t k)
{
	return &g->d[k];
}
/* Bytes held now (slots and their packed results). */
size_t mx_got_bytes(const struct mx_got *g);
void mx_got_fini(struct mx_got *g);

#endif
