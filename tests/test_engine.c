/* test_engine.c: the RC engine against an in-process verbs stand-in reached through -Wl,--wrap.
 *
 * The stand-in is a tiny RC model: a write copies the bytes into the registered remote buffer it
 * names (checking the rkey and range, as an adapter would), a signalled write or any failed write
 * completes on the send CQ, a WRITE WITH IMM consumes a posted receive of the peer QP. Every create
 * and destroy is counted, so each test also proves that teardown released everything.
 *
 * Faults it can inject besides a failure at any call: a slow link (completions one per gap, or slower
 * for a range of writes), writes that vanish (no completion until the target QP is destroyed, then
 * the sender gets fk_orphan_status), a lost receive of the final write, a lost completion of one
 * latency write, a port that goes DOWN after N queries, an async PORT_ERR event, a smaller
 * max_msg_sz, another vendor (rxe). It logs the access flags of MRs and QPs and the CQ sizes.
 *
 * What is checked: a failure injected at EVERY step of set-up, connection and data path ends as the
 * right rp_status with the call named in the reason, and nothing leaks; completion errors map to
 * their codes and reach the other side; corrupted data is caught at the right offset; the QP
 * attributes are NCCL's; the wire messages are validated; the arithmetic; the CLI's bad input.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine.h"
#include "engine_int.h"
#include "fixture_health.h"
#include "log.h"
#include "node.h"
#include "sanitize.h"
#include "stop.h"
#include "oob.h"
#include "util.h"
#include "testutil.h"
#include "verbs_ops.h"

/* ---------------------------------------------------------------------------------------------- */
/* the verbs stand-in */

enum fk_kind { FK_DEVLIST, FK_CTX, FK_PD, FK_CQ, FK_QP, FK_MR, FK_KINDS };

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

static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
static int fk_live[FK_KINDS];
static int fk_calls;                 /* failable calls so far */
static int fk_fail_at;               /* fail the Nth failable call (0 = never) */
static int fk_fail_errno = EINVAL;
static enum fk_step fk_failed_step;  /* which step was failed */
static uint64_t fk_writes;           /* RDMA writes posted */
static uint64_t fk_bad_write_at;     /* this write (1-based) completes with fk_bad_status */
static enum ibv_wc_status fk_bad_status;
static int64_t fk_corrupt_off = -1;  /* the final write lands with this byte flipped */
static uint32_t fk_next_qpn = 0x100;
static struct ibv_qp_attr fk_rtr, fk_rts;
static int fk_rtr_mask;
static struct fk_qp *fk_qps[256];
static struct ibv_mr *fk_mrs[64];
static struct ibv_device fk_dev;
static uint32_t fk_max_msg_sz = 1u << 31;      /* the port's max_msg_sz */
static uint32_t fk_vendor_id = 0x02c9;          /* Mellanox; 0xffffff is rxe */
static struct ibv_context *fk_down_ctx;         /* this port goes DOWN ... */
static int fk_opens;                            /* devices opened so far */
static int fk_down_open;                        /* the port of the Nth device opened goes DOWN */
static int fk_event_open;                       /* the Nth device opened gets async events ... */
static int fk_event_pipe[2] = { -1, -1 };       /* ... one PORT_ERR per byte written here */
static double fk_write_gap_s;                   /* the link completes one write per gap (slow link) */
static double fk_next_done;
static uint64_t fk_slow_from, fk_slow_to;      /* writes in [from, to) complete one per fk_slow_gap_s */
static double fk_slow_gap_s;
static uint64_t fk_drop_from;                   /* writes from this one (1-based) vanish: no completion */
static enum ibv_wc_status fk_orphan_status = IBV_WC_RETRY_EXC_ERR;  /* their fate when the target QP dies */
static bool fk_drop_recv;                       /* the final WRITE WITH IMM lands but its receive never completes */
static uint64_t fk_drop_lat_at;
static int fk_active_width = 1, fk_active_speed = 8;   /* 1X FDR10 */
static int fk_mr_access[8], fk_n_mr_access;     /* access flags of the MRs registered, in order */
static int fk_qp_access[64], fk_n_qp_access;     /* access flags of the QPs moved to INIT, in order */
static int fk_max_cqe;                 /* latency: this write's completion is dropped (it lands) */
static int fk_down_queries;                     /* ... after this many port queries */
static int fk_queries_of_down;
static struct ibv_context_ops fk_ops_dummy;
/* port counters: at write number fk_ctr_at, the stand-in sets fixture file fk_ctr_rel to fk_ctr_value */
static struct rp_fx *fk_ctr_fx;
static const char *fk_ctr_rel;
static uint64_t fk_ctr_at, fk_ctr_value;
/* bidir: writes posted on QPs of the Nth device opened vanish; MTU: writes longer than N bytes vanish */
static int fk_drop_open;
static struct ibv_context *fk_drop_ctx;
static uint32_t fk_drop_over;

static void fk_reset(void)
{
	for (int i = 0; i < FK_KINDS; i++)
		fk_live[i] = 0;
	fk_calls = 0;
	fk_fail_at = 0;
	fk_fail_errno = EINVAL;
	fk_failed_step = ST_NONE;
	fk_writes = 0;
	fk_bad_write_at = 0;
	fk_corrupt_off = -1;
	memset(fk_qps, 0, sizeof(fk_qps));
	memset(fk_mrs, 0, sizeof(fk_mrs));
	fk_max_msg_sz = 1u << 31;
	fk_vendor_id = 0x02c9;
	fk_down_ctx = NULL;
	fk_down_queries = 0;
	fk_opens = 0;
	fk_down_open = 0;
	fk_event_open = 0;
	fk_write_gap_s = 0;
	fk_next_done = 0;
	fk_slow_from = fk_slow_to = 0;
	fk_slow_gap_s = 0;
	fk_drop_from = 0;
	fk_ctr_fx = NULL;
	fk_ctr_at = 0;
	fk_orphan_status = IBV_WC_RETRY_EXC_ERR;
	fk_drop_recv = false;
	fk_drop_lat_at = 0;
	fk_active_width = 1;
	fk_active_speed = 8;
	fk_n_mr_access = fk_n_qp_access = 0;
	fk_max_cqe = 0;
	fk_queries_of_down = 0;
	fk_drop_open = 0;
	fk_drop_ctx = NULL;
	fk_drop_over = 0;
	(void)fk_ops_dummy;
}

/* Count one failable call; true when it is the one to fail (errno set). Caller holds no lock. */
static bool fk_fail(enum fk_step step)
{
	bool fail;

	pthread_mutex_lock(&fk_lock);
	fail = ++fk_calls == fk_fail_at;
	if (fail)
		fk_failed_step = step;
	pthread_mutex_unlock(&fk_lock);
	if (fail)
		errno = fk_fail_errno;
	return fail;
}

static void fk_count(enum fk_kind k, int d)
{
	pthread_mutex_lock(&fk_lock);
	fk_live[k] += d;
	pthread_mutex_unlock(&fk_lock);
}

static bool fk_all_released(void)
{
	for (int i = 0; i < FK_KINDS; i++)
		if (fk_live[i] != 0) {
			fprintf(stderr, "leak: kind %d live %d\n", i, fk_live[i]);
			return false;
		}
	return true;
}

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

struct ibv_device **__wrap_ibv_get_device_list(int *n)
{
	struct ibv_device **list;

	if (fk_fail(ST_DEVLIST))
		return NULL;
	list = calloc(2, sizeof(*list));
	list[0] = &fk_dev;
	*n = 1;
	fk_count(FK_DEVLIST, 1);
	return list;
}

void __wrap_ibv_free_device_list(struct ibv_device **list)
{
	free(list);
	fk_count(FK_DEVLIST, -1);
}

const char *__wrap_ibv_get_device_name(struct ibv_device *dev)
{
	return dev == &fk_dev ? "fake0" : "?";
}

struct ibv_context *__wrap_ibv_open_device(struct ibv_device *dev)
{
	struct ibv_context *ctx;

	if (fk_fail(ST_OPEN))
		return NULL;
	ctx = calloc(1, sizeof(*ctx));
	ctx->device = dev;
	ctx->async_fd = -1;
	pthread_mutex_lock(&fk_lock);
	if (++fk_opens == fk_down_open)
		fk_down_ctx = ctx;
	if (fk_opens == fk_event_open)
		ctx->async_fd = fk_event_pipe[0];
	if (fk_opens == fk_drop_open)
		fk_drop_ctx = ctx;
	pthread_mutex_unlock(&fk_lock);
	fk_count(FK_CTX, 1);
	return ctx;
}

int __wrap_ibv_close_device(struct ibv_context *ctx)
{
	pthread_mutex_lock(&fk_lock);
	if (ctx == fk_drop_ctx)
		fk_drop_ctx = NULL;   /* a later device may get the same address */
	pthread_mutex_unlock(&fk_lock);
	free(ctx);
	fk_count(FK_CTX, -1);
	return 0;
}

struct ibv_pd *__wrap_ibv_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd;

	if (fk_fail(ST_PD))
		return NULL;
	pd = calloc(1, sizeof(*pd));
	pd->context = ctx;
	fk_count(FK_PD, 1);
	return pd;
}

int __wrap_ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	fk_count(FK_PD, -1);
	return 0;
}

struct ibv_cq *__wrap_ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
				    struct ibv_comp_channel *channel, int comp_vector)
{
	struct fk_cq *cq;

	(void)cq_context;
	(void)channel;
	(void)comp_vector;
	if (fk_fail(ST_CQ))
		return NULL;
	cq = calloc(1, sizeof(*cq));
	cq->cq.context = ctx;
	cq->cq.cqe = cqe;
	pthread_mutex_lock(&fk_lock);
	if (cqe > fk_max_cqe)
		fk_max_cqe = cqe;
	pthread_mutex_unlock(&fk_lock);
	fk_count(FK_CQ, 1);
	return &cq->cq;
}

