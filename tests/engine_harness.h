/* engine_harness.h: what every engine test needs to drive pairs over the verbs stand-in
 * (verbs_standin.h): the per-test setup, a small configuration, the two ports, a pair driven by the
 * low-level calls in one thread (drive_pair), a pair driven by rp_engine_pair_run on both sides in
 * two threads (run_both), and a writer played by hand (hand_msg, hand_target_main).
 */
#ifndef RP_TESTS_ENGINE_HARNESS_H
#define RP_TESTS_ENGINE_HARNESS_H

#include "engine/engine.h"
#include "engine/engine_int.h"
#include "oob/oob.h"

/* cmocka setup: fk_reset() and a silent log */
int setup(void **state);
/* 200 x 4 KiB writes on 2 QPs, depth 16, --timeout 2 */
void small_cfg(struct rp_engine_cfg *cfg);
extern const struct rp_engine_port port_a, port_b;

/* Drive one pair with the lower-level calls, in one thread: create both, connect both, prepare,
 * write, check. *out is the first failing result, or the target's when all passed. */
void drive_pair(const struct rp_engine_cfg *cfg, struct rp_pair_result *out);

struct side_thread {
	const struct rp_engine_cfg *cfg;
	struct rp_oob *oob;
	struct rp_pair_result res;
	int rc;
};

void *target_side(void *arg);
/* Run a pair with rp_engine_pair_run on both sides; *w and *t are each side's own result. */
void run_both(const struct rp_engine_cfg *cfg, struct rp_pair_result *w, struct rp_pair_result *t);

/* Build a valid message of type from this side (as a writer would send it). */
void hand_msg(struct rp_engine_msg *m, enum rp_msg_type type);
/* A target run by rp_engine_pair_run on h->oob with h->cfg (a thread's main; arg: struct hand_target) */
struct hand_target {
	struct rp_engine_cfg cfg;
	struct rp_oob *oob;
	struct rp_pair_result res;
};
void *hand_target_main(void *arg);

#endif
