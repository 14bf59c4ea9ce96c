/* test_session_gate.c: the pair listener's gate over real loopback TCP sockets: hostile clients (silent,
 * garbage, a truncated hello, another version, the wrong token, an address off the allow-list) are
 * dropped, each when its own deadline passes or at once, and the valid client queued behind them is
 * let in; the writer's side learns why it was refused. Assertions are on statuses, never on time. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/log.h"
#include "base/netacl.h"
#include "oob/oob.h"
#include "session/session_gate.h"
#include "session/session_wire.h"
#include "base/stop.h"
#include "base/util.h"

#define TOKEN "s3cret-token-42"
#define CLIENT_WAIT_S 30.0   /* a bound so a broken gate fails the test instead of hanging it */

struct listener {
	int lfd;
	int port;
};

static void listener_open(struct listener *l)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	assert_int_equal(rp_oob_tcp_listen("127.0.0.1", 0, &l->lfd), 0);
	assert_int_equal(getsockname(l->lfd, (struct sockaddr *)&sa, &len), 0);
	l->port = ntohs(sa.sin_port);
}

/* A raw client socket connected to the listener (in its backlog until accepted). */
static int raw_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* One frame as the TCP side channel sends it: a 4-byte length in network order, then the bytes
 * (only the first `send_len` of them when a truncated frame is wanted). */
static void raw_frame(int fd, const void *buf, uint32_t len, size_t send_len)
{
	uint32_t n = htonl(len);

	assert_int_equal(send(fd, &n, 4, MSG_NOSIGNAL), 4);
	if (send_len)
		assert_int_equal(send(fd, buf, send_len, MSG_NOSIGNAL), (ssize_t)send_len);
}

static struct rp_sw_msg hello_msg(const char *token)
{
	struct rp_sw_msg m;

	rp_sw_init(&m, RP_SW_HELLO);
	m.u.hello.retest = 1;
	m.u.hello.min_bw = 0.9;
	m.u.hello.outlier = 0.5;
	rp_token_field(token, m.u.hello.token);
	return m;
}

/* Block until the listener closes fd: true when it did (EOF or reset), false when the bound passed. */
static bool closed_by_peer(int fd)
{
	struct timeval tv = { (time_t)CLIENT_WAIT_S, 0 };
	char buf[512];

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		ssize_t r = recv(fd, buf, sizeof(buf), 0);

		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return true;
		if (r < 0)
			return false;
		/* an ACK with a refusal may come first; read on to the close */
	}
}

struct good_client {
	int port;
	const char *token;
	int hello_rc;        /* what rp_session_hello returned */
	int send_rc;         /* after being let in, a message for the test to receive */
};

static void *good_client_main(void *arg)
{
	struct good_client *g = arg;
	struct rp_sw_hello h;
	struct rp_oob oob;
	uint32_t ping = 0x50494e47;

	memset(&h, 0, sizeof(h));
	h.retest = 1;
	h.min_bw = 0.9;
	h.outlier = 0.5;
	rp_token_field(g->token, h.token);
	g->hello_rc = rp_oob_tcp_connect(&oob, "127.0.0.1", g->port, rp_now() + CLIENT_WAIT_S);
	if (g->hello_rc)
		return NULL;
	g->hello_rc = rp_session_hello(&oob, &h, rp_now() + CLIENT_WAIT_S);
	if (!g->hello_rc)
		g->send_rc = rp_oob_send(&oob, &ping, sizeof(ping), rp_now() + CLIENT_WAIT_S);
	/* wait for the test to close its side, so the message is read first */
	if (!g->hello_rc) {
		uint32_t bye;

		(void)rp_oob_recv(&oob, &bye, sizeof(bye), rp_now() + CLIENT_WAIT_S);
	}
	rp_oob_close(&oob);
	return NULL;
}

