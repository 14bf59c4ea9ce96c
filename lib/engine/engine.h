/* engine.h: the RC queue-pair engine: proves that one adapter port can RDMA WRITE into another,
 * measures how fast, verifies every byte, and when it cannot, says why within a deadline.
 *
 * A pair is directed: the writer (src) writes into the target (dst). Each side is an endpoint
 * (device, PD, CQs, QPs, one buffer registered through lib/mem/mem.h) owned by one process. The two
 * endpoints talk over a side channel (lib/oob/oob.h): TCP in pair mode, MPI in matrix mode, a socketpair
 * and two threads in loopback mode. The whole per-side sequence is rp_engine_pair_run():
 *
 *   create endpoint -> exchange rp_conn_info -> connect (INIT, RTR, RTS) -> exchange "ready"
 *   -> run (writer writes and reports PROGRESS; target waits for the final WRITE WITH IMM and checks
 *      every byte) -> exchange results -> destroy
 *
 * Every exchange carries the sender's own status, so when one side fails the other learns why at
 * once instead of waiting for its deadline. Both sides end with the same status: the first cause,
 * whichever side saw it (rp_pair_result.cause_side), the other side's view as the secondary.
 * Every wait has a deadline: cfg->timeout_s per set-up phase, and in the run a "no progress" window
 * of cfg->timeout_s that slides with every completion (writer) or PROGRESS report (target), so a
 * slow but healthy pair is never timed out. Every wait also ends on a stop request (lib/base/stop.h,
 * INTERRUPTED) and looks at the port when it stalls (PORT_DOWN).
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

#include "health/counters.h"
#include "mem/mem.h"
#include "oob/oob.h"
#include "base/result.h"

#define RP_ENGINE_MAX_QPS 64

enum rp_engine_mode {
	RP_MODE_BW = 0,          /* streaming RDMA WRITE, like ib_write_bw */
	RP_MODE_LAT,             /* RDMA WRITE ping-pong, like ib_write_lat */
};

enum rp_engine_role { RP_ROLE_WRITER = 0, RP_ROLE_TARGET = 1 };

/* Limits of the measurement settings, the same for local options and for what a peer sends (a peer
 * must not make this process allocate or pin more than RP_ENGINE_MAX_MSG_SIZE bytes of buffer, nor
 * create more than RP_ENGINE_MAX_QPS x RP_ENGINE_MAX_DEPTH work requests). A work request's length is
 * 32 bits, so no size reaches 4 GiB; the port's max_msg_sz is checked as well when the endpoint opens. */
#define RP_ENGINE_MAX_MSG_SIZE (1ULL << 30)      /* 1 GiB: the largest buffer a pair allocates */
#define RP_ENGINE_MAX_DEPTH 8192
#define RP_ENGINE_MAX_ITERS 1000000000000ULL     /* 10^12, as --iters */
#define RP_ENGINE_MAX_DURATION_S 1e6
#define RP_ENGINE_MAX_TIMEOUT_S 86400.0

/* What to measure: ONE definition, used by the configuration (rp_engine_cfg.meas) and carried as is
 * in the connection message (rp_conn_info.meas), so the target adopts every field (-D included) with
 * one copy (rp_engine_meas_adopt) and checks it with the same rule (rp_engine_meas_validate). Both
 * sides of a pair use the writer's. Fixed-size fields: it travels on the wire. */
struct rp_engine_meas {
	uint32_t mode;               /* enum rp_engine_mode */
	uint32_t tx_depth;           /* outstanding writes per QP */
	uint32_t n_qps;              /* QPs the writes are spread over, round robin */
	uint32_t cq_mod;             /* signal one write in cq_mod (moderation); 1 = every write */
	uint64_t msg_size;           /* bytes per write (the buffer is this long) */
	uint64_t iters;              /* measured writes (BW) or round trips (LAT); 0 when duration_s */
	uint64_t warmup_iters;       /* writes before the clock starts; not counted */
	uint64_t seed;               /* base of the pattern seed; rp_engine_seed() mixes in the pair and pass */
	double duration_s;           /* measure for this long instead of iters (0 = use iters) */
	double interval_s;           /* interval for gbps_min */
	uint32_t verify;             /* fill, final WRITE WITH IMM, check every byte (default 1) */
	uint32_t bidir;              /* --bidir: both directions at once (bandwidth mode only); the target
	                              * learns from it that it is a writer too (see "both directions") */
};

/* What to measure and how the QPs are set. Passed as const; front ends fill it from their options
 * (rp_engine_cfg_default() gives the defaults documented in --help). */
