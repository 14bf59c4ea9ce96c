/* test_report_pair_text.c: the JSON report's pairs written directly (lib/report/report_pair_text.h) are the
 * bytes jansson writes for rp_report_pair_json() (the reference), for every kind of result: a pass,
 * a pass kept as a record (counters not listed), failures with reasons that need escaping or are not
 * valid UTF-8, numbers of every magnitude and sign, NaN and infinities, --bidir, latency, retests,
 * warnings and every confirm, and many results of random bytes. Results jansson would treat
 * differently (two counters of one name) are declined and left to jansson. */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "health/counters.h"
#include "report/report.h"
#include "report/report_pair_text.h"

/* r's text both ways: equal, or declined (1; whether jansson encodes it or refuses it) */
static int both_ways(const struct rp_pair_result *r)
{
	json_t *j = rp_report_pair_json(r);
	char *want = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
	struct rp_sb sb;
	int rc;

	json_decref(j);
	rp_sb_init(&sb);
	rc = rp_report_pair_text(r, &sb);
	if (!want) {
		/* jansson refuses it (a counter's name or reason it does not take): so must this */
		assert_int_equal(rc, 1);
	} else if (rc == 0) {
		assert_false(rp_sb_failed(&sb));
		if (strcmp(sb.buf, want) != 0)
			fail_msg("direct:  %s\njansson: %s", sb.buf, want);
	} else {
		assert_int_equal(sb.len, 0);
	}
	rp_sb_fini(&sb);
	free(want);
	return rc;
}

static void ep_fill(struct rp_endpoint *e, int k)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->node, sizeof(e->node), "node%04d", k);
	snprintf(e->device, sizeof(e->device), "mlx5_%d", k % 8);
	e->port = 1;
	e->gid_index = k % 2 ? -1 : 3;
	e->mtu = 4096;
	e->link_gbps = 400;
	snprintf(e->mem, sizeof(e->mem), "host");
	snprintf(e->mem_reg, sizeof(e->mem_reg), "dmabuf");
}

static void pass(struct rp_pair_result *r)
{
	struct rp_endpoint a, b;

	ep_fill(&a, 1);
	ep_fill(&b, 2);
	rp_pair_result_init(r, &a, &b);
	r->status = RP_ST_OK;
	r->gbps = 390.123456789;
	r->gbps_min = 350;
	r->gbps_min_at_s = 0.0125;
	r->bytes = 65536000;
	r->iters = 1000;
	r->msg_size = 65536;
	r->verified = true;
	r->elapsed_s = 0.04;
	rp_pair_result_record_attempt(r, 14);
}

