/* mx_tcomm.c: the in-process transport with faults; see mx_tcomm.h. */
#include "mx_tcomm.h"

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"

struct tmsg {
	struct tmsg *next;
	enum mx_chan chan;
	int src, dst, tag;
	double due;
	void *bytes;
	size_t len;
};

struct mxt_world {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int n, per_node, tag_ub;
	struct tmsg *head, **tail;
	struct tmsg *last_sent;       /* per (chan, src, dst, tag): a history of copies, for replays */
	mxt_fault_fn fault;
	void *fault_arg;
	unsigned long seq;
	size_t grow;                  /* MXT_GROW's bytes */
	unsigned long refused;        /* __atomic: takes over max_len */
	/* the one start-up allgather */
	void **gather;
	size_t *gather_len;
	int gathered;
};

struct mxt_world *mxt_world_new(int n, int ranks_per_node, int tag_ub)
{
	struct mxt_world *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->n = n;
	w->per_node = ranks_per_node > 0 ? ranks_per_node : 1;
	w->tag_ub = tag_ub;
	w->tail = &w->head;
	w->gather = calloc((size_t)n, sizeof(*w->gather));
	w->gather_len = calloc((size_t)n, sizeof(*w->gather_len));
	return w;
}

static void list_free(struct tmsg *m)
{
	while (m) {
		struct tmsg *next = m->next;

		free(m->bytes);
		free(m);
		m = next;
	}
}

void mxt_world_free(struct mxt_world *w)
{
	if (!w)
		return;
	list_free(w->head);
	list_free(w->last_sent);
	for (int r = 0; r < w->n; r++)
		free(w->gather[r]);
	free(w->gather);
	free(w->gather_len);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}

void mxt_set_fault(struct mxt_world *w, mxt_fault_fn fn, void *arg)
{
	w->fault = fn;
	w->fault_arg = arg;
}

unsigned long mxt_seq(struct mxt_world *w)
{
	return __atomic_add_fetch(&w->seq, 1, __ATOMIC_SEQ_CST);
}

void mxt_set_grow(struct mxt_world *w, size_t bytes)
{
	w->grow = bytes;
}

unsigned long mxt_refused(struct mxt_world *w)
{
	return __atomic_load_n(&w->refused, __ATOMIC_SEQ_CST);
}

size_t mxt_queued(struct mxt_world *w)
{
	size_t n = 0;

	pthread_mutex_lock(&w->lock);
	for (struct tmsg *m = w->head; m; m = m->next)
		n++;
	pthread_mutex_unlock(&w->lock);
	return n;
}

static struct tmsg *tmsg_new(enum mx_chan chan, int src, int dst, int tag, const void *bytes, size_t len, double due)
{
	struct tmsg *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->bytes = malloc(len ? len : 1);
	if (!m->bytes) {
		free(m);
		return NULL;
	}
	memcpy(m->bytes, bytes, len);
	*m = (struct tmsg){ .chan = chan, .src = src, .dst = dst, .tag = tag, .due = due, .bytes = m->bytes, .len = len };
	return m;
}

static void enqueue(struct mxt_world *w, struct tmsg *m)
{
	m->next = NULL;
	*w->tail = m;
	w->tail = &m->next;
}

/* The sender's previous message on (chan, dst, tag), and remember this one. Call with the lock held. */
static struct tmsg *history_swap(struct mxt_world *w, const struct tmsg *now)
{
	struct tmsg **pp = &w->last_sent, *prev = NULL, *copy;

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->chan == now->chan && (*pp)->src == now->src && (*pp)->dst == now->dst && (*pp)->tag == now->tag)
			break;
	if (*pp) {
		prev = *pp;
		*pp = prev->next;
	}
	copy = tmsg_new(now->chan, now->src, now->dst, now->tag, now->bytes, now->len, 0);
	if (copy) {
		copy->next = w->last_sent;
		w->last_sent = copy;
	}
	return prev;
}

