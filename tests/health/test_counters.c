/* test_counters.c: counter snapshots on fixture trees (rxe hw_counters, mlx5 PMA counters with
 * their saturating widths, device-level hw_counters), deltas (saturation, reset, missing and
 * unreadable files, re-registration, another process on the port), the --max-errors syntax and the
 * judgement (link flap and physical errors fail, retransmissions above a per-GB rate are lossy). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "health/counters.h"
#include "health/counters_json.h"
#include "fixture.h"
#include "fixture_health.h"
#include "base/log.h"
#include "testutil.h"

#define HW "ports/1/hw_counters"
#define PMA "ports/1/counters"

/* rxe0 with its counters, as the Soft-RoCE test bed has it. */
static void rxe_fixture(struct rp_fx *fx)
{
	assert_int_equal(rp_fx_create(fx), 0);
	assert_int_equal(rp_fx_machine_rxe(fx), 0);
	assert_int_equal(rp_fxh_rxe_counters(fx, "rxe0"), 0);
}

/* mlx5_0 of the DGX machine with PMA counters. */
static void mlx5_fixture(struct rp_fx *fx)
{
	assert_int_equal(rp_fx_create(fx), 0);
	assert_int_equal(rp_fx_machine_dgx_h100(fx), 0);
	assert_int_equal(rp_fxh_pma_counters(fx, "mlx5_0"), 0);
}

static void snap(struct rp_fx *fx, const char *dev, struct rp_ctr_snapshot *s)
{
	assert_int_equal(rp_ctr_snapshot(fx->root, dev, 1, s), 0);
}

static const struct rp_ctr_change *change(const struct rp_ctr_delta *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->changes[i].name, name) == 0)
			return &d->changes[i];
	return NULL;
}

static void test_classes(void **state)
{
	(void)state;
	assert_int_equal(rp_ctr_classify_name("link_downed"), RP_CC_FLAP);
	assert_int_equal(rp_ctr_classify_name("link_error_recovery"), RP_CC_FLAP);
	assert_int_equal(rp_ctr_classify_name("symbol_error"), RP_CC_PHYS);
	assert_int_equal(rp_ctr_classify_name("local_link_integrity_errors"), RP_CC_PHYS);
	assert_int_equal(rp_ctr_classify_name("excessive_buffer_overrun_errors"), RP_CC_PHYS);
	assert_int_equal(rp_ctr_classify_name("port_rcv_errors"), RP_CC_PHYS);
	/* sequence gaps (loss) apart from retransmissions that prove none (issue 26 item 6) */
	assert_int_equal(rp_ctr_classify_name("local_ack_timeout_err"), RP_CC_RESEND);
	assert_int_equal(rp_ctr_classify_name("packet_seq_err"), RP_CC_RETRANS);
	assert_int_equal(rp_ctr_classify_name("implied_nak_seq_err"), RP_CC_RETRANS);
	assert_int_equal(rp_ctr_classify_name("out_of_sequence"), RP_CC_RETRANS);
	assert_int_equal(rp_ctr_classify_name("duplicate_request"), RP_CC_RESEND);
	assert_int_equal(rp_ctr_classify_name("seq_err_naks_rcvd"), RP_CC_RETRANS);
	assert_int_equal(rp_ctr_classify_name("to_retransmits"), RP_CC_RESEND);
	/* rxe's retry counters */
	assert_int_equal(rp_ctr_classify_name("rcvd_seq_err"), RP_CC_RETRANS);
	assert_int_equal(rp_ctr_classify_name("out_of_seq_request"), RP_CC_RETRANS);
	assert_int_equal(rp_ctr_classify_name("completer_retry_err"), RP_CC_RESEND);
	assert_string_equal(rp_ctr_class_name(RP_CC_RESEND), "resend");
	assert_int_equal(rp_ctr_classify_name("np_cnp_sent"), RP_CC_CONGESTION);
	assert_int_equal(rp_ctr_classify_name("np_ecn_marked_roce_packets"), RP_CC_CONGESTION);
	assert_int_equal(rp_ctr_classify_name("rcvd_rnr_err"), RP_CC_RNR);
	assert_int_equal(rp_ctr_classify_name("rdma_sends"), RP_CC_OTHER);
	assert_int_equal(rp_ctr_classify_name("port_xmit_data"), RP_CC_TRAFFIC);
	assert_string_equal(rp_ctr_class_name(RP_CC_FLAP), "link_flap");
	assert_int_equal(rp_ctr_pma_bits("symbol_error", true), 16);
	assert_int_equal(rp_ctr_pma_bits("link_downed", true), 8);
	assert_int_equal(rp_ctr_pma_bits("local_link_integrity_errors", false), 4);
	assert_int_equal(rp_ctr_pma_bits("port_xmit_data", false), 32);
	assert_int_equal(rp_ctr_pma_bits("port_xmit_data", true), 64);
}

