/* test_mx_results.c: the results rank 0 keeps (lib/mx_results): a plain pass becomes a 64-byte
 * record once settled and is rebuilt exactly (its informational counters' list aside, marked), every
 * other result stays whole, a judged change moves a result between the two forms, and the verdict
 * over the store judges as it does over an array. Before, every result was kept whole (3.4 KB). */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "health/counters.h"
#include "health/counters_json.h"
#include "matrix/mx_results.h"
#include "verdict/verdict.h"

#define N_EPS 4

static struct rp_endpoint eps[N_EPS];

static void eps_init(void)
{
	memset(eps, 0, sizeof(eps));
	for (int e = 0; e < N_EPS; e++) {
		snprintf(eps[e].node, sizeof(eps[e].node), "node%d", e);
		snprintf(eps[e].device, sizeof(eps[e].device), "mlx5_%d", e);
		eps[e].port = 1;
		eps[e].gid_index = 3;
		eps[e].mtu = 4096;
		eps[e].link_gbps = 400;
		snprintf(eps[e].mem, sizeof(eps[e].mem), "host");
		snprintf(eps[e].mem_reg, sizeof(eps[e].mem_reg), "host");
	}
}

/* A pass as the engine records it: one attempt, verified, both sides' counters judged ok with the
 * packet counters (class "other") moved. */
static void pass_at(struct rp_pair_result *r, uint32_t s, uint32_t d, double gbps)
{
	struct rp_pair_ctr_side *side[2] = { &r->counters.src, &r->counters.dst };

	rp_pair_result_init(r, &eps[s], &eps[d]);
	r->status = RP_ST_OK;
	r->gbps = gbps;
	r->gbps_min = gbps * 0.9;
	r->gbps_min_at_s = 0.125;
	r->msg_size = 65536;
	r->iters = 1000;
	r->bytes = 65536000;
	r->verified = true;
	r->elapsed_s = 0.04 + gbps / 1e6;
	for (int k = 0; k < 2; k++) {
		side[k]->measured = 1;
		side[k]->n_moved = 3;
		side[k]->n = 2;
		snprintf(side[k]->c[0].name, sizeof(side[k]->c[0].name), "sent_pkts");
		side[k]->c[0].cls = RP_CC_OTHER;
		side[k]->c[0].delta = 16000;
		snprintf(side[k]->c[1].name, sizeof(side[k]->c[1].name), "port_xmit_data");
		side[k]->c[1].cls = RP_CC_TRAFFIC;
		side[k]->c[1].delta = 16384000;
	}
	rp_pair_result_record_attempt(r, 14);
}

/* r as its record rebuilds it: the informational counters' list gone, brief set. */
static void briefed(const struct rp_pair_result *r, struct rp_pair_result *out)
{
	struct rp_pair_ctr_side *side[2] = { &out->counters.src, &out->counters.dst };

	*out = *r;
	for (int k = 0; k < 2; k++) {
		if (!side[k]->measured)
			continue;
		memset(side[k]->c, 0, sizeof(side[k]->c));
		side[k]->n = 0;
		side[k]->brief = 1;
	}
}

static void test_plain_pass_rebuilt(void **state)
{
	struct mx_results mr;
	struct rp_pair_result r, want, tmp, *got;
	json_t *j;

	(void)state;
	eps_init();
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	pass_at(&r, 0, 1, 390.5);
	assert_int_equal(mx_results_add(&mr, &r, 0, 1), 0);
	/* whole until settled: the stream reads it with its counters listed */
	got = mx_results_get(&mr, 0, &tmp);
	assert_memory_equal(got, &r, sizeof(r));
	assert_int_equal(mx_results_n_whole(&mr), 1);
	mx_results_settle(&mr);
	assert_int_equal(mx_results_n_whole(&mr), 0);
	assert_int_equal(sizeof(struct mx_rec), 48);
	got = mx_results_get(&mr, 0, &tmp);
	assert_ptr_equal(got, &tmp);
	briefed(&r, &want);
	assert_memory_equal(got, &want, sizeof(want));
	/* the JSON says the list was not kept, rather than listing nothing */
	j = rp_ctr_side_to_json(&got->counters.src);
	assert_non_null(j);
	assert_true(json_is_false(json_object_get(j, "listed")));
	assert_int_equal(json_integer_value(json_object_get(j, "n_moved")), 3);
	assert_int_equal(json_object_size(json_object_get(j, "moved")), 0);
	json_decref(j);
	/* a side a peer sends can never carry rank 0's mark */
	{
		char why[128];

		assert_int_equal(rp_ctr_side_validate(&got->counters.src, why, sizeof(why)), -EBADMSG);
	}
	assert_int_equal(mx_results_failed(&mr), 0);
	mx_results_fini(&mr);
}

