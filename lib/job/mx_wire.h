/* mx_wire.h: the matrix's control messages between ranks: fixed, versioned, validated on receipt.
 * They travel in mx_comm's envelope (run nonce, round), so a late message of an earlier round or
 * another run never reaches these checks. */
#ifndef RP_MX_WIRE_H
#define RP_MX_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "verdict/drift.h"
#include "discover/node.h"
#include "base/result.h"
#include "base/result_pack.h"
#include "job/mx_plain.h"

#define MX_MAGIC 0x52504d58u   /* "RPMX" */
#define MX_VERSION 11          /* 2: EPS names the run's nonce and port-less endpoints; PLAN; stop signals;
                                * 3: EPS carries the sender's NCCL release;
                                * 4: EPS carries each endpoint's drift description;
                                * 5: EPS goes to rank 0 alone (lib/job/mx_startup.h), with the sender's
                                *    port selection time and its schedule digest;
                                * 6: REPORT carries a subtree's sides, rank by rank (n_ranks entries),
                                *    up the tree of lib/matrix/mx_round.h; ASK; GO and PLAN down the tree;
                                * 7: REPORT's sides packed (struct mx_wire_side), its ranks at its end;
                                * 8: EPS names each endpoint's host (host_id): two hosts of one name
                                *    stay apart;
                                * 9: REPORT's plain sides (len 0: struct mx_wire_plain, 144 bytes);
                                * 10: REPORT's brief passes (len MX_SIDE_BRIEF: struct mx_wire_brief);
                                * 11: PLAN's jobs say whether each is a small write (mx_job.small) */
#define MX_TAG_REPORT 11
#define MX_TAG_GO 12
#define MX_TAG_PLAN 13
#define MX_TAG_ASK 16              /* rank 0's direct ask (mx_round.h), in the envelope of MX_ASK_ROUND */
#define MX_ASK_ROUND 0xfffffff1u   /* the ask names its round in its header: a rank still waiting for
                                    * the previous round's go takes it too */

enum mx_kind { MX_KIND_EPS = 1, MX_KIND_REPORT, MX_KIND_GO, MX_KIND_PLAN, MX_KIND_ASK };

struct mx_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t kind;
	uint32_t length;              /* the whole message */
	int32_t rank;
	uint32_t round;
	uint32_t n;                   /* records after the header */
	int32_t status;               /* EPS: 0 or an exit status; GO: 0 go on, else the signal that
	                               * stops the run */
	uint64_t run;                 /* EPS: the sender's nonce for the run (rank 0's is the run's) */
	uint32_t nccl_version;        /* EPS: the NCCL release whose rules selected the sender's ports */
	uint32_t setup_ms;            /* EPS: how long the sender took to select its ports (ms) */
	uint32_t sched_digest;        /* EPS: the sender's schedule settings (mx_plan_digest); all must be rank 0's */
	uint32_t n_ranks;             /* REPORT: the ranks whose sides it carries (struct mx_wire_rank) */
	char error[228];              /* EPS: why this rank cannot take part */
};

#define MX_EP_NO_PORT 1u           /* mx_wire_ep.flags: the rank's selection has no ACTIVE port */

struct mx_wire_ep {
	char node[RP_NAME_MAX];
	char device[RP_NAME_MAX];
	int32_t port;
	int32_t gid_index;
	int32_t mtu;
	uint32_t flags;
	double link_gbps;
	uint64_t host_id;             /* the sender's host (a hash of its boot id; 0 unknown): the endpoint is
	                               * (node, host_id, device, port), so that two hosts of one name (two
	                               * "localhost", one --node given twice) are not merged */
	struct rp_drift_ep drift;     /* what rank 0 compares across the fabric (lib/verdict/drift.h); its strings
				       * are terminated and sanitised on receipt like node and device */
};

/* A REPORT's record: one side of a direction, then len bytes of its result packed
 * (lib/base/result_pack.h), zero-padded to a multiple of 8; or, len 0, a plain pass (struct
 * mx_wire_plain): what nearly every side of a healthy fabric is, so that rank 0 takes 144 bytes a
 * side with nothing to unpack (a packed pass is about 700). */
