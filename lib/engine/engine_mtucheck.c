/* engine_mtucheck.c: the MTU probe of a bandwidth pair that moved nothing: one small write, then one of
 * the path's active MTU, each a short pair sequence of its own over the same side channel; only the
 * small one arriving is a path MTU black hole (RP_ST_MTU_BLACKHOLE); see engine.h ("MTU probe").
 *
 * Both sides run this code after the same outcome (the status is the pair's, the writer's completed
 * count travelled in RESULT), so they run the same probe sequences in the same order; a side that
 * did not learn the count does not probe, and the other's probe then ends at its (short) deadline as
 * not arrived, which keeps the original status.
 */
#include "engine/engine.h"
#include "engine/engine_int.h"

#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/stop.h"
#include "base/util.h"

bool rp_engine_mtucheck_wanted(const struct rp_pair_result *res, const struct rp_engine_side_info *info)
{
	return (res->status == RP_ST_TIMEOUT || res->status == RP_ST_RETRY_EXCEEDED) && info->completed_known &&
	       info->completed == 0 && info->meas.mode == RP_MODE_BW && !info->meas.bidir && !rp_stop_requested();
}

/* The path's active MTU: the smaller of the two ends' (4096 when neither is known). */
static uint64_t path_mtu(const struct rp_pair_result *res)
{
	int a = res->src.mtu, b = res->dst.mtu;
	int m = a > 0 && b > 0 ? (a < b ? a : b) : a > 0 ? a : b > 0 ? b : 4096;

	return (uint64_t)m;
}

/* A probe sequence's configuration: cfg measuring one verified write of size bytes, at most
 * RP_ENGINE_MTUCHECK_TIMEOUT_S each deadline, no port counters, never probed itself. */
static void mtucheck_cfg(const struct rp_engine_cfg *cfg, uint64_t size, struct rp_engine_cfg *p)
{
	*p = *cfg;
	p->meas.mode = RP_MODE_BW;
	p->meas.msg_size = size;
	p->meas.iters = 1;
	p->meas.warmup_iters = 0;
	p->meas.duration_s = 0;
	p->meas.n_qps = 1;
	p->meas.tx_depth = 1;
	p->meas.cq_mod = 1;
	p->meas.verify = 1;
	p->meas.bidir = 0;
	p->sysfs_root = "";
	p->no_mtucheck = true;
	if (p->timeout_s > RP_ENGINE_MTUCHECK_TIMEOUT_S)
		p->timeout_s = RP_ENGINE_MTUCHECK_TIMEOUT_S;
}

/* What one sequence's result says: arrived, and a word for the reason. */
static bool mtucheck_seen(const struct rp_pair_result *r, char *why, size_t why_len)
{
	snprintf(why, why_len, "%s", r->status == RP_ST_OK ? "arrived" : rp_status_code(r->status));
	return r->status == RP_ST_OK;
}

/* One probe sequence over oob: a single verified write of size bytes. True when it arrived. */
static bool mtucheck_once(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
		       struct rp_oob *oob, unsigned pass, uint64_t size, char *why, size_t why_len)
{
	struct rp_engine_cfg p;
	struct rp_pair_result r;

	mtucheck_cfg(cfg, size, &p);
	rp_engine_side_run(&p, role, local, oob, pass, NULL, &r, NULL);
	return mtucheck_seen(&r, why, why_len);
}

void rp_engine_mtucheck_apply(struct rp_pair_result *res, const struct rp_engine_mtucheck_seen *seen)
{
	char orig[sizeof(res->reason)];

	rp_strlcpy(orig, res->reason, sizeof(orig));
	if (seen->small && !seen->big)
		rp_pair_result_fail(res, RP_ST_MTU_BLACKHOLE,
				    "path MTU black hole: a %d-byte write arrives, a %llu-byte one (the active MTU) does not "
				    "(%s): a switch or link on the path runs a smaller MTU than the ports; first: %s",
				    RP_ENGINE_MTUCHECK_SMALL, (unsigned long long)seen->mtu, seen->big_why, orig);
	else if (!seen->small)
		rp_pair_result_fail(res, res->status, "%s; a %d-byte probe write did not arrive either (%s)", orig,
				    RP_ENGINE_MTUCHECK_SMALL, seen->small_why);
	else
		rp_pair_result_fail(res, res->status, "%s; probe writes of %d and %llu bytes arrived", orig,
				    RP_ENGINE_MTUCHECK_SMALL, (unsigned long long)seen->mtu);
}

int rp_engine_mtucheck_run(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
			struct rp_oob *oob, unsigned pass, struct rp_pair_result *res)
{
	struct rp_engine_mtucheck_seen seen = { .mtu = path_mtu(res) };

	rp_info("%s with no write completed: probing with one %d-byte and one %llu-byte (MTU) write", rp_status_code(res->status),
		RP_ENGINE_MTUCHECK_SMALL, (unsigned long long)seen.mtu);
	seen.small = mtucheck_once(cfg, role, local, oob, pass, RP_ENGINE_MTUCHECK_SMALL, seen.small_why,
				   sizeof(seen.small_why));
	if (seen.small)
		seen.big = mtucheck_once(cfg, role, local, oob, pass, seen.mtu, seen.big_why, sizeof(seen.big_why));
	rp_engine_mtucheck_apply(res, &seen);
	return 1;
}

void rp_engine_mtucheck_loopback(const struct rp_engine_cfg *cfg, const struct rp_engine_port *src,
				 const struct rp_engine_port *dst, unsigned pass, rp_engine_loopback_seq_fn run_loopback,
				 struct rp_engine_mtucheck_seen *seen)
{
	struct rp_engine_cfg p;
	struct rp_pair_result r;

	*seen = (struct rp_engine_mtucheck_seen){ 0 };
	mtucheck_cfg(cfg, RP_ENGINE_MTUCHECK_SMALL, &p);
	run_loopback(&p, src, dst, pass, &r);
	seen->small = mtucheck_seen(&r, seen->small_why, sizeof(seen->small_why));
	seen->mtu = path_mtu(&r);   /* the same two ports as the pair's */
	if (!seen->small)
		return;
	mtucheck_cfg(cfg, seen->mtu, &p);
	run_loopback(&p, src, dst, pass, &r);
	seen->big = mtucheck_seen(&r, seen->big_why, sizeof(seen->big_why));
}