static int t_send(struct mx_comm *c, enum mx_chan chan, int dst, int tag, void *msg, size_t len, double deadline)
{
	struct mxt_world *w = c->priv;
	struct mxt_event ev = { .op = MXT_SEND, .rank = c->rank, .peer = dst, .chan = chan, .tag = tag, .len = len };
	double delay = 0;
	int act = MXT_DELIVER;
	struct tmsg *m, *stale;

	(void)deadline;
	ev.seq = mxt_seq(w);
	if (w->fault)
		act = w->fault(w->fault_arg, &ev, &delay);
	if (act & MXT_FAIL) {
		free(msg);
		return -EIO;
	}
	if (act & MXT_CORRUPT && len > MX_COMM_ENVELOPE)
		((unsigned char *)msg)[MX_COMM_ENVELOPE] ^= 0x5a;   /* the payload's first byte */
	if (act & MXT_GROW && w->grow) {
		void *big = calloc(1, len + w->grow);

		if (!big) {
			free(msg);
			return -ENOMEM;
		}
		memcpy(big, msg, len);
		free(msg);
		msg = big;
		len += w->grow;
	}
	m = tmsg_new(chan, c->rank, dst, tag, msg, len, rp_now() + delay);
	free(msg);
	if (!m)
		return -ENOMEM;
	pthread_mutex_lock(&w->lock);
	stale = history_swap(w, m);
	if (stale && (act & MXT_STALE_FIRST)) {
		stale->due = 0;
		enqueue(w, stale);
		stale = NULL;
	}
	free(stale ? stale->bytes : NULL);
	free(stale);
	if (act & MXT_DROP) {
		free(m->bytes);
		free(m);
	} else {
		if (act & MXT_DUP) {
			struct tmsg *d = tmsg_new(chan, c->rank, dst, tag, m->bytes, len, m->due);

			if (d)
				enqueue(w, d);
		}
		enqueue(w, m);
	}
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/* The first due message for (chan, dst, src, tag), unlinked; NULL and *next_due otherwise. */
static struct tmsg *queue_take(struct mxt_world *w, enum mx_chan chan, int dst, int src, int tag, double now,
			       double *next_due)
{
	for (struct tmsg **pp = &w->head; *pp; pp = &(*pp)->next) {
		struct tmsg *m = *pp;

		if (m->chan != chan || m->dst != dst || m->tag != tag || (src >= 0 && m->src != src))
			continue;
		if (m->due > now) {
			if (m->due < *next_due)
				*next_due = m->due;
			continue;
		}
		*pp = m->next;
		if (w->tail == &m->next)
			w->tail = pp;
		return m;
	}
	return NULL;
}

static void cond_wait_until(struct mxt_world *w, double until)
{
	double left = until - rp_now();
	struct timespec ts;

	if (left <= 0)
		return;
	if (left > 0.05)
		left = 0.05;          /* wake now and then: delayed messages become due without a signal */
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(left * 1e9);
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_cond_timedwait(&w->cond, &w->lock, &ts);
}

static int t_take(struct mx_comm *c, enum mx_chan chan, int src, int tag, size_t max_len, void **msg_p,
		  size_t *len_p, int *src_p, double deadline)
{
	struct mxt_world *w = c->priv;
	struct tmsg *m = NULL;
	double delay = 0;
	int act = MXT_DELIVER;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		double now = rp_now(), next_due = deadline;

		m = queue_take(w, chan, c->rank, src, tag, now, &next_due);
		if (m || now >= deadline)
			break;
		cond_wait_until(w, next_due < deadline ? next_due : deadline);
	}
	pthread_mutex_unlock(&w->lock);
	if (!m)
		return -ETIMEDOUT;
	if (w->fault) {
		struct mxt_event ev = { .op = MXT_TAKE, .rank = c->rank, .peer = m->src, .chan = chan, .tag = tag,
					.len = m->len, .seq = mxt_seq(w) };

		act = w->fault(w->fault_arg, &ev, &delay);
	}
	if (act & MXT_FAIL) {
		free(m->bytes);        /* taken off the queue, then lost */
		free(m);
		return -EIO;
	}
	if (max_len && m->len > max_len) {   /* consumed, never handed over */
		__atomic_add_fetch(&w->refused, 1, __ATOMIC_SEQ_CST);
		*len_p = m->len;
		*src_p = m->src;
		free(m->bytes);
		free(m);
		return -EMSGSIZE;
	}
	*msg_p = m->bytes;
	*len_p = m->len;
	*src_p = m->src;
	free(m);
	return 0;
}

static int t_allgather(struct mx_comm *c, const void *mine, size_t len, double deadline, char **all_p, size_t **lens_p,
		       size_t **offs_p)
{
	struct mxt_world *w = c->priv;
	size_t total = 0;
	int rc = 0;

	pthread_mutex_lock(&w->lock);
	w->gather[c->rank] = malloc(len ? len : 1);
	if (w->gather[c->rank])
		memcpy(w->gather[c->rank], mine, len);
	w->gather_len[c->rank] = len;
	w->gathered++;
	pthread_cond_broadcast(&w->cond);
	while (w->gathered < w->n && rp_now() < deadline)
		cond_wait_until(w, deadline);
	if (w->gathered < w->n)
		rc = -ETIMEDOUT;
	for (int r = 0; !rc && r < w->n; r++)
		total += w->gather_len[r];
	*all_p = rc ? NULL : malloc(total ? total : 1);
	*lens_p = rc ? NULL : calloc((size_t)w->n, sizeof(size_t));
	*offs_p = rc ? NULL : calloc((size_t)w->n, sizeof(size_t));
	if (!rc && (!*all_p || !*lens_p || !*offs_p))
		rc = -ENOMEM;
	for (int r = 0, off = 0; !rc && r < w->n; off += (int)w->gather_len[r], r++) {
		memcpy(*all_p + off, w->gather[r], w->gather_len[r]);
		(*lens_p)[r] = w->gather_len[r];
		(*offs_p)[r] = (size_t)off;
	}
	pthread_mutex_unlock(&w->lock);
	if (rc) {
		free(*all_p);
		free(*lens_p);
		free(*offs_p);
		*all_p = NULL;
		*lens_p = *offs_p = NULL;
	}
	return rc;
}

