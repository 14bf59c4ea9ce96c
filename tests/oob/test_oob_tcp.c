/* test_oob_tcp.c: the TCP side channel's waits end on a stop request (lib/base/stop.h) and the listener
 * binds where it is told. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/log.h"
#include "oob/oob.h"
#include "base/stop.h"
#include "base/util.h"

/* With a stop requested, a wait that would last 60 s returns -EINTR instead, and nothing is lost:
 * after the reset the message sent meanwhile is received. */
static void test_stop_ends_waits(void **state)
{
	struct rp_oob a, b;
	uint32_t v = 7, got = 0;

	(void)state;
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	rp_stop_request(SIGINT);
	assert_int_equal(rp_oob_recv(&a, &got, sizeof(got), rp_now() + 60), -EINTR);
	assert_int_equal(rp_oob_send(&b, &v, sizeof(v), rp_now() + 60), -EINTR);
	rp_stop_reset();
	assert_int_equal(rp_oob_send(&b, &v, sizeof(v), rp_now() + 5), 0);
	assert_int_equal(rp_oob_recv(&a, &got, sizeof(got), rp_now() + 5), 0);
	assert_int_equal(got, 7);
	rp_oob_close(&a);
	rp_oob_close(&b);
}

/* A connect that would retry for 60 s ends with -EINTR on a stop. */
static void test_stop_ends_connect(void **state)
{
	struct rp_oob o;

	(void)state;
	rp_stop_request(SIGTERM);
	assert_int_equal(rp_oob_tcp_connect(&o, "127.0.0.1", 9, rp_now() + 60), -EINTR);
	rp_stop_reset();
}

/* --bind: the socket is bound to that address; an address that is not one is refused. */
static void test_bind(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[64];
	int lfd;

	(void)state;
	assert_int_equal(rp_oob_tcp_listen("127.0.0.1", 0, &lfd), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	assert_string_equal(host, "127.0.0.1");
	close(lfd);
	assert_int_equal(rp_oob_tcp_listen(NULL, 0, &lfd), 0);
	len = sizeof(ss);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&ss, &len), 0);
	assert_int_equal(ss.ss_family, AF_INET6);   /* dual stack: every address */
	close(lfd);
	assert_int_equal(rp_oob_tcp_listen("not an address!", 0, &lfd), -EINVAL);
	assert_int_equal(lfd, -1);
	/* 192.0.2.1 (TEST-NET-1) is not an address of this host */
	assert_int_equal(rp_oob_tcp_listen("192.0.2.1", 0, &lfd), -EADDRNOTAVAIL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stop_ends_waits),
		cmocka_unit_test(test_stop_ends_connect),
		cmocka_unit_test(test_bind),
	};

	rp_log_set_level(RP_LOG_ERROR + 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