struct rp_engine_cfg {
	struct rp_engine_meas meas;
	struct {
		int qp_timeout;          /* IBV ACK timeout exponent (4.096 us * 2^t); probe default 14 */
		int retry_cnt;           /* 0..7; default 7 */
		int rnr_retry;           /* 0..7; 7 as NCCL */
		int traffic_class;       /* NCCL_IB_TC, default 0 */
		int sl;                  /* NCCL_IB_SL, default 0 */
	} qp;
	bool cm;                     /* connect with librdmacm (like perftest -R) instead of by hand */
	double timeout_s;            /* deadline of each phase (set-up, connect) and the "no progress"
	                              * window of every wait in the run: a run that makes progress never
	                              * times out, however long it takes */
	double run_limit_s;          /* not used by the engine (deadlines follow progress); front ends may
	                              * use it to size their own budgets */
	bool no_mtucheck;           /* never run the MTU probe below (both sides of a pair must agree: set
	                              * from the same options on every rank; a screening probe whose
	                              * failure is confirmed later, lib/matrix/mx_sweep.h) */
	bool mtucheck_beside;        /* loopback only (rp_engine_loopback_run, both sides in this process):
	                              * the MTU probe's sequences run beside the pair, from its start,
	                              * instead of after it (below) */
	struct rp_mem_spec src_mem;  /* buffer of the writer */
	struct rp_mem_spec dst_mem;  /* buffer of the target */
	/* Port counters around the measured run (lib/health/counters.h): each side snapshots its own port under
	 * sysfs_root ("/sys" when NULL; "" = none, nothing is read) before and after the run and judges
	 * the delta with its own ctr_limits (--max-errors); the target's travels back in RESULT. The
	 * same root tells a soft device (a class/infiniband entry without a "device" link). */
	const char *sysfs_root;
	struct rp_ctr_limits ctr_limits;
};

void rp_engine_cfg_default(struct rp_engine_cfg *cfg);
/* Reject inconsistent values with a logged message naming the field: 0 or -EINVAL. */
int rp_engine_cfg_validate(const struct rp_engine_cfg *cfg);
/* The measure part's rule alone (limits above, finite numbers, iters x size without overflow), with
 * the reason in why (not logged): 0 or -EINVAL. rp_engine_cfg_validate() and the wire use it. */
int rp_engine_meas_validate(const struct rp_engine_meas *m, char *why, size_t why_len);
/* The target's configuration from the writer's measure part: the one copy of the settings. */
void rp_engine_meas_adopt(struct rp_engine_cfg *cfg, const struct rp_engine_meas *writer);

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
#define RP_MSG_VERSION 5        /* 2: measure part whole in CONN (duration, interval, cq_mod...), PROGRESS,
                                 * first-hand flag, soft devices; 3: port counters in RESULT;
                                 * 4: meas.bidir and the reverse direction's messages (RP_MSGF_REVERSE),
                                 * the writer's completed count in RESULT (MTU probe);
                                 * 5: held_qpn/held_psn in CONN (a connection kept: rp_engine_hold) */

enum rp_msg_type { RP_MSG_CONN = 1, RP_MSG_READY, RP_MSG_RESULT, RP_MSG_PROGRESS, RP_MSG_TYPE_MAX_ };

/* msg.flags */
#define RP_MSGF_OWN 1u           /* status is the sender's own observation (not a consequence of ours) */
#define RP_MSGF_REVERSE 2u       /* --bidir: a message of the reverse direction (dst writes into src). Set
                                  * and cleared by the engine's multiplexer only: rp_engine_msg_validate()
                                  * rejects it, so it never reaches a sequence that is not bidir */

struct rp_conn_info {
	uint32_t n_qps;
	uint32_t qpn[RP_ENGINE_MAX_QPS];
	uint32_t psn[RP_ENGINE_MAX_QPS];
	uint8_t gid[16];
	uint32_t lid;
	uint32_t mtu;                /* active MTU in bytes */
	uint32_t link_layer;         /* IBV_LINK_LAYER_* */
	uint32_t link_mbps;          /* the port's data rate in Mb/s, 0 unknown */
	uint32_t soft;               /* a software device (rxe, siw): link_mbps is nominal */
	int32_t gid_index;
	int32_t port;
	uint32_t rkey;               /* the target's; always 0 from the writer (its buffer is not remote) */
	uint64_t addr;
	uint64_t buf_len;
	uint32_t cm;                 /* the writer connects with librdmacm ... */
	uint32_t cm_port;            /* ... to the target's rdma_cm port */
	uint32_t pass;
	/* A held connection (rp_engine_hold): non-zero, the sender offers (writer) or accepts (target) to
	 * run this sequence on its kept endpoint, whose QPs (qpn, psn above) are connected to the peer's
	 * QP 0 numbered held_qpn with initial PSN held_psn. 0: a fresh endpoint (a target's answer to an
	 * offer it declines). */
	uint32_t held_qpn;
	uint32_t held_psn;
	uint32_t pad_;
	double progress_s;           /* a quarter of the sender's --timeout: the writer reports PROGRESS at least
	                              * this often, the shorter of its own and the target's */
	struct rp_engine_meas meas;  /* the writer's: the target adopts it whole */
	char node[RP_NAME_MAX];
	char device[RP_NAME_MAX];
	char mem[16];
	char mem_reg[16];
};

