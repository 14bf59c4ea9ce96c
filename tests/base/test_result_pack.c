/* test_result_pack.c: results packed for the round's slots and the REPORT messages
 * (lib/result_pack, lib/mx_wire's sides and reports, lib/mx_got): a packed result unpacks to
 * exactly what was packed, within RP_PACK_MAX however its bytes fall; bytes from a peer that are not
 * one packed result, or a REPORT whose records do not fit it, are refused; a round's slot keeps the
 * view that wins. Before, a REPORT carried 3,416 bytes a side and rank 0 two whole results a job. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "matrix/mx_got.h"
#include "job/mx_wire.h"
#include "base/result_pack.h"
#include "base/util.h"

static void a_pass(struct rp_pair_result *r, int k)
{
	struct rp_endpoint s, d;

	memset(&s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	snprintf(s.node, sizeof(s.node), "gpu-node-%04d", k);
	snprintf(d.node, sizeof(d.node), "gpu-node-%04d", k + 1);
	snprintf(s.device, sizeof(s.device), "mlx5_%d", k % 8);
	snprintf(d.device, sizeof(d.device), "mlx5_%d", k % 8);
	s.port = d.port = 1;
	s.link_gbps = d.link_gbps = 400;
	rp_pair_result_init(r, &s, &d);
	r->status = RP_ST_OK;
	r->gbps = 389.5 + k;
	r->gbps_min = 380.25;
	r->bytes = 65536000;
	r->iters = 1000;
	r->msg_size = 65536;
	r->verified = true;
	r->elapsed_s = 0.0231;
	rp_pair_result_record_attempt(r, 14);
}

static void unpack_eq(const uint8_t *buf, size_t len, const struct rp_pair_result *want)
{
	struct rp_pair_result got;

	assert_int_equal(rp_result_unpack(buf, len, &got), 0);
	assert_memory_equal(&got, want, sizeof(got));
}

/* Round trips: a pass, a failure with long reasons, and the worst case for the packer (no run of
 * three zeros anywhere, and runs of exactly two), each within RP_PACK_MAX. */
static void test_round_trip_and_bound(void **state)
{
	static uint8_t out[RP_PACK_MAX];
	struct rp_pair_result r;
	uint8_t *b = (uint8_t *)&r;
	size_t len;

	(void)state;
	a_pass(&r, 3);
	len = rp_result_pack(&r, out);
	assert_true(len < sizeof(r) / 4);          /* a pass: a few hundred bytes, not 3.4 KB */
	unpack_eq(out, len, &r);

	a_pass(&r, 5);
	rp_pair_result_fail(&r, RP_ST_RETRY_EXCEEDED, "%0250d", 7);
	memset(r.secondary.reason, 'x', sizeof(r.secondary.reason) - 1);
	len = rp_result_pack(&r, out);
	unpack_eq(out, len, &r);

	for (size_t i = 0; i < sizeof(r); i++)
		b[i] = (uint8_t)(i % 3 == 0 ? 0 : 0x5a);   /* literal runs as long as they get */
	len = rp_result_pack(&r, out);
	assert_true(len <= RP_PACK_MAX);
	unpack_eq(out, len, &r);
	for (size_t i = 0; i < sizeof(r); i++)
		b[i] = (uint8_t)(i % 4 < 2 ? 0 : 0xa5);    /* two zeros: kept in the literals */
	len = rp_result_pack(&r, out);
	assert_true(len <= RP_PACK_MAX);
	unpack_eq(out, len, &r);
	memset(&r, 0, sizeof(r));
	len = rp_result_pack(&r, out);
	assert_true(len < 64);
	unpack_eq(out, len, &r);
}

/* The format as result_pack.h states it, byte by byte: the packer (a word at a time where it can)
 * writes exactly these tokens, for results of every shape (random runs of zeros and of bytes). */
