/* session_gate.c: the listener's gate (allow-list, hello, token) and the writer's hello; see session_gate.h. */
#include "session/session_gate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

enum gate { GATE_PASS = 0, GATE_SILENT, GATE_GARBAGE, GATE_VERSION, GATE_TOKEN, GATE_STOP };

/* Answer a refused client, briefly and best effort (it may be gone): the reason, so that an
 * operator's typo reads as one. */
static void refuse(struct rp_oob *oob, enum rp_sw_refusal why, double deadline)
{
	struct rp_sw_msg ack;

	rp_sw_init(&ack, RP_SW_ACK);
	ack.u.ack.verdict = why;
	(void)rp_oob_send(oob, &ack, sizeof(ack), deadline);
}

/* Read and judge one client's hello until deadline. Logs one line when it is refused. */
static enum gate gate_client(struct rp_oob *oob, const struct rp_session_auth *auth, double deadline,
			     struct rp_sw_hello *hello_p)
{
	struct rp_sw_msg msg, ack;
	char why[160];
	int rc;

	rp_oob_tcp_quiet(oob, true);
	memset(&msg, 0, sizeof(msg));
	rc = rp_oob_recv(oob, &msg, sizeof(msg), deadline);
	if (rc == -EINTR)
		return GATE_STOP;
	if (rc == -ETIMEDOUT) {
		rp_warn("pair listener: dropped %s: no valid hello within %.1f s", oob->peer, auth->timeout_s);
		return GATE_SILENT;
	}
	if (rc == -EMSGSIZE && msg.magic == RP_SW_MAGIC && msg.version != RP_SW_VERSION) {
		/* another release's hello has another size: its header still names the version */
		rp_warn("pair listener: refused %s: protocol version %u, this side speaks %u", oob->peer, msg.version,
			RP_SW_VERSION);
		refuse(oob, RP_SW_BAD_VERSION, deadline);
		return GATE_VERSION;
	}
	if (rc) {
		rp_warn("pair listener: dropped %s: %s", oob->peer,
			rc == -EMSGSIZE || rc == -EBADMSG ? "not a pair hello (wrong message size)" : strerror(-rc));
		return GATE_GARBAGE;
	}
	rc = rp_sw_validate(&msg, sizeof(msg), RP_SW_HELLO, why, sizeof(why));
	if (rc == -EPROTO) {
		rp_warn("pair listener: refused %s: %s", oob->peer, why);
		refuse(oob, RP_SW_BAD_VERSION, deadline);
		return GATE_VERSION;
	}
	if (rc) {
		rp_warn("pair listener: refused %s: %s", oob->peer, why);
		refuse(oob, RP_SW_BAD_HELLO, deadline);
		return GATE_GARBAGE;
	}
	if (!rp_token_equal(msg.u.hello.token, auth->token)) {
		rp_warn("pair listener: refused %s: wrong token", oob->peer);
		refuse(oob, RP_SW_BAD_TOKEN, deadline);
		return GATE_TOKEN;
	}
	rp_sw_init(&ack, RP_SW_ACK);
	ack.u.ack.verdict = RP_SW_ACCEPTED;
	rc = rp_oob_send(oob, &ack, sizeof(ack), deadline);
	if (rc == -EINTR)
		return GATE_STOP;
	if (rc) {
		rp_warn("pair listener: dropped %s: cannot answer its hello: %s", oob->peer, strerror(-rc));
		return GATE_GARBAGE;
	}
	rp_oob_tcp_quiet(oob, false);
	*hello_p = msg.u.hello;
	memset(msg.u.hello.token, 0, sizeof(msg.u.hello.token));
	memset(hello_p->token, 0, sizeof(hello_p->token));   /* checked: nobody needs it any more */
	return GATE_PASS;
}

static void count(struct rp_pair_refusals *ref, enum gate g)
{
	if (!ref)
		return;
	if (g == GATE_SILENT)
		ref->silent++;
	else if (g == GATE_GARBAGE)
		ref->garbage++;
	else if (g == GATE_VERSION)
		ref->version++;
	else if (g == GATE_TOKEN)
		ref->token++;
}

