/* test_engine_hold.c: a connection held from one pair sequence for the next (engine.h,
 * rp_engine_hold) over the verbs stand-in: reused only when both sides hold the two ends of one
 * connection and can run the settings on it, declined (a fresh sequence, never a failure) otherwise,
 * verified as its own sequence, never held after a failure, and released whole. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/engine.h"
#include "engine_harness.h"
#include "engine/engine_int.h"
#include "oob/oob.h"
#include "base/util.h"
#include "verbs_standin.h"

struct held_side {
	const struct rp_engine_cfg *cfg;
	struct rp_oob *oob;
	struct rp_engine_hold *hold;
	struct rp_pair_result res;
};

static void *held_target(void *arg)
{
	struct held_side *t = arg;

	rp_engine_pair_run_held(t->cfg, RP_ROLE_TARGET, &port_b, t->oob, 0, t->hold, &t->res);
	return NULL;
}

/* One sequence with a hold on each side (either may be NULL); each side's own result. */
static void run_held(const struct rp_engine_cfg *cw, struct rp_engine_hold *hw, const struct rp_engine_cfg *ct,
		     struct rp_engine_hold *ht, struct rp_pair_result *w, struct rp_pair_result *t)
{
	struct rp_oob a, b;
	struct held_side st = { .cfg = ct, .oob = &b, .hold = ht };
	pthread_t tid;

	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(pthread_create(&tid, NULL, held_target, &st), 0);
	rp_engine_pair_run_held(cw, RP_ROLE_WRITER, &port_a, &a, 0, hw, w);
	rp_oob_close(&a);
	pthread_join(tid, NULL);
	rp_oob_close(&b);
	*t = st.res;
}

static void probe_cfg(struct rp_engine_cfg *cfg)
{
	small_cfg(cfg);
	cfg->meas.msg_size = 512;
	cfg->meas.iters = 8;
	cfg->meas.warmup_iters = 0;
}

/* Sequence 1 (a small probe, held on both sides with room for cfg), then sequence 2 (cfg). */
static void probe_then(const struct rp_engine_cfg *cfg, struct rp_engine_hold *hw, struct rp_engine_hold *ht)
{
	struct rp_engine_cfg probe;
	struct rp_pair_result w, t;

	probe_cfg(&probe);
	*hw = (struct rp_engine_hold){ .room = &cfg->meas, .keep = true };
	*ht = (struct rp_engine_hold){ .room = &cfg->meas, .keep = true };
	run_held(&probe, hw, &probe, ht, &w, &t);
	if (w.status != RP_ST_OK)
		print_message("probe: %s / %s\n", w.reason, t.reason);
	assert_int_equal(w.status, RP_ST_OK);
	assert_int_equal(t.status, RP_ST_OK);
	assert_false(hw->reused || ht->reused);
	assert_non_null(hw->ep);
	assert_non_null(ht->ep);
	/* made for the later sequence: the larger buffer and depth */
	assert_true(ht->ep->buf.alloc_len >= cfg->meas.msg_size);
	assert_int_equal(ht->ep->made.msg_size, cfg->meas.msg_size);
	assert_int_equal(hw->ep->made.tx_depth, cfg->meas.tx_depth);
}

