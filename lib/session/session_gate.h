/* session_gate.h: the gate of 'pair --listen': who may connect, and the hello that proves it, before
 * the listener allocates anything for a client (device, PD, MR, buffer). See session_wire.h for the
 * messages and session_run.h for what runs once a client is in.
 *
 * One client at a time is let through. A client that is not on the allow-list is closed at once; a
 * client that sends nothing, garbage, another protocol version or the wrong token within
 * auth->timeout_s of its connection is dropped; each refusal is one log line (RP_LOG_WARN) naming
 * the client's address and why, never the token; the listener then accepts the next client. A
 * client therefore holds the gate for at most auth->timeout_s.
 */
#ifndef RP_SESSION_GATE_H
#define RP_SESSION_GATE_H

#include <stdint.h>

#include "base/netacl.h"
#include "oob/oob.h"
#include "session/session_wire.h"

struct rp_session_auth {
	const struct rp_acl *allow;      /* NULL or empty: every address */
	uint8_t token[RP_TOKEN_MAX];     /* rp_token_field(); all zero: the client must send none */
	double timeout_s;                /* from a client's connection to its valid hello */
};

/* Refused clients, by reason (for tests and a summary). */
struct rp_pair_refusals {
	unsigned not_allowed, silent, garbage, version, token;
};

/* Accept clients on lfd (rp_oob_tcp_listen()) until one passes, or until deadline (INFINITY: until
 * stopped). 0 with *oob (the client's channel; close it) and its hello in *hello_p; -ETIMEDOUT
 * (nobody valid before deadline), -EINTR (a stop was requested; lib/base/stop.h), or another negative
 * errno (logged). ref may be NULL; counts are added to it. */
int rp_session_accept(int lfd, const struct rp_session_auth *auth, double deadline, struct rp_oob *oob,
		      struct rp_sw_hello *hello_p, struct rp_pair_refusals *ref);

/* Why a listener let no writer in, for its report: how long it waited (waited_s) of --wait (wait_s)
 * and the clients it refused, by cause: "no valid writer within --wait 60 s (waited 60.0 s); refused
 * 2 clients: 1 with a wrong token, 1 silent past --timeout". ref may be NULL. */
void rp_pairsrv_wait_reason(double waited_s, double wait_s, const struct rp_pair_refusals *ref, char *buf, size_t len);

/* The writer's side of the gate: send hello over oob and wait for the listener's answer until
 * deadline. 0 accepted; -EACCES (wrong token), -EPROTONOSUPPORT (another version), -EBADMSG (the
 * listener found the hello invalid, or its answer is), -ECONNRESET (closed without an answer: not
 * on its --allow list, or an older listener), -ETIMEDOUT, -EINTR. Logged once, except -EINTR. */
int rp_session_hello(struct rp_oob *oob, const struct rp_sw_hello *hello, double deadline);

#endif
