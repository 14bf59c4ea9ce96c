/* oob.h: the side channel between the two endpoints of a pair, behind one small ops table.
 *
 * The engine exchanges a few fixed-size, versioned messages with its peer (connection info, phase
 * status, results). How they travel is a backend: oob_tcp.c (pair mode; also a socketpair for the
 * two endpoints of a loopback pair in one process) and oob_mpi.c (matrix mode).
 *
 * Contract every backend keeps:
 * - Messages are whole: send() delivers exactly len bytes as one message; recv() returns exactly len
 *   bytes or nothing.
 * - Deadlines are absolute times on rp_now()'s clock. Nothing blocks past its deadline.
 * - recv() returning -ETIMEDOUT consumed nothing the caller can see: a later recv() continues and
 *   returns the same message, so the engine may call recv() with short deadlines while it polls a CQ.
 * - A peer that closed or died gives -ECONNRESET (or -EPIPE); the backend logs once.
 */
#ifndef RP_OOB_H
#define RP_OOB_H

#include <stddef.h>

struct rp_oob;

struct rp_oob_ops {
	const char *name;                                /* "tcp", "mpi" */
	/* 0, -ETIMEDOUT, or another negative errno. */
	int (*send)(struct rp_oob *oob, const void *buf, size_t len, double deadline);
	/* 0 with exactly len bytes in buf, -ETIMEDOUT (nothing consumed), -EMSGSIZE when the peer's
	 * message has another length, or another negative errno. */
	int (*recv)(struct rp_oob *oob, void *buf, size_t len, double deadline);
	/* Release the channel; accepts a half-built oob and may be called twice. */
	void (*close)(struct rp_oob *oob);
};

struct rp_oob {
	const struct rp_oob_ops *ops;
	char peer[96];                                   /* for messages: "10.0.0.2:18515", "rank 3" */
	void *priv;                                      /* backend state */
};

/* Wrappers through oob->ops. */
int rp_oob_send(struct rp_oob *oob, const void *buf, size_t len, double deadline);
int rp_oob_recv(struct rp_oob *oob, void *buf, size_t len, double deadline);
void rp_oob_close(struct rp_oob *oob);

/* A barrier is one exchange of a small fixed message both ways. 0 or negative errno. */
int rp_oob_barrier(struct rp_oob *oob, double deadline);

/* --- TCP backend (oob_tcp.c) -------------------------------------------------------------------- */

#define RP_OOB_TCP_DEFAULT_PORT 18515

/* Listen on port (0.0.0.0, SO_REUSEADDR) and accept one peer before deadline. Fills *oob. */
int rp_oob_tcp_accept(struct rp_oob *oob, int port, double deadline);
/* Connect to host:port, retrying (connection refused, no route) until deadline, so that start
 * order does not matter. Fills *oob. */
int rp_oob_tcp_connect(struct rp_oob *oob, const char *host, int port, double deadline);
/* Wrap an already connected stream socket (e.g. one end of a socketpair); takes ownership of fd. */
int rp_oob_tcp_from_fd(struct rp_oob *oob, int fd, const char *peer);
/* Two connected channels in this process (a socketpair), for a loopback pair driven by two threads. */
int rp_oob_local_pair(struct rp_oob *a, struct rp_oob *b);

#endif
