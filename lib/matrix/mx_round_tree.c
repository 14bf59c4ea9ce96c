/* mx_round_tree.c: a round's reports up the tree of lib/job/mx_tree.h and its go down it, with rank 0's
 * direct ask for the reports the tree did not bring; see mx_round.h. */
#include "matrix/mx_round_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/stop.h"
#include "base/util.h"

/* What a rank gathers of its subtree in a round (rank 0: of every rank). */
struct gather {
	struct mx_ctx *c;
	const struct mx_job *jobs;
	size_t n_jobs;
	struct mx_tree_view v;
	uint32_t *sides;              /* per rank: the most records it sends this round */
	bool *in;                     /* per rank: its sides are in */
	int lo, hi;                   /* the positions gathered: lo < p < hi (this rank's subtree but itself) */
	int need, got;                /* ranks in (lo, hi); those in */
	int kids[MX_TREE_MAX_KIDS];
	bool kid_in[MX_TREE_MAX_KIDS];
	size_t n_kids, n_kids_in;
	size_t max_len;               /* the longest report a child's subtree can send */
	struct mx_got *slots;         /* rank 0: where the sides go */
	uint8_t *rec;                 /* the others: the sides to forward, rank by rank, as REPORT records */
	size_t rec_len, cap_rec;      /* their bytes */
	size_t n_rec;
	struct mx_wire_rank *rk;
	size_t n_rk, cap_rk;
};

/* How long rank 0 waits for the ranks it asks directly. */
static double ask_window(const struct mx_ctx *c)
{
	return (c->go_slack > 0 ? c->go_slack : 10) / 2;
}

/* How much earlier than its parent a rank forwards what it has (per hop to rank 0). */
static double hop_margin(const struct mx_ctx *c)
{
	return c->round_wait_s / 64 < 0.25 ? c->round_wait_s / 64 : 0.25;
}

static int owner_of(const struct mx_ctx *c, uint32_t ep)
{
	int o = c->eps[ep].owner;

	return o >= 0 && o < c->n_ranks ? o : -1;
}

/* sides[r]: one record per asked-for direction of every job rank r drives an endpoint of. */
static void sides_count(struct gather *g)
{
	for (size_t i = 0; i < g->n_jobs; i++) {
		int oa = owner_of(g->c, g->jobs[i].a), ob = owner_of(g->c, g->jobs[i].b);

		for (int d = 0; d < 2; d++) {
			if (!(g->jobs[i].dirs & (1u << d)))
				continue;
			if (oa >= 0)
				g->sides[oa]++;
			if (ob >= 0 && ob != oa)
				g->sides[ob]++;
		}
	}
}

/* The longest report of the subtree at position p: every rank in it with every side it drives. */
static size_t subtree_bound(const struct gather *g, int p)
{
	int span = mx_tree_span(p, g->v.n);
	size_t n_rec = 0;

	for (int q = p; q < p + span; q++)
		n_rec += g->sides[g->v.rank[q]];
	return mx_report_len(n_rec, (size_t)span);
}

static void gather_fini(struct gather *g)
{
	mx_tree_view_fini(&g->v);
	free(g->sides);
	free(g->in);
	free(g->rec);
	free(g->rk);
}

