/* engine_cfg.c: the engine's configuration, the measure part's one rule and one copy, the arithmetic
 * of a run and the completion status map; see engine.h. */
#include "engine/engine.h"
#include "engine/engine_int.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

void rp_engine_cfg_default(struct rp_engine_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->meas.mode = RP_MODE_BW;
	cfg->meas.msg_size = 65536;
	cfg->meas.iters = 1000;
	cfg->meas.warmup_iters = 16;
	cfg->meas.tx_depth = 128;
	cfg->meas.n_qps = 1;
	cfg->meas.cq_mod = 16;
	cfg->meas.interval_s = 0.1;
	cfg->meas.seed = 0x5250;
	cfg->meas.verify = true;
	cfg->qp.qp_timeout = 14;      /* 4.096 us * 2^14 = 67 ms per try: a probe, not NCCL's 20 */
	cfg->qp.retry_cnt = 7;
	cfg->qp.rnr_retry = 7;
	cfg->qp.traffic_class = 0;
	cfg->qp.sl = 0;
	cfg->timeout_s = 10;
	cfg->run_limit_s = 0;
	cfg->src_mem.kind = "host";
	cfg->dst_mem.kind = "host";
	cfg->sysfs_root = NULL;
	rp_ctr_limits_default(&cfg->ctr_limits);
}

int rp_engine_meas_validate(const struct rp_engine_meas *m, char *why, size_t why_len)
{
	char dummy[8];

	if (!why) {
		why = dummy;
		why_len = sizeof(dummy);
	}
	if (m->mode != RP_MODE_BW && m->mode != RP_MODE_LAT)
		snprintf(why, why_len, "mode %u: neither bandwidth nor latency", m->mode);
	else if (m->msg_size == 0 || m->msg_size > RP_ENGINE_MAX_MSG_SIZE)
		snprintf(why, why_len, "message size %llu: must be 1 byte to %llu (1 GiB)",
			 (unsigned long long)m->msg_size, RP_ENGINE_MAX_MSG_SIZE);
	else if (m->iters > RP_ENGINE_MAX_ITERS || m->warmup_iters > RP_ENGINE_MAX_ITERS)
		snprintf(why, why_len, "%llu iterations, %llu warm-up: at most %llu each", (unsigned long long)m->iters,
			 (unsigned long long)m->warmup_iters, RP_ENGINE_MAX_ITERS);
	else if (!isfinite(m->duration_s) || m->duration_s < 0 || m->duration_s > RP_ENGINE_MAX_DURATION_S)
		snprintf(why, why_len, "duration %g s: must be 0 to %g", m->duration_s, RP_ENGINE_MAX_DURATION_S);
	else if (m->iters == 0 && m->duration_s <= 0)
		snprintf(why, why_len, "neither iterations nor a duration given");
	else if (m->duration_s > 0 && m->mode == RP_MODE_LAT)
		snprintf(why, why_len, "latency mode counts round trips: give iterations, not a duration");
	else if ((m->iters + m->warmup_iters) > UINT64_MAX / m->msg_size)
		snprintf(why, why_len, "%llu iterations x %llu bytes overflows the byte count",
			 (unsigned long long)(m->iters + m->warmup_iters), (unsigned long long)m->msg_size);
	else if (m->tx_depth == 0 || m->tx_depth > RP_ENGINE_MAX_DEPTH)
		snprintf(why, why_len, "tx depth %u: must be 1 to %d", m->tx_depth, RP_ENGINE_MAX_DEPTH);
	else if (m->n_qps == 0 || m->n_qps > RP_ENGINE_MAX_QPS)
		snprintf(why, why_len, "%u QPs: must be 1 to %d", m->n_qps, RP_ENGINE_MAX_QPS);
	else if (m->cq_mod == 0 || m->cq_mod > m->tx_depth)
		snprintf(why, why_len, "completion moderation %u: must be 1 to the tx depth (%u)", m->cq_mod,
			 m->tx_depth);
	else if (!isfinite(m->interval_s) || m->interval_s <= 0 || m->interval_s > RP_ENGINE_MAX_DURATION_S)
		snprintf(why, why_len, "interval %g s: must be positive and finite", m->interval_s);
	else if (m->verify > 1)
		snprintf(why, why_len, "verify %u: must be 0 or 1", m->verify);
	else if (m->bidir > 1)
		snprintf(why, why_len, "bidir %u: must be 0 or 1", m->bidir);
	else if (m->bidir && m->mode != RP_MODE_BW)
		snprintf(why, why_len, "both directions at once (--bidir) is for bandwidth mode, not latency");
	else
		return 0;
	return -EINVAL;
}