static size_t pack_ref(const uint8_t *b, size_t n, uint8_t *out)
{
	size_t i = 0, o = 0;

	while (i < n) {
		size_t z = 0, lit = 0;

		while (i + z < n && b[i + z] == 0 && z < 128)
			z++;
		if (z >= 3 || i + z == n) {
			out[o++] = (uint8_t)(127 + z);
			i += z;
			continue;
		}
		while (i + lit < n && lit < 128 &&
		       !(i + lit + 2 < n && b[i + lit] == 0 && b[i + lit + 1] == 0 && b[i + lit + 2] == 0))
			lit++;
		out[o++] = (uint8_t)(lit - 1);
		memcpy(out + o, b + i, lit);
		o += lit;
		i += lit;
	}
	return o;
}

static void test_same_tokens_as_byte_by_byte(void **state)
{
	static uint8_t got[RP_PACK_MAX], want[RP_PACK_MAX];
	struct rp_pair_result r;
	uint8_t *b = (uint8_t *)&r;
	uint64_t x = 88172645463325252ull;

	(void)state;
	for (int t = 0; t < 2000; t++) {
		size_t i = 0;

		while (i < sizeof(r)) {
			size_t run;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			run = 1 + (size_t)(x % (t % 3 == 0 ? 5 : 300));
			for (size_t k = 0; k < run && i < sizeof(r); k++, i++)
				b[i] = (x >> 62) & 1 ? (uint8_t)(1 + (x >> (k % 48)) % 255) : 0;
		}
		size_t len = rp_result_pack(&r, got);

		assert_int_equal(len, pack_ref(b, sizeof(r), want));
		assert_memory_equal(got, want, len);
		unpack_eq(got, len, &r);
	}
}

/* A peer's bytes that are not exactly one packed result: refused, and *r zeroed. */
static void test_unpack_refuses_what_is_not_one_result(void **state)
{
	static uint8_t out[RP_PACK_MAX + 8];
	struct rp_pair_result r, got;
	size_t len;
	uint8_t lit[3] = { 40, 'a', 'b' };          /* a literal of 41 bytes with 2 present */
	uint8_t zeros[64];

	(void)state;
	a_pass(&r, 1);
	len = rp_result_pack(&r, out);
	memset(&got, 0x77, sizeof(got));
	assert_int_equal(rp_result_unpack(out, len - 1, &got), -EPROTO);       /* cut short */
	assert_true(((uint8_t *)&got)[0] == 0 && got.status == 0);
	out[len] = 0x80;
	assert_int_equal(rp_result_unpack(out, len + 1, &got), -EPROTO);       /* a byte after its end */
	assert_int_equal(rp_result_unpack(lit, sizeof(lit), &got), -EPROTO);  /* a literal past the buffer */
	memset(zeros, 255, sizeof(zeros));                                    /* 128 zeros each: past the struct */
	assert_int_equal(rp_result_unpack(zeros, sizeof(zeros), &got), -EPROTO);
	assert_int_equal(rp_result_unpack(out, 0, &got), -EPROTO);
}

/* A failure that is sent packed (a reason: not a plain pass). */
static void a_failure(struct rp_pair_result *r, int k)
{
	a_pass(r, k);
	rp_pair_result_fail(r, RP_ST_TIMEOUT, "no completion within 2.0 s (pair %d)", k);
}

/* A REPORT of sides rk[0] = rank 3 with n records: failures (packed), or passes (plain sides). */
static size_t report_build_of(uint8_t *buf, size_t n, int k0, bool passes)
{
	struct mx_hdr *h = (struct mx_hdr *)buf;
	size_t off = sizeof(*h);
	struct mx_wire_rank rk = { .rank = 3, .n_rec = (uint32_t)n };
	struct rp_pair_result r;

	for (size_t i = 0; i < n; i++) {
		if (passes)
			a_pass(&r, k0 + (int)i);
		else
			a_failure(&r, k0 + (int)i);
		off += mx_side_write(buf + off, (uint32_t)i, 0, true, &r);
	}
	memcpy(buf + off, &rk, sizeof(rk));
	off += sizeof(rk);
	mx_hdr_init(h, MX_KIND_REPORT, 3, 0, n, 0);
	h->n_ranks = 1;
	h->length = (uint32_t)off;
	return off;
}

