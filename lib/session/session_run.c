/* session_run.c: a pair and its retests on one side channel; see session_run.h. */
#include "session/session_run.h"

#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "verdict/retest.h"
#include "base/stop.h"
#include "base/util.h"

void rp_session_vcfg(const struct rp_sw_hello *hello, struct rp_verdict_cfg *vcfg)
{
	rp_verdict_cfg_default(vcfg);
	vcfg->min_bw_absolute = hello->min_bw_absolute != 0;
	vcfg->min_bw = hello->min_bw;
	vcfg->outlier = hello->outlier;
	vcfg->interval_drop = hello->interval_drop;
}

/* One attempt of the pair: the engine's run, recorded as an attempt, a stop turned into INTERRUPTED. */
static void attempt(const struct rp_engine_cfg *cfg, enum rp_engine_role role, const struct rp_engine_port *local,
		    struct rp_oob *oob, struct rp_pair_result *res)
{
	rp_engine_pair_run(cfg, role, local, oob, 0, res);
	if (res->status != RP_ST_OK && rp_stop_requested())
		rp_pair_result_fail(res, RP_ST_INTERRUPTED, "interrupted by signal %d before the pair finished",
				    rp_stop_signal());
	if (res->n_attempts == 0)
		rp_pair_result_record_attempt(res, cfg->qp.qp_timeout);
	else
		res->attempts[res->n_attempts - 1].status = res->status;
}

/* The verdict on the single pair (both endpoints); the last attempt keeps what it decided. */
static void judge(const struct rp_verdict_cfg *vcfg, struct rp_pair_result *res)
{
	struct rp_endpoint eps[2] = { res->src, res->dst };
	const uint32_t pair_eps[2] = { 0, 1 };
	struct rp_verdict v;

	memset(&v, 0, sizeof(v));
	if (rp_verdict_apply(vcfg, eps, 2, pair_eps, res, 1, &v) != 0)
		rp_warn("verdict on %s -> %s: out of memory; the thresholds were not applied", res->src.device,
			res->dst.device);
	rp_verdict_fini(&v);
	if (res->n_attempts > 0) {
		struct rp_attempt *a = &res->attempts[res->n_attempts - 1];

		a->status = res->status;
		rp_strlcpy(a->reason, res->reason, sizeof(a->reason));
	}
}

/* Measure again with next, and fold it in unless a stop cut it short (then the earlier failure
 * stands, unconfirmed). */
static void retest(const struct rp_engine_cfg *next, enum rp_engine_role role, const struct rp_engine_port *local,
		   struct rp_oob *oob, const struct rp_verdict_cfg *vcfg, struct rp_pair_result *res)
{
	struct rp_pair_result again;

	attempt(next, role, local, oob, &again);
	if (again.status == RP_ST_INTERRUPTED)
		return;
	rp_retest_merge(res, &again);
	judge(vcfg, res);
}

/* Receive the peer's next NEXT message until deadline, skipping what the engine left in the stream
 * (a message of a pair that ended early on one side: it has the engine's size, not ours). 0 with
 * *msg validated, or a negative errno (logged here unless -EINTR). */
static int recv_next(struct rp_oob *oob, double deadline, struct rp_sw_msg *msg)
{
	char why[160];
	int rc;

	rp_oob_tcp_quiet(oob, true);
	do
		rc = rp_oob_recv(oob, msg, sizeof(*msg), deadline);
	while (rc == -EMSGSIZE);
	rp_oob_tcp_quiet(oob, false);
	if (rc == -EINTR)
		return rc;
	if (rc)
		return rp_error(rc, "pair: no word from %s between attempts: %s", oob->peer, strerror(-rc));
	rc = rp_sw_validate(msg, sizeof(*msg), RP_SW_NEXT, why, sizeof(why));
	if (rc)
		return rp_error(rc, "pair: bad message from %s between attempts: %s", oob->peer, why);
	return 0;
}

/* Send a NEXT message. 0 or a negative errno (logged by the channel). */
static int send_next(struct rp_oob *oob, enum rp_sw_next what, unsigned attempt_no, int qp_timeout, double deadline)
{
	struct rp_sw_msg msg;

	rp_sw_init(&msg, RP_SW_NEXT);
	msg.u.next.what = what;
	msg.u.next.attempt = what == RP_SW_NEXT_RETEST ? attempt_no : 0;
	msg.u.next.qp_timeout = what == RP_SW_NEXT_RETEST ? qp_timeout : 0;
	return rp_oob_send(oob, &msg, sizeof(msg), deadline);
}

int rp_session_writer(const struct rp_engine_cfg *cfg, const struct rp_verdict_cfg *vcfg, unsigned max_retest,
			   const struct rp_engine_port *local, struct rp_oob *oob, struct rp_pair_result *res)
{
	attempt(cfg, RP_ROLE_WRITER, local, oob, res);
	judge(vcfg, res);
	while (!rp_stop_requested()) {
		struct rp_engine_cfg next;
		struct rp_sw_msg ack;
		double deadline = rp_now() + cfg->timeout_s;

		if (!rp_retest_wanted(res, max_retest)) {
			/* the target waits for a NEXT only while retests are left (see its loop): after the
			 * last one it has gone, and a DONE would meet a closed socket */
			if (res->n_attempts < RP_MAX_ATTEMPTS && res->n_attempts <= max_retest)
				(void)send_next(oob, RP_SW_NEXT_DONE, 0, 0, deadline);
			break;
		}
		rp_retest_cfg(cfg, res, &next);
		rp_info("pair %s -> %s: %s, measuring again (attempt %u, ACK timeout %d)", res->src.device,
			res->dst.device, rp_status_code(res->status), res->n_attempts + 1, next.qp.qp_timeout);
		/* the target echoes the request once it has read everything before it: both streams are
		 * then in step for the retest's pair */
		if (send_next(oob, RP_SW_NEXT_RETEST, res->n_attempts + 1, next.qp.qp_timeout, deadline) != 0 ||
		    recv_next(oob, deadline + 1, &ack) != 0 || ack.u.next.what != RP_SW_NEXT_RETEST)
			break;   /* a target gone now cannot retest: the failure stays unconfirmed */
		retest(&next, RP_ROLE_WRITER, local, oob, vcfg, res);
	}
	rp_retest_classify(res, max_retest);
	return res->status == RP_ST_OK ? 0 : 1;
}

int rp_session_target(const struct rp_engine_cfg *cfg, const struct rp_sw_hello *hello,
			   const struct rp_engine_port *local, struct rp_oob *oob, struct rp_pair_result *res)
{
	struct rp_verdict_cfg vcfg;
	struct rp_engine_cfg next = *cfg;

	rp_session_vcfg(hello, &vcfg);
	attempt(cfg, RP_ROLE_TARGET, local, oob, res);
	judge(&vcfg, res);
	while (!rp_stop_requested() && res->n_attempts < RP_MAX_ATTEMPTS && res->n_attempts <= hello->retest) {
		struct rp_sw_msg msg;
		double deadline = rp_now() + cfg->timeout_s + 1;

		if (recv_next(oob, deadline, &msg) != 0 || msg.u.next.what != RP_SW_NEXT_RETEST ||
		    send_next(oob, RP_SW_NEXT_RETEST, msg.u.next.attempt, msg.u.next.qp_timeout, deadline) != 0)
			break;
		next.qp.qp_timeout = msg.u.next.qp_timeout;
		retest(&next, RP_ROLE_TARGET, local, oob, &vcfg, res);
	}
	rp_retest_classify(res, hello->retest);
	return res->status == RP_ST_OK ? 0 : 1;
}