static struct rp_session_auth auth_with(const struct rp_acl *acl, const char *token, double timeout_s)
{
	struct rp_session_auth a = { .allow = acl, .timeout_s = timeout_s };

	rp_token_field(token, a.token);
	return a;
}

/* The gate lets the valid client in: it receives the client's ping on the channel it returned. */
static void expect_let_in(struct rp_oob *oob, struct good_client *g, pthread_t th)
{
	uint32_t ping = 0, bye = 1;

	assert_int_equal(rp_oob_recv(oob, &ping, sizeof(ping), rp_now() + CLIENT_WAIT_S), 0);
	assert_int_equal(ping, 0x50494e47);
	assert_int_equal(rp_oob_send(oob, &bye, sizeof(bye), rp_now() + CLIENT_WAIT_S), 0);
	rp_oob_close(oob);
	pthread_join(th, NULL);
	assert_int_equal(g->hello_rc, 0);
	assert_int_equal(g->send_rc, 0);
}

/* Silence, garbage, a huge length, a truncated hello, another version, a wrong token and no token,
 * all queued before one valid client: each is dropped and the valid one is let in. The silent one is
 * first in line, so the valid one gets in only because the silent one's deadline passed. */
static void test_hostile_then_valid(void **state)
{
	struct listener l;
	struct rp_pair_refusals ref;
	struct rp_session_auth auth = auth_with(NULL, TOKEN, 0.3);
	struct good_client g = { .token = TOKEN };
	struct rp_sw_msg m;
	struct rp_sw_hello got;
	struct rp_oob oob;
	pthread_t th;
	int fds[9], n = 0, rc;

	(void)state;
	memset(&ref, 0, sizeof(ref));
	listener_open(&l);
	g.port = l.port;
	fds[n++] = raw_connect(l.port);                                   /* silent */
	fds[n] = raw_connect(l.port);                                     /* garbage (a huge length) */
	assert_int_equal(send(fds[n++], "GET / HTTP/1.1\r\n\r\n", 18, MSG_NOSIGNAL), 18);
	fds[n] = raw_connect(l.port);                                     /* a frame of the wrong size */
	raw_frame(fds[n++], "hello?", 6, 6);
	m = hello_msg(TOKEN);
	fds[n] = raw_connect(l.port);                                     /* truncated, then closed */
	raw_frame(fds[n], &m, sizeof(m), sizeof(m) / 2);
	shutdown(fds[n++], SHUT_WR);
	m = hello_msg(TOKEN);
	m.version = RP_SW_VERSION + 1;
	fds[n] = raw_connect(l.port);                                     /* another version */
	raw_frame(fds[n++], &m, sizeof(m), sizeof(m));
	m = hello_msg(TOKEN);
	m.version = RP_SW_VERSION - 1;
	fds[n] = raw_connect(l.port);                                     /* an older release: a shorter hello */
	raw_frame(fds[n++], &m, sizeof(m) - 8, sizeof(m) - 8);
	m = hello_msg("wrong-token-99");
	fds[n] = raw_connect(l.port);                                     /* wrong token */
	raw_frame(fds[n++], &m, sizeof(m), sizeof(m));
	m = hello_msg(NULL);
	fds[n] = raw_connect(l.port);                                     /* no token */
	raw_frame(fds[n++], &m, sizeof(m), sizeof(m));
	assert_int_equal(pthread_create(&th, NULL, good_client_main, &g), 0);

	rc = rp_session_accept(l.lfd, &auth, rp_now() + CLIENT_WAIT_S, &oob, &got, &ref);
	assert_int_equal(rc, 0);
	expect_let_in(&oob, &g, th);
	assert_int_equal(ref.silent, 1);
	assert_int_equal(ref.garbage, 3);
	assert_int_equal(ref.version, 2);
	assert_int_equal(ref.token, 2);
	assert_int_equal(ref.not_allowed, 0);
	/* what was let through is the valid client's hello, without the token */
	assert_int_equal(got.retest, 1);
	for (size_t i = 0; i < RP_TOKEN_MAX; i++)
		assert_int_equal(got.token[i], 0);
	for (int i = 0; i < n; i++) {
		assert_true(closed_by_peer(fds[i]));   /* every hostile client was closed */
		close(fds[i]);
	}
	close(l.lfd);
}

