/* mx_round.c: one round of the matrix on every rank, and the retest plan's distribution; see
 * mx_round.h. */
#include "matrix/mx_round_int.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/stop.h"
#include "base/util.h"
#include "matrix/mx_sweep.h"

/* Tags only spread the traffic (they wrap on long runs): the envelope's round and pair decide. But a
 * side takes the next message of its tag from its peer and drops one of another round or pair
 * (mx_comm.h), so two sides that run at once between the same two ranks must never share a tag.
 * Within a round they are told apart by the job's ordinal among the round's jobs between those two
 * ranks (struct mx_task.ord: both ranks count the same jobs in the same order), at most a few
 * thousand however large the fabric. Not its number in the round: a sweep round holds W x the
 * fabric's pairs, whose numbers wrap in a half of the tags past 256 endpoints where MPI gives its
 * minimum (32,767) and past 65,536 under Open MPI's UCX layer (2^23 - 1), and two probes between the
 * same ranks then took each other's messages and failed their screens. The sides of a started
 * round, which run beside later rounds, have a quarter of the tags to themselves, one quarter per
 * slot (MX_STARTED_SLOTS: one started round a slot at a time); every other round the lower half. */
static int pair_tag(const struct mx_ctx *c, size_t round, uint32_t ord, int dir, unsigned slot)
{
	uint64_t ub = (uint64_t)(c->comm->tag_ub > 0 ? c->comm->tag_ub : 32767), half = (ub + 1) / 2;
	uint64_t quarter = (ub + 1 - half) / MX_STARTED_SLOTS;
	uint64_t t = slot ? (uint64_t)ord * 2 + (uint64_t)dir
			  : ((uint64_t)round * (c->max_pairs ? c->max_pairs : 1) + ord) * 2 + (uint64_t)dir;

	return (int)(slot ? half + (slot - 1) * quarter + t % quarter : t % half);
}

static void port_of(const struct mx_ep *x, struct rp_engine_port *p)
{
	p->node = x->ep.node;
	p->device = x->ep.device;
	p->port = x->ep.port;
	p->gid_index = x->ep.gid_index;
}

/* One direction that is not measured: its outcome is known without the fabric. true when so. */
static bool dir_known(const struct mx_task *t, const struct mx_ep *S, const struct mx_ep *D, int peer,
		      struct rp_pair_result *r)
{
	const struct mx_ctx *c = t->ctx;
	const struct mx_ep *np = S->no_port[0] ? S : D->no_port[0] ? D : NULL;

	if (np) {
		rp_pair_result_init(r, &S->ep, &D->ep);
		rp_pair_result_fail(r, RP_ST_NO_PORT, "%s/%s: %s", np->ep.node, np->ep.device, np->no_port);
		return true;
	}
	if (rp_stop_requested()) {
		rp_pair_result_init(r, &S->ep, &D->ep);
		rp_pair_result_fail(r, RP_ST_INTERRUPTED, "not measured: stopped by signal %d", rp_stop_signal());
		return true;
	}
	if (peer >= 0 && !t->later && c->dead[peer]) {
		const struct mx_ep *x = S->owner == peer ? S : D;

		rp_pair_result_init(r, &S->ep, &D->ep);
		rp_pair_result_fail(r, RP_ST_PEER_LOST, "rank %d (driving %s/%s:%d) stopped answering before step %zu of the run",
				    peer, x->ep.node, x->ep.device, x->ep.port, t->round + 1);
		return true;
	}
	return false;
}

/* The hold of one side of direction src -> dst, armed for the round; NULL when none. */
static struct mx_hold_side *hold_side(const struct mx_ctx *c, uint32_t src, uint32_t dst, bool writer)
{
	struct mx_hold_dir *hd;

	if (!c->holds || c->holds->mode == MX_HOLD_OFF || !(hd = mx_holds_find(c->holds, src, dst)))
		return NULL;
	mx_hold_side_arm(c->holds, writer ? &hd->w : &hd->t);
	return writer ? &hd->w : &hd->t;
}