int __wrap_ibv_destroy_cq(struct ibv_cq *cq)
{
	free(cq);
	fk_count(FK_CQ, -1);
	return 0;
}

struct ibv_qp *__wrap_ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct fk_qp *qp;

	if (fk_fail(ST_QP))
		return NULL;
	qp = calloc(1, sizeof(*qp));
	pthread_mutex_lock(&fk_lock);
	qp->qp.qp_num = fk_next_qpn++;
	for (size_t i = 0; i < RP_ARRAY_SIZE(fk_qps); i++)
		if (!fk_qps[i]) {
			fk_qps[i] = qp;
			break;
		}
	pthread_mutex_unlock(&fk_lock);
	qp->qp.pd = pd;
	qp->qp.context = pd->context;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.qp_type = attr->qp_type;
	fk_count(FK_QP, 1);
	return &qp->qp;
}

static void cq_push_at(struct ibv_cq *cq, const struct ibv_wc *wc, double at);

int __wrap_ibv_destroy_qp(struct ibv_qp *qp)
{
	struct fk_qp *q = (struct fk_qp *)qp;

	pthread_mutex_lock(&fk_lock);
	/* the writes whose completions were dropped now fail at their sender (its QP flushes after) */
	if (q->dropped && q->dropped_from) {
		struct ibv_wc wc = { .wr_id = q->dropped_wr_id, .status = fk_orphan_status, .opcode = IBV_WC_RDMA_WRITE,
				     .qp_num = q->dropped_from->qp.qp_num };

		for (size_t i = 0; i < RP_ARRAY_SIZE(fk_qps); i++)
			if (fk_qps[i] == q->dropped_from)
				cq_push_at(q->dropped_from->qp.send_cq, &wc, 0);
	}
	for (size_t i = 0; i < RP_ARRAY_SIZE(fk_qps); i++)
		if (fk_qps[i] && fk_qps[i]->dropped_from == q)
			fk_qps[i]->dropped_from = NULL;
	for (size_t i = 0; i < RP_ARRAY_SIZE(fk_qps); i++)
		if (fk_qps[i] == (struct fk_qp *)qp)
			fk_qps[i] = NULL;
	pthread_mutex_unlock(&fk_lock);
	free(qp);
	fk_count(FK_QP, -1);
	return 0;
}

int __wrap_ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	enum fk_step st = attr->qp_state == IBV_QPS_INIT ? ST_INIT : attr->qp_state == IBV_QPS_RTR ? ST_RTR : ST_RTS;

	if (fk_fail(st))
		return errno;   /* verbs: a positive errno */
	pthread_mutex_lock(&fk_lock);
	if (st == ST_RTR) {
		((struct fk_qp *)qp)->dest = attr->dest_qp_num;
		fk_rtr = *attr;
		fk_rtr_mask = mask;
	} else if (st == ST_RTS) {
		fk_rts = *attr;
	} else if (fk_n_qp_access < (int)RP_ARRAY_SIZE(fk_qp_access)) {
		fk_qp_access[fk_n_qp_access++] = (int)attr->qp_access_flags;
	}
	qp->state = attr->qp_state;
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

static struct ibv_mr *fk_reg(struct ibv_pd *pd, void *addr, size_t len)
{
	static uint32_t key = 0x1000;
	struct ibv_mr *mr;

	if (fk_fail(ST_REG))
		return NULL;
	mr = calloc(1, sizeof(*mr));
	mr->pd = pd;
	mr->context = pd->context;
	mr->addr = addr;
	mr->length = len;
	pthread_mutex_lock(&fk_lock);
	mr->lkey = mr->rkey = key++;
	for (size_t i = 0; i < RP_ARRAY_SIZE(fk_mrs); i++)
		if (!fk_mrs[i]) {
			fk_mrs[i] = mr;
			break;
		}
	pthread_mutex_unlock(&fk_lock);
	fk_count(FK_MR, 1);
	return mr;
}

static void fk_log_access(int access)
{
	pthread_mutex_lock(&fk_lock);
	if (fk_n_mr_access < (int)RP_ARRAY_SIZE(fk_mr_access))
		fk_mr_access[fk_n_mr_access++] = access;
	pthread_mutex_unlock(&fk_lock);
}

struct ibv_mr *__wrap_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	fk_log_access(access);
	return fk_reg(pd, addr, len);
}

struct ibv_mr *__wrap_ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned int access)
{
	(void)iova;
	fk_log_access((int)access);
	return fk_reg(pd, addr, len);
}

int __wrap_ibv_dereg_mr(struct ibv_mr *mr)
{
	pthread_mutex_lock(&fk_lock);
	for (size_t i = 0; i < RP_ARRAY_SIZE(fk_mrs); i++)
		if (fk_mrs[i] == mr)
			fk_mrs[i] = NULL;
	pthread_mutex_unlock(&fk_lock);
	free(mr);
	fk_count(FK_MR, -1);
	return 0;
}

int __wrap_ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	(void)ctx;
	(void)port;
	if (fk_fail(ST_QUERY_GID))
		return -1;
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = gid->raw[11] = 0xff;
	gid->raw[12] = 10;
	gid->raw[15] = (uint8_t)index;
	return 0;
}

int __wrap_ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	char b;

	if (read(ctx->async_fd, &b, 1) != 1)
		return -1;
	memset(ev, 0, sizeof(*ev));
	ev->event_type = IBV_EVENT_PORT_ERR;
	ev->element.port_num = 1;
	return 0;
}

void __wrap_ibv_ack_async_event(struct ibv_async_event *ev)
{
	(void)ev;
}

int __wrap_ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	(void)ctx;
	memset(attr, 0, sizeof(*attr));
	attr->vendor_id = fk_vendor_id;
	return 0;
}

int __wrap_rp_verbs_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
	(void)port;
	if (fk_fail(ST_QUERY_PORT))
		return errno;
	memset(attr, 0, sizeof(*attr));
	attr->state = IBV_PORT_ACTIVE;
	attr->active_mtu = IBV_MTU_1024;
	attr->link_layer = IBV_LINK_LAYER_ETHERNET;
	attr->active_width = (uint8_t)fk_active_width;
	attr->active_speed = (uint8_t)fk_active_speed;
	attr->max_msg_sz = fk_max_msg_sz;
	if (ctx == fk_down_ctx && fk_down_queries && ++fk_queries_of_down > fk_down_queries)
		attr->state = IBV_PORT_DOWN;
	return 0;
}

static void cq_push_at(struct ibv_cq *cq, const struct ibv_wc *wc, double at)
{
	struct fk_cq *c = (struct fk_cq *)cq;

	c->visible_at[c->tail % RP_ARRAY_SIZE(c->q)] = at;
	c->q[c->tail++ % RP_ARRAY_SIZE(c->q)] = *wc;
}

/* When the write posted now completes: at once, or one gap after the previous one (a slow link). */
static double fk_done_time(void)
{
	double now = rp_now();
	double gap = fk_writes + 1 >= fk_slow_from && fk_writes + 1 < fk_slow_to ? fk_slow_gap_s : fk_write_gap_s;

	if (gap <= 0)
		return 0;
	fk_next_done = (fk_next_done > now ? fk_next_done : now) + gap;
	return fk_next_done;
}

static struct fk_qp *qp_by_num(uint32_t num)
{
	for (size_t i = 0; i < RP_ARRAY_SIZE(fk_qps); i++)
		if (fk_qps[i] && fk_qps[i]->qp.qp_num == num)
			return fk_qps[i];
	return NULL;
}

/* The remote MR the write names, when the key and the range are right. */
static struct ibv_mr *mr_for(uint32_t rkey, uint64_t addr, uint32_t len)
{
	for (size_t i = 0; i < RP_ARRAY_SIZE(fk_mrs); i++) {
		struct ibv_mr *mr = fk_mrs[i];

		if (mr && mr->rkey == rkey && addr >= (uintptr_t)mr->addr &&
		    addr + len <= (uintptr_t)mr->addr + mr->length)
			return mr;
	}
	return NULL;
}

int __wrap_rp_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	if (fk_fail(ST_POST_SEND)) {
		*bad = wr;
		return errno;
	}
	pthread_mutex_lock(&fk_lock);
	for (; wr; wr = wr->next) {
		struct ibv_wc wc = { .wr_id = wr->wr_id, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RDMA_WRITE,
				     .qp_num = qp->qp_num };
		struct fk_qp *dst = qp_by_num(((struct fk_qp *)qp)->dest);
		uint32_t len = wr->sg_list[0].length;

		double at = fk_done_time();

		fk_writes++;
		if (fk_ctr_fx && fk_writes == fk_ctr_at)
			rp_fx_writef(fk_ctr_fx, fk_ctr_rel, "%llu\n", (unsigned long long)fk_ctr_value);
		if (dst && ((fk_drop_from && fk_writes >= fk_drop_from) || (fk_drop_over && len > fk_drop_over) ||
			    (fk_drop_ctx && qp->context == fk_drop_ctx))) {
			/* lost on the wire: nothing lands, nothing completes until the target QP goes away */
			dst->dropped++;
			dst->dropped_from = (struct fk_qp *)qp;
			dst->dropped_wr_id = wr->wr_id;
			continue;
		}
		if (fk_writes == fk_bad_write_at)
			wc.status = fk_bad_status;
		else if (!dst)
			wc.status = IBV_WC_RETRY_EXC_ERR;
		else if (!mr_for(wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, len))
			wc.status = IBV_WC_REM_ACCESS_ERR;
		if (wc.status == IBV_WC_SUCCESS && len > 0) {
			uint8_t *to = (uint8_t *)(uintptr_t)wr->wr.rdma.remote_addr;
			const uint8_t *from = (const uint8_t *)(uintptr_t)wr->sg_list[0].addr;

			/* the last byte lands last, as one store the peer may be polling (the ping-pong's
			 * flag): under ThreadSanitizer a plain read of it by the engine is a data race */
			memcpy(to, from, len - 1);
			__atomic_store_n(to + len - 1, __atomic_load_n(from + len - 1, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
			if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
				struct ibv_wc rwc = { .wr_id = dst->recv_wr_id, .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
						      .imm_data = wr->imm_data, .qp_num = dst->qp.qp_num,
						      .wc_flags = IBV_WC_WITH_IMM };

				if (fk_corrupt_off >= 0)
					((uint8_t *)(uintptr_t)wr->wr.rdma.remote_addr)[fk_corrupt_off] ^= 0x40;
				if (dst->recv_posted-- <= 0)
					wc.status = IBV_WC_RNR_RETRY_EXC_ERR;
				else if (!fk_drop_recv)
					cq_push_at(dst->qp.recv_cq, &rwc, at);
			}
		}
		if (fk_drop_lat_at && fk_writes == fk_drop_lat_at)
			continue;   /* landed, but its completion is lost */
		if ((wr->send_flags & IBV_SEND_SIGNALED) || wc.status != IBV_WC_SUCCESS)
			cq_push_at(qp->send_cq, &wc, at);
	}
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

int __wrap_rp_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	if (fk_fail(ST_POST_RECV)) {
		*bad = wr;
		return errno;
	}
	pthread_mutex_lock(&fk_lock);
	((struct fk_qp *)qp)->recv_posted++;
	((struct fk_qp *)qp)->recv_wr_id = wr->wr_id;
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

int __wrap_rp_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct fk_cq *c = (struct fk_cq *)cq;
	int got = 0;

	if (fk_fail(ST_POLL))
		return -errno;
	pthread_mutex_lock(&fk_lock);
	while (got < n && c->head != c->tail && c->visible_at[c->head % RP_ARRAY_SIZE(c->q)] <= rp_now())
		wc[got++] = c->q[c->head++ % RP_ARRAY_SIZE(c->q)];
	pthread_mutex_unlock(&fk_lock);
	return got;
}

