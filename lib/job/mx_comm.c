/* mx_comm.c: the envelope, the checks on receipt and the engine's side channel over any transport;
 * see mx_comm.h. */
#include "job/mx_comm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

#define ENV_MAGIC 0x52504f42u   /* "RPOB" */

struct envelope {
	uint32_t magic;
	uint32_t round;
	uint64_t run;
	uint32_t pair;
	uint32_t len;                 /* payload bytes after the envelope */
	uint64_t seq;                 /* side channels: 1, 2, ... per channel and direction; 0 on control */
};

_Static_assert(sizeof(struct envelope) == MX_COMM_ENVELOPE, "mx_comm.h names the envelope's size");

uint64_t mx_comm_nonce_new(void)
{
	uint64_t n = 0;

	if (getrandom(&n, sizeof(n), GRND_NONBLOCK) != (ssize_t)sizeof(n))
		n = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ (uint64_t)(rp_now() * 1e9);
	return n ? n : 1;
}

void mx_comm_set_run(struct mx_comm *c, uint64_t run)
{
	c->run = run;
}

unsigned long mx_comm_dropped(const struct mx_comm *c)
{
	return __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
}

/* Envelope + payload in one malloc'd message for the transport. */
static int pack(const struct mx_comm *c, const struct mx_addr *addr, uint64_t seq, const void *buf, size_t len,
		void **msg_p, size_t *total_p)
{
	struct envelope env = { .magic = ENV_MAGIC, .round = addr->round, .run = c->run, .pair = addr->pair,
				.len = (uint32_t)len, .seq = seq };
	char *msg;

	if (len > (size_t)INT32_MAX - sizeof(env))
		return rp_error(-EMSGSIZE, "message of %zu bytes is too long", len);
	msg = malloc(sizeof(env) + len);
	if (!msg)
		return rp_error(-ENOMEM, "allocate a %zu-byte message", sizeof(env) + len);
	memcpy(msg, &env, sizeof(env));
	if (len)
		memcpy(msg + sizeof(env), buf, len);
	*msg_p = msg;
	*total_p = sizeof(env) + len;
	return 0;
}

static int send_addressed(struct mx_comm *c, enum mx_chan chan, int dst, int tag, const struct mx_addr *addr,
			  uint64_t seq, const void *buf, size_t len, double deadline)
{
	void *msg = NULL;
	size_t total = 0;
	int rc = pack(c, addr, seq, buf, len, &msg, &total);

	if (rc)
		return rc;
	return c->ops->send(c, chan, dst, tag, msg, total, deadline);   /* takes msg */
}

/* Does the message name this run and addr, with a sequence number above *last_seq (NULL: control)? */
static bool env_matches(struct mx_comm *c, const char *msg, size_t len, const struct mx_addr *addr,
			const uint64_t *last_seq, int src, int tag)
{
	struct envelope env;

	if (len < sizeof(env)) {
		rp_debug("dropped a %zu-byte message from rank %d (tag %d): too short for an envelope", len, src, tag);
		return false;
	}
	memcpy(&env, msg, sizeof(env));
	if (env.magic != ENV_MAGIC || env.len != len - sizeof(env)) {
		rp_debug("dropped a malformed message from rank %d (tag %d)", src, tag);
		return false;
	}
	if (env.run != c->run || env.round != addr->round || env.pair != addr->pair) {
		rp_debug("dropped a stale message from rank %d (tag %d): run %016llx round %u pair %u, want run "
			 "%016llx round %u pair %u", src, tag, (unsigned long long)env.run, env.round, env.pair,
			 (unsigned long long)c->run, addr->round, addr->pair);
		return false;
	}
	if (last_seq ? env.seq <= *last_seq : env.seq != 0) {
		rp_debug("dropped a duplicate message from rank %d (tag %d): sequence %llu, last %llu", src, tag,
			 (unsigned long long)env.seq, (unsigned long long)(last_seq ? *last_seq : 0));
		return false;
	}
	return true;
}

/* The next message of (chan, src, tag) that belongs to addr, until the deadline; others are dropped.
 * On 0, *msg_p (malloc'd) holds envelope + payload and *last_seq (when given) is its sequence. */
static int recv_addressed(struct mx_comm *c, enum mx_chan chan, int src, int tag, const struct mx_addr *addr,
			  uint64_t *last_seq, size_t max, char **msg_p, size_t *len_p, int *src_p, double deadline)
{
	for (;;) {
		void *msg = NULL;
		size_t len = 0;
		int from = -1, rc = c->ops->take(c, chan, src, tag, max ? max + sizeof(struct envelope) : 0, &msg, &len,
						 &from, deadline);

		if (rc == -EMSGSIZE) {
			*len_p = len > sizeof(struct envelope) ? len - sizeof(struct envelope) : 0;
			*src_p = from;
		}
		if (rc)
			return rc;
		if (env_matches(c, msg, len, addr, last_seq, from, tag)) {
			if (last_seq)
				memcpy(last_seq, (char *)msg + offsetof(struct envelope, seq), sizeof(*last_seq));
			*msg_p = msg;
			*len_p = len;
			*src_p = from;
			return 0;
		}
		free(msg);
		__atomic_add_fetch(&c->dropped, 1, __ATOMIC_RELAXED);
		/* look again at once: the right one may be queued behind it */
	}
}