static size_t report_build(uint8_t *buf, size_t n, int k0)
{
	return report_build_of(buf, n, k0, false);
}

static void test_report_checks(void **state)
{
	size_t cap = mx_report_len(4, 1) + 64, len;
	uint8_t *buf = calloc(1, cap);
	struct mx_wire_side s;
	const uint8_t *p;
	struct rp_pair_result r, want;
	struct mx_job jobs[4] = { { 0, 1, 1, 0, 0 }, { 0, 2, 1, 0, 0 }, { 1, 2, 1, 0, 0 }, { 1, 3, 1, 0, 0 } };
	struct mx_hdr *h = (struct mx_hdr *)buf;

	(void)state;
	assert_non_null(buf);
	len = report_build(buf, 4, 10);
	assert_true(mx_report_ok(buf, len));
	assert_true(len < 4 * sizeof(struct rp_pair_result) / 4);   /* before: 4 x 3,416 bytes and more */
	p = mx_report_recs(buf);
	for (int i = 0; i < 4; i++) {
		memcpy(&s, p, sizeof(s));
		assert_int_equal(mx_side_read((const void *)p, &r), 0);
		assert_true(mx_side_ok((const void *)p, &r, jobs, 4));
		a_failure(&want, 10 + i);
		assert_memory_equal(&r, &want, sizeof(r));
		assert_int_equal((s.len + sizeof(s)) <= mx_side_size(s.len), 1);
		p += mx_side_size(s.len);
	}
	assert_int_equal(mx_report_ranks(buf)->n_rec, 4);
	assert_false(mx_report_ok(buf, len - 1));              /* its length is not the message's */

	/* a record claiming more than any packed result */
	memcpy(&s, mx_report_recs(buf), sizeof(s));
	s.len = (uint32_t)RP_PACK_MAX + 1;
	memcpy((void *)mx_report_recs(buf), &s, sizeof(s));
	assert_false(mx_report_ok(buf, len));
	s.len = 0;                                             /* a plain side: 144 bytes, not this one's */
	memcpy((void *)mx_report_recs(buf), &s, sizeof(s));
	assert_false(mx_report_ok(buf, len));
	/* a record running into the ranks */
	len = report_build(buf, 4, 10);
	h->n = 5;
	assert_false(mx_report_ok(buf, len));
	/* records fit but the ranks' counts do not add up */
	h->n = 4;
	((struct mx_wire_rank *)(void *)(buf + len - sizeof(struct mx_wire_rank)))->n_rec = 3;
	assert_false(mx_report_ok(buf, len));
	/* more ranks than the message holds */
	len = report_build(buf, 4, 10);
	h->n_ranks = UINT32_MAX;
	assert_false(mx_report_ok(buf, len));
	/* a side naming a direction the job did not ask for, or a writer flag that is neither */
	len = report_build(buf, 4, 10);
	memcpy(&s, mx_report_recs(buf), sizeof(s));
	assert_int_equal(mx_side_read((const void *)mx_report_recs(buf), &r), 0);
	s.dir = 1;
	assert_false(mx_side_ok(&s, &r, jobs, 4));
	s.dir = 0;
	s.writer = 2;
	assert_false(mx_side_ok(&s, &r, jobs, 4));
	free(buf);
}

/* A plain pass goes as its 144-byte record (len 0), and rank 0's slot, the table merged in, holds
 * exactly what the packed side gave (without counters listed: nothing to leave out); a pass with
 * only informational counters listed arrives with its judgement and n_moved, "brief"; anything else
 * is packed; a plain side out of range is refused by its reader. Before, every side was packed
 * (len > 0). */
