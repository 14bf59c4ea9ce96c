/* engine.h: the RC queue-pair engine: proves that one adapter port can RDMA WRITE into another,
 * measures how fast, verifies every byte, and when it cannot, says why within a deadline.
 *
 * A pair is directed: the writer (src) writes into the target (dst). Each side is an endpoint
 * (device, PD, CQs, QPs, one buffer registered through lib/mem.h) owned by one process. The two
 * endpoints talk over a side channel (lib/oob.h): TCP in pair mode, MPI in matrix mode, a socketpair
 * and two threads in loopback mode. The whole per-side sequence is rp_engine_pair_run():
 *
 *   create endpoint -> exchange rp_conn_info -> connect (INIT, RTR, RTS) -> exchange "ready"
 *   -> run (writer writes, target waits for the final WRITE WITH IMM and checks every byte)
 *   -> exchange results -> destroy
 *
 * Every exchange carries the sender's phase status, so when one side fails the other learns why at
 * once instead of waiting for its deadline; both sides end with the same rp_pair_result status.
 * Every wait has a deadline (cfg->timeout_s per phase); nothing blocks forever.
 *
 * Failures are results: functions that take a struct rp_pair_result fill status and reason
 * (errno text or ibv_wc_status_str) and return a negative errno; the result is what to report.
 * The lower-level calls (_create, _connect, _run_*) are public for drivers that need another order.
 */
#ifndef RP_ENGINE_H
#define RP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem.h"
#include "oob.h"
#include "result.h"

#define RP_ENGINE_MAX_QPS 64

enum rp_engine_mode {
	RP_MODE_BW = 0,          /* streaming RDMA WRITE, like ib_write_bw */
	RP_MODE_LAT,             /* RDMA WRITE ping-pong, like ib_write_lat */
};

enum rp_engine_role { RP_ROLE_WRITER = 0, RP_ROLE_TARGET = 1 };

/* What to measure and how the QPs are set. Passed as const; front ends fill it from their options
 * (rp_engine_cfg_default() gives the defaults documented in --help). Both sides of a pair must use
 * the same measure part: the writer's travels in rp_conn_info and the target checks it. */
struct rp_engine_cfg {
	struct {
		enum rp_engine_mode mode;
		size_t msg_size;         /* bytes per write (the buffer is this long) */
		uint64_t iters;          /* measured writes (BW) or round trips (LAT); 0 when duration_s */
		double duration_s;       /* measure for this long instead of iters (0 = use iters) */
		uint64_t warmup_iters;   /* writes before the clock starts; not counted */
		unsigned tx_depth;       /* outstanding writes per QP */
		unsigned n_qps;          /* QPs the writes are spread over, round robin */
		unsigned cq_mod;         /* signal one write in cq_mod (moderation); 1 = every write */
		double interval_s;       /* interval for gbps_min */
		uint64_t seed;           /* base of the pattern seed; rp_engine_seed() mixes in the pair and pass */
		bool verify;             /* fill, final WRITE WITH IMM, check every byte (default true) */
	} meas;
	struct {
		int qp_timeout;          /* IBV ACK timeout exponent (4.096 us * 2^t); probe default 14 */
		int retry_cnt;           /* 0..7; default 7 */
		int rnr_retry;           /* 0..7; 7 as NCCL */
		int traffic_class;       /* NCCL_IB_TC, default 0 */
		int sl;                  /* NCCL_IB_SL, default 0 */
	} qp;
	bool cm;                     /* connect with librdmacm (like perftest -R) instead of by hand */
	double timeout_s;            /* deadline of each phase (set-up, connect, each wait for progress) */
	double run_limit_s;          /* hard cap on the run phase as the target sees it (0 = derived) */
	struct rp_mem_spec src_mem;  /* buffer of the writer */
	struct rp_mem_spec dst_mem;  /* buffer of the target */
};