static void side_loopback(const struct mx_ctx *c, const struct rp_engine_cfg *cfg, const struct rp_engine_port *ps,
			  const struct rp_engine_port *pd, struct mx_hold_side *hw, struct mx_hold_side *ht,
			  struct rp_pair_result *r)
{
	if (c->measure && c->measure->loopback) {
		c->measure->loopback(c->measure->arg, cfg, ps, pd, hw, ht, r);
	} else {
		rp_engine_loopback_run_held(cfg, ps, pd, 0, hw ? &hw->eng : NULL, ht ? &ht->eng : NULL, r);
		if (hw)
			hw->held = hw->eng.ep != NULL;
		if (ht)
			ht->held = ht->eng.ep != NULL;
	}
	if (hw)
		mx_hold_side_done(c->holds, hw, true);
}

static void side_pair(const struct mx_ctx *c, const struct rp_engine_cfg *cfg, enum rp_engine_role role,
		      const struct rp_engine_port *local, struct rp_oob *oob, struct mx_hold_side *h,
		      struct rp_pair_result *r)
{
	if (c->measure && c->measure->pair) {
		c->measure->pair(c->measure->arg, cfg, role, local, oob, h, r);
	} else {
		rp_engine_pair_run_held(cfg, role, local, oob, 0, h ? &h->eng : NULL, r);
		if (h)
			h->held = h->eng.ep != NULL;
	}
	if (h)
		mx_hold_side_done(c->holds, h, role == RP_ROLE_WRITER);
}

/* The side's result as its REPORT record (mx_wire.h), so that a round's sides are held packed. */
static void task_keep(struct mx_task *t, int dir, bool writer, const struct rp_pair_result *r)
{
	uint8_t rec[MX_SIDE_MAX];
	size_t len = t->brief && r->status == RP_ST_OK
			     ? mx_side_write_brief(rec, (uint32_t)t->idx, (uint32_t)dir, writer, r->elapsed_s)
			     : mx_side_write(rec, (uint32_t)t->idx, (uint32_t)dir, writer, r);

	t->have[dir] = true;
	t->side[dir] = malloc(len);
	t->side_len[dir] = t->side[dir] ? len : 0;
	if (t->side[dir])
		memcpy(t->side[dir], rec, len);
}

/* A round this rank does not measure (mx_round.h: its go came late): every side it drives is lost. */
static void task_skip(struct mx_task *t)
{
	const struct mx_ctx *c = t->ctx;

	for (int dir = 0; dir < 2; dir++) {
		uint32_t src = dir ? t->job.b : t->job.a, dst = dir ? t->job.a : t->job.b;
		struct rp_pair_result r;

		if (!(t->job.dirs & (1u << dir)))
			continue;
		rp_pair_result_init(&r, &c->eps[src].ep, &c->eps[dst].ep);
		rp_pair_result_fail(&r, RP_ST_PEER_LOST, "not measured: rank %d got the go of step %zu of the run only at the "
				    "end of step %zu (the rank to pass it on stopped answering)", c->rank, t->round, t->round + 1);
		task_keep(t, dir, c->eps[src].owner == c->rank, &r);
	}
}

