/* test_peer_index.c: the blame's peer index (lib/verdict/verdict_peers.c, rp_peer_index_build) against
 * a reference built here the plain way (for every endpoint, its distinct peers in the order the pairs
 * first name them, each pair's class merged: failed over ok over unknown), over 40 endpoints, both
 * directions of every pair, pairs measured twice, self pairs, failures confirmed and not. The index is
 * built in parts by endpoint, two at a time on two threads where the process may use two CPUs; the
 * parts' budget is taken from a few bytes (a part per endpoint) up, with the process's CPUs as they are
 * and pinned to one (the parts one after the other), and no block it asks for is larger than what it
 * keeps plus two parts. */
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

static struct rp_endpoint eps_[E];
static struct rp_pair_result *res_;
static uint32_t *pair_eps_;
static size_t n_;
static uint64_t rng_ = 0x2545f4914f6cdd1dULL;

/* malloc and realloc as the test sees them: the largest block asked for while `watching` */
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_realloc(void *p, size_t size);
static int watching_;
static size_t largest_;

static void watch(size_t size)
{
	size_t was;

	if (!__atomic_load_n(&watching_, __ATOMIC_RELAXED))
		return;
	was = __atomic_load_n(&largest_, __ATOMIC_RELAXED);
	while (size > was && !__atomic_compare_exchange_n(&largest_, &was, size, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void *__wrap_malloc(size_t size)
{
	watch(size);
	return __real_malloc(size);
}

void *__wrap_realloc(void *p, size_t size)
{
	watch(size);
	return __real_realloc(p, size);
}

static uint32_t rnd(void)
{
	rng_ ^= rng_ << 13;
	rng_ ^= rng_ >> 7;
	rng_ ^= rng_ << 17;
	return (uint32_t)(rng_ >> 11);
}

static void add(uint32_t s, uint32_t d)
{
	struct rp_pair_result *r = &res_[n_];
	uint32_t x = rnd() % 100;

	rp_pair_result_init(r, &eps_[s], &eps_[d]);
	r->msg_size = 65536;
	r->gbps = r->gbps_min = 390;
	r->verified = true;
	r->status = RP_ST_OK;
	if (x < 8) {
		rp_pair_result_fail(r, RP_ST_TIMEOUT, "synthetic");
		r->confirm = x < 5 ? RP_CONFIRM_CONFIRMED : RP_CONFIRM_NONE;
	}
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
	}
	n_ = 0;
	for (uint32_t s = 0; s < E; s++)
		for (uint32_t d = 0; d < E; d++)
			if (s != d || s % 7 == 0)        /* a few self pairs: never a peer */
				add(s, d);
	for (int k = 0; k < 200; k++)               /* measured again, some now failing */
		add(rnd() % E, rnd() % E);
}

static uint32_t class_of(const struct rp_pair_result *r)
{
	if (r->status == RP_ST_OK)
		return RP_PEER_OK;
	return r->confirm == RP_CONFIRM_CONFIRMED ? RP_PEER_FAILED : RP_PEER_UNKNOWN;
}

/* Endpoint e's entries as the index should hold them; returns how many. */
static size_t ref_peers(uint32_t e, uint32_t *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n_; i++) {
		uint32_t a = pair_eps_[2 * i], b = pair_eps_[2 * i + 1], p, c = class_of(&res_[i]);
		size_t k;

		if (a == b || (a != e && b != e))
			continue;
		p = a == e ? b : a;
		for (k = 0; k < m && out[k] >> 2 != p; k++)
			;
		if (k == m)
			out[m++] = p << 2 | c;
		else if ((c & RP_PEER_FAILED) || ((out[k] & 3) != RP_PEER_FAILED && (c & RP_PEER_OK)))
			out[k] = p << 2 | c;
	}
	return m;
}

static void check_against_reference(void)
{
	static const size_t budgets[] = { 1, 4, 64, 1000, RP_PEER_PART_BYTES };
	struct rp_verdict v = { 0 };
	struct rp_verdict_ep vep[E];
	struct rp_expect x;
	size_t cov[1] = { 0 }, kept = 0, most = 0;

	memset(vep, 0, sizeof(vep));
	v.eps = vep;                  /* one fabric: no pair expected to fail */
	v.n_eps = E;
	assert_int_equal(rp_expect_init(&x, &v, cov, 0, NULL), 0);
	for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
		struct rp_result_seq ps = rp_result_seq_array(res_, n_);
		struct rp_peer_index pi;
		uint32_t want[E];

		__atomic_store_n(&largest_, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&watching_, 1, __ATOMIC_RELAXED);
		assert_int_equal(rp_peer_index_build_parts(&pi, E, pair_eps_, &ps, &x, budgets[b]), 0);
		__atomic_store_n(&watching_, 0, __ATOMIC_RELAXED);
		kept = 0;
		for (uint32_t e = 0; e < E; e++) {
			size_t m = ref_peers(e, want);

			assert_int_equal(pi.start[e + 1] - pi.start[e], m);
			assert_memory_equal(&pi.ent[pi.start[e]], want, m * sizeof(*want));
			kept += m;
			most = m > most ? m : most;
		}
		assert_int_equal(pi.start[E], kept);
		/* what it keeps, and two parts: an endpoint's raw entries (both directions, repeats) at
		 * most twice its peers and the repeats */
		if (budgets[b] <= 64) {
			print_message("budget %zu: largest block %zu bytes, kept %zu bytes\n", budgets[b], largest_,
				      kept * sizeof(uint32_t));
			assert_true(largest_ <= (kept + 2 * most + 200) * sizeof(uint32_t) + budgets[b]);
			/* all the pairs' entries at once would not fit that */
			assert_true(2 * (E * (E - 1)) * sizeof(uint32_t) > (kept + 2 * most + 200) * sizeof(uint32_t) + 64);
		}
		rp_peer_index_fini(&pi);
	}
	rp_expect_fini(&x);
}

static void test_index_as_the_reference(void **state)
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
		cmocka_unit_test(test_index_as_the_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
