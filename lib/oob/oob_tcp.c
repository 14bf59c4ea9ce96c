/* oob_tcp.c: the side channel over a stream socket (TCP between hosts, a socketpair in one process).
 *
 * Each message travels as a 4-byte length (network order) and the bytes. Received bytes are kept in
 * a buffer until a whole message is there, so a recv() that times out loses nothing (oob.h).
 * Every wait polls in slices of at most STOP_SLICE_MS and ends with -EINTR once a stop was requested
 * (lib/base/stop.h), so a signal stops a pair within a slice even when it lands in another thread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "oob/oob.h"
#include "base/stop.h"
#include "base/util.h"

#define RX_MAX 8192        /* bigger than any message the engine sends */
#define RETRY_PAUSE_S 0.2
#define STOP_SLICE_MS 200  /* longest poll between two looks at the stop flag */

struct tcp_priv {
	int fd;
	bool broken;           /* a send stopped half way: the stream is out of step */
	bool quiet;            /* the caller logs failures itself (rp_oob_tcp_quiet) */
	size_t rx_len;
	uint8_t rx[RX_MAX];
};

static const struct rp_oob_ops tcp_ops;

/* Milliseconds left until deadline, for poll(); at least 0, at most a day. */
static int ms_left(double deadline)
{
	double left = deadline - rp_now();

	if (left <= 0)
		return 0;
	if (left > 86400)
		return 86400 * 1000;
	return (int)(left * 1000.0) + 1;
}

/* poll() one fd until deadline, in slices, looking at the stop flag between them: 1 ready, 0 the
 * deadline passed, -EINTR a stop was requested, or another negative errno. */
static int poll_until(int fd, short events, double deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events };
		int ms, rc;

		if (rp_stop_requested())
			return -EINTR;
		ms = ms_left(deadline);
		rc = poll(&pfd, 1, ms < STOP_SLICE_MS ? ms : STOP_SLICE_MS);
		if (rc > 0)
			return 1;
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc == 0 && ms <= STOP_SLICE_MS)
			return 0;
	}
}