static void t_abort(struct mx_comm *c, int code)
{
	(void)c;
	(void)code;
}

static const struct mx_comm_ops tcomm_ops = {
	.send = t_send,
	.take = t_take,
	.allgather = t_allgather,
	.abort = t_abort,
};

void mxt_comm(struct mxt_world *w, int r, struct mx_comm *c)
{
	memset(c, 0, sizeof(*c));
	c->ops = &tcomm_ops;
	c->priv = w;
	c->rank = r;
	c->size = w->n;
	c->local_rank = r % w->per_node;
	c->local_size = w->per_node;
	c->tag_ub = w->tag_ub;
}

/* --- a stand-in measurement and a table --------------------------------------------------------- */

void mxt_eps(struct mx_ep *eps, size_t n)
{
	memset(eps, 0, n * sizeof(*eps));
	for (size_t e = 0; e < n; e++) {
		snprintf(eps[e].ep.node, sizeof(eps[e].ep.node), "n%zu", e);
		snprintf(eps[e].ep.device, sizeof(eps[e].ep.device), "dev%zu", e);
		eps[e].ep.port = 1;
		eps[e].ep.gid_index = 0;
		eps[e].ep.link_gbps = 100;
		eps[e].owner = (int)e;
	}
}

static int dev_num(const char *dev)
{
	return strncmp(dev, "dev", 3) == 0 ? atoi(dev + 3) : -1;
}

struct reply {
	uint64_t v;
	char device[RP_NAME_MAX];
};

static void ep_named(struct rp_endpoint *e, const char *device)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->node, sizeof(e->node), "n%d", dev_num(device));
	snprintf(e->device, sizeof(e->device), "%s", device);
	e->port = 1;
}

/* Writer: a fresh value V to the target, which answers V and its device; the result is ok at V Gb/s
 * (recorded in f->written[src][dst]); a lost or wrong answer is PEER_LOST or DATA_MISMATCH. */
static int fake_pair(void *arg, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		     const struct rp_engine_port *local, struct rp_oob *oob, struct mx_hold_side *hold,
		     struct rp_pair_result *res)
{
	(void)hold;
	struct mxt_fake *f = arg;
	double deadline = rp_now() + cfg->timeout_s;
	struct rp_endpoint me, peer;
	struct reply rep;
	uint64_t v;
	int rc;

	ep_named(&me, local->device);
	if (role == RP_ROLE_TARGET) {
		uint64_t b = 0;

		rc = rp_oob_recv(oob, &v, sizeof(v), deadline);
		if (!rc)
			rc = rp_oob_recv(oob, &b, sizeof(b), deadline);
		memset(&rep, 0, sizeof(rep));
		rep.v = b == 2 * v + 1 ? v : 0;     /* a duplicate or stale first message shows */
		snprintf(rep.device, sizeof(rep.device), "%s", local->device);
		if (!rc)
			rc = rp_oob_send(oob, &rep, sizeof(rep), deadline);
		ep_named(&peer, "dev-1");
		rp_pair_result_init(res, &peer, &me);
		res->status = RP_ST_OK;
		if (rc)
			rp_pair_result_fail(res, RP_ST_PEER_LOST, "stand-in target: %d", rc);
		return 0;
	}
	v = __atomic_add_fetch(&f->next_v, 1, __ATOMIC_SEQ_CST);
	rc = rp_oob_send(oob, &v, sizeof(v), deadline);
	if (!rc)
		rc = rp_oob_send(oob, &(uint64_t){ 2 * v + 1 }, sizeof(v), deadline);
	if (!rc)
		rc = rp_oob_recv(oob, &rep, sizeof(rep), deadline);
	rep.device[sizeof(rep.device) - 1] = '\0';
	ep_named(&peer, rc ? "dev-1" : rep.device);
	rp_pair_result_init(res, &me, &peer);
	if (rc) {
		rp_pair_result_fail(res, RP_ST_PEER_LOST, "stand-in writer: %d", rc);
	} else if (rep.v != v) {
		rp_pair_result_fail(res, RP_ST_DATA_MISMATCH, "stand-in writer: sent %llu, answer %llu",
				    (unsigned long long)v, (unsigned long long)rep.v);
	} else {
		int s = dev_num(local->device), d = dev_num(rep.device);

		/* a pass as the engine records it (verified, one attempt): a plain side, sent as its record */
		res->status = RP_ST_OK;
		res->gbps = (double)v;
		res->elapsed_s = (double)v / 1000;   /* a time a brief pass carries alone (mx_wire.h) */
		res->verified = true;
		rp_pair_result_record_attempt(res, cfg->qp.qp_timeout);
		if (s >= 0 && d >= 0 && s < MXT_MAX_EPS && d < MXT_MAX_EPS)
			f->written[s][d] = (double)v;
	}
	return 0;
}

void mxt_fake_init(struct mxt_fake *f)
{
	memset(f, 0, sizeof(*f));
	f->measure.pair = fake_pair;
	f->measure.arg = f;
}