int rp_session_accept(int lfd, const struct rp_session_auth *auth, double deadline, struct rp_oob *oob,
		      struct rp_sw_hello *hello_p, struct rp_pair_refusals *ref)
{
	for (;;) {
		struct sockaddr_storage sa;
		socklen_t sa_len = 0;
		enum gate g;
		int rc = rp_oob_tcp_accept_next(lfd, deadline, oob, &sa, &sa_len);

		if (rc)
			return rc;
		if (!rp_acl_allows(auth->allow ? auth->allow : &(struct rp_acl){ .n = 0 }, (struct sockaddr *)&sa,
				   sa_len)) {
			rp_warn("pair listener: refused %s: not on the --allow list", oob->peer);
			if (ref)
				ref->not_allowed++;
			rp_oob_close(oob);
			continue;
		}
		/* the client's own deadline: a slow or silent one cannot hold the gate longer */
		g = gate_client(oob, auth, rp_now() + auth->timeout_s, hello_p);
		if (g == GATE_PASS)
			return 0;
		rp_oob_close(oob);
		if (g == GATE_STOP)
			return -EINTR;
		count(ref, g);
	}
}

void rp_pairsrv_wait_reason(double waited_s, double wait_s, const struct rp_pair_refusals *ref, char *buf, size_t len)
{
	static const char *const why[] = { "not on the --allow list", "silent past --timeout",
					   "not an rdmaprobe writer (garbage)", "another protocol version",
					   "with a wrong token" };
	unsigned n[5] = { 0 }, total = 0;
	size_t used;

	if (ref) {
		n[0] = ref->not_allowed;
		n[1] = ref->silent;
		n[2] = ref->garbage;
		n[3] = ref->version;
		n[4] = ref->token;
	}
	for (size_t i = 0; i < 5; i++)
		total += n[i];
	snprintf(buf, len, "no valid writer within --wait %.0f s (waited %.1f s); ", wait_s, waited_s);
	used = strlen(buf);
	if (!total) {
		snprintf(buf + used, len - used, "no client connected");
		return;
	}
	snprintf(buf + used, len - used, "refused %u client%s:", total, total == 1 ? "" : "s");
	for (size_t i = 0, k = 0; i < 5; i++) {
		used = strlen(buf);
		if (n[i])
			snprintf(buf + used, len - used, "%s %u %s", k++ ? "," : "", n[i], why[i]);
	}
}

int rp_session_hello(struct rp_oob *oob, const struct rp_sw_hello *hello, double deadline)
{
	struct rp_sw_msg msg;
	char why[160];
	int rc;

	rp_sw_init(&msg, RP_SW_HELLO);
	msg.u.hello = *hello;
	rc = rp_oob_send(oob, &msg, sizeof(msg), deadline);
	memset(&msg, 0, sizeof(msg));
	if (rc == -EINTR)
		return rc;
	if (rc)
		return rc;   /* logged by the channel */
	rc = rp_oob_recv(oob, &msg, sizeof(msg), deadline);
	if (rc == -EINTR)
		return rc;
	if (rc == -ETIMEDOUT)
		return rp_error(rc, "listener %s did not answer the hello in time (busy with another writer?)",
				oob->peer);
	if (rc == -ECONNRESET)
		return rp_error(rc, "listener %s closed the connection without an answer (is this host on "
				"its --allow list?)", oob->peer);
	if (rc == -EMSGSIZE && msg.magic == RP_SW_MAGIC && msg.version != RP_SW_VERSION)
		return rp_error(-EPROTONOSUPPORT, "listener %s speaks pair protocol version %u, this writer %u: "
				"run the same rdmaprobe release on both sides", oob->peer, msg.version, RP_SW_VERSION);
	if (rc)
		return rc;
	rc = rp_sw_validate(&msg, sizeof(msg), RP_SW_ACK, why, sizeof(why));
	if (rc == -EPROTO)
		return rp_error(-EPROTONOSUPPORT, "listener %s: %s", oob->peer, why);
	if (rc)
		return rp_error(rc, "listener %s answered the hello with an invalid message: %s", oob->peer, why);
	switch (msg.u.ack.verdict) {
	case RP_SW_ACCEPTED:
		return 0;
	case RP_SW_BAD_TOKEN:
		return rp_error(-EACCES, "listener %s refused this writer: %s", oob->peer,
				rp_sw_refusal_str(msg.u.ack.verdict));
	case RP_SW_BAD_VERSION:
		return rp_error(-EPROTONOSUPPORT, "listener %s refused this writer: %s", oob->peer,
				rp_sw_refusal_str(msg.u.ack.verdict));
	default:
		return rp_error(-EBADMSG, "listener %s refused this writer: %s", oob->peer,
				rp_sw_refusal_str(msg.u.ack.verdict));
	}
}