static void test_snapshot_rxe(void **state)
{
	struct rp_ctr_snapshot s;
	const struct rp_ctr_value *v;
	struct rp_fx fx;

	(void)state;
	rxe_fixture(&fx);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "rcvd_seq_err", 42), 0);
	snap(&fx, "rxe0", &s);
	assert_int_equal(s.n, 15);   /* lifespan is not a counter */
	assert_null(rp_ctr_find(&s, RP_CTR_HW_PORT, "lifespan"));
	v = rp_ctr_find(&s, RP_CTR_HW_PORT, "rcvd_seq_err");
	assert_non_null(v);
	assert_int_equal(v->value, 42);
	assert_int_equal(v->bits, 64);
	assert_int_equal(v->err, 0);
	assert_string_equal(s.node_guid, "5254:00ff:fe12:3456");
	/* A port that does not exist; a device without counters at all. */
	assert_int_equal(rp_ctr_snapshot(fx.root, "rxe0", 2, &s), -ENOENT);
	assert_int_equal(rp_ctr_snapshot(fx.root, "rxe9", 1, &s), -ENOENT);
	assert_int_equal(rp_ctr_snapshot(fx.root, "rxe1", 1, &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(rp_ctr_snapshot(fx.root, "rxe0", 0, &s), -EINVAL);
	rp_fx_destroy(&fx);
}

/* 5% loss on rxe: the retry counters move on a pair that passed bandwidth: lossy, with the counters. */
static void test_rxe_lossy_and_clean(void **state)
{
	struct rp_ctr_snapshot a, b;
	struct rp_ctr_delta d;
	struct rp_ctr_judgement j;
	struct rp_ctr_limits lim;
	struct rp_fx fx;

	(void)state;
	rp_ctr_limits_default(&lim);
	rxe_fixture(&fx);
	snap(&fx, "rxe0", &a);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "sent_pkts", 25000), 0);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "rdma_sends", 100), 0);
	snap(&fx, "rxe0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	assert_int_equal(d.n, 2);
	assert_false(d.unattributable);
	assert_false(d.traffic_checked);   /* this rxe has no sent_bytes */
	rp_ctr_judge(&d, 100u << 20, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	assert_string_equal(j.reason, "");
	assert_int_equal(j.moved, 1u << RP_CC_OTHER);

	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "rcvd_seq_err", 800), 0);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "duplicate_request", 434), 0);
	snap(&fx, "rxe0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	assert_int_equal(change(&d, "rcvd_seq_err")->delta, 800);
	assert_int_equal(change(&d, "rcvd_seq_err")->kind, RP_CK_EXACT);
	rp_ctr_judge(&d, 100u << 20, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_LOSSY);
	assert_int_equal(j.cls, RP_CC_RETRANS);
	/* Under 1 GB moved: judged as 1 GB, 800 gaps against 10/GB; the duplicates are what it cost. */
	assert_string_equal(j.reason, "packet loss: sequence gaps 800/GB above 10/GB: rcvd_seq_err +800; resent: "
			    "duplicate_request +434");
	assert_true(j.moved & (1u << RP_CC_RETRANS));
	rp_fx_destroy(&fx);
}

