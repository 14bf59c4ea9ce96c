/* engine_int.h: what the engine's files share; not part of the engine's contract (engine.h).
 *
 * The engine in files a reader can name:
 *   engine_cfg.c     configuration, the measure part's one rule and one copy, arithmetic, status map
 *   engine_wire.c    the wire format and its validation (the trust boundary), connection info
 *   engine_ep.c      endpoint and QP set-up, connection by hand, the port checks of every wait
 *   engine_bw.c      the writer's bandwidth run and final write, progress reports
 *   engine_lat.c     the latency ping-pong (both sides)
 *   engine_target.c  the target's wait for the final write and its check of every byte
 *   engine_pair.c    the pair sequence as phase functions over one context, held connections
 *   engine_loopback.c both sides of a pair in this process
 *   engine_cm.c      connection with librdmacm
 *   engine_mux.c     --bidir: the two directions over one side channel, their start gate
 *   engine_mtucheck.c   the MTU probe of a pair that moved nothing (mtu_blackhole)
 */
#ifndef RP_ENGINE_INT_H
#define RP_ENGINE_INT_H

#include <infiniband/verbs.h>
#include <time.h>

#include "engine/engine.h"

struct rdma_event_channel;
struct rdma_cm_id;

#define RP_ENGINE_POLL_BATCH 16
#define RP_ENGINE_FINAL_WR_ID UINT64_MAX
#define RP_ENGINE_FINAL_IMM 0x52504649u   /* "RPFI" */
#define RP_ENGINE_IDLE_WAIT_S 0.002       /* a passive wait sleeps this long between looks */
/* A writer polls its CQ without a pause while completions come (as perftest), but one that has seen
 * none for RP_ENGINE_STALL_SPIN_S naps between polls, a tenth of how long it has seen none, from
 * RP_ENGINE_STALL_NAP_MIN_S up to RP_ENGINE_STALL_NAP_MAX_S: a probe waiting out a dead link's
 * deadline (seconds) polls 100 times a second and leaves the CPU to the measurements beside it (a
 * dead-endpoint confirmation, eight such writers a suspect, runs beside the bandwidth rounds; at
 * 0.2 ms a nap they took enough of a 2-vCPU test bed to make healthy pairs outliers, and at 2 ms
 * still some: results/scale-time.md, stop 43), and a live one loses at most a tenth of a stall that
 * long. */
#define RP_ENGINE_STALL_SPIN_S 0.002
#define RP_ENGINE_STALL_NAP_MIN_S 0.0002
#define RP_ENGINE_STALL_NAP_MAX_S 0.01

/* The nap of a writer that has seen no completion for stalled_s (none within the spin). */
static inline void rp_engine_stall_nap(double stalled_s)
{
	double nap = stalled_s / 10;

	if (stalled_s <= RP_ENGINE_STALL_SPIN_S)
		return;
	nap = nap < RP_ENGINE_STALL_NAP_MIN_S ? RP_ENGINE_STALL_NAP_MIN_S
	      : nap > RP_ENGINE_STALL_NAP_MAX_S ? RP_ENGINE_STALL_NAP_MAX_S : nap;
	nanosleep(&(struct timespec){ 0, (long)(nap * 1e9) }, NULL);
}

/* What a step returns besides 0 and a negative errno: the peer reported a failure of its own over
 * the side channel while this side waited (the message is in *ep->pending). */
#define RP_ENGINE_PEER_FAILED 1

struct rp_engine_ep {
	struct rp_engine_cfg cfg;     /* a copy: the target adopts the writer's measure part */
	enum rp_engine_role role;
	char node[RP_NAME_MAX];
	char device[RP_NAME_MAX];
	int port;
	int gid_index;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_qp *qps[RP_ENGINE_MAX_QPS];
	unsigned n_qps;
	uint32_t psn[RP_ENGINE_MAX_QPS];
	struct rp_mem_buf buf;
	bool buf_alloced;
	struct {                      /* what the QPs, CQs and buffer were made for (cfg.meas's, or larger:
	                               * rp_engine_ep_create_room) */
		uint64_t msg_size;
		uint32_t tx_depth;
		int access;           /* remote access of the QPs and the buffer */
	} made;
	struct ibv_port_attr pattr;
	union ibv_gid gid;
	double link_gbps;
	bool soft;                    /* rxe, siw: link_gbps is nominal */
	struct rp_conn_info peer;     /* after connect */
	uint64_t seed;                /* the pattern seed of this pair and pass (target: for clearing) */
	bool recv_posted;
	/* the side channel during the run (pair sequence; NULL when driven by hand) */
	struct rp_oob *oob;
	struct rp_engine_msg *pending;   /* a message the peer sent while this side waited */
	bool *have_pending;
	double progress_s;            /* writer: report progress this often; target: the writer's period */
	double next_progress;         /* writer: when the next report is due */
	uint64_t done;                /* writer: writes (round trips) completed so far, warm-up included */
	uint64_t done_reported;
	double run_t0;
	unsigned lat_outstanding;     /* latency writes posted and not yet completed */
	/* librdmacm connection set-up (cfg.cm): engine_cm.c */
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *cm_listen;
	struct rdma_cm_id *cm_ids[RP_ENGINE_MAX_QPS];
	uint16_t cm_port;
};