struct mx_wire_side {
	uint32_t idx;                 /* job number within the round */
	uint32_t dir;                 /* 0: a->b, 1: b->a */
	uint32_t writer;              /* 1 when the sender drove the writing side */
	uint32_t len;                 /* the packed result's bytes: 1 to RP_PACK_MAX; 0: a plain side */
};

/* mx_wire_side.len of a brief pass: in a brief round (a sweep's first pass, whose passes rank 0 needs
 * nothing of but that they passed: lib/matrix/mx_round.h, mx_ctx.brief), a side that passed is sent
 * as its time alone, 8 bytes instead of a plain side's 144 (a sweep round at 1,024 x 8 holds half a
 * million sides). Nothing else is a brief pass, and no other round has one. */
#define MX_SIDE_BRIEF UINT32_MAX

struct mx_wire_brief {
	double elapsed_s;             /* the probe's, finite and not negative */
};

/* A plain side: the pass's record (lib/job/mx_plain.h) and what the sender's engine learned of the two
 * endpoints (the rest of them is the table's, merged in by rank 0: lib/matrix/mx_got.h). */
struct mx_wire_plain {
	struct mx_plain p;
	int32_t mtu[2];               /* src, dst: the active MTU the engine found (0 unknown) */
	uint32_t soft[2];             /* 1: a software device */
	char mem[2][16];              /* as struct rp_endpoint's, terminated */
	char mem_reg[2][16];
};

#define MX_SIDE_MAX (sizeof(struct mx_wire_side) + ((RP_PACK_MAX + 7) & ~(size_t)7))

/* A record's bytes, header and padding included, for a packed result of len bytes (0: a plain side,
 * MX_SIDE_BRIEF: a brief pass). */
static inline size_t mx_side_size(size_t len)
{
	if (len == MX_SIDE_BRIEF)
		return sizeof(struct mx_wire_side) + sizeof(struct mx_wire_brief);
	return sizeof(struct mx_wire_side) + (len ? (len + 7) & ~(size_t)7 : sizeof(struct mx_wire_plain));
}

/* REPORT: hdr, n records (struct mx_wire_side, each with its packed result), then n_ranks of these
 * at the message's end, each naming the next n_rec of the records in order: a rank's sides stay
 * together however many ranks forwarded them. */
struct mx_wire_rank {
	int32_t rank;
	uint32_t n_rec;
	int32_t stop_sig;             /* that rank's stop signal (0 none) */
	uint32_t pad;
};

struct mx_wire_job {
	uint32_t a, b, dirs, round;   /* round: the retest round it runs in, from 0 */
	int32_t qp_timeout;
	uint32_t small;               /* 0 or 1 (mx_job.small) */
};

/* One measurement of a round: an unordered pair, the directions to run, the ACK timeout; or a small
 * write of it. */
struct mx_job {
	uint32_t a, b;                /* endpoint numbers, a < b */
	uint32_t dirs;                /* bit 0: a->b, bit 1: b->a */
	int16_t qp_timeout;           /* 0: the configured one */
	uint16_t small;               /* 1: one write of RP_ENGINE_MTUCHECK_SMALL bytes at the round's
	                               * deadline, with no MTU probe of its own: the small write of a
	                               * dead-endpoint confirmation's MTU probe, run beside its probe
	                               * (lib/matrix/mx_run_epdead.c) instead of after it */
};

static inline bool mx_str_terminated(const char *s, size_t len)
{
	/* senders fill a field with zeros past its string, so its last byte decides at once (rank 0
	 * checks four such fields in each of the millions of sides a run sends) */
	return len > 0 && (s[len - 1] == '\0' || memchr(s, '\0', len - 1) != NULL);
}

/* Check a received message's header and size; rec_size = size of one record. */
static inline bool mx_msg_ok(const void *buf, size_t len, enum mx_kind kind, size_t rec_size)
{
	const struct mx_hdr *h = buf;

	if (len < sizeof(*h) || h->magic != MX_MAGIC || h->version != MX_VERSION || h->kind != kind ||
	    h->length != len || !mx_str_terminated(h->error, sizeof(h->error)))
		return false;
	return (len - sizeof(*h)) == (size_t)h->n * rec_size;
}