static void test_plain_sides(void **state)
{
	static uint8_t buf[4096], wb[RP_PACK_MAX];
	struct mx_ep eps[2];
	struct mx_job jobs[1] = { { .a = 0, .b = 1, .dirs = 1 } };
	struct mx_got plain = { 0 }, packed = { 0 };
	struct rp_pair_result r, a, b;
	struct mx_wire_side s;
	struct mx_wire_plain wp;
	size_t len;

	(void)state;
	memset(eps, 0, sizeof(eps));
	for (int e = 0; e < 2; e++) {
		snprintf(eps[e].ep.node, sizeof(eps[e].ep.node), "gpu-node-%04d", 7 + e);
		snprintf(eps[e].ep.device, sizeof(eps[e].ep.device), "mlx5_7");
		eps[e].ep.port = 1;
		eps[e].ep.link_gbps = 400;
	}
	a_pass(&r, 7);
	r.src.mtu = 4096;
	rp_strlcpy(r.dst.mem, "cuda:3", sizeof(r.dst.mem));
	rp_strlcpy(r.dst.mem_reg, "dmabuf", sizeof(r.dst.mem_reg));
	len = mx_side_write(buf, 0, 0, true, &r);
	memcpy(&s, buf, sizeof(s));
	assert_int_equal(s.len, 0);
	assert_int_equal(len, sizeof(s) + sizeof(struct mx_wire_plain));
	assert_int_equal(sizeof(struct mx_wire_plain), 144);
	assert_true(mx_side_plain((const void *)buf, &wp));
	assert_true(mx_side_job_ok((const void *)buf, jobs, 1));
	assert_int_equal(mx_got_reset(&plain, 2, eps, jobs), 0);
	assert_int_equal(mx_got_reset(&packed, 2, eps, jobs), 0);
	assert_int_equal(mx_got_side_plain(&plain, 0, &wp, true), 0);
	assert_int_equal(mx_got_side_packed(&packed, 0, wb, rp_result_pack(&r, wb), true), 0);
	assert_true(mx_got_have(&plain, 0) && mx_got_status(&plain, 0) == RP_ST_OK);
	assert_memory_equal(mx_got_get(&plain, 0, &a), mx_got_get(&packed, 0, &b), sizeof(a));
	assert_string_equal(a.dst.mem, "cuda:3");
	assert_int_equal(a.src.mtu, 4096);
	assert_true(mx_got_bytes(&plain) < 2 * 200);

	/* informational counters listed: the judgement and n_moved arrive, not the names */
	r.counters.src.measured = 1;
	r.counters.src.n_moved = r.counters.src.n = 1;
	rp_strlcpy(r.counters.src.c[0].name, "port_xmit_packets", sizeof(r.counters.src.c[0].name));
	r.counters.src.c[0].delta = 1000;
	assert_int_equal(mx_side_write(buf, 0, 0, true, &r), len);
	assert_int_equal(mx_side_read((const void *)buf, &a), 0);
	assert_true(a.counters.src.measured && a.counters.src.n_moved == 1 && a.counters.src.n == 0 &&
		    a.counters.src.brief && !a.counters.dst.measured);
	/* what the record cannot hold goes packed */
	r.attempts[0].reason[0] = 'x';
	mx_side_write(buf, 0, 0, true, &r);
	memcpy(&s, buf, sizeof(s));
	assert_true(s.len > 0);
	a_failure(&r, 7);
	mx_side_write(buf, 0, 0, true, &r);
	memcpy(&s, buf, sizeof(s));
	assert_true(s.len > 0);

	/* a plain side out of range: refused, never taken */
	a_pass(&r, 7);
	mx_side_write(buf, 0, 0, true, &r);
	memcpy(&wp, buf + sizeof(s), sizeof(wp));
	wp.p.ctr_measured = 4;
	memcpy(buf + sizeof(s), &wp, sizeof(wp));
	assert_false(mx_side_plain((const void *)buf, &wp));
	assert_int_equal(mx_side_read((const void *)buf, &a), -EPROTO);
	mx_side_write(buf, 0, 0, true, &r);
	memset(buf + sizeof(s) + offsetof(struct mx_wire_plain, mem), 'A', 16);   /* not terminated */
	assert_false(mx_side_plain((const void *)buf, &wp));
	buf[sizeof(s) + offsetof(struct mx_wire_plain, mem) + 15] = '\0';        /* terminated at its end */
	assert_true(mx_side_plain((const void *)buf, &wp));
	buf[sizeof(s) + offsetof(struct mx_wire_plain, mem) + 15] = 'A';
	buf[sizeof(s) + offsetof(struct mx_wire_plain, mem) + 3] = '\0';         /* and anywhere before it */
	assert_true(mx_side_plain((const void *)buf, &wp));
	mx_side_write(buf, 0, 0, true, &r);
	buf[sizeof(s) + offsetof(struct mx_wire_plain, soft)] = 2;
	assert_false(mx_side_plain((const void *)buf, &wp));
	mx_side_write(buf, 0, 0, true, &r);
	memcpy(&wp, buf + sizeof(s), sizeof(wp));
	wp.p.gbps = NAN;                                       /* a rate that is not a number */
	memcpy(buf + sizeof(s), &wp, sizeof(wp));
	assert_false(mx_side_plain((const void *)buf, &wp));
	r.gbps = INFINITY;                                     /* never sent plain */
	mx_side_write(buf, 0, 0, true, &r);
	memcpy(&s, buf, sizeof(s));
	assert_true(s.len > 0);
	/* nor what its reader would refuse: the side goes packed, never lost */
	a_pass(&r, 7);
	r.src.mtu = -1;
	mx_side_write(buf, 0, 0, true, &r);
	memcpy(&s, buf, sizeof(s));
	assert_true(s.len > 0);
	a_pass(&r, 7);
	memset(r.dst.mem, 'h', sizeof(r.dst.mem));
	mx_side_write(buf, 0, 0, true, &r);
	memcpy(&s, buf, sizeof(s));
	assert_true(s.len > 0);
	mx_got_fini(&plain);
	mx_got_fini(&packed);
}

