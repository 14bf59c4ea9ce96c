/* oob_mpi.c: the side channel and control messages over MPI, every wait polled against a deadline;
 * see oob_mpi.h. Built only when MPI is found. */
#include "oob_mpi.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Comm comm_ctl = MPI_COMM_NULL, comm_pair = MPI_COMM_NULL;
static int tag_ub = 32767;

/* Sleep between polls, doubling from 20 us to 2 ms: quick answers stay quick, and ranks waiting
 * long (for a round's end) leave the CPU to the ones measuring (rxe is software). */
static void poll_pause(long *ns)
{
	struct timespec ts = { 0, *ns };

	nanosleep(&ts, NULL);
	if (*ns < 2000000)
		*ns *= 2;
}

static int mpi_err(int err, const char *what, int peer)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;

	MPI_Error_string(err, text, &len);
	return rp_error(-EIO, "%s rank %d: %s", what, peer, text);
}

/* --- sends: a private copy each; one that timed out is kept until MPI is done with it ----------------- */

struct pending {
	MPI_Request req;
	void *copy;
	struct pending *next;
};

static struct pending *pending;   /* under mpi_lock */

/* Release the sends MPI has finished with. Call with mpi_lock held. */
static void pending_sweep(void)
{
	for (struct pending **pp = &pending; *pp;) {
		struct pending *p = *pp;
		int done = 0;

		if (MPI_Test(&p->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) {
			*pp = p->next;
			if (done)
				free(p->copy);   /* on an error MPI may still hold the buffer: leak it */
			free(p);
		} else {
			pp = &p->next;
		}
	}
}

/* Keep req and copy until MPI has finished with them. Call with mpi_lock held. */
static void pending_keep(MPI_Request *req, void *copy)
{
	struct pending *p = malloc(sizeof(*p));

	if (!p) {
		MPI_Request_free(req);    /* MPI completes it on its own; the copy stays allocated */
		return;
	}
	p->req = *req;
	p->copy = copy;
	p->next = pending;
	pending = p;
}

int rp_mpi_init(int *argc, char ***argv, struct rp_mpi_info *info)
{
	int provided = 0, flag = 0, *ub = NULL;
	MPI_Comm local;

	if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
		return rp_error(-EIO, "MPI_Init_thread failed");
	if (provided < MPI_THREAD_SERIALIZED) {
		MPI_Finalize();
		return rp_error(-ENOTSUP, "MPI gives thread level %d; serialized (%d) is needed", provided,
				MPI_THREAD_SERIALIZED);
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &info->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &info->size);
	MPI_Comm_dup(MPI_COMM_WORLD, &comm_ctl);
	MPI_Comm_dup(MPI_COMM_WORLD, &comm_pair);
	MPI_Comm_set_errhandler(comm_ctl, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(comm_pair, MPI_ERRORS_RETURN);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	if (flag && ub && *ub > 0)
		tag_ub = *ub;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, info->rank, MPI_INFO_NULL, &local);
	MPI_Comm_rank(local, &info->local_rank);
	MPI_Comm_size(local, &info->local_size);
	MPI_Comm_free(&local);
	return 0;
}

void rp_mpi_finalize(void)
{
	struct pending *left;

	pthread_mutex_lock(&mpi_lock);
	pending_sweep();
	left = pending;
	pending = NULL;
	for (struct pending *p = left; p; p = p->next)
		MPI_Request_free(&p->req);      /* still in flight: MPI finishes them before it finalizes */
	pthread_mutex_unlock(&mpi_lock);
	if (comm_ctl != MPI_COMM_NULL)
		MPI_Comm_free(&comm_ctl);
	if (comm_pair != MPI_COMM_NULL)
		MPI_Comm_free(&comm_pair);
	MPI_Finalize();
	while (left) {                          /* MPI is done with every buffer now */
		struct pending *p = left;

		left = p->next;
		free(p->copy);
		free(p);
	}
}

void rp_mpi_abort(int code)
{
	MPI_Abort(MPI_COMM_WORLD, code);
}

int rp_mpi_tag_ub(void)
{
	return tag_ub;
}

/* Wait for a non-blocking collective until the deadline. */
static int wait_polled(MPI_Request *req, const char *what, double deadline)
{
	long pause = 20000;

	for (;;) {
		int done = 0, rc;

		pthread_mutex_lock(&mpi_lock);
		rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
		pthread_mutex_unlock(&mpi_lock);
		if (rc != MPI_SUCCESS)
			return mpi_err(rc, what, -1);
		if (done)
			return 0;
		if (rp_now() >= deadline)
			return rp_error(-ETIMEDOUT, "%s: not every rank took part within the deadline (one died or hangs)", what);
		poll_pause(&pause);
	}
}

int rp_mpi_allgather(const void *mine, size_t len, double deadline, char **all_p, size_t **lens_p, size_t **offs_p)
{
	MPI_Request req;
	int size, n = (int)len, rc;
	int *counts, *displs;
	size_t total = 0;

	MPI_Comm_size(comm_ctl, &size);
	counts = calloc((size_t)size, sizeof(*counts));
	displs = calloc((size_t)size, sizeof(*displs));
	*lens_p = calloc((size_t)size, sizeof(**lens_p));
	*offs_p = calloc((size_t)size, sizeof(**offs_p));
	*all_p = NULL;
	if (!counts || !displs || !*lens_p || !*offs_p) {
		rc = rp_error(-ENOMEM, "allgather: allocate for %d ranks", size);
		goto out;
	}
	rc = MPI_Iallgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm_ctl, &req);
	rc = rc == MPI_SUCCESS ? wait_polled(&req, "start-up exchange of sizes", deadline)
			       : mpi_err(rc, "allgather sizes with", -1);
	if (rc)
		goto out;
	for (int r = 0; r < size; r++) {
		displs[r] = (int)total;
		(*lens_p)[r] = (size_t)counts[r];
		(*offs_p)[r] = total;
		total += (size_t)counts[r];
	}
	*all_p = malloc(total ? total : 1);
	if (!*all_p) {
		rc = rp_error(-ENOMEM, "allgather: allocate %zu bytes", total);
		goto out;
	}
	rc = MPI_Iallgatherv(mine, n, MPI_BYTE, *all_p, counts, displs, MPI_BYTE, comm_ctl, &req);
	rc = rc == MPI_SUCCESS ? wait_polled(&req, "start-up exchange of endpoints", deadline)
			       : mpi_err(rc, "allgather endpoints with", -1);
out:
	if (rc == -ETIMEDOUT) {
		/* The collective is still in flight and MPI may write into these: keep them (the caller
		 * ends the job). */
		*all_p = NULL;
		*lens_p = *offs_p = NULL;
		return rc;
	}
	free(counts);
	free(displs);
	if (rc) {
		free(*all_p);
		free(*lens_p);
		free(*offs_p);
		*all_p = NULL;
		*lens_p = *offs_p = NULL;
	}
	return rc;
}

