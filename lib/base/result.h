/* result.h: the outcome of one measured pair, the unit every front end and report speaks.
 *
 * A pair is directed: src writes into dst. A failure is a result, not an error: status says which
 * phase failed and reason carries the underlying errno or completion status text.
 */
#ifndef RP_RESULT_H
#define RP_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"   /* RP_NAME_MAX */

enum rp_status {
	RP_ST_OK = 0,
	RP_ST_RESOLVE,          /* address or route resolution failed (no route / no GID / rdma_cm) */
	RP_ST_RTR,              /* modify QP to RTR refused */
	RP_ST_RTS,              /* modify QP to RTS refused */
	RP_ST_RETRY_EXCEEDED,   /* IBV_WC_RETRY_EXC_ERR */
	RP_ST_RNR_RETRY,        /* IBV_WC_RNR_RETRY_EXC_ERR */
	RP_ST_REMOTE_ACCESS,    /* IBV_WC_REM_ACCESS_ERR */
	RP_ST_LOCAL_PROT,       /* IBV_WC_LOC_PROT_ERR */
	RP_ST_REGISTRATION,     /* memory allocation or registration failed */
	RP_ST_PEER_LOST,        /* the side channel to the peer broke or the peer never answered */
	RP_ST_TIMEOUT,          /* a phase passed its deadline */
	RP_ST_DATA_MISMATCH,    /* the bytes that arrived are not the bytes sent */
	RP_ST_BELOW_THRESHOLD,  /* measured, verified, but slower than the verdict's threshold */
	RP_ST_SETUP,            /* any other local failure (device open, PD, CQ, QP creation) */
	/* Each completion status and each port event has a code of its own: a status names what happened. */
	RP_ST_REMOTE_INVALID,   /* IBV_WC_REM_INV_REQ_ERR: the target refused the request (length, opcode) */
	RP_ST_REMOTE_OP,        /* IBV_WC_REM_OP_ERR: the target could not complete the operation */
	RP_ST_REMOTE_ABORT,     /* IBV_WC_REM_ABORT_ERR */
	RP_ST_LOCAL_LENGTH,     /* IBV_WC_LOC_LEN_ERR */
	RP_ST_LOCAL_QP_OP,      /* IBV_WC_LOC_QP_OP_ERR */
	RP_ST_BAD_RESPONSE,     /* IBV_WC_BAD_RESP_ERR: an unexpected transport response */
	RP_ST_FLUSHED,          /* IBV_WC_WR_FLUSH_ERR: the QP had gone to error (a consequence: the first error says why) */
	RP_ST_COMPLETION_ERROR, /* any other completion error; the reason names ibv_wc_status_str() */
	RP_ST_PORT_DOWN,        /* the port left ACTIVE during the pair (async event or port query) */
	RP_ST_NO_PORT,          /* the endpoint has no usable port (no such adapter, nothing ACTIVE selected) */
	RP_ST_INTERRUPTED,      /* a signal stopped the run before this pair finished: it was not measured */
	RP_ST_LINK_ERRORS,      /* measured and verified, but the port counters say the link flapped or had
	                         * physical-layer errors above --max-errors during the pair (lib/health/counters.h) */
	/* A path MTU black hole: the pair failed with no write completed (timed_out or retry_exceeded),
	 * and of two probe writes made after it (lib/engine/engine.h, "MTU probe") the small one arrived and the
	 * one of the path's active MTU did not: a switch or link on the path runs a smaller MTU than the
	 * ports, and every packet larger than that vanishes. A status, not a warning: no data moves at the
	 * pair's size, so the pair fails; but the cause is the path, not an adapter, and the operator's
	 * action (fix the switch MTU) differs from a timed_out's (look at the adapters), so it must not be
	 * reported as timed_out. The reason keeps the original failure. */
	RP_ST_MTU_BLACKHOLE,
	/* The direction's endpoint (either end) was found dead by the reachability sweep
	 * (lib/matrix/mx_sweep.h, "dead endpoints"): its first probes failed with several peers that reach
	 * others, and probes at NCCL's ACK timeout with peers it had not tried failed too. The direction
	 * was not measured on its own (or only by that confirmation: the reason says which); never a
	 * pass, confirmed by the endpoint's confirmation, never retested. */
	RP_ST_ENDPOINT_DEAD,
	RP_ST_COUNT_
};

/* Stable codes for JSON/CSV ("ok", "retry_exceeded", ...) and back; -1 when unknown. */
const char *rp_status_code(enum rp_status st);
int rp_status_from_code(const char *code);

/* Which side of a pair saw something. */
enum rp_side { RP_SIDE_NONE = 0, RP_SIDE_SRC, RP_SIDE_DST };
/* "src", "dst", NULL for RP_SIDE_NONE (the reports' code for a side), "unknown" otherwise. */
const char *rp_side_code(enum rp_side s);

