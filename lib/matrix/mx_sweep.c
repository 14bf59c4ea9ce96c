/* mx_sweep.c: the reachability sweep's schedule and marks; see mx_sweep.h. The sweep's rounds
 * themselves run in mx_run_sweep.c. */
#include "matrix/mx_sweep.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/retest.h"
#include "base/util.h"

int mx_sweep_parse(const char *s, unsigned *width_p, bool *auto_p)
{
	uint64_t w;

	if (!s)
		return -EINVAL;
	if (strcmp(s, "auto") == 0 || strcmp(s, "off") == 0) {
		*width_p = s[0] == 'a' ? MX_SWEEP_AUTO_WIDTH : 0;
		*auto_p = s[0] == 'a';
		return 0;
	}
	if (rp_parse_u64(s, 0, MX_SWEEP_MAX_WIDTH, false, &w) != 0)
		return -EINVAL;
	*width_p = (unsigned)w;
	*auto_p = false;
	return 0;
}

size_t mx_sweep_n_rounds(const struct rp_sched *sched, unsigned width)
{
	size_t n = rp_sched_n_rounds(sched);

	return width ? (n + width - 1) / width : 0;
}

int mx_sweep_round_jobs(const struct rp_sched *sched, unsigned width, size_t k, struct rp_sched_pair *scratch,
			struct mx_job *jobs, size_t cap, size_t *n_p)
{
	size_t n_rounds = rp_sched_n_rounds(sched), max = rp_sched_max_round_pairs(sched), n = 0;

	*n_p = 0;
	if (!width || k >= mx_sweep_n_rounds(sched, width))
		return -EINVAL;
	for (size_t r = k * width; r < n_rounds && r < (k + 1) * width; r++) {
		size_t got = 0;

		if (rp_sched_round(sched, r, scratch, max, &got) != 0)
			return -EINVAL;
		if (n + 2 * got > cap)
			return -ENOBUFS;
		for (size_t i = 0; i < got; i++)
			for (uint32_t d = 1; d <= 2; d++)
				jobs[n++] = (struct mx_job){ .a = scratch[i].a, .b = scratch[i].b, .dirs = d };
	}
	*n_p = n;
	return 0;
}

double mx_sweep_cfg(const struct rp_engine_cfg *cfg, bool screen, struct rp_engine_cfg *out)
{
	*out = *cfg;
	out->meas.mode = RP_MODE_BW;
	out->meas.msg_size = cfg->meas.msg_size < MX_SWEEP_MSG_MAX ? cfg->meas.msg_size : MX_SWEEP_MSG_MAX;
	out->meas.iters = MX_SWEEP_ITERS;
	out->meas.warmup_iters = 0;
	out->meas.duration_s = 0;
	out->meas.bidir = 0;
	out->meas.verify = 1;
	if (out->meas.tx_depth > MX_SWEEP_ITERS)
		out->meas.tx_depth = MX_SWEEP_ITERS;
	if (out->meas.cq_mod > out->meas.tx_depth)
		out->meas.cq_mod = out->meas.tx_depth;
	out->meas.n_qps = 1;
	if (!screen || !(cfg->timeout_s > MX_SWEEP_SCREEN_TIMEOUT_S))
		return 0;
	out->timeout_s = MX_SWEEP_SCREEN_TIMEOUT_S;
	out->no_mtucheck = true;   /* pass 2 probes what failed, and finds a black hole there */
	return out->timeout_s;
}

void mx_small_write_cfg(struct rp_engine_cfg *cfg)
{
	struct rp_engine_cfg probe;

	mx_sweep_cfg(cfg, false, &probe);   /* a probe's (its deadline kept), then one small write */
	*cfg = probe;
	cfg->meas.msg_size = RP_ENGINE_MTUCHECK_SMALL;
	cfg->meas.iters = 1;
	cfg->meas.tx_depth = 1;
	cfg->meas.cq_mod = 1;
	cfg->no_mtucheck = true;
}

bool mx_sweep_inconclusive(enum rp_status st)
{
	return st == RP_ST_TIMEOUT || st == RP_ST_PEER_LOST;
}