/* The measurement (from the writer) and the verification (from the target), field for field of the
 * same type as in rp_pair_result: one table in engine_pair.c copies them both ways. */
struct rp_wire_result {
	int64_t bad_offset;
	uint64_t bytes;
	uint64_t iters;
	uint64_t lat_samples;
	double gbps, gbps_min, gbps_min_at_s;
	double lat_min_us, lat_median_us, lat_p99_us, lat_max_us;
	bool verified;
	bool lat_measured;
	uint64_t completed;          /* the writer's writes completed, warm-up included (MTU probe) */
	struct rp_pair_ctr_side ctr_src;   /* the writer's port counters (FROM_WRITER) */
	struct rp_pair_ctr_side ctr_dst;   /* the target's (FROM_TARGET) */
};

/* The writer's progress during the run: what has completed so far. Each one slides the target's
 * deadline; the target times out only after --timeout without one. */
struct rp_wire_progress {
	uint64_t completed;          /* writes (or round trips) completed */
	uint64_t bytes;
	double elapsed_s;            /* since the run started */
};

struct rp_engine_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;               /* enum rp_msg_type */
	uint32_t length;             /* sizeof(struct rp_engine_msg) */
	uint32_t status;             /* the sender's own enum rp_status so far (what it saw itself) */
	uint32_t flags;              /* RP_MSGF_* */
	char reason[256];            /* NUL-terminated; "" when ok */
	union {
		struct rp_conn_info conn;
		struct rp_wire_result result;
		struct rp_wire_progress progress;
	} u;
};

/* The trust boundary: every field of a message a peer sent is checked here before any is used.
 * 0, or -EBADMSG (magic, length, type, NUL-termination, ranges, non-finite numbers, a measure part
 * rp_engine_meas_validate() rejects, a buffer over RP_ENGINE_MAX_MSG_SIZE), -EPROTO (version, byte
 * order), with a reason written to why (may be NULL). want is the type expected; RP_MSG_PROGRESS
 * is accepted too when want is RP_MSG_RESULT (the writer reports progress until its result).
 * On success the peer's strings (reason, node, device, mem names) are sanitised in place
 * (rp_str_sanitize: valid UTF-8, no control characters), hence msg is not const. Does not log. */