/* A REPORT of plain sides passes the message checks at its size, not a byte less. */
static void test_report_of_plain_sides(void **state)
{
	static uint8_t buf[4096];
	size_t len = report_build_of(buf, 4, 10, true);
	struct mx_job jobs[4] = { { 0, 1, 1, 0, 0 }, { 0, 2, 1, 0, 0 }, { 1, 2, 1, 0, 0 }, { 1, 3, 1, 0, 0 } };
	const uint8_t *p = mx_report_recs(buf);
	struct rp_pair_result r;

	(void)state;
	assert_int_equal(len, sizeof(struct mx_hdr) + 4 * (sizeof(struct mx_wire_side) + 144) + sizeof(struct mx_wire_rank));
	assert_true(mx_report_ok(buf, len));
	for (int i = 0; i < 4; i++) {
		assert_int_equal(mx_side_read((const void *)p, &r), 0);
		assert_true(mx_side_ok((const void *)p, &r, jobs, 4));
		assert_true(r.status == RP_ST_OK && r.gbps == 389.5 + 10 + i);
		p += mx_side_size(0);
	}
	assert_false(mx_report_ok(buf, len - 8));
}

/* A round's slot: the writer's view wins over the target's, an interrupted view over either. */
static void test_got_keeps_the_view_that_wins(void **state)
{
	struct mx_got g = { 0 };
	struct rp_pair_result w, t, x, out;

	(void)state;
	a_pass(&w, 1);
	a_pass(&t, 1);
	rp_pair_result_fail(&t, RP_ST_FLUSHED, "target saw a flush");
	a_pass(&x, 1);
	rp_pair_result_fail(&x, RP_ST_INTERRUPTED, "not measured: stopped by signal 15");
	assert_int_equal(mx_got_reset(&g, 6, NULL, NULL), 0);
	assert_false(mx_got_have(&g, 0));
	assert_int_equal(mx_got_side(&g, 0, &w, true), 0);
	assert_int_equal(mx_got_side(&g, 0, &t, false), 0);
	assert_int_equal(mx_got_status(&g, 0), RP_ST_OK);       /* the writer's stands */
	assert_memory_equal(mx_got_get(&g, 0, &out), &w, sizeof(w));
	assert_int_equal(mx_got_side(&g, 1, &t, false), 0);
	assert_int_equal(mx_got_side(&g, 1, &w, true), 0);
	assert_int_equal(mx_got_status(&g, 1), RP_ST_OK);       /* the writer's replaces the target's */
	assert_int_equal(mx_got_side(&g, 2, &w, true), 0);
	assert_int_equal(mx_got_side(&g, 2, &x, false), 0);
	assert_int_equal(mx_got_status(&g, 2), RP_ST_INTERRUPTED);
	assert_int_equal(mx_got_side(&g, 2, &w, true), 0);
	assert_int_equal(mx_got_status(&g, 2), RP_ST_INTERRUPTED);   /* and stays */
	assert_true(mx_got_bytes(&g) < sizeof(struct rp_pair_result));   /* three results held, packed */
	assert_int_equal(mx_got_reset(&g, 2, NULL, NULL), 0);
	assert_false(mx_got_have(&g, 0) || mx_got_have(&g, 1) || mx_got_have(&g, 2));
	mx_got_fini(&g);
}