size_t mx_sweep_pack(const struct mx_sweep *s, unsigned width, size_t n_eps, struct mx_job *jobs, uint32_t *round_of,
		     size_t *n_jobs, unsigned *count)
{
	unsigned *as_writer = count, *as_target = count + n_eps;
	size_t rounds = 0, n = 0, placed = 0;

	/* Round by round, greedily: a direction goes into the current round while its writer writes
	 * fewer than width probes and its target takes fewer than width there; the rest wait. */
	for (size_t i = 0; i < s->n; i++)
		for (int d = 0; d < 2; d++)
			if (s->marks[i].failed & ~(s->marks[i].dead | s->marks[i].flaky | s->marks[i].cleared) &
			    (1u << d)) {   /* not decided before pass 2 */
				jobs[n] = (struct mx_job){ .a = s->marks[i].a, .b = s->marks[i].b, .dirs = 1u << d,
							   .qp_timeout = RP_RETEST_NCCL_QP_TIMEOUT };
				round_of[n++] = UINT32_MAX;
			}
	for (uint32_t r = 0; placed < n; r++) {
		memset(count, 0, 2 * n_eps * sizeof(*count));
		for (size_t i = 0; i < n; i++) {
			uint32_t src = jobs[i].dirs == 1 ? jobs[i].a : jobs[i].b, dst = jobs[i].dirs == 1 ? jobs[i].b : jobs[i].a;

			if (round_of[i] != UINT32_MAX || as_writer[src] >= width || as_target[dst] >= width)
				continue;
			as_writer[src]++;
			as_target[dst]++;
			round_of[i] = r;
			placed++;
		}
		rounds = (size_t)r + 1;
	}
	*n_jobs = n;
	return rounds;
}

struct mx_sweep_mark *mx_sweep_mark(struct mx_sweep *s, uint32_t a, uint32_t b)
{
	struct mx_sweep_mark *m;

	if (s->n && s->marks[s->n - 1].a == a && s->marks[s->n - 1].b == b)
		return &s->marks[s->n - 1];
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct mx_sweep_mark *nm = realloc(s->marks, cap * sizeof(*nm));

		if (!nm)
			return NULL;
		s->marks = nm;
		s->cap = cap;
	}
	m = &s->marks[s->n++];
	*m = (struct mx_sweep_mark){ .a = a, .b = b, .res = { SIZE_MAX, SIZE_MAX }, .first = { SIZE_MAX, SIZE_MAX } };
	return m;
}

static int mark_cmp(const void *x, const void *y)
{
	const struct mx_sweep_mark *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

/* Where each a's marks begin (mx_sweep_find looks among a's few, not all of them: it is asked for
 * every job of every planned round on every rank). Without memory for it, find searches them all. */
static void by_a_build(struct mx_sweep *s)
{
	size_t len = s->n ? (size_t)s->marks[s->n - 1].a + 2 : 1;

	s->by_a_n = SIZE_MAX;
	if (len > s->by_a_len) {
		size_t *nb = realloc(s->by_a, len * sizeof(*nb));

		if (!nb)
			return;
		s->by_a = nb;
		s->by_a_len = len;
	}
	for (size_t a = 0, i = 0; a < s->by_a_len; a++) {
		while (i < s->n && s->marks[i].a < a)
			i++;
		s->by_a[a] = i;
	}
	s->by_a_n = s->n;
}

void mx_sweep_sort(struct mx_sweep *s)
{
	size_t o = 0;

	if (s->n > 1)
		qsort(s->marks, s->n, sizeof(*s->marks), mark_cmp);
	/* A pair a pattern scheduled twice (sample:K) has one mark: its bits together. */
	for (size_t i = 0; i < s->n; i++) {
		if (o && s->marks[o - 1].a == s->marks[i].a && s->marks[o - 1].b == s->marks[i].b) {
			struct mx_sweep_mark *m = &s->marks[o - 1];

			m->failed |= s->marks[i].failed;
			m->dead |= s->marks[i].dead;
			m->flaky |= s->marks[i].flaky;
			m->cleared |= s->marks[i].cleared;
			m->epdead |= s->marks[i].epdead;
			m->late |= s->marks[i].late;
			for (int d = 0; d < 2; d++) {
				if (m->res[d] == SIZE_MAX)
					m->res[d] = s->marks[i].res[d];
				if (m->first[d] == SIZE_MAX)
					m->first[d] = s->marks[i].first[d];
			}
			continue;
		}
		s->marks[o++] = s->marks[i];
	}
	s->n = o;
	by_a_build(s);
}

const struct mx_sweep_mark *mx_sweep_find(const struct mx_sweep *s, uint32_t a, uint32_t b)
{
	struct mx_sweep_mark key = { .a = a, .b = b };

	size_t from = 0, to = s->n;

	if (s->by_a && s->by_a_n == s->n) {   /* no mark added since the sort: a's own marks */
		from = (size_t)a + 1 < s->by_a_len ? s->by_a[a] : s->n;
		to = (size_t)a + 1 < s->by_a_len ? s->by_a[a + 1] : s->n;
	}
	return to > from ? bsearch(&key, s->marks + from, to - from, sizeof(*s->marks), mark_cmp) : NULL;
}

size_t mx_sweep_apply(const struct mx_sweep *s, struct mx_job *jobs, struct rp_sched_pair *pairs, size_t n,
		      bool left_failed)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		const struct mx_sweep_mark *m = mx_sweep_find(s, jobs[i].a, jobs[i].b);

		if (mx_sweep_ep_out(s, jobs[i].a) || mx_sweep_ep_out(s, jobs[i].b))
			jobs[i].dirs = 0;
		if (m) {
			jobs[i].dirs &= ~(m->dead | (left_failed ? m->failed : 0));
			if (m->flaky & jobs[i].dirs)
				jobs[i].qp_timeout = RP_RETEST_NCCL_QP_TIMEOUT;
		}
		if (!jobs[i].dirs)
			continue;
		jobs[o] = jobs[i];
		pairs[o] = pairs[i];
		o++;
	}
	return o;
}