/* A record is 48 bytes, narrower than a plain pass can be: a pass whose fields do not fit one (2^32
 * iterations, bytes other than iters x msg_size, more moved counters than a byte counts) is kept
 * whole and read back exactly, whether it came whole or as a plain side; one at the edges of what
 * fits is a record. */
static void test_record_narrower_than_a_pass(void **state)
{
	struct mx_results mr;
	struct rp_pair_result r[5], tmp, want;
	struct mx_plain p;
	size_t n = 0;

	(void)state;
	eps_init();
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	pass_at(&r[n], 0, 1, 390.5);              /* 2^32 iterations of 8 bytes */
	r[n].msg_size = 8;
	r[n].iters = (uint64_t)1 << 32;
	r[n++].bytes = (uint64_t)8 << 32;
	pass_at(&r[n], 1, 2, 390.5);              /* the engine's bytes when the product would wrap */
	r[n++].bytes = UINT64_MAX;
	pass_at(&r[n], 2, 0, 390.5);              /* 256 counters moved on the source */
	r[n++].counters.src.n_moved = 256;
	pass_at(&r[n], 0, 1, 390.5);              /* at the edges: a record */
	r[n].iters = UINT32_MAX;
	r[n].msg_size = UINT32_MAX;
	r[n].bytes = (uint64_t)UINT32_MAX * UINT32_MAX;
	r[n].counters.dst.n_moved = 255;
	r[n].warnings = (1u << RP_WARN_COUNT_) - 1;
	r[n].attempts[0].qp_timeout = 31;
	n++;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(mx_results_add(&mr, &r[i], (uint32_t)i % 3, (uint32_t)(i + 1) % 3), 0);
	mx_results_settle(&mr);
	assert_int_equal(mx_results_n_whole(&mr), 3);
	for (size_t i = 0; i < n; i++) {
		if (i < 3)
			want = r[i];      /* whole, every byte */
		else
			briefed(&r[i], &want);
		assert_memory_equal(mx_results_get(&mr, i, &tmp), &want, sizeof(want));
	}
	/* the same passes as plain sides: those that do not fit are kept whole, briefed as sent */
	for (size_t i = 0; i < n; i++) {
		uint32_t s = (uint32_t)i % 3, d = (uint32_t)(i + 1) % 3;

		assert_true(mx_plain_of(&r[i], &eps[s], &eps[d], &p));
		assert_int_equal(mx_results_add_plain(&mr, &p, &eps[s], &eps[d], s, d), 0);
	}
	assert_int_equal(mx_results_n_whole(&mr), 6);
	mx_results_settle(&mr);
	assert_int_equal(mx_results_n_whole(&mr), 6);
	for (size_t i = 0; i < n; i++) {
		briefed(&r[i], &want);
		assert_memory_equal(mx_results_get(&mr, n + i, &tmp), &want, sizeof(want));
	}
	assert_int_equal(mx_results_failed(&mr), 0);
	mx_results_fini(&mr);
}

/* A plain side's record is kept as it came (mx_results_add_plain): a record at once, nothing whole,
 * reading back what mx_results_add of the same pass settles into; an endpoint that differs from what
 * the store first saw of it keeps the result whole, every byte of what the record stands for. */