/* engine_cfg.c */
uint64_t rp_engine_mix64(uint64_t x);

/* engine_wire.c */
/* A message of type to send, carrying this side's own status (res) so far. */
void rp_engine_msg_init(struct rp_engine_msg *msg, enum rp_msg_type type, const struct rp_pair_result *res);
/* Has res failed already? (rp_pair_result_init's SETUP with no reason means "nothing yet".) */
bool rp_engine_res_failed(const struct rp_pair_result *res);
/* The endpoint a peer's (validated) connection info describes. */
void rp_engine_conn_endpoint(const struct rp_conn_info *c, struct rp_endpoint *out);

/* engine_ep.c */
/* rp_engine_ep_create, made able to run room (may be NULL) later too (engine.h, rp_engine_hold). */
int rp_engine_ep_create_room(const struct rp_engine_cfg *cfg, enum rp_engine_role role,
			     const struct rp_engine_port *local, const struct rp_engine_meas *room,
			     struct rp_pair_result *res, struct rp_engine_ep **ep_p);
/* Can ep, held from an earlier sequence, run cfg in role on local? (engine.h: same port and role, QP
 * count and attributes, memory, no CM, no bidir; buffer, depth and access at least cfg's) */
bool rp_engine_ep_fits(const struct rp_engine_ep *ep, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		       const struct rp_engine_port *local);
/* Ready ep, held from an earlier sequence, for the next one with cfg (the target's adopted): its
 * settings and the run's counters start again; the QPs, buffer and connection stay. */
void rp_engine_ep_rearm(struct rp_engine_ep *ep, const struct rp_engine_cfg *cfg);
/* Fail res with st and "what on DEV port N: strerror", log it once, return err (negative). */
int rp_engine_ep_fail(struct rp_engine_ep *ep, struct rp_pair_result *res, enum rp_status st, int err,
		      const char *what);
/* Fail res from a completion with an error status (its own code, the status text in the reason). */
int rp_engine_wc_fail(struct rp_engine_ep *ep, const struct ibv_wc *wc, struct rp_pair_result *res);
/* A failed post or poll (verbs' positive or negative errno) as SETUP naming what. */
int rp_engine_post_fail(struct rp_engine_ep *ep, int rc, const char *what, struct rp_pair_result *res);
/* The checks of every wait while nothing happens: a stop request ends it as INTERRUPTED; once per
 * quarter of the timeout (tracked in *next_check, 0 to start) the port must still be ACTIVE, else
 * PORT_DOWN. 0, or a negative errno with res filled. */
int rp_engine_idle_check(struct rp_engine_ep *ep, double *next_check, struct rp_pair_result *res);
/* The port now: 0 when ACTIVE (or it cannot tell), else PORT_DOWN in res and -ENETDOWN. */
int rp_engine_port_check(struct rp_engine_ep *ep, struct rp_pair_result *res);

/* engine_bw.c */
/* Post one RDMA WRITE of the whole buffer on QP qpi (WITH IMM when imm). */
int rp_engine_post_write(struct rp_engine_ep *ep, unsigned qpi, uint64_t wr_id, bool signaled, bool imm,
			 struct rp_pair_result *res);
/* Writer, during the run: when a report is due, send PROGRESS if writes completed since the last one,
 * and look for a failure report from the target. 0, RP_ENGINE_PEER_FAILED, or negative. */
int rp_engine_writer_tick(struct rp_engine_ep *ep, struct rp_pair_result *res);

/* engine_lat.c */
int rp_engine_lat_pingpong(struct rp_engine_ep *ep, bool writer, struct rp_pair_result *res);

/* engine_target.c */
/* The target's run: ping-pong (LAT), final write, check. ep->pending / have_pending must be set.
 * 0, RP_ENGINE_PEER_FAILED, or negative. */
int rp_engine_target_run(struct rp_engine_ep *ep, uint64_t seed, struct rp_oob *oob, double deadline,
			 struct rp_pair_result *res);

/* Look at the side channel for at most wait_s: 1 when a valid message of type want arrived (in
 * *pending), 0 when none, negative when the channel broke or the message is invalid (PEER_LOST). */
int rp_engine_peek_oob(struct rp_oob *oob, enum rp_msg_type want, double wait_s, struct rp_engine_msg *pending,
		       struct rp_pair_result *res);

/* engine_pair.c: of two first-hand failures, the writer's w and the target's t, is the target's the
 * first cause? A consequence (FLUSHED, PEER_LOST) never is; a port that went down is; a transport
 * error of the writer is the consequence of the target's own failure (its QP went away); otherwise
 * the writer's. */
