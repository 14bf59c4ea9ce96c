/* engine_loopback.c: both sides of a pair in this process, the target in a thread of its own, over
 * a local side channel (rp_oob_local_pair); see engine.h. */
#include "engine/engine.h"
#include "engine/engine_int.h"

#include <pthread.h>
#include <string.h>

#include "base/log.h"

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

/* Both sides in this process; the attempt is recorded by the caller. */
static int loopback_sides(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			  const struct rp_engine_port *dst, unsigned pass, struct rp_engine_hold *hold_w,
			  struct rp_engine_hold *hold_t, struct rp_pair_result *res)
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

int rp_engine_loopback_run(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
			   const struct rp_engine_port *dst, unsigned pass, struct rp_pair_result *res)
{
	return rp_engine_loopback_run_held(cfg, src, dst, pass, NULL, NULL, res);
}

int rp_engine_loopback_run_held(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
				const struct rp_engine_port *dst, unsigned pass, struct rp_engine_hold *hold_w,
				struct rp_engine_hold *hold_t, struct rp_pair_result *res)
{
	int rc = loopback_sides(cfg, src, dst, pass, hold_w, hold_t, res);

	rp_pair_result_record_attempt(res, cfg->qp.qp_timeout);
	return rc;
}