size_t mx_sweep_late(const struct mx_sweep *s, size_t n_eps, struct mx_job *jobs, uint32_t *round_of,
		     size_t *n_jobs, uint64_t *scratch)
{
	/* in[e]: the rounds below 64 endpoint e is in; after[e]: 1 + the last round it is in */
	uint64_t *in = scratch, *after = scratch + n_eps;
	size_t n = 0, rounds = 0;

	memset(scratch, 0, 2 * n_eps * sizeof(*scratch));
	for (size_t i = 0; i < s->n; i++) {   /* marks are sorted: every rank would pack alike */
		const struct mx_sweep_mark *m = &s->marks[i];
		uint32_t dirs = (m->failed | m->late) & ~m->dead;
		uint64_t busy, r;

		if (!dirs || m->a >= n_eps || m->b >= n_eps)
			continue;
		busy = in[m->a] | in[m->b];
		if (~busy)
			r = (uint64_t)__builtin_ctzll(~busy);
		else
			r = after[m->a] > after[m->b] ? after[m->a] : after[m->b];
		jobs[n] = (struct mx_job){ .a = m->a, .b = m->b, .dirs = dirs,
					   .qp_timeout = (m->flaky & dirs) ? RP_RETEST_NCCL_QP_TIMEOUT : 0 };
		round_of[n++] = (uint32_t)r;
		if (r < 64) {
			in[m->a] |= 1ULL << r;
			in[m->b] |= 1ULL << r;
		}
		after[m->a] = r + 1 > after[m->a] ? r + 1 : after[m->a];
		after[m->b] = r + 1 > after[m->b] ? r + 1 : after[m->b];
		rounds = r + 1 > rounds ? r + 1 : rounds;
	}
	*n_jobs = n;
	return rounds;
}

int mx_sweep_ep_init(struct mx_sweep *s, size_t n_eps)
{
	s->ep = calloc(n_eps ? n_eps : 1, sizeof(*s->ep));
	s->ep_failed = calloc(n_eps ? n_eps : 1, sizeof(*s->ep_failed));
	s->n_eps = n_eps;
	if (s->ep && s->ep_failed)
		return 0;
	free(s->ep);
	free(s->ep_failed);
	s->ep = NULL;
	s->ep_failed = NULL;
	return -ENOMEM;
}

bool mx_sweep_ep_dead(const struct mx_sweep *s, uint32_t e)
{
	return s->ep && e < s->n_eps && (s->ep[e] & MX_EP_DEAD);
}

bool mx_sweep_ep_out(const struct mx_sweep *s, uint32_t e)
{
	return s->ep && e < s->n_eps && (s->ep[e] & (MX_EP_DEAD | MX_EP_OUT));
}

size_t mx_sweep_drop_dead(const struct mx_sweep *s, struct mx_job *jobs, size_t n)
{
	size_t o = 0;

	if (!s->n_ep_dead && !s->n_ep_out)
		return n;
	for (size_t i = 0; i < n; i++)
		if (!mx_sweep_ep_out(s, jobs[i].a) && !mx_sweep_ep_out(s, jobs[i].b))
			jobs[o++] = jobs[i];
	return o;
}

void mx_sweep_fini(struct mx_sweep *s)
{
	free(s->ep);
	free(s->ep_failed);
	free(s->marks);
	free(s->by_a);
	free(s->pending);
	memset(s, 0, sizeof(*s));
}
