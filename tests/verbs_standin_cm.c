/* verbs_standin_cm.c: the rdmacm side of the verbs stand-in (see verbs_standin.h).
 *
 * Each channel is a queue of events with the time each becomes visible, and a pipe that is never
 * written: the engine polls its descriptor with a short timeout and then asks rdma_get_cm_event,
 * which answers EAGAIN while nothing is visible (the channel is non-blocking, as the engine makes
 * it). All state is under fk_lock: both sides of a pair run in two threads of this process.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "verbs_standin.h"

/* weak: see verbs_standin.c */
#define FK_WRAP __attribute__((weak))

int fk_cm_fault_on = -1;
enum fk_cm_fault fk_cm_fault;
int fk_cm_replace_with;
int fk_cm_replace_status;
double fk_cm_delay_s;
int fk_cm_delivered[32];

struct fk_cm_event {
	struct rdma_cm_event ev;
	double visible_at;               /* < 0: never */
	uint8_t priv[64];                /* the connect's private data (CONNECT_REQUEST) */
	bool owns_id;                    /* a request's new id, not handed out (yet): freed with the event */
	struct fk_cm_event *next;
};

struct fk_cm_ch {
	struct rdma_event_channel ch;
	int wfd;                         /* the pipe's other end (never written) */
	struct fk_cm_event *head;
};

struct fk_cm_id {
	struct rdma_cm_id id;
	struct fk_cm_id *peer;           /* the other end of the connection */
	uint32_t remote_qpn;             /* the peer's QP number, from its connect or accept */
	uint16_t port;                   /* listener: its port */
	uint16_t dst_port;               /* connector: the port it resolved */
	bool listening;
};

static struct fk_cm_id *fk_cm_listeners[16];
static uint16_t fk_cm_next_port = 20000;

void fk_cm_reset(void)
{
	fk_cm_fault_on = -1;
	fk_cm_fault = FK_CM_REPLACE;
	fk_cm_replace_with = 0;
	fk_cm_replace_status = 0;
	fk_cm_delay_s = 0;
	memset(fk_cm_delivered, 0, sizeof(fk_cm_delivered));
	memset(fk_cm_listeners, 0, sizeof(fk_cm_listeners));
}

struct rdma_event_channel *__wrap_rdma_create_event_channel(void);
void __wrap_rdma_destroy_event_channel(struct rdma_event_channel *channel);
int __wrap_rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
			  enum rdma_port_space ps);
int __wrap_rdma_destroy_id(struct rdma_cm_id *id);
int __wrap_rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr);
int __wrap_rdma_listen(struct rdma_cm_id *id, int backlog);
__be16 __wrap_rdma_get_src_port(struct rdma_cm_id *id);
int __wrap_rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst, int timeout_ms);
int __wrap_rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms);
int __wrap_rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param);
int __wrap_rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param);
int __wrap_rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len);
int __wrap_rdma_establish(struct rdma_cm_id *id);
int __wrap_rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event);
int __wrap_rdma_ack_cm_event(struct rdma_cm_event *event);
int __wrap_rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *attr, int *mask);

/* Queue an event of type on id's channel, with the fault applied. Caller holds fk_lock. */
static struct fk_cm_event *cm_queue(struct fk_cm_id *id, enum rdma_cm_event_type type, int status)
{
	struct fk_cm_ch *ch = (struct fk_cm_ch *)id->id.channel;
	struct fk_cm_event *e = calloc(1, sizeof(*e)), **tail;

	e->ev.id = &id->id;
	e->ev.event = type;
	e->ev.status = status;
	e->visible_at = 0;
	if ((int)type == fk_cm_fault_on) {
		if (fk_cm_fault == FK_CM_REPLACE) {
			e->ev.event = (enum rdma_cm_event_type)fk_cm_replace_with;
			e->ev.status = fk_cm_replace_status;
		} else if (fk_cm_fault == FK_CM_NEVER) {
			e->visible_at = -1;
		} else {
			e->visible_at = rp_now() + fk_cm_delay_s;
		}
	}
	for (tail = &ch->head; *tail; tail = &(*tail)->next)
		;
	*tail = e;
	return e;
}

