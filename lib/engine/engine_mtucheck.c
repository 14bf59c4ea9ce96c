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

/* One probe sequence: a single verified write of size bytes. True when it arrived (the pair is ok). */
static bool mtucheck_once(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
		       struct rp_oob *oob, unsigned pass, uint64_t size, char *why, size_t why_len)
{
	struct rp_engine_cfg p = *cfg;
	struct rp_pair_result r;

	p.meas.mode = RP_MODE_BW;
	p.meas.msg_size = size;
	p.meas.iters = 1;
	p.meas.warmup_iters = 0;
	p.meas.duration_s = 0;
	p.meas.n_qps = 1;
	p.meas.tx_depth = 1;
	p.meas.cq_mod = 1;
	p.meas.verify = 1;
	p.meas.bidir = 0;
	p.sysfs_root = "";
	if (p.timeout_s > RP_ENGINE_MTUCHECK_TIMEOUT_S)
		p.timeout_s = RP_ENGINE_MTUCHECK_TIMEOUT_S;
	rp_engine_side_run(&p, role, local, oob, pass, &r, NULL);
	snprintf(why, why_len, "%s", r.status == RP_ST_OK ? "arrived" : rp_status_code(r.status));
	return r.status == RP_ST_OK;
}

int rp_engine_mtucheck_run(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
			struct rp_oob *oob, unsigned pass, struct rp_pair_result *res)
{
	uint64_t mtu = path_mtu(res);
	char small_why[32], big_why[32], orig[sizeof(res->reason)];
	bool small, big = false;

	rp_strlcpy(orig, res->reason, sizeof(orig));
	rp_info("%s with no write completed: probing with one %d-byte and one %llu-byte (MTU) write", rp_status_code(res->status),
		RP_ENGINE_MTUCHECK_SMALL, (unsigned long long)mtu);
	small = mtucheck_once(cfg, role, local, oob, pass, RP_ENGINE_MTUCHECK_SMALL, small_why, sizeof(small_why));
	if (small)
		big = mtucheck_once(cfg, role, local, oob, pass, mtu, big_why, sizeof(big_why));
	if (small && !big) {
		rp_pair_result_fail(res, RP_ST_MTU_BLACKHOLE,
				    "path MTU black hole: a %d-byte write arrives, a %llu-byte one (the active MTU) does not "
				    "(%s): a switch or link on the path runs a smaller MTU than the ports; first: %s",
				    RP_ENGINE_MTUCHECK_SMALL, (unsigned long long)mtu, big_why, orig);
		return 1;
	}
	if (!small)
		rp_pair_result_fail(res, res->status, "%s; a %d-byte probe write did not arrive either (%s)", orig,
			 RP_ENGINE_MTUCHECK_SMALL, small_why);
	else
		rp_pair_result_fail(res, res->status, "%s; probe writes of %d and %llu bytes arrived", orig,
			 RP_ENGINE_MTUCHECK_SMALL, (unsigned long long)mtu);
	return 1;
}
