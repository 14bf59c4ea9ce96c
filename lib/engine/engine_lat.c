/* engine_lat.c: the latency ping-pong on QP 0, both sides; see engine.h.
 *
 * Round i's sequence byte: the writer sends 1..127 in the last byte of its buffer, the target echoes
 * it with the top bit set, so a side never mistakes the byte it put in its own buffer (to send it) for
 * the peer's answer, and neither value is 0, which both buffers start with. The peer's byte is written
 * by the adapter behind the compiler's back: in host memory it is read with an atomic acquire load
 * (never a plain copy the compiler may hoist out of the loop), elsewhere through the backend's read. */
#include "engine/engine.h"
#include "engine/engine_int.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "engine/verbs_ops.h"

#define ECHO_BIT 0x80
#define SPINS_PER_CHECK 1024

static uint8_t seq_of(uint64_t i)
{
	return (uint8_t)(i % 127 + 1);
}

/* Reap send completions without waiting. The number reaped, or negative on a completion error. */
static int reap_send(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	struct ibv_wc wc[RP_ENGINE_POLL_BATCH];
	int n = rp_verbs_poll_cq(ep->send_cq, RP_ENGINE_POLL_BATCH, wc);

	if (n < 0)
		return rp_engine_post_fail(ep, n, "ibv_poll_cq", res);
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			return rp_engine_wc_fail(ep, &wc[i], res);
		if (ep->lat_outstanding)
			ep->lat_outstanding--;
	}
	return n;
}

/* The last byte of the own buffer, as the peer's adapter left it. */
static int read_flag(struct rp_engine_ep *ep, uint8_t *b)
{
	size_t last = (size_t)ep->cfg.meas.msg_size - 1;

	if (strcmp(ep->buf.ops->name, "host") == 0) {
		*b = __atomic_load_n((const uint8_t *)ep->buf.addr + last, __ATOMIC_ACQUIRE);
		return 0;
	}
	return ep->buf.ops->read(&ep->buf, last, b, 1);
}

/* Wait until the last byte of the own buffer equals want (the peer's write landed), at most
 * cfg.timeout_s without an answer. */
static int wait_byte(struct rp_engine_ep *ep, uint8_t want, struct rp_pair_result *res)
{
	double deadline = 0, next_check = 0;
	unsigned spins = 0;

	for (;;) {
		uint8_t b;
		int rc = read_flag(ep, &b);

		if (rc)
			return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "read the sequence byte");
		if (b == want)
			return 0;
		if (++spins % SPINS_PER_CHECK)
			continue;
		rc = reap_send(ep, res);
		if (rc >= 0)
			rc = rp_engine_idle_check(ep, &next_check, res);
		if (rc >= 0 && ep->role == RP_ROLE_WRITER)
			rc = rp_engine_writer_tick(ep, res);
		if (rc)
			return rc;
		if (deadline == 0) {
			deadline = rp_now() + ep->cfg.timeout_s;
		} else if (rp_now() > deadline) {
			rp_pair_result_fail(res, RP_ST_TIMEOUT, "ping-pong on %s port %d: no answer in %.1f s", ep->device,
					    ep->port, ep->cfg.timeout_s);
			return rp_error(-ETIMEDOUT, "%s", res->reason);
		}
	}
}

/* One latency write: put seq in the last byte, write the buffer, signalled. */
static int lat_send(struct rp_engine_ep *ep, uint8_t seq, struct rp_pair_result *res)
{
	int rc = ep->buf.ops->write(&ep->buf, (size_t)ep->cfg.meas.msg_size - 1, &seq, 1);

	if (rc)
		return rp_engine_ep_fail(ep, res, RP_ST_SETUP, rc, "write the sequence byte");
	rc = reap_send(ep, res);
	if (rc < 0)
		return rc;
	rc = rp_engine_post_write(ep, 0, 1, true, false, res);
	if (rc == 0)
		ep->lat_outstanding++;
	return rc;
}

/* Let every signalled write complete before the buffers are reused: a completion that never comes
 * is a TIMEOUT after cfg.timeout_s without one, not a silent pass. */
static int lat_drain(struct rp_engine_ep *ep, struct rp_pair_result *res)
{
	double last = rp_now(), next_check = 0;

	while (ep->lat_outstanding > 0) {
		int n = reap_send(ep, res), rc;

		if (n < 0)
			return n;
		if (n > 0) {
			last = rp_now();
			continue;
		}
		rc = rp_engine_idle_check(ep, &next_check, res);
		if (rc)
			return rc;
		if (rp_now() - last > ep->cfg.timeout_s) {
			rp_pair_result_fail(res, RP_ST_TIMEOUT, "%u latency writes on %s port %d not completed in %.1f s",
					    ep->lat_outstanding, ep->device, ep->port, ep->cfg.timeout_s);
			return rp_error(-ETIMEDOUT, "%s", res->reason);
		}
	}
	return 0;
}

int rp_engine_lat_pingpong(struct rp_engine_ep *ep, bool writer, struct rp_pair_result *res)
{
	const struct rp_engine_meas *m = &ep->cfg.meas;
	uint64_t total = m->warmup_iters + m->iters;
	double *samples = NULL;
	int rc = 0;

	if (!ep->buf.ops->write) {
		rp_pair_result_fail(res, RP_ST_SETUP, "latency mode: %s memory cannot be written from the host",
				    ep->buf.label);
		return rp_error(-ENOTSUP, "%s", res->reason);
	}
	if (writer) {
		samples = calloc(m->iters ? m->iters : 1, sizeof(*samples));
		if (!samples) {
			rp_pair_result_fail(res, RP_ST_SETUP, "out of memory for %llu samples", (unsigned long long)m->iters);
			return rp_error(-ENOMEM, "%s", res->reason);
		}
	}
	ep->lat_outstanding = 0;
	for (uint64_t i = 0; i < total && !rc; i++) {
		uint8_t seq = seq_of(i);

		if (writer) {
			double t0 = rp_now();

			rc = lat_send(ep, seq, res);
			if (!rc)
				rc = wait_byte(ep, seq | ECHO_BIT, res);
			if (!rc && i >= m->warmup_iters)
				samples[i - m->warmup_iters] = (rp_now() - t0) * 1e6 / 2;
			if (!rc)
				ep->done++;
		} else {
			rc = wait_byte(ep, seq, res);
			if (!rc)
				rc = lat_send(ep, seq | ECHO_BIT, res);
		}
	}
	if (!rc && writer)
		rp_engine_lat_stats(samples, m->iters, &res->lat);
	free(samples);
	if (!rc)
		rc = lat_drain(ep, res);
	return rc;
}
