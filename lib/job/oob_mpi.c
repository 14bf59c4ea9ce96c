/* oob_mpi.c: the matrix's transport over MPI (struct mx_comm's operations), every wait polled
 * against a deadline; see oob_mpi.h. Built only when MPI is found. */
#include "job/oob_mpi.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

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
			free(p->copy);   /* done, or complete in error: MPI holds it no more */
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

static const struct mx_comm_ops mpi_ops;
extern const struct rp_mpi_plugin rp_mpi_plugin;

int rp_mpi_init(int *argc, char ***argv, struct mx_comm *info)
{
	int provided = 0, flag = 0, *ub = NULL;
	MPI_Comm local;

	memset(info, 0, sizeof(*info));
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
	info->tag_ub = tag_ub;
	info->ops = &mpi_ops;
	info->priv = NULL;
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

static void mpi_abort(struct mx_comm *c, int code)
{
	(void)c;
	MPI_Abort(MPI_COMM_WORLD, code);
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

static int mpi_allgather(struct mx_comm *c, const void *mine, size_t len, double deadline, char **all_p,
			 size_t **lens_p, size_t **offs_p)
{
	MPI_Request req;
	int size, n = (int)len, rc;
	int *counts, *displs;
	size_t total = 0;

	(void)c;
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

/* --- sends and receives --------------------------------------------------------------------------- */

static MPI_Comm comm_of(enum mx_chan chan)
{
	return chan == MX_CHAN_PAIR ? comm_pair : comm_ctl;
}

/* Isend msg (ours from now on) and poll it to completion or the deadline. */
static int mpi_send(struct mx_comm *c, enum mx_chan chan, int dst, int tag, void *msg, size_t len, double deadline)
{
	MPI_Request req;
	long pause = 20000;
	int done = 0, rc;

	(void)c;
	if (len > (size_t)INT32_MAX) {
		free(msg);
		return rp_error(-EMSGSIZE, "send to rank %d: %zu bytes is too long for one message", dst, len);
	}
	pthread_mutex_lock(&mpi_lock);
	pending_sweep();
	rc = MPI_Isend(msg, (int)len, MPI_BYTE, dst, tag, comm_of(chan), &req);
	pthread_mutex_unlock(&mpi_lock);
	if (rc != MPI_SUCCESS) {
		free(msg);
		return mpi_err(rc, "send to", dst);
	}
	for (;;) {
		pthread_mutex_lock(&mpi_lock);
		rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (rc == MPI_SUCCESS && !done && rp_now() >= deadline) {
			pending_keep(&req, msg);
			pthread_mutex_unlock(&mpi_lock);
			return -ETIMEDOUT;
		}
		pthread_mutex_unlock(&mpi_lock);
		if (rc != MPI_SUCCESS || done) {
			free(msg);         /* complete, or complete in error (MPI_Test releases the request) */
			return rc == MPI_SUCCESS ? 0 : mpi_err(rc, "send to", dst);
		}
		poll_pause(&pause);
	}
}

/* One message (src, tag) with a matched probe, received whole into a malloc'd *msg_p; 1 when one came,
 * 0 when none is there yet, negative errno with nothing allocated. */
static int take_one(MPI_Comm comm, int src, int tag, size_t max_len, void **msg_p, size_t *len_p, int *src_p)
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
	if (max_len && count > 0 && (size_t)count > max_len) {
		/* Over the bound: taken whole and freed at once, never handed over. (A truncating receive
		 * would allocate nothing, but Open MPI 4 crashes truncating a large message: test_oob_mpi.) */
		rc = buf ? MPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE)
			 : MPI_Mrecv(&(char){ 0 }, 1, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
		pthread_mutex_unlock(&mpi_lock);
		free(buf);
		*len_p = (size_t)count;
		*src_p = st.MPI_SOURCE;
		return -EMSGSIZE;
	}
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
	*len_p = (size_t)count;
	*src_p = st.MPI_SOURCE;
	return 1;
}

static int mpi_take(struct mx_comm *c, enum mx_chan chan, int src, int tag, size_t max_len, void **msg_p,
		    size_t *len_p, int *src_p, double deadline)
{
	long pause = 20000;

	(void)c;
	for (;;) {
		int rc = take_one(comm_of(chan), src < 0 ? MPI_ANY_SOURCE : src, tag, max_len, msg_p, len_p, src_p);

		if (rc)
			return rc < 0 ? rc : 0;
		if (rp_now() >= deadline)
			return -ETIMEDOUT;
		poll_pause(&pause);
	}
}

static const struct mx_comm_ops mpi_ops = {
	.send = mpi_send,
	.take = mpi_take,
	.allgather = mpi_allgather,
	.abort = mpi_abort,
};

const struct rp_mpi_plugin rp_mpi_plugin = {
	.abi = RP_MPI_PLUGIN_ABI,
	.comm_size = sizeof(struct mx_comm),
	.init = rp_mpi_init,
	.finalize = rp_mpi_finalize,
};
