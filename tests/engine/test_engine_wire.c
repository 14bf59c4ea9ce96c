/* test_engine_wire.c: the engine's trust boundary (rp_engine_msg_validate). A hostile or confused
 * peer changes one field of an otherwise valid message; every such message is rejected with a
 * reason, before any field is used, against the same limits as local options. What passes has its
 * strings sanitised. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "base/sanitize.h"

static void hdr(struct rp_engine_msg *m, enum rp_msg_type type)
{
	memset(m, 0, sizeof(*m));
	m->magic = RP_MSG_MAGIC;
	m->version = RP_MSG_VERSION;
	m->type = (uint16_t)type;
	m->length = sizeof(*m);
}

static void valid_conn(struct rp_engine_msg *m)
{
	struct rp_engine_cfg cfg;

	hdr(m, RP_MSG_CONN);
	rp_engine_cfg_default(&cfg);
	m->u.conn.meas = cfg.meas;
	m->u.conn.meas.n_qps = 2;
	m->u.conn.n_qps = 2;
	m->u.conn.qpn[0] = 0x11;
	m->u.conn.qpn[1] = 0x12;
	m->u.conn.mtu = 1024;
	m->u.conn.link_layer = IBV_LINK_LAYER_ETHERNET;
	m->u.conn.port = 1;
	m->u.conn.gid_index = 3;
	m->u.conn.buf_len = cfg.meas.msg_size;
	m->u.conn.progress_s = 2.5;
	strcpy(m->u.conn.node, "node1");
	strcpy(m->u.conn.device, "rxe0");
	strcpy(m->u.conn.mem, "host");
	strcpy(m->u.conn.mem_reg, "host");
}

static void valid_result(struct rp_engine_msg *m)
{
	hdr(m, RP_MSG_RESULT);
	m->u.result.verified = true;
	m->u.result.bad_offset = -1;
	m->u.result.gbps = 25;
	m->u.result.gbps_min = 20;
	m->u.result.gbps_min_at_s = 0.3;
}

/* One hostile change per case: the name says which field. */
struct mutation {
	const char *field;
	void (*apply)(struct rp_engine_msg *m);
};