static void test_add_plain(void **state)
{
	struct mx_results mr;
	struct rp_pair_result r, tmp, want;
	struct rp_endpoint other;
	struct mx_plain p;

	(void)state;
	eps_init();
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	pass_at(&r, 0, 1, 390.5);
	assert_true(mx_plain_of(&r, &eps[0], &eps[1], &p));
	assert_int_equal(mx_results_add_plain(&mr, &p, &eps[0], &eps[1], 0, 1), 0);
	assert_int_equal(mx_results_n_whole(&mr), 0);
	briefed(&r, &want);
	assert_memory_equal(mx_results_get(&mr, 0, &tmp), &want, sizeof(want));
	mx_results_settle(&mr);
	assert_memory_equal(mx_results_get(&mr, 0, &tmp), &want, sizeof(want));
	/* endpoint 1 seen otherwise now (another MTU): whole, exactly the pass between those endpoints */
	other = eps[1];
	other.mtu = 1024;
	pass_at(&r, 2, 1, 380.0);
	r.dst = other;
	assert_true(mx_plain_of(&r, &eps[2], &other, &p));
	assert_int_equal(mx_results_add_plain(&mr, &p, &eps[2], &other, 2, 1), 0);
	assert_int_equal(mx_results_n_whole(&mr), 1);
	briefed(&r, &want);
	assert_memory_equal(mx_results_get(&mr, 1, &tmp), &want, sizeof(want));
	assert_int_equal(mx_results_add_plain(&mr, &p, &eps[2], &other, 2, N_EPS), -EINVAL);
	assert_int_equal(mr.n, 2);
	mx_results_fini(&mr);
}

/* A plain pass's record is made as it is added and put in its place by the settle, unless a put
 * changed the result meanwhile: then the settle judges what was put (a stale record would bring
 * back the old rate). Its packed bytes can be handed in as they are (mx_results_add_packed). */
static void test_record_made_at_add(void **state)
{
	static uint8_t bytes[RP_PACK_MAX];
	struct mx_results mr;
	struct rp_pair_result r, tmp, *got;
	struct rp_result_peek pk;
	size_t len;

	(void)state;
	eps_init();
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	pass_at(&r, 0, 1, 390.5);
	len = rp_result_pack(&r, bytes);
	assert_int_equal(mx_results_add_packed(&mr, &r, bytes, len, 0, 1), 0);
	assert_memory_equal(mx_results_get(&mr, 0, &tmp), &r, sizeof(r));   /* whole, listed */
	mx_results_peek(&mr, 0, &pk);
	assert_true(pk.plain && pk.gbps == 390.5 && pk.status == RP_ST_OK);
	pass_at(&r, 1, 2, 380);
	assert_int_equal(mx_results_add(&mr, &r, 1, 2), 0);
	got = mx_results_get(&mr, 1, &tmp);
	got->gbps = got->attempts[0].gbps = 120;         /* changed before the settle, still a plain pass */
	assert_int_equal(mx_results_put(&mr, 1, got), 0);
	pass_at(&r, 2, 3, 370);
	assert_int_equal(mx_results_add(&mr, &r, 2, 3), 0);
	got = mx_results_get(&mr, 2, &tmp);
	rp_pair_result_fail(got, RP_ST_BELOW_THRESHOLD, "slow");
	assert_int_equal(mx_results_put(&mr, 2, got), 0);
	assert_int_equal(mx_results_n_whole(&mr), 3);
	mx_results_settle(&mr);
	assert_int_equal(mx_results_n_whole(&mr), 1);    /* the failed one */
	assert_true(mx_results_get(&mr, 0, &tmp)->gbps == 390.5);
	assert_true(mx_results_get(&mr, 1, &tmp)->gbps == 120);
	assert_int_equal(mx_results_get(&mr, 2, &tmp)->status, RP_ST_BELOW_THRESHOLD);
	/* a length no packed result has: refused, nothing kept */
	assert_int_equal(mx_results_add_packed(&mr, &r, bytes, 0, 2, 3), -EINVAL);
	assert_int_equal(mx_results_add_packed(&mr, &r, bytes, RP_PACK_MAX + 1, 2, 3), -EINVAL);
	assert_int_equal(mr.n, 3);
	mx_results_fini(&mr);
}

