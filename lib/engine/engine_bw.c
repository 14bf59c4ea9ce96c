/* engine_bw.c: the writer's run: warm-up, measured RDMA WRITE stream (or the ping-pong), the final
 * WRITE WITH IMM, and the PROGRESS reports that keep the target's deadline sliding; see engine.h. */
#include "engine/engine.h"
#include "engine/engine_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/verbs_ops.h"

int rp_engine_post_write(struct rp_engine_ep *ep, unsigned qpi, uint64_t wr_id, bool signaled, bool imm,
			 struct rp_pair_result *res)
{
	/* msg_size <= RP_ENGINE_MAX_MSG_SIZE (validated), so the 32-bit length cannot wrap */
	struct ibv_sge sge = {
		.addr = (uint64_t)(uintptr_t)ep->buf.addr,
		.length = (uint32_t)ep->cfg.meas.msg_size,
		.lkey = ep->buf.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { .remote_addr = ep->peer.addr, .rkey = ep->peer.rkey },
	};
	struct ibv_send_wr *bad = NULL;
	int rc;

	if (imm)
		wr.imm_data = htonl(RP_ENGINE_FINAL_IMM);
	rc = rp_verbs_post_send(ep->qps[qpi], &wr, &bad);
	if (rc)
		return rp_engine_post_fail(ep, rc, "ibv_post_send", res);
	return 0;
}

int rp_engine_writer_tick(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	struct rp_engine_msg msg;
	double now;
	int rc;

	if (!ep->oob)
		return 0;
	now = rp_now();
	if (now < ep->next_progress)
		return 0;
	ep->next_progress = now + ep->progress_s;
	if (ep->done > ep->done_reported) {
		rp_engine_msg_init(&msg, RP_MSG_PROGRESS, NULL);
		msg.u.progress.completed = ep->done;
		msg.u.progress.bytes = ep->done * ep->cfg.meas.msg_size;
		msg.u.progress.elapsed_s = now - ep->run_t0;
		ep->done_reported = ep->done;
		/* a report that cannot go out is not a failure of the run: the peer's own view decides */
		if (rp_oob_send(ep->oob, &msg, sizeof(msg), now + ep->cfg.timeout_s) != 0)
			rp_debug("progress report to %s not sent", ep->oob->peer);
	}
	if (*ep->have_pending)
		return 0;
	rc = rp_engine_peek_oob(ep->oob, RP_MSG_RESULT, 0, ep->pending, res);
	if (rc <= 0 || ep->pending->type != RP_MSG_RESULT)
		return rc < 0 ? rc : 0;
	*ep->have_pending = true;
	return ep->pending->status != RP_ST_OK ? RP_ENGINE_PEER_FAILED : 0;
}

struct bw_state {
	uint64_t posted, completed;       /* writes */
	unsigned outstanding[RP_ENGINE_MAX_QPS];
	unsigned unsignaled[RP_ENGINE_MAX_QPS];
	double last_progress, next_check;
	double t_first_post, t_last_completion;
	/* interval minimum */
	double cp_time;
	uint64_t cp_done;
	double gbps_min, gbps_min_at;
	bool have_interval;
};

/* Completions of the measured stream: the slowest interval so far, and where it starts. */
static void bw_interval(struct rp_engine_ep *ep, struct bw_state *s, double now)
{
	double g;

	if (now - s->cp_time < ep->cfg.meas.interval_s)
		return;
	g = rp_engine_gbps((s->completed - s->cp_done) * ep->cfg.meas.msg_size, now - s->cp_time);
	if (!s->have_interval || g < s->gbps_min) {
		s->gbps_min = g;
		s->gbps_min_at = s->cp_time - s->t_first_post;
	}
	s->have_interval = true;
	s->cp_time = now;
	s->cp_done = s->completed;
}

/* Poll the send CQ once; account completions. 0, RP_ENGINE_PEER_FAILED, or negative on a completion
 * error, a stall of --timeout, a port gone down or a stop request. */