/* ---------------------------------------------------------------------------------------------- */

static void quiet_sink(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static int setup(void **state)
{
	(void)state;
	fk_reset();
	rp_log_set_sink(quiet_sink, NULL);
	return 0;
}

static void small_cfg(struct rp_engine_cfg *cfg)
{
	rp_engine_cfg_default(cfg);
	cfg->meas.msg_size = 4096;
	cfg->meas.iters = 200;
	cfg->meas.warmup_iters = 8;
	cfg->meas.tx_depth = 16;
	cfg->meas.cq_mod = 4;
	cfg->meas.n_qps = 2;
	cfg->timeout_s = 2;
}

static const struct rp_engine_port port_a = { "hostA", "fake0", 1, 3 };
static const struct rp_engine_port port_b = { "hostA", "fake0", 1, 3 };

/* The status a failure at this step must end as. */
static enum rp_status expected_status(enum fk_step st)
{
	switch (st) {
	case ST_QUERY_GID: return RP_ST_RESOLVE;
	case ST_REG: return RP_ST_REGISTRATION;
	case ST_RTR: return RP_ST_RTR;
	case ST_RTS: return RP_ST_RTS;
	default: return RP_ST_SETUP;
	}
}

/* The name of the failed call, as the reason must contain it. */
static const char *expected_word(enum fk_step st)
{
	switch (st) {
	case ST_DEVLIST: return "ibv_get_device_list";
	case ST_OPEN: return "ibv_open_device";
	case ST_QUERY_PORT: return "ibv_query_port";
	case ST_QUERY_GID: return "ibv_query_gid";
	case ST_PD: return "ibv_alloc_pd";
	case ST_CQ: return "ibv_create_cq";
	case ST_QP: return "ibv_create_qp";
	case ST_INIT: return "to INIT";
	case ST_REG: return "register";
	case ST_RTR: return "to RTR";
	case ST_RTS: return "to RTS";
	case ST_POST_RECV: return "ibv_post_recv";
	case ST_POST_SEND: return "ibv_post_send";
	case ST_POLL: return "ibv_poll_cq";
	default: return "";
	}
}

/* Drive one pair with the lower-level calls, in one thread: create both, connect both, prepare,
 * write, check. Returns the first failing result, or the target's when all passed. */
static void drive_pair(const struct rp_engine_cfg *cfg, struct rp_pair_result *out)
{
	struct rp_engine_ep *w = NULL, *t = NULL;
	struct rp_pair_result rw, rt;
	struct rp_conn_info iw, it;
	int rc;

	rp_pair_result_init(&rw, NULL, NULL);
	rp_pair_result_init(&rt, NULL, NULL);
	rc = rp_engine_ep_create(cfg, RP_ROLE_WRITER, &port_a, &rw, &w);
	if (rc)
		goto fail_w;
	rc = rp_engine_ep_create(cfg, RP_ROLE_TARGET, &port_b, &rt, &t);
	if (rc)
		goto fail_t;
	rp_engine_ep_info(w, 42, &iw);
	rp_engine_ep_info(t, 42, &it);
	if (rp_engine_ep_connect(w, &it, &rw))
		goto fail_w;
	if (rp_engine_ep_connect(t, &iw, &rt))
		goto fail_t;
	if (rp_engine_target_prepare(t, &rt))
		goto fail_t;
	if (rp_engine_run_writer(w, 77, &rw))
		goto fail_w;
	if (rp_engine_run_target(t, 77, NULL, rp_now() + 2, &rt))
		goto fail_t;
	*out = rt;
	out->status = RP_ST_OK;
	goto out;
fail_w:
	*out = rw;
	goto out;
fail_t:
	*out = rt;
out:
	rp_engine_ep_destroy(t);
	rp_engine_ep_destroy(w);
}

/* A failure injected at every failable call, one run each, until a run passes untouched. */
static void test_fail_at_every_step(void **state)
{
	struct rp_engine_cfg cfg;
	int steps_seen = 0, seen_mask = 0;

	(void)state;
	small_cfg(&cfg);
	for (int n = 1; n < 100000; n++) {
		struct rp_pair_result r;

		fk_reset();
		fk_fail_at = n;
		drive_pair(&cfg, &r);
		assert_true(fk_all_released());
		if (fk_failed_step == ST_NONE) {
			/* past the last failable call: the pair passed and verified */
			assert_int_equal(r.status, RP_ST_OK);
			assert_true(r.verified);
			break;
		}
		steps_seen++;
		seen_mask |= 1 << fk_failed_step;
		if (r.status != expected_status(fk_failed_step) || !strstr(r.reason, expected_word(fk_failed_step)))
			fail_msg("failure at call %d (step %d): status %s, reason '%s'", n, fk_failed_step,
				 rp_status_code(r.status), r.reason);
	}
	/* every kind of step was reached and failed at least once */
	for (int st = ST_DEVLIST; st <= ST_POLL; st++)
		if (!(seen_mask & (1 << st)))
			fail_msg("step %d was never failed", st);
	assert_true(steps_seen > 20);
}

/* An RTR refused with a resolution errno is reported as address resolution. */
static void test_rtr_resolution(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.n_qps = 1;
	/* calls: devlist, open, qport, qgid, pd, cq, cq, qp, init, reg (writer) x2, then RTR */
	fk_fail_at = 21;
	fk_fail_errno = ETIMEDOUT;
	drive_pair(&cfg, &r);
	assert_int_equal(fk_failed_step, ST_RTR);
	assert_int_equal(r.status, RP_ST_RESOLVE);
	assert_non_null(strstr(r.reason, "to RTR toward fake0 port 1 (address resolution)"));
	assert_non_null(strstr(r.reason, strerror(ETIMEDOUT)));
	assert_true(fk_all_released());
}

/* The QP attributes are NCCL's, except the probe's timeout and retry count from the config. */
static void test_nccl_attributes(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.qp.qp_timeout = 9;
	cfg.qp.retry_cnt = 3;
	cfg.qp.traffic_class = 106;
	drive_pair(&cfg, &r);
	assert_int_equal(r.status, RP_ST_OK);
	assert_int_equal(fk_rtr.path_mtu, IBV_MTU_1024);
	assert_int_equal(fk_rtr.min_rnr_timer, 12);
	assert_int_equal(fk_rtr.max_dest_rd_atomic, 1);
	assert_int_equal(fk_rtr.ah_attr.is_global, 1);
	assert_int_equal(fk_rtr.ah_attr.grh.hop_limit, 255);
	assert_int_equal(fk_rtr.ah_attr.grh.sgid_index, 3);
	assert_int_equal(fk_rtr.ah_attr.grh.traffic_class, 106);
	assert_int_equal(fk_rtr.ah_attr.grh.dgid.raw[15], 3);
	assert_true(fk_rtr_mask & IBV_QP_AV);
	assert_int_equal(fk_rts.timeout, 9);
	assert_int_equal(fk_rts.retry_cnt, 3);
	assert_int_equal(fk_rts.rnr_retry, 7);
	assert_true(fk_all_released());
}

/* Two threads over the socketpair side channel: the whole pair sequence passes and verifies. */
static void test_loopback_ok(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.status, RP_ST_OK);
	assert_string_equal(r.reason, "");
	assert_true(r.verified);
	assert_int_equal(r.bad_offset, -1);
	assert_int_equal(r.iters, 200);
	assert_int_equal(r.bytes, 200 * 4096);
	assert_true(r.gbps > 0);
	assert_true(r.gbps_min > 0 && r.gbps_min <= r.gbps);
	/* warm-up (8) + measured (200) + the final WRITE WITH IMM */
	assert_int_equal(fk_writes, 8 + 200 + 1);
	assert_string_equal(r.src.device, "fake0");
	assert_string_equal(r.dst.device, "fake0");
	assert_string_equal(r.src.mem, "host");
	assert_int_equal(r.src.mtu, 1024);
	assert_true(fk_all_released());
}

/* Port counters around the run: each side snapshots its own port (here both ends are fake0:1 of an
 * rxe-like fixture tree), a retransmission counter that moves during the run makes both sides'
 * judgement lossy with the counter named, and the target's side reaches the writer's result through
 * the RESULT message (nothing else fills counters.dst there). With the counter left alone both sides
 * are measured and ok, nothing moved but what rxe counts for every packet. Fails before the engine
 * read counters (counters.src/dst stayed unmeasured). */