/* One direction of the job: this rank's side of it, kept as its record. */
static void dir_run(struct mx_task *t, const struct rp_engine_cfg *cfg, int dir)
{
	const struct mx_ctx *c = t->ctx;
	uint32_t src = dir ? t->job.b : t->job.a, dst = dir ? t->job.a : t->job.b;
	const struct mx_ep *S = &c->eps[src], *D = &c->eps[dst];
	bool writer = S->owner == c->rank, local = writer && D->owner == c->rank;
	int peer = local ? -1 : writer ? D->owner : S->owner;
	struct rp_engine_port ps, pd;
	struct rp_pair_result r;
	struct rp_oob oob;
	struct mx_addr addr = { .round = (uint32_t)t->round, .pair = (uint32_t)(t->idx * 2 + (size_t)dir) };

	if (dir_known(t, S, D, peer, &r)) {
		task_keep(t, dir, writer, &r);
		return;
	}
	port_of(S, &ps);
	port_of(D, &pd);
	if (local) {
		side_loopback(c, cfg, &ps, &pd, t->later ? NULL : hold_side(c, src, dst, true),
			      t->later ? NULL : hold_side(c, src, dst, false), &r);
	} else if (mx_comm_oob_open(c->comm, &oob, peer, pair_tag(c, t->round, t->ord, dir, t->slot), &addr) != 0) {
		rp_pair_result_init(&r, &S->ep, &D->ep);
		rp_pair_result_fail(&r, RP_ST_SETUP, "side channel to rank %d: out of memory", peer);
	} else {
		side_pair(c, cfg, writer ? RP_ROLE_WRITER : RP_ROLE_TARGET, writer ? &ps : &pd, &oob,
			  t->later ? NULL : hold_side(c, src, dst, writer), &r);
		rp_oob_close(&oob);
	}
	task_keep(t, dir, writer, &r);
}

