/* verbs_standin.h: an in-process verbs stand-in for the engine tests, reached through -Wl,--wrap.
 *
 * The stand-in is a tiny RC model: a write copies the bytes into the registered remote buffer it
 * names (checking the rkey and range, as an adapter would), a signalled write or any failed write
 * completes on the send CQ, a WRITE WITH IMM consumes a posted receive of the peer QP. Every create
 * and destroy is counted, so each test also proves that teardown released everything
 * (fk_all_released()).
 *
 * Faults it can inject besides a failure at any call (fk_fail_at): a slow link (completions one per
 * gap, or slower for a range of writes), writes that vanish (no completion until the target QP is
 * destroyed, then the sender gets fk_orphan_status), a lost receive of the final write, a lost
 * completion of one latency write, a port that goes DOWN after N queries, an async PORT_ERR event, a
 * smaller max_msg_sz, another vendor (rxe). It logs the access flags of MRs and QPs and the CQ sizes.
 *
 * A test uses it by listing the wrapped calls in its tests/<name>.wrap (tests/engine/test_engine.wrap holds
 * the full list). The object is linked into every test binary (Makefile: TEST_SUPPORT); its __wrap_
 * definitions are weak, so a test that wraps one of the same calls with its own definition
 * (test_node.c, test_mem_cuda.c) keeps its own, and a test without --wrap flags never calls them.
 * Call fk_reset() before each test (engine_harness.h: setup()).
 */
#ifndef RP_TESTS_VERBS_STANDIN_H
#define RP_TESTS_VERBS_STANDIN_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "fixture.h"
#include "engine/verbs_ops.h"

enum fk_kind { FK_DEVLIST, FK_CTX, FK_PD, FK_CQ, FK_QP, FK_MR, FK_CM_CH, FK_CM_ID, FK_CM_EV, FK_KINDS };

enum fk_step {
	ST_NONE, ST_DEVLIST, ST_OPEN, ST_QUERY_PORT, ST_QUERY_GID, ST_PD, ST_CQ, ST_QP, ST_INIT, ST_REG,
	ST_RTR, ST_RTS, ST_POST_RECV, ST_POST_SEND, ST_POLL,
};

struct fk_cq {
	struct ibv_cq cq;
	struct ibv_wc q[8192];
	double visible_at[8192];         /* a completion shows only from this time on (delays) */
	unsigned head, tail;
};

struct fk_qp {
	struct ibv_qp qp;
	uint32_t dest;
	int recv_posted;
	uint64_t recv_wr_id;
	unsigned dropped;                /* writes toward this QP whose completion was dropped */
	struct fk_qp *dropped_from;      /* the writer QP of those writes */
	uint64_t dropped_wr_id;
};

extern pthread_mutex_t fk_lock;
extern int fk_live[FK_KINDS];
extern int fk_calls;
extern int fk_fail_at;
extern int fk_fail_errno;
extern enum fk_step fk_failed_step;
extern uint64_t fk_writes;
extern uint64_t fk_bad_write_at;
extern enum ibv_wc_status fk_bad_status;
extern int64_t fk_corrupt_off;
extern uint32_t fk_next_qpn;
extern struct ibv_qp_attr fk_rtr, fk_rts;
extern int fk_rtr_mask;
extern struct fk_qp *fk_qps[256];
extern struct ibv_mr *fk_mrs[64];
extern struct ibv_device fk_dev;
extern uint32_t fk_max_msg_sz;
extern uint32_t fk_vendor_id;
extern struct ibv_context *fk_down_ctx;
extern int fk_opens;
extern int fk_down_open;
extern int fk_event_open;
extern int fk_event_pipe[2];
extern double fk_write_gap_s;
extern double fk_next_done;
extern uint64_t fk_slow_from, fk_slow_to;
extern double fk_slow_gap_s;
extern uint64_t fk_drop_from;
extern unsigned long fk_polls;           /* __atomic: completion-queue polls so far (fk_reset: 0) */
extern double fk_dropped_at;             /* when the first write vanished (fk_drop_from); 0 none yet */
extern unsigned long fk_polls_late;      /* __atomic: polls more than 0.1 s after fk_dropped_at */
extern enum ibv_wc_status fk_orphan_status;
extern bool fk_drop_recv;
extern uint64_t fk_drop_lat_at;
extern int fk_active_width, fk_active_speed;
extern int fk_mr_access[8], fk_n_mr_access;
extern int fk_qp_access[64], fk_n_qp_access;
extern int fk_max_cqe;
extern int fk_down_queries;
extern int fk_queries_of_down;
extern struct rp_fx *fk_ctr_fx;
extern const char *fk_ctr_rel;
extern uint64_t fk_ctr_at, fk_ctr_value;
extern int fk_drop_open;                 /* writes on QPs of the Nth device opened vanish (0: none) */
extern struct ibv_context *fk_drop_ctx;
extern uint32_t fk_drop_over;            /* writes longer than this vanish (0: none) */
extern int fk_small_qps_destroyed;       /* QPs destroyed before the first 64-byte write was posted (-1: none yet) */
extern bool fk_gid_link_local;           /* ibv_query_gid gives fe80::N, a link-local GID */