static void test_loopback_counters(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fxh_rxe_counters(&fx, "fake0"), 0);
	small_cfg(&cfg);
	cfg.sysfs_root = fx.root;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.status, RP_ST_OK);
	assert_int_equal(r.counters.src.measured, 1);
	assert_int_equal(r.counters.dst.measured, 1);
	assert_int_equal(r.counters.src.verdict, RP_CV_OK);
	assert_int_equal(r.counters.dst.verdict, RP_CV_OK);
	assert_int_equal(r.counters.src.n_moved, 0);

	fk_reset();
	fk_ctr_fx = &fx;
	fk_ctr_rel = "class/infiniband/fake0/ports/1/hw_counters/completer_retry_err";
	fk_ctr_at = 50;
	fk_ctr_value = 37;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.status, RP_ST_OK);
	for (int k = 0; k < 2; k++) {
		const struct rp_pair_ctr_side *sd = k ? &r.counters.dst : &r.counters.src;

		assert_int_equal(sd->measured, 1);
		assert_int_equal(sd->verdict, RP_CV_LOSSY);
		assert_int_equal(sd->cls, RP_CC_RETRANS);
		assert_int_equal(sd->n, 1);
		assert_string_equal(sd->c[0].name, "completer_retry_err");
		assert_int_equal(sd->c[0].delta, 37);
		assert_non_null(strstr(sd->reason, "completer_retry_err +37"));
	}
	/* no sysfs at all: nothing read, nothing judged, the pair unaffected */
	fk_reset();
	cfg.sysfs_root = "";
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.counters.src.measured, 0);
	assert_int_equal(r.counters.dst.measured, 0);
	rp_fx_destroy(&fx);
	assert_true(fk_all_released());
}

/* A duration run stops on time and still completes every write it posted. */
static void test_loopback_duration(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.iters = 0;
	cfg.meas.duration_s = 0.2;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.status, RP_ST_OK);
	assert_true(r.verified);
	assert_true(r.iters > 0);
	assert_int_equal(r.bytes, r.iters * 4096);
	assert_int_equal(fk_writes, 8 + r.iters + 1);
	assert_true(r.elapsed_s < 5);
}

/* Completion errors in the middle of the run map to their codes, and the target learns it. */
static void test_wc_errors(void **state)
{
	static const struct { enum ibv_wc_status wc; enum rp_status st; } cases[] = {
		{ IBV_WC_RETRY_EXC_ERR, RP_ST_RETRY_EXCEEDED },
		{ IBV_WC_RNR_RETRY_EXC_ERR, RP_ST_RNR_RETRY },
		{ IBV_WC_REM_ACCESS_ERR, RP_ST_REMOTE_ACCESS },
		{ IBV_WC_LOC_PROT_ERR, RP_ST_LOCAL_PROT },
		{ IBV_WC_REM_INV_REQ_ERR, RP_ST_REMOTE_INVALID },
		{ IBV_WC_REM_OP_ERR, RP_ST_REMOTE_OP },
		{ IBV_WC_REM_ABORT_ERR, RP_ST_REMOTE_ABORT },
		{ IBV_WC_LOC_LEN_ERR, RP_ST_LOCAL_LENGTH },
		{ IBV_WC_LOC_QP_OP_ERR, RP_ST_LOCAL_QP_OP },
		{ IBV_WC_BAD_RESP_ERR, RP_ST_BAD_RESPONSE },
		{ IBV_WC_WR_FLUSH_ERR, RP_ST_FLUSHED },
		{ IBV_WC_GENERAL_ERR, RP_ST_COMPLETION_ERROR },
		{ IBV_WC_MW_BIND_ERR, RP_ST_COMPLETION_ERROR },
	};

	(void)state;
	for (size_t i = 0; i < RP_ARRAY_SIZE(cases); i++) {
		struct rp_engine_cfg cfg;
		struct rp_pair_result r;
		double t0 = rp_now();

		fk_reset();
		small_cfg(&cfg);
		fk_bad_write_at = 50;
		fk_bad_status = cases[i].wc;
		assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
		if (r.status != cases[i].st || !strstr(r.reason, ibv_wc_status_str(cases[i].wc)))
			fail_msg("%s: %s (%s)", ibv_wc_status_str(cases[i].wc), rp_status_code(r.status), r.reason);
		assert_int_equal(r.cause_side, RP_SIDE_SRC);
		assert_false(r.verified);
		/* the target heard it over the side channel, well before its own deadline */
		assert_true(rp_now() - t0 < cfg.timeout_s);
		assert_true(fk_all_released());
	}
}

/* A flipped byte in the final write is caught at its offset. */
static void test_data_mismatch(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	fk_corrupt_off = 1234;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_DATA_MISMATCH);
	assert_int_equal(r.bad_offset, 1234);
	assert_false(r.verified);
	assert_non_null(strstr(r.reason, "offset 1234"));
	assert_true(fk_all_released());
}

/* Latency mode: the ping-pong runs across the two threads and reports ordered statistics. */
static void test_latency(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.mode = RP_MODE_LAT;
	cfg.meas.msg_size = 64;
	cfg.meas.iters = 300;
	cfg.meas.n_qps = 1;
	if (rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r) != 0)
		fail_msg("latency pair: %s: %s", rp_status_code(r.status), r.reason);
	assert_int_equal(r.status, RP_ST_OK);
	assert_true(r.verified);
	assert_true(r.lat.measured);
	assert_int_equal(r.lat.samples, 300);
	assert_true(r.lat.min_us > 0);
	assert_true(r.lat.min_us <= r.lat.median_us && r.lat.median_us <= r.lat.p99_us && r.lat.p99_us <= r.lat.max_us);
	/* two writes per round trip (8 warm-up + 300), then the final one */
	assert_int_equal(fk_writes, 2 * 308 + 1);
	assert_true(fk_all_released());
}

/* A device that does not exist is a SETUP failure naming it; the target hears it too. */
static void test_unknown_device(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;
	struct rp_engine_port bad = { NULL, "nosuch9", 1, 0 };

	(void)state;
	small_cfg(&cfg);
	assert_int_equal(rp_engine_loopback_run(&cfg, &bad, &port_b, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_SETUP);
	assert_non_null(strstr(r.reason, "no RDMA device 'nosuch9'"));
	assert_true(fk_all_released());
}

/* A RoCE port without a usable GID is a resolution failure. */
static void test_no_gid(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;
	struct rp_engine_port nogid = { NULL, "fake0", 1, -1 };

	(void)state;
	small_cfg(&cfg);
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &nogid, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_RESOLVE);
	assert_non_null(strstr(r.reason, "no usable RoCE GID"));
	assert_true(fk_all_released());
}