void rp_engine_cfg_default(struct rp_engine_cfg *cfg);
/* Reject inconsistent values with a logged message naming the field: 0 or -EINVAL. */
int rp_engine_cfg_validate(const struct rp_engine_cfg *cfg);

/* The local port an endpoint uses. gid_index comes from rp_nccl_gid_index() (or --gid-index);
 * it is ignored on InfiniBand (LID routed). */
struct rp_engine_port {
	const char *node;            /* host name for the result; NULL = gethostname() */
	const char *device;          /* verbs device name: "mlx5_0", "rxe1" */
	int port;                    /* 1-based */
	int gid_index;               /* -1: none usable (fails RESOLVE on RoCE) */
};

/* --- wire: what the side channel carries ---------------------------------------------------------
 * One fixed-size message type for every exchange. Host byte order; a peer with the other byte order
 * is recognised by the swapped magic and rejected. rp_engine_msg_validate() checks everything a peer
 * could get wrong before any field is used. */
#define RP_MSG_MAGIC 0x5250454eu  /* "RPEN" */
#define RP_MSG_VERSION 1

enum rp_msg_type { RP_MSG_CONN = 1, RP_MSG_READY, RP_MSG_RESULT, RP_MSG_TYPE_MAX_ };

struct rp_conn_info {
	uint32_t n_qps;
	uint32_t qpn[RP_ENGINE_MAX_QPS];
	uint32_t psn[RP_ENGINE_MAX_QPS];
	uint8_t gid[16];
	uint32_t lid;
	uint32_t mtu;                /* active MTU in bytes */
	uint32_t link_layer;         /* IBV_LINK_LAYER_* */
	uint32_t link_mbps;          /* the port's rate in Mb/s, 0 unknown */
	int32_t gid_index;
	int32_t port;
	uint32_t rkey;
	uint64_t addr;
	uint64_t buf_len;
	/* the writer's measure part: the target adopts it (size, mode, QPs, iterations, seed, pass) */
	uint32_t mode;
	uint32_t verify;
	uint32_t cm;                 /* the writer connects with librdmacm ... */
	uint32_t cm_port;            /* ... to the target's rdma_cm port */
	uint32_t tx_depth;
	uint32_t pass;
	uint64_t msg_size;
	uint64_t iters;
	uint64_t warmup_iters;
	uint64_t seed;
	char node[RP_NAME_MAX];
	char device[RP_NAME_MAX];
	char mem[16];
	char mem_reg[16];
};

struct rp_wire_result {
	uint32_t verified;
	uint32_t lat_measured;
	int64_t bad_offset;
	uint64_t bytes;
	uint64_t iters;
	uint64_t lat_samples;
	double gbps, gbps_min;
	double lat_min_us, lat_median_us, lat_p99_us, lat_max_us;
};

struct rp_engine_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;               /* enum rp_msg_type */
	uint32_t length;             /* sizeof(struct rp_engine_msg) */
	uint32_t status;             /* the sender's enum rp_status so far */
	char reason[256];            /* NUL-terminated; "" when ok */
	union {
		struct rp_conn_info conn;
		struct rp_wire_result result;
	} u;
};

/* 0, or -EBADMSG (magic, length, type, NUL-termination, ranges), -EPROTO (version, byte order),
 * with a reason written to why (may be NULL). Does not log. */
int rp_engine_msg_validate(const struct rp_engine_msg *msg, size_t len, enum rp_msg_type want,
			   char *why, size_t why_len);

/* --- one pair, one side ------------------------------------------------------------------------- */

/* Run this side of a pair over oob. local is this side's port; res is filled completely (endpoints,
 * status, reason, measurement); pass is the sweep index (mixed into the seed). The writer sends its
 * connection info first; the target waits for it, adopts the writer's measure part (so a pair
 * listener needs no size options) and answers with its own. cfg->src_mem is used by the writer,
 * cfg->dst_mem by the target. Returns 0 when the pair passed, 1 when it failed at any step (res
 * says which and why; a failure is a result, not an error). Never blocks past the deadlines in cfg. */