/* Issue 26 item 6: a healthy rxe link under a starved vCPU (the test bed, the quick start): the
 * target's duplicate_request +39 and the writer's completer_retry_err +7 in 13 MB, no sequence gap.
 * The data arrived and was resent: not lossy, and the reason says what it means. Gaps make it loss;
 * a "resend" limit judges retransmissions alone. Failed before: duplicates were "retransmissions
 * 39/GB above 10/GB", lossy, "the link drops packets". */
static void test_duplicates_are_not_loss(void **state)
{
	struct rp_ctr_delta d;
	struct rp_ctr_judgement j;
	struct rp_ctr_limits lim;
	char err[128];

	(void)state;
	rp_ctr_limits_default(&lim);
	memset(&d, 0, sizeof(d));
	d.n = 2;
	snprintf(d.changes[0].name, sizeof(d.changes[0].name), "duplicate_request");
	d.changes[0].cls = rp_ctr_classify_name("duplicate_request");
	d.changes[0].delta = 39;
	snprintf(d.changes[1].name, sizeof(d.changes[1].name), "rdma_recvs");
	d.changes[1].delta = 1;
	rp_ctr_judge(&d, 13107200, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	assert_true(j.moved & (1u << RP_CC_RESEND));
	assert_string_equal(j.reason, "resent, no loss: duplicate_request +39 (no sequence gap: the data arrived; a slow "
			    "peer or a lost ACK; on a soft device, host CPU starvation)");
	/* the writer's side: timeouts alone */
	snprintf(d.changes[0].name, sizeof(d.changes[0].name), "completer_retry_err");
	d.changes[0].cls = rp_ctr_classify_name("completer_retry_err");
	d.changes[0].delta = 500;
	rp_ctr_judge(&d, 13107200, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	/* a few gaps (the starved test bed: 2-7): judged alone, under the rate; the resends do not add */
	d.n = 3;
	snprintf(d.changes[2].name, sizeof(d.changes[2].name), "out_of_seq_request");
	d.changes[2].cls = rp_ctr_classify_name("out_of_seq_request");
	d.changes[2].delta = 7;
	rp_ctr_judge(&d, 13107200, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	/* 5% loss: 24 gaps in 2 MB */
	d.changes[2].delta = 24;
	rp_ctr_judge(&d, 2048000, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_LOSSY);
	assert_int_equal(j.cls, RP_CC_RETRANS);
	assert_string_equal(j.reason, "packet loss: sequence gaps 24/GB above 10/GB: out_of_seq_request +24; resent: "
			    "completer_retry_err +500");
	/* no gap, a resend limit of its own */
	d.n = 2;
	assert_int_equal(rp_ctr_limits_parse("resend=100/GB", &lim, err, sizeof(err)), 0);
	rp_ctr_judge(&d, 13107200, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_LOSSY);
	assert_int_equal(j.cls, RP_CC_RESEND);
	assert_string_equal(j.reason, "retransmissions without a sequence gap 500/GB above 100/GB: completer_retry_err +500");
}

/* The per-GB rate scales with bytes, and one retransmission in a short run is never lossy. */
static void test_rate_per_gb(void **state)
{
	struct rp_ctr_delta d;
	struct rp_ctr_judgement j;
	struct rp_ctr_limits lim;

	(void)state;
	rp_ctr_limits_default(&lim);
	memset(&d, 0, sizeof(d));
	d.n = 1;
	snprintf(d.changes[0].name, sizeof(d.changes[0].name), "out_of_sequence");
	d.changes[0].cls = RP_CC_RETRANS;
	d.changes[0].delta = 1;
	rp_ctr_judge(&d, 4096, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	d.changes[0].delta = 40;   /* 5 GB moved: 8/GB */
	rp_ctr_judge(&d, 5000000000ull, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	d.changes[0].delta = 60;   /* 12/GB */
	rp_ctr_judge(&d, 5000000000ull, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_LOSSY);
	/* A count limit instead of a rate. */
	lim.cls[RP_CC_RETRANS] = (struct rp_ctr_limit){ true, false, 60 };
	rp_ctr_judge(&d, 5000000000ull, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	lim.cls[RP_CC_RETRANS].value = 59;
	rp_ctr_judge(&d, 5000000000ull, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_LOSSY);
	assert_string_equal(j.reason, "packet loss: sequence gaps 60 above 59: out_of_sequence +60");
	/* off: reported as moved, never judged. */
	lim.cls[RP_CC_RETRANS].enabled = false;
	rp_ctr_judge(&d, 5000000000ull, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	assert_int_equal(j.moved, 1u << RP_CC_RETRANS);
}

static void test_flap_and_phys_fail(void **state)
{
	struct rp_ctr_snapshot a, b;
	struct rp_ctr_delta d;
	struct rp_ctr_judgement j;
	struct rp_ctr_limits lim;
	struct rp_fx fx;
	char err[128];

	(void)state;
	rp_ctr_limits_default(&lim);
	mlx5_fixture(&fx);
	snap(&fx, "mlx5_0", &a);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "symbol_error", 7), 0);
	snap(&fx, "mlx5_0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	rp_ctr_judge(&d, 1ull << 30, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_FAIL);
	assert_int_equal(j.cls, RP_CC_PHYS);
	assert_string_equal(j.reason, "physical-layer errors: symbol_error +7");
	/* phys=10 lets 7 pass. */
	assert_int_equal(rp_ctr_limits_parse("phys=10", &lim, err, sizeof(err)), 0);
	rp_ctr_judge(&d, 1ull << 30, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	/* A flap fails whatever else moved, and comes first. */
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "link_downed", 1), 0);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "symbol_error", 100), 0);
	snap(&fx, "mlx5_0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	rp_ctr_judge(&d, 1ull << 30, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_FAIL);
	assert_int_equal(j.cls, RP_CC_FLAP);
	assert_string_equal(j.reason, "link flapped: link_downed +1");
	rp_fx_destroy(&fx);
}

static void test_saturation(void **state)
{
	struct rp_ctr_snapshot a, b;
	struct rp_ctr_delta d;
	struct rp_ctr_judgement j;
	struct rp_ctr_limits lim;
	const struct rp_ctr_change *c;
	struct rp_fx fx;

	(void)state;
	rp_ctr_limits_default(&lim);
	mlx5_fixture(&fx);
	/* Saturated before: cannot count, unknown (never 0, never a failure by itself). */
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "symbol_error", 65535), 0);
	/* Reaches saturation during the pair: at least the difference. */
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "local_link_integrity_errors", 12), 0);
	/* A 32-bit data counter would saturate at 2^32-1, but the port has the extended (64-bit) ones. */
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "port_xmit_data", 4294967295ull), 0);
	snap(&fx, "mlx5_0", &a);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "local_link_integrity_errors", 15), 0);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "port_xmit_data", 4294967295ull + 1000), 0);
	snap(&fx, "mlx5_0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 4000, &d), 0);
	c = change(&d, "symbol_error");
	assert_non_null(c);
	assert_int_equal(c->kind, RP_CK_UNKNOWN);
	assert_string_equal(c->why, "saturated at 65535 before");
	c = change(&d, "local_link_integrity_errors");
	assert_int_equal(c->kind, RP_CK_AT_LEAST);
	assert_int_equal(c->delta, 3);
	assert_string_equal(c->why, "saturated at 15");
	assert_true(d.traffic_checked);
	assert_int_equal(d.traffic_bytes, 4000);
	rp_ctr_judge(&d, 4000, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_FAIL);
	assert_string_equal(j.reason, "physical-layer errors: local_link_integrity_errors >= +3");
	assert_true(j.unknown & (1u << RP_CC_PHYS));
	rp_fx_destroy(&fx);
}