/* A peer that never speaks: the pair ends as peer_lost at the deadline, not later. */
static void test_silent_peer(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;
	struct rp_oob a, b;
	double t0;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 0.3;
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	t0 = rp_now();
	assert_int_equal(rp_engine_pair_run(&cfg, RP_ROLE_WRITER, &port_a, &a, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_PEER_LOST);
	assert_true(rp_now() - t0 < 2);
	rp_oob_close(&a);
	rp_oob_close(&b);
	assert_true(fk_all_released());
}

/* A peer that answers with garbage of the right size: rejected by validation, reported as peer_lost. */
static void test_bad_peer_message(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;
	struct rp_engine_msg junk;
	struct rp_oob a, b;

	(void)state;
	small_cfg(&cfg);
	memset(&junk, 0x5a, sizeof(junk));
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(rp_oob_send(&b, &junk, sizeof(junk), rp_now() + 1), 0);
	assert_int_equal(rp_engine_pair_run(&cfg, RP_ROLE_WRITER, &port_a, &a, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_PEER_LOST);
	assert_non_null(strstr(r.reason, "bad magic"));
	rp_oob_close(&a);
	rp_oob_close(&b);
	assert_true(fk_all_released());
}

/* ---------------------------------------------------------------------------------------------- */
/* deadlines, first cause, status codes: both sides in two threads, each side's own result */

struct side_thread {
	const struct rp_engine_cfg *cfg;
	struct rp_oob *oob;
	struct rp_pair_result res;
	int rc;
};

static void *target_side(void *arg)
{
	struct side_thread *t = arg;

	t->rc = rp_engine_pair_run(t->cfg, RP_ROLE_TARGET, &port_b, t->oob, 0, &t->res);
	return NULL;
}

/* Run a pair with rp_engine_pair_run on both sides; *w and *t are each side's own result. */
static void run_both(const struct rp_engine_cfg *cfg, struct rp_pair_result *w, struct rp_pair_result *t)
{
	struct rp_oob a, b;
	struct side_thread st = { .cfg = cfg, .oob = &b };
	pthread_t tid;

	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(pthread_create(&tid, NULL, target_side, &st), 0);
	rp_engine_pair_run(cfg, RP_ROLE_WRITER, &port_a, &a, 0, w);
	rp_oob_close(&a);
	pthread_join(tid, NULL);
	rp_oob_close(&b);
	*t = st.res;
}

/* A slow but healthy link (one write completes every 50 ms) whose run takes longer than the old flat
 * cap (run_limit_s, as the matrix sets it: 4 x --timeout there): the writer's progress reports keep
 * the target waiting, and the pair is ok. (Before: the target timed out at the cap and tore its QP
 * down, and the writer then reported a transport error.) */
static void test_slow_link_ok(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 2;       /* generous: the test bed's CPUs are shared */
	cfg.run_limit_s = 1.0;
	cfg.meas.n_qps = 1;
	cfg.meas.cq_mod = 1;
	cfg.meas.iters = 50;
	fk_write_gap_s = 0.05;   /* (8 + 50 + 1) writes: about 3 s, three times the old cap */
	run_both(&cfg, &w, &t);
	if (w.status != RP_ST_OK || t.status != RP_ST_OK)
		fail_msg("slow link: writer %s (%s), target %s (%s)", rp_status_code(w.status), w.reason,
			 rp_status_code(t.status), t.reason);
	assert_true(w.verified && t.verified);
	assert_int_equal(w.iters, 50);
	assert_true(w.gbps_min_at_s >= 0 && w.gbps_min <= w.gbps);
	assert_int_equal(w.n_attempts, 1);
	assert_int_equal(w.attempts[0].status, RP_ST_OK);
	assert_true(fk_all_released());
}

/* Writes that vanish (no completion ever): no progress for --timeout is TIMEOUT on both sides, the
 * writer's (it saw it first-hand) is the cause; nobody calls it a transport error. */
static void test_no_progress_timed_out(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_drop_from = 40;
	run_both(&cfg, &w, &t);
	if (w.status != RP_ST_TIMEOUT || t.status != RP_ST_TIMEOUT)
		fail_msg("writer %s (%s), target %s (%s)", rp_status_code(w.status), w.reason, rp_status_code(t.status),
			 t.reason);
	assert_string_equal(w.reason, t.reason);
	assert_int_equal(w.cause_side, t.cause_side);
	assert_true(fk_all_released());
}

/* The target's port goes DOWN mid-run (writes vanish from then on): the target's port check names
 * it, PORT_DOWN on both sides with the target as the cause; the writer's transport error, if it saw
 * one when the target's QP went away, is only the secondary view. (Before: timed_out.) */
static void test_port_down_first_cause(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_down_open = 2;        /* the target opens the second device */
	fk_down_queries = 1;     /* its set-up query sees ACTIVE, every later one DOWN */
	fk_drop_from = 60;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_PORT_DOWN);
	assert_int_equal(t.status, RP_ST_PORT_DOWN);
	assert_int_equal(w.cause_side, RP_SIDE_DST);
	assert_int_equal(t.cause_side, RP_SIDE_DST);
	assert_non_null(strstr(w.reason, "left ACTIVE"));
	assert_true(w.secondary.status == RP_ST_OK || w.secondary.status == RP_ST_RETRY_EXCEEDED);
	assert_true(fk_all_released());
}

/* A port that flapped (an async PORT_ERR, the port ACTIVE again by the next query) while the writes
 * stalled: PORT_DOWN named after the event, the target as the cause. (Before: timed_out.) */
static void test_port_error_event(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	assert_int_equal(pipe(fk_event_pipe), 0);
	fk_event_open = 2;
	assert_int_equal(write(fk_event_pipe[1], "e", 1), 1);
	fk_drop_from = 60;
	run_both(&cfg, &w, &t);
	close(fk_event_pipe[0]);
	close(fk_event_pipe[1]);
	fk_event_pipe[0] = fk_event_pipe[1] = -1;
	assert_int_equal(t.status, RP_ST_PORT_DOWN);
	assert_int_equal(w.status, RP_ST_PORT_DOWN);
	assert_int_equal(w.cause_side, RP_SIDE_DST);
	assert_non_null(strstr(t.reason, "async event"));
	assert_true(fk_all_released());
}

/* The writer's own port goes DOWN while its writes stall: PORT_DOWN with the writer as the cause. */
static void test_writer_port_down(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_down_open = 1;
	fk_down_queries = 1;
	fk_drop_from = 60;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_PORT_DOWN);
	assert_int_equal(t.status, RP_ST_PORT_DOWN);
	assert_int_equal(w.cause_side, RP_SIDE_SRC);
	assert_int_equal(t.cause_side, RP_SIDE_SRC);
	assert_true(fk_all_released());
}

/* The writer's queue flushes because the target's port went down: FLUSHED is a consequence, the
 * target's PORT_DOWN is the cause whichever side reports; FLUSHED is the secondary view.
 * (Before: a flush was peer_lost and became the pair's status.) */
static void test_flush_is_secondary(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	fk_down_open = 2;
	fk_down_queries = 1;
	fk_bad_write_at = 60;
	fk_bad_status = IBV_WC_WR_FLUSH_ERR;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_PORT_DOWN);
	assert_int_equal(t.status, RP_ST_PORT_DOWN);
	assert_int_equal(w.cause_side, RP_SIDE_DST);
	assert_int_equal(t.cause_side, RP_SIDE_DST);
	assert_int_equal(w.secondary.status, RP_ST_FLUSHED);
	assert_int_equal(t.secondary.status, RP_ST_FLUSHED);
	assert_non_null(strstr(w.secondary.reason, ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR)));
	assert_true(fk_all_released());
}

/* A target that sees nothing wrong adopts the writer's failure: one status, the writer's side. */
static void test_writer_cause(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	fk_bad_write_at = 50;
	fk_bad_status = IBV_WC_REM_INV_REQ_ERR;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_REMOTE_INVALID);
	assert_int_equal(t.status, RP_ST_REMOTE_INVALID);
	assert_int_equal(w.cause_side, RP_SIDE_SRC);
	assert_int_equal(t.cause_side, RP_SIDE_SRC);
	assert_int_equal(w.secondary.status, RP_ST_OK);
	assert_int_equal(t.n_attempts, 1);
	assert_int_equal(t.attempts[0].status, RP_ST_REMOTE_INVALID);
	assert_int_equal(t.attempts[0].side, RP_SIDE_SRC);
	assert_true(fk_all_released());
}

/* Latency mode: the last ping lands but its completion is lost. The drain waits for every signalled
 * write and ends as TIMEOUT. (Before: it left on the first empty poll and the pair passed.) */
static void test_latency_drain_waits(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	cfg.meas.mode = RP_MODE_LAT;
	cfg.meas.msg_size = 64;
	cfg.meas.iters = 100;
	cfg.meas.n_qps = 1;
	fk_drop_lat_at = 2 * (8 + 100) - 1;   /* the writer's last ping (writes alternate writer, target) */
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_TIMEOUT);
	if (!strstr(r.reason, "latency writes"))
		fail_msg("reason: %s", r.reason);
	assert_int_equal(r.cause_side, RP_SIDE_SRC);
	assert_true(fk_all_released());
}

/* The final write's receive never completes although the writer reported its end: TIMEOUT on the
 * target, within one --timeout of the writer's report. */
static void test_final_never_arrives(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_drop_recv = true;
	run_both(&cfg, &w, &t);
	assert_int_equal(t.status, RP_ST_TIMEOUT);
	assert_int_equal(t.cause_side, RP_SIDE_DST);
	assert_non_null(strstr(t.reason, "final write"));
	assert_int_equal(w.status, RP_ST_TIMEOUT);
	assert_true(fk_all_released());
}

/* Build a valid message of type from this side (as a writer would send it). */
static void hand_msg(struct rp_engine_msg *m, enum rp_msg_type type)
{
	memset(m, 0, sizeof(*m));
	m->magic = RP_MSG_MAGIC;
	m->version = RP_MSG_VERSION;
	m->type = (uint16_t)type;
	m->length = sizeof(*m);
}

struct hand_target {
	struct rp_engine_cfg cfg;
	struct rp_oob *oob;
	struct rp_pair_result res;
};

static void *hand_target_main(void *arg)
{
	struct hand_target *h = arg;

	rp_engine_pair_run(&h->cfg, RP_ROLE_TARGET, &port_b, h->oob, 0, &h->res);
	return NULL;
}

/* A writer played by hand: a valid CONN (with an hour as its progress period) and READY, then
 * PROGRESS reports that never advance. "No progress" is what counts: the target ends TIMEOUT within
 * one of its own --timeout and says so. */
static void test_silent_after_ready(void **state)
{
	struct hand_target h;
	struct rp_engine_ep *w = NULL;
	struct rp_pair_result rw;
	struct rp_engine_msg m, in;
	struct rp_oob a, b;
	pthread_t tid;
	bool got_result = false;

	(void)state;
	small_cfg(&h.cfg);
	h.cfg.timeout_s = 0.5;
	h.oob = &b;
	rp_pair_result_init(&rw, NULL, NULL);
	assert_int_equal(rp_engine_ep_create(&h.cfg, RP_ROLE_WRITER, &port_a, &rw, &w), 0);
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(pthread_create(&tid, NULL, hand_target_main, &h), 0);
	hand_msg(&m, RP_MSG_CONN);
	rp_engine_ep_info(w, 42, &m.u.conn);
	m.u.conn.progress_s = 3600;   /* a writer that promises reports once an hour buys no extra time */
	assert_int_equal(rp_oob_send(&a, &m, sizeof(m), rp_now() + 2), 0);
	assert_int_equal(rp_oob_recv(&a, &in, sizeof(in), rp_now() + 2), 0);
	assert_int_equal(rp_engine_msg_validate(&in, sizeof(in), RP_MSG_CONN, NULL, 0), 0);
	hand_msg(&m, RP_MSG_READY);
	assert_int_equal(rp_oob_send(&a, &m, sizeof(m), rp_now() + 2), 0);
	assert_int_equal(rp_oob_recv(&a, &in, sizeof(in), rp_now() + 2), 0);
	assert_int_equal(in.type, RP_MSG_READY);
	/* reports that say nothing new, for up to 40 x --timeout: the target's RESULT must come first */
	for (int i = 0; i < 160 && !got_result; i++) {
		hand_msg(&m, RP_MSG_PROGRESS);
		m.u.progress.completed = 5;
		rp_oob_send(&a, &m, sizeof(m), rp_now() + 1);
		got_result = rp_oob_recv(&a, &in, sizeof(in), rp_now() + h.cfg.timeout_s / 4) == 0;
	}
	assert_true(got_result);
	assert_int_equal(in.type, RP_MSG_RESULT);
	assert_int_equal(in.status, RP_ST_TIMEOUT);
	rp_oob_close(&a);
	pthread_join(tid, NULL);
	rp_oob_close(&b);
	assert_int_equal(h.res.status, RP_ST_TIMEOUT);
	assert_non_null(strstr(h.res.reason, "no progress for"));
	rp_engine_ep_destroy(w);
	assert_true(fk_all_released());
}