/* r as literal tokens only (no zero run packed): a valid packing rp_result_pack never makes. */
static size_t pack_literal(const struct rp_pair_result *r, uint8_t *out)
{
	const uint8_t *b = (const uint8_t *)r;
	size_t o = 0;

	for (size_t i = 0; i < sizeof(*r); i += 128) {
		size_t k = sizeof(*r) - i < 128 ? sizeof(*r) - i : 128;

		out[o++] = (uint8_t)(k - 1);
		memcpy(out + o, b + i, k);
		o += k;
	}
	return o;
}

/* A side kept as it came packed: its status read off the bytes, the same rule of which view wins as
 * mx_got_side, the bytes kept as they are (not repacked), and bytes with no status refused with the
 * slot unchanged. */
static void test_got_keeps_packed_sides(void **state)
{
	static uint8_t wb[RP_PACK_MAX], tb[RP_PACK_MAX], xb[RP_PACK_MAX], lit[sizeof(struct rp_pair_result) * 2];
	struct mx_got g = { 0 };
	struct rp_pair_result w, t, x, out;
	size_t wl, tl, xl, ll;
	int32_t st;

	(void)state;
	a_pass(&w, 3);
	a_pass(&t, 3);
	rp_pair_result_fail(&t, RP_ST_FLUSHED, "target saw a flush");
	a_pass(&x, 3);
	rp_pair_result_fail(&x, RP_ST_INTERRUPTED, "not measured: stopped by signal 15");
	wl = rp_result_pack(&w, wb);
	tl = rp_result_pack(&t, tb);
	xl = rp_result_pack(&x, xb);
	assert_int_equal(rp_result_status(tb, tl, &st), 0);
	assert_int_equal(st, RP_ST_FLUSHED);
	ll = pack_literal(&t, lit);
	assert_int_equal(rp_result_status(lit, ll, &st), 0);
	assert_int_equal(st, RP_ST_FLUSHED);
	/* cut before the status: nothing to read */
	assert_int_equal(rp_result_status(lit, offsetof(struct rp_pair_result, status), &st), -EPROTO);

	assert_int_equal(mx_got_reset(&g, 4, NULL, NULL), 0);
	assert_int_equal(mx_got_side_packed(&g, 0, wb, wl, true), 0);
	assert_int_equal(mx_got_side_packed(&g, 0, tb, tl, false), 0);
	assert_int_equal(mx_got_status(&g, 0), RP_ST_OK);             /* the writer's stands */
	assert_memory_equal(mx_got_get(&g, 0, &out), &w, sizeof(w));
	assert_int_equal(mx_got_side_packed(&g, 1, lit, ll, false), 0);
	assert_int_equal(mx_got_status(&g, 1), RP_ST_FLUSHED);
	assert_true(g.d[1].len == ll && memcmp(g.d[1].buf, lit, ll) == 0);   /* as it came */
	assert_memory_equal(mx_got_get(&g, 1, &out), &t, sizeof(t));
	assert_int_equal(mx_got_side_packed(&g, 1, wb, wl, true), 0);
	assert_int_equal(mx_got_status(&g, 1), RP_ST_OK);             /* the writer's replaces the target's */
	assert_int_equal(mx_got_side_packed(&g, 2, xb, xl, false), 0);
	assert_int_equal(mx_got_side_packed(&g, 2, wb, wl, true), 0);
	assert_int_equal(mx_got_status(&g, 2), RP_ST_INTERRUPTED);    /* and stays */
	assert_int_equal(mx_got_side_packed(&g, 3, wb, wl, true), 0);
	assert_int_equal(mx_got_side_packed(&g, 3, lit, 10, false), -EPROTO);
	assert_int_equal(mx_got_side_packed(&g, 3, lit, 0, true), -EPROTO);
	assert_memory_equal(mx_got_get(&g, 3, &out), &w, sizeof(w));    /* unchanged */
	assert_int_equal(mx_got_side_packed(&g, 4, wb, wl, true), -ENOMEM);   /* no such slot */
	mx_got_fini(&g);
}

