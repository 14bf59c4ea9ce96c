/* verdict_rates.c: what the bandwidth rules compare a message size's pairs against: every endpoint's
 * medians of the rates it sends and receives, and every pair's other direction; see verdict_int.h. */
#include "verdict/verdict_int.h"

#include <errno.h>
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

/* Medians of the judged rates per endpoint: row[e] over the pairs e sends, col[e] over those it
 * receives, from k's counts (side 0 the senders', side 1 the receivers'). One pass places the rates. */
static int medians_fill(const uint32_t *pair_eps, const struct rp_result_seq *ps, const struct rp_rate_count *k,
			double *row, double *col)
{
	size_t n = ps->n, n_eps = k->n_eps;
	struct rp_result_peek pk;
	double *med[2] = { row, col };
	size_t *start = malloc(2 * (n_eps + 1) * sizeof(*start)), *fill = calloc(2 * (n_eps ? n_eps : 1), sizeof(*fill));
	double *vals = calloc(2 * (n ? n : 1), sizeof(*vals));

	if (!start || !fill || !vals) {
		free(start);
		free(fill);
		free(vals);
		return rp_error(-ENOMEM, "verdict: allocate medians for %zu pairs", n);
	}
	/* side j's endpoint e: its rates from vals[j * n + start[j * (n_eps + 1) + e]] */
	for (size_t j = 0; j < 2; j++) {
		start[j * (n_eps + 1)] = 0;
		for (size_t e = 0; e < n_eps; e++)
			start[j * (n_eps + 1) + e + 1] = start[j * (n_eps + 1) + e] + k->med[j * (n_eps + 1) + e + 1];
	}
	for (size_t i = 0; i < n; i++) {
		rp_result_seq_peek(ps, i, &pk);
		if (!rp_pk_bw_judged(&pk) || pk.msg_size != k->msg_size)
			continue;
		for (int j = 0; j < 2; j++) {
			size_t e = pair_eps[2 * i + j];

			vals[j * n + start[j * (n_eps + 1) + e] + fill[j * n_eps + e]++] = pk.gbps;
		}
	}
	for (int j = 0; j < 2; j++)
		for (size_t e = 0; e < n_eps; e++) {
			size_t from = start[j * (n_eps + 1) + e], m = start[j * (n_eps + 1) + e + 1] - from;

			med[j][e] = m == 0 ? 0 : median_of(vals + j * n + from, m);
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
			struct rp_rev_notes *rn)
{
	size_t n_eps = k->n_eps, *end;
	struct rev_ent *e;
	double *first;
	int rc = 0;

	if (ps->n > UINT32_MAX / 2)
		return rp_error(-EOVERFLOW, "verdict: %zu pairs, more than the reverse-direction rule indexes", ps->n);
	e = malloc((ps->n ? ps->n : 1) * sizeof(*e));
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
	for (size_t j = 1; j <= n_eps; j++)
		end[j] = end[j - 1] + k->rev[j];   /* end[j]: where endpoint j's entries begin */
	for (size_t i = 0; i < ps->n; i++) {
		struct rp_result_peek pk;
		uint32_t s = pair_eps[2 * i], d = pair_eps[2 * i + 1];

		if (s == d)
			continue;
		rp_result_seq_peek(ps, i, &pk);
		if (pk.msg_size != k->msg_size)
			continue;
		/* ... and, once all are in, where they end */
		e[end[s < d ? s : d]++] = (struct rev_ent){ s < d ? d : s, (uint32_t)(i << 1) | (s > d),
							    rp_pk_bw_judged(&pk) && pk.gbps > 0 ? pk.gbps : -1 };
	}
	rn->n = rn->at = 0;
	for (size_t b = 0, from = 0; b < n_eps && !rc; from = end[b++]) {
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
	if (!rc && rn->n)
		qsort(rn->v, rn->n, sizeof(*rn->v), note_cmp);
	free(first);
	free(end);
	free(e);
	return rc;
}

int rp_rates_build(const uint32_t *pair_eps, const struct rp_result_seq *ps, size_t n_eps, size_t msg_size,
		   const struct rp_rate_count *counted, double *row, double *col, struct rp_rev_notes *rev)
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
		rc = medians_fill(pair_eps, ps, k, row, col);
	if (!rc)
		rc = reverse_fill(pair_eps, ps, k, rev);
	rp_rate_count_fini(&own);
	return rc;
}
