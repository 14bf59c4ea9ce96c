/* test_mx_got.c: a plain side kept on its learned fields alone (lib/matrix/mx_got.h).
 *
 * Rank 0 keeps a plain side as its record when both its ends, as mx_got_plain builds them (the
 * table's entry with what the engine learned: MTU, memory, soft), are the endpoints the results
 * keep, byte for byte. mx_got_ep_from_table and mx_got_plain_ends_are decide that without building
 * the two 190-byte endpoints: whenever the first holds for both kept endpoints, the second must say
 * exactly what building and comparing them whole says, for every combination of what a side learned
 * and what the results kept. And mx_results_add_record keeps what mx_results_add_plain would. A
 * brief round's slots keep a pass as its status and time alone.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "matrix/mx_got.h"
#include "matrix/mx_results.h"

static struct mx_ep table[2];
static struct mx_job job = { .a = 0, .b = 1, .dirs = 3 };

static void table_init(bool soft0)
{
	memset(table, 0, sizeof(table));
	for (int e = 0; e < 2; e++) {
		struct rp_endpoint *ep = &table[e].ep;

		snprintf(ep->node, sizeof(ep->node), "node%d", e);
		snprintf(ep->device, sizeof(ep->device), "mlx5_%d", e);
		ep->port = 1;
		ep->mtu = 4096;
		ep->link_gbps = 400;
		snprintf(ep->mem, sizeof(ep->mem), "host");
		snprintf(ep->mem_reg, sizeof(ep->mem_reg), "host");
	}
	table[0].ep.soft = soft0;
}

/* A plain side whose end i learned variant v (bits: MTU, memory, registration, soft). */
static void learned_set(struct mx_wire_plain *wp, int i, unsigned v)
{
	wp->mtu[i] = v & 1 ? 1024 : 0;
	snprintf(wp->mem[i], sizeof(wp->mem[i]), "%s", v & 2 ? "cuda:0" : "");
	snprintf(wp->mem_reg[i], sizeof(wp->mem_reg[i]), "%s", v & 4 ? "dmabuf" : "");
	wp->soft[i] = v & 8 ? 1 : 0;
}

/* A kept endpoint: the table's entry for e with variant v of the learned fields (as above, or the
 * table's own where a bit is clear), and with bit 4 another node name (not the table's entry). */
static void kept_set(struct rp_endpoint *ep, int e, unsigned v)
{
	*ep = table[e].ep;
	if (v & 1)
		ep->mtu = 1024;
	if (v & 2)
		snprintf(ep->mem, sizeof(ep->mem), "cuda:0");
	if (v & 4)
		snprintf(ep->mem_reg, sizeof(ep->mem_reg), "dmabuf");
	if (v & 8)
		ep->soft = true;
	if (v & 16)
		ep->node[0] = 'N';
}

/* Every learned variant of both ends against every kept variant of both: when both kept endpoints
 * are the table's but for the learned fields, the shortcut says what building them says. */
static void test_ends_are_as_built(void **state)
{
	struct mx_got g = { 0 };
	struct mx_wire_plain wp;
	unsigned agree = 0, equal = 0;

	(void)state;
	for (int soft0 = 0; soft0 < 2; soft0++) {
		table_init(soft0);
		assert_int_equal(mx_got_reset(&g, 2, table, &job), 0);
		for (unsigned l = 0; l < 256; l++) {
			memset(&wp, 0, sizeof(wp));
			wp.p.gbps = 390;
			learned_set(&wp, 0, l & 15);
			learned_set(&wp, 1, l >> 4);
			for (int dir = 0; dir < 2; dir++)
				assert_int_equal(mx_got_side_plain(&g, (size_t)dir, &wp, true), 0);
			for (unsigned k = 0; k < 32 * 32; k++) {
				struct rp_endpoint kept[2], built[2];
				struct mx_plain p;

				kept_set(&kept[0], 0, k & 31);
				kept_set(&kept[1], 1, k >> 5);
				for (int dir = 0; dir < 2; dir++) {
					/* slot 1 is b -> a: its src end is table entry 1 */
					const struct rp_endpoint *s = &kept[dir], *d = &kept[1 - dir];
					bool whole;

					assert_true(mx_got_plain(&g, (size_t)dir, &p, &built[0], &built[1]));
					whole = memcmp(&built[0], s, sizeof(*s)) == 0 && memcmp(&built[1], d, sizeof(*d)) == 0;
					assert_int_equal(mx_got_ep_from_table(&g, (uint32_t)dir, s), !((k >> (5 * dir)) & 16));
					if (!mx_got_ep_from_table(&g, (uint32_t)dir, s) ||
					    !mx_got_ep_from_table(&g, (uint32_t)(1 - dir), d)) {
						assert_false(whole);
						continue;
					}
					assert_int_equal(mx_got_plain_ends_are(&g, (size_t)dir, s, d), whole);
					agree++;
					equal += whole;
				}
			}
		}
	}
	/* both outcomes were seen, many times */
	assert_true(equal > 100 && agree - equal > 100);
	/* no table, or a slot that is not plain: never */
	assert_int_equal(mx_got_side(&g, 0, &(struct rp_pair_result){ .status = RP_ST_TIMEOUT }, true), 0);
	assert_false(mx_got_plain_ends_are(&g, 0, &table[0].ep, &table[1].ep));
	assert_null(mx_got_pass(&g, 0));
	assert_non_null(mx_got_pass(&g, 1));
	assert_null(mx_got_pass(&g, 2));
	assert_int_equal(mx_got_reset(&g, 2, NULL, NULL), 0);
	assert_false(mx_got_ep_from_table(&g, 0, &table[0].ep));
	mx_got_fini(&g);
}

