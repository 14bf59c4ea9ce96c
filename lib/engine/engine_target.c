/* engine_target.c: the target's side of the run: clear the buffer and post the receive, serve the
 * ping-pong, wait for the final WRITE WITH IMM while the writer's PROGRESS messages keep the deadline
 * sliding, and check every byte; see engine.h. */
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

int rp_engine_target_prepare(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	struct ibv_recv_wr wr = { .wr_id = RP_ENGINE_FINAL_WR_ID, .sg_list = NULL, .num_sge = 0 };
	struct ibv_recv_wr *bad = NULL;
	/* a value the pattern rarely has at offset 0, so a write that never landed shows at once */
	uint8_t clear = (uint8_t)~rp_pattern_byte(ep->seed, 0);
	int rc;

	rc = ep->buf.ops->set(&ep->buf, ep->cfg.meas.mode == RP_MODE_LAT ? 0 : clear);
	if (rc)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "clear the target buffer");
	rc = rp_verbs_post_recv(ep->qps[0], &wr, &bad);
	if (rc)
		return rp_engine_post_fail(ep, rc, "ibv_post_recv", res);
	ep->recv_posted = true;
	return 0;
}

int rp_engine_peek_oob(struct rp_oob *oob, enum rp_msg_type want, double wait_s, struct rp_engine_msg *pending,
		       struct rp_pair_result *res)
{
	char why[160];
	int rc = rp_oob_recv(oob, pending, sizeof(*pending), rp_now() + wait_s);

	if (rc == -ETIMEDOUT)
		return 0;
	if (rc) {
		rp_pair_result_fail(res, RP_ST_PEER_LOST, "side channel to %s: %s", oob->peer, strerror(-rc));
		return rc;
	}
	rc = rp_engine_msg_validate(pending, sizeof(*pending), want, why, sizeof(why));
	if (rc) {
		rp_pair_result_fail(res, RP_ST_PEER_LOST, "bad message from %s: %s", oob->peer, why);
		return rp_error(rc, "%s", res->reason);
	}
	return 1;
}

/* Where the target's wait stands. */
struct final_wait {
	double last_progress;     /* the start, the last PROGRESS, or the writer's "done" */
	double next_check;
	uint64_t progress;        /* the writer's completed count last reported */
	bool writer_done;         /* the writer's RESULT arrived: the IMM must follow within --timeout */
};

/* One look at the side channel (waiting a little: the target is passive). 0 or
 * RP_ENGINE_PEER_FAILED (the writer failed; its message in *ep->pending), or negative. */
static int final_look_oob(struct rp_engine_ep *ep, struct final_wait *w, struct rp_pair_result *res)
{
	int rc;

	if (!ep->oob || *ep->have_pending) {
		struct timespec ts = { 0, (long)(RP_ENGINE_IDLE_WAIT_S * 1e9) };

		nanosleep(&ts, NULL);
		return 0;
	}
	rc = rp_engine_peek_oob(ep->oob, RP_MSG_RESULT, RP_ENGINE_IDLE_WAIT_S, ep->pending, res);
	if (rc <= 0)
		return rc;
	if (ep->pending->type == RP_MSG_PROGRESS) {
		/* progress only counts when it advanced: a stuck writer that still talks is no progress */
		if (ep->pending->u.progress.completed > w->progress) {
			w->progress = ep->pending->u.progress.completed;
			w->last_progress = rp_now();
		}
		return 0;
	}
	*ep->have_pending = true;
	if (ep->pending->status != RP_ST_OK) {
		/* the writer's writes failed: a port of ours that went down is the first cause */
		rc = rp_engine_port_check(ep, res);
		return rc ? rc : RP_ENGINE_PEER_FAILED;
	}
	w->writer_done = true;
	w->last_progress = rp_now();
	return 0;
}

/* The target's wait for the final WRITE WITH IMM. Without a side channel deadline is absolute;
 * with one, the wait ends as TIMEOUT only after cfg.timeout_s without progress. */