void rp_engine_meas_adopt(struct rp_engine_cfg *cfg, const struct rp_engine_meas *writer)
{
	cfg->meas = *writer;
}

int rp_engine_cfg_validate(const struct rp_engine_cfg *cfg)
{
	char why[160];

	if (rp_engine_meas_validate(&cfg->meas, why, sizeof(why)))
		return rp_error(-EINVAL, "%s", why);
	if (cfg->qp.qp_timeout < 0 || cfg->qp.qp_timeout > 31)
		return rp_error(-EINVAL, "QP timeout %d: must be 0 to 31", cfg->qp.qp_timeout);
	if (cfg->qp.retry_cnt < 0 || cfg->qp.retry_cnt > 7 || cfg->qp.rnr_retry < 0 || cfg->qp.rnr_retry > 7)
		return rp_error(-EINVAL, "retry counts must be 0 to 7");
	if (cfg->qp.traffic_class < 0 || cfg->qp.traffic_class > 255 || cfg->qp.sl < 0 || cfg->qp.sl > 15)
		return rp_error(-EINVAL, "traffic class must be 0 to 255 and SL 0 to 15");
	if (!isfinite(cfg->timeout_s) || cfg->timeout_s <= 0 || cfg->timeout_s > RP_ENGINE_MAX_TIMEOUT_S)
		return rp_error(-EINVAL, "timeout %g s: must be positive, at most %g", cfg->timeout_s,
				RP_ENGINE_MAX_TIMEOUT_S);
	if (!cfg->src_mem.kind || !cfg->dst_mem.kind)
		return rp_error(-EINVAL, "memory kind not set");
	return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* arithmetic */

double rp_engine_gbps(uint64_t bytes, double seconds)
{
	if (seconds <= 0)
		return 0;
	return (double)bytes * 8.0 / seconds / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void rp_engine_lat_stats(double *samples, size_t n, struct rp_latency *lat)
{
	memset(lat, 0, sizeof(*lat));
	if (n == 0)
		return;
	qsort(samples, n, sizeof(*samples), cmp_double);
	lat->measured = true;
	lat->samples = n;
	lat->min_us = samples[0];
	lat->max_us = samples[n - 1];
	/* median: the middle sample, or the mean of the two middle ones */
	lat->median_us = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	/* p99: nearest rank, ceil(0.99 n) */
	lat->p99_us = samples[(size_t)ceil(0.99 * (double)n) - 1];
}

/* Every completion status has a code of its own; a flush names itself as the consequence it is. */
enum rp_status rp_engine_wc_status(int st)
{
	switch (st) {
	case IBV_WC_SUCCESS: return RP_ST_OK;
	case IBV_WC_RETRY_EXC_ERR: return RP_ST_RETRY_EXCEEDED;
	case IBV_WC_RNR_RETRY_EXC_ERR: return RP_ST_RNR_RETRY;
	case IBV_WC_REM_ACCESS_ERR: return RP_ST_REMOTE_ACCESS;
	case IBV_WC_LOC_PROT_ERR: return RP_ST_LOCAL_PROT;
	case IBV_WC_REM_INV_REQ_ERR: return RP_ST_REMOTE_INVALID;
	case IBV_WC_REM_OP_ERR: return RP_ST_REMOTE_OP;
	case IBV_WC_REM_ABORT_ERR: return RP_ST_REMOTE_ABORT;
	case IBV_WC_LOC_LEN_ERR: return RP_ST_LOCAL_LENGTH;
	case IBV_WC_LOC_QP_OP_ERR: return RP_ST_LOCAL_QP_OP;
	case IBV_WC_BAD_RESP_ERR: return RP_ST_BAD_RESPONSE;
	case IBV_WC_WR_FLUSH_ERR: return RP_ST_FLUSHED;
	default: return RP_ST_COMPLETION_ERROR;
	}
}

uint64_t rp_engine_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = rp_engine_mix64(h ^ (uint8_t)*s);
	return rp_engine_mix64(h ^ 0xff);
}

uint64_t rp_engine_seed(uint64_t base, const struct rp_endpoint *src, const struct rp_endpoint *dst, unsigned pass)
{
	uint64_t h = rp_engine_mix64(base + 1);

	h = hash_str(h, src->node);
	h = hash_str(h, src->device);
	h = rp_engine_mix64(h ^ (uint64_t)(unsigned)src->port);
	h = hash_str(h, dst->node);
	h = hash_str(h, dst->device);
	h = rp_engine_mix64(h ^ (uint64_t)(unsigned)dst->port);
	return rp_engine_mix64(h ^ pass);
}