static inline void mx_hdr_init(struct mx_hdr *h, enum mx_kind kind, int rank, size_t round, size_t n, size_t rec_size)
{
	memset(h, 0, sizeof(*h));
	h->magic = MX_MAGIC;
	h->version = MX_VERSION;
	h->kind = (uint16_t)kind;
	h->rank = rank;
	h->round = (uint32_t)round;
	h->n = (uint32_t)n;
	h->length = (uint32_t)(sizeof(*h) + n * rec_size);
}

/* A received REPORT: header, sizes, every record within the message and of a possible length, and
 * the ranks' record counts adding up to n. */
bool mx_report_ok(const void *buf, size_t len);
/* The ranks of a REPORT that passed mx_report_ok, and its first record. */
static inline const struct mx_wire_rank *mx_report_ranks(const void *buf)
{
	const struct mx_hdr *h = buf;

	return (const struct mx_wire_rank *)((const char *)buf + h->length - (size_t)h->n_ranks * sizeof(struct mx_wire_rank));
}

static inline const uint8_t *mx_report_recs(const void *buf)
{
	return (const uint8_t *)buf + sizeof(struct mx_hdr);
}

/* The most bytes a REPORT of n_rec records and n_ranks ranks can take (every result at its longest
 * packed): what a receiver allows before it allocates. */
static inline size_t mx_report_len(size_t n_rec, size_t n_ranks)
{
	return sizeof(struct mx_hdr) + n_rec * MX_SIDE_MAX + n_ranks * sizeof(struct mx_wire_rank);
}

/* A side's record into out (room for MX_SIDE_MAX bytes): plain when r is a plain pass between its
 * own endpoints (mx_plain_of) that a reader takes as it is (mx_side_plain), else packed. Returns its
 * size. */
size_t mx_side_write(uint8_t *out, uint32_t idx, uint32_t dir, bool writer, const struct rp_pair_result *r);
/* A brief pass's record into out (room for MX_SIDE_MAX bytes); returns its size. */
size_t mx_side_write_brief(uint8_t *out, uint32_t idx, uint32_t dir, bool writer, double elapsed_s);
/* A brief pass's time (s->len == MX_SIDE_BRIEF, within a checked REPORT) into *elapsed_s; false when
 * it is not finite or negative. */
bool mx_side_brief(const struct mx_wire_side *s, double *elapsed_s);
/* A record's result (the record passed mx_report_ok, or was written by mx_side_write). A plain side's
 * endpoints hold only what its sender learned (MTU, memory, soft); the table gives the rest. 0 or
 * -EPROTO (it does not unpack; a plain side out of range or with a string not terminated; a brief
 * pass, which holds no result). */
int mx_side_read(const struct mx_wire_side *s, struct rp_pair_result *r);
/* A plain side's record (s->len == 0, within a checked REPORT) into *wp; false when out of range or a
 * string is not terminated. */
bool mx_side_plain(const struct mx_wire_side *s, struct mx_wire_plain *wp);
/* The same, not checked again: a side report_check's mx_side_plain took, or one mx_side_write wrote
 * (it writes plain only what mx_side_plain takes). */
void mx_side_plain_get(const struct mx_wire_side *s, struct mx_wire_plain *wp);
/* The endpoints a plain side's sender learned, the rest zero (what mx_side_read puts in r). */
void mx_plain_eps(const struct mx_wire_plain *wp, struct rp_endpoint *src, struct rp_endpoint *dst);
/* Whether a side names an asked-for direction of a job of the round (and writer is 0 or 1). */
bool mx_side_job_ok(const struct mx_wire_side *s, const struct mx_job *jobs, size_t n_jobs);
/* A received side of a round over jobs[0..n_jobs), read into r: names an asked-for direction of a
 * job, a known status, terminated strings, counters in range. */
bool mx_side_ok(const struct mx_wire_side *s, const struct rp_pair_result *r, const struct mx_job *jobs,
		size_t n_jobs);

#endif
