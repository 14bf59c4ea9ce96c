/* verdict_rates.c: what the bandwidth rules compare a message size's pairs against: every endpoint's
 * medians of the rates it sends and receives, and every pair's other direction; see verdict_int.h. */
#include "verdict/verdict_int.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}


/* v[k] as it would be with v[0..m) sorted (k < m), v reordered so that v[0..k) <= v[k] <= v(k..m):
 * quickselect on a median-of-three pivot, O(m) where a sort was O(m log m) for each of 8,192 rows
 * and columns of 1,023 rates; after 2 log2(m) partitions the rest of the range is sorted instead,
 * so it is never worse than the sort it replaced. */
static double select_kth(double *v, size_t m, size_t k)
{
	size_t lo = 0, hi = m - 1, rounds = 0, lim = 2;

	for (size_t x = m; x > 1; x >>= 1)
		lim += 2;
	while (lo < hi) {
		size_t i = lo, j = hi, mid = lo + (hi - lo) / 2;
		double a = v[lo], b = v[mid], c = v[hi], pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);

		if (++rounds > lim) {
			qsort(v + lo, hi - lo + 1, sizeof(*v), cmp_double);
			break;
		}
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (pivot < v[j])
				j--;
			if (i <= j) {
				double t = v[i];

				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;            /* j < k < i: v[k] equals the pivot, in place */
	}
	return v[k];
}

/* The median of v[0..m) (m > 0; v reordered): the middle value, or the mean of the two middle ones. */
static double median_of(double *v, size_t m)
{
	double hi = select_kth(v, m, m / 2), lo = hi;

	if (m % 2 == 0) {
		/* the largest of v[0..m/2), all <= v[m/2] after the selection */
		lo = v[0];
		for (size_t i = 1; i < m / 2; i++)
			lo = v[i] > lo ? v[i] : lo;
	}
	return m % 2 ? hi : (lo + hi) / 2;
}


int rp_rate_count_init(struct rp_rate_count *k, size_t n_eps, size_t msg_size)
{
	k->msg_size = msg_size;
	k->n_eps = n_eps;
	k->med = calloc(2 * (n_eps + 1), sizeof(*k->med));
	k->rev = calloc(n_eps + 1, sizeof(*k->rev));
	if (!k->med || !k->rev) {
		rp_rate_count_fini(k);
		return rp_error(-ENOMEM, "verdict: allocate rate counts for %zu endpoints", n_eps);
	}
	return 0;
}

void rp_rate_count_pair(struct rp_rate_count *k, const uint32_t *pair_eps, size_t i, const struct rp_result_peek *pk)
{
	uint32_t s = pair_eps[2 * i], d = pair_eps[2 * i + 1];

	if (pk->msg_size != k->msg_size)
		return;
	if (rp_pk_bw_judged(pk)) {
		k->med[s + 1]++;
		k->med[k->n_eps + 1 + d + 1]++;
	}
	if (s != d)
		k->rev[(s < d ? s : d) + 1]++;
}

void rp_rate_count_fini(struct rp_rate_count *k)
{
	free(k->med);
	free(k->rev);
	k->med = k->rev = NULL;
}

/* A part of rp_rates_build's work, two at a time, each on a thread of its own where two CPUs are to
 * be had: the medians of the endpoints [lo, hi) on one side (0: the rates each sends, 1: receives),
 * or the reverse notes of the pairs whose lower endpoint is in [lo, hi). Each reads the endpoints of
 * every pair and peeks only its own pairs: the results are peeked as often as by one thread, and
 * the scratch of a part is its share of the pairs. */
struct rates_part {
	const uint32_t *pair_eps;
	const struct rp_result_seq *ps;
	const struct rp_rate_count *k;
	int side;                     /* medians: the side; -1: reverse notes */
	double *med;                  /* medians: out, n_eps (its [lo, hi) written) */
	uint32_t lo, hi;              /* the endpoints taken */
	struct rp_rev_notes rn;       /* reverse notes: out */
	int rc;
};

/* Medians of the judged rates of one side per endpoint of [lo, hi) (row: the pairs e sends, col:
 * those it receives), from k's counts. One pass places the rates. */