int rp_engine_msg_validate(struct rp_engine_msg *msg, size_t len, enum rp_msg_type want,
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

/* Both directions (cfg->meas.bidir, like ib_write_bw -b). The writer's rp_engine_pair_run() runs the
 * forward direction and, in a second thread, the target of the reverse one; the target learns from
 * the writer's CONN (meas.bidir) that it writes too and starts the reverse writer. Both directions
 * share the side channel through a multiplexer (messages of the reverse carry RP_MSGF_REVERSE) and
 * start their measured runs together (each waits, at most --timeout, until the other is connected).
 * Each direction is a whole pair sequence of its own (QPs, buffers, verification, first cause); the
 * result's reverse field holds the reverse (result.h), folded into the pair's status. The port
 * counters are snapshotted by the forward direction only, expecting both directions' bytes.
 *
 * MTU probe. When a bandwidth pair (not bidir) fails as timed_out or retry_exceeded and the writer
 * completed no write at all (its count travels in RESULT, so both sides decide alike), both sides
 * run two more short pair sequences: one write of RP_ENGINE_MTUCHECK_SMALL bytes, then (when that
 * arrived) one of the path's active MTU (the smaller of the two ends'; 4096 when unknown), each
 * verified, with a deadline of at most RP_ENGINE_MTUCHECK_TIMEOUT_S. Only the small one arriving is
 * RP_ST_MTU_BLACKHOLE, the original reason kept; otherwise the original status stays (with what the
 * probe saw in the reason). The probe's time counts in the pair's elapsed_s (at most about 2 x
 * (RP_ENGINE_MTUCHECK_TIMEOUT_S + set-up) more). A pair that moved anything is never probed. Retry exceeded is included:
 * on a real black hole the transport gives up (retry_cnt x the ACK timeout) before --timeout.
 * cfg.no_mtucheck turns it off.
 * Beside the pair (cfg.mtucheck_beside, loopback only): the same two sequences run from the pair's
 * start, over a side channel and QPs of their own, and their outcome is applied exactly when it would
 * have been after (the pair failed as above with no write completed); otherwise it is dropped. A pair
 * that fails then costs its own deadline, not that plus the probe's; every pair so run makes one or
 * two small writes more, beside its own (the reachability sweep's second pass, whose pairs all failed
 * once already: lib/matrix/pairset_sweep.h). */
#define RP_ENGINE_MTUCHECK_SMALL 64
#define RP_ENGINE_MTUCHECK_TIMEOUT_S 2.0   /* a healthy path moves one small write in milliseconds */

/* --- a connection held for a later sequence ------------------------------------------------------
 * A sequence may leave its connected endpoint (QPs, CQs, buffer) to a later one between the same two
 * ports in the same roles, which then skips creating and connecting (the reachability sweep's probe
 * of a direction and that direction's bandwidth measurement, lib/matrix/mx_sweep.h). Both sides must agree,
 * and a peer must never be made to write into a QP that is connected elsewhere: the writer OFFERS its
 * held endpoint in its CONN (held_qpn/held_psn: the target QP it is connected to), the target ACCEPTS
 * only when its own held endpoint is exactly that QP and is connected to the offering one (QP numbers
 * and the random initial PSNs of both, which a QP created since cannot repeat by chance), and both
 * can run the sequence's settings on it (same ports and roles, QP count, QP attributes, memory kind,
 * no CM, no --bidir; the buffer and depth at least the sequence's). Anything else is a DECLINE: the
 * target answers with a fresh endpoint's info, the writer drops its held one and sends a fresh CONN,
 * and the sequence goes on as if nothing was held. A held connection is never a reason to fail. The
 * QPs keep their state: the next sequence's PSNs follow on, the target clears its whole buffer and
 * posts its receive again, and the port counters, the deadlines and the verification are the
 * sequence's own as always. */
struct rp_engine_hold {
	struct rp_engine_ep *ep;      /* the held endpoint (owned: rp_engine_hold_release), NULL none */
	/* Create a new endpoint able to run this measure part later too (its buffer is the larger of
	 * the two messages, its QPs and CQs the deeper; the QP count must be the sequence's, or room is
	 * not used). NULL: the sequence's own. */
	const struct rp_engine_meas *room;
	bool keep;                    /* when the sequence passes, hold its endpoint in ep */
	bool reused;                  /* out: the sequence ran on the endpoint held before */
};

/* rp_engine_pair_run with a hold (may be NULL: the same as rp_engine_pair_run). A held endpoint not
 * used by this sequence is released; one the sequence kept is in hold->ep. */
int rp_engine_pair_run_held(const struct rp_engine_cfg *cfg, enum rp_engine_role role,
			    const struct rp_engine_port *local, struct rp_oob *oob, unsigned pass,
			    struct rp_engine_hold *hold, struct rp_pair_result *res);
/* Release the held endpoint, if any. */
void rp_engine_hold_release(struct rp_engine_hold *hold);

/* Both sides of a pair in this process (loopback): two threads over rp_oob_local_pair().
 * res is the writer's view (src = writer port). Returns 0 or 1 as rp_engine_pair_run, or a negative
 * errno when the side channel or the thread could not be set up (res says so too). */
int rp_engine_loopback_run(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			   const struct rp_engine_port *dst, unsigned pass, struct rp_pair_result *res);
/* Loopback with a hold on each side (either may be NULL): rp_engine_pair_run_held's rules. */
int rp_engine_loopback_run_held(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
				const struct rp_engine_port *dst, unsigned pass, struct rp_engine_hold *hold_w,
				struct rp_engine_hold *hold_t, struct rp_pair_result *res);

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
/* Target: serve the ping-pong in LAT mode, then wait for the final WRITE WITH IMM and check every
 * byte. With oob, the wait follows the writer's PROGRESS messages: it times out only after
 * cfg.timeout_s without progress (deadline is not used); without oob (no one can report progress)
 * deadline is absolute. Fills verified / bad_offset; DATA_MISMATCH, TIMEOUT, PEER_LOST, PORT_DOWN,
 * INTERRUPTED. */
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