#define C(m) (&(m)->u.conn)
static void m_version(struct rp_engine_msg *m) { m->version = 1; }
static void m_flags(struct rp_engine_msg *m) { m->flags = 0x80; }
static void m_status(struct rp_engine_msg *m) { m->status = 999; }
static void m_nqps0(struct rp_engine_msg *m) { C(m)->n_qps = 0; C(m)->meas.n_qps = 0; }
static void m_nqps_big(struct rp_engine_msg *m) { C(m)->n_qps = 65; C(m)->meas.n_qps = 65; }
static void m_nqps_mismatch(struct rp_engine_msg *m) { C(m)->meas.n_qps = 1; }
static void m_qpn(struct rp_engine_msg *m) { C(m)->qpn[1] = 0x1000000; }
static void m_psn(struct rp_engine_msg *m) { C(m)->psn[0] = 0x1000000; }
static void m_mtu(struct rp_engine_msg *m) { C(m)->mtu = 9000; }
static void m_link_layer(struct rp_engine_msg *m) { C(m)->link_layer = 7; }
static void m_soft(struct rp_engine_msg *m) { C(m)->soft = 2; }
static void m_lid(struct rp_engine_msg *m) { C(m)->lid = 0x10000; }
static void m_link_rate(struct rp_engine_msg *m) { C(m)->link_mbps = UINT32_MAX; }
static void m_port0(struct rp_engine_msg *m) { C(m)->port = 0; }
static void m_port_big(struct rp_engine_msg *m) { C(m)->port = 256; }
static void m_gid_index(struct rp_engine_msg *m) { C(m)->gid_index = 5000; }
static void m_cm(struct rp_engine_msg *m) { C(m)->cm = 2; }
static void m_cm_port(struct rp_engine_msg *m) { C(m)->cm_port = 70000; }
static void m_progress_nan(struct rp_engine_msg *m) { C(m)->progress_s = NAN; }
static void m_progress_neg(struct rp_engine_msg *m) { C(m)->progress_s = -1; }
static void m_buf_tib(struct rp_engine_msg *m) { C(m)->buf_len = 1ULL << 40; }
static void m_buf_short(struct rp_engine_msg *m) { C(m)->buf_len = 100; }
static void m_mode(struct rp_engine_msg *m) { C(m)->meas.mode = 7; }
static void m_size0(struct rp_engine_msg *m) { C(m)->meas.msg_size = 0; }
static void m_size_4g(struct rp_engine_msg *m) { C(m)->meas.msg_size = 1ULL << 32; C(m)->buf_len = 0; }
static void m_size_tib(struct rp_engine_msg *m) { C(m)->meas.msg_size = 1ULL << 40; C(m)->buf_len = 1ULL << 40; }
static void m_iters_big(struct rp_engine_msg *m) { C(m)->meas.iters = RP_ENGINE_MAX_ITERS + 1; }
static void m_warmup_big(struct rp_engine_msg *m) { C(m)->meas.warmup_iters = UINT64_MAX; }
static void m_iters_overflow(struct rp_engine_msg *m)
{
	C(m)->meas.msg_size = RP_ENGINE_MAX_MSG_SIZE;
	C(m)->buf_len = 0;
	C(m)->meas.iters = RP_ENGINE_MAX_ITERS;
}
static void m_nothing(struct rp_engine_msg *m) { C(m)->meas.iters = 0; C(m)->meas.duration_s = 0; }
static void m_duration_nan(struct rp_engine_msg *m) { C(m)->meas.iters = 0; C(m)->meas.duration_s = NAN; }
static void m_duration_inf(struct rp_engine_msg *m) { C(m)->meas.iters = 0; C(m)->meas.duration_s = INFINITY; }
static void m_duration_neg(struct rp_engine_msg *m) { C(m)->meas.duration_s = -5; }
static void m_lat_duration(struct rp_engine_msg *m) { C(m)->meas.mode = RP_MODE_LAT; C(m)->meas.duration_s = 3; }
static void m_depth0(struct rp_engine_msg *m) { C(m)->meas.tx_depth = 0; }
static void m_depth_big(struct rp_engine_msg *m) { C(m)->meas.tx_depth = RP_ENGINE_MAX_DEPTH + 1; }
static void m_cq_mod0(struct rp_engine_msg *m) { C(m)->meas.cq_mod = 0; }
static void m_cq_mod_big(struct rp_engine_msg *m) { C(m)->meas.cq_mod = C(m)->meas.tx_depth + 1; }
static void m_interval_nan(struct rp_engine_msg *m) { C(m)->meas.interval_s = NAN; }
static void m_interval0(struct rp_engine_msg *m) { C(m)->meas.interval_s = 0; }
static void m_verify(struct rp_engine_msg *m) { C(m)->meas.verify = 2; }
static void m_node(struct rp_engine_msg *m) { memset(C(m)->node, 'n', sizeof(C(m)->node)); }
static void m_device(struct rp_engine_msg *m) { memset(C(m)->device, 'd', sizeof(C(m)->device)); }
static void m_mem(struct rp_engine_msg *m) { memset(C(m)->mem, 'm', sizeof(C(m)->mem)); }
static void m_mem_reg(struct rp_engine_msg *m) { memset(C(m)->mem_reg, 'r', sizeof(C(m)->mem_reg)); }
static void m_reason(struct rp_engine_msg *m) { memset(m->reason, 'x', sizeof(m->reason)); }

static void test_hostile_conn(void **state)
{
	static const struct mutation cases[] = {
		{ "version", m_version }, { "flags", m_flags }, { "status", m_status }, { "reason", m_reason },
		{ "n_qps 0", m_nqps0 }, { "n_qps 65", m_nqps_big }, { "n_qps vs meas", m_nqps_mismatch },
		{ "qpn", m_qpn }, { "psn", m_psn }, { "mtu", m_mtu }, { "link_layer", m_link_layer },
		{ "soft", m_soft }, { "lid", m_lid }, { "link_mbps", m_link_rate }, { "port 0", m_port0 }, { "port 256", m_port_big }, { "gid_index", m_gid_index },
		{ "cm", m_cm }, { "cm_port", m_cm_port }, { "progress NaN", m_progress_nan },
		{ "progress < 0", m_progress_neg }, { "buf_len 1 TiB", m_buf_tib }, { "buf_len short", m_buf_short },
		{ "mode", m_mode }, { "msg_size 0", m_size0 }, { "msg_size 4 GiB", m_size_4g },
		{ "msg_size 1 TiB", m_size_tib }, { "iters", m_iters_big }, { "warmup", m_warmup_big },
		{ "iters x size", m_iters_overflow }, { "no iters, no duration", m_nothing },
		{ "duration NaN", m_duration_nan }, { "duration inf", m_duration_inf }, { "duration < 0", m_duration_neg },
		{ "latency with duration", m_lat_duration }, { "tx_depth 0", m_depth0 },
		{ "tx_depth 8193", m_depth_big }, { "cq_mod 0", m_cq_mod0 }, { "cq_mod > depth", m_cq_mod_big },
		{ "interval NaN", m_interval_nan }, { "interval 0", m_interval0 }, { "verify", m_verify },
		{ "node", m_node }, { "device", m_device }, { "mem", m_mem }, { "mem_reg", m_mem_reg },
	};
	struct rp_engine_msg m;
	char why[160];

	(void)state;
	valid_conn(&m);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		valid_conn(&m);
		cases[i].apply(&m);
		why[0] = '\0';
		rc = rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why));
		if (rc != -EBADMSG && rc != -EPROTO)
			fail_msg("hostile %s: accepted (rc %d)", cases[i].field, rc);
		if (!why[0])
			fail_msg("hostile %s: no reason", cases[i].field);
	}
}

