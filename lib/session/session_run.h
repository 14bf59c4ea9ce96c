/* session_run.h: one pair across two hosts on an accepted side channel, with its retests.
 *
 * After the hello (session_gate.h) both sides run the pair (rp_engine_pair_run), apply the verdict the
 * writer asked for (lib/verdict/verdict.h, the one rule, on this single pair and its two endpoints), and
 * the writer decides what follows (lib/verdict/retest.h): NEXT RETEST (both sides measure the pair again on
 * the same connection, with the ACK timeout the writer names) or NEXT DONE. The result carries every
 * attempt and how the pair held up (flaky, confirmed, unconfirmed).
 *
 * A stop request (lib/base/stop.h) ends the session at the next exchange: a pair it cut short becomes
 * RP_ST_INTERRUPTED; a failure measured before the stop stays, unconfirmed.
 */
#ifndef RP_SESSION_RUN_H
#define RP_SESSION_RUN_H

#include "engine/engine.h"
#include "oob/oob.h"
#include "session/session_wire.h"
#include "base/result.h"
#include "verdict/verdict.h"

/* The writer: measure, judge, retest up to max_retest times. Returns 0 when the pair passed
 * (possibly flaky), 1 when it failed; res is filled completely. */
int rp_session_writer(const struct rp_engine_cfg *cfg, const struct rp_verdict_cfg *vcfg, unsigned max_retest,
			   const struct rp_engine_port *local, struct rp_oob *oob, struct rp_pair_result *res);

/* The target: serve the pair, then every retest the writer asks for (at most hello->retest), with
 * the verdict from hello. Returns 0 or 1 as the writer's. */
int rp_session_target(const struct rp_engine_cfg *cfg, const struct rp_sw_hello *hello,
			   const struct rp_engine_port *local, struct rp_oob *oob, struct rp_pair_result *res);

/* The verdict configuration a hello carries (validated by rp_sw_validate). */
void rp_session_vcfg(const struct rp_sw_hello *hello, struct rp_verdict_cfg *vcfg);

#endif