int mx_comm_send(struct mx_comm *c, int dst, int tag, uint32_t round, const void *buf, size_t len, double deadline)
{
	return send_addressed(c, MX_CHAN_CTL, dst, tag, &(struct mx_addr){ .round = round }, 0, buf, len, deadline);
}

int mx_comm_recv(struct mx_comm *c, int src, int tag, uint32_t round, void **buf_p, size_t *len_p, int *src_p,
		 double deadline)
{
	return mx_comm_recv_max(c, src, tag, round, 0, buf_p, len_p, src_p, deadline);
}

int mx_comm_recv_max(struct mx_comm *c, int src, int tag, uint32_t round, size_t max, void **buf_p, size_t *len_p,
		     int *src_p, double deadline)
{
	char *msg = NULL;
	size_t len = 0, payload;
	int from = -1, rc;

	rc = recv_addressed(c, MX_CHAN_CTL, src, tag, &(struct mx_addr){ .round = round }, NULL, max, &msg, &len, &from,
			    deadline);
	if (rc == -EMSGSIZE) {
		*len_p = len;
		if (src_p)
			*src_p = from;
	}
	if (rc)
		return rc;
	payload = len - sizeof(struct envelope);
	memmove(msg, msg + sizeof(struct envelope), payload);
	*buf_p = msg;
	*len_p = payload;
	if (src_p)
		*src_p = from;
	return 0;
}

int mx_comm_allgather(struct mx_comm *c, const void *mine, size_t len, double deadline, char **all_p,
		      size_t **lens_p, size_t **offs_p)
{
	return c->ops->allgather(c, mine, len, deadline, all_p, lens_p, offs_p);
}

void mx_comm_abort(struct mx_comm *c, int code)
{
	c->ops->abort(c, code);
}

/* --- the engine's side channel -------------------------------------------------------------------- */

struct comm_oob {
	struct mx_comm *c;
	int peer, tag;
	struct mx_addr addr;
	uint64_t sent, seen;          /* sequence numbers: last sent, last received */
};

static int comm_oob_send(struct rp_oob *oob, const void *buf, size_t len, double deadline)
{
	struct comm_oob *m = oob->priv;
	int rc = send_addressed(m->c, MX_CHAN_PAIR, m->peer, m->tag, &m->addr, ++m->sent, buf, len, deadline);

	if (rc == -ETIMEDOUT)
		rp_debug("send to %s: no progress before the deadline", oob->peer);
	return rc;
}

static int comm_oob_recv(struct rp_oob *oob, void *buf, size_t len, double deadline)
{
	struct comm_oob *m = oob->priv;
	char *msg = NULL;
	size_t got = 0;
	int from = -1, rc;

	rc = recv_addressed(m->c, MX_CHAN_PAIR, m->peer, m->tag, &m->addr, &m->seen, 0, &msg, &got, &from, deadline);
	if (rc)
		return rc;
	got -= sizeof(struct envelope);
	if (got != len) {
		free(msg);
		return rp_error(-EMSGSIZE, "receive from %s: %zu bytes where %zu were expected", oob->peer, got, len);
	}
	memcpy(buf, msg + sizeof(struct envelope), len);
	free(msg);
	return 0;
}

static void comm_oob_close(struct rp_oob *oob)
{
	free(oob->priv);
	oob->priv = NULL;
}

static const struct rp_oob_ops comm_oob_ops = {
	.name = "mpi",
	.send = comm_oob_send,
	.recv = comm_oob_recv,
	.close = comm_oob_close,
};

int mx_comm_oob_open(struct mx_comm *c, struct rp_oob *oob, int peer, int tag, const struct mx_addr *addr)
{
	struct comm_oob *m = calloc(1, sizeof(*m));

	memset(oob, 0, sizeof(*oob));
	if (!m)
		return rp_error(-ENOMEM, "side channel to rank %d: allocate", peer);
	m->c = c;
	m->peer = peer;
	m->tag = tag;
	m->addr = *addr;
	oob->ops = &comm_oob_ops;
	oob->priv = m;
	/* addr->round counts every exchange of the run (sweep, bandwidth, retest and late rounds): "step",
	 * so that "round 4" never appears in a run of 3 bandwidth rounds (issue 26 item 17) */
	snprintf(oob->peer, sizeof(oob->peer), "rank %d (step %u of the run, pair %u, tag %d)", peer, addr->round + 1,
		 addr->pair, tag);
	return 0;
}