/* A hostile writer asks for a 1 TiB buffer: the target rejects the message before it opens a device,
 * allocates or registers anything. (Before: only msg_size != 0 was checked.) */
static void test_hostile_conn_allocates_nothing(void **state)
{
	struct hand_target h;
	struct rp_engine_cfg cfg;
	struct rp_engine_msg m;
	struct rp_oob a, b;
	pthread_t tid;

	(void)state;
	small_cfg(&h.cfg);
	h.oob = &b;
	rp_engine_cfg_default(&cfg);
	hand_msg(&m, RP_MSG_CONN);
	m.u.conn.n_qps = 1;
	m.u.conn.qpn[0] = 0x42;
	m.u.conn.mtu = 1024;
	m.u.conn.port = 1;
	m.u.conn.meas = cfg.meas;
	m.u.conn.meas.msg_size = 1ULL << 40;
	m.u.conn.buf_len = 1ULL << 40;
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(pthread_create(&tid, NULL, hand_target_main, &h), 0);
	assert_int_equal(rp_oob_send(&a, &m, sizeof(m), rp_now() + 2), 0);
	/* the writer is told why, at once */
	assert_int_equal(rp_oob_recv(&a, &m, sizeof(m), rp_now() + 5), 0);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, NULL, 0), 0);
	assert_int_equal(m.status, RP_ST_PEER_LOST);
	assert_non_null(strstr(m.reason, "message size"));
	pthread_join(tid, NULL);
	rp_oob_close(&a);
	rp_oob_close(&b);
	assert_int_equal(h.res.status, RP_ST_PEER_LOST);
	assert_non_null(strstr(h.res.reason, "message size"));
	assert_int_equal(fk_opens, 0);
	assert_int_equal(fk_n_mr_access, 0);
	assert_true(fk_all_released());
}

/* A 4 GiB message cannot be posted (the length is 32 bits: it would be 0); a message larger than the
 * port's max_msg_sz is refused when the endpoint opens. */
static void test_message_size_limits(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.msg_size = 1ULL << 32;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	cfg.meas.msg_size = RP_ENGINE_MAX_MSG_SIZE + 1;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	cfg.meas.msg_size = RP_ENGINE_MAX_MSG_SIZE;
	assert_int_equal(rp_engine_cfg_validate(&cfg), 0);
	cfg.meas.iters = RP_ENGINE_MAX_ITERS;   /* x 1 GiB overflows 64 bits */
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	small_cfg(&cfg);
	fk_max_msg_sz = 2048;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_SETUP);
	assert_non_null(strstr(r.reason, "exceeds the largest message"));
	assert_true(fk_all_released());
}

/* Least privilege: the writer's MR and QPs grant no remote access and its rkey is never sent; the
 * target's grant remote WRITE only. The send CQ holds a flush of every QP plus the final write. */
static void test_least_privilege(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_engine_ep *w = NULL, *t = NULL;
	struct rp_pair_result rw, rt;
	struct rp_conn_info iw, it;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.n_qps = 8;
	rp_pair_result_init(&rw, NULL, NULL);
	rp_pair_result_init(&rt, NULL, NULL);
	assert_int_equal(rp_engine_ep_create(&cfg, RP_ROLE_WRITER, &port_a, &rw, &w), 0);
	assert_int_equal(fk_max_cqe, (16 + 1) * 8 + 1);
	assert_int_equal(rp_engine_ep_create(&cfg, RP_ROLE_TARGET, &port_b, &rt, &t), 0);
	assert_int_equal(fk_n_mr_access, 2);
	assert_int_equal(fk_mr_access[0] & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC), 0);
	assert_int_equal(fk_mr_access[1], IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(fk_n_qp_access, 16);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(fk_qp_access[i], 0);
		assert_int_equal(fk_qp_access[8 + i], IBV_ACCESS_REMOTE_WRITE);
	}
	rp_engine_ep_info(w, 1, &iw);
	rp_engine_ep_info(t, 1, &it);
	assert_int_equal(iw.rkey, 0);
	assert_true(iw.addr == 0 && iw.buf_len == 0);
	assert_true(it.rkey != 0 && it.buf_len == 4096);
	rp_engine_ep_destroy(t);
	rp_engine_ep_destroy(w);
	assert_true(fk_all_released());
}

/* One rate table, data rates: 4X EDR is 100 Gb/s (not 103.125); a soft device is marked on both
 * sides, the peer's through the wire. */
static void test_rate_and_soft(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	fk_active_width = 2;     /* 4X */
	fk_active_speed = 32;    /* EDR */
	fk_vendor_id = 0xffffff; /* rxe */
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_float_equal(w.src.link_gbps, 100.0, 1e-9);
	assert_float_equal(w.dst.link_gbps, 100.0, 1e-9);
	assert_float_equal(t.src.link_gbps, 100.0, 1e-9);
	assert_true(w.src.soft && w.dst.soft && t.src.soft && t.dst.soft);
	assert_float_equal(rp_port_data_rate(2, 32, NULL, 0), 100.0, 1e-9);
	assert_float_equal(rp_port_data_rate(2, 128, NULL, 0), 400.0, 1e-9);
	assert_true(fk_all_released());
}

/* The link slows down for a while in the middle of the run: the slowest interval is found, and
 * where it starts (seconds into the measured run) is reported on both sides. (Before: never set.) */
static void test_interval_minimum_located(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.n_qps = 1;
	cfg.meas.cq_mod = 1;
	cfg.meas.warmup_iters = 0;
	cfg.meas.iters = 300;
	cfg.meas.interval_s = 0.05;
	fk_write_gap_s = 0.001;                   /* writes 1..100: 0.1 s */
	fk_slow_from = 101;                       /* writes 101..110: 20 ms each, 0.2 s */
	fk_slow_to = 111;
	fk_slow_gap_s = 0.02;
	run_both(&cfg, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_true(w.gbps_min < w.gbps / 4);
	if (w.gbps_min_at_s < 0.05 || w.gbps_min_at_s > w.elapsed_s)
		fail_msg("slowest interval at %.3f s of %.3f", w.gbps_min_at_s, w.elapsed_s);
	assert_float_equal(t.gbps_min_at_s, w.gbps_min_at_s, 1e-12);
	assert_true(fk_all_released());
}

/* A --node longer than the name field, in a 2-byte script, is cut between characters: the names in
 * the result (both sides, one through the wire) are valid UTF-8. (Before: cut mid-character.) */
static void test_long_utf8_node(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;
	char node[3 * RP_NAME_MAX];
	struct rp_engine_port pa = port_a;

	(void)state;
	small_cfg(&cfg);
	node[0] = 'x';   /* "xy" then 2-byte characters: a cut at 63 bytes falls inside one */
	node[1] = 'y';
	for (size_t i = 2; i + 2 < sizeof(node); i += 2)
		memcpy(node + i, "\xc3\xa9", 2);   /* U+00E9 */
	node[sizeof(node) - 2] = '\0';
	pa.node = node;
	{
		struct rp_oob a, b;
		struct side_thread st = { .cfg = &cfg, .oob = &b };
		pthread_t tid;

		assert_int_equal(rp_oob_local_pair(&a, &b), 0);
		assert_int_equal(pthread_create(&tid, NULL, target_side, &st), 0);
		rp_engine_pair_run(&cfg, RP_ROLE_WRITER, &pa, &a, 0, &w);
		rp_oob_close(&a);
		pthread_join(tid, NULL);
		rp_oob_close(&b);
		t = st.res;
	}
	assert_int_equal(w.status, RP_ST_OK);
	assert_true(rp_str_is_clean(w.src.node));
	assert_true(rp_str_is_clean(t.src.node));
	assert_null(strchr(t.src.node, '?'));
	assert_true(strlen(w.src.node) >= RP_NAME_MAX - 3);
	assert_string_equal(w.src.node, t.src.node);
	assert_true(fk_all_released());
}

/* A stop request (SIGINT/SIGTERM) ends the pair as INTERRUPTED, not as a failure of the link. */
static void test_interrupted(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	rp_stop_request(SIGINT);
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
	rp_stop_reset();
	assert_int_equal(r.status, RP_ST_INTERRUPTED);
	assert_true(fk_all_released());
}

/* ---------------------------------------------------------------------------------------------- */
/* the wire */

static void valid_conn(struct rp_engine_msg *m)
{
	struct rp_engine_cfg cfg;

	memset(m, 0, sizeof(*m));
	m->magic = RP_MSG_MAGIC;
	m->version = RP_MSG_VERSION;
	m->type = RP_MSG_CONN;
	m->length = sizeof(*m);
	m->u.conn.n_qps = 2;
	m->u.conn.qpn[0] = 0x11;
	m->u.conn.qpn[1] = 0x12;
	m->u.conn.mtu = 1024;
	m->u.conn.port = 1;
	m->u.conn.buf_len = 4096;
	m->u.conn.progress_s = 0.5;
	rp_engine_cfg_default(&cfg);
	m->u.conn.meas = cfg.meas;
	m->u.conn.meas.msg_size = 4096;
	m->u.conn.meas.tx_depth = 16;
	m->u.conn.meas.n_qps = 2;
	strcpy(m->u.conn.device, "rxe0");
}

static void test_wire_validation(void **state)
{
	struct rp_engine_msg m;
	char why[160];

	(void)state;
	valid_conn(&m);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), 0);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m) - 1, RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_READY, why, sizeof(why)), -EBADMSG);
	m.magic = 0x12345678;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "magic"));
	m.magic = __builtin_bswap32(RP_MSG_MAGIC);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "byte order"));
	valid_conn(&m);
	m.version = RP_MSG_VERSION + 1;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "version"));
	valid_conn(&m);
	m.length = 12;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	m.status = RP_ST_COUNT_;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	memset(m.reason, 'x', sizeof(m.reason));
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	m.u.conn.n_qps = RP_ENGINE_MAX_QPS + 1;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	m.u.conn.mtu = 1500;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	m.u.conn.qpn[1] = 0;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	m.u.conn.buf_len = 100;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	memset(m.u.conn.device, 'y', sizeof(m.u.conn.device));
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	/* a failure report carries no body to check */
	valid_conn(&m);
	m.status = RP_ST_RTR;
	m.u.conn.n_qps = 0;
	strcpy(m.reason, "modify qp to RTR: Connection timed out");
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), 0);
}

