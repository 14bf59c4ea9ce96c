/* test_verdict_rates.c: what the bandwidth rules compare a pair against (lib/verdict/verdict_rates.c,
 * rp_rates_build): every endpoint's medians of the rates it sends and receives, and the reverse
 * notes, against a reference computed here the plain way (sort each endpoint's rates; look up the
 * first judged pair of the other direction), over 40 endpoints, every ordered pair, seeded random
 * rates, failed pairs, pairs of another message size, pairs measured twice and one-way slow pairs.
 * rp_rates_build splits its work in parts by endpoint (each side's medians in halves, the reverse
 * notes in quarters) that run two at a time on two threads where the process may use two CPUs: the
 * reference is checked with the process's CPUs as they are and with the test pinned to one CPU
 * (the parts one after the other). On a one-CPU machine both runs take the second path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testutil.h"
#include "verdict/result_seq.h"
#include "verdict/verdict.h"
#include "verdict/verdict_int.h"

#define E 40
#define SIZE 65536

static struct rp_endpoint eps_[E];
static struct rp_pair_result *res_;
static uint32_t *pair_eps_;
static size_t n_;

static uint64_t rng_ = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void)
{
	rng_ ^= rng_ << 13;
	rng_ ^= rng_ >> 7;
	rng_ ^= rng_ << 17;
	return (uint32_t)(rng_ >> 11);
}

static void add(uint32_t s, uint32_t d, double gbps, size_t msg_size, bool ok)
{
	struct rp_pair_result *r = &res_[n_];

	rp_pair_result_init(r, &eps_[s], &eps_[d]);
	r->msg_size = msg_size;
	r->gbps = r->gbps_min = gbps;
	r->status = RP_ST_OK;
	r->reason[0] = '\0';
	r->verified = ok;
	r->iters = 100;
	r->bytes = 100 * msg_size;
	if (!ok)
		rp_pair_result_fail(r, RP_ST_TIMEOUT, "synthetic");
	pair_eps_[2 * n_] = s;
	pair_eps_[2 * n_ + 1] = d;
	n_++;
}

static void scene(void)
{
	size_t cap = 2 * E * E;

	res_ = calloc(cap, sizeof(*res_));
	pair_eps_ = calloc(2 * cap, sizeof(*pair_eps_));
	assert_non_null(res_);
	assert_non_null(pair_eps_);
	for (uint32_t e = 0; e < E; e++) {
		snprintf(eps_[e].node, sizeof(eps_[e].node), "n%u", e);
		snprintf(eps_[e].device, sizeof(eps_[e].device), "dev%u", e);
		eps_[e].port = 1;
		eps_[e].link_gbps = 400;
		eps_[e].mtu = 4096;
	}
	n_ = 0;
	for (uint32_t s = 0; s < E; s++)
		for (uint32_t d = 0; d < E; d++) {
			uint32_t x = rnd() % 100;

			if (s == d)
				continue;
			if (x < 5)
				add(s, d, 0, SIZE, false);                             /* failed: not judged */
			else if (x < 8)
				add(s, d, 100 + rnd() % 300, 4096, true);               /* another size */
			else if (x < 10)
				add(s, d, 1 + rnd() % 10, SIZE, true);                  /* slow one way */
			else
				add(s, d, 300 + (double)(rnd() % 9000) / 100, SIZE, true);
		}
	for (int k = 0; k < 60; k++) {                                            /* measured again */
		uint32_t s = rnd() % E, d = (s + 1 + rnd() % (E - 1)) % E;

		add(s, d, 250 + rnd() % 100, SIZE, rnd() % 4 != 0);
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of the judged rates of SIZE that endpoint e sends (side 0) or receives (side 1). */
static double ref_median(uint32_t e, int side)
{
	double v[2 * E * E];
	size_t m = 0;

	for (size_t i = 0; i < n_; i++) {
		struct rp_result_peek pk;

		rp_result_peek_of(&res_[i], &pk);
		if (pair_eps_[2 * i + side] == e && rp_pk_bw_judged(&pk) && pk.msg_size == SIZE)
			v[m++] = pk.gbps;
	}
	if (!m)
		return 0;
	qsort(v, m, sizeof(*v), cmp_d);
	return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

/* Pair i's other direction's rate as the rule reads it: the first pair of SIZE from its destination
 * to its source, when judged and positive; -1 where the rule could not fail pair i by it. */
static double ref_rev(size_t i)
{
	uint32_t s = pair_eps_[2 * i], d = pair_eps_[2 * i + 1];
	struct rp_result_peek pk, own;
	double rev = -1;

	rp_result_peek_of(&res_[i], &own);
	if (own.msg_size != SIZE)
		return -1;
	for (size_t j = 0; j < n_; j++) {
		rp_result_peek_of(&res_[j], &pk);
		if (pair_eps_[2 * j] == d && pair_eps_[2 * j + 1] == s && pk.msg_size == SIZE) {
			rev = rp_pk_bw_judged(&pk) && pk.gbps > 0 ? pk.gbps : -1;
			break;
		}
	}
	if (!(rev > 0))
		return -1;
	if (rp_pk_bw_judged(&own) && own.gbps > 0 && own.gbps >= RP_VERDICT_REVERSE_RATIO * rev)
		return -1;
	return rev;
}

static void check_against_reference_in(size_t part_bytes)
{
	struct rp_result_seq ps = rp_result_seq_array(res_, n_);
	struct rp_rev_notes rn = { 0 };
	double row[E], col[E];
	size_t noted = 0;

	assert_int_equal(rp_rates_build_parts(pair_eps_, &ps, E, SIZE, NULL, row, col, &rn, part_bytes), 0);
	for (uint32_t e = 0; e < E; e++) {
		assert_true(row[e] == ref_median(e, 0));
		assert_true(col[e] == ref_median(e, 1));
	}
	for (size_t i = 0; i < n_; i++) {
		double want = ref_rev(i);

		assert_true(rp_rev_of(&rn, i) == want);
		noted += want > 0;
	}
	assert_int_equal(rn.n, noted);
	assert_true(noted > 10);    /* the one-way slow pairs made notes (a case that tests something) */
	rp_rev_notes_fini(&rn);
}

/* malloc as the test sees it: the largest block asked for while `watching` (both threads) */
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
static int watching_;
static size_t largest_;

void *__wrap_malloc(size_t size)
{
	if (__atomic_load_n(&watching_, __ATOMIC_RELAXED)) {
		size_t was = __atomic_load_n(&largest_, __ATOMIC_RELAXED);

		while (size > was && !__atomic_compare_exchange_n(&largest_, &was, size, false, __ATOMIC_RELAXED,
								  __ATOMIC_RELAXED))
			;
	}
	return __real_malloc(size);
}

/* The parts hold their scratch within the budget however many pairs there are: the same outcome as
 * the reference with budgets from a few bytes (a part per endpoint) up, and no block larger than
 * the budget plus the one endpoint whose pairs cannot be split, the per-endpoint tables or the notes
 * themselves. (Before, the parts were halves and quarters: a quarter of this scene's pairs is more
 * than twice the budget of 2 KiB.) */
static void check_against_reference(void)
{
	check_against_reference_in(RP_RATES_PART_BYTES);
}

static void test_scratch_within_the_budget(void **state)
{
	static const size_t budgets[] = { 1, 64, 2048, 65536 };
	struct rp_result_seq ps;
	struct rp_rev_notes rn = { 0 };
	double row[E], col[E];
	size_t lower[E] = { 0 }, most = 0, bound;

	(void)state;
	scene();
	ps = rp_result_seq_array(res_, n_);
	for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++)
		check_against_reference_in(budgets[b]);
	for (size_t i = 0; i < n_; i++) {
		uint32_t s = pair_eps_[2 * i], d = pair_eps_[2 * i + 1];

		if (res_[i].msg_size == SIZE && s != d)
			most = ++lower[s < d ? s : d] > most ? lower[s < d ? s : d] : most;
	}
	__atomic_store_n(&largest_, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&watching_, 1, __ATOMIC_RELAXED);
	assert_int_equal(rp_rates_build_parts(pair_eps_, &ps, E, SIZE, NULL, row, col, &rn, 2048), 0);
	__atomic_store_n(&watching_, 0, __ATOMIC_RELAXED);
	/* a notes entry (pair, rate, 16 bytes) is the widest scratch entry */
	bound = 2048 + most * 16;
	bound = rn.n * sizeof(*rn.v) > bound ? rn.n * sizeof(*rn.v) : bound;
	bound = 2 * (E + 1) * sizeof(double) > bound ? 2 * (E + 1) * sizeof(double) : bound;
	print_message("largest block %zu bytes, bound %zu (pairs %zu)\n", largest_, bound, n_);
	assert_true(largest_ <= bound);
	assert_true(n_ * 16 / 4 > bound);   /* a quarter of the pairs would not fit */
	rp_rev_notes_fini(&rn);
	free(res_);
	free(pair_eps_);
}

static void test_rates_as_the_reference(void **state)
{
	(void)state;
	scene();
	rp_test_on_cpus_then_one(check_against_reference);
	free(res_);
	free(pair_eps_);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rates_as_the_reference),
		cmocka_unit_test(test_scratch_within_the_budget),
	};

	return cmocka_run_group_tests_name("verdict rates", tests, NULL, NULL);
}