/* The job's directions, this rank's side(s). */
static void *task_run(void *arg)
{
	struct mx_task *t = arg;
	struct rp_engine_cfg cfg = *t->cfg;

	if (t->job.qp_timeout > 0)
		cfg.qp.qp_timeout = t->job.qp_timeout;
	if (t->job.small)
		mx_small_write_cfg(&cfg);
	for (int dir = 0; dir < 2; dir++) {
		if (t->job.dirs & (1u << dir))
			dir_run(t, &cfg, dir);
	}
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void pause_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* (In the reasons, "step N of the run" counts every exchange: sweep, bandwidth, retest and late
 * rounds; the progress lines count the bandwidth rounds. Issue 26 item 17.) */

/* Wait for the round's threads; on rank 0, write the files at once when a stop arrives meanwhile
 * (mpirun follows its SIGTERM with a SIGKILL soon after). */
static void tasks_wait(const struct mx_ctx *c, struct mx_task *tasks, size_t n)
{
	bool flushed = false;

	for (size_t k = 0; k < n; k++) {
		while (tasks[k].threaded && !__atomic_load_n(&tasks[k].done, __ATOMIC_ACQUIRE)) {
			if (c->flush && !flushed && rp_stop_requested()) {
				c->flush(c->flush_arg);
				flushed = true;
			}
			pause_ms(10);
		}
		if (tasks[k].threaded)
			pthread_join(tasks[k].thread, NULL);
	}
}

/* Start this rank's sides of jobs[0..n_jobs) at cfg, all at once (slot: 0, a round's; 1 or 2, a
 * started round's, see struct mx_task). *tasks_p (malloc'd) and *n_p hold them. 0 or -ENOMEM. */
static int tasks_start(const struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n_jobs,
		       const struct rp_engine_cfg *cfg, unsigned slot, struct mx_task **tasks_p, size_t *n_p)
{
	bool later = slot != 0;
	struct mx_task *tasks = calloc(n_jobs ? n_jobs : 1, sizeof(*tasks));
	uint32_t *ord = calloc((size_t)(c->n_ranks > 0 ? c->n_ranks : 1), sizeof(*ord));   /* jobs with each rank so far */
	size_t n = 0;
	sigset_t stop_sigs, old;

	if (!tasks || !ord) {
		free(tasks);
		free(ord);
		return -ENOMEM;
	}
	/* a sweep round that holds: every direction this rank drives gets its entry before any thread
	 * runs (no memory for them: nothing is held, the probes run as always) */
	if (!later && c->holds && c->holds->mode == MX_HOLD_MAKE &&
	    mx_holds_make(c->holds, c->eps, c->rank, jobs, n_jobs) != 0)
		mx_holds_release(c->holds);
	/* The pair threads never take SIGINT/SIGTERM (no EINTR in the middle of a measurement): the main
	 * thread does, and the threads see the flag. */
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, &old);
	for (size_t i = 0; i < n_jobs; i++) {
		int oa = c->eps[jobs[i].a].owner, ob = c->eps[jobs[i].b].owner, peer = oa == c->rank ? ob : oa;

		if (oa != c->rank && ob != c->rank)
			continue;
		tasks[n] = (struct mx_task){ .ctx = c, .round = round, .idx = i, .job = jobs[i], .cfg = cfg,
					     .brief = c->brief && !later, .later = later, .slot = slot,
					     .ord = peer >= 0 && peer < c->n_ranks ? ord[peer]++ : 0 };
		if (c->late_round == round + 1) {
			task_skip(&tasks[n++]);
			continue;
		}
		tasks[n].threaded = !(c->measure && c->measure->inline_sides) &&
				    pthread_create(&tasks[n].thread, NULL, task_run, &tasks[n]) == 0;
		if (!tasks[n].threaded)
			task_run(&tasks[n]);        /* no thread to be had: run it here, still within deadlines */
		n++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(ord);
	*tasks_p = tasks;
	*n_p = n;
	return 0;
}

/* Run this rank's jobs of the round, all at once. *tasks_p (malloc'd) and *n_p hold the outcome. */
static int round_run(const struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n_jobs,
		     struct mx_task **tasks_p, size_t *n_p)
{
	int rc = tasks_start(c, round, jobs, n_jobs, c->cfg, 0, tasks_p, n_p);

	if (rc)
		return rc;
	if (c->between)
		c->between(c->between_arg);   /* rank 0's own work while its sides run (mx_run.h) */
	tasks_wait(c, *tasks_p, *n_p);
	return 0;
}

/* Rank 0: collect the round's reports (mx_tree_collect); ranks that sent none are dead from now on.
 * Every asked-for direction of every job ends up in got's slot 2*i+dir, the table's endpoints
 * merged in as the run reads it (mx_got_get). */
static int round_collect(struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n_jobs,
			 const struct mx_task *tasks, size_t n_tasks, double start, struct mx_got *got)
{
	struct rp_pair_result r;
	int rc;

	got->brief = c->brief;
	rc = mx_got_reset(got, 2 * n_jobs, c->eps, jobs);

	if (!rc)
		rc = mx_tree_collect(c, round, jobs, n_jobs, tasks, n_tasks, start, got);
	for (size_t k = 0; !rc && k < 2 * n_jobs; k++) {
		const struct mx_job *j = &jobs[k / 2];
		int d = (int)(k % 2);
		uint32_t src = d ? j->b : j->a, dst = d ? j->a : j->b;

		if (!(j->dirs & (1u << d)) || mx_got_have(got, k))
			continue;
		rp_pair_result_init(&r, &c->eps[src].ep, &c->eps[dst].ep);
		rp_pair_result_fail(&r, RP_ST_PEER_LOST, "no report from rank %d or rank %d for step %zu of the run",
				    c->eps[src].owner, c->eps[dst].owner, round + 1);
		rc = mx_got_set(got, k, &r, false);
	}
	return rc;
}

static void tasks_free(struct mx_task *tasks, size_t n)
{
	for (size_t k = 0; tasks && k < n; k++) {
		free(tasks[k].side[0]);
		free(tasks[k].side[1]);
	}
	free(tasks);
}

double mx_ctx_go_wait(const struct mx_ctx *c)
{
	return 2 * c->round_wait_s + (c->go_slack > 0 ? c->go_slack : 10);
}

/* After this rank's sides of the round ended: the reports up and the go down (rank 0 collects into
 * got); the tasks freed. */
static int round_end(struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n, struct mx_task *tasks,
		     size_t n_tasks, double start, struct mx_got *got)
{
	int rc;

	c->sides_end = rp_now();
	mx_round_spent_free(c);       /* a round whose go was never sent: not kept past the next one */
	if (c->rank != 0)
		rc = mx_tree_follow(c, round, jobs, n, tasks, n_tasks, start);
	else
		rc = round_collect(c, round, jobs, n, tasks, n_tasks, start, got);
	if (rc || c->rank != 0) {
		tasks_free(tasks, n_tasks);
		return rc;
	}
	if (!c->stop_sig && rp_stop_requested())
		c->stop_sig = rp_stop_signal();
	/* collected: freed once the go is out, the ranks waiting on nothing but rank 0's own work */
	c->spent = tasks;
	c->n_spent = n_tasks;
	if (!c->hold_go) {
		mx_tree_go(c, round);
		c->go_sent = rp_now();
		mx_round_spent_free(c);
	}
	return c->stop_sig ? MX_STOPPED : MX_GO_ON;
}

void mx_round_spent_free(struct mx_ctx *c)
{
	tasks_free(c->spent, c->n_spent);
	c->spent = NULL;
	c->n_spent = 0;
}

size_t mx_round_spent_bytes(const struct mx_ctx *c)
{
	size_t n = c->spent ? malloc_usable_size(c->spent) : 0;

	for (size_t k = 0; k < c->n_spent; k++)
		for (int d = 0; d < 2; d++)
			n += c->spent[k].side[d] ? malloc_usable_size(c->spent[k].side[d]) : 0;
	return n;
}

int mx_round(struct mx_ctx *c, size_t round, const struct mx_job *jobs, size_t n, struct mx_got *got)
{
	struct mx_task *tasks = NULL;
	size_t n_tasks = 0;
	double start = rp_now();
	int rc = round_run(c, round, jobs, n, &tasks, &n_tasks);

	return rc ? rc : round_end(c, round, jobs, n, tasks, n_tasks, start, got);
}

struct mx_started {
	struct rp_engine_cfg cfg;     /* the ctx's when it started: its sides' settings */
	const struct mx_job *jobs;
	size_t n;
	struct mx_task *tasks;
	size_t n_tasks;
};

int mx_round_start(struct mx_ctx *c, size_t side_round, unsigned slot, const struct mx_job *jobs, size_t n,
		   struct mx_started **st_p)
{
	struct mx_started *st;
	int rc;

	*st_p = NULL;
	if (slot < 1 || slot > MX_STARTED_SLOTS)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->cfg = *c->cfg;
	st->jobs = jobs;
	st->n = n;
	rc = tasks_start(c, side_round, jobs, n, &st->cfg, slot, &st->tasks, &st->n_tasks);
	if (rc) {
		free(st);
		return rc;
	}
	*st_p = st;
	return 0;
}

int mx_round_finish(struct mx_ctx *c, size_t round, struct mx_started *st, struct mx_got *got)
{
	struct mx_task *tasks = st->tasks;
	size_t n_tasks = st->n_tasks, n = st->n;
	const struct mx_job *jobs = st->jobs;

	tasks_wait(c, tasks, n_tasks);
	free(st);
	return round_end(c, round, jobs, n, tasks, n_tasks, rp_now(), got);
}

void mx_round_abandon(const struct mx_ctx *c, struct mx_started *st)
{
	if (!st)
		return;
	tasks_wait(c, st->tasks, st->n_tasks);
	tasks_free(st->tasks, st->n_tasks);
	free(st);
}

int mx_round_go(struct mx_ctx *c, size_t round)
{
	if (!c->stop_sig && rp_stop_requested())
		c->stop_sig = rp_stop_signal();
	mx_tree_go(c, round);
	c->go_sent = rp_now();
	mx_round_spent_free(c);
	return c->stop_sig ? MX_STOPPED : MX_GO_ON;
}

void mx_jobs_send(struct mx_ctx *c, size_t round, const struct mx_job *jobs, const uint32_t *round_of, size_t n)
{
	size_t len = sizeof(struct mx_hdr) + n * sizeof(struct mx_wire_job);
	char *buf = calloc(1, len);
	struct mx_wire_job *rec;

	if (!buf)
		return;        /* the ranks time out waiting and stop: rank 0 is out of memory */
	rec = (struct mx_wire_job *)(buf + sizeof(struct mx_hdr));
	mx_hdr_init((struct mx_hdr *)buf, MX_KIND_PLAN, 0, round, n, sizeof(*rec));
	for (size_t i = 0; i < n; i++)
		rec[i] = (struct mx_wire_job){ .a = jobs[i].a, .b = jobs[i].b, .dirs = jobs[i].dirs, .round = round_of[i],
					       .qp_timeout = jobs[i].qp_timeout, .small = jobs[i].small };
	mx_tree_bcast_now(c, MX_TAG_PLAN, round, buf, len);
	free(buf);
}

int mx_jobs_wait(struct mx_ctx *c, size_t round, struct mx_job **jobs_p, uint32_t **round_of_p, size_t *n_p,
		 double deadline)
{
	void *buf = NULL;
	size_t len = 0;
	const struct mx_hdr *h;
	const struct mx_wire_job *rec;
	size_t max_jobs = c->max_retest_jobs ? c->max_retest_jobs : 2 * c->n_eps * c->n_eps;
	int rc = mx_comm_recv_max(c->comm, -1, MX_TAG_PLAN, (uint32_t)round,
				  sizeof(struct mx_hdr) + max_jobs * sizeof(struct mx_wire_job), &buf, &len, NULL, deadline);

	*jobs_p = NULL;
	*round_of_p = NULL;
	*n_p = 0;
	if (rc == -EMSGSIZE)
		return rp_error(rc, "matrix: rank 0 sent a plan of %zu bytes, more than the %zu jobs this run's schedule "
				"can need: refused", len, max_jobs);
	if (rc)
		return rc;
	h = buf;
	rec = (const void *)(h + 1);
	if (!mx_msg_ok(buf, len, MX_KIND_PLAN, sizeof(*rec))) {
		free(buf);
		return rp_error(-EPROTO, "matrix: rank 0 sent a malformed retest plan (%zu bytes)", len);
	}
	mx_tree_bcast_now(c, MX_TAG_PLAN, round, buf, len);    /* on down the tree before it is read */
	*jobs_p = calloc(h->n ? h->n : 1, sizeof(**jobs_p));
	*round_of_p = calloc(h->n ? h->n : 1, sizeof(**round_of_p));
	if (!*jobs_p || !*round_of_p) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < h->n; i++) {
		if (rec[i].a >= rec[i].b || rec[i].b >= c->n_eps || rec[i].dirs < 1 || rec[i].dirs > 3 ||
		    rec[i].round >= h->n || rec[i].qp_timeout < 0 || rec[i].qp_timeout > 31 || rec[i].small > 1) {
			rc = rp_error(-EPROTO, "matrix: rank 0's plan names an impossible job: pair (%u, %u), directions %u, "
				      "round %u of %u, ACK timeout %d, small write %u", rec[i].a, rec[i].b, rec[i].dirs,
				      rec[i].round, h->n, rec[i].qp_timeout, rec[i].small);
			goto out;
		}
		(*jobs_p)[i] = (struct mx_job){ .a = rec[i].a, .b = rec[i].b, .dirs = rec[i].dirs,
						.qp_timeout = (int16_t)rec[i].qp_timeout, .small = (uint16_t)rec[i].small };
		(*round_of_p)[i] = rec[i].round;
	}
	*n_p = h->n;
out:
	if (rc) {
		free(*jobs_p);
		free(*round_of_p);
		*jobs_p = NULL;
		*round_of_p = NULL;
	}
	free(buf);
	return rc;
}
