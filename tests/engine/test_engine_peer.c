/* test_engine_peer.c: the engine against a confused or hostile peer: garbage on the side channel,
 * a CONN that asks for a 1 TiB buffer (rejected before anything is allocated), every field of every
 * wire message validated, and a message that arrives after a short recv timed out.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine_harness.h"
#include "fixture_health.h"
#include "base/log.h"
#include "discover/node.h"
#include "base/sanitize.h"
#include "base/stop.h"
#include "oob/oob.h"
#include "base/util.h"
#include "testutil.h"
#include "verbs_standin.h"

/* A peer that answers with garbage of the right size: rejected by validation, reported as peer_lost. */
static void test_bad_peer_message(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_pair_result r;
	struct rp_engine_msg junk;
	struct rp_oob a, b;

	(void)state;
	small_cfg(&cfg);
	memset(&junk, 0x5a, sizeof(junk));
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(rp_oob_send(&b, &junk, sizeof(junk), rp_now() + 1), 0);
	assert_int_equal(rp_engine_pair_run(&cfg, RP_ROLE_WRITER, &port_a, &a, 0, &r), 1);
	assert_int_equal(r.status, RP_ST_PEER_LOST);
	assert_non_null(strstr(r.reason, "bad magic"));
	rp_oob_close(&a);
	rp_oob_close(&b);
	assert_true(fk_all_released());
}

/* A hostile writer asks for a 1 TiB buffer: the target rejects the message before it opens a device,
 * allocates or registers anything. (Before: only msg_size != 0 was checked.) */
static void test_hostile_conn_allocates_nothing(void **state)
{
	struct hand_target h;
	struct rp_engine_cfg cfg;
	struct rp_engine_msg m;
	struct rp_oob a, b;
	pthread_t tid;

	(void)state;
	small_cfg(&h.cfg);
	h.oob = &b;
	rp_engine_cfg_default(&cfg);
	hand_msg(&m, RP_MSG_CONN);
	m.u.conn.n_qps = 1;
	m.u.conn.qpn[0] = 0x42;
	m.u.conn.mtu = 1024;
	m.u.conn.port = 1;
	m.u.conn.meas = cfg.meas;
	m.u.conn.meas.msg_size = 1ULL << 40;
	m.u.conn.buf_len = 1ULL << 40;
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(pthread_create(&tid, NULL, hand_target_main, &h), 0);
	assert_int_equal(rp_oob_send(&a, &m, sizeof(m), rp_now() + 2), 0);
	/* the writer is told why, at once */
	assert_int_equal(rp_oob_recv(&a, &m, sizeof(m), rp_now() + 5), 0);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, NULL, 0), 0);
	assert_int_equal(m.status, RP_ST_PEER_LOST);
	assert_non_null(strstr(m.reason, "message size"));
	pthread_join(tid, NULL);
	rp_oob_close(&a);
	rp_oob_close(&b);
	assert_int_equal(h.res.status, RP_ST_PEER_LOST);
	assert_non_null(strstr(h.res.reason, "message size"));
	assert_int_equal(fk_opens, 0);
	assert_int_equal(fk_n_mr_access, 0);
	assert_true(fk_all_released());
}

/* ---------------------------------------------------------------------------------------------- */
/* the wire */

static void valid_conn(struct rp_engine_msg *m)
{
	struct rp_engine_cfg cfg;

	memset(m, 0, sizeof(*m));
	m->magic = RP_MSG_MAGIC;
	m->version = RP_MSG_VERSION;
	m->type = RP_MSG_CONN;
	m->length = sizeof(*m);
	m->u.conn.n_qps = 2;
	m->u.conn.qpn[0] = 0x11;
	m->u.conn.qpn[1] = 0x12;
	m->u.conn.mtu = 1024;
	m->u.conn.port = 1;
	m->u.conn.buf_len = 4096;
	m->u.conn.progress_s = 0.5;
	rp_engine_cfg_default(&cfg);
	m->u.conn.meas = cfg.meas;
	m->u.conn.meas.msg_size = 4096;
	m->u.conn.meas.tx_depth = 16;
	m->u.conn.meas.n_qps = 2;
	strcpy(m->u.conn.device, "rxe0");
}

static void test_wire_validation(void **state)
{
	struct rp_engine_msg m;
	char why[160];

	(void)state;
	valid_conn(&m);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), 0);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m) - 1, RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_READY, why, sizeof(why)), -EBADMSG);
	m.magic = 0x12345678;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "magic"));
	m.magic = __builtin_bswap32(RP_MSG_MAGIC);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "byte order"));
	valid_conn(&m);
	m.version = RP_MSG_VERSION + 1;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "version"));
	valid_conn(&m);
	m.length = 12;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	m.status = RP_ST_COUNT_;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	memset(m.reason, 'x', sizeof(m.reason));
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	m.u.conn.n_qps = RP_ENGINE_MAX_QPS + 1;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	m.u.conn.mtu = 1500;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	m.u.conn.qpn[1] = 0;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	m.u.conn.buf_len = 100;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	valid_conn(&m);
	memset(m.u.conn.device, 'y', sizeof(m.u.conn.device));
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	/* a failure report carries no body to check */
	valid_conn(&m);
	m.status = RP_ST_RTR;
	m.u.conn.n_qps = 0;
	strcpy(m.reason, "modify qp to RTR: Connection timed out");
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), 0);
}

/* The side channel keeps a message that arrives after a short recv timed out. */
static void test_oob_partial(void **state)
{
	struct rp_oob a, b;
	char out[100], in[100];

	(void)state;
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(rp_oob_recv(&b, in, sizeof(in), rp_now() + 0.01), -ETIMEDOUT);
	memset(out, 7, sizeof(out));
	assert_int_equal(rp_oob_send(&a, out, sizeof(out), rp_now() + 1), 0);
	assert_int_equal(rp_oob_recv(&b, in, 50, rp_now() + 1), -EMSGSIZE);
	assert_int_equal(rp_oob_send(&a, out, sizeof(out), rp_now() + 1), 0);
	assert_int_equal(rp_oob_recv(&b, in, sizeof(in), rp_now() + 1), 0);
	assert_memory_equal(in, out, sizeof(in));
	rp_oob_close(&a);
	assert_int_equal(rp_oob_recv(&b, in, sizeof(in), rp_now() + 1), -ECONNRESET);
	rp_oob_close(&b);
}

/* The bidir flag on the wire is checked like every field; RP_MSGF_REVERSE never passes validation
 * (only the multiplexer sets and strips it); the measure rule refuses bidir with latency. */
static void test_bidir_wire(void **state)
{
	struct rp_engine_msg m;
	char why[160];

	(void)state;
	valid_conn(&m);
	m.u.conn.meas.bidir = 1;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), 0);
	m.u.conn.meas.bidir = 2;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "bidir"));
	valid_conn(&m);
	m.u.conn.meas.bidir = 1;
	m.u.conn.meas.mode = RP_MODE_LAT;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "latency"));
	valid_conn(&m);
	m.flags = RP_MSGF_REVERSE;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bidir_wire),
		cmocka_unit_test_setup(test_bad_peer_message, setup),
		cmocka_unit_test_setup(test_hostile_conn_allocates_nothing, setup),
		cmocka_unit_test(test_wire_validation),
		cmocka_unit_test(test_oob_partial),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
