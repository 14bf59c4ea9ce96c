/* oob_mpi.c: the side channel and control messages over MPI, every wait polled against a deadline;
 * see oob_mpi.h. Built only when MPI is found. */
#include "oob_mpi.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "util.h"

static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Comm comm_ctl = MPI_COMM_NULL, comm_pair = MPI_COMM_NULL;
static int tag_ub = 32767;

struct oob_mpi {
	int peer, tag;
};

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
	if (comm_ctl != MPI_COMM_NULL)
		MPI_Comm_free(&comm_ctl);
	if (comm_pair != MPI_COMM_NULL)
		MPI_Comm_free(&comm_pair);
	MPI_Finalize();
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

/* Isend a private copy and poll it to completion or the deadline. On a timeout the request is
 * released and the copy deliberately leaked: MPI may still read it. */
static int send_polled(MPI_Comm comm, int dst, int tag, const void *buf, size_t len, double deadline)
{
	MPI_Request req;
	void *copy = malloc(len ? len : 1);
	long pause = 20000;
	int done = 0, rc;

	if (!copy)
		return rp_error(-ENOMEM, "send to rank %d: allocate %zu bytes", dst, len);
	memcpy(copy, buf, len);
	pthread_mutex_lock(&mpi_lock);
	rc = MPI_Isend(copy, (int)len, MPI_BYTE, dst, tag, comm, &req);
	pthread_mutex_unlock(&mpi_lock);
	if (rc != MPI_SUCCESS) {
		free(copy);
		return mpi_err(rc, "send to", dst);
	}
	for (;;) {
		pthread_mutex_lock(&mpi_lock);
		rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		pthread_mutex_unlock(&mpi_lock);
		if (rc != MPI_SUCCESS)
			return mpi_err(rc, "send to", dst);
		if (done) {
			free(copy);
			return 0;
		}
		if (rp_now() >= deadline) {
			pthread_mutex_lock(&mpi_lock);
			MPI_Request_free(&req);
			pthread_mutex_unlock(&mpi_lock);
			return -ETIMEDOUT;
		}
		poll_pause(&pause);
	}
}

/* Probe until a message (src, tag) is there or the deadline passes; nothing is consumed on timeout. */
static int probe_polled(MPI_Comm comm, int src, int tag, MPI_Status *st, double deadline)
{
	long pause = 20000;

	for (;;) {
		int flag = 0, rc;

		pthread_mutex_lock(&mpi_lock);
		rc = MPI_Iprobe(src, tag, comm, &flag, st);
		pthread_mutex_unlock(&mpi_lock);
		if (rc != MPI_SUCCESS)
			return mpi_err(rc, "probe", src);
		if (flag)
			return 0;
		if (rp_now() >= deadline)
			return -ETIMEDOUT;
		poll_pause(&pause);
	}
}

/* Receive the probed message st into buf (count bytes). */
static int recv_probed(MPI_Comm comm, const MPI_Status *st, void *buf, int count)
{
	int rc;

	pthread_mutex_lock(&mpi_lock);
	rc = MPI_Recv(buf, count, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, comm, MPI_STATUS_IGNORE);
	pthread_mutex_unlock(&mpi_lock);
	return rc == MPI_SUCCESS ? 0 : mpi_err(rc, "receive from", st->MPI_SOURCE);
}

int rp_mpi_ctl_send(int dst, int tag, const void *buf, size_t len, double deadline)
{
	return send_polled(comm_ctl, dst, tag, buf, len, deadline);
}

int rp_mpi_ctl_recv(int src, int tag, void **buf_p, size_t *len_p, int *src_p, double deadline)
{
	MPI_Status st;
	int count = 0, rc;
	void *buf;

	rc = probe_polled(comm_ctl, src < 0 ? MPI_ANY_SOURCE : src, tag, &st, deadline);
	if (rc)
		return rc;
	MPI_Get_count(&st, MPI_BYTE, &count);
	buf = malloc(count > 0 ? (size_t)count : 1);
	if (!buf)
		return rp_error(-ENOMEM, "receive from rank %d: allocate %d bytes", st.MPI_SOURCE, count);
	rc = recv_probed(comm_ctl, &st, buf, count);
	if (rc) {
		free(buf);
		return rc;
	}
	*buf_p = buf;
	*len_p = (size_t)count;
	if (src_p)
		*src_p = st.MPI_SOURCE;
	return 0;
}

static int oob_mpi_send(struct rp_oob *oob, const void *buf, size_t len, double deadline)
{
	struct oob_mpi *m = oob->priv;
	int rc = send_polled(comm_pair, m->peer, m->tag, buf, len, deadline);

	if (rc == -ETIMEDOUT)
		rp_debug("send to %s: no progress before the deadline", oob->peer);
	return rc;
}

static int oob_mpi_recv(struct rp_oob *oob, void *buf, size_t len, double deadline)
{
	struct oob_mpi *m = oob->priv;
	MPI_Status st;
	int count = 0, rc;

	rc = probe_polled(comm_pair, m->peer, m->tag, &st, deadline);
	if (rc)
		return rc;
	MPI_Get_count(&st, MPI_BYTE, &count);
	if ((size_t)count != len) {
		char *junk = malloc(count > 0 ? (size_t)count : 1);

		if (junk)
			recv_probed(comm_pair, &st, junk, count);
		free(junk);
		return rp_error(-EMSGSIZE, "receive from %s: %d bytes where %zu were expected", oob->peer, count, len);
	}
	return recv_probed(comm_pair, &st, buf, count);
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

int rp_oob_mpi_open(struct rp_oob *oob, int peer, int tag)
{
	struct oob_mpi *m = calloc(1, sizeof(*m));

	memset(oob, 0, sizeof(*oob));
	if (!m)
		return rp_error(-ENOMEM, "side channel to rank %d: allocate", peer);
	m->peer = peer;
	m->tag = tag;
	oob->ops = &oob_mpi_ops;
	oob->priv = m;
	snprintf(oob->peer, sizeof(oob->peer), "rank %d (tag %d)", peer, tag);
	return 0;
}