/* mx_got_get merges the table into what a side said of its endpoints: the table's names, port and
 * rate stand (a peer's view never replaces them), what the engine learned (MTU, memory, a software
 * device) is kept; slot 2 k + 1 is the job's b -> a. Without the eps and jobs nothing is merged.
 * Failed before the merge moved into mx_got_get (it was done in mx_round alone). */
static void test_got_merges_the_table(void **state)
{
	struct mx_ep eps[2];
	struct mx_job jobs[1] = { { .a = 1, .b = 0, .dirs = 3 } };
	struct mx_got g = { 0 };
	struct rp_pair_result r, out;

	(void)state;
	memset(eps, 0, sizeof(eps));
	for (int e = 0; e < 2; e++) {
		snprintf(eps[e].ep.node, sizeof(eps[e].ep.node), "table-node-%d", e);
		snprintf(eps[e].ep.device, sizeof(eps[e].ep.device), "mlx5_%d", e);
		eps[e].ep.port = 1;
		eps[e].ep.link_gbps = 400;
		eps[e].ep.mtu = 4096;
	}
	a_pass(&r, 7);                                  /* src says gpu-node-0007, dst gpu-node-0008 */
	r.src.mtu = 1024;
	r.src.soft = true;
	rp_strlcpy(r.dst.mem, "cuda:3", sizeof(r.dst.mem));
	rp_strlcpy(r.dst.mem_reg, "dmabuf", sizeof(r.dst.mem_reg));
	assert_int_equal(mx_got_reset(&g, 2, eps, jobs), 0);
	assert_int_equal(mx_got_set(&g, 0, &r, true), 0);   /* a -> b: 1 -> 0 */
	assert_int_equal(mx_got_set(&g, 1, &r, true), 0);   /* b -> a: 0 -> 1 */
	mx_got_get(&g, 0, &out);
	assert_string_equal(out.src.node, "table-node-1");
	assert_string_equal(out.dst.node, "table-node-0");
	assert_true(out.src.mtu == 1024 && out.src.soft && out.dst.mtu == 4096 && !out.dst.soft);
	assert_string_equal(out.dst.mem, "cuda:3");
	assert_string_equal(out.dst.mem_reg, "dmabuf");
	assert_true(out.src.link_gbps == 400 && out.gbps == r.gbps && out.status == RP_ST_OK);
	mx_got_get(&g, 1, &out);
	assert_string_equal(out.src.node, "table-node-0");
	assert_string_equal(out.dst.node, "table-node-1");
	assert_int_equal(mx_got_reset(&g, 2, NULL, NULL), 0);
	assert_int_equal(mx_got_set(&g, 0, &r, true), 0);
	mx_got_get(&g, 0, &out);
	assert_string_equal(out.src.node, "gpu-node-0007");
	mx_got_fini(&g);
}