static void test_reset_and_unreadable(void **state)
{
	struct rp_ctr_snapshot a, b;
	struct rp_ctr_delta d;
	struct rp_ctr_judgement j;
	struct rp_ctr_limits lim;
	const struct rp_ctr_change *c;
	struct rp_fx fx;

	(void)state;
	rp_ctr_limits_default(&lim);
	mlx5_fixture(&fx);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "port_rcv_errors", 10), 0);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", HW, "packet_seq_err", 5), 0);
	snap(&fx, "mlx5_0", &a);
	/* A PerfMgr cleared the counters during the pair; then 3 new errors. */
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "port_rcv_errors", 3), 0);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", HW, "packet_seq_err", 500), 0);
	snap(&fx, "mlx5_0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	c = change(&d, "port_rcv_errors");
	assert_int_equal(c->kind, RP_CK_AT_LEAST);
	assert_int_equal(c->delta, 3);
	assert_true(d.reset_seen);
	assert_true(d.unattributable);
	assert_non_null(strstr(d.unattributable_why, "reset"));
	/* Link errors still fail; the retransmissions are not judged. */
	rp_ctr_judge(&d, 1, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_FAIL);
	assert_int_equal(j.cls, RP_CC_PHYS);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "port_rcv_errors", 10), 0);
	snap(&fx, "mlx5_0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	assert_false(d.unattributable);
	rp_ctr_judge(&d, 1, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_LOSSY);

	/* Unreadable (not root, or the PMA refused): unknown, never 0. */
	assert_int_equal(rp_fx_unreadable(&fx, "class/infiniband/mlx5_0/" PMA "/symbol_error"), 0);
	assert_int_equal(rp_fx_write(&fx, "class/infiniband/mlx5_0/" PMA "/link_downed", "N/A (no PMA)\n"), 0);
	snap(&fx, "mlx5_0", &a);
	assert_true(rp_ctr_find(&a, RP_CTR_PMA, "symbol_error")->err < 0);
	assert_int_equal(rp_ctr_find(&a, RP_CTR_PMA, "link_downed")->err, -EINVAL);
	snap(&fx, "mlx5_0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	assert_int_equal(change(&d, "symbol_error")->kind, RP_CK_UNKNOWN);
	assert_non_null(strstr(change(&d, "link_downed")->why, "unreadable before"));
	rp_ctr_judge(&d, 1, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	assert_true(j.unknown & (1u << RP_CC_FLAP));
	assert_true(j.unknown & (1u << RP_CC_PHYS));
	rp_fx_destroy(&fx);
}

static void test_reregistered(void **state)
{
	struct rp_ctr_snapshot a, b;
	struct rp_ctr_delta d;
	struct rp_fx fx;

	(void)state;
	rxe_fixture(&fx);
	snap(&fx, "rxe0", &a);
	/* A counter disappears (the driver came back with other capabilities). */
	assert_int_equal(rp_fx_remove(&fx, "class/infiniband/rxe0/" HW "/send_err"), 0);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "rcvd_seq_err", 1000), 0);
	snap(&fx, "rxe0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	assert_true(d.reregistered);
	assert_true(d.unattributable);
	assert_int_equal(d.n, 0);
	/* The node GUID changed. */
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "send_err", 0), 0);
	snap(&fx, "rxe0", &a);
	assert_int_equal(rp_fx_write(&fx, "class/infiniband/rxe0/node_guid", "5254:00ff:fe12:9999\n"), 0);
	snap(&fx, "rxe0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	assert_true(d.reregistered);
	assert_string_equal(d.unattributable_why, "the device re-registered (node GUID changed)");
	/* Different ports are not a delta. */
	b.port = 2;
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), -EINVAL);
	rp_fx_destroy(&fx);
}