static void test_reused(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_engine_hold hw, ht;
	struct rp_pair_result w, t;
	uint32_t qpn0;
	int opens;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.tx_depth = 32;
	probe_then(&cfg, &hw, &ht);
	qpn0 = fk_next_qpn;
	opens = fk_opens;
	hw.keep = ht.keep = false;
	run_held(&cfg, &hw, &cfg, &ht, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_int_equal(t.status, RP_ST_OK);
	assert_true(w.verified);
	assert_true(hw.reused && ht.reused);
	assert_int_equal(fk_next_qpn, qpn0);     /* no QP created */
	assert_int_equal(fk_opens, opens);       /* no device opened */
	assert_int_equal(w.bytes, cfg.meas.iters * cfg.meas.msg_size);
	assert_int_equal(t.msg_size, cfg.meas.msg_size);
	assert_string_equal(w.dst.device, "fake0");
	assert_null(hw.ep);                      /* not kept: released with the sequence */
	assert_null(ht.ep);
	assert_true(fk_all_released());
}

/* A held connection carries any number of sequences while each passes and asks to keep it. */
static void test_reused_twice(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_engine_hold hw, ht;
	struct rp_pair_result w, t;
	uint32_t qpn0;

	(void)state;
	small_cfg(&cfg);
	probe_then(&cfg, &hw, &ht);
	qpn0 = fk_next_qpn;
	for (int i = 0; i < 2; i++) {
		run_held(&cfg, &hw, &cfg, &ht, &w, &t);
		assert_int_equal(w.status, RP_ST_OK);
		assert_true(hw.reused && ht.reused);
		assert_non_null(hw.ep);
	}
	assert_int_equal(fk_next_qpn, qpn0);
	rp_engine_hold_release(&hw);
	rp_engine_hold_release(&ht);
	assert_true(fk_all_released());
}

/* The verification is the sequence's own: a byte the held connection's run corrupts is found (the
 * target's buffer was cleared, the probe's bytes left nothing to pass on). */
static void test_reused_verifies(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_engine_hold hw, ht;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	probe_then(&cfg, &hw, &ht);
	fk_corrupt_off = 100;
	run_held(&cfg, &hw, &cfg, &ht, &w, &t);
	assert_true(hw.reused && ht.reused);
	assert_int_equal(w.status, RP_ST_DATA_MISMATCH);
	assert_int_equal(t.status, RP_ST_DATA_MISMATCH);
	assert_null(hw.ep);                      /* a failed sequence is never held */
	assert_null(ht.ep);
	assert_true(fk_all_released());
}

/* The deadlines are the sequence's own: on a held connection whose writes vanish, both sides end
 * (the writer's transport or its "no progress" window), nothing is held. */
static void test_reused_deadline(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_engine_hold hw, ht;
	struct rp_pair_result w, t;
	double t0;

	(void)state;
	small_cfg(&cfg);
	cfg.meas.cq_mod = 1;
	cfg.timeout_s = 0.5;
	cfg.no_mtucheck = true;
	probe_then(&cfg, &hw, &ht);
	fk_drop_from = fk_writes + 1;             /* every write of sequence 2 vanishes */
	t0 = rp_now();
	run_held(&cfg, &hw, &cfg, &ht, &w, &t);
	assert_true(hw.reused && ht.reused);
	assert_true(w.status == RP_ST_TIMEOUT || w.status == RP_ST_RETRY_EXCEEDED);
	assert_int_equal(t.status, w.status);
	assert_false(t.verified);
	assert_true(rp_now() - t0 < 10 * cfg.timeout_s);
	assert_null(hw.ep);
	assert_null(ht.ep);
	assert_true(fk_all_released());
}

/* Only the writer holds: the target declines, the writer drops its endpoint, a fresh sequence passes. */
static void test_declined_target_holds_none(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_engine_hold hw, ht;
	struct rp_pair_result w, t;
	uint32_t qpn0;

	(void)state;
	small_cfg(&cfg);
	probe_then(&cfg, &hw, &ht);
	rp_engine_hold_release(&ht);
	qpn0 = fk_next_qpn;
	run_held(&cfg, &hw, &cfg, NULL, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_int_equal(t.status, RP_ST_OK);
	assert_true(w.verified);
	assert_false(hw.reused);
	assert_int_equal(fk_next_qpn, qpn0 + 2 * cfg.meas.n_qps);   /* both sides fresh */
	assert_non_null(hw.ep);                  /* kept: the fresh one */
	rp_engine_hold_release(&hw);
	assert_true(fk_all_released());
}

/* Only the target holds: the writer sends a fresh CONN, the target drops its endpoint. */
static void test_declined_writer_holds_none(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_engine_hold hw, ht;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	probe_then(&cfg, &hw, &ht);
	rp_engine_hold_release(&hw);
	ht.keep = false;
	run_held(&cfg, NULL, &cfg, &ht, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_int_equal(t.status, RP_ST_OK);
	assert_false(ht.reused);
	assert_null(ht.ep);
	assert_true(fk_all_released());
}

/* Each side holds an end of a different connection: no match, both fresh. */
static void test_declined_other_connection(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_engine_hold hw, ht, hw2, ht2;
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	probe_then(&cfg, &hw, &ht);
	probe_then(&cfg, &hw2, &ht2);
	hw.keep = ht2.keep = false;
	run_held(&cfg, &hw, &cfg, &ht2, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_int_equal(t.status, RP_ST_OK);
	assert_false(hw.reused || ht2.reused);
	assert_null(hw.ep);
	assert_null(ht2.ep);
	rp_engine_hold_release(&ht);
	rp_engine_hold_release(&hw2);
	assert_true(fk_all_released());
}

/* Settings the held endpoint cannot run: another ACK timeout (a QP attribute fixed at RTS), a
 * message larger than its buffer, another QP count. Fresh sequences, both sides. */
static void test_not_fitting(void **state)
{
	for (int k = 0; k < 3; k++) {
		struct rp_engine_cfg cfg, other;
		struct rp_engine_hold hw, ht;
		struct rp_pair_result w, t;

		setup(state);
		small_cfg(&cfg);
		probe_then(&cfg, &hw, &ht);
		other = cfg;
		if (k == 0)
			other.qp.qp_timeout = 20;
		else if (k == 1)
			other.meas.msg_size = 2 * cfg.meas.msg_size;
		else
			other.meas.n_qps = 1;
		hw.keep = ht.keep = false;
		run_held(&other, &hw, &other, &ht, &w, &t);
		assert_int_equal(w.status, RP_ST_OK);
		assert_int_equal(t.status, RP_ST_OK);
		assert_false(hw.reused || ht.reused);
		assert_null(hw.ep);
		assert_null(ht.ep);
		assert_true(fk_all_released());
	}
}

/* Without room the probe's endpoint is the probe's size: a larger sequence cannot run on it. */
static void test_room_needed(void **state)
{
	struct rp_engine_cfg cfg, probe;
	struct rp_engine_hold hw = { .keep = true }, ht = { .keep = true };
	struct rp_pair_result w, t;

	(void)state;
	small_cfg(&cfg);
	probe_cfg(&probe);
	run_held(&probe, &hw, &probe, &ht, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_int_equal(ht.ep->made.msg_size, probe.meas.msg_size);
	run_held(&cfg, &hw, &cfg, &ht, &w, &t);
	assert_int_equal(w.status, RP_ST_OK);
	assert_false(hw.reused || ht.reused);
	rp_engine_hold_release(&hw);
	rp_engine_hold_release(&ht);
	assert_true(fk_all_released());
}

/* A writer that offers a connection the target does not hold, then offers again instead of its fresh
 * info: the target declines the first and fails on the second, naming it. */
static void test_hostile_second_offer(void **state)
{
	struct rp_engine_cfg cfg;
	struct hand_target h;
	struct rp_engine_msg m, got;
	struct rp_oob a, b;
	pthread_t tid;

	(void)state;
	small_cfg(&cfg);
	h.cfg = cfg;
	h.oob = &b;
	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(pthread_create(&tid, NULL, hand_target_main, &h), 0);
	hand_msg(&m, RP_MSG_CONN);
	m.u.conn.n_qps = 2;
	m.u.conn.qpn[0] = 0x900;
	m.u.conn.qpn[1] = 0x901;
	m.u.conn.mtu = 1024;
	m.u.conn.port = 1;
	m.u.conn.meas = cfg.meas;
	m.u.conn.progress_s = 0.5;
	m.u.conn.held_qpn = 0x777;
	m.u.conn.held_psn = 5;
	strcpy(m.u.conn.device, "fake0");
	assert_int_equal(rp_oob_send(&a, &m, sizeof(m), rp_now() + 2), 0);
	assert_int_equal(rp_oob_recv(&a, &got, sizeof(got), rp_now() + 2), 0);
	assert_int_equal(got.type, RP_MSG_CONN);
	assert_int_equal(got.u.conn.held_qpn, 0);   /* declined: a fresh endpoint's info */
	assert_int_equal(got.status, RP_ST_OK);
	assert_int_equal(rp_oob_send(&a, &m, sizeof(m), rp_now() + 2), 0);
	pthread_join(tid, NULL);
	rp_oob_close(&a);
	rp_oob_close(&b);
	assert_int_equal(h.res.status, RP_ST_PEER_LOST);
	assert_non_null(strstr(h.res.reason, "second offer"));
	assert_true(fk_all_released());
}

/* The wire: a held PSN without a held QP, or numbers past 24 bits, are refused. */
static void test_wire_held_fields(void **state)
{
	struct rp_engine_cfg cfg;
	struct rp_engine_msg m;
	char why[160];

	(void)state;
	rp_engine_cfg_default(&cfg);
	hand_msg(&m, RP_MSG_CONN);
	m.u.conn.n_qps = 1;
	m.u.conn.qpn[0] = 0x11;
	m.u.conn.mtu = 1024;
	m.u.conn.port = 1;
	m.u.conn.meas = cfg.meas;
	m.u.conn.meas.n_qps = 1;
	m.u.conn.held_qpn = 0x22;
	m.u.conn.held_psn = 0x33;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), 0);
	m.u.conn.held_qpn = 0;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "held"));
	m.u.conn.held_qpn = 0x1000000;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	m.u.conn.held_qpn = 0x22;
	m.u.conn.held_psn = 0x1000000;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	/* a held connection never carries --bidir (its own sequences) nor --cm (connects anew) */
	m.u.conn.held_psn = 0x33;
	m.u.conn.meas.bidir = 1;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	m.u.conn.meas.bidir = 0;
	m.u.conn.cm = 1;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), -EBADMSG);
	m.u.conn.held_qpn = m.u.conn.held_psn = 0;
	assert_int_equal(rp_engine_msg_validate(&m, sizeof(m), RP_MSG_CONN, why, sizeof(why)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_reused, setup),
		cmocka_unit_test_setup(test_reused_twice, setup),
		cmocka_unit_test_setup(test_reused_verifies, setup),
		cmocka_unit_test_setup(test_reused_deadline, setup),
		cmocka_unit_test_setup(test_declined_target_holds_none, setup),
		cmocka_unit_test_setup(test_declined_writer_holds_none, setup),
		cmocka_unit_test_setup(test_declined_other_connection, setup),
		cmocka_unit_test_setup(test_not_fitting, setup),
		cmocka_unit_test_setup(test_room_needed, setup),
		cmocka_unit_test_setup(test_hostile_second_offer, setup),
		cmocka_unit_test_setup(test_wire_held_fields, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