/* Everything that is not a plain pass stays whole, bit for bit. */
static void test_others_stay_whole(void **state)
{
	struct mx_results mr;
	struct rp_pair_result r[8], tmp;
	size_t n = 0;

	(void)state;
	eps_init();
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	pass_at(&r[n], 0, 1, 100);                    /* a failure */
	rp_pair_result_fail(&r[n++], RP_ST_RETRY_EXCEEDED, "retry exceeded");
	pass_at(&r[n], 1, 0, 100);                    /* a retransmission counter moved (under the rate) */
	r[n].counters.dst.c[1].cls = RP_CC_RETRANS;
	n++;
	pass_at(&r[n], 0, 2, 100);                    /* latency */
	r[n].lat.measured = true;
	r[n++].lat.median_us = 2.5;
	pass_at(&r[n], 2, 0, 100);                    /* --bidir */
	r[n].reverse.measured = true;
	r[n++].reverse.gbps = 99;
	pass_at(&r[n], 1, 2, 100);                    /* retested: two attempts */
	rp_pair_result_record_attempt(&r[n++], 20);
	pass_at(&r[n], 2, 1, 100);                    /* flaky */
	r[n++].confirm = RP_CONFIRM_FLAKY;
	pass_at(&r[n], 0, 3, 100);                    /* the destination seen with another MTU than before */
	r[n++].dst.mtu = 1024;
	pass_at(&r[n], 3, 0, 100);                    /* a secondary reason */
	snprintf(r[n++].secondary.reason, sizeof(r[0].secondary.reason), "peer saw a flush");
	static const uint32_t src[8] = { 0, 1, 0, 2, 1, 2, 0, 3 }, dst[8] = { 1, 0, 2, 0, 2, 1, 3, 0 };

	for (size_t i = 0; i < n; i++) {
		if (i == 6) {
			/* endpoint 3 first seen as pass_at makes it; r[6]'s view of it differs */
			struct rp_pair_result first;

			pass_at(&first, 1, 3, 100);
			assert_int_equal(mx_results_add(&mr, &first, 1, 3), 0);
		}
		assert_int_equal(mx_results_add(&mr, &r[i], src[i], dst[i]), 0);
	}
	mx_results_settle(&mr);
	assert_int_equal(mr.n, n + 1);
	assert_int_equal(mx_results_n_whole(&mr), n);   /* all but the plain 1 -> 3 */
	for (size_t i = 0, k = 0; i < mr.n; i++) {
		if (mr.pair_eps[2 * i] == 1 && mr.pair_eps[2 * i + 1] == 3)
			continue;
		assert_memory_equal(mx_results_get(&mr, i, &tmp), &r[k], sizeof(r[k]));
		k++;
	}
	assert_int_equal(mx_results_failed(&mr), 1);
	assert_int_equal(mx_results_add(&mr, &r[0], 0, N_EPS), -EINVAL);
	mx_results_fini(&mr);
}

/* A settled record the verdict judges slow becomes whole (its reason kept); judged ok again it is
 * a record again and its slot is reused. A result not yet settled stays whole when put. */