/* How a failed pair held up when it was measured again (--retest; lib/verdict/retest.h). */
enum rp_confirm {
	RP_CONFIRM_NONE = 0,      /* passed the first time, or not judged yet */
	RP_CONFIRM_FLAKY,         /* failed, then passed on a retest: a warning, never a drain */
	RP_CONFIRM_CONFIRMED,     /* failed every attempt (or --retest 0 said one sample decides) */
	RP_CONFIRM_UNCONFIRMED,   /* failed once and could not be measured again (interrupted, a rank gone):
	                           * reported, never drained */
	/* Failed once and was not measured again itself: one of its endpoints failed with many peers, a
	 * sample of those pairs was measured again and every one failed again (lib/matrix/mx_retest.h,
	 * "Sampled retest"). The endpoint's failure held up, so this one counts as confirmed. */
	RP_CONFIRM_BY_ENDPOINT,
	RP_CONFIRM_COUNT_
};
/* "", "flaky", "confirmed", "unconfirmed", "confirmed_by_endpoint". */
const char *rp_confirm_code(enum rp_confirm c);
/* Whether a failure held up: confirmed on its own retests or by its endpoint's sample. */
static inline bool rp_confirm_held(enum rp_confirm c)
{
	return c == RP_CONFIRM_CONFIRMED || c == RP_CONFIRM_BY_ENDPOINT;
}

/* Warnings on a pair that do not fail it by themselves; bit (1u << w) in rp_pair_result.warnings. */
enum rp_pair_warning {
	RP_WARN_FLAKY = 0,          /* "flaky": failed once, passed on a retest */
	RP_WARN_INTERVAL_DROP,      /* "interval_drop": the slowest interval collapsed against the average */
	RP_WARN_NOMINAL_RATE,       /* "nominal_link_rate": a soft device (rxe, siw); only absolute thresholds apply */
	RP_WARN_LOSSY,              /* "lossy": transport retransmissions above the --max-errors rate per GB */
	RP_WARN_MTU_MISMATCH,       /* "mtu_mismatch": the two ends run at different active MTUs */
	RP_WARN_CONCURRENT_DROP,    /* "concurrent_drop": slower with the node's other pairs busy (lib/engine/engine_concurrent.h) */
	RP_WARN_COUNT_
};
const char *rp_pair_warning_code(enum rp_pair_warning w);

struct rp_endpoint {
	char node[RP_NAME_MAX];       /* host name or --node */
	char device[RP_NAME_MAX];
	int port;
	int gid_index;                /* -1 for InfiniBand (LID routed) */
	int mtu;                      /* active MTU in bytes, 0 unknown */
	double link_gbps;             /* the port's rate, for the verdict */
	char mem[16];                 /* "host", "cuda:0" */
	char mem_reg[16];             /* how the buffer was registered: "host", "dmabuf", "peermem" */
	bool soft;                    /* a software device (rxe, siw): link_gbps is nominal, not a capacity */
};

/* One side's port counters around the pair, compact and bounded (lib/health/counters.h computes them; the
 * engine fills them, each side for its own port; the target's travel in the RESULT message). Fixed-
 * width fields: it goes on the wire as is and is validated there (lib/engine/engine_wire.c). */
#define RP_PAIR_CTR_MAX 8           /* moved counters kept per side: the judged classes first */
#define RP_PAIR_CTR_NAME 48         /* as RP_CTR_NAME_MAX, qualified names ("hw_counters/x") cut */
struct rp_pair_ctr {
	char name[RP_PAIR_CTR_NAME];
	uint32_t cls;                 /* enum rp_ctr_class */
	uint32_t at_least;            /* 1: saturated or reset, delta is a lower bound */
	uint64_t delta;
};
struct rp_pair_ctr_side {
	uint32_t measured;            /* 1: both snapshots were taken and compared */
	uint32_t verdict;             /* enum rp_ctr_verdict: ok, lossy, fail */
	uint32_t cls;                 /* the class that decided (enum rp_ctr_class) */
	uint32_t unattributable;      /* another process may have used the port: retransmissions not judged */
	uint32_t n_moved;             /* counters that moved in all (n of them are kept below) */
	uint32_t n_unknown;           /* counters that could not be compared (missing, unreadable, saturated) */
	uint32_t n;
	uint32_t brief;                /* 1: rank 0 kept the judgement and n_moved, not the list (lib/matrix/mx_results.h) */
	struct rp_pair_ctr c[RP_PAIR_CTR_MAX];
	char reason[192];             /* the judgement's reason, "" when ok */
};

struct rp_latency {
	bool measured;
	double min_us, median_us, p99_us, max_us;
	uint64_t samples;
};

/* One measurement of a pair: every attempt is kept (the pair's own fields are the last one's). */
#define RP_MAX_ATTEMPTS 4
struct rp_attempt {
	enum rp_status status;
	enum rp_side side;            /* which side saw the status */
	char reason[128];
	double gbps, gbps_min;
	int qp_timeout;               /* the ACK timeout exponent the attempt ran with */
	double elapsed_s;
};