/* --- envelope ------------------------------------------------------------------------------------ */

#define ENV_MAGIC 0x52504f42u   /* "RPOB" */

struct envelope {
	uint32_t magic;
	uint32_t round;
	uint64_t run;
	uint32_t pair;
	uint32_t len;                 /* payload bytes after the envelope */
};

static uint64_t run_nonce;
static unsigned long n_dropped;

uint64_t rp_mpi_nonce_new(void)
{
	uint64_t n = 0;

	if (getrandom(&n, sizeof(n), GRND_NONBLOCK) != (ssize_t)sizeof(n))
		n = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ (uint64_t)(rp_now() * 1e9);
	return n ? n : 1;
}

void rp_mpi_set_run(uint64_t run)
{
	run_nonce = run;
}

unsigned long rp_mpi_dropped(void)
{
	unsigned long n;

	pthread_mutex_lock(&mpi_lock);
	n = n_dropped;
	pthread_mutex_unlock(&mpi_lock);
	return n;
}

/* Isend envelope + payload (a private copy) and poll it to completion or the deadline. */
static int send_polled(MPI_Comm comm, int dst, int tag, const struct rp_mpi_addr *addr, const void *buf, size_t len,
		       double deadline)
{
	struct envelope env = { .magic = ENV_MAGIC, .round = addr->round, .run = run_nonce, .pair = addr->pair,
				.len = (uint32_t)len };
	size_t total = sizeof(env) + len;
	MPI_Request req;
	char *copy;
	long pause = 20000;
	int done = 0, rc;

	if (len > (size_t)INT32_MAX - sizeof(env))
		return rp_error(-EMSGSIZE, "send to rank %d: %zu bytes is too long for one message", dst, len);
	copy = malloc(total);
	if (!copy)
		return rp_error(-ENOMEM, "send to rank %d: allocate %zu bytes", dst, total);
	memcpy(copy, &env, sizeof(env));
	if (len)
		memcpy(copy + sizeof(env), buf, len);
	pthread_mutex_lock(&mpi_lock);
	pending_sweep();
	rc = MPI_Isend(copy, (int)total, MPI_BYTE, dst, tag, comm, &req);
	pthread_mutex_unlock(&mpi_lock);
	if (rc != MPI_SUCCESS) {
		free(copy);
		return mpi_err(rc, "send to", dst);
	}
	for (;;) {
		pthread_mutex_lock(&mpi_lock);
		rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (rc == MPI_SUCCESS && !done && rp_now() >= deadline) {
			pending_keep(&req, copy);
			pthread_mutex_unlock(&mpi_lock);
			return -ETIMEDOUT;
		}
		pthread_mutex_unlock(&mpi_lock);
		if (rc != MPI_SUCCESS)
			return mpi_err(rc, "send to", dst);   /* the request is complete (in error); MPI may hold copy */
		if (done) {
			free(copy);
			return 0;
		}
		poll_pause(&pause);
	}
}

