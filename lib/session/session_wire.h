/* session_wire.h: the pair listener's own messages on the TCP side channel, before and between the
 * engine's pairs (lib/engine/engine.h's messages travel in between, on the same connection):
 *
 *   writer                                  listener (target)
 *   HELLO (version, token, verdict, retest) ->                   before anything is allocated
 *                                          <- ACK (accepted, or why not)
 *   ... one pair: rp_engine_pair_run() on both sides ...
 *   NEXT (retest: again, with this ACK timeout | done) ->
 *   ... again for every retest; the listener serves them on the same connection, in --once too ...
 *
 * Every message is one fixed-size struct rp_sw_msg (magic, version, type, length), host byte order
 * like the engine's (a peer of the other byte order shows as a swapped magic and is refused), and is
 * validated with rp_sw_validate() before any field is used.
 *
 * The shared secret (--token / RDMAPROBE_TOKEN) travels in a fixed 64-byte field, zero-padded; a
 * listener without a token expects the all-zero field. It is compared in constant time over the whole
 * field and never logged.
 */
#ifndef RP_SESSION_WIRE_H
#define RP_SESSION_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RP_SW_MAGIC 0x5250484cu   /* "RPHL" */
#define RP_SW_VERSION 2   /* 2: the hello carries --interval-drop */
#define RP_TOKEN_MIN 8
#define RP_TOKEN_MAX 64

enum rp_sw_type { RP_SW_HELLO = 1, RP_SW_ACK, RP_SW_NEXT, RP_SW_TYPE_MAX_ };

/* Why a listener refused a hello (ACK.verdict). */
enum rp_sw_refusal { RP_SW_ACCEPTED = 0, RP_SW_BAD_TOKEN, RP_SW_BAD_VERSION, RP_SW_BAD_HELLO, RP_SW_REFUSAL_MAX_ };

enum rp_sw_next { RP_SW_NEXT_RETEST = 1, RP_SW_NEXT_DONE, RP_SW_NEXT_MAX_ };

struct rp_sw_hello {
	uint32_t retest;              /* the writer's --retest: at most RP_RETEST_MAX retests follow */
	uint32_t min_bw_absolute;     /* the writer's verdict (lib/verdict/verdict.h), applied by both sides */
	double min_bw;
	double outlier;
	double interval_drop;         /* warn when the slowest --interval is below this x the average */
	uint8_t token[RP_TOKEN_MAX];
};

struct rp_sw_ack {
	uint32_t verdict;             /* enum rp_sw_refusal */
};

struct rp_sw_next_msg {
	uint32_t what;                /* enum rp_sw_next */
	uint32_t attempt;             /* 1-based number of the attempt that follows (RETEST) */
	int32_t qp_timeout;           /* the ACK timeout exponent it runs with (RETEST) */
};

struct rp_sw_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;                /* enum rp_sw_type */
	uint32_t length;              /* sizeof(struct rp_sw_msg) */
	uint32_t reserved;            /* 0 */
	union {
		struct rp_sw_hello hello;
		struct rp_sw_ack ack;
		struct rp_sw_next_msg next;
	} u;
};

/* A zeroed message of type with the header filled. */
void rp_sw_init(struct rp_sw_msg *msg, enum rp_sw_type type);

/* Check a received message of len bytes that should be of type want: header (magic, byte order,
 * version, length, type, reserved) and every field of the payload (finite numbers, ranges, enums).
 * 0, -EPROTO (another version or byte order: the caller may answer BAD_VERSION) or -EBADMSG, with
 * a reason in why (may be NULL with why_len 0). Never looks at the token. Does not log. */
int rp_sw_validate(const struct rp_sw_msg *msg, size_t len, enum rp_sw_type want, char *why, size_t why_len);

/* Check a token given by the user: RP_TOKEN_MIN..RP_TOKEN_MAX printable ASCII characters, no space.
 * 0 or -EINVAL with the reason in why (which never quotes the token). */
int rp_token_check(const char *token, char *why, size_t why_len);
/* The wire field for token (NULL or "": none, the all-zero field). Call rp_token_check() first;
 * a longer token is cut at RP_TOKEN_MAX. */
void rp_token_field(const char *token, uint8_t field[RP_TOKEN_MAX]);
/* Equal fields, compared in time that depends only on RP_TOKEN_MAX. */
bool rp_token_equal(const uint8_t a[RP_TOKEN_MAX], const uint8_t b[RP_TOKEN_MAX]);

/* "wrong token", "unsupported version", ... for an ACK verdict. */
const char *rp_sw_refusal_str(uint32_t verdict);

#endif
