/* oob_tcp.c: the side channel over a stream socket (TCP between hosts, a socketpair in one process).
 *
 * Each message travels as a 4-byte length (network order) and the bytes. Received bytes are kept in
 * a buffer until a whole message is there, so a recv() that times out loses nothing (oob.h).
 */
#include <arpa/inet.h>
#include <errno.h>
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

#include "log.h"
#include "oob.h"
#include "util.h"

#define RX_MAX 8192        /* bigger than any message the engine sends */
#define RETRY_PAUSE_S 0.2

struct tcp_priv {
	int fd;
	bool broken;           /* a send stopped half way: the stream is out of step */
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
			struct pollfd pfd = { .fd = p->fd, .events = POLLOUT };
			ssize_t w;
			int rc = poll(&pfd, 1, ms_left(deadline));

			if (rc < 0 && errno == EINTR)
				continue;
			if (rc == 0) {
				if (i > 0 || off > 0)
					p->broken = true;
				return rp_error(-ETIMEDOUT, "send to %s: timed out", oob->peer);
			}
			w = send(p->fd, parts[i] + off, lens[i] - off, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w < 0) {
				int err = -errno;

				if (err == -EAGAIN || err == -EINTR)
					continue;
				p->broken = true;
				return rp_error(err == -EPIPE ? -ECONNRESET : err, "send to %s: %s", oob->peer,
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
		return rp_error(-EBADMSG, "message from %s of %u bytes: too long", oob->peer, n);
	}
	if (p->rx_len < 4 + (size_t)n)
		return 0;
	if (n != len) {
		memmove(p->rx, p->rx + 4 + n, p->rx_len - 4 - n);
		p->rx_len -= 4 + n;
		return rp_error(-EMSGSIZE, "message from %s of %u bytes, expected %zu", oob->peer, n, len);
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
		struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
		int rc = take_message(oob, buf, len);
		ssize_t r;

		if (rc < 0)
			return rc;
		if (rc == 1)
			return 0;
		if (p->broken)
			return -EPIPE;
		rc = poll(&pfd, 1, ms_left(deadline));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0)
			return -ETIMEDOUT;   /* not logged: callers poll with short deadlines */
		r = recv(p->fd, p->rx + p->rx_len, RX_MAX - p->rx_len, MSG_DONTWAIT);
		if (r == 0)
			return rp_error(-ECONNRESET, "side channel to %s: peer closed the connection", oob->peer);
		if (r < 0) {
			int err = -errno;

			if (err == -EAGAIN || err == -EINTR)
				continue;
			return rp_error(err, "receive from %s: %s", oob->peer, strerror(-err));
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

int rp_oob_tcp_accept(struct rp_oob *oob, int port, double deadline)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_storage peer;
	socklen_t peer_len = sizeof(peer);
	char host[NI_MAXHOST], serv[NI_MAXSERV], name[NI_MAXHOST + NI_MAXSERV + 2];
	int one = 1, zero = 0, lfd, fd = -1, rc;

	memset(oob, 0, sizeof(*oob));
	lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return rp_error(-errno, "socket for port %d: %s", port, strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = rp_error(-errno, "bind TCP port %d: %s", port, strerror(errno));
		goto close_listener;
	}
	if (listen(lfd, 1) < 0) {
		rc = rp_error(-errno, "listen on TCP port %d: %s", port, strerror(errno));
		goto close_listener;
	}
	for (;;) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int prc = poll(&pfd, 1, ms_left(deadline));

		if (prc < 0 && errno == EINTR)
			continue;
		if (prc == 0) {
			rc = rp_error(-ETIMEDOUT, "no peer connected to TCP port %d in time", port);
			goto close_listener;
		}
		fd = accept4(lfd, (struct sockaddr *)&peer, &peer_len, SOCK_CLOEXEC);
		if (fd >= 0)
			break;
		if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
			rc = rp_error(-errno, "accept on TCP port %d: %s", port, strerror(errno));
			goto close_listener;
		}
	}
	if (getnameinfo((struct sockaddr *)&peer, peer_len, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		snprintf(name, sizeof(name), "peer on port %d", port);
	else
		snprintf(name, sizeof(name), "%s:%s", host, serv);
	rc = rp_oob_tcp_from_fd(oob, fd, name);
close_listener:
	close(lfd);
	return rc;
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
		for (;;) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };
			int rc = poll(&pfd, 1, ms_left(deadline));

			if (rc < 0 && errno == EINTR)
				continue;
			if (rc == 0) {
				close(fd);
				return -ETIMEDOUT;
			}
			break;
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
				last = fd;
			}
			freeaddrinfo(res);
		}
		/* the listener may not be up yet: try again until the deadline */
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
