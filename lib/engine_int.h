/* engine_int.h: what engine.c and engine_cm.c share; not part of the engine's contract (engine.h). */
#ifndef RP_ENGINE_INT_H
#define RP_ENGINE_INT_H

#include <infiniband/verbs.h>

#include "engine.h"

struct rdma_event_channel;
struct rdma_cm_id;

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
	struct ibv_port_attr pattr;
	union ibv_gid gid;
	double link_gbps;
	struct rp_conn_info peer;     /* after connect */
	uint64_t seed;                /* the pattern seed of this pair and pass (target: for clearing) */
	bool recv_posted;
	/* librdmacm connection set-up (cfg.cm): engine_cm.c */
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *cm_listen;
	struct rdma_cm_id *cm_ids[RP_ENGINE_MAX_QPS];
	uint16_t cm_port;
};

/* Fail res with st and "what on DEV port N: strerror", log it once, return err (negative). */
int rp_engine_ep_fail(struct rp_engine_ep *ep, struct rp_pair_result *res, enum rp_status st, int err,
		      const char *what);
/* Look at the side channel for at most wait_s: 1 when a valid message of type want arrived (in
 * *pending), 0 when none, negative when the channel broke or the message is invalid (PEER_LOST). */
int rp_engine_peek_oob(struct rp_oob *oob, enum rp_msg_type want, double wait_s, struct rp_engine_msg *pending,
		       struct rp_pair_result *res);

/* engine_cm.c: connect with librdmacm instead of INIT/RTR/RTS by hand (like perftest -R).
 * The target listens before it sends its connection info (cm_port travels in it); the writer
 * resolves the target's address from its GID, connects one CM id per QP; both move their own QPs
 * with rdma_init_qp_attr()'s attributes, except timeout and retry count which come from cfg.
 * While the target waits for requests it watches oob for a failure message from the writer;
 * a message seen is kept in *pending. */
int rp_engine_cm_listen(struct rp_engine_ep *ep, struct rp_pair_result *res);
int rp_engine_cm_connect(struct rp_engine_ep *ep, const struct rp_conn_info *peer, double deadline,
			 struct rp_pair_result *res);
int rp_engine_cm_accept(struct rp_engine_ep *ep, const struct rp_conn_info *peer, struct rp_oob *oob,
			double deadline, struct rp_engine_msg *pending, bool *have_pending, struct rp_pair_result *res);
void rp_engine_cm_destroy(struct rp_engine_ep *ep);

#endif