FK_WRAP struct rdma_event_channel *__wrap_rdma_create_event_channel(void)
{
	struct fk_cm_ch *ch = calloc(1, sizeof(*ch));
	int p[2];

	if (!ch || pipe(p) != 0) {
		free(ch);
		return NULL;
	}
	ch->ch.fd = p[0];
	ch->wfd = p[1];
	fk_count(FK_CM_CH, 1);
	return &ch->ch;
}

/* The events never read go with the channel, and the ids of the requests among them. */
FK_WRAP void __wrap_rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct fk_cm_ch *ch = (struct fk_cm_ch *)channel;
	int ids = 0;

	pthread_mutex_lock(&fk_lock);
	while (ch->head) {
		struct fk_cm_event *e = ch->head;

		ch->head = e->next;
		if (e->owns_id) {
			struct fk_cm_id *child = (struct fk_cm_id *)e->ev.id;

			if (child->peer)
				child->peer->peer = NULL;
			free(child);
			ids++;
		}
		free(e);
	}
	pthread_mutex_unlock(&fk_lock);
	fk_count(FK_CM_ID, -ids);
	close(ch->ch.fd);
	close(ch->wfd);
	free(ch);
	fk_count(FK_CM_CH, -1);
}

/* A new id (the caller counts it: fk_count takes fk_lock) */
static struct fk_cm_id *cm_new_id(struct rdma_event_channel *channel, void *context)
{
	struct fk_cm_id *id = calloc(1, sizeof(*id));

	id->id.channel = channel;
	id->id.context = context;
	id->id.ps = RDMA_PS_TCP;
	return id;
}

FK_WRAP int __wrap_rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
				  enum rdma_port_space ps)
{
	(void)ps;
	*id = &cm_new_id(channel, context)->id;
	fk_count(FK_CM_ID, 1);
	return 0;
}

FK_WRAP int __wrap_rdma_destroy_id(struct rdma_cm_id *id)
{
	struct fk_cm_id *f = (struct fk_cm_id *)id;

	pthread_mutex_lock(&fk_lock);
	if (f->peer)
		f->peer->peer = NULL;
	for (size_t i = 0; i < RP_ARRAY_SIZE(fk_cm_listeners); i++)
		if (fk_cm_listeners[i] == f)
			fk_cm_listeners[i] = NULL;
	pthread_mutex_unlock(&fk_lock);
	free(f);
	fk_count(FK_CM_ID, -1);
	return 0;
}

FK_WRAP int __wrap_rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id;
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	return 0;
}

FK_WRAP int __wrap_rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct fk_cm_id *f = (struct fk_cm_id *)id;

	(void)backlog;
	pthread_mutex_lock(&fk_lock);
	f->listening = true;
	f->port = fk_cm_next_port++;
	for (size_t i = 0; i < RP_ARRAY_SIZE(fk_cm_listeners); i++)
		if (!fk_cm_listeners[i]) {
			fk_cm_listeners[i] = f;
			break;
		}
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

FK_WRAP __be16 __wrap_rdma_get_src_port(struct rdma_cm_id *id)
{
	return htons(((struct fk_cm_id *)id)->port);
}

static uint16_t sockaddr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
}

