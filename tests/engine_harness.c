/* engine_harness.c: how the engine tests drive a pair over the verbs stand-in (engine_harness.h). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine_harness.h"
#include "base/log.h"
#include "base/util.h"
#include "verbs_standin.h"

static void quiet_sink(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

int setup(void **state)
{
	(void)state;
	fk_reset();
	rp_log_set_sink(quiet_sink, NULL);
	return 0;
}

void small_cfg(struct rp_engine_cfg *cfg)
{
	rp_engine_cfg_default(cfg);
	cfg->meas.msg_size = 4096;
	cfg->meas.iters = 200;
	cfg->meas.warmup_iters = 8;
	cfg->meas.tx_depth = 16;
	cfg->meas.cq_mod = 4;
	cfg->meas.n_qps = 2;
	cfg->timeout_s = 2;
}

const struct rp_engine_port port_a = { "hostA", "fake0", 1, 3 };
const struct rp_engine_port port_b = { "hostA", "fake0", 1, 3 };

/* Drive one pair with the lower-level calls, in one thread: create both, connect both, prepare,
 * write, check. Returns the first failing result, or the target's when all passed. */
void drive_pair(const struct rp_engine_cfg *cfg, struct rp_pair_result *out)
{
	struct rp_engine_ep *w = NULL, *t = NULL;
	struct rp_pair_result rw, rt;
	struct rp_conn_info iw, it;
	int rc;

	rp_pair_result_init(&rw, NULL, NULL);
	rp_pair_result_init(&rt, NULL, NULL);
	rc = rp_engine_ep_create(cfg, RP_ROLE_WRITER, &port_a, &rw, &w);
	if (rc)
		goto fail_w;
	rc = rp_engine_ep_create(cfg, RP_ROLE_TARGET, &port_b, &rt, &t);
	if (rc)
		goto fail_t;
	rp_engine_ep_info(w, 42, &iw);
	rp_engine_ep_info(t, 42, &it);
	if (rp_engine_ep_connect(w, &it, &rw))
		goto fail_w;
	if (rp_engine_ep_connect(t, &iw, &rt))
		goto fail_t;
	if (rp_engine_target_prepare(t, &rt))
		goto fail_t;
	if (rp_engine_run_writer(w, 77, &rw))
		goto fail_w;
	if (rp_engine_run_target(t, 77, NULL, rp_now() + 2, &rt))
		goto fail_t;
	*out = rt;
	out->status = RP_ST_OK;
	goto out;
fail_w:
	*out = rw;
	goto out;
fail_t:
	*out = rt;
out:
	rp_engine_ep_destroy(t);
	rp_engine_ep_destroy(w);
}

void *target_side(void *arg)
{
	struct side_thread *t = arg;

	t->rc = rp_engine_pair_run(t->cfg, RP_ROLE_TARGET, &port_b, t->oob, 0, &t->res);
	return NULL;
}

/* Run a pair with rp_engine_pair_run on both sides; *w and *t are each side's own result. */
void run_both(const struct rp_engine_cfg *cfg, struct rp_pair_result *w, struct rp_pair_result *t)
{
	struct rp_oob a, b;
	struct side_thread st = { .cfg = cfg, .oob = &b };
	pthread_t tid;

	assert_int_equal(rp_oob_local_pair(&a, &b), 0);
	assert_int_equal(pthread_create(&tid, NULL, target_side, &st), 0);
	rp_engine_pair_run(cfg, RP_ROLE_WRITER, &port_a, &a, 0, w);
	rp_oob_close(&a);
	pthread_join(tid, NULL);
	rp_oob_close(&b);
	*t = st.res;
}

/* Build a valid message of type from this side (as a writer would send it). */
void hand_msg(struct rp_engine_msg *m, enum rp_msg_type type)
{
	memset(m, 0, sizeof(*m));
	m->magic = RP_MSG_MAGIC;
	m->version = RP_MSG_VERSION;
	m->type = (uint16_t)type;
	m->length = sizeof(*m);
}

void *hand_target_main(void *arg)
{
	struct hand_target *h = arg;

	rp_engine_pair_run(&h->cfg, RP_ROLE_TARGET, &port_b, h->oob, 0, &h->res);
	return NULL;
}