static int bw_poll(struct rp_engine_ep *ep, struct bw_state *s, bool measuring, struct rp_pair_result *res)
{
	struct ibv_wc wc[RP_ENGINE_POLL_BATCH];
	int n = rp_verbs_poll_cq(ep->send_cq, RP_ENGINE_POLL_BATCH, wc);
	double now = rp_now();

	if (n < 0)
		return rp_engine_post_fail(ep, n, "ibv_poll_cq", res);
	for (int i = 0; i < n; i++) {
		unsigned qpi = (unsigned)(wc[i].wr_id >> 32);
		unsigned covered = (unsigned)(wc[i].wr_id & 0xffffffffu);

		if (wc[i].status != IBV_WC_SUCCESS)
			return rp_engine_wc_fail(ep, &wc[i], res);
		if (qpi >= ep->n_qps || covered > ep->cfg.meas.tx_depth || covered > s->outstanding[qpi]) {
			rp_pair_result_fail(res, RP_ST_SETUP, "completion with unknown wr_id 0x%llx",
					    (unsigned long long)wc[i].wr_id);
			return rp_error(-EPROTO, "%s", res->reason);
		}
		s->outstanding[qpi] -= covered;
		s->completed += covered;
		ep->done += covered;
	}
	if (n > 0) {
		s->last_progress = now;
		s->t_last_completion = now;
		s->next_check = 0;
		if (measuring)
			bw_interval(ep, s, now);
	} else {
		int rc = rp_engine_idle_check(ep, &s->next_check, res);

		if (rc)
			return rc;
		rp_engine_stall_nap(now - s->last_progress);
		if (now - s->last_progress > ep->cfg.timeout_s) {
			rp_pair_result_fail(res, RP_ST_TIMEOUT,
					    "no completion on %s port %d for %.1f s (%llu of %llu writes done)", ep->device,
					    ep->port, ep->cfg.timeout_s, (unsigned long long)s->completed,
					    (unsigned long long)s->posted);
			return rp_error(-ETIMEDOUT, "%s", res->reason);
		}
	}
	return rp_engine_writer_tick(ep, res);
}

/* Post as much as the queues take; *stopping once the count or the duration is reached. */
static int bw_post_some(struct rp_engine_ep *ep, uint64_t total, double duration, struct bw_state *s,
			bool *stopping, struct rp_pair_result *res)
{
	const struct rp_engine_meas *m = &ep->cfg.meas;

	while (!*stopping) {
		unsigned qpi = (unsigned)(s->posted % ep->n_qps);
		bool last, sig;
		int rc;

		if ((total && s->posted >= total) ||
		    (duration > 0 && s->posted > 0 && rp_now() >= s->t_first_post + duration)) {
			*stopping = true;
			break;
		}
		if (s->outstanding[qpi] >= m->tx_depth)
			break;
		last = total && s->posted + ep->n_qps >= total;
		sig = last || s->unsignaled[qpi] + 1 >= m->cq_mod;
		rc = rp_engine_post_write(ep, qpi, ((uint64_t)qpi << 32) | (s->unsignaled[qpi] + 1), sig, false, res);
		if (rc)
			return rc;
		if (s->posted == 0) {
			s->t_first_post = rp_now();
			s->cp_time = s->t_first_post;
		}
		s->posted++;
		s->outstanding[qpi]++;
		s->unsignaled[qpi] = sig ? 0 : s->unsignaled[qpi] + 1;
	}
	return 0;
}

/* Duration mode: a QP whose last writes were unsignaled gets one signalled write. Each QP's send
 * queue holds tx_depth + 1 and at most tx_depth are outstanding here, so there is always room. */
static int bw_signal_tails(struct rp_engine_ep *ep, struct bw_state *s, struct rp_pair_result *res)
{
	for (unsigned q = 0; q < ep->n_qps; q++) {
		int rc;

		if (s->unsignaled[q] == 0)
			continue;
		rc = rp_engine_post_write(ep, q, ((uint64_t)q << 32) | (s->unsignaled[q] + 1), true, false, res);
		if (rc)
			return rc;
		s->posted++;
		s->outstanding[q]++;
		s->unsignaled[q] = 0;
	}
	return 0;
}

/* Stream `total` writes (or for duration when total is 0) round robin over the QPs, tx_depth deep,
 * signalling one in cq_mod and the last on each QP, and wait for all completions. */
static int bw_stream(struct rp_engine_ep *ep, uint64_t total, double duration, bool measuring, struct bw_state *s,
		     struct rp_pair_result *res)
{
	bool stopping = false;
	int rc;