/* One message (src, tag) with a matched probe, received whole into a malloc'd *msg_p; 1 when one came,
 * 0 when none is there yet. */
static int take_one(MPI_Comm comm, int src, int tag, char **msg_p, int *count_p, int *src_p)
{
	MPI_Message msg;
	MPI_Status st;
	int flag = 0, count = 0, rc;
	char *buf;

	pthread_mutex_lock(&mpi_lock);
	rc = MPI_Improbe(src, tag, comm, &flag, &msg, &st);
	if (rc != MPI_SUCCESS || !flag) {
		pthread_mutex_unlock(&mpi_lock);
		return rc == MPI_SUCCESS ? 0 : mpi_err(rc, "probe", src);
	}
	MPI_Get_count(&st, MPI_BYTE, &count);
	buf = malloc(count > 0 ? (size_t)count : 1);
	/* A matched message must be received: without memory, take it (truncated) and drop it. */
	rc = buf ? MPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE)
		 : MPI_Mrecv(&(char){ 0 }, 1, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
	pthread_mutex_unlock(&mpi_lock);
	if (!buf)
		return rp_error(-ENOMEM, "receive from rank %d: allocate %d bytes", st.MPI_SOURCE, count);
	if (rc != MPI_SUCCESS) {
		free(buf);
		return mpi_err(rc, "receive from", st.MPI_SOURCE);
	}
	*msg_p = buf;
	*count_p = count;
	*src_p = st.MPI_SOURCE;
	return 1;
}

/* Does the message's envelope name this run and addr (round, pair)? */
static bool env_matches(const char *msg, int count, const struct rp_mpi_addr *addr, int src, int tag)
{
	struct envelope env;

	if (count < (int)sizeof(env)) {
		rp_debug("dropped a %d-byte message from rank %d (tag %d): too short for an envelope", count, src, tag);
		return false;
	}
	memcpy(&env, msg, sizeof(env));
	if (env.magic != ENV_MAGIC || env.len != (uint32_t)(count - (int)sizeof(env))) {
		rp_debug("dropped a malformed message from rank %d (tag %d)", src, tag);
		return false;
	}
	if (env.run != run_nonce || env.round != addr->round || env.pair != addr->pair) {
		rp_debug("dropped a stale message from rank %d (tag %d): run %016llx round %u pair %u, want run "
			 "%016llx round %u pair %u", src, tag, (unsigned long long)env.run, env.round, env.pair,
			 (unsigned long long)run_nonce, addr->round, addr->pair);
		return false;
	}
	return true;
}

