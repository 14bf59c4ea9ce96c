/* mx_results.c: the results rank 0 keeps, as records or whole; see mx_results.h. */
#include "matrix/mx_results.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


int mx_results_init(struct mx_results *mr, size_t n_eps)
{
	memset(mr, 0, sizeof(*mr));
	mr->ep = calloc(n_eps ? n_eps : 1, sizeof(*mr->ep));
	mr->facts = calloc(n_eps ? n_eps : 1, sizeof(*mr->facts));
	mr->ep_seen = calloc(n_eps ? n_eps : 1, sizeof(*mr->ep_seen));
	if (!mr->ep || !mr->facts || !mr->ep_seen) {
		mx_results_fini(mr);
		return -ENOMEM;
	}
	mr->n_eps = n_eps;
	return 0;
}

/* Endpoint e as its records rebuild it from now on. */
static void ep_keep(struct mx_results *mr, uint32_t e, const struct rp_endpoint *ep)
{
	mr->ep[e] = *ep;
	mr->facts[e] = (struct mx_ep_facts){ .link_gbps = ep->link_gbps, .mtu = ep->mtu, .soft = ep->soft };
}

_Static_assert(sizeof(struct mx_rec) == 48, "a record is 48 bytes");
_Static_assert(RP_WARN_COUNT_ <= 7, "every warning bit fits a record's");

/* A plain pass's record as this store keeps it (not whole, nothing pending); false when a field of p
 * does not fit one (mx_results.h: it is kept whole). */
static bool rec_of_plain(const struct mx_plain *p, struct mx_rec *rec)
{
	if (p->iters > UINT32_MAX || p->bytes != p->iters * (uint64_t)p->msg_size || p->warnings >= (1u << 7) ||
	    p->qp_timeout >= (1u << 5) || p->ctr_measured > 3 || p->n_moved[0] > UINT8_MAX || p->n_moved[1] > UINT8_MAX)
		return false;   /* (iters < 2^32 and msg_size < 2^32: their product cannot wrap) */
	*rec = (struct mx_rec){ .gbps = p->gbps, .gbps_min = p->gbps_min, .gbps_min_at_s = p->gbps_min_at_s,
				.elapsed_s = p->elapsed_s, .iters = (uint32_t)p->iters, .msg_size = p->msg_size,
				.whole = MX_REC_WHOLE_NONE, .warnings = p->warnings, .qp_timeout = p->qp_timeout,
				.ctr_measured = p->ctr_measured, .n_moved_src = p->n_moved[0], .n_moved_dst = p->n_moved[1] };
	return true;
}

/* The result a record stands for, between endpoints s and d. */
static void rec_expand(const struct mx_results *mr, const struct mx_rec *rec, uint32_t s, uint32_t d,
		       struct rp_pair_result *out)
{
	struct mx_plain p = { .gbps = rec->gbps, .gbps_min = rec->gbps_min, .gbps_min_at_s = rec->gbps_min_at_s,
			      .elapsed_s = rec->elapsed_s, .bytes = (uint64_t)rec->iters * rec->msg_size,
			      .iters = rec->iters, .msg_size = rec->msg_size, .warnings = (uint16_t)rec->warnings,
			      .qp_timeout = (uint8_t)rec->qp_timeout, .ctr_measured = (uint8_t)(rec->ctr_measured & 3u),
			      .n_moved = { (uint16_t)rec->n_moved_src, (uint16_t)rec->n_moved_dst } };

	mx_plain_expand(&p, &mr->ep[s], &mr->ep[d], out);
}

/* Whether r (src s, dst d) is a plain pass its record rebuilds between the endpoints as this store
 * first saw them (lib/job/mx_plain.h); *rec that record when so. */
static bool rec_plain(const struct mx_results *mr, const struct rp_pair_result *r, uint32_t s, uint32_t d,
		      struct mx_rec *rec)
{
	struct mx_plain p;

	return mx_plain_of(r, &mr->ep[s], &mr->ep[d], &p) && rec_of_plain(&p, rec);
}