static int target_wait_final(struct rp_engine_ep *ep, double deadline, struct rp_pair_result *res)
{
	struct final_wait w = { .last_progress = rp_now() };
	/* the writer reports at least every quarter of this side's --timeout (it took the shorter
	 * period of the two sides), so --timeout without a report is no progress */
	double window = ep->cfg.timeout_s;

	for (;;) {
		struct ibv_wc wc;
		int n = rp_verbs_poll_cq(ep->recv_cq, 1, &wc), rc;
		double now;

		if (n < 0)
			return rp_engine_post_fail(ep, n, "ibv_poll_cq", res);
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS)
				return rp_engine_wc_fail(ep, &wc, res);
			if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || ntohl(wc.imm_data) != RP_ENGINE_FINAL_IMM) {
				rp_pair_result_fail(res, RP_ST_SETUP, "unexpected receive completion (opcode %d)",
						    (int)wc.opcode);
				return rp_error(-EPROTO, "%s", res->reason);
			}
			return 0;
		}
		rc = final_look_oob(ep, &w, res);
		if (rc)
			return rc;
		rc = rp_engine_idle_check(ep, &w.next_check, res);
		if (rc)
			return rc;
		now = rp_now();
		if ((!ep->oob && now > deadline) || (ep->oob && now - w.last_progress > window)) {
			rp_pair_result_fail(res, RP_ST_TIMEOUT, "%s into %s port %d: no progress for %.1f s (%llu writes reported)",
					    w.writer_done ? "final write" : "run", ep->device, ep->port, ep->oob ? window : ep->cfg.timeout_s,
					    (unsigned long long)w.progress);
			return rp_error(-ETIMEDOUT, "%s", res->reason);
		}
	}
}

/* Every byte of the target's buffer against the pattern. */
static int target_check(struct rp_engine_ep *ep, uint64_t seed, struct rp_pair_result *res)
{
	int rc = ep->buf.ops->check(&ep->buf, seed, &res->bad_offset);
	uint8_t got = 0;

	if (rc)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "check the target buffer");
	if (res->bad_offset < 0) {
		res->verified = true;
		return 0;
	}
	ep->buf.ops->read(&ep->buf, (size_t)res->bad_offset, &got, 1);
	rp_pair_result_fail(res, RP_ST_DATA_MISMATCH, "data mismatch at offset %lld of %llu: 0x%02x, expected 0x%02x",
			    (long long)res->bad_offset, (unsigned long long)ep->cfg.meas.msg_size, got,
			    rp_pattern_byte(seed, (uint64_t)res->bad_offset));
	rp_error(-EIO, "%s on %s port %d", res->reason, ep->device, ep->port);
	return -EIO;
}

int rp_engine_target_run(struct rp_engine_ep *ep, uint64_t seed, struct rp_oob *oob, double deadline,
			 struct rp_pair_result *res)
{
	int rc;

	ep->oob = oob;
	if (ep->cfg.meas.mode == RP_MODE_LAT) {
		rc = rp_engine_lat_pingpong(ep, false, res);
		if (rc)
			return rc;
	}
	rc = target_wait_final(ep, deadline, res);
	if (rc)
		return rc;
	ep->recv_posted = false;
	res->msg_size = (size_t)ep->cfg.meas.msg_size;
	if (!ep->cfg.meas.verify && ep->cfg.meas.mode != RP_MODE_LAT)
		return 0;
	return target_check(ep, seed, res);
}

int rp_engine_run_target(struct rp_engine_ep *ep, uint64_t seed, struct rp_oob *oob, double deadline,
			 struct rp_pair_result *res)
{
	struct rp_engine_msg pending;
	bool have = false;
	int rc;

	ep->pending = &pending;
	ep->have_pending = &have;
	rc = rp_engine_target_run(ep, seed, oob, deadline, res);
	ep->pending = NULL;
	ep->have_pending = NULL;
	if (rc == RP_ENGINE_PEER_FAILED) {
		rp_pair_result_fail(res, (enum rp_status)pending.status, "%s", pending.reason);
		return -ECANCELED;
	}
	return rc;
}
