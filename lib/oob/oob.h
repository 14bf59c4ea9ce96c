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
 * - Once a stop was requested (lib/base/stop.h), send() and recv() return -EINTR (not logged) within a
 *   fraction of a second (TCP backend), so a signal ends a pair at its next exchange.
 */
#ifndef RP_OOB_H
#define RP_OOB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

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
/* recv takes one whole message of exactly len bytes. A message of another size is consumed and
 * gives -EMSGSIZE, with its first min(size, len) bytes in buf (the rest of buf untouched), so that
 * a caller can still read a fixed header (a peer of another protocol version). */
int rp_oob_recv(struct rp_oob *oob, void *buf, size_t len, double deadline);
void rp_oob_close(struct rp_oob *oob);

/* A barrier is one exchange of a small fixed message both ways. 0 or negative errno. */
int rp_oob_barrier(struct rp_oob *oob, double deadline);

/* --- TCP backend (oob_tcp.c) -------------------------------------------------------------------- */

#define RP_OOB_TCP_DEFAULT_PORT 18515

/* Listen on bind_addr (a numeric IPv4 or IPv6 address; NULL: every address, IPv4 and IPv6) and
 * port, SO_REUSEADDR, backlog 16. 0 with *lfd_p (close it), -EINVAL (not an address), or another
 * negative errno (EADDRNOTAVAIL, EADDRINUSE ...); logged. */
int rp_oob_tcp_listen(const char *bind_addr, int port, int *lfd_p);
/* Accept the next peer on lfd before deadline; fills *oob (peer named "10.0.0.2:40112") and the
 * peer's address. 0, -ETIMEDOUT, -EINTR (a stop was requested; lib/base/stop.h) or another negative
 * errno (logged). Transient shortages (EMFILE, ENOBUFS) are waited out. */
int rp_oob_tcp_accept_next(int lfd, double deadline, struct rp_oob *oob, struct sockaddr_storage *peer_p,
			   socklen_t *peer_len_p);
/* Do not log failures of this channel (the caller logs one line of its own): for the hello of a
 * peer not yet trusted. Only for channels of this backend. */
void rp_oob_tcp_quiet(struct rp_oob *oob, bool quiet);
/* Connect to host:port, retrying (connection refused, no route) until deadline, so that start
 * order does not matter. Fills *oob. */
int rp_oob_tcp_connect(struct rp_oob *oob, const char *host, int port, double deadline);
/* Wrap an already connected stream socket (e.g. one end of a socketpair); takes ownership of fd. */
int rp_oob_tcp_from_fd(struct rp_oob *oob, int fd, const char *peer);
/* Two connected channels in this process (a socketpair), for a loopback pair driven by two threads. */
int rp_oob_local_pair(struct rp_oob *a, struct rp_oob *b);

#endif