static void test_another_process(void **state)
{
	struct rp_ctr_snapshot a, b;
	struct rp_ctr_delta d;
	struct rp_ctr_judgement j;
	struct rp_ctr_limits lim;
	struct rp_fx fx;
	const uint64_t gb = 1000000000ull;

	(void)state;
	rp_ctr_limits_default(&lim);
	rxe_fixture(&fx);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "sent_bytes", 0), 0);   /* a 2026 rxe */
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "rcvd_bytes", 0), 0);
	snap(&fx, "rxe0", &a);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "sent_bytes", 10 * gb), 0);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "rcvd_bytes", 10 * gb), 0);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "rcvd_seq_err", 500), 0);
	snap(&fx, "rxe0", &b);
	/* The pair put 1 GB on the port, the port moved 20: the retransmissions may be someone else's. */
	assert_int_equal(rp_ctr_delta(&a, &b, gb, &d), 0);
	assert_true(d.traffic_checked);
	assert_int_equal(d.traffic_bytes, 20 * gb);
	assert_true(d.unattributable);
	assert_non_null(strstr(d.unattributable_why, "another process"));
	assert_null(change(&d, "sent_bytes"));   /* byte counters are not listed as moved */
	rp_ctr_judge(&d, gb, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_OK);
	/* The pair's own 20 GB (both directions counted): attributable, 25/GB is lossy. */
	assert_int_equal(rp_ctr_delta(&a, &b, 10 * gb, &d), 0);
	assert_false(d.unattributable);
	rp_ctr_judge(&d, 20 * gb, &lim, &j);
	assert_int_equal(j.verdict, RP_CV_LOSSY);
	rp_fx_destroy(&fx);
}