FK_WRAP int __wrap_rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst, int timeout_ms)
{
	(void)src;
	(void)timeout_ms;
	pthread_mutex_lock(&fk_lock);
	((struct fk_cm_id *)id)->dst_port = sockaddr_port(dst);
	cm_queue((struct fk_cm_id *)id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

FK_WRAP int __wrap_rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	(void)timeout_ms;
	pthread_mutex_lock(&fk_lock);
	cm_queue((struct fk_cm_id *)id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

/* A CONNECT_REQUEST on the listener of the port id resolved, or UNREACHABLE when none listens there. */
FK_WRAP int __wrap_rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct fk_cm_id *f = (struct fk_cm_id *)id, *l = NULL;
	bool made = false;

	pthread_mutex_lock(&fk_lock);
	for (size_t i = 0; i < RP_ARRAY_SIZE(fk_cm_listeners); i++)
		if (fk_cm_listeners[i] && fk_cm_listeners[i]->port == f->dst_port)
			l = fk_cm_listeners[i];
	if (!l) {
		cm_queue(f, RDMA_CM_EVENT_UNREACHABLE, -ECONNREFUSED);
	} else {
		struct fk_cm_id *child = cm_new_id(l->id.channel, l->id.context);
		struct fk_cm_event *e;

		made = true;
		child->peer = f;
		child->remote_qpn = param->qp_num;
		f->peer = child;
		e = cm_queue(child, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
		e->ev.listen_id = &l->id;
		e->owns_id = true;
		e->ev.param.conn = *param;
		if (param->private_data_len <= sizeof(e->priv)) {
			memcpy(e->priv, param->private_data, param->private_data_len);
			e->ev.param.conn.private_data = e->priv;
		} else {
			e->ev.param.conn.private_data_len = 0;
		}
	}
	pthread_mutex_unlock(&fk_lock);
	if (made)
		fk_count(FK_CM_ID, 1);
	return 0;
}

FK_WRAP int __wrap_rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct fk_cm_id *f = (struct fk_cm_id *)id;

	pthread_mutex_lock(&fk_lock);
	if (f->peer) {
		f->peer->remote_qpn = param->qp_num;
		cm_queue(f->peer, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	}
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

FK_WRAP int __wrap_rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	struct fk_cm_id *f = (struct fk_cm_id *)id;

	(void)private_data;
	(void)private_data_len;
	pthread_mutex_lock(&fk_lock);
	if (f->peer)
		cm_queue(f->peer, RDMA_CM_EVENT_REJECTED, 28);   /* IB CM: consumer-defined reject */
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

FK_WRAP int __wrap_rdma_establish(struct rdma_cm_id *id)
{
	struct fk_cm_id *f = (struct fk_cm_id *)id;

	pthread_mutex_lock(&fk_lock);
	if (f->peer)
		cm_queue(f->peer, RDMA_CM_EVENT_ESTABLISHED, 0);
	pthread_mutex_unlock(&fk_lock);
	return 0;
}

/* The channel's next event when it is visible, else EAGAIN (the channel is non-blocking). A channel
 * delivers in order: an event that is late or never comes holds back those queued behind it. */
FK_WRAP int __wrap_rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct fk_cm_ch *ch = (struct fk_cm_ch *)channel;
	struct fk_cm_event *e;

	pthread_mutex_lock(&fk_lock);
	e = ch->head;
	if (!e || e->visible_at < 0 || e->visible_at > rp_now()) {
		pthread_mutex_unlock(&fk_lock);
		errno = EAGAIN;
		return -1;
	}
	ch->head = e->next;
	if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST)
		e->owns_id = false;   /* the request's id is the caller's now */
	if ((unsigned)e->ev.event < RP_ARRAY_SIZE(fk_cm_delivered))
		fk_cm_delivered[e->ev.event]++;
	pthread_mutex_unlock(&fk_lock);
	fk_count(FK_CM_EV, 1);
	*event = &e->ev;
	return 0;
}

/* A request that arrived as another event (a fault) takes its id with it, as librdmacm would. */
FK_WRAP int __wrap_rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct fk_cm_event *e = (struct fk_cm_event *)event;

	if (e->owns_id) {
		pthread_mutex_lock(&fk_lock);
		if (((struct fk_cm_id *)e->ev.id)->peer)
			((struct fk_cm_id *)e->ev.id)->peer->peer = NULL;
		pthread_mutex_unlock(&fk_lock);
		free(e->ev.id);
		fk_count(FK_CM_ID, -1);
	}
	free(e);
	fk_count(FK_CM_EV, -1);
	return 0;
}

/* RTR: the peer's QP number and a path; RTS: the PSN. The engine adds its timeout and retries. */
FK_WRAP int __wrap_rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *attr, int *mask)
{
	struct fk_cm_id *f = (struct fk_cm_id *)id;

	pthread_mutex_lock(&fk_lock);
	if (attr->qp_state == IBV_QPS_RTR) {
		attr->dest_qp_num = f->remote_qpn;
		attr->path_mtu = IBV_MTU_1024;
		attr->rq_psn = 0;
		attr->max_dest_rd_atomic = 1;
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC;
	} else {
		attr->sq_psn = 0;
		attr->max_rd_atomic = 1;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	pthread_mutex_unlock(&fk_lock);
	return 0;
}