/* Keep r packed in slot (whatever the slot held before). 0 or -ENOMEM (the slot unchanged). */
static int slot_pack(struct mx_results *mr, uint32_t slot, const struct rp_pair_result *r)
{
	struct rp_packed *p = &mr->whole[slot];
	size_t before = p->len;

	if (rp_packed_set(p, r) != 0)
		return -ENOMEM;
	mr->packed_bytes += p->len - before;
	rp_result_peek_of(r, &mr->whole_pk[slot]);
	return 0;
}

/* Keep the packed bytes[0..len) of r in slot as they are. 0, -EINVAL (no packed result's length)
 * or -ENOMEM (the slot unchanged). */
static int slot_copy(struct mx_results *mr, uint32_t slot, const uint8_t *bytes, size_t len,
		     const struct rp_pair_result *r)
{
	struct rp_packed *p = &mr->whole[slot];
	size_t before = p->len;
	int rc = rp_packed_set_bytes(p, bytes, len, (int32_t)r->status);

	if (rc)
		return rc == -ENOMEM ? -ENOMEM : -EINVAL;
	mr->packed_bytes += p->len - before;
	rp_result_peek_of(r, &mr->whole_pk[slot]);
	return 0;
}

static void slot_free(struct mx_results *mr, uint32_t slot)
{
	mr->packed_bytes -= mr->whole[slot].len;
	rp_packed_clear(&mr->whole[slot]);
	mr->free_slot[mr->n_free++] = slot;
}