/* mx_results_add_record keeps what mx_results_add_plain keeps for endpoints it already holds, and
 * refuses an endpoint it has not seen (it could not rebuild the pass), changing nothing. */
static void test_add_record(void **state)
{
	struct mx_results a, b;
	struct rp_pair_result ra, rb;
	struct mx_plain p = { .gbps = 390.5, .gbps_min = 380, .gbps_min_at_s = 0.25, .elapsed_s = 0.04,
			      .bytes = 65536000, .iters = 1000, .msg_size = 65536, .qp_timeout = 14 };
	uint64_t gen;

	(void)state;
	table_init(false);
	assert_int_equal(mx_results_init(&a, 3), 0);
	assert_int_equal(mx_results_init(&b, 3), 0);
	assert_int_equal(mx_results_add_record(&a, &p, 0, 1), -EINVAL);
	assert_int_equal(a.n, 0);
	assert_null(mx_results_ep(&a, 0));
	assert_int_equal(mx_results_add_plain(&a, &p, &table[0].ep, &table[1].ep, 0, 1), 0);
	assert_int_equal(mx_results_add_plain(&b, &p, &table[0].ep, &table[1].ep, 0, 1), 0);
	assert_memory_equal(mx_results_ep(&a, 1), &table[1].ep, sizeof(table[1].ep));
	assert_null(mx_results_ep(&a, 2));
	assert_null(mx_results_ep(&a, 3));
	p.gbps = 388;
	gen = a.gen;
	assert_int_equal(mx_results_add_record(&a, &p, 1, 0), 0);
	assert_true(a.gen > gen);
	assert_int_equal(mx_results_add_plain(&b, &p, &table[1].ep, &table[0].ep, 1, 0), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(mx_results_n_whole(&a), 0);
	assert_memory_equal(mx_results_get(&a, 1, &ra), mx_results_get(&b, 1, &rb), sizeof(ra));
	assert_int_equal(mx_results_add_record(&a, &p, 0, 2), -EINVAL);
	assert_int_equal(mx_results_add_record(&a, &p, 0, 3), -EINVAL);
	assert_int_equal(a.n, 2);
	mx_results_fini(&a);
	mx_results_fini(&b);
}

/* A brief round (a sweep's first pass): no room for plain sides; a brief pass and a plain side are
 * each kept as status ok and their time, read back as that and nothing else; a failure stays packed
 * whole; the writer's view still wins over the target's. */
static void test_brief_round_keeps_status_and_time(void **state)
{
	struct mx_got g = { 0 }, full = { 0 };
	struct mx_wire_plain wp;
	struct rp_pair_result r, tmp, *got;
	struct mx_job jobs[2] = { job, { .a = 1, .b = 0, .dirs = 3 } };

	(void)state;
	table_init(false);
	assert_int_equal(mx_got_reset(&full, 4, table, jobs), 0);
	g.brief = true;
	assert_int_equal(mx_got_reset(&g, 4, table, jobs), 0);
	assert_true(mx_got_bytes(&g) + 4 * sizeof(struct mx_wire_plain) == mx_got_bytes(&full));
	assert_int_equal(mx_got_side_brief(&g, 0, 0.25, true), 0);
	memset(&wp, 0, sizeof(wp));
	wp.p.elapsed_s = 0.5;
	wp.p.gbps = 390;
	assert_int_equal(mx_got_side_plain(&g, 1, &wp, false), 0);
	rp_pair_result_init(&r, &table[0].ep, &table[1].ep);
	rp_pair_result_fail(&r, RP_ST_RETRY_EXCEEDED, "retry exceeded");
	r.elapsed_s = 0.54;
	assert_int_equal(mx_got_side(&g, 2, &r, true), 0);
	/* the target's brief pass gives way to the writer's failure */
	assert_int_equal(mx_got_side_brief(&g, 2, 0.01, false), 0);
	for (size_t k = 0; k < 3; k++)
		assert_true(mx_got_have(&g, k));
	assert_false(mx_got_have(&g, 3));
	assert_int_equal(mx_got_status(&g, 0), RP_ST_OK);
	assert_int_equal(mx_got_status(&g, 1), RP_ST_OK);
	assert_int_equal(mx_got_status(&g, 2), RP_ST_RETRY_EXCEEDED);
	assert_true(mx_got_elapsed(&g, 0) == 0.25 && mx_got_elapsed(&g, 1) == 0.5 && mx_got_elapsed(&g, 2) == 0.54);
	assert_null(mx_got_pass(&g, 0));
	assert_null(mx_got_pass(&g, 1));
	got = mx_got_get(&g, 1, &tmp);
	assert_int_equal(got->status, RP_ST_OK);
	assert_true(got->elapsed_s == 0.5 && got->gbps == 0);   /* its time, nothing measured */
	assert_string_equal(got->src.device, "mlx5_1");         /* direction 1 of job 0: b -> a */
	assert_string_equal(got->dst.device, "mlx5_0");
	assert_string_equal(mx_got_get(&g, 2, &tmp)->reason, "retry exceeded");
	/* the same got for a round that keeps its passes: room made, a plain side kept whole */
	g.brief = false;
	assert_int_equal(mx_got_reset(&g, 4, table, jobs), 0);
	assert_int_equal(mx_got_side_plain(&g, 1, &wp, false), 0);
	assert_non_null(mx_got_pass(&g, 1));
	assert_true(mx_got_pass(&g, 1)->gbps == 390);
	mx_got_fini(&g);
	mx_got_fini(&full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ends_are_as_built),
		cmocka_unit_test(test_add_record),
		cmocka_unit_test(test_brief_round_keeps_status_and_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