struct two_writers {
	struct good_client bad, good;
};

static void *two_writers_main(void *arg)
{
	struct two_writers *w = arg;

	good_client_main(&w->bad);
	good_client_main(&w->good);
	return NULL;
}

/* A refused writer hears why (the wrong token is -EACCES), and the listener goes on to the next. */
static void test_writer_learns_refusal(void **state)
{
	struct listener l;
	struct rp_pair_refusals ref;
	struct rp_session_auth auth = auth_with(NULL, TOKEN, 5);
	struct two_writers w = { .bad = { .token = "not-the-token" }, .good = { .token = TOKEN } };
	struct rp_sw_hello got;
	struct rp_oob oob;
	pthread_t th;

	(void)state;
	memset(&ref, 0, sizeof(ref));
	listener_open(&l);
	w.bad.port = w.good.port = l.port;
	assert_int_equal(pthread_create(&th, NULL, two_writers_main, &w), 0);
	assert_int_equal(rp_session_accept(l.lfd, &auth, rp_now() + CLIENT_WAIT_S, &oob, &got, &ref), 0);
	expect_let_in(&oob, &w.good, th);
	assert_int_equal(w.bad.hello_rc, -EACCES);
	assert_int_equal(ref.token, 1);
	close(l.lfd);
}

/* A writer against a listener of another release: the listener's answer has another size, and its
 * header names the version: the writer says so (-EPROTONOSUPPORT), not "invalid message". */
static void test_writer_hears_other_release(void **state)
{
	struct listener l;
	struct good_client g = { .token = TOKEN };
	struct rp_sw_msg m;
	pthread_t th;
	char buf[4 + sizeof(m)];
	size_t got = 0;
	int fd;

	(void)state;
	listener_open(&l);
	g.port = l.port;
	assert_int_equal(pthread_create(&th, NULL, good_client_main, &g), 0);
	{
		struct pollfd pfd = { .fd = l.lfd, .events = POLLIN };

		assert_int_equal(poll(&pfd, 1, (int)(CLIENT_WAIT_S * 1000)), 1);   /* the socket is non-blocking */
	}
	fd = accept(l.lfd, NULL, NULL);
	assert_true(fd >= 0);
	fcntl(fd, F_SETFL, 0);
	while (got < sizeof(buf)) {
		ssize_t r = recv(fd, buf + got, sizeof(buf) - got, 0);

		assert_true(r > 0);
		got += (size_t)r;
	}
	rp_sw_init(&m, RP_SW_ACK);
	m.version = RP_SW_VERSION + 1;   /* a newer listener, whose messages are 8 bytes longer */
	m.length = sizeof(m) + 8;
	{
		char big[sizeof(m) + 8];

		memset(big, 0, sizeof(big));
		memcpy(big, &m, sizeof(m));
		raw_frame(fd, big, sizeof(big), sizeof(big));
	}
	pthread_join(th, NULL);
	assert_int_equal(g.hello_rc, -EPROTONOSUPPORT);
	close(fd);
	close(l.lfd);
}