static int gather_init(struct gather *g, struct mx_ctx *c, const struct mx_job *jobs, size_t n_jobs)
{
	int me;

	memset(g, 0, sizeof(*g));
	g->c = c;
	g->jobs = jobs;
	g->n_jobs = n_jobs;
	g->sides = calloc((size_t)c->n_ranks, sizeof(*g->sides));
	g->in = calloc((size_t)c->n_ranks, sizeof(*g->in));
	if (!g->sides || !g->in || mx_tree_view_build(&g->v, c->dead, c->n_ranks) != 0) {
		gather_fini(g);
		return -ENOMEM;
	}
	sides_count(g);
	me = g->v.pos[c->rank];
	g->lo = me;
	g->hi = me >= 0 ? me + mx_tree_span(me, g->v.n) : me;
	g->need = me >= 0 ? g->hi - g->lo - 1 : 0;
	g->n_kids = mx_tree_view_children(&g->v, c->rank, g->kids, MX_TREE_MAX_KIDS);
	for (size_t k = 0; k < g->n_kids; k++) {
		size_t b = subtree_bound(g, g->v.pos[g->kids[k]]);

		g->max_len = b > g->max_len ? b : g->max_len;
	}
	return 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Rank 0: one record into its slot. 0, -EPROTO (no status in packed bytes: never, the report was
 * checked) or -ENOMEM. */
static int side_take(struct mx_got *got, const struct mx_wire_side *w)
{
	struct mx_wire_plain wp;

	/* a plain side's 144 bytes, or its packed bytes as they came: report_check checked them, or this
	 * rank wrote them (mx_side_write: plain only what mx_side_plain takes); not checked again */
	if (w->len == MX_SIDE_BRIEF) {
		double elapsed_s;

		(void)mx_side_brief(w, &elapsed_s);
		return mx_got_side_brief(got, (size_t)w->idx * 2 + w->dir, elapsed_s, w->writer != 0);
	}
	if (w->len == 0) {
		mx_side_plain_get(w, &wp);
		return mx_got_side_plain(got, (size_t)w->idx * 2 + w->dir, &wp, w->writer != 0);
	}
	return mx_got_side_packed(got, (size_t)w->idx * 2 + w->dir, (const uint8_t *)(w + 1), w->len, w->writer != 0);
}

/* One rank's sides (n_rec records in bytes[0..len)) into the gather: rank 0's slots, or the
 * aggregate to forward. 0 or -ENOMEM. */
static int gather_add(struct gather *g, const struct mx_wire_rank *rk, const uint8_t *bytes, size_t len)
{
	int sig = rk->stop_sig > 0 && rk->stop_sig < 128 ? rk->stop_sig : 0;

	if (g->slots) {
		for (size_t off = 0; off < len;) {
			const struct mx_wire_side *w = (const void *)(bytes + off);

			if (side_take(g->slots, w) != 0)
				return -ENOMEM;
			off += mx_side_size(w->len);
		}
		if (sig && !g->c->stop_sig)
			g->c->stop_sig = sig;
		return 0;
	}
	if (grow((void **)&g->rec, &g->cap_rec, g->rec_len + len, 1) ||
	    grow((void **)&g->rk, &g->cap_rk, g->n_rk + 1, sizeof(*g->rk)))
		return -ENOMEM;
	if (len)
		memcpy(g->rec + g->rec_len, bytes, len);
	g->rec_len += len;
	g->n_rec += rk->n_rec;
	g->rk[g->n_rk++] = (struct mx_wire_rank){ .rank = rk->rank, .n_rec = rk->n_rec, .stop_sig = sig };
	return 0;
}

/* The bytes of the next n records from p (a report that passed mx_report_ok). */
static size_t recs_span(const uint8_t *p, uint32_t n)
{
	size_t off = 0;

	for (uint32_t j = 0; j < n; j++)
		off += mx_side_size(((const struct mx_wire_side *)(const void *)(p + off))->len);
	return off;
}

/* One received side as its reader takes it: a brief pass in a brief round with a time in range, a
 * plain side's record in range, a packed one's result unpacked (into *r) and in range; each naming an
 * asked-for direction of the round. NULL when so. */
static const char *side_check(const struct gather *g, const struct mx_wire_side *w, struct rp_pair_result *r)
{
	struct mx_wire_plain wp;
	double elapsed_s;

	if (w->len == MX_SIDE_BRIEF)
		return !g->c->brief ? "a brief pass in a round that keeps its passes"
		       : !mx_side_brief(w, &elapsed_s) ? "a brief pass whose time is out of range"
		       : !mx_side_job_ok(w, g->jobs, g->n_jobs) ? "a side its rank does not drive" : NULL;
	if (w->len == 0)
		return !mx_side_plain(w, &wp) ? "a plain side out of range"
		       : !mx_side_job_ok(w, g->jobs, g->n_jobs) ? "a side its rank does not drive" : NULL;
	if (mx_side_read(w, r) != 0)
		return "a side whose result does not unpack";
	return mx_side_ok(w, r, g->jobs, g->n_jobs) ? NULL : "a side its rank does not drive";
}

/* Does every rank a report names belong to this rank's subtree, with no more records than it
 * drives sides, each a side of its own? NULL when so, else what is wrong. */
static const char *report_check(const struct gather *g, const void *buf)
{
	const struct mx_hdr *h = buf;
	const struct mx_wire_rank *rk = mx_report_ranks(buf);
	const uint8_t *p = mx_report_recs(buf);
	struct rp_pair_result r;

	for (uint32_t i = 0; i < h->n_ranks; i++) {
		int rank = rk[i].rank, pos = rank > 0 && rank < g->c->n_ranks ? g->v.pos[rank] : -1;

		if (pos <= g->lo || pos >= g->hi)
			return "a rank outside the subtree it reports for";
		if (rk[i].n_rec > g->sides[rank])
			return "more sides than a rank drives";
		for (uint32_t j = 0; j < rk[i].n_rec; j++) {
			const struct mx_wire_side *w = (const void *)p;
			const char *why = side_check(g, w, &r);

			if (why)
				return why;
			if (owner_of(g->c, g->jobs[w->idx].a) != rank && owner_of(g->c, g->jobs[w->idx].b) != rank)
				return "a side its rank does not drive";
			p += mx_side_size(w->len);
		}
	}
	return NULL;
}

/* One of rank 0's own sides, checked as a REPORT's would be when the measure asks for it
 * (mx_measure.check_own_sides). 0, or -EPROTO (never: this rank wrote it). */
static int own_side_check(const struct gather *g, const struct mx_wire_side *w)
{
	struct rp_pair_result r;

	if (!g->c->measure || !g->c->measure->check_own_sides)
		return 0;
	return side_check(g, w, &r) ? -EPROTO : 0;
}

/* Take one received report (src's) whole, or not at all. 0 or -ENOMEM. */
static int gather_take(struct gather *g, size_t round, const void *buf, size_t len, int src)
{
	const struct mx_hdr *h = buf;
	const char *why = mx_report_ok(buf, len) ? (h->rank == src ? report_check(g, buf) : "another rank's name")
						  : "a malformed message";
	const struct mx_wire_rank *rk;
	const uint8_t *rec;

	if (why) {
		rp_warn("matrix: rank %d: the round %zu report from rank %d (%zu bytes) names %s: ignored", g->c->rank,
			round + 1, src, len, why);
		return 0;
	}
	rk = mx_report_ranks(buf);
	rec = mx_report_recs(buf);
	for (uint32_t i = 0; i < h->n_ranks; i++) {
		size_t span = recs_span(rec, rk[i].n_rec);

		if (!g->in[rk[i].rank]) {    /* else a second copy: the tree and the ask both brought it */
			if (gather_add(g, &rk[i], rec, span) != 0)
				return -ENOMEM;
			g->in[rk[i].rank] = true;
			g->got++;
		}
		rec += span;
	}
	for (size_t k = 0; k < g->n_kids; k++) {
		if (g->kids[k] == src && !g->kid_in[k]) {
			g->kid_in[k] = true;
			g->n_kids_in++;
		}
	}
	return 0;
}

/* Take reports until every rank of the subtree is in (or, kids_only, every child sent its own) or
 * the deadline; rank 0 writes the files at once when a stop arrives meanwhile. */
static int gather_loop(struct gather *g, size_t round, double deadline, bool kids_only)
{
	struct mx_ctx *c = g->c;
	bool flushed = false;

	while (g->got < g->need && !(kids_only && g->n_kids_in == g->n_kids)) {
		void *buf = NULL;
		size_t len = 0;
		int src = -1, rc;
		double until = rp_now() + 0.25;

		rc = mx_comm_recv_max(c->comm, -1, MX_TAG_REPORT, (uint32_t)round, g->max_len, &buf, &len, &src,
				      until < deadline ? until : deadline);
		if (rc == -ETIMEDOUT) {
			if (c->flush && !flushed && rp_stop_requested()) {
				c->flush(c->flush_arg);
				flushed = true;
			}
			if (rp_now() < deadline)
				continue;
			return 0;
		}
		if (rc == -EMSGSIZE) {
			rp_warn("matrix: rank %d: rank %d sent a round %zu report of %zu bytes, more than the %zu its subtree "
				"can fill: refused", c->rank, src, round + 1, len, g->max_len);
			continue;
		}
		if (rc)
			return rc;
		rc = gather_take(g, round, buf, len, src);
		free(buf);
		if (rc)
			return rc;
	}
	return 0;
}

/* --- rank 0 ------------------------------------------------------------------------------------- */

/* Rank 0's go of round (or its ask: kind): the dead ranks and the stop signal. malloc'd, NULL when
 * out of memory. */
static char *go_build(const struct mx_ctx *c, enum mx_kind kind, size_t round, int stop_sig, size_t *len_p)
{
	size_t n_dead = 0, len;
	char *buf;
	int32_t *dead;

	for (int r = 0; r < c->n_ranks; r++)
		n_dead += c->dead[r];
	len = sizeof(struct mx_hdr) + n_dead * sizeof(int32_t);
	buf = calloc(1, len);
	if (!buf)
		return NULL;
	mx_hdr_init((struct mx_hdr *)buf, kind, 0, round, n_dead, sizeof(int32_t));
	((struct mx_hdr *)buf)->status = stop_sig;
	dead = (int32_t *)(buf + sizeof(struct mx_hdr));
	for (int r = 0, k = 0; r < c->n_ranks; r++)
		if (c->dead[r])
			dead[k++] = r;
	*len_p = len;
	return buf;
}


/* Rank 0: ask every rank whose report the tree did not bring to send it directly, and take the
 * answers (and anything the tree still brings) until the ask's window closes. */
static int ask_missing(struct gather *g, size_t round)
{
	struct mx_ctx *c = g->c;
	double until = rp_now() + ask_window(c);
	size_t len = 0;
	char *ask = go_build(c, MX_KIND_ASK, round, 0, &len);   /* the previous go said go on */
	int asked = 0;

	if (!ask)
		return -ENOMEM;
	for (int p = 1; p < g->v.n; p++) {
		int r = g->v.rank[p];

		if (g->in[r])
			continue;
		asked++;
		if (mx_comm_send(c->comm, r, MX_TAG_ASK, MX_ASK_ROUND, ask, len, until) != 0)
			rp_debug("matrix: the ask for round %zu did not reach rank %d", round + 1, r);
	}
	free(ask);
	rp_warn("matrix: %d %s round %zu report%s did not come up the tree by the round's deadline: asked "
		"directly, %.3g s to answer", asked, asked == 1 ? "rank's" : "ranks'", round + 1, asked == 1 ? "" : "s",
		ask_window(c));
	return gather_loop(g, round, until, false);
}

int mx_tree_collect(struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n_jobs,
		    const struct mx_task *tasks, size_t n_tasks, double start, struct mx_got *got)
{
	struct gather g;
	int rc = gather_init(&g, c, jobs, n_jobs);

	if (rc)
		return rc;
	g.slots = got;
	g.in[0] = true;
	for (size_t k = 0; !rc && k < n_tasks; k++)
		for (int d = 0; !rc && d < 2; d++) {
			const struct mx_wire_side *w = (const void *)tasks[k].side[d];

			if (!tasks[k].have[d])
				continue;
			rc = w ? own_side_check(&g, w) : -ENOMEM;
			rc = rc ? rc : side_take(got, w);
		}
	if (!rc)
		rc = gather_loop(&g, round, start + c->round_wait_s, true);
	if (!rc && g.got < g.need)
		rc = ask_missing(&g, round);
	for (int p = 1; !rc && p < g.v.n; p++) {
		int r = g.v.rank[p];

		if (!g.in[r]) {
			rp_warn("matrix: rank %d sent no report for round %zu, through the tree or asked directly: its pairs "
				"are lost from now on", r, round + 1);
			c->dead[r] = true;
		}
	}
	gather_fini(&g);
	return rc;
}

/* --- down the tree -------------------------------------------------------------------------------- */

static void bcast_from(struct mx_ctx *c, const struct mx_tree_view *v, int from, int tag, size_t round,
		       const void *buf, size_t len)
{
	int kids[MX_TREE_MAX_KIDS];
	size_t n = mx_tree_view_children(v, from, kids, MX_TREE_MAX_KIDS);

	for (size_t k = 0; k < n; k++) {
		if (mx_comm_send(c->comm, kids[k], tag, (uint32_t)round, buf, len, rp_now() + 5) == 0)
			continue;
		rp_warn("matrix: rank %d: round %zu's %s did not reach rank %d: sent to its children instead", c->rank,
			round + 1, tag == MX_TAG_GO ? "go" : "retest plan", kids[k]);
		bcast_from(c, v, kids[k], tag, round, buf, len);
	}
}

void mx_tree_bcast_now(struct mx_ctx *c, int tag, size_t round, const void *buf, size_t len)
{
	struct mx_tree_view v = { 0 };

	if (mx_tree_view_build(&v, c->dead, c->n_ranks) != 0) {
		rp_error(-ENOMEM, "matrix: rank %d: the tree for round %zu: out of memory", c->rank, round + 1);
		return;
	}
	bcast_from(c, &v, c->rank, tag, round, buf, len);
	mx_tree_view_fini(&v);
}

void mx_tree_go(struct mx_ctx *c, size_t round)
{
	size_t len = 0;
	char *buf = go_build(c, MX_KIND_GO, round, c->stop_sig, &len);

	if (!buf)
		return;               /* the ranks time out waiting and stop: rank 0 is out of memory */
	mx_tree_bcast_now(c, MX_TAG_GO, round, buf, len);
	free(buf);
}

/* --- the other ranks ------------------------------------------------------------------------------ */

/* A REPORT of the n_rec records in rec[0..rec_len) by ranks rk[0..n_rk), malloc'd into *buf_p. */
static int report_pack(const struct mx_ctx *c, size_t round, const uint8_t *rec, size_t rec_len, size_t n_rec,
		       const struct mx_wire_rank *rk, size_t n_rk, char **buf_p, size_t *len_p)
{
	size_t len = sizeof(struct mx_hdr) + rec_len + n_rk * sizeof(*rk);
	char *buf = malloc(len);
	struct mx_hdr *h = (struct mx_hdr *)buf;

	if (!buf)
		return -ENOMEM;
	mx_hdr_init(h, MX_KIND_REPORT, c->rank, round, n_rec, 0);
	h->n_ranks = (uint32_t)n_rk;
	h->length = (uint32_t)len;
	if (rec_len)
		memcpy(buf + sizeof(*h), rec, rec_len);
	memcpy(buf + sizeof(*h) + rec_len, rk, n_rk * sizeof(*rk));
	*buf_p = buf;
	*len_p = len;
	return 0;
}

/* This rank's own sides as the first entry of the aggregate. */
static int own_add(struct gather *g, const struct mx_task *tasks, size_t n_tasks)
{
	const struct mx_ctx *c = g->c;
	struct mx_wire_rank me = { .rank = c->rank, .stop_sig = c->stop_sig ? c->stop_sig : rp_stop_signal() };
	size_t len = 0, off = 0;
	uint8_t *rec;
	int rc;

	for (size_t i = 0; i < n_tasks; i++)
		for (int d = 0; d < 2; d++)
			if (tasks[i].have[d]) {
				if (!tasks[i].side[d])
					return -ENOMEM;
				len += tasks[i].side_len[d];
				me.n_rec++;
			}
	rec = malloc(len ? len : 1);
	if (!rec)
		return -ENOMEM;
	for (size_t i = 0; i < n_tasks; i++)
		for (int d = 0; d < 2; d++)
			if (tasks[i].have[d]) {
				memcpy(rec + off, tasks[i].side[d], tasks[i].side_len[d]);
				off += tasks[i].side_len[d];
			}
	rc = gather_add(g, &me, rec, len);
	free(rec);
	return rc;
}

/* Rank 0's dead ranks and stop signal from a go or an ask. */
static void dead_apply(struct mx_ctx *c, const struct mx_hdr *h)
{
	const int32_t *dead = (const void *)(h + 1);

	for (uint32_t i = 0; i < h->n; i++)
		if (dead[i] > 0 && dead[i] < c->n_ranks)
			c->dead[dead[i]] = true;
	if (h->status > 0 && h->status < 128)
		c->stop_sig = h->status;
}

/* Apply rank 0's go and pass it on down the tree. MX_GO_ON, MX_STOPPED, -ECANCELED. */
static int go_apply(struct mx_ctx *c, size_t round, const void *buf, size_t len)
{
	dead_apply(c, buf);
	mx_tree_bcast_now(c, MX_TAG_GO, round, buf, len);
	if (c->dead[c->rank])
		return -ECANCELED;
	return c->stop_sig ? MX_STOPPED : MX_GO_ON;
}

/* Rank 0's asks that came while waiting for the go of round: answer one of this round with mine; one
 * of the next round is this round's go (the parent that was to pass it on stopped answering). 1
 * when it was, else 0. */
static int asks_take(struct mx_ctx *c, size_t round, const char *mine, size_t mine_len, size_t max)
{
	for (;;) {
		void *buf = NULL;
		size_t len = 0;
		int src = -1, rc = mx_comm_recv_max(c->comm, 0, MX_TAG_ASK, MX_ASK_ROUND, max, &buf, &len, &src, rp_now());
		const struct mx_hdr *h = buf;

		if (rc == -EMSGSIZE)
			continue;
		if (rc)
			return 0;
		if (!mx_msg_ok(buf, len, MX_KIND_ASK, sizeof(int32_t))) {
			rp_warn("matrix: rank %d: rank 0 sent a malformed ask (%zu bytes): ignored", c->rank, len);
		} else if (h->round == round) {
			if (mine && mx_comm_send(c->comm, 0, MX_TAG_REPORT, (uint32_t)round, mine, mine_len,
						 rp_now() + ask_window(c)) != 0)
				rp_debug("matrix: rank %d: the answer to rank 0's ask did not go out", c->rank);
		} else if (h->round == round + 1) {
			rp_warn("matrix: rank %d: the go of round %zu came only as rank 0's ask at the end of round %zu (the "
				"rank to pass it on stopped answering): round %zu is not measured here", c->rank, round + 1,
				round + 2, round + 2);
			dead_apply(c, h);
			c->late_round = round + 2;
			free(buf);
			return 1;
		}
		free(buf);                /* an earlier round's: stale */
	}
}

/* Wait for the go (from any rank: it is rank 0's wherever it comes from), answering rank 0's ask with
 * this rank's own report meanwhile. MX_GO_ON, MX_STOPPED, -ETIMEDOUT rank 0 is gone, -ECANCELED rank 0
 * counts this rank as dead. */
static int go_wait(struct mx_ctx *c, size_t round, const char *mine, size_t mine_len, double deadline)
{
	size_t max = sizeof(struct mx_hdr) + (size_t)c->n_ranks * sizeof(int32_t);

	for (;;) {
		void *buf = NULL;
		size_t len = 0;
		double until = rp_now() + 0.25;
		int src = -1, rc = mx_comm_recv_max(c->comm, -1, MX_TAG_GO, (uint32_t)round, max, &buf, &len, &src,
						    until < deadline ? until : deadline);

		if (rc == -ETIMEDOUT || rc == -EMSGSIZE) {
			if (rc == -EMSGSIZE)
				rp_warn("matrix: rank %d: rank %d sent a go for round %zu of %zu bytes, more than %d ranks fill: "
					"refused", c->rank, src, round + 1, len, c->n_ranks);
			if (asks_take(c, round, mine, mine_len, max))
				return c->dead[c->rank] ? -ECANCELED : c->stop_sig ? MX_STOPPED : MX_GO_ON;
			if (rc == -ETIMEDOUT && rp_now() >= deadline)
				return rc;
			continue;
		}
		if (rc)
			return rc;
		if (!mx_msg_ok(buf, len, MX_KIND_GO, sizeof(int32_t))) {
			rp_warn("matrix: rank %d: rank %d sent a malformed go for round %zu (%zu bytes): ignored", c->rank, src,
				round + 1, len);
			free(buf);
			continue;
		}
		rc = go_apply(c, round, buf, len);
		free(buf);
		return rc;
	}
}

int mx_tree_follow(struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n_jobs,
		   const struct mx_task *tasks, size_t n_tasks, double start)
{
	struct gather g;
	char *mine = NULL, *all = NULL;
	size_t mine_len = 0, all_len = 0;
	int parent, rc = gather_init(&g, c, jobs, n_jobs);

	if (rc)
		return rc;
	rc = own_add(&g, tasks, n_tasks);
	if (!rc)
		rc = report_pack(c, round, g.rec, g.rec_len, g.n_rec, g.rk, g.n_rk, &mine, &mine_len);
	if (!rc && c->late_round == round + 1) {
		/* rank 0 asked for this round before this rank began it: the answer, at once */
		c->late_round = 0;
		if (mx_comm_send(c->comm, 0, MX_TAG_REPORT, (uint32_t)round, mine, mine_len, rp_now() + ask_window(c)) != 0)
			rp_debug("matrix: rank %d: the answer to rank 0's ask did not go out", c->rank);
		gather_fini(&g);
		rc = go_wait(c, round, mine, mine_len, start + mx_ctx_go_wait(c));
		free(mine);
		return rc;
	}
	if (!rc && g.n_kids)
		rc = gather_loop(&g, round, start + c->round_wait_s - mx_tree_depth(g.v.pos[c->rank]) * hop_margin(c), true);
	if (!rc)
		rc = report_pack(c, round, g.rec, g.rec_len, g.n_rec, g.rk, g.n_rk, &all, &all_len);
	if (!rc) {
		parent = mx_tree_view_parent(&g.v, c->rank);
		if (mx_comm_send(c->comm, parent > 0 ? parent : 0, MX_TAG_REPORT, (uint32_t)round, all, all_len,
				 start + c->round_wait_s) != 0 && parent > 0 &&
		    mx_comm_send(c->comm, 0, MX_TAG_REPORT, (uint32_t)round, all, all_len,
				 start + c->round_wait_s + ask_window(c)) != 0)
			rp_debug("matrix: rank %d: its round %zu report reached neither rank %d nor rank 0", c->rank, round + 1,
				 parent);
	}
	free(all);
	gather_fini(&g);
	if (!rc)
		rc = go_wait(c, round, mine, mine_len, start + mx_ctx_go_wait(c));
	free(mine);
	return rc;
}