/* a byte that is neither 0 nor 1 where a bool travels */
static void r_verified(struct rp_engine_msg *m) { memset(&m->u.result.verified, 3, 1); }
static void r_lat(struct rp_engine_msg *m) { memset(&m->u.result.lat_measured, 9, 1); }
static void r_offset(struct rp_engine_msg *m) { m->u.result.bad_offset = -2; }
static void r_offset_big(struct rp_engine_msg *m) { m->u.result.bad_offset = INT64_MAX; }
static void r_gbps_nan(struct rp_engine_msg *m) { m->u.result.gbps = NAN; }
static void r_gbps_inf(struct rp_engine_msg *m) { m->u.result.gbps = INFINITY; }
static void r_gbps_neg(struct rp_engine_msg *m) { m->u.result.gbps = -1; }
static void r_min_nan(struct rp_engine_msg *m) { m->u.result.gbps_min = NAN; }
static void r_at_nan(struct rp_engine_msg *m) { m->u.result.gbps_min_at_s = NAN; }
static void r_lat_min(struct rp_engine_msg *m) { m->u.result.lat_min_us = NAN; }
static void r_lat_med(struct rp_engine_msg *m) { m->u.result.lat_median_us = -INFINITY; }
static void r_lat_p99(struct rp_engine_msg *m) { m->u.result.lat_p99_us = NAN; }
static void r_lat_max(struct rp_engine_msg *m) { m->u.result.lat_max_us = -3; }
static void r_type(struct rp_engine_msg *m) { m->type = RP_MSG_CONN; }
static void r_magic(struct rp_engine_msg *m) { m->magic = 0x12345678; }
static void r_length(struct rp_engine_msg *m) { m->length = 12; }

static void test_hostile_result(void **state)
{
	static const struct mutation cases[] = {
		{ "verified", r_verified }, { "lat_measured", r_lat }, { "bad_offset -2", r_offset },
		{ "bad_offset huge", r_offset_big }, { "gbps NaN", r_gbps_nan }, { "gbps inf", r_gbps_inf },
		{ "gbps < 0", r_gbps_neg }, { "gbps_min NaN", r_min_nan }, { "gbps_min_at NaN", r_at_nan },
		{ "lat_min NaN", r_lat_min }, { "lat_median -inf", r_lat_med }, { "lat_p99 NaN", r_lat_p99 },
		{ "lat_max < 0", r_lat_max }, { "type", r_type }, { "magic", r_magic }, { "length", r_length },
		{ "version", m_version }, { "status", m_status }, { "reason", m_reason },
	};
	struct rp_engine_msg m;
	char why[160];

	(void)state;
	valid_result(&m);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_RESULT, why, sizeof(why)), 0);
	/* a failure report's result is checked too (its numbers reach the report) */
	valid_result(&m);
	m.status = RP_ST_DATA_MISMATCH;
	m.u.result.gbps = NAN;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_RESULT, why, sizeof(why)), -EBADMSG);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		valid_result(&m);
		cases[i].apply(&m);
		rc = rp_engine_msg_validate(&m, sizeof(m), RP_MSG_RESULT, why, sizeof(why));
		if (rc != -EBADMSG && rc != -EPROTO)
			fail_msg("hostile result %s: accepted (rc %d)", cases[i].field, rc);
	}
}