/* A brief pass (a sweep's first pass): its header and 8 bytes of time, in a report mx_report_ok takes
 * among other records; its time read back, refused when not finite or negative; it holds no result
 * to read. */
static void test_brief_passes(void **state)
{
	static uint8_t buf[4096];
	struct mx_hdr *h = (struct mx_hdr *)buf;
	struct mx_wire_side s;
	struct mx_wire_rank rk = { .rank = 3, .n_rec = 3 };
	struct mx_job jobs[2] = { { .a = 0, .b = 1, .dirs = 1 }, { .a = 1, .b = 2, .dirs = 3 } };
	struct rp_pair_result r;
	size_t off = sizeof(*h), len;
	double t;

	(void)state;
	len = mx_side_write_brief(buf + off, 1, 1, false, 0.125);
	assert_int_equal(len, sizeof(s) + sizeof(double));
	assert_int_equal(mx_side_size(MX_SIDE_BRIEF), len);
	memcpy(&s, buf + off, sizeof(s));
	assert_int_equal(s.len, MX_SIDE_BRIEF);
	assert_true(s.idx == 1 && s.dir == 1 && s.writer == 0);
	assert_true(mx_side_brief((const void *)(buf + off), &t) && t == 0.125);
	assert_true(mx_side_job_ok((const void *)(buf + off), jobs, 2));
	assert_int_equal(mx_side_read((const void *)(buf + off), &r), -EPROTO);
	off += len;
	a_failure(&r, 5);
	off += mx_side_write(buf + off, 0, 0, true, &r);
	off += mx_side_write_brief(buf + off, 1, 0, true, 0);
	memcpy(buf + off, &rk, sizeof(rk));
	off += sizeof(rk);
	mx_hdr_init(h, MX_KIND_REPORT, 3, 0, 3, 0);
	h->n_ranks = 1;
	h->length = (uint32_t)off;
	assert_true(mx_report_ok(buf, off));
	/* cut short by a byte: the brief pass at the end no longer fits */
	h->length = (uint32_t)off - 1;
	assert_false(mx_report_ok(buf, off - 1));
	h->length = (uint32_t)off;
	/* a time out of range */
	for (int k = 0; k < 3; k++) {
		double bad = k == 0 ? -1.0 : k == 1 ? NAN : INFINITY;

		mx_side_write_brief(buf, 0, 0, true, bad);
		assert_false(mx_side_brief((const void *)buf, &t));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_and_bound),
		cmocka_unit_test(test_same_tokens_as_byte_by_byte),
		cmocka_unit_test(test_unpack_refuses_what_is_not_one_result),
		cmocka_unit_test(test_report_checks),
		cmocka_unit_test(test_plain_sides),
		cmocka_unit_test(test_brief_passes),
		cmocka_unit_test(test_report_of_plain_sides),
		cmocka_unit_test(test_got_keeps_the_view_that_wins),
		cmocka_unit_test(test_got_keeps_packed_sides),
		cmocka_unit_test(test_got_merges_the_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