static int medians_side(const uint32_t *pair_eps, const struct rp_result_seq *ps, const struct rp_rate_count *k,
			int j, uint32_t lo, uint32_t hi, double *med)
{
	size_t n = ps->n, m_all = 0, w = hi > lo ? hi - lo : 0;
	const size_t *cnt = k->med + (size_t)j * (k->n_eps + 1) + 1;   /* cnt[e]: e's judged pairs on side j */
	struct rp_result_peek pk;
	size_t *start = malloc((w + 1) * sizeof(*start)), *fill = calloc(w ? w : 1, sizeof(*fill));
	double *vals;

	for (size_t e = lo; e < hi; e++)
		m_all += cnt[e];
	vals = malloc((m_all ? m_all : 1) * sizeof(*vals));
	if (!start || !fill || !vals) {
		free(start);
		free(fill);
		free(vals);
		return rp_error(-ENOMEM, "verdict: allocate medians for %zu pairs", m_all);
	}
	/* endpoint lo + x's rates from vals[start[x]] */
	start[0] = 0;
	for (size_t x = 0; x < w; x++)
		start[x + 1] = start[x] + cnt[lo + x];
	for (size_t i = 0; i < n; i++) {
		size_t e = pair_eps[2 * i + j];

		if (e < lo || e >= hi)
			continue;
		rp_result_seq_peek(ps, i, &pk);
		if (!rp_pk_bw_judged(&pk) || pk.msg_size != k->msg_size)
			continue;
		vals[start[e - lo] + fill[e - lo]++] = pk.gbps;
	}
	for (size_t x = 0; x < w; x++) {
		size_t m = start[x + 1] - start[x];

		med[lo + x] = m == 0 ? 0 : median_of(vals + start[x], m);
	}
	free(start);
	free(fill);
	free(vals);
	return 0;
}

struct rev_ent {                /* a pair in its lower endpoint's bucket */
	uint32_t hi;                  /* the higher of its two endpoints */
	uint32_t idx_dir;             /* the pair's index << 1 | 1 when it runs from the higher endpoint */
	double gbps;                  /* its rate when judged for bandwidth and it moved data, else -1 */
};

void rp_rev_notes_fini(struct rp_rev_notes *rn)
{
	free(rn->v);
	memset(rn, 0, sizeof(*rn));
}

/* Note rev as the other direction's rate of the pair idx_dir >> 1 whose own rate as offered is own
 * (-1: not a positive judged one), when the reverse-direction rule could fail it. 0 or -ENOMEM. */
static int rev_note(struct rp_rev_notes *rn, uint32_t idx_dir, double own, double rev)
{
	if (!(rev > 0) || (own > 0 && own >= RP_VERDICT_REVERSE_RATIO * rev))
		return 0;
	if (rn->n == rn->cap) {
		size_t cap = rn->cap ? 2 * rn->cap : 64;
		struct rp_rev_note *v = realloc(rn->v, cap * sizeof(*v));

		if (!v)
			return rp_error(-ENOMEM, "verdict: allocate %zu reverse-direction notes", cap);
		rn->v = v;
		rn->cap = cap;
	}
	rn->v[rn->n++] = (struct rp_rev_note){ .idx = idx_dir >> 1, .rev = rev };
	return 0;
}