bool rp_engine_target_first(enum rp_status w, enum rp_status t);

/* engine_pair.c: one side of one pair sequence (no MTU probe, no attempt record), with what the
 * probe needs to know of it in *info (may be NULL): the measure part it ran with (the writer's, as
 * adopted) and the writer's completed writes when this side learned them. */
struct rp_engine_side_info {
	struct rp_engine_meas meas;
	uint64_t completed;
	bool completed_known;
};
int rp_engine_side_run(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
		       struct rp_oob *oob, unsigned pass, struct rp_engine_hold *hold, struct rp_pair_result *res,
		       struct rp_engine_side_info *info);
/* engine_pair.c: one side (on a held connection when hold allows; NULL none), then the MTU probe when
 * the pair moved nothing; no attempt record (rp_engine_pair_run_held and loopback add it). */
int rp_engine_side_run_mtucheck(const struct rp_engine_cfg *cfg, enum rp_engine_role role,
			      const struct rp_engine_port *local, struct rp_oob *oob, unsigned pass,
			      struct rp_engine_hold *hold, struct rp_pair_result *res);

/* engine_mtucheck.c: the MTU probe (engine.h). wanted: the sequence's outcome calls for it (both sides
 * decide alike). run: the two probe sequences over the same oob, then res classified; returns 0 or 1
 * as rp_engine_pair_run. */
bool rp_engine_mtucheck_wanted(const struct rp_pair_result *res, const struct rp_engine_side_info *info);
int rp_engine_mtucheck_run(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
			struct rp_oob *oob, unsigned pass, struct rp_pair_result *res);
/* engine_mtucheck.c: the probe beside a loopback pair (cfg.mtucheck_beside): both sequences, both sides
 * in this process, each over a side channel of its own (run_loopback: engine_loopback.c's sequence
 * without MTU probe or attempt record); what they saw in *seen, which rp_engine_mtucheck_apply turns
 * into the pair's outcome as rp_engine_mtucheck_run would have. */
struct rp_engine_mtucheck_seen {
	bool small, big;              /* arrived */
	uint64_t mtu;                 /* the MTU-size write's size (0: not tried) */
	char small_why[32], big_why[32];
};
typedef void (*rp_engine_loopback_seq_fn)(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
					  const struct rp_engine_port *dst, unsigned pass, struct rp_pair_result *res);
void rp_engine_mtucheck_loopback(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
				 const struct rp_engine_port *dst, unsigned pass, rp_engine_loopback_seq_fn run_loopback,
				 struct rp_engine_mtucheck_seen *seen);
void rp_engine_mtucheck_apply(struct rp_pair_result *res, const struct rp_engine_mtucheck_seen *seen);

/* engine_mux.c: --bidir, the two directions over one side channel (see engine.h, "Both directions").
 * rp_engine_mux_chan(m, 0) is the forward direction's channel, 1 the reverse's; closing them does not
 * close under (the caller's). The gate: direction idx is connected; wait (at most until deadline, or a
 * stop) until the other one is too, or has ended (rp_engine_mux_gone), so both runs start together. */
struct rp_engine_mux;
int rp_engine_mux_open(struct rp_oob *under, struct rp_engine_mux **m_p);
struct rp_oob *rp_engine_mux_chan(struct rp_engine_mux *m, unsigned idx);
void rp_engine_mux_gate(struct rp_engine_mux *m, unsigned idx, double deadline);
void rp_engine_mux_gone(struct rp_engine_mux *m, unsigned idx);
void rp_engine_mux_free(struct rp_engine_mux *m);

/* engine_cm.c: connect with librdmacm instead of INIT/RTR/RTS by hand (like perftest -R).
 * The target listens before it sends its connection info (cm_port travels in it); the writer
 * resolves the target's address from its GID, connects one CM id per QP; both move their own QPs
 * with rdma_init_qp_attr()'s attributes, except timeout and retry count which come from cfg.
 * While either side waits for a CM event it watches oob for the peer's READY (a failure the peer
 * saw itself ends the wait: RP_ENGINE_PEER_FAILED); a message seen is kept in *pending. The writer
 * must watch too: a target whose CM failed stops answering, and the writer's wait running out
 * would otherwise be taken for the first cause. */
int rp_engine_cm_listen(struct rp_engine_ep *ep, struct rp_pair_result *res);
int rp_engine_cm_connect(struct rp_engine_ep *ep, const struct rp_conn_info *peer, struct rp_oob *oob,
			 double deadline, struct rp_engine_msg *pending, bool *have_pending, struct rp_pair_result *res);
int rp_engine_cm_accept(struct rp_engine_ep *ep, const struct rp_conn_info *peer, struct rp_oob *oob,
			double deadline, struct rp_engine_msg *pending, bool *have_pending, struct rp_pair_result *res);
void rp_engine_cm_destroy(struct rp_engine_ep *ep);

#endif
