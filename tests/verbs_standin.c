/* verbs_standin.c: the verbs stand-in of the engine tests (see verbs_standin.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "verbs_standin.h"

/* weak: a test binary with its own definition of one of these (test_node.c) keeps its own */
#define FK_WRAP __attribute__((weak))

pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
int fk_live[FK_KINDS];
int fk_calls;                 /* failable calls so far */
int fk_fail_at;               /* fail the Nth failable call (0 = never) */
int fk_fail_errno = EINVAL;
bool fk_gid_link_local;
enum fk_step fk_failed_step;  /* which step was failed */
uint64_t fk_writes;           /* RDMA writes posted */
uint64_t fk_bad_write_at;     /* this write (1-based) completes with fk_bad_status */
enum ibv_wc_status fk_bad_status;
int64_t fk_corrupt_off = -1;  /* the final write lands with this byte flipped */
uint32_t fk_next_qpn = 0x100;
struct ibv_qp_attr fk_rtr, fk_rts;
int fk_rtr_mask;
struct fk_qp *fk_qps[256];
struct ibv_mr *fk_mrs[64];
struct ibv_device fk_dev;
uint32_t fk_max_msg_sz = 1u << 31;      /* the port's max_msg_sz */
uint32_t fk_vendor_id = 0x02c9;          /* Mellanox; 0xffffff is rxe */
struct ibv_context *fk_down_ctx;         /* this port goes DOWN ... */
int fk_opens;                            /* devices opened so far */
int fk_down_open;                        /* the port of the Nth device opened goes DOWN */
int fk_event_open;                       /* the Nth device opened gets async events ... */
int fk_event_pipe[2] = { -1, -1 };       /* ... one PORT_ERR per byte written here */
double fk_write_gap_s;                   /* the link completes one write per gap (slow link) */
double fk_next_done;
uint64_t fk_slow_from, fk_slow_to;      /* writes in [from, to) complete one per fk_slow_gap_s */
double fk_slow_gap_s;
uint64_t fk_drop_from;                   /* writes from this one (1-based) vanish: no completion */
unsigned long fk_polls;                  /* __atomic: completion-queue polls so far */
double fk_dropped_at;                    /* when the first write vanished (fk_drop_from); 0 none yet */
unsigned long fk_polls_late;             /* __atomic: polls more than 0.1 s after fk_dropped_at */
enum ibv_wc_status fk_orphan_status = IBV_WC_RETRY_EXC_ERR;  /* their fate when the target QP dies */
bool fk_drop_recv;                       /* the final WRITE WITH IMM lands but its receive never completes */
uint64_t fk_drop_lat_at;
int fk_active_width = 1, fk_active_speed = 8;   /* 1X FDR10 */
int fk_mr_access[8], fk_n_mr_access;     /* access flags of the MRs registered, in order */
int fk_qp_access[64], fk_n_qp_access;     /* access flags of the QPs moved to INIT, in order */
int fk_max_cqe;                 /* latency: this write's completion is dropped (it lands) */
int fk_down_queries;                     /* ... after this many port queries */
int fk_queries_of_down;
static struct ibv_context_ops fk_ops_dummy;
/* port counters: at write number fk_ctr_at, the stand-in sets fixture file fk_ctr_rel to fk_ctr_value */
struct rp_fx *fk_ctr_fx;
const char *fk_ctr_rel;
uint64_t fk_ctr_at, fk_ctr_value;
/* bidir: writes posted on QPs of the Nth device opened vanish; MTU: writes longer than N bytes vanish */
int fk_drop_open;
struct ibv_context *fk_drop_ctx;
uint32_t fk_drop_over;
static int qps_destroyed;
int fk_small_qps_destroyed;

void fk_reset(void)
{
	for (int i = 0; i < FK_KINDS; i++)
		fk_live[i] = 0;
	fk_calls = 0;
	fk_fail_at = 0;
	fk_fail_errno = EINVAL;
	fk_gid_link_local = false;
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
	__atomic_store_n(&fk_polls, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fk_polls_late, 0, __ATOMIC_SEQ_CST);
	fk_dropped_at = 0;
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
	fk_small_qps_destroyed = -1;
	qps_destroyed = 0;
	fk_cm_reset();
	(void)fk_ops_dummy;
}

/* Count one failable call; true when it is the one to fail (errno set). Caller holds no lock. */
bool fk_fail(enum fk_step step)
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

void fk_count(enum fk_kind k, int d)
{
	pthread_mutex_lock(&fk_lock);
	fk_live[k] += d;
	pthread_mutex_unlock(&fk_lock);
}

bool fk_all_released(void)
{
	for (int i = 0; i < FK_KINDS; i++)
		if (fk_live[i] != 0) {
			fprintf(stderr, "leak: kind %d live %d\n", i, fk_live[i]);
			return false;
		}
	return true;
}


FK_WRAP struct ibv_device **__wrap_ibv_get_device_list(int *n)
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