static void test_put_moves_between_forms(void **state)
{
	struct mx_results mr;
	struct rp_pair_result r, tmp, *got;
	size_t bytes;

	(void)state;
	eps_init();
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	for (uint32_t i = 0; i < 3; i++) {
		pass_at(&r, i, i + 1, 100 + i);
		assert_int_equal(mx_results_add(&mr, &r, i, i + 1), 0);
	}
	mx_results_settle(&mr);
	bytes = mx_results_bytes(&mr);
	got = mx_results_get(&mr, 1, &tmp);
	rp_pair_result_fail(got, RP_ST_BELOW_THRESHOLD, "outlier: slow");
	assert_int_equal(mx_results_put(&mr, 1, got), 0);
	assert_int_equal(mx_results_n_whole(&mr), 1);
	got = mx_results_get(&mr, 1, &tmp);
	assert_int_equal(got->status, RP_ST_BELOW_THRESHOLD);
	assert_string_equal(got->reason, "outlier: slow");
	assert_int_equal(mx_results_failed(&mr), 1);
	got->status = RP_ST_OK;
	got->reason[0] = '\0';
	got->warnings = 1u << RP_WARN_NOMINAL_RATE;      /* warning bits are a record's */
	assert_int_equal(mx_results_put(&mr, 1, got), 0);
	assert_int_equal(mx_results_n_whole(&mr), 0);
	assert_int_equal(mx_results_get(&mr, 1, &tmp)->warnings, 1u << RP_WARN_NOMINAL_RATE);
	assert_int_equal(mx_results_bytes(&mr), bytes);  /* the slot stays for the next one */
	/* not settled yet: whole, whatever it is */
	pass_at(&r, 3, 0, 100);
	assert_int_equal(mx_results_add(&mr, &r, 3, 0), 0);
	got = mx_results_get(&mr, 3, &tmp);
	got->warnings = 1u << RP_WARN_NOMINAL_RATE;
	assert_int_equal(mx_results_put(&mr, 3, got), 0);
	assert_int_equal(mx_results_n_whole(&mr), 1);
	assert_memory_equal(mx_results_get(&mr, 3, &tmp)->counters.src.c[0].name, "sent_pkts", 10);
	mx_results_fini(&mr);
}

/* The quiet bits (lib/verdict/result_seq.h) follow every move between the forms: a record warned of
 * nothing but a nominal link rate is quiet; a result whole (not settled yet, a failure, anything else)
 * or warned of anything else (flaky, lossy: what the reports list) is not. The failure count reads the
 * whole results only, and agrees. */
static void test_quiet_bits_follow_the_forms(void **state)
{
	struct mx_results mr;
	struct rp_pair_result r, tmp, *got;
	struct rp_result_seq ps;

	(void)state;
	eps_init();
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	for (uint32_t i = 0; i < 3; i++) {
		pass_at(&r, i, i + 1, 100 + i);
		if (i == 0)
			r.warnings |= 1u << RP_WARN_NOMINAL_RATE;   /* a soft device's pass: quiet */
		if (i == 2)
			r.warnings |= 1u << RP_WARN_FLAKY;   /* a plain pass still, but flaky: not quiet */
		assert_int_equal(mx_results_add(&mr, &r, i, i + 1), 0);
	}
	ps = mx_results_pairs(&mr);
	for (size_t i = 0; i < 3; i++)
		assert_false(rp_result_seq_quiet(&ps, i));   /* whole until settled */
	mx_results_settle(&mr);
	ps = mx_results_pairs(&mr);
	assert_true(rp_result_seq_quiet(&ps, 0));
	assert_true(rp_result_seq_quiet(&ps, 1));
	assert_int_equal(mx_results_n_whole(&mr), 0);
	assert_false(rp_result_seq_quiet(&ps, 2));     /* a record, warned flaky */
	got = mx_results_get(&mr, 0, &tmp);
	got->warnings |= 1u << RP_WARN_LOSSY;          /* listed by the reports: not quiet */
	assert_int_equal(mx_results_put(&mr, 0, got), 0);
	assert_false(rp_result_seq_quiet(&ps, 0));
	got->warnings &= ~(1u << RP_WARN_LOSSY);
	assert_int_equal(mx_results_put(&mr, 0, got), 0);
	assert_true(rp_result_seq_quiet(&ps, 0));
	got = mx_results_get(&mr, 1, &tmp);
	rp_pair_result_fail(got, RP_ST_BELOW_THRESHOLD, "outlier: slow");
	assert_int_equal(mx_results_put(&mr, 1, got), 0);
	assert_false(rp_result_seq_quiet(&ps, 1));
	assert_int_equal(mx_results_failed(&mr), 1);
	got->status = RP_ST_OK;
	got->reason[0] = '\0';
	assert_int_equal(mx_results_put(&mr, 1, got), 0);
	assert_true(rp_result_seq_quiet(&ps, 1));      /* a record again */
	assert_int_equal(mx_results_failed(&mr), 0);
	/* past the first word of bits: a failure among 200 passes counted, its neighbours quiet */
	for (uint32_t i = 0; i < 200; i++) {
		pass_at(&r, i % N_EPS, (i + 1) % N_EPS, 100);
		if (i == 150)
			rp_pair_result_fail(&r, RP_ST_RETRY_EXCEEDED, "retry exceeded");
		assert_int_equal(mx_results_add(&mr, &r, i % N_EPS, (i + 1) % N_EPS), 0);
	}
	mx_results_settle(&mr);
	ps = mx_results_pairs(&mr);
	assert_false(rp_result_seq_quiet(&ps, 3 + 150));
	assert_true(rp_result_seq_quiet(&ps, 3 + 149) && rp_result_seq_quiet(&ps, 3 + 151) && rp_result_seq_quiet(&ps, 202));
	assert_int_equal(mx_results_failed(&mr), 1);
	mx_results_fini(&mr);
}