static void test_device_level_counters(void **state)
{
	struct rp_ctr_snapshot a, b;
	struct rp_ctr_delta d;
	struct rp_fx fx;

	(void)state;
	mlx5_fixture(&fx);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", "hw_counters", "np_cnp_sent", 0), 0);
	snap(&fx, "mlx5_0", &a);
	assert_non_null(rp_ctr_find(&a, RP_CTR_HW_DEV, "np_cnp_sent"));
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", "hw_counters", "np_cnp_sent", 77), 0);
	snap(&fx, "mlx5_0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.changes[0].source, RP_CTR_HW_DEV);
	assert_int_equal(d.changes[0].cls, RP_CC_CONGESTION);
	assert_int_equal(d.changes[0].delta, 77);
	rp_fx_destroy(&fx);
}

static void test_limits_parse(void **state)
{
	struct rp_ctr_limits lim, before;
	char err[160], text[160];

	(void)state;
	rp_ctr_limits_default(&lim);
	rp_ctr_limits_format(&lim, text, sizeof(text));
	assert_string_equal(text, "link_flap=0,phys=0,retrans=10/GB,resend=off,congestion=off,rnr=off");
	assert_int_equal(rp_ctr_limits_parse("phys=5,retrans=0.5/GB,flap=off,rnr=100", &lim, err, sizeof(err)), 0);
	rp_ctr_limits_format(&lim, text, sizeof(text));
	assert_string_equal(text, "link_flap=off,phys=5,retrans=0.5/GB,resend=off,congestion=off,rnr=100");
	/* Each error names the item, and leaves the limits as they were. */
	before = lim;
	assert_int_equal(rp_ctr_limits_parse("", &lim, err, sizeof(err)), -EINVAL);
	assert_int_equal(rp_ctr_limits_parse("phys", &lim, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'phys': expected CLASS=LIMIT");
	assert_int_equal(rp_ctr_limits_parse("phys=1,bogus=1", &lim, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "'bogus': unknown class (link_flap, phys, retrans, resend, congestion, rnr)");
	assert_int_equal(rp_ctr_limits_parse("phys=-1", &lim, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'phys=-1': LIMIT must be"));
	assert_int_equal(rp_ctr_limits_parse("retrans=10/MB", &lim, err, sizeof(err)), -EINVAL);
	assert_int_equal(rp_ctr_limits_parse("retrans=/GB", &lim, err, sizeof(err)), -EINVAL);
	assert_int_equal(rp_ctr_limits_parse("phys=abc", &lim, err, sizeof(err)), -EINVAL);
	assert_int_equal(rp_ctr_limits_parse("phys=1,", &lim, err, sizeof(err)), -EINVAL);
	assert_int_equal(rp_ctr_limits_parse("phys=1,phys=2", &lim, err, sizeof(err)), 0);
	assert_true(lim.cls[RP_CC_PHYS].value == 2);
	lim.cls[RP_CC_PHYS].value = 5;
	assert_memory_equal(&lim, &before, sizeof(lim));
}

/* The JSON of a pair's side: exact, lower-bound and unknown changes apart; a driver counter named
 * like a PMA one is qualified. */
static void test_delta_json(void **state)
{
	struct rp_ctr_snapshot a, b;
	struct rp_ctr_delta d;
	struct rp_ctr_judgement j;
	struct rp_ctr_limits lim;
	struct rp_fx fx;
	json_t *o;

	(void)state;
	rp_ctr_limits_default(&lim);
	mlx5_fixture(&fx);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", HW, "link_downed", 0), 0);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "symbol_error", 65535), 0);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "local_link_integrity_errors", 14), 0);
	snap(&fx, "mlx5_0", &a);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", HW, "link_downed", 2), 0);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "link_downed", 2), 0);
	assert_int_equal(rp_fxh_counter(&fx, "mlx5_0", PMA, "local_link_integrity_errors", 15), 0);
	snap(&fx, "mlx5_0", &b);
	assert_int_equal(rp_ctr_delta(&a, &b, 0, &d), 0);
	rp_ctr_judge(&d, 1, &lim, &j);
	o = rp_ctr_delta_to_json(&d, &j);
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "moved"), "link_downed")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "moved"), "hw_counters/link_downed")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "at_least"), "local_link_integrity_errors")), 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(o, "unknown"), "symbol_error")),
			    "saturated at 65535 before");
	assert_string_equal(json_string_value(json_object_get(o, "verdict")), "fail");
	assert_string_equal(json_string_value(json_object_get(o, "reason")),
			    "link flapped: link_downed +2, hw_counters/link_downed +2");
	assert_true(json_is_null(json_object_get(o, "unattributable_why")));
	json_decref(o);
	rp_fx_destroy(&fx);
}

