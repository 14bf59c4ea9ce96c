/* engine_loopback.c: both sides of a pair in this process, the target in a thread of its own, over
 * a local side channel (rp_oob_local_pair); see engine.h. */
#include "engine/engine.h"
#include "engine/engine_int.h"

#include <pthread.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

struct target_thread {
	const struct rp_engine_cfg *cfg;
	const struct rp_engine_port *port;
	struct rp_oob *oob;
	unsigned pass;
	struct rp_engine_hold *hold;
	struct rp_pair_result res;
};

static void *target_thread_main(void *arg)
{
	struct target_thread *t = arg;

	rp_engine_side_run_mtucheck(t->cfg, RP_ROLE_TARGET, t->port, t->oob, t->pass, t->hold, &t->res);
	return NULL;
}

/* Both sides in this process, the writer here (its side's info in *info when not NULL, the MTU probe
 * then left to the caller), the target in a thread; the attempt is recorded by the caller. */
static int loopback_sides(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			  const struct rp_engine_port *dst, unsigned pass, struct rp_engine_hold *hold_w,
			  struct rp_engine_hold *hold_t, struct rp_pair_result *res, struct rp_engine_side_info *info)
{
	struct rp_oob a, b;
	struct target_thread t = { .cfg = cfg, .port = dst, .oob = &b, .pass = pass, .hold = hold_t };
	pthread_t tid;
	int rc;

	rp_pair_result_init(res, NULL, NULL);
	rc = rp_oob_local_pair(&a, &b);
	if (rc) {
		rp_pair_result_fail(res, RP_ST_SETUP, "side channel between the threads: %s", strerror(-rc));
		return rc;
	}
	rc = pthread_create(&tid, NULL, target_thread_main, &t);
	if (rc) {
		rp_pair_result_fail(res, RP_ST_SETUP, "pthread_create: %s", strerror(rc));
		rp_oob_close(&a);
		rp_oob_close(&b);
		return rp_error(-rc, "pthread_create for the target: %s", strerror(rc));
	}
	if (info)
		rc = rp_engine_side_run(cfg, RP_ROLE_WRITER, src, &a, pass, hold_w, res, info);
	else
		rc = rp_engine_side_run_mtucheck(cfg, RP_ROLE_WRITER, src, &a, pass, hold_w, res);
	/* the target's side channel sees our close if it is still waiting, so the join is bounded */
	rp_oob_close(&a);
	pthread_join(tid, NULL);
	rp_oob_close(&b);
	/* the writer's view has both endpoints; take the target's own description of itself */
	if (t.res.dst.device[0])
		res->dst = t.res.dst;
	return rc;
}

/* A probe sequence of the MTU probe: both sides, no probe of its own, no attempt. */
static void loopback_seq(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			 const struct rp_engine_port *dst, unsigned pass, struct rp_pair_result *res)
{
	loopback_sides(cfg, src, dst, pass, NULL, NULL, res, NULL);
}

struct beside_thread {
	const struct rp_engine_cfg *cfg;
	const struct rp_engine_port *src, *dst;
	unsigned pass;
	struct rp_engine_mtucheck_seen seen;
};

static void *beside_thread_main(void *arg)
{
	struct beside_thread *b = arg;

	rp_engine_mtucheck_loopback(b->cfg, b->src, b->dst, b->pass, loopback_seq, &b->seen);
	return NULL;
}

/* cfg.mtucheck_beside (engine.h, "MTU probe"): the probe's sequences in a thread from the start, the
 * pair without its probe; the probe's outcome applied when the pair's calls for it. Without a thread
 * to be had, the probe runs after the pair, as without mtucheck_beside. */
static int loopback_beside(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			   const struct rp_engine_port *dst, unsigned pass, struct rp_engine_hold *hold_w,
			   struct rp_engine_hold *hold_t, struct rp_pair_result *res)
{
	struct rp_engine_cfg pair = *cfg;
	struct beside_thread b = { .cfg = cfg, .src = src, .dst = dst, .pass = pass };
	struct rp_engine_side_info info = { 0 };
	double t0 = rp_now();
	pthread_t tid;
	int rc;

	if (pthread_create(&tid, NULL, beside_thread_main, &b) != 0)
		return loopback_sides(cfg, src, dst, pass, hold_w, hold_t, res, NULL);
	pair.no_mtucheck = true;   /* the target's side too: the probe is the thread's */
	rc = loopback_sides(&pair, src, dst, pass, hold_w, hold_t, res, &info);
	pthread_join(tid, NULL);
	if (rp_engine_mtucheck_wanted(res, &info)) {
		rp_engine_mtucheck_apply(res, &b.seen);
		rc = 1;
	}
	res->elapsed_s = rp_now() - t0;   /* the probe is part of the pair's time */
	return rc;
}

int rp_engine_loopback_run(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			   const struct rp_engine_port *dst, unsigned pass, struct rp_pair_result *res)
{
	return rp_engine_loopback_run_held(cfg, src, dst, pass, NULL, NULL, res);
}

int rp_engine_loopback_run_held(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
				const struct rp_engine_port *dst, unsigned pass, struct rp_engine_hold *hold_w,
				struct rp_engine_hold *hold_t, struct rp_pair_result *res)
{
	bool beside = cfg->mtucheck_beside && !cfg->no_mtucheck && cfg->meas.mode == RP_MODE_BW && !cfg->meas.bidir;
	int rc = beside ? loopback_beside(cfg, src, dst, pass, hold_w, hold_t, res)
			: loopback_sides(cfg, src, dst, pass, hold_w, hold_t, res, NULL);

	rp_pair_result_record_attempt(res, cfg->qp.qp_timeout);
	return rc;
}