/* Log a failure of the channel unless the caller asked for quiet; returns err. */
static int tcp_fail(struct rp_oob *oob, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int tcp_fail(struct rp_oob *oob, int err, const char *fmt, ...)
{
	struct tcp_priv *p = oob->priv;
	va_list ap;

	if (p && p->quiet)
		return err;
	va_start(ap, fmt);
	rp_vlog(RP_LOG_ERROR, fmt, ap);
	va_end(ap);
	return err;
}

static int tcp_send(struct rp_oob *oob, const void *buf, size_t len, double deadline)
{
	struct tcp_priv *p = oob->priv;
	uint8_t hdr[4];
	uint32_t n = htonl((uint32_t)len);
	const uint8_t *parts[2] = { hdr, buf };
	size_t lens[2] = { sizeof(hdr), len };

	if (p->broken)
		return -EPIPE;
	memcpy(hdr, &n, sizeof(hdr));
	for (int i = 0; i < 2; i++) {
		size_t off = 0;

		while (off < lens[i]) {
			ssize_t w;
			int rc = poll_until(p->fd, POLLOUT, deadline);

			if (rc <= 0 && (i > 0 || off > 0))
				p->broken = true;
			if (rc == -EINTR)
				return rc;   /* a stop: not an error of the channel */
			if (rc == 0)
				return tcp_fail(oob, -ETIMEDOUT, "send to %s: timed out", oob->peer);
			if (rc < 0)
				return tcp_fail(oob, rc, "poll for %s: %s", oob->peer, strerror(-rc));
			w = send(p->fd, parts[i] + off, lens[i] - off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w < 0) {
				int err = -errno;

				if (err == -EAGAIN || err == -EINTR)
					continue;
				p->broken = true;
				return tcp_fail(oob, err == -EPIPE ? -ECONNRESET : err, "send to %s: %s", oob->peer,
						strerror(-err));
			}
			off += (size_t)w;
		}
	}
	return 0;
}

/* A whole message in the buffer? 1 and copies it out, 0 not yet, negative on a length mismatch. */
static int take_message(struct rp_oob *oob, void *buf, size_t len)
{
	struct tcp_priv *p = oob->priv;
	uint32_t n;

	if (p->rx_len < 4)
		return 0;
	memcpy(&n, p->rx, 4);
	n = ntohl(n);
	if (n > RX_MAX - 4) {
		p->broken = true;
		return tcp_fail(oob, -EBADMSG, "message from %s of %u bytes: too long", oob->peer, n);
	}
	if (p->rx_len < 4 + (size_t)n)
		return 0;
	if (n != len) {
		/* the start of it stays readable (oob.h): a peer of another protocol version sends another
		 * size, and its header still says which version */
		memcpy(buf, p->rx + 4, n < len ? n : len);
		memmove(p->rx, p->rx + 4 + n, p->rx_len - 4 - n);
		p->rx_len -= 4 + n;
		return tcp_fail(oob, -EMSGSIZE, "message from %s of %u bytes, expected %zu", oob->peer, n, len);
	}
	memcpy(buf, p->rx + 4, len);
	memmove(p->rx, p->rx + 4 + n, p->rx_len - 4 - n);
	p->rx_len -= 4 + n;
	return 1;
}

static int tcp_recv(struct rp_oob *oob, void *buf, size_t len, double deadline)
{
	struct tcp_priv *p = oob->priv;

	if (len > RX_MAX - 4)
		return -EMSGSIZE;
	for (;;) {
		int rc = take_message(oob, buf, len);
		ssize_t r;

		if (rc < 0)
			return rc;
		if (rc == 1)
			return 0;
		if (p->broken)
			return -EPIPE;
		rc = poll_until(p->fd, POLLIN, deadline);
		if (rc == 0)
			return -ETIMEDOUT;   /* not logged: callers poll with short deadlines */
		if (rc == -EINTR)
			return rc;           /* a stop was requested: not logged, the front end says so */
		if (rc < 0)
			return tcp_fail(oob, rc, "poll for %s: %s", oob->peer, strerror(-rc));
		r = recv(p->fd, p->rx + p->rx_len, RX_MAX - p->rx_len, MSG_DONTWAIT);
		if (r == 0)
			return tcp_fail(oob, -ECONNRESET, "side channel to %s: peer closed the connection", oob->peer);
		if (r < 0) {
			int err = -errno;

			if (err == -EAGAIN || err == -EINTR)
				continue;
			return tcp_fail(oob, err, "receive from %s: %s", oob->peer, strerror(-err));
		}
		p->rx_len += (size_t)r;
	}
}

static void tcp_close(struct rp_oob *oob)
{
	struct tcp_priv *p = oob->priv;

	if (p) {
		if (p->fd >= 0)
			close(p->fd);
		free(p);
	}
	oob->priv = NULL;
}

static const struct rp_oob_ops tcp_ops = {
	.name = "tcp",
	.send = tcp_send,
	.recv = tcp_recv,
	.close = tcp_close,
};

int rp_oob_tcp_from_fd(struct rp_oob *oob, int fd, const char *peer)
{
	struct tcp_priv *p = calloc(1, sizeof(*p));
	int one = 1;

	memset(oob, 0, sizeof(*oob));
	if (!p) {
		close(fd);
		return rp_error(-ENOMEM, "side channel to %s: out of memory", peer);
	}
	p->fd = fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));   /* fails harmlessly on AF_UNIX */
	oob->ops = &tcp_ops;
	oob->priv = p;
	rp_strlcpy(oob->peer, peer, sizeof(oob->peer));
	return 0;
}

int rp_oob_local_pair(struct rp_oob *a, struct rp_oob *b)
{
	int sv[2], rc;

	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return rp_error(-errno, "socketpair: %s", strerror(errno));
	rc = rp_oob_tcp_from_fd(a, sv[0], "target thread");
	if (rc) {
		close(sv[1]);
		return rc;
	}
	rc = rp_oob_tcp_from_fd(b, sv[1], "writer thread");
	if (rc)
		rp_oob_close(a);
	return rc;
}

void rp_oob_tcp_quiet(struct rp_oob *oob, bool quiet)
{
	struct tcp_priv *p = oob->priv;

	if (oob->ops == &tcp_ops && p)
		p->quiet = quiet;
}

/* The address to listen on: bind_addr (a numeric IPv4 or IPv6 address: no name lookup, so what is
 * bound is what was typed), or the dual-stack wildcard. 0 or -EINVAL (logged). */
static int listen_addr(const char *bind_addr, int port, struct sockaddr_storage *sa, socklen_t *len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char serv[16];
	int grc;

	memset(sa, 0, sizeof(*sa));
	if (!bind_addr) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		s6->sin6_addr = in6addr_any;
		*len = sizeof(*s6);
		return 0;
	}
	snprintf(serv, sizeof(serv), "%d", port);
	grc = getaddrinfo(bind_addr, serv, &hints, &res);
	if (grc != 0 || !res)
		return rp_error(-EINVAL, "bind address '%s': not a numeric IPv4 or IPv6 address", bind_addr);
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int rp_oob_tcp_listen(const char *bind_addr, int port, int *lfd_p)
{
	struct sockaddr_storage sa;
	socklen_t sa_len = 0;
	char where[96];
	int one = 1, zero = 0, lfd, rc;

	*lfd_p = -1;
	rc = listen_addr(bind_addr, port, &sa, &sa_len);
	if (rc)
		return rc;
	snprintf(where, sizeof(where), "%s%sport %d", bind_addr ? bind_addr : "", bind_addr ? " " : "", port);
	lfd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0)
		return rp_error(-errno, "socket for TCP %s: %s", where, strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa.ss_family == AF_INET6)
		setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(lfd, (struct sockaddr *)&sa, sa_len) < 0) {
		rc = rp_error(-errno, "bind TCP %s: %s", where, strerror(errno));
		close(lfd);
		return rc;
	}
	if (listen(lfd, 16) < 0) {
		rc = rp_error(-errno, "listen on TCP %s: %s", where, strerror(errno));
		close(lfd);
		return rc;
	}
	*lfd_p = lfd;
	return 0;
}