/* 'devices --counters': each port's counters with their class, in JSON and text ($RP_TEST_BIN). */
static void test_cmd_devices_counters(void **state)
{
	static char out[1 << 20];
	json_t *j, *c, *v;
	struct rp_fx fx;

	(void)state;
	rp_test_bin();
	rxe_fixture(&fx);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "out_of_seq_request", 18), 0);
	assert_int_equal(rp_fxh_counter(&fx, "rxe0", HW, "sent_pkts", 811), 0);
	assert_int_equal(rp_fx_unreadable(&fx, "class/infiniband/rxe0/" HW "/rcvd_seq_err"), 0);
	j = rp_test_devices_json(fx.root, "--counters");
	c = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(j, "devices"), 0), "ports"), 0),
			    "counters");
	assert_true(json_is_object(c));
	assert_null(json_object_get(c, "lifespan"));
	v = json_object_get(c, "out_of_seq_request");
	assert_int_equal(json_integer_value(json_object_get(v, "value")), 18);
	assert_string_equal(json_string_value(json_object_get(v, "class")), "retrans");
	assert_string_equal(json_string_value(json_object_get(v, "source")), "hw_counters");
	v = json_object_get(c, "rcvd_seq_err");
	assert_true(json_is_null(json_object_get(v, "value")));
	assert_non_null(json_string_value(json_object_get(v, "error")));
	/* rxe1 has none. */
	c = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(j, "devices"), 1), "ports"), 0),
			    "counters");
	assert_int_equal(json_object_size(c), 0);
	json_decref(j);
	/* Without --counters there are none. */
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --json --sysfs-root '%s' 2>/dev/null", fx.root), 0);
	assert_null(strstr(out, "\"counters\""));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --counters --sysfs-root '%s' 2>/dev/null", fx.root), 0);
	assert_non_null(strstr(out, "  rxe0:1 out_of_seq_request 18 (retrans), rcvd_seq_err unreadable (retrans)\n"));
	assert_non_null(strstr(out, "  rxe1:1 no counters\n"));
	rp_fx_destroy(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_snapshot_rxe),
		cmocka_unit_test(test_rxe_lossy_and_clean),
		cmocka_unit_test(test_duplicates_are_not_loss),
		cmocka_unit_test(test_rate_per_gb),
		cmocka_unit_test(test_flap_and_phys_fail),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_reset_and_unreadable),
		cmocka_unit_test(test_reregistered),
		cmocka_unit_test(test_another_process),
		cmocka_unit_test(test_device_level_counters),
		cmocka_unit_test(test_limits_parse),
		cmocka_unit_test(test_delta_json),
		cmocka_unit_test(test_cmd_devices_counters),
	};

	return cmocka_run_group_tests_name("counters", tests, quiet, NULL);
}
