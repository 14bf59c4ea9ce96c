/* result.h: the outcome of one measured pair, the unit every front end and report speaks.
 *
 * A pair is directed: src writes into dst. A failure is a result, not an error: status says which
 * phase failed and reason carries the underlying errno or completion status text.
 */
#ifndef RP_RESULT_H
#define RP_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "node.h"

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
	RP_ST_COUNT_
};

/* Stable codes for JSON/CSV ("ok", "retry_exceeded", ...) and back; -1 when unknown. */
const char *rp_status_code(enum rp_status st);
int rp_status_from_code(const char *code);

struct rp_endpoint {
	char node[RP_NAME_MAX];       /* host name or --node */
	char device[RP_NAME_MAX];
	int port;
	int gid_index;                /* -1 for InfiniBand (LID routed) */
	int mtu;                      /* active MTU in bytes, 0 unknown */
	double link_gbps;             /* the port's rate, for the verdict */
	char mem[16];                 /* "host", "cuda:0" */
	char mem_reg[16];             /* how the buffer was registered: "host", "dmabuf", "peermem" */
};

struct rp_latency {
	bool measured;
	double min_us, median_us, p99_us, max_us;
	uint64_t samples;
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
	double elapsed_s;             /* wall time of the whole pair, set-up to teardown */
};

/* Set *r to an empty result between src and dst: status SETUP, reason "", bad_offset -1. */
void rp_pair_result_init(struct rp_pair_result *r, const struct rp_endpoint *src, const struct rp_endpoint *dst);
/* Set status and a printf-style reason. */
void rp_pair_result_fail(struct rp_pair_result *r, enum rp_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