/* The side channel keeps a message that arrives after a short recv timed out. */
static void test_oob_partial(void **state)
{
	struct rp_oob a, b;
	char out[100], in[100];

	(void)state;
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(rp_oob_recv(&b, in, sizeof(in), rp_now() + 0.01), -ETIMEDOUT);
	memset(out, 7, sizeof(out));
	assert_int_equal(rp_oob_send(&a, out, sizeof(out), rp_now() + 1), 0);
	assert_int_equal(rp_oob_recv(&b, in, 50, rp_now() + 1), -EMSGSIZE);
	assert_int_equal(rp_oob_send(&a, out, sizeof(out), rp_now() + 1), 0);
	assert_int_equal(rp_oob_recv(&b, in, sizeof(in), rp_now() + 1), 0);
	assert_memory_equal(in, out, sizeof(in));
	rp_oob_close(&a);
	assert_int_equal(rp_oob_recv(&b, in, sizeof(in), rp_now() + 1), -ECONNRESET);
	rp_oob_close(&b);
}

/* ---------------------------------------------------------------------------------------------- */
/* arithmetic */

static void test_gbps(void **state)
{
	(void)state;
	assert_float_equal(rp_engine_gbps(1000000000ULL, 1.0), 8.0, 1e-9);
	assert_float_equal(rp_engine_gbps(125000000ULL, 0.5), 2.0, 1e-9);   /* 10^9 bit/s, not 2^30 */
	assert_float_equal(rp_engine_gbps(1024, 0), 0.0, 0);
	assert_float_equal(rp_engine_gbps(1024, -1), 0.0, 0);
}

static void test_lat_stats(void **state)
{
	double s[100];
	struct rp_latency lat;

	(void)state;
	for (int i = 0; i < 100; i++)
		s[i] = 100 - i;   /* unsorted */
	rp_engine_lat_stats(s, 100, &lat);
	assert_true(lat.measured);
	assert_int_equal(lat.samples, 100);
	assert_float_equal(lat.min_us, 1, 0);
	assert_float_equal(lat.median_us, 50.5, 1e-9);
	assert_float_equal(lat.p99_us, 99, 0);
	assert_float_equal(lat.max_us, 100, 0);
	s[0] = 5;
	s[1] = 3;
	s[2] = 4;
	rp_engine_lat_stats(s, 3, &lat);
	assert_float_equal(lat.median_us, 4, 0);
	assert_float_equal(lat.p99_us, 5, 0);
	rp_engine_lat_stats(s, 0, &lat);
	assert_false(lat.measured);
}

static void test_wc_status_map(void **state)
{
	(void)state;
	assert_int_equal(rp_engine_wc_status(IBV_WC_SUCCESS), RP_ST_OK);
	assert_int_equal(rp_engine_wc_status(IBV_WC_RETRY_EXC_ERR), RP_ST_RETRY_EXCEEDED);
	assert_int_equal(rp_engine_wc_status(IBV_WC_RNR_RETRY_EXC_ERR), RP_ST_RNR_RETRY);
	assert_int_equal(rp_engine_wc_status(IBV_WC_REM_ACCESS_ERR), RP_ST_REMOTE_ACCESS);
	assert_int_equal(rp_engine_wc_status(IBV_WC_LOC_PROT_ERR), RP_ST_LOCAL_PROT);
	assert_int_equal(rp_engine_wc_status(IBV_WC_REM_INV_REQ_ERR), RP_ST_REMOTE_INVALID);
	assert_int_equal(rp_engine_wc_status(IBV_WC_REM_OP_ERR), RP_ST_REMOTE_OP);
	assert_int_equal(rp_engine_wc_status(IBV_WC_REM_ABORT_ERR), RP_ST_REMOTE_ABORT);
	assert_int_equal(rp_engine_wc_status(IBV_WC_LOC_LEN_ERR), RP_ST_LOCAL_LENGTH);
	assert_int_equal(rp_engine_wc_status(IBV_WC_LOC_QP_OP_ERR), RP_ST_LOCAL_QP_OP);
	assert_int_equal(rp_engine_wc_status(IBV_WC_BAD_RESP_ERR), RP_ST_BAD_RESPONSE);
	assert_int_equal(rp_engine_wc_status(IBV_WC_WR_FLUSH_ERR), RP_ST_FLUSHED);
	assert_int_equal(rp_engine_wc_status(IBV_WC_GENERAL_ERR), RP_ST_COMPLETION_ERROR);
	assert_int_equal(rp_engine_wc_status(IBV_WC_MW_BIND_ERR), RP_ST_COMPLETION_ERROR);
}

/* The first-cause rule on every kind of pair of first-hand failures. */
static void test_first_cause_rule(void **state)
{
	static const struct { enum rp_status w, t; bool target; } cases[] = {
		{ RP_ST_FLUSHED, RP_ST_TIMEOUT, true },            /* a flush follows from something */
		{ RP_ST_TIMEOUT, RP_ST_FLUSHED, false },
		{ RP_ST_PEER_LOST, RP_ST_DATA_MISMATCH, true },
		{ RP_ST_RETRY_EXCEEDED, RP_ST_PEER_LOST, false },
		{ RP_ST_TIMEOUT, RP_ST_PORT_DOWN, true },           /* the port explains the time-out */
		{ RP_ST_PORT_DOWN, RP_ST_TIMEOUT, false },
		{ RP_ST_RETRY_EXCEEDED, RP_ST_TIMEOUT, true },      /* the target's QP went away */
		{ RP_ST_REMOTE_ACCESS, RP_ST_INTERRUPTED, true },
		{ RP_ST_RETRY_EXCEEDED, RP_ST_REMOTE_OP, false },   /* both transport: the writer's */
		{ RP_ST_TIMEOUT, RP_ST_TIMEOUT, false },
		{ RP_ST_SETUP, RP_ST_DATA_MISMATCH, false },
	};

	(void)state;
	for (size_t i = 0; i < RP_ARRAY_SIZE(cases); i++)
		if (rp_engine_target_first(cases[i].w, cases[i].t) != cases[i].target)
			fail_msg("writer %s, target %s: the %s's should be the cause", rp_status_code(cases[i].w),
				 rp_status_code(cases[i].t), cases[i].target ? "target" : "writer");
}

static void test_seed(void **state)
{
	struct rp_endpoint a = { .node = "n1", .device = "rxe0", .port = 1 };
	struct rp_endpoint b = { .node = "n1", .device = "rxe1", .port = 1 };
	struct rp_endpoint c = { .node = "n2", .device = "rxe0", .port = 1 };

	(void)state;
	assert_true(rp_engine_seed(1, &a, &b, 0) == rp_engine_seed(1, &a, &b, 0));
	assert_true(rp_engine_seed(1, &a, &b, 0) != rp_engine_seed(1, &b, &a, 0));
	assert_true(rp_engine_seed(1, &a, &b, 0) != rp_engine_seed(1, &a, &b, 1));
	assert_true(rp_engine_seed(1, &a, &b, 0) != rp_engine_seed(2, &a, &b, 0));
	assert_true(rp_engine_seed(1, &a, &a, 0) != rp_engine_seed(1, &c, &c, 0));
}

static void test_cfg_validate(void **state)
{
	struct rp_engine_cfg cfg;

	(void)state;
	rp_engine_cfg_default(&cfg);
	assert_int_equal(rp_engine_cfg_validate(&cfg), 0);
	cfg.meas.msg_size = 0;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	rp_engine_cfg_default(&cfg);
	cfg.meas.cq_mod = cfg.meas.tx_depth + 1;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	rp_engine_cfg_default(&cfg);
	cfg.meas.n_qps = RP_ENGINE_MAX_QPS + 1;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
	rp_engine_cfg_default(&cfg);
	cfg.meas.mode = RP_MODE_LAT;
	cfg.meas.duration_s = 1;
	assert_int_equal(rp_engine_cfg_validate(&cfg), -EINVAL);
}

/* ---------------------------------------------------------------------------------------------- */
/* the command line: bad input exits 2 with a message that names the problem */

/* Run "rdmaprobe ARGS" with its stderr into err (stdout dropped); returns the exit status. */
static int run_cli(const char *args, char *err, size_t err_len)
{
	return rp_test_run_bin(err, err_len, "%s 2>&1 >/dev/null", args);
}

static void test_cli_bad_input(void **state)
{
	static const struct { const char *args, *msg; } cases[] = {
		{ "loopback -s 0", "--size 0: out of range" },
		{ "loopback -s 12Q", "--size 12Q: not a valid size" },
		{ "loopback -s 4G --no-verify", "the size must be below 4 GiB" },
		{ "loopback -s 3G", "--size 3221225472: at most 1024M" },
		{ "loopback -s 1G -n 1000000000000", "the byte count overflows 64 bits" },
		{ "loopback -n abc", "--iters abc: not a valid number" },
		{ "loopback -n 10 -D 2", "either -n/--iters or -D/--duration" },
		{ "loopback -s 4K -a", "either -s/--size or -a/--all" },
		{ "loopback -t 8 --cq-mod 16", "--cq-mod 16 is larger than the tx depth 8" },
		{ "loopback --qp-timeout 40", "--qp-timeout 40: out of range" },
		{ "loopback --retry-cnt 8", "--retry-cnt 8: out of range" },
		{ "loopback -q 0", "--qps 0: out of range" },
		{ "loopback --mem gpu", "--mem gpu: unknown memory" },
		{ "loopback --mem cuda:x", "--mem cuda:x: the GPU index" },
		{ "loopback --gpu-reg magic", "--gpu-reg magic: one of auto, dmabuf, peermem" },
		{ "loopback --latency -D 1", "latency mode counts round trips" },
		{ "loopback --bogus", "unknown option '--bogus'" },
		{ "pair", "give either --listen or the peer's HOST" },
		{ "pair --listen somehost", "give either --listen or the peer's HOST" },
		{ "pair host:99999", "the port must be a number 1 to 65535" },
		{ "pair -a host", "-a is for loopback" },
	};
	char err[4096];

	(void)state;
	rp_test_bin();
	for (size_t i = 0; i < RP_ARRAY_SIZE(cases); i++) {
		int st = run_cli(cases[i].args, err, sizeof(err));

		if (st != 2 || !strstr(err, cases[i].msg))
			fail_msg("rdmaprobe %s: exit %d, stderr '%s' (wanted 2 and '%s')", cases[i].args, st, err,
				 cases[i].msg);
	}
}