/* --bidir: the reverse direction of a pair, dst writing into src, measured at the same time as the
 * forward one (src into dst) over its own QPs, with its own verification. The pair's own fields are
 * the forward direction's; this is the reverse's outcome and measurement (its endpoints are the
 * pair's, swapped; its port counters are the pair's own: both directions cross the same two ports at
 * once, so only the forward one snapshots them, over both directions' traffic).
 * Folding: the pair's status is its verdict, so when the forward direction is ok and the reverse
 * failed, status/reason/cause_side become the reverse's (the reason starts "reverse direction") and
 * folded is set; rp_pair_reverse_unfold() restores the forward's own (ok) before it is judged again.
 * JSON: "bidir": true, "gbps_sum", and "reverse": {status, reason, cause_side, gbps, gbps_min,
 * gbps_min_at_s, bytes, iters, verified, bad_offset, warnings}; CSV: the columns rev_*; HTML and
 * JUnit: the reverse's rate and status beside the forward's. */
struct rp_pair_reverse {
	bool measured;                /* a --bidir pair: the reverse ran (whatever its outcome) */
	bool folded;                  /* the pair's status/reason are the reverse's (the forward was ok) */
	enum rp_status status;
	enum rp_side cause_side;      /* in the pair's terms: SRC is the pair's src (the reverse's target) */
	char reason[256];
	double gbps, gbps_min, gbps_min_at_s;
	uint64_t bytes, iters;
	bool verified;
	int64_t bad_offset;
	uint32_t warnings;            /* the reverse's own (1u << enum rp_pair_warning) */
};

struct rp_pair_result {
	struct rp_endpoint src, dst;
	enum rp_status status;
	char reason[256];             /* "" when ok */
	double gbps;                  /* average, first post to last completion, 10^9 bit/s */
	double gbps_min;              /* the slowest interval */
	uint64_t bytes;               /* payload moved in the measured part (warm-up excluded) */
	uint64_t iters;
	size_t msg_size;
	bool verified;                /* every byte checked at the target and equal */
	int64_t bad_offset;           /* first bad byte when status is DATA_MISMATCH, else -1 */
	struct rp_latency lat;
	double elapsed_s;             /* wall time of the whole pair, set-up to teardown (on a connection held
	                               * from the sweep's probe, lib/matrix/mx_hold.h: without the set-up) */
	double gbps_min_at_s;         /* where the slowest interval starts, seconds into the measured run */
	/* The first cause wins: status/reason are what failed first, whichever side saw it (cause_side);
	 * the other side's view, when it failed too (flush errors, a torn-down QP), is the secondary. */
	enum rp_side cause_side;
	struct {
		enum rp_status status;    /* RP_ST_OK when the other side saw nothing wrong */
		char reason[128];
	} secondary;
	uint32_t warnings;            /* 1u << enum rp_pair_warning */
	struct {
		struct rp_pair_ctr_side src, dst;
	} counters;                   /* each endpoint's port counters around the measured run */
	enum rp_confirm confirm;
	unsigned n_attempts;
	struct rp_attempt attempts[RP_MAX_ATTEMPTS];
	struct rp_pair_reverse reverse;   /* --bidir only (reverse.measured) */
};

/* Set *r to an empty result between src and dst: status SETUP, reason "", bad_offset -1. */
void rp_pair_result_init(struct rp_pair_result *r, const struct rp_endpoint *src, const struct rp_endpoint *dst);
/* Set status and a printf-style reason. */
void rp_pair_result_fail(struct rp_pair_result *r, enum rp_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Append the pair's current measurement (status, side, reason, rates, elapsed) as an attempt that ran
 * with qp_timeout; when the history is full the last slot is overwritten. */
void rp_pair_result_record_attempt(struct rp_pair_result *r, int qp_timeout);

/* --bidir (see struct rp_pair_reverse). The reverse direction as a result of its own: src and dst
 * swapped, the reverse's outcome and measurement, no counters, no attempts (out). */
void rp_pair_reverse_view(const struct rp_pair_result *r, struct rp_pair_result *out);
/* Keep view's outcome and measurement (status, reason, rates, verification, warnings) as r's reverse. */
void rp_pair_reverse_store(struct rp_pair_result *r, const struct rp_pair_result *view);
/* The pair's verdict from both directions: when the forward is ok and the reverse failed, the pair
 * takes the reverse's status ("reverse direction DST -> SRC: reason") and folded is set. Idempotent. */
void rp_pair_reverse_fold(struct rp_pair_result *r);
/* Undo a fold: the forward direction's own outcome (ok) back in status/reason/cause_side. */
void rp_pair_reverse_unfold(struct rp_pair_result *r);
/* A reverse that came from another process (the matrix gathers results over MPI) is sound before it
 * is used: measured 0/1, folded only when measured, status and side in range, reason terminated,
 * rates finite and non-negative, bad_offset >= -1, warnings known. */
bool rp_pair_reverse_valid(const struct rp_pair_reverse *v);
/* The sum of both directions' rates for a bidir pair; the pair's rate otherwise. */
double rp_pair_gbps_sum(const struct rp_pair_result *r);

#endif