	memset(s, 0, sizeof(*s));
	s->last_progress = rp_now();
	for (;;) {
		rc = bw_post_some(ep, total, duration, s, &stopping, res);
		if (rc)
			return rc;
		if (stopping) {
			rc = bw_signal_tails(ep, s, res);
			if (rc)
				return rc;
			if (s->completed >= s->posted)
				return 0;
		}
		rc = bw_poll(ep, s, measuring, res);
		if (rc)
			return rc;
	}
}

/* Post the final WRITE WITH IMM of the whole (patterned) buffer and wait for its completion. */
static int send_final(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	double start = rp_now(), deadline = start + ep->cfg.timeout_s, next_check = 0;
	int rc = rp_engine_post_write(ep, 0, RP_ENGINE_FINAL_WR_ID, true, true, res);

	if (rc)
		return rc;
	for (;;) {
		struct ibv_wc wc;
		int n = rp_verbs_poll_cq(ep->send_cq, 1, &wc);

		if (n < 0)
			return rp_engine_post_fail(ep, n, "ibv_poll_cq", res);
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				return rp_engine_wc_fail(ep, &wc, res);
			if (wc.wr_id == RP_ENGINE_FINAL_WR_ID)
				return 0;
			continue;
		}
		rc = rp_engine_idle_check(ep, &next_check, res);
		if (rc)
			return rc;
		rp_engine_stall_nap(rp_now() - start);
		if (rp_now() > deadline) {
			rp_pair_result_fail(res, RP_ST_TIMEOUT, "final write from %s port %d not completed in %.1f s",
					    ep->device, ep->port, ep->cfg.timeout_s);
			return rp_error(-ETIMEDOUT, "%s", res->reason);
		}
	}
}

/* The measured bandwidth run after the warm-up; fills the measurement into res. */
static int writer_bw(struct rp_engine_ep *ep, uint64_t seed, struct rp_pair_result *res)
{
	const struct rp_engine_meas *m = &ep->cfg.meas;
	struct bw_state s;
	int rc = ep->buf.ops->fill(&ep->buf, seed);

	if (rc)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "fill the source buffer");
	if (m->warmup_iters) {
		rc = bw_stream(ep, m->warmup_iters, 0, false, &s, res);
		if (rc)
			return rc;
	}
	rc = bw_stream(ep, m->duration_s > 0 ? 0 : m->iters, m->duration_s, true, &s, res);
	if (rc)
		return rc;
	res->iters = s.completed;
	res->bytes = s.completed <= UINT64_MAX / m->msg_size ? s.completed * m->msg_size : UINT64_MAX;
	res->msg_size = (size_t)m->msg_size;
	res->gbps = rp_engine_gbps(res->bytes, s.t_last_completion - s.t_first_post);
	if (s.have_interval && s.gbps_min < res->gbps) {
		res->gbps_min = s.gbps_min;
		res->gbps_min_at_s = s.gbps_min_at;
	} else {
		res->gbps_min = res->gbps;
		res->gbps_min_at_s = 0;
	}
	return 0;
}

int rp_engine_run_writer(struct rp_engine_ep *ep, uint64_t seed, struct rp_pair_result *res)
{
	const struct rp_engine_meas *m = &ep->cfg.meas;
	int rc;

	ep->run_t0 = rp_now();
	ep->next_progress = ep->run_t0 + ep->progress_s;
	if (m->mode == RP_MODE_LAT) {
		/* the target writes back only after the first ping, so clearing here is in time */
		rc = ep->buf.ops->set(&ep->buf, 0);
		if (rc)
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "clear the buffer");
		rc = rp_engine_lat_pingpong(ep, true, res);
		if (rc)
			return rc;
		res->iters = m->iters;
		res->bytes = m->iters * m->msg_size;
		res->msg_size = (size_t)m->msg_size;
	} else {
		rc = writer_bw(ep, seed, res);
		if (rc)
			return rc;
	}
	if (m->mode == RP_MODE_LAT || m->verify) {
		rc = ep->buf.ops->fill(&ep->buf, seed);
		if (rc)
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "fill the source buffer");
	}
	return send_final(ep, res);
}