struct ibv_device **__wrap_ibv_get_device_list(int *n);
void __wrap_ibv_free_device_list(struct ibv_device **list);
const char *__wrap_ibv_get_device_name(struct ibv_device *dev);
struct ibv_context *__wrap_ibv_open_device(struct ibv_device *dev);
int __wrap_ibv_close_device(struct ibv_context *ctx);
struct ibv_pd *__wrap_ibv_alloc_pd(struct ibv_context *ctx);
int __wrap_ibv_dealloc_pd(struct ibv_pd *pd);
struct ibv_cq *__wrap_ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *channel, int comp_vector);
int __wrap_ibv_destroy_cq(struct ibv_cq *cq);
struct ibv_qp *__wrap_ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
int __wrap_ibv_destroy_qp(struct ibv_qp *qp);
int __wrap_ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
struct ibv_mr *__wrap_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access);
struct ibv_mr *__wrap_ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned int access);
int __wrap_ibv_dereg_mr(struct ibv_mr *mr);
int __wrap_ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid);
int __wrap_rp_verbs_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
int __wrap_ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr);
int __wrap_ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev);
void __wrap_ibv_ack_async_event(struct ibv_async_event *ev);
int __wrap_rp_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int __wrap_rp_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int __wrap_rp_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);

void fk_reset(void);
/* Count one failable call; true when it is the one to fail (errno set). Caller holds no lock. */
bool fk_fail(enum fk_step step);
void fk_count(enum fk_kind k, int d);
/* True when every object the stand-in handed out was released (a leak is printed). */
bool fk_all_released(void);

/* ---- the rdmacm side (verbs_standin_cm.c; tests/engine/test_engine_cm.wrap lists the calls) ------------
 * A model of the CM exchange between ids of this process: rdma_listen gives the listener a port,
 * rdma_resolve_addr / rdma_resolve_route queue ADDR_RESOLVED / ROUTE_RESOLVED on the caller's
 * channel, rdma_connect queues CONNECT_REQUEST (a new id, the private data and the QP number) on
 * the listener's, rdma_accept queues CONNECT_RESPONSE (the acceptor's QP number) on the connector's,
 * rdma_establish queues ESTABLISHED on the acceptor's, rdma_reject queues REJECTED.
 * rdma_init_qp_attr gives the RTR attributes with the peer's QP number, so the data path of the
 * verbs stand-in runs over the connection as over one made by hand. Channels, ids and events handed
 * out are counted (FK_CM_CH, FK_CM_ID, FK_CM_EV) for fk_all_released().
 *
 * Fault: every event of type fk_cm_fault_on (-1: none) is
 *   FK_CM_REPLACE  delivered as fk_cm_replace_with instead (status fk_cm_replace_status);
 *   FK_CM_NEVER    never delivered;
 *   FK_CM_DELAY    delivered fk_cm_delay_s after it was queued.
 * fk_cm_delivered counts the events handed out, by type. fk_reset() clears it all. */
enum fk_cm_fault { FK_CM_REPLACE, FK_CM_NEVER, FK_CM_DELAY };

extern int fk_cm_fault_on;
extern enum fk_cm_fault fk_cm_fault;
extern int fk_cm_replace_with;
extern int fk_cm_replace_status;
extern double fk_cm_delay_s;
extern int fk_cm_delivered[32];

void fk_cm_reset(void);

#endif
