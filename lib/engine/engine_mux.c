/* engine_mux.c: --bidir: two pair sequences (the forward and the reverse direction) over one side
 * channel, and the gate that starts their measured runs together; see engine.h ("Both directions").
 *
 * Each direction sees a channel of its own (an rp_oob with these ops). A message sent on the reverse
 * channel carries RP_MSGF_REVERSE; one received is routed by that flag (cleared before the engine sees
 * it) to its direction, or queued for the other one. The underlying channel is used by one thread at
 * a time (a lock; the MPI backend needs no thread support), and a receive waits on it in short slices
 * so the other direction's sends and receives go on meanwhile. The oob contract holds for each
 * channel: whole messages, deadlines, -ETIMEDOUT consumes nothing.
 */
#include "engine/engine.h"
#include "engine/engine_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/stop.h"
#include "base/util.h"

#define MUX_QUEUE 32              /* messages held for a direction that is not reading now */
#define MUX_SLICE_S 0.002         /* the longest a receive holds the underlying channel */

struct mux_chan {
	struct rp_engine_mux *m;
	unsigned idx;                 /* 0 forward, 1 reverse */
};

struct rp_engine_mux {
	struct rp_oob *under;
	pthread_mutex_t lock;         /* the underlying channel and the queues */
	struct rp_engine_msg q[2][MUX_QUEUE];
	unsigned head[2], n[2];
	bool ready[2], gone[2];
	struct rp_oob ch[2];
	struct mux_chan cp[2];
};

static int mux_send(struct rp_oob *oob, const void *buf, size_t len, double deadline)
{
	struct mux_chan *c = oob->priv;
	struct rp_engine_msg msg;
	int rc;

	if (len != sizeof(msg))
		return -EMSGSIZE;
	memcpy(&msg, buf, sizeof(msg));
	if (c->idx)
		msg.flags |= RP_MSGF_REVERSE;
	pthread_mutex_lock(&c->m->lock);
	rc = rp_oob_send(c->m->under, &msg, sizeof(msg), deadline);
	pthread_mutex_unlock(&c->m->lock);
	return rc;
}

/* A message for direction idx into its queue; false when the queue is full. Lock held. */
static bool mux_queue(struct rp_engine_mux *m, unsigned idx, const struct rp_engine_msg *msg)
{
	if (m->n[idx] == MUX_QUEUE)
		return false;
	m->q[idx][(m->head[idx] + m->n[idx]++) % MUX_QUEUE] = *msg;
	return true;
}

static int mux_recv(struct rp_oob *oob, void *buf, size_t len, double deadline)
{
	struct mux_chan *c = oob->priv;
	struct rp_engine_mux *m = c->m;
	struct rp_engine_msg msg;

	if (len != sizeof(msg))
		return -EMSGSIZE;
	for (;;) {
		double now = rp_now(), slice = now + MUX_SLICE_S < deadline ? now + MUX_SLICE_S : deadline;
		int rc;

		pthread_mutex_lock(&m->lock);
		if (m->n[c->idx]) {
			memcpy(buf, &m->q[c->idx][m->head[c->idx]], sizeof(msg));
			m->head[c->idx] = (m->head[c->idx] + 1) % MUX_QUEUE;
			m->n[c->idx]--;
			pthread_mutex_unlock(&m->lock);
			return 0;
		}
		rc = rp_oob_recv(m->under, &msg, sizeof(msg), slice);
		if (rc == 0) {
			unsigned to = (msg.flags & RP_MSGF_REVERSE) ? 1 : 0;

			msg.flags &= ~RP_MSGF_REVERSE;
			if (to == c->idx) {
				pthread_mutex_unlock(&m->lock);
				memcpy(buf, &msg, sizeof(msg));
				return 0;
			}
			if (!mux_queue(m, to, &msg)) {
				pthread_mutex_unlock(&m->lock);
				return rp_error(-ENOBUFS, "side channel to %s: %u messages of the other direction unread",
						m->under->peer, MUX_QUEUE);
			}
		}
		pthread_mutex_unlock(&m->lock);
		if (rc && rc != -ETIMEDOUT)
			return rc;
		if (rc == -ETIMEDOUT && rp_now() >= deadline)
			return -ETIMEDOUT;
	}
}

static void mux_close(struct rp_oob *oob)
{
	(void)oob;   /* the underlying channel belongs to the caller of the pair */
}

static const struct rp_oob_ops mux_ops = {
	.name = "bidir",
	.send = mux_send,
	.recv = mux_recv,
	.close = mux_close,
};

int rp_engine_mux_open(struct rp_oob *under, struct rp_engine_mux **m_p)
{
	struct rp_engine_mux *m = calloc(1, sizeof(*m));

	*m_p = NULL;
	if (!m)
		return rp_error(-ENOMEM, "side channel to %s: allocate the multiplexer", under->peer);
	m->under = under;
	pthread_mutex_init(&m->lock, NULL);
	for (unsigned i = 0; i < 2; i++) {
		m->cp[i] = (struct mux_chan){ m, i };
		m->ch[i].ops = &mux_ops;
		m->ch[i].priv = &m->cp[i];
		rp_strlcpy(m->ch[i].peer, under->peer, sizeof(m->ch[i].peer));
	}
	*m_p = m;
	return 0;
}

struct rp_oob *rp_engine_mux_chan(struct rp_engine_mux *m, unsigned idx)
{
	return &m->ch[idx ? 1 : 0];
}

void rp_engine_mux_free(struct rp_engine_mux *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void rp_engine_mux_gate(struct rp_engine_mux *m, unsigned idx, double deadline)
{
	unsigned other = idx ? 0 : 1;

	pthread_mutex_lock(&m->lock);
	m->ready[idx] = true;
	while (!m->ready[other] && !m->gone[other] && rp_now() < deadline && !rp_stop_requested()) {
		struct timespec ts = { 0, (long)(RP_ENGINE_IDLE_WAIT_S * 1e9) };

		pthread_mutex_unlock(&m->lock);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&m->lock);
	}
	pthread_mutex_unlock(&m->lock);
}

void rp_engine_mux_gone(struct rp_engine_mux *m, unsigned idx)
{
	pthread_mutex_lock(&m->lock);
	m->gone[idx ? 1 : 0] = true;
	pthread_mutex_unlock(&m->lock);
}