/* A free slot for a whole result (free_slot always has room for every slot). 0 or -ENOMEM. */
static int slot_alloc(struct mx_results *mr, uint32_t *slot)
{
	if (mr->n_free) {
		*slot = mr->free_slot[--mr->n_free];
		return 0;
	}
	if (mr->n_whole == mr->whole_cap) {
		size_t cap = mr->whole_cap ? 2 * mr->whole_cap : 64;
		struct rp_packed *nw;
		struct rp_result_peek *np;
		uint32_t *nf;

		if (cap >= MX_REC_WHOLE_NONE)
			return -ENOMEM;
		nf = realloc(mr->free_slot, cap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		mr->free_slot = nf;
		np = realloc(mr->whole_pk, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		mr->whole_pk = np;
		nw = realloc(mr->whole, cap * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		memset(nw + mr->whole_cap, 0, (cap - mr->whole_cap) * sizeof(*nw));
		mr->whole = nw;
		mr->whole_cap = cap;
	}
	*slot = (uint32_t)mr->n_whole++;
	return 0;
}

/* Result i's quiet bit from its record now: a record (not whole) warned of nothing but a nominal
 * link rate (result_seq.h). */
static void quiet_note(struct mx_results *mr, size_t i)
{
	uint64_t bit = (uint64_t)1 << (i % 64);
	bool quiet = mr->rec[i].whole == MX_REC_WHOLE_NONE && !(mr->rec[i].warnings & ~(1u << RP_WARN_NOMINAL_RATE));

	mr->quiet[i / 64] = quiet ? mr->quiet[i / 64] | bit : mr->quiet[i / 64] & ~bit;
}

/* Room for one more result. 0 or -ENOMEM. */
static int rec_room(struct mx_results *mr)
{
	size_t cap = mr->cap ? 2 * mr->cap : 64;   /* a multiple of 64: whole words of quiet bits */
	struct mx_rec *nr;
	uint32_t *np;
	uint64_t *nq;

	if (mr->n < mr->cap)
		return 0;
	nr = realloc(mr->rec, cap * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	mr->rec = nr;
	np = realloc(mr->pair_eps, 2 * cap * sizeof(*np));
	if (!np)
		return -ENOMEM;
	mr->pair_eps = np;
	nq = realloc(mr->quiet, cap / 64 * sizeof(*nq));
	if (!nq)
		return -ENOMEM;
	memset(nq + mr->cap / 64, 0, (cap - mr->cap) / 64 * sizeof(*nq));
	mr->quiet = nq;
	mr->cap = cap;
	return 0;
}

/* Append r (src -> dst) whole: packed, or bytes[0..len) (a packing of r) when bytes. Its record is
 * made now when it is a plain pass, for mx_results_settle to put in its place. */
static int add(struct mx_results *mr, const struct rp_pair_result *r, const uint8_t *bytes, size_t len,
	       uint32_t src, uint32_t dst)
{
	struct mx_rec rec;
	uint32_t slot;
	bool new_src, new_dst, plain;
	int rc;

	if (src >= mr->n_eps || dst >= mr->n_eps)
		return -EINVAL;
	if (rec_room(mr) != 0)
		return -ENOMEM;
	/* the endpoints as first seen: what every record of theirs rebuilds */
	new_src = !mr->ep_seen[src];
	new_dst = !mr->ep_seen[dst];
	if (new_src)
		ep_keep(mr, src, &r->src);
	if (new_dst)
		ep_keep(mr, dst, &r->dst);
	mr->ep_seen[src] = mr->ep_seen[dst] = true;
	plain = rec_plain(mr, r, src, dst, &rec);
	rc = slot_alloc(mr, &slot);
	if (!rc) {
		rc = bytes ? slot_copy(mr, slot, bytes, len, r) : slot_pack(mr, slot, r);
		if (rc)
			mr->free_slot[mr->n_free++] = slot;
	}
	if (rc) {
		mr->ep_seen[src] = !new_src;   /* nothing changed */
		mr->ep_seen[dst] = !new_dst;
		return rc;
	}
	if (plain) {
		rec.ctr_measured |= MX_REC_PENDING;
	} else {
		memset(&rec, 0, sizeof(rec));
	}
	rec.whole = slot;
	mr->rec[mr->n] = rec;
	mr->pair_eps[2 * mr->n] = src;
	mr->pair_eps[2 * mr->n + 1] = dst;
	quiet_note(mr, mr->n);
	mr->n++;
	mr->gen++;
	return 0;
}

int mx_results_add(struct mx_results *mr, const struct rp_pair_result *r, uint32_t src, uint32_t dst)
{
	return add(mr, r, NULL, 0, src, dst);
}

int mx_results_add_packed(struct mx_results *mr, const struct rp_pair_result *r, const uint8_t *bytes, size_t len,
			  uint32_t src, uint32_t dst)
{
	return add(mr, r, bytes, len, src, dst);
}

int mx_results_add_plain(struct mx_results *mr, const struct mx_plain *p, const struct rp_endpoint *src_ep,
			 const struct rp_endpoint *dst_ep, uint32_t src, uint32_t dst)
{
	if (src >= mr->n_eps || dst >= mr->n_eps)
		return -EINVAL;
	if ((mr->ep_seen[src] && memcmp(&mr->ep[src], src_ep, sizeof(*src_ep)) != 0) ||
	    (mr->ep_seen[dst] && memcmp(&mr->ep[dst], dst_ep, sizeof(*dst_ep)) != 0)) {
		struct rp_pair_result r;

		mx_plain_expand(p, src_ep, dst_ep, &r);
		return add(mr, &r, NULL, 0, src, dst);
	}
	if (rec_room(mr) != 0)
		return -ENOMEM;
	if (!mr->ep_seen[src])
		ep_keep(mr, src, src_ep);
	if (!mr->ep_seen[dst])
		ep_keep(mr, dst, dst_ep);
	mr->ep_seen[src] = mr->ep_seen[dst] = true;
	return mx_results_add_record(mr, p, src, dst);
}

int mx_results_add_record(struct mx_results *mr, const struct mx_plain *p, uint32_t src, uint32_t dst)
{
	struct mx_rec rec;

	if (src >= mr->n_eps || dst >= mr->n_eps || !mr->ep_seen[src] || !mr->ep_seen[dst])
		return -EINVAL;
	if (!rec_of_plain(p, &rec)) {
		struct rp_pair_result r;

		mx_plain_expand(p, &mr->ep[src], &mr->ep[dst], &r);
		return add(mr, &r, NULL, 0, src, dst);
	}
	if (rec_room(mr) != 0)
		return -ENOMEM;
	mr->rec[mr->n] = rec;
	mr->pair_eps[2 * mr->n] = src;
	mr->pair_eps[2 * mr->n + 1] = dst;
	quiet_note(mr, mr->n);
	mr->n++;
	mr->gen++;
	return 0;
}

struct rp_pair_result *mx_results_get(const struct mx_results *mr, size_t i, struct rp_pair_result *tmp)
{
	const struct mx_rec *rec = &mr->rec[i];

	if (rec->whole != MX_REC_WHOLE_NONE) {
		rp_packed_get(&mr->whole[rec->whole], tmp);
		return tmp;
	}
	rec_expand(mr, rec, mr->pair_eps[2 * i], mr->pair_eps[2 * i + 1], tmp);
	return tmp;
}

int mx_results_put(struct mx_results *mr, size_t i, const struct rp_pair_result *r)
{
	uint32_t slot = mr->rec[i].whole;
	struct mx_rec rec;

	if (i < mr->settled && slot == MX_REC_WHOLE_NONE) {
		struct rp_pair_result cur;

		/* a reading pass puts back what it got: the record stands, unchanged */
		rec_expand(mr, &mr->rec[i], mr->pair_eps[2 * i], mr->pair_eps[2 * i + 1], &cur);
		if (memcmp(&cur, r, sizeof(cur)) == 0)
			return 0;
	}
	if (i < mr->settled && rec_plain(mr, r, mr->pair_eps[2 * i], mr->pair_eps[2 * i + 1], &rec)) {
		if (slot != MX_REC_WHOLE_NONE)
			slot_free(mr, slot);
		mr->rec[i] = rec;
		quiet_note(mr, i);
		mr->gen++;
		return 0;
	}
	if (slot != MX_REC_WHOLE_NONE) {
		struct rp_pair_result cur;

		/* a judgement puts back every failure it judged: one judged as before stands, unchanged */
		rp_packed_get(&mr->whole[slot], &cur);
		if (memcmp(&cur, r, sizeof(cur)) == 0)
			return 0;
	}
	mr->gen++;                    /* whatever follows changes it, or fails and changes nothing (a later
	                               * judgement then judges afresh: a needless one, never a stale one) */
	if (slot == MX_REC_WHOLE_NONE) {
		if (slot_alloc(mr, &slot) != 0)
			return -ENOMEM;
		if (slot_pack(mr, slot, r) != 0) {
			mr->free_slot[mr->n_free++] = slot;
			return -ENOMEM;
		}
		mr->rec[i].whole = slot;
		quiet_note(mr, i);
		return 0;
	}
	if (slot_pack(mr, slot, r) != 0)
		return -ENOMEM;
	mr->rec[i].ctr_measured &= ~MX_REC_PENDING & 3u;   /* its record, if it had one, is not this */
	return 0;
}

void mx_results_settle(struct mx_results *mr)
{
	struct rp_pair_result r;

	if (mr->settled < mr->n)
		mr->gen++;
	for (size_t i = mr->settled; i < mr->n; i++) {
		uint32_t slot = mr->rec[i].whole;
		struct mx_rec rec;

		if (slot == MX_REC_WHOLE_NONE || mr->whole[slot].status != RP_ST_OK)
			continue;
		if (mr->rec[i].ctr_measured & MX_REC_PENDING) {
			/* made as it was added, and nothing put since */
			slot_free(mr, slot);
			mr->rec[i].ctr_measured &= ~MX_REC_PENDING & 3u;
			mr->rec[i].whole = MX_REC_WHOLE_NONE;
			quiet_note(mr, i);
			continue;
		}
		rp_packed_get(&mr->whole[slot], &r);
		if (rec_plain(mr, &r, mr->pair_eps[2 * i], mr->pair_eps[2 * i + 1], &rec)) {
			slot_free(mr, slot);
			mr->rec[i] = rec;
			quiet_note(mr, i);
		}
	}
	mr->settled = mr->n;
}

static struct rp_pair_result *pairs_get(const struct rp_result_seq *ps, size_t i, struct rp_pair_result *tmp)
{
	return mx_results_get(ps->arg, i, tmp);
}

static int pairs_put(const struct rp_result_seq *ps, size_t i, const struct rp_pair_result *r)
{
	return mx_results_put(ps->arg, i, r);
}

void mx_results_peek(const struct mx_results *mr, size_t i, struct rp_result_peek *pk)
{
	const struct mx_rec *rec = &mr->rec[i];

	if (rec->whole != MX_REC_WHOLE_NONE && !(rec->ctr_measured & MX_REC_PENDING)) {
		*pk = mr->whole_pk[rec->whole];   /* the peek of what the slot packs, made as it was packed */
		return;
	}
	/* what rec_expand() builds: ok, not latency, no reverse, confirm none, a plain pass between the
	 * endpoints as first seen */
	const struct mx_ep_facts *s = &mr->facts[mr->pair_eps[2 * i]], *d = &mr->facts[mr->pair_eps[2 * i + 1]];

	*pk = (struct rp_result_peek){ .status = RP_ST_OK, .confirm = RP_CONFIRM_NONE, .msg_size = rec->msg_size,
				     .gbps = rec->gbps, .warnings = rec->warnings, .rev_status = RP_ST_OK, .plain = true,
				     .gbps_min = rec->gbps_min, .link_gbps = s->link_gbps < d->link_gbps ? s->link_gbps : d->link_gbps,
				     .soft = s->soft || d->soft, .mtu_mismatch = s->mtu > 0 && d->mtu > 0 && s->mtu != d->mtu };
}

static void pairs_peek(const struct rp_result_seq *ps, size_t i, struct rp_result_peek *pk)
{
	mx_results_peek(ps->arg, i, pk);
}

struct rp_result_seq mx_results_pairs(struct mx_results *mr)
{
	return (struct rp_result_seq){ .n = mr->n, .get = pairs_get, .put = pairs_put, .peek = pairs_peek,
				       .quiet = mr->quiet, .arg = mr };
}

size_t mx_results_failed(const struct mx_results *mr)
{
	size_t n = 0;

	for (size_t w = 0; w < (mr->n + 63) / 64; w++) {
		if (mr->quiet[w] == UINT64_MAX)
			continue;         /* 64 records: ok */
		for (size_t i = 64 * w; i < 64 * w + 64 && i < mr->n; i++)
			n += mr->rec[i].whole != MX_REC_WHOLE_NONE && mr->whole[mr->rec[i].whole].status != RP_ST_OK;
	}
	return n;
}

size_t mx_results_n_whole(const struct mx_results *mr)
{
	return mr->n_whole - mr->n_free;
}

size_t mx_results_bytes(const struct mx_results *mr)
{
	return mr->cap * (sizeof(*mr->rec) + 2 * sizeof(*mr->pair_eps)) + mr->cap / 8 +
	       mr->whole_cap * (sizeof(*mr->whole) + sizeof(*mr->whole_pk) + sizeof(*mr->free_slot)) + mr->packed_bytes +
	       mr->n_eps * (sizeof(*mr->ep) + sizeof(*mr->facts) + sizeof(*mr->ep_seen));
}

void mx_results_fini(struct mx_results *mr)
{
	free(mr->rec);
	free(mr->pair_eps);
	for (size_t k = 0; mr->whole && k < mr->n_whole; k++)
		free(mr->whole[k].buf);
	free(mr->whole);
	free(mr->whole_pk);
	free(mr->free_slot);
	free(mr->ep);
	free(mr->facts);
	free(mr->ep_seen);
	free(mr->quiet);
	memset(mr, 0, sizeof(*mr));
}