/* Receive the next message of (src, tag) that belongs to addr, until the deadline; others are dropped.
 * *msg_p (malloc'd) holds envelope + payload. */
static int recv_addressed(MPI_Comm comm, int src, int tag, const struct rp_mpi_addr *addr, char **msg_p,
			  int *count_p, int *src_p, double deadline)
{
	long pause = 20000;

	for (;;) {
		int rc = take_one(comm, src, tag, msg_p, count_p, src_p);

		if (rc < 0)
			return rc;
		if (rc == 1) {
			if (env_matches(*msg_p, *count_p, addr, *src_p, tag))
				return 0;
			free(*msg_p);
			*msg_p = NULL;
			pthread_mutex_lock(&mpi_lock);
			n_dropped++;
			pthread_mutex_unlock(&mpi_lock);
			continue;         /* look again at once: the right one may be queued behind it */
		}
		if (rp_now() >= deadline)
			return -ETIMEDOUT;
		poll_pause(&pause);
	}
}

int rp_mpi_ctl_send(int dst, int tag, uint32_t round, const void *buf, size_t len, double deadline)
{
	return send_polled(comm_ctl, dst, tag, &(struct rp_mpi_addr){ .round = round }, buf, len, deadline);
}

int rp_mpi_ctl_recv(int src, int tag, uint32_t round, void **buf_p, size_t *len_p, int *src_p, double deadline)
{
	char *msg = NULL;
	int count = 0, from = -1, rc;
	size_t len;

	rc = recv_addressed(comm_ctl, src < 0 ? MPI_ANY_SOURCE : src, tag, &(struct rp_mpi_addr){ .round = round },
			    &msg, &count, &from, deadline);
	if (rc)
		return rc;
	len = (size_t)count - sizeof(struct envelope);
	memmove(msg, msg + sizeof(struct envelope), len);
	*buf_p = msg;
	*len_p = len;
	if (src_p)
		*src_p = from;
	return 0;
}

struct oob_mpi {
	int peer, tag;
	struct rp_mpi_addr addr;
};

static int oob_mpi_send(struct rp_oob *oob, const void *buf, size_t len, double deadline)
{
	struct oob_mpi *m = oob->priv;
	int rc = send_polled(comm_pair, m->peer, m->tag, &m->addr, buf, len, deadline);

	if (rc == -ETIMEDOUT)
		rp_debug("send to %s: no progress before the deadline", oob->peer);
	return rc;
}

static int oob_mpi_recv(struct rp_oob *oob, void *buf, size_t len, double deadline)
{
	struct oob_mpi *m = oob->priv;
	char *msg = NULL;
	int count = 0, from = -1, rc;
	size_t got;

	rc = recv_addressed(comm_pair, m->peer, m->tag, &m->addr, &msg, &count, &from, deadline);
	if (rc)
		return rc;
	got = (size_t)count - sizeof(struct envelope);
	if (got != len) {
		free(msg);
		return rp_error(-EMSGSIZE, "receive from %s: %zu bytes where %zu were expected", oob->peer, got, len);
	}
	memcpy(buf, msg + sizeof(struct envelope), len);
	free(msg);
	return 0;
}

static void oob_mpi_close(struct rp_oob *oob)
{
	free(oob->priv);
	oob->priv = NULL;
}

static const struct rp_oob_ops oob_mpi_ops = {
	.name = "mpi",
	.send = oob_mpi_send,
	.recv = oob_mpi_recv,
	.close = oob_mpi_close,
};

int rp_oob_mpi_open(struct rp_oob *oob, int peer, int tag, const struct rp_mpi_addr *addr)
{
	struct oob_mpi *m = calloc(1, sizeof(*m));

	memset(oob, 0, sizeof(*oob));
	if (!m)
		return rp_error(-ENOMEM, "side channel to rank %d: allocate", peer);
	m->peer = peer;
	m->tag = tag;
	m->addr = *addr;
	m->addr.run = run_nonce;
	oob->ops = &oob_mpi_ops;
	oob->priv = m;
	snprintf(oob->peer, sizeof(oob->peer), "rank %d (round %u, pair %u, tag %d)", peer, addr->round + 1,
		 addr->pair, tag);
	return 0;
}