static void test_progress(void **state)
{
	struct rp_engine_msg m;

	(void)state;
	hdr(&m, RP_MSG_PROGRESS);
	m.u.progress.completed = 10;
	m.u.progress.elapsed_s = 1.5;
	/* progress is accepted where a result is awaited, and nowhere else */
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_RESULT, NULL, 0), 0);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_READY, NULL, 0), -EBADMSG);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, NULL, 0), -EBADMSG);
	m.u.progress.elapsed_s = NAN;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_RESULT, NULL, 0), -EBADMSG);
	hdr(&m, RP_MSG_TYPE_MAX_);
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_RESULT, NULL, 0), -EBADMSG);
}

/* Strings that pass the checks are made safe once, here: invalid UTF-8 and control characters of a
 * peer never reach a log, the terminal or JSON. */
static void test_strings_sanitised(void **state)
{
	struct rp_engine_msg m;

	(void)state;
	valid_conn(&m);
	strcpy(m.u.conn.node, "evil\x1b[2J\xff\xfe");
	strcpy(m.u.conn.device, "rxe\n0");
	strcpy(m.u.conn.mem, "ho\x7fst");
	strcpy(m.u.conn.mem_reg, "\xc3");
	strcpy(m.reason, "");
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, NULL, 0), 0);
	assert_string_equal(m.u.conn.node, "evil?[2J??");
	assert_string_equal(m.u.conn.device, "rxe?0");
	assert_string_equal(m.u.conn.mem, "ho?st");
	assert_string_equal(m.u.conn.mem_reg, "?");
	valid_result(&m);
	m.status = RP_ST_RETRY_EXCEEDED;
	strcpy(m.reason, "retry\r\nexceeded \x80");
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_RESULT, NULL, 0), 0);
	assert_string_equal(m.reason, "retry??exceeded ?");
	assert_true(rp_str_is_clean(m.reason));
}

/* The port counters a peer sends in RESULT are part of the trust boundary: a valid compact side is
 * accepted (its strings sanitised), every out-of-range field or unterminated name is refused. Fails
 * before the counters travelled (no ctr_src/ctr_dst in the wire result). */
static void valid_counters(struct rp_engine_msg *m)
{
	struct rp_pair_ctr_side *s = &m->u.result.ctr_dst;

	valid_result(m);
	s->measured = 1;
	s->verdict = RP_CV_LOSSY;
	s->cls = RP_CC_RETRANS;
	s->n_moved = 2;
	s->n = 1;
	strcpy(s->c[0].name, "out_of_seq_request");
	s->c[0].cls = RP_CC_RETRANS;
	s->c[0].delta = 40;
	strcpy(s->reason, "retransmissions 40/GB above 10/GB");
}

static void test_hostile_counters(void **state)
{
	struct rp_engine_msg m;
	char why[160];

	(void)state;
	valid_counters(&m);
	strcpy(m.u.result.ctr_dst.c[0].name, "out\x1b[31m");
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_RESULT, why, sizeof(why)), 0);
	assert_true(rp_str_is_clean(m.u.result.ctr_dst.c[0].name));
	for (int k = 0; k < 9; k++) {
		struct rp_pair_ctr_side *s = &m.u.result.ctr_dst;

		valid_counters(&m);
		switch (k) {
		case 0: s->n = RP_PAIR_CTR_MAX + 1; s->n_moved = 100; break;
		case 1: s->verdict = RP_CV_FAIL + 1; break;
		case 2: s->cls = RP_CC_COUNT_; break;
		case 3: s->c[0].cls = RP_CC_COUNT_; break;
		case 4: memset(s->c[0].name, 'a', sizeof(s->c[0].name)); break;
		case 5: memset(s->reason, 'a', sizeof(s->reason)); break;
		case 6: s->n_moved = 0; break;                     /* more kept than moved */
		case 7: s->measured = 0; break;                    /* not measured but a verdict */
		case 8: m.u.result.ctr_src.measured = 7; break;
		}
		if (rp_engine_msg_validate(&m, sizeof(m), RP_MSG_RESULT, why, sizeof(why)) != -EBADMSG)
			fail_msg("hostile counters case %d accepted", k);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_conn),
		cmocka_unit_test(test_hostile_result),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_strings_sanitised),
		cmocka_unit_test(test_hostile_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