/* A client off the allow-list is closed at once, without an answer; one on it is let in. */
static void test_allow_list(void **state)
{
	struct listener l;
	struct rp_acl acl;
	struct rp_pair_refusals ref;
	struct rp_session_auth auth;
	struct good_client g = { .token = TOKEN };
	struct rp_sw_hello got;
	struct rp_oob oob;
	pthread_t th;
	int fd;

	(void)state;
	memset(&ref, 0, sizeof(ref));
	listener_open(&l);
	g.port = l.port;
	/* 10/8 only: the loopback client is refused; it hears the close, no ACK */
	assert_int_equal(rp_acl_parse("10.0.0.0/8,fd00::/8", &acl, NULL, 0), 0);
	auth = auth_with(&acl, TOKEN, 5);
	fd = raw_connect(l.port);
	assert_int_equal(rp_session_accept(l.lfd, &auth, rp_now() + 0.5, &oob, &got, &ref), -ETIMEDOUT);
	assert_int_equal(ref.not_allowed, 1);
	assert_true(closed_by_peer(fd));
	close(fd);
	/* with 127.0.0.0/8 on the list the same client is let in */
	assert_int_equal(rp_acl_parse("10.0.0.0/8,127.0.0.0/8", &acl, NULL, 0), 0);
	assert_int_equal(pthread_create(&th, NULL, good_client_main, &g), 0);
	assert_int_equal(rp_session_accept(l.lfd, &auth, rp_now() + CLIENT_WAIT_S, &oob, &got, &ref), 0);
	expect_let_in(&oob, &g, th);
	assert_int_equal(ref.not_allowed, 1);
	close(l.lfd);
}

/* Nobody valid before the accept deadline: -ETIMEDOUT, even while a silent client is connected. */
static void test_deadline_with_only_silence(void **state)
{
	struct listener l;
	struct rp_pair_refusals ref;
	struct rp_session_auth auth = auth_with(NULL, TOKEN, 0.2);
	struct rp_sw_hello got;
	struct rp_oob oob;
	int fd;

	(void)state;
	memset(&ref, 0, sizeof(ref));
	listener_open(&l);
	fd = raw_connect(l.port);
	assert_int_equal(rp_session_accept(l.lfd, &auth, rp_now() + 1.0, &oob, &got, &ref), -ETIMEDOUT);
	assert_int_equal(ref.silent, 1);
	assert_true(closed_by_peer(fd));
	close(fd);
	close(l.lfd);
}

/* Issue 26 item 20: the reason a listener gives when no writer got in names how long it waited and
 * each refused client's cause (the listener's report said only "Connection timed out", 0.0 s). */
static void test_wait_reason(void **state)
{
	struct rp_pair_refusals ref = { .token = 1, .silent = 2 };
	char buf[300];

	(void)state;
	rp_pairsrv_wait_reason(60.04, 60, &ref, buf, sizeof(buf));
	assert_string_equal(buf, "no valid writer within --wait 60 s (waited 60.0 s); refused 3 clients: 2 silent past "
			    "--timeout, 1 with a wrong token");
	rp_pairsrv_wait_reason(5.01, 5, NULL, buf, sizeof(buf));
	assert_string_equal(buf, "no valid writer within --wait 5 s (waited 5.0 s); no client connected");
}

/* A stop request ends the wait with -EINTR, also while a client is in its hello. */
static void test_stop(void **state)
{
	struct listener l;
	struct rp_session_auth auth = auth_with(NULL, TOKEN, 5);
	struct rp_sw_hello got;
	struct rp_oob oob;
	int fd;

	(void)state;
	listener_open(&l);
	rp_stop_request(SIGTERM);
	assert_int_equal(rp_session_accept(l.lfd, &auth, INFINITY, &oob, &got, NULL), -EINTR);
	fd = raw_connect(l.port);
	assert_int_equal(rp_session_accept(l.lfd, &auth, INFINITY, &oob, &got, NULL), -EINTR);
	rp_stop_reset();
	close(fd);
	close(l.lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_then_valid),
		cmocka_unit_test(test_writer_learns_refusal),
		cmocka_unit_test(test_writer_hears_other_release),
		cmocka_unit_test(test_allow_list),
		cmocka_unit_test(test_deadline_with_only_silence),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_wait_reason),
	};

	rp_log_set_level(RP_LOG_ERROR);   /* the refusals are warnings; keep the test output readable */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