static void test_kinds(void **state)
{
	static const double nums[] = { 0.0, -0.0, 1.0, -1.0, 0.5, 1e-7, 1.5e-300, 1e21, 123456789.0, 1234567.0,
				       123456.0, 999999.5, 1e100, -2.5e-5, 4e-320, 3.0e15 };
	struct rp_pair_result r;

	(void)state;
	pass(&r);
	assert_int_equal(both_ways(&r), 0);
	/* as a record rebuilds it: counters judged, not listed */
	r.counters.src.measured = r.counters.dst.measured = 1;
	r.counters.src.n_moved = 3;
	r.counters.src.brief = 1;
	assert_int_equal(both_ways(&r), 0);
	/* counters listed, moved and at least, a judged reason */
	r.counters.dst.n = 3;
	snprintf(r.counters.dst.c[0].name, sizeof(r.counters.dst.c[0].name), "port_rcv_errors");
	r.counters.dst.c[0].delta = 7;
	snprintf(r.counters.dst.c[1].name, sizeof(r.counters.dst.c[1].name), "hw_counters/out_of_sequence");
	r.counters.dst.c[1].delta = UINT64_MAX;
	r.counters.dst.c[1].at_least = 1;
	snprintf(r.counters.dst.c[2].name, sizeof(r.counters.dst.c[2].name), "link_downed");
	r.counters.dst.verdict = RP_CV_FAIL;
	r.counters.dst.unattributable = 1;
	r.counters.dst.n_unknown = 2;
	snprintf(r.counters.dst.reason, sizeof(r.counters.dst.reason), "link_downed moved by 0 \"quoted\"");
	assert_int_equal(both_ways(&r), 0);
	r.counters.dst.verdict = 77;   /* from a peer: written as ok */
	assert_int_equal(both_ways(&r), 0);
	/* two counters of one name: jansson keeps one; declined */
	snprintf(r.counters.dst.c[2].name, sizeof(r.counters.dst.c[2].name), "port_rcv_errors");
	assert_int_equal(both_ways(&r), 1);
	pass(&r);
	/* a failure whose reasons need escaping, or are not UTF-8, or fill their field */
	rp_pair_result_fail(&r, RP_ST_RETRY_EXCEEDED, "tab\there \"q\" back\\slash nl\n cr\r bs\b ff\f bell\a "
			    "esc\x1b del\x7f caf\xc3\xa9 bad\xff\xfe end");
	r.cause_side = RP_SIDE_DST;
	r.secondary.status = RP_ST_FLUSHED;
	memset(r.secondary.reason, 'x', sizeof(r.secondary.reason));   /* no NUL */
	snprintf(r.attempts[0].reason, sizeof(r.attempts[0].reason), "\xe2\x82 cut sequence \xe2\x82\xac ok");
	r.attempts[0].side = (enum rp_side)9;
	r.bad_offset = -1;
	assert_int_equal(both_ways(&r), 0);
	/* every number rule, in every numeric field */
	for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
		r.gbps = nums[k];
		r.gbps_min = -nums[k];
		r.lat.median_us = nums[k] * 3;
		r.src.link_gbps = nums[k] / 7;
		r.elapsed_s = nums[k] * 1e-3;
		assert_int_equal(both_ways(&r), 0);
	}
	r.gbps = NAN;
	r.gbps_min = INFINITY;
	r.elapsed_s = -INFINITY;
	assert_int_equal(both_ways(&r), 0);
	/* latency, retests, warnings, confirm, --bidir (folded and not) */
	r.lat.measured = true;
	r.lat.min_us = 1.25;
	r.lat.samples = 10000;
	rp_pair_result_record_attempt(&r, 18);
	rp_pair_result_record_attempt(&r, 20);
	rp_pair_result_record_attempt(&r, 22);
	r.n_attempts = 99;   /* a count from a peer: capped */
	r.warnings = ~0u;
	for (int c = 0; c < 5; c++) {
		r.confirm = (enum rp_confirm)c;
		assert_int_equal(both_ways(&r), 0);
	}
	r.reverse.measured = true;
	r.reverse.status = RP_ST_TIMEOUT;
	snprintf(r.reverse.reason, sizeof(r.reverse.reason), "reverse direction: timed out");
	r.reverse.gbps = 12.5;
	r.reverse.bytes = 1ull << 40;
	r.reverse.bad_offset = 4096;
	r.reverse.warnings = 5;
	r.reverse.cause_side = RP_SIDE_SRC;
	assert_int_equal(both_ways(&r), 0);
	r.reverse.folded = true;
	r.status = (enum rp_status)1000;   /* unknown */
	assert_int_equal(both_ways(&r), 0);
}

/* Results of random bytes (strings, numbers, counts, enums all garbage), each as the reference. */
static void test_random_bytes(void **state)
{
	struct rp_pair_result r;
	unsigned seed = 2026, declined = 0;

	(void)state;
	for (int round = 0; round < 3000; round++) {
		uint8_t *b = (uint8_t *)&r;

		for (size_t k = 0; k < sizeof(r); k++) {
			seed = seed * 1103515245u + 12345u;
			b[k] = (seed >> 16) % 4 == 0 ? 0 : (uint8_t)(seed >> 8);
		}
		/* the enums and counts a writer indexes with are bounded by it; the bools get 0 or 1 (a
		 * random byte in a bool is not a value the type has: reading it is undefined, UBSan) */
		r.verified = seed >> 3 & 1;
		r.src.soft = seed >> 4 & 1;
		r.dst.soft = seed >> 5 & 1;
		r.lat.measured = seed >> 6 & 1;
		r.reverse.measured = round % 2;
		r.reverse.folded = seed >> 7 & 1;
		r.reverse.verified = seed >> 9 & 1;
		if (round % 3 == 0) {
			/* names and reasons jansson takes, so the direct path is the one compared */
			for (int k = 0; k < RP_PAIR_CTR_MAX; k++) {
				snprintf(r.counters.src.c[k].name, sizeof(r.counters.src.c[k].name), "ctr_%d_\t\"%d", k, round);
				snprintf(r.counters.dst.c[k].name, sizeof(r.counters.dst.c[k].name), "c%d", k);
			}
			snprintf(r.counters.src.reason, sizeof(r.counters.src.reason), "reason %d \x01", round);
			r.counters.dst.reason[0] = '\0';
		}
		declined += (unsigned)both_ways(&r);
	}
	assert_true(declined <= 2100);   /* a third have names jansson takes: compared */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_random_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