static int note_cmp(const void *x, const void *y)
{
	const struct rp_rev_note *a = x, *b = y;

	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The other direction's rate of every pair (d -> s at the same message size, judged for bandwidth;
 * the first such pair in the sequence when there are several), kept where the rule could fail the
 * pair (rev_note). Every pair goes into the bucket of its lower endpoint, in sequence order (a
 * counting sort on k's counts); then, bucket by bucket, each direction's first judged rate is noted
 * per higher endpoint (first[2 * hi + dir]) and read back by the other direction, and the notes
 * cleared: one pass over the pairs and three short ones over each bucket, no sort of the pairs (a
 * binary search per pair, later a sort per bucket, were most of the verdict's time at 8,192
 * endpoints). 0, -EOVERFLOW or -ENOMEM. */
static int reverse_fill(const uint32_t *pair_eps, const struct rp_result_seq *ps, const struct rp_rate_count *k,
			uint32_t lo, uint32_t hi, struct rp_rev_notes *rn)
{
	size_t n_eps = k->n_eps, *end, taken = 0;
	struct rev_ent *e;
	double *first;
	int rc = 0;

	if (ps->n > UINT32_MAX / 2)
		return rp_error(-EOVERFLOW, "verdict: %zu pairs, more than the reverse-direction rule indexes", ps->n);
	for (size_t j = lo; j < hi && j < n_eps; j++)
		taken += k->rev[j + 1];
	e = malloc((taken ? taken : 1) * sizeof(*e));
	end = malloc((n_eps + 1) * sizeof(*end));
	first = malloc(2 * (n_eps ? n_eps : 1) * sizeof(*first));
	if (!e || !end || !first) {
		free(e);
		free(end);
		free(first);
		return rp_error(-ENOMEM, "verdict: allocate for %zu pairs", ps->n);
	}
	for (size_t j = 0; j < 2 * n_eps; j++)
		first[j] = -1;
	end[0] = 0;
	for (size_t j = 1; j <= n_eps; j++)   /* end[j]: where endpoint j's entries begin (taken ones only) */
		end[j] = end[j - 1] + (j - 1 >= lo && j - 1 < hi ? k->rev[j] : 0);
	for (size_t i = 0; i < ps->n; i++) {
		struct rp_result_peek pk;
		uint32_t s = pair_eps[2 * i], d = pair_eps[2 * i + 1];

		if (s == d || (s < d ? s : d) < lo || (s < d ? s : d) >= hi)
			continue;
		rp_result_seq_peek(ps, i, &pk);
		if (pk.msg_size != k->msg_size)
			continue;
		/* ... and, once all are in, where they end */
		e[end[s < d ? s : d]++] = (struct rev_ent){ s < d ? d : s, (uint32_t)(i << 1) | (s > d),
							    rp_pk_bw_judged(&pk) && pk.gbps > 0 ? pk.gbps : -1 };
	}
	rn->n = rn->at = 0;
	for (size_t b = lo, from = 0; b < hi && b < n_eps && !rc; from = end[b++]) {
		for (size_t j = from; j < end[b]; j++) {
			double *f = &first[2 * e[j].hi + (e[j].idx_dir & 1)];

			if (*f < 0)
				*f = e[j].gbps;
		}
		for (size_t j = from; j < end[b] && !rc; j++)
			rc = rev_note(rn, e[j].idx_dir, e[j].gbps, first[2 * e[j].hi + !(e[j].idx_dir & 1)]);
		for (size_t j = from; j < end[b]; j++)
			first[2 * e[j].hi] = first[2 * e[j].hi + 1] = -1;
	}
	free(first);
	free(end);
	free(e);
	return rc;
}

static void *part_run(void *arg)
{
	struct rates_part *p = arg;

	p->rc = p->side >= 0 ? medians_side(p->pair_eps, p->ps, p->k, p->side, p->lo, p->hi, p->med)
			     : reverse_fill(p->pair_eps, p->ps, p->k, p->lo, p->hi, &p->rn);
	return NULL;
}

/* Both parts: the first on a thread of its own when the sequence's reads may run at once (an array,
 * or a peek: they only read) and this process may run on two CPUs, else one after the other. The
 * outcome is the same either way. */
static void parts_run(const struct rp_result_seq *ps, struct rates_part *a, struct rates_part *b)
{
	pthread_t t;
	bool two = rp_verdict_two_threads(ps) && pthread_create(&t, NULL, part_run, a) == 0;

	if (!two)
		part_run(a);
	part_run(b);
	if (two)
		pthread_join(t, NULL);
}

bool rp_verdict_two_threads(const struct rp_result_seq *ps)
{
	cpu_set_t cpus;

	return (ps->arr || ps->peek) && sched_getaffinity(0, sizeof(cpus), &cpus) == 0 && CPU_COUNT(&cpus) > 1;
}

/* The parts' notes as one list, in pair order. 0 or -ENOMEM (rn empty). */
static int notes_join(struct rates_part *parts, size_t n_parts, struct rp_rev_notes *rn)
{
	size_t n = 0, at = 0;

	rp_rev_notes_fini(rn);
	for (size_t q = 0; q < n_parts; q++)
		n += parts[q].rn.n;
	if (!n)
		return 0;
	rn->v = malloc(n * sizeof(*rn->v));
	if (!rn->v)
		return rp_error(-ENOMEM, "verdict: allocate %zu reverse-direction notes", n);
	for (size_t q = 0; q < n_parts; q++) {
		if (parts[q].rn.n)
			memcpy(rn->v + at, parts[q].rn.v, parts[q].rn.n * sizeof(*rn->v));
		at += parts[q].rn.n;
	}
	rn->n = rn->cap = n;
	qsort(rn->v, rn->n, sizeof(*rn->v), note_cmp);
	return 0;
}

/* Endpoint bounds b[0] = 0 <= ... <= b[parts] = n_eps that split cnt[0..n_eps) (pairs per endpoint) in
 * `parts` shares of about the same number of pairs. */
static void split(const size_t *cnt, size_t n_eps, size_t parts, uint32_t *b)
{
	size_t total = 0, acc = 0, e = 0;

	for (size_t x = 0; x < n_eps; x++)
		total += cnt[x];
	b[0] = 0;
	for (size_t q = 1; q < parts; q++) {
		while (e < n_eps && acc * parts < total * q)
			acc += cnt[e++];
		b[q] = (uint32_t)e;
	}
	b[parts] = (uint32_t)n_eps;
}

/* The parts a read is split in whose entries (cnt[0..n_eps) per endpoint, ent_bytes each) are to fit
 * part_bytes a part: an even number, two at least, not more than the endpoints (rounded up to even). */
static size_t parts_for(const size_t *cnt, size_t n_eps, size_t ent_bytes, size_t part_bytes)
{
	size_t total = 0, p;

	for (size_t x = 0; x < n_eps; x++)
		total += cnt[x];
	p = part_bytes ? (total * ent_bytes + part_bytes - 1) / part_bytes : 2;
	p = p > n_eps ? n_eps : p;    /* a part per endpoint at most */
	return p < 2 ? 2 : p + (p & 1);
}

/* The parts p[0..n) (n even), two at a time. 0 or the first error. */
static int parts_run_all(const struct rp_result_seq *ps, struct rates_part *p, size_t n)
{
	for (size_t q = 0; q < n; q += 2) {
		parts_run(ps, &p[q], &p[q + 1]);
		if (p[q].rc || p[q + 1].rc)
			return p[q].rc ? p[q].rc : p[q + 1].rc;
	}
	return 0;
}

/* One side's medians (side 0, 1: into out) or the reverse notes (side -1: into rev), in parts of at
 * most part_bytes of scratch each. 0, -EOVERFLOW or -ENOMEM. */
static int rates_in_parts(const uint32_t *pair_eps, const struct rp_result_seq *ps, const struct rp_rate_count *k,
			  int side, double *out, struct rp_rev_notes *rev, size_t part_bytes)
{
	const size_t *cnt = side >= 0 ? k->med + (size_t)side * (k->n_eps + 1) + 1 : k->rev + 1;
	size_t n = parts_for(cnt, k->n_eps, side >= 0 ? sizeof(double) : sizeof(struct rev_ent), part_bytes);
	struct rates_part *p = calloc(n, sizeof(*p));
	uint32_t *b = malloc((n + 1) * sizeof(*b));
	int rc = 0;

	if (!p || !b) {
		free(p);
		free(b);
		return rp_error(-ENOMEM, "verdict: allocate %zu parts", n);
	}
	split(cnt, k->n_eps, n, b);
	for (size_t q = 0; q < n; q++)
		p[q] = (struct rates_part){ pair_eps, ps, k, side, out, b[q], b[q + 1], { 0 }, 0 };
	rc = parts_run_all(ps, p, n);
	if (!rc && side < 0)
		rc = notes_join(p, n, rev);
	for (size_t q = 0; q < n; q++)
		rp_rev_notes_fini(&p[q].rn);
	free(p);
	free(b);
	return rc;
}

int rp_rates_build_parts(const uint32_t *pair_eps, const struct rp_result_seq *ps, size_t n_eps, size_t msg_size,
			 const struct rp_rate_count *counted, double *row, double *col, struct rp_rev_notes *rev,
			 size_t part_bytes)
{
	struct rp_rate_count own = { 0 };
	const struct rp_rate_count *k = counted;
	int rc = 0;

	if (!k || k->msg_size != msg_size || k->n_eps != n_eps) {
		struct rp_result_peek pk;

		rc = rp_rate_count_init(&own, n_eps, msg_size);
		for (size_t i = 0; i < ps->n && !rc; i++) {
			rp_result_seq_peek(ps, i, &pk);
			rp_rate_count_pair(&own, pair_eps, i, &pk);
		}
		k = &own;
	}
	if (!rc)
		rc = rates_in_parts(pair_eps, ps, k, 0, row, NULL, part_bytes);
	if (!rc)
		rc = rates_in_parts(pair_eps, ps, k, 1, col, NULL, part_bytes);
	if (!rc)
		rc = rates_in_parts(pair_eps, ps, k, -1, NULL, rev, part_bytes);
	rp_rate_count_fini(&own);
	return rc;
}

int rp_rates_build(const uint32_t *pair_eps, const struct rp_result_seq *ps, size_t n_eps, size_t msg_size,
		   const struct rp_rate_count *counted, double *row, double *col, struct rp_rev_notes *rev)
{
	return rp_rates_build_parts(pair_eps, ps, n_eps, msg_size, counted, row, col, rev, RP_RATES_PART_BYTES);
}