int rp_engine_pair_run(const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		       const struct rp_engine_port *local, struct rp_oob *oob, unsigned pass,
		       struct rp_pair_result *res);

/* Both sides of a pair in this process (loopback): two threads over rp_oob_local_pair().
 * res is the writer's view (src = writer port). Returns 0 or 1 as rp_engine_pair_run, or a negative
 * errno when the side channel or the thread could not be set up (res says so too). */
int rp_engine_loopback_run(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			   const struct rp_engine_port *dst, unsigned pass, struct rp_pair_result *res);

/* The pattern seed for one pair and pass: depends on cfg->meas.seed, both endpoints (node, device,
 * port) and pass. */
uint64_t rp_engine_seed(uint64_t base, const struct rp_endpoint *src, const struct rp_endpoint *dst,
			unsigned pass);

/* --- lower level: an endpoint ------------------------------------------------------------------- */

struct rp_engine_ep;

/* Open local->device, PD, CQs, cfg->meas.n_qps RC QPs, and the role's buffer. On failure res says
 * which step (SETUP or REGISTRATION) and everything built so far is released; *ep_p stays NULL. */
int rp_engine_ep_create(const struct rp_engine_cfg *cfg, enum rp_engine_role role,
			const struct rp_engine_port *local, struct rp_pair_result *res,
			struct rp_engine_ep **ep_p);
/* Release everything; accepts a half-built ep and NULL. Never stops at a failed destroy. */
void rp_engine_ep_destroy(struct rp_engine_ep *ep);
/* This endpoint's connection info, for the peer. */
void rp_engine_ep_info(const struct rp_engine_ep *ep, uint64_t seed, struct rp_conn_info *info);
/* The endpoint description for a result (node, device, port, GID index, MTU, rate, memory). */
void rp_engine_ep_endpoint(const struct rp_engine_ep *ep, struct rp_endpoint *out);
/* INIT -> RTR -> RTS against the peer's info. res: RESOLVE / RTR / RTS with the errno text. */
int rp_engine_ep_connect(struct rp_engine_ep *ep, const struct rp_conn_info *peer, struct rp_pair_result *res);
/* Writer: warm-up, measured writes (or ping-pong), final WRITE WITH IMM. Fills gbps, gbps_min,
 * bytes, iters, lat; failures as RETRY_EXCEEDED, TIMEOUT, ... */
int rp_engine_run_writer(struct rp_engine_ep *ep, uint64_t seed, struct rp_pair_result *res);
/* Target: before the run (after connect): clear the buffer and pre-post the receive. */
int rp_engine_target_prepare(struct rp_engine_ep *ep, struct rp_pair_result *res);
/* Target: serve the ping-pong in LAT mode, then wait for the final WRITE WITH IMM until deadline
 * (polling oob for a failure message from the writer, when oob is not NULL) and check every byte.
 * Fills verified / bad_offset; DATA_MISMATCH, TIMEOUT, PEER_LOST. */
int rp_engine_run_target(struct rp_engine_ep *ep, uint64_t seed, struct rp_oob *oob, double deadline,
			 struct rp_pair_result *res);

/* --- arithmetic, exposed for tests --------------------------------------------------------------- */

/* Gb/s (10^9 bit/s) for bytes moved in seconds; 0 when seconds <= 0. */
double rp_engine_gbps(uint64_t bytes, double seconds);
/* Sort samples (microseconds) in place and fill min, median, p99, max and samples. */
void rp_engine_lat_stats(double *samples, size_t n, struct rp_latency *lat);

/* The result status a completion error maps to (IBV_WC_RETRY_EXC_ERR -> RP_ST_RETRY_EXCEEDED...). */
enum rp_status rp_engine_wc_status(int ibv_wc_status);

#endif
