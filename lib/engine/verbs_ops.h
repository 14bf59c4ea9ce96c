/* verbs_ops.h: the inline verbs calls the engine makes, as real functions.
 *
 * ibv_post_send, ibv_post_recv, ibv_poll_cq and ibv_query_port are static inline (or macros) in
 * <infiniband/verbs.h>, so a test cannot intercept them with -Wl,--wrap. The engine calls these
 * instead; tests wrap rp_verbs_* to inject failures. Return conventions are the verbs ones.
 */
#ifndef RP_VERBS_OPS_H
#define RP_VERBS_OPS_H

#include <infiniband/verbs.h>

int rp_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int rp_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int rp_verbs_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int rp_verbs_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);

#endif