/* ---------------------------------------------------------------------------------------------- */
/* --bidir and the MTU probe */

/* --bidir in loopback: both directions run, each verified with its own measurement, over twice the
 * writes; the pair is ok. (Before: there was no reverse direction, reverse.measured stayed false.) */
static void test_bidir_loopback_both_verified(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.bidir = 1;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	if (r.status != RP_ST_OK || r.reverse.status != RP_ST_OK)
		fail_msg("forward %s (%s), reverse %s (%s)", rp_status_code(r.status), r.reason,
			 rp_status_code(r.reverse.status), r.reverse.reason);
	assert_true(r.verified);
	assert_int_equal(r.iters, 200);
	assert_true(r.reverse.measured);
	assert_false(r.reverse.folded);
	assert_true(r.reverse.verified);
	assert_int_equal(r.reverse.bad_offset, -1);
	assert_int_equal(r.reverse.iters, 200);
	assert_int_equal(r.reverse.bytes, 200 * 4096);
	assert_true(r.reverse.gbps > 0);
	assert_true(rp_pair_gbps_sum(&r) > r.gbps);
	/* each direction: warm-up (8) + measured (200) + its final WRITE WITH IMM */
	assert_int_equal(fk_writes, 2 * (8 + 200 + 1));
	assert_int_equal(r.n_attempts, 1);
	assert_true(fk_all_released());
}

/* --bidir over rp_engine_pair_run on both sides (the pair path: the target learns from the writer's
 * CONN that it writes too): the forward writer's writes vanish (its device is the first opened), the
 * reverse direction's arrive. Both sides report the same two outcomes: forward timed_out, reverse ok
 * and verified; the pair fails on its forward direction and no MTU probe runs (not for bidir).
 * (Before: the target never wrote, reverse.measured stayed false.) */
static void test_bidir_directions_differ(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	cfg.meas.bidir = 1;
	fk_drop_open = 1;
	run_both(&cfg, &w, &t);
	if (w.status != RP_ST_TIMEOUT || t.status != RP_ST_TIMEOUT)
		fail_msg("forward: writer %s (%s), target %s (%s)", rp_status_code(w.status), w.reason,
			 rp_status_code(t.status), t.reason);
	for (int k = 0; k < 2; k++) {
		const struct rp_pair_result *r = k ? &t : &w;

		assert_true(r->reverse.measured);
		if (r->reverse.status != RP_ST_OK)
			fail_msg("reverse on the %s side: %s (%s)", k ? "target" : "writer",
				 rp_status_code(r->reverse.status), r->reverse.reason);
		assert_true(r->reverse.verified);
		assert_int_equal(r->reverse.iters, 200);
		assert_false(r->reverse.folded);
		assert_null(strstr(r->reason, "probe"));
	}
	assert_true(fk_all_released());
}

/* The bidir flag on the wire is checked like every field; RP_MSGF_REVERSE never passes validation
 * (only the multiplexer sets and strips it); the measure rule refuses bidir with latency. */
static void test_bidir_wire(void **state)
{
	struct rp_engine_msg m;
	char why[160];

	(void)state;
	valid_conn(&m);
	m.u.conn.meas.bidir = 1;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), 0);
	m.u.conn.meas.bidir = 2;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "bidir"));
	valid_conn(&m);
	m.u.conn.meas.bidir = 1;
	m.u.conn.meas.mode = RP_MODE_LAT;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "latency"));
	valid_conn(&m);
	m.flags = RP_MSGF_REVERSE;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
}

/* A path MTU black hole (writes longer than 512 bytes vanish; the stand-in's ports are at MTU 1024):
 * the 4096-byte pair completes nothing and times out, a 64-byte probe write arrives, a 1024-byte one
 * does not: mtu_blackhole on both sides, the original reason kept, one attempt. (Before: timed_out.) */
static void test_mtu_blackhole(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_drop_over = 512;
	run_both(&cfg, &w, &t);
	if (w.status != RP_ST_MTU_BLACKHOLE || t.status != RP_ST_MTU_BLACKHOLE)
		fail_msg("writer %s (%s), target %s (%s)", rp_status_code(w.status), w.reason, rp_status_code(t.status),
			 t.reason);
	assert_string_equal(rp_status_code(RP_ST_MTU_BLACKHOLE), "mtu_blackhole");
	assert_non_null(strstr(w.reason, "a 64-byte write arrives, a 1024-byte one"));
	assert_non_null(strstr(w.reason, "first: no completion"));
	assert_string_equal(w.reason, t.reason);
	assert_int_equal(w.n_attempts, 1);
	assert_int_equal(w.attempts[0].status, RP_ST_MTU_BLACKHOLE);
	assert_true(fk_all_released());
}

/* Everything vanishes, small writes too: the probe's small write does not arrive, the pair stays
 * timed_out (no MTU write is tried), the reason says what the probe saw. In loopback. */
static void test_mtu_probe_all_dropped(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_drop_from = 1;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 1);
	if (r.status != RP_ST_TIMEOUT)
		fail_msg("%s (%s)", rp_status_code(r.status), r.reason);
	assert_non_null(strstr(r.reason, "a 64-byte probe write did not arrive either"));
	assert_true(fk_all_released());
}

/* Nothing vanishes (the limit is above every write): the pair passes and no probe write is made. */
static void test_mtu_probe_not_when_ok(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	fk_drop_over = 1u << 20;
	assert_int_equal(rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r), 0);
	assert_int_equal(r.status, RP_ST_OK);
	assert_int_equal(fk_writes, 8 + 200 + 1);
	assert_true(fk_all_released());
}

/* A pair that moved data before its writes vanished is not probed: timed_out as before. */
static void test_mtu_probe_not_after_progress(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;

	(void)state;
	small_cfg(&cfg);
	cfg.timeout_s = 1;
	fk_drop_from = 40;
	rp_engine_loopback_run(&cfg, &port_a, &port_b, 0, &r);
	assert_int_equal(r.status, RP_ST_TIMEOUT);
	assert_null(strstr(r.reason, "probe"));
	assert_true(fk_all_released());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_fail_at_every_step, setup),
		cmocka_unit_test_setup(test_rtr_resolution, setup),
		cmocka_unit_test_setup(test_nccl_attributes, setup),
		cmocka_unit_test_setup(test_loopback_ok, setup),
		cmocka_unit_test_setup(test_loopback_counters, setup),
		cmocka_unit_test_setup(test_loopback_duration, setup),
		cmocka_unit_test_setup(test_wc_errors, setup),
		cmocka_unit_test_setup(test_data_mismatch, setup),
		cmocka_unit_test_setup(test_latency, setup),
		cmocka_unit_test_setup(test_unknown_device, setup),
		cmocka_unit_test_setup(test_no_gid, setup),
		cmocka_unit_test_setup(test_silent_peer, setup),
		cmocka_unit_test_setup(test_bad_peer_message, setup),
		cmocka_unit_test_setup(test_slow_link_ok, setup),
		cmocka_unit_test_setup(test_no_progress_timed_out, setup),
		cmocka_unit_test_setup(test_port_down_first_cause, setup),
		cmocka_unit_test_setup(test_flush_is_secondary, setup),
		cmocka_unit_test_setup(test_port_error_event, setup),
		cmocka_unit_test_setup(test_writer_port_down, setup),
		cmocka_unit_test_setup(test_writer_cause, setup),
		cmocka_unit_test_setup(test_latency_drain_waits, setup),
		cmocka_unit_test_setup(test_final_never_arrives, setup),
		cmocka_unit_test_setup(test_silent_after_ready, setup),
		cmocka_unit_test_setup(test_hostile_conn_allocates_nothing, setup),
		cmocka_unit_test_setup(test_message_size_limits, setup),
		cmocka_unit_test_setup(test_least_privilege, setup),
		cmocka_unit_test_setup(test_rate_and_soft, setup),
		cmocka_unit_test_setup(test_interrupted, setup),
		cmocka_unit_test_setup(test_long_utf8_node, setup),
		cmocka_unit_test_setup(test_interval_minimum_located, setup),
		cmocka_unit_test_setup(test_bidir_loopback_both_verified, setup),
		cmocka_unit_test_setup(test_bidir_directions_differ, setup),
		cmocka_unit_test_setup(test_mtu_blackhole, setup),
		cmocka_unit_test_setup(test_mtu_probe_all_dropped, setup),
		cmocka_unit_test_setup(test_mtu_probe_not_when_ok, setup),
		cmocka_unit_test_setup(test_mtu_probe_not_after_progress, setup),
		cmocka_unit_test(test_wire_validation),
		cmocka_unit_test(test_oob_partial),
		cmocka_unit_test(test_gbps),
		cmocka_unit_test(test_lat_stats),
		cmocka_unit_test(test_wc_status_map),
		cmocka_unit_test(test_seed),
		cmocka_unit_test(test_first_cause_rule),
		cmocka_unit_test(test_cfg_validate),
		cmocka_unit_test(test_cli_bad_input),
		cmocka_unit_test(test_bidir_wire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