/* A record warned flaky is classified by the verdict as the same result in an array is: a pass of one
 * attempt is not flaky, its stale warning cleared (a quiet pass is one the classification leaves as
 * it is; a flaky-warned one is not quiet). */
static void test_flaky_record_judged_as_in_an_array(void **state)
{
	struct mx_results mr;
	struct rp_pair_result arr[6], tmp;
	struct rp_verdict va, vs;
	struct rp_verdict_cfg cfg;
	struct rp_result_seq ps;
	uint32_t pe[12];
	size_t n = 0;

	(void)state;
	eps_init();
	rp_verdict_cfg_default(&cfg);
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	for (uint32_t s = 0; s < 3; s++)
		for (uint32_t d = 0; d < 3; d++) {
			if (s == d)
				continue;
			pass_at(&arr[n], s, d, 380);
			if (n == 2)
				arr[n].warnings |= 1u << RP_WARN_FLAKY;
			pe[2 * n] = s;
			pe[2 * n + 1] = d;
			assert_int_equal(mx_results_add(&mr, &arr[n], s, d), 0);
			n++;
		}
	mx_results_settle(&mr);
	assert_int_equal(mx_results_n_whole(&mr), 0);  /* the flaky one a record too */
	ps = mx_results_pairs(&mr);
	assert_int_equal(rp_verdict_apply(&cfg, eps, N_EPS, pe, arr, n, &va), 0);
	assert_int_equal(rp_verdict_judge(&cfg, eps, N_EPS, mr.pair_eps, &ps, &vs), 0);
	assert_int_equal(arr[2].warnings & (1u << RP_WARN_FLAKY), 0);
	assert_int_equal(vs.n_flaky, va.n_flaky);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(mx_results_get(&mr, i, &tmp)->confirm, arr[i].confirm);
		assert_int_equal(mx_results_get(&mr, i, &tmp)->warnings, arr[i].warnings);
	}
	rp_verdict_fini(&va);
	rp_verdict_fini(&vs);
	mx_results_fini(&mr);
}

/* The verdict over the store (rp_verdict_judge with puts) decides what it decides over the same
 * results as an array: an adapter that writes slowly is an outlier in its row and drained. A put
 * the verdict forgot would leave the store's copy ok. */
static size_t n_puts;

static int put_counted(const struct rp_result_seq *ps, size_t i, const struct rp_pair_result *r)
{
	n_puts++;
	return mx_results_put(ps->arg, i, r);
}

