/* test_result.c: the --bidir helpers of rp_pair_result: the reverse as a result of its own and back,
 * folding into the pair's verdict and undoing it, and the check of a reverse from another process. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "base/result.h"

static void bidir_pair(struct rp_pair_result *r)
{
	rp_pair_result_init(r, NULL, NULL);
	snprintf(r->src.device, sizeof(r->src.device), "mlx5_0");
	snprintf(r->dst.device, sizeof(r->dst.device), "mlx5_1");
	r->src.port = r->dst.port = 1;
	r->status = RP_ST_OK;
	r->gbps = 100;
	r->msg_size = 65536;
	r->reverse = (struct rp_pair_reverse){ .measured = true, .status = RP_ST_DATA_MISMATCH, .cause_side = RP_SIDE_SRC,
					       .gbps = 30, .bad_offset = 17 };
	snprintf(r->reverse.reason, sizeof(r->reverse.reason), "byte 17 differs");
}

/* The view swaps the ends and the side; store takes it back unchanged. */
static void test_view_and_store(void **state)
{
	struct rp_pair_result r, v;

	(void)state;
	bidir_pair(&r);
	rp_pair_reverse_view(&r, &v);
	assert_string_equal(v.src.device, "mlx5_1");
	assert_string_equal(v.dst.device, "mlx5_0");
	assert_int_equal(v.status, RP_ST_DATA_MISMATCH);
	assert_int_equal(v.cause_side, RP_SIDE_DST);   /* the pair's src is the reverse's target */
	assert_int_equal(v.bad_offset, 17);
	assert_int_equal(v.msg_size, 65536);
	v.gbps = 31;
	rp_pair_reverse_store(&r, &v);
	assert_float_equal(r.reverse.gbps, 31, 1e-9);
	assert_int_equal(r.reverse.cause_side, RP_SIDE_SRC);
	assert_string_equal(r.reverse.reason, "byte 17 differs");
	assert_float_equal(rp_pair_gbps_sum(&r), 131, 1e-9);
}

/* A failed reverse becomes the pair's status, once; unfold gives the forward's own back; a failed
 * forward is never overwritten. */
static void test_fold(void **state)
{
	struct rp_pair_result r;

	(void)state;
	bidir_pair(&r);
	rp_pair_reverse_fold(&r);
	rp_pair_reverse_fold(&r);
	assert_int_equal(r.status, RP_ST_DATA_MISMATCH);
	assert_string_equal(r.reason, "reverse direction mlx5_1:1 -> mlx5_0:1: byte 17 differs");
	assert_int_equal(r.cause_side, RP_SIDE_SRC);
	assert_true(r.reverse.folded);
	rp_pair_reverse_unfold(&r);
	assert_int_equal(r.status, RP_ST_OK);
	assert_string_equal(r.reason, "");
	assert_false(r.reverse.folded);
	rp_pair_result_fail(&r, RP_ST_TIMEOUT, "forward stalled");
	rp_pair_reverse_fold(&r);
	assert_int_equal(r.status, RP_ST_TIMEOUT);
	assert_string_equal(r.reason, "forward stalled");
	assert_false(r.reverse.folded);
}

static void test_valid(void **state)
{
	struct rp_pair_result r;
	struct rp_pair_reverse v;
	uint8_t two = 2;

	(void)state;
	bidir_pair(&r);
	assert_true(rp_pair_reverse_valid(&r.reverse));
	v = r.reverse;
	v.status = RP_ST_COUNT_;
	assert_false(rp_pair_reverse_valid(&v));
	v = r.reverse;
	memset(v.reason, 'x', sizeof(v.reason));
	assert_false(rp_pair_reverse_valid(&v));
	v = r.reverse;
	v.gbps = NAN;
	assert_false(rp_pair_reverse_valid(&v));
	v = r.reverse;
	v.bad_offset = -2;
	assert_false(rp_pair_reverse_valid(&v));
	v = r.reverse;
	memcpy(&v.verified, &two, 1);
	assert_false(rp_pair_reverse_valid(&v));
	v = r.reverse;
	v.measured = false;
	v.folded = true;
	assert_false(rp_pair_reverse_valid(&v));
	v = r.reverse;
	v.warnings = 1u << 31;
	assert_false(rp_pair_reverse_valid(&v));
	assert_string_equal(rp_status_code(RP_ST_MTU_BLACKHOLE), "mtu_blackhole");
	assert_int_equal(rp_status_from_code("mtu_blackhole"), RP_ST_MTU_BLACKHOLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_and_store),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