/* "10.0.0.2:18515", "[fd00::2]:18515" for a peer address. */
static void peer_name(const struct sockaddr_storage *sa, socklen_t len, char *name, size_t name_len)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	if (getnameinfo((const struct sockaddr *)sa, len, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(name, name_len, "unknown peer");
	else if (sa->ss_family == AF_INET6 && !strchr(host, '.'))
		snprintf(name, name_len, "[%s]:%s", host, serv);
	else
		snprintf(name, name_len, "%s:%s", strncmp(host, "::ffff:", 7) == 0 ? host + 7 : host, serv);
}

int rp_oob_tcp_accept_next(int lfd, double deadline, struct rp_oob *oob, struct sockaddr_storage *peer_p,
			   socklen_t *peer_len_p)
{
	char name[NI_MAXHOST + NI_MAXSERV + 4];

	memset(oob, 0, sizeof(*oob));
	for (;;) {
		socklen_t len = sizeof(*peer_p);
		int fd, rc = poll_until(lfd, POLLIN, deadline);

		if (rc == 0)
			return -ETIMEDOUT;
		if (rc < 0)
			return rc == -EINTR ? rc : rp_error(rc, "poll for a peer: %s", strerror(-rc));
		fd = accept4(lfd, (struct sockaddr *)peer_p, &len, SOCK_CLOEXEC);
		if (fd >= 0) {
			*peer_len_p = len;
			peer_name(peer_p, len, name, sizeof(name));
			return rp_oob_tcp_from_fd(oob, fd, name);
		}
		if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED || errno == EPROTO)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			/* out of descriptors or memory for now: say so once per attempt and wait a little */
			struct timespec ts = { 0, 100 * 1000 * 1000 };

			rp_warn("accept a peer: %s (waiting)", strerror(errno));
			nanosleep(&ts, NULL);
			continue;
		}
		return rp_error(-errno, "accept a peer: %s", strerror(errno));
	}
}

/* One non-blocking connect attempt bounded by deadline: fd or negative errno (not logged). */
static int connect_once(const struct addrinfo *ai, double deadline)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
	int err = 0, flags;
	socklen_t elen = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			err = -errno;
			close(fd);
			return err;
		}
		int rc = poll_until(fd, POLLOUT, deadline);

		if (rc <= 0) {
			close(fd);
			return rc == 0 ? -ETIMEDOUT : rc;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 || err) {
			err = err ? -err : -errno;
			close(fd);
			return err;
		}
	}
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

int rp_oob_tcp_connect(struct rp_oob *oob, const char *host, int port, double deadline)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	char serv[16], name[96];
	int last = -ETIMEDOUT;

	memset(oob, 0, sizeof(*oob));
	snprintf(serv, sizeof(serv), "%d", port);
	snprintf(name, sizeof(name), "%s:%d", host, port);
	do {
		struct addrinfo *res = NULL;
		int grc = getaddrinfo(host, serv, &hints, &res);

		if (grc == EAI_NONAME || grc == EAI_FAIL)
			return rp_error(-EHOSTUNREACH, "resolve host '%s': %s", host, gai_strerror(grc));
		if (grc == 0) {
			for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
				int fd = connect_once(ai, deadline);

				if (fd >= 0) {
					freeaddrinfo(res);
					return rp_oob_tcp_from_fd(oob, fd, name);
				}
				if (fd == -EINTR) {
					freeaddrinfo(res);
					return fd;   /* a stop was requested: the front end says so */
				}
				last = fd;
			}
			freeaddrinfo(res);
		}
		/* the listener may not be up yet: try again until the deadline */
		if (rp_stop_requested())
			return -EINTR;
		if (rp_now() + RETRY_PAUSE_S < deadline) {
			struct timespec ts = { 0, (long)(RETRY_PAUSE_S * 1e9) };

			nanosleep(&ts, NULL);
		} else {
			break;
		}
	} while (rp_now() < deadline);
	return rp_error(last == -ETIMEDOUT ? -ETIMEDOUT : last, "connect to %s: %s (gave up at the deadline)",
			name, strerror(-last));
}