static void test_verdict_over_store(void **state)
{
	static struct rp_pair_result arr[N_EPS * N_EPS];
	struct rp_verdict_cfg cfg;
	struct rp_verdict va, vs;
	struct mx_results mr;
	struct rp_result_seq ps;
	struct rp_pair_result tmp;
	uint32_t pe[2 * N_EPS * N_EPS];
	size_t n = 0;

	(void)state;
	eps_init();
	eps[3].mtu = 1024;                               /* its pairs: an MTU mismatch warning */
	rp_verdict_cfg_default(&cfg);
	cfg.retest = 0;
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	for (uint32_t s = 0; s < N_EPS; s++)
		for (uint32_t d = 0; d < N_EPS; d++) {
			if (s == d)
				continue;
			pass_at(&arr[n], s, d, s == 2 ? 60 : 380);
			pe[2 * n] = s;
			pe[2 * n + 1] = d;
			assert_int_equal(mx_results_add(&mr, &arr[n], s, d), 0);
			n++;
		}
	mx_results_settle(&mr);
	ps = mx_results_pairs(&mr);
	ps.put = put_counted;
	n_puts = 0;
	assert_int_equal(rp_verdict_apply(&cfg, eps, N_EPS, pe, arr, n, &va), 0);
	assert_int_equal(rp_verdict_judge(&cfg, eps, N_EPS, mr.pair_eps, &ps, &vs), 0);
	/* a plain pass is judged in one go and written back only when the judgement changed it, and
	 * once more when it failed (how it held up on retest) (before: every pair put three times) */
	{
		size_t changed = 0, failed = 0;

		for (size_t i = 0; i < n; i++) {
			changed += arr[i].status != RP_ST_OK || arr[i].warnings != 0;
			failed += arr[i].status != RP_ST_OK;
		}
		assert_true(changed > failed && failed == 3 && changed < n);
		assert_int_equal(n_puts, changed + failed);
	}
	assert_int_equal(va.n_below, 3);
	assert_int_equal(vs.n_below, va.n_below);
	assert_int_equal(vs.n_ok, va.n_ok);
	assert_int_equal(vs.n_confirmed, va.n_confirmed);
	for (int e = 0; e < N_EPS; e++)
		assert_int_equal(vs.eps[e].drain, va.eps[e].drain);
	assert_true(va.eps[2].drain);
	for (size_t i = 0; i < n; i++) {
		const struct rp_pair_result *r = mx_results_get(&mr, i, &tmp);

		assert_int_equal(r->status, arr[i].status);
		assert_string_equal(r->reason, arr[i].reason);
		assert_int_equal(r->confirm, arr[i].confirm);
		assert_int_equal(r->warnings, arr[i].warnings);
	}
	assert_int_equal(mx_results_n_whole(&mr), 3);   /* only the slow ones */
	/* judged again: the same findings, the records untouched */
	n_puts = 0;
	rp_verdict_fini(&vs);
	assert_int_equal(rp_verdict_judge(&cfg, eps, N_EPS, mr.pair_eps, &ps, &vs), 0);
	assert_int_equal(vs.n_below, 3);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(mx_results_get(&mr, i, &tmp)->warnings, arr[i].warnings);
	assert_int_equal(mx_results_n_whole(&mr), 3);
	/* what the verdict's reading passes peek is what get builds, record or whole */
	for (size_t i = 0; i < n; i++) {
		struct rp_result_peek pk, want;

		rp_result_seq_peek(&ps, i, &pk);
		rp_result_peek_of(mx_results_get(&mr, i, &tmp), &want);
		assert_int_equal(pk.status, want.status);
		assert_int_equal(pk.confirm, want.confirm);
		assert_int_equal(pk.msg_size, want.msg_size);
		assert_true(pk.gbps == want.gbps);
		assert_int_equal(pk.warnings, want.warnings);
		assert_int_equal(pk.lat_measured, want.lat_measured);
		assert_int_equal(pk.rev_measured, want.rev_measured);
		assert_int_equal(pk.rev_status, want.rev_status);
		assert_int_equal(pk.rev_warnings, want.rev_warnings);
		assert_int_equal(pk.plain, want.plain);
		assert_true(pk.gbps_min == want.gbps_min && pk.link_gbps == want.link_gbps);
		assert_int_equal(pk.soft, want.soft);
		assert_int_equal(pk.mtu_mismatch, want.mtu_mismatch);
		assert_int_equal(pk.plain, arr[i].status == RP_ST_OK);
	}
	rp_verdict_fini(&va);
	rp_verdict_fini(&vs);
	mx_results_fini(&mr);
}

/* A result kept whole is packed (its zero runs as their length) and unpacked byte for byte, padding
 * and the bytes past a string's end included, whatever they hold; an unreachable pair as the sweep
 * records it takes a few hundred bytes, not sizeof(struct rp_pair_result) (3.4 KB, before). */