FK_WRAP void __wrap_ibv_free_device_list(struct ibv_device **list)
{
	free(list);
	fk_count(FK_DEVLIST, -1);
}

FK_WRAP const char *__wrap_ibv_get_device_name(struct ibv_device *dev)
{
	return dev == &fk_dev ? "fake0" : "?";
}

FK_WRAP struct ibv_context *__wrap_ibv_open_device(struct ibv_device *dev)
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

FK_WRAP int __wrap_ibv_close_device(struct ibv_context *ctx)
{
	pthread_mutex_lock(&fk_lock);
	if (ctx == fk_drop_ctx)
		fk_drop_ctx = NULL;   /* a later device may get the same address */
	pthread_mutex_unlock(&fk_lock);
	free(ctx);
	fk_count(FK_CTX, -1);
	return 0;
}

FK_WRAP struct ibv_pd *__wrap_ibv_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd;

	if (fk_fail(ST_PD))
		return NULL;
	pd = calloc(1, sizeof(*pd));
	pd->context = ctx;
	fk_count(FK_PD, 1);
	return pd;
}

FK_WRAP int __wrap_ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	fk_count(FK_PD, -1);
	return 0;
}

FK_WRAP struct ibv_cq *__wrap_ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
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

FK_WRAP int __wrap_ibv_destroy_cq(struct ibv_cq *cq)
{
	free(cq);
	fk_count(FK_CQ, -1);
	return 0;
}

FK_WRAP struct ibv_qp *__wrap_ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
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

FK_WRAP int __wrap_ibv_destroy_qp(struct ibv_qp *qp)
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
	qps_destroyed++;
	pthread_mutex_unlock(&fk_lock);
	free(qp);
	fk_count(FK_QP, -1);
	return 0;
}

FK_WRAP int __wrap_ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
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

FK_WRAP struct ibv_mr *__wrap_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	fk_log_access(access);
	return fk_reg(pd, addr, len);
}

FK_WRAP struct ibv_mr *__wrap_ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned int access)
{
	(void)iova;
	fk_log_access((int)access);
	return fk_reg(pd, addr, len);
}

FK_WRAP int __wrap_ibv_dereg_mr(struct ibv_mr *mr)
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

FK_WRAP int __wrap_ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	(void)ctx;
	(void)port;
	if (fk_fail(ST_QUERY_GID))
		return -1;
	memset(gid, 0, sizeof(*gid));
	if (fk_gid_link_local) {
		gid->raw[0] = 0xfe;
		gid->raw[1] = 0x80;
	} else {
		gid->raw[10] = gid->raw[11] = 0xff;
		gid->raw[12] = 10;
	}
	gid->raw[15] = (uint8_t)index;
	return 0;
}

FK_WRAP int __wrap_ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	char b;

	if (read(ctx->async_fd, &b, 1) != 1)
		return -1;
	memset(ev, 0, sizeof(*ev));
	ev->event_type = IBV_EVENT_PORT_ERR;
	ev->element.port_num = 1;
	return 0;
}

FK_WRAP void __wrap_ibv_ack_async_event(struct ibv_async_event *ev)
{
	(void)ev;
}

FK_WRAP int __wrap_ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	(void)ctx;
	memset(attr, 0, sizeof(*attr));
	attr->vendor_id = fk_vendor_id;
	return 0;
}

FK_WRAP int __wrap_rp_verbs_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
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

FK_WRAP int __wrap_rp_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
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
		if (len == 64 && fk_small_qps_destroyed < 0)
			fk_small_qps_destroyed = qps_destroyed;
		if (fk_ctr_fx && fk_writes == fk_ctr_at)
			rp_fx_writef(fk_ctr_fx, fk_ctr_rel, "%llu\n", (unsigned long long)fk_ctr_value);
		if (dst && ((fk_drop_from && fk_writes >= fk_drop_from) || (fk_drop_over && len > fk_drop_over) ||
			    (fk_drop_ctx && qp->context == fk_drop_ctx))) {
			/* lost on the wire: nothing lands, nothing completes until the target QP goes away */
			if (fk_dropped_at == 0)
				fk_dropped_at = rp_now();
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

FK_WRAP int __wrap_rp_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
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

FK_WRAP int __wrap_rp_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct fk_cq *c = (struct fk_cq *)cq;
	int got = 0;

	__atomic_add_fetch(&fk_polls, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&fk_lock);
	if (fk_dropped_at > 0 && rp_now() > fk_dropped_at + 0.1)
		__atomic_add_fetch(&fk_polls_late, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&fk_lock);
	if (fk_fail(ST_POLL))
		return -errno;
	pthread_mutex_lock(&fk_lock);
	while (got < n && c->head != c->tail && c->visible_at[c->head % RP_ARRAY_SIZE(c->q)] <= rp_now())
		wc[got++] = c->q[c->head++ % RP_ARRAY_SIZE(c->q)];
	pthread_mutex_unlock(&fk_lock);
	return got;
}