static void test_whole_packed(void **state)
{
	struct mx_results mr;
	struct rp_pair_result r, tmp;
	unsigned seed = 12345;

	(void)state;
	eps_init();
	assert_int_equal(mx_results_init(&mr, N_EPS), 0);
	for (uint32_t i = 0; i < 64; i++) {
		pass_at(&r, i % N_EPS, (i + 1) % N_EPS, 0);
		r.verified = false;
		r.counters.src.measured = r.counters.dst.measured = 0;
		rp_pair_result_fail(&r, RP_ST_RETRY_EXCEEDED, "unreachable: transport retry counter exceeded (%u)", i);
		snprintf(r.attempts[0].reason, sizeof(r.attempts[0].reason), "unreachable (%u)", i);
		assert_int_equal(mx_results_add(&mr, &r, i % N_EPS, (i + 1) % N_EPS), 0);
	}
	mx_results_settle(&mr);
	assert_int_equal(mx_results_n_whole(&mr), 64);
	assert_int_equal(mx_results_failed(&mr), 64);
	assert_true(mr.packed_bytes < 64 * 512);
	assert_true(mx_results_bytes(&mr) < 64 * 1024);   /* before: 64 x 3.4 KB kept whole */
	assert_string_equal(mx_results_get(&mr, 63, &tmp)->reason, "unreachable: transport retry counter exceeded (63)");
	/* any bytes at all, runs of every length, a zero run at the very end or none */
	for (int round = 0; round < 200; round++) {
		uint8_t *b = (uint8_t *)&r;
		struct rp_pair_result want;

		for (size_t k = 0; k < sizeof(r); k++) {
			seed = seed * 1103515245u + 12345u;
			b[k] = (seed >> 16) % 3 == 0 ? (uint8_t)(seed >> 8) : 0;
		}
		b[sizeof(r) - 1] = (uint8_t)(round & 1 ? 0 : 7);
		r.status = RP_ST_TIMEOUT;
		/* ... but a result's flags are flags (the store peeks what it packs, and a bool that is
		 * neither 0 nor 1 is no value a result has): any bytes around them */
		r.src.soft = b[offsetof(struct rp_pair_result, src.soft)] & 1;
		r.dst.soft = b[offsetof(struct rp_pair_result, dst.soft)] & 1;
		r.lat.measured = b[offsetof(struct rp_pair_result, lat.measured)] & 1;
		r.reverse.measured = b[offsetof(struct rp_pair_result, reverse.measured)] & 1;
		r.reverse.folded = b[offsetof(struct rp_pair_result, reverse.folded)] & 1;
		r.reverse.verified = b[offsetof(struct rp_pair_result, reverse.verified)] & 1;
		r.verified = b[offsetof(struct rp_pair_result, verified)] & 1;
		want = r;
		assert_int_equal(mx_results_add(&mr, &r, 0, 1), 0);
		assert_memory_equal(mx_results_get(&mr, mr.n - 1, &tmp), &want, sizeof(want));
		/* put back changed, then read again */
		want.gbps = round;
		assert_int_equal(mx_results_put(&mr, mr.n - 1, &want), 0);
		memset(&tmp, 0xa5, sizeof(tmp));
		assert_memory_equal(mx_results_get(&mr, mr.n - 1, &tmp), &want, sizeof(want));
	}
	mx_results_settle(&mr);
	assert_int_equal(mx_results_failed(&mr), 264);
	mx_results_fini(&mr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_pass_rebuilt),
		cmocka_unit_test(test_record_made_at_add),
		cmocka_unit_test(test_add_plain),
		cmocka_unit_test(test_record_narrower_than_a_pass),
		cmocka_unit_test(test_others_stay_whole),
		cmocka_unit_test(test_put_moves_between_forms),
		cmocka_unit_test(test_quiet_bits_follow_the_forms),
		cmocka_unit_test(test_flaky_record_judged_as_in_an_array),
		cmocka_unit_test(test_verdict_over_store),
		cmocka_unit_test(test_whole_packed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
