/* session_wire.c: the pair listener's hello, ack and next messages and the token; see session_wire.h. */
#include "session/session_wire.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "verdict/retest.h"

void rp_sw_init(struct rp_sw_msg *msg, enum rp_sw_type type)
{
	memset(msg, 0, sizeof(*msg));
	msg->magic = RP_SW_MAGIC;
	msg->version = RP_SW_VERSION;
	msg->type = (uint16_t)type;
	msg->length = sizeof(*msg);
}

static int bad(char *why, size_t why_len, int err, const char *what)
{
	snprintf(why, why_len, "%s", what);
	return err;
}

/* The verdict and retest settings a writer asks for: the same limits as the local options. */
static int hello_check(const struct rp_sw_hello *h, char *why, size_t why_len)
{
	if (h->retest > RP_RETEST_MAX)
		return bad(why, why_len, -EBADMSG, "hello: retest count out of range");
	if (h->min_bw_absolute > 1)
		return bad(why, why_len, -EBADMSG, "hello: threshold kind is not 0 or 1");
	if (!isfinite(h->min_bw) || h->min_bw < 0 || (!h->min_bw_absolute && h->min_bw > 1) || h->min_bw > 1e6)
		return bad(why, why_len, -EBADMSG, "hello: bandwidth threshold out of range");
	if (!isfinite(h->outlier) || h->outlier < 0 || h->outlier > 1)
		return bad(why, why_len, -EBADMSG, "hello: outlier fraction out of range");
	if (!isfinite(h->interval_drop) || h->interval_drop < 0 || h->interval_drop > 1)
		return bad(why, why_len, -EBADMSG, "hello: interval-drop fraction out of range");
	return 0;
}

static int next_check(const struct rp_sw_next_msg *n, char *why, size_t why_len)
{
	if (n->what == 0 || n->what >= RP_SW_NEXT_MAX_)
		return bad(why, why_len, -EBADMSG, "next: unknown request");
	if (n->what == RP_SW_NEXT_RETEST && (n->attempt < 2 || n->attempt > RP_MAX_ATTEMPTS))
		return bad(why, why_len, -EBADMSG, "next: attempt number out of range");
	if (n->what == RP_SW_NEXT_RETEST && (n->qp_timeout < 0 || n->qp_timeout > 31))
		return bad(why, why_len, -EBADMSG, "next: ACK timeout out of range");
	return 0;
}

int rp_sw_validate(const struct rp_sw_msg *msg, size_t len, enum rp_sw_type want, char *why, size_t why_len)
{
	if (why && why_len)
		why[0] = '\0';
	if (len != sizeof(*msg))
		return bad(why, why_len, -EBADMSG, "message of the wrong size");
	if (msg->magic == __builtin_bswap32(RP_SW_MAGIC))
		return bad(why, why_len, -EPROTO, "peer of the other byte order");
	if (msg->magic != RP_SW_MAGIC)
		return bad(why, why_len, -EBADMSG, "not a pair hello (bad magic)");
	if (msg->version != RP_SW_VERSION) {
		snprintf(why, why_len, "protocol version %u, this side speaks %u", msg->version, RP_SW_VERSION);
		return -EPROTO;
	}
	if (msg->length != sizeof(*msg))
		return bad(why, why_len, -EBADMSG, "length field does not match the message");
	if (msg->type != (uint16_t)want) {
		snprintf(why, why_len, "message type %u, expected %u", msg->type, (unsigned)want);
		return -EBADMSG;
	}
	if (msg->reserved != 0)
		return bad(why, why_len, -EBADMSG, "reserved field not zero");
	switch (want) {
	case RP_SW_HELLO:
		return hello_check(&msg->u.hello, why, why_len);
	case RP_SW_ACK:
		if (msg->u.ack.verdict >= RP_SW_REFUSAL_MAX_)
			return bad(why, why_len, -EBADMSG, "ack: unknown verdict");
		return 0;
	case RP_SW_NEXT:
		return next_check(&msg->u.next, why, why_len);
	default:
		return bad(why, why_len, -EBADMSG, "unknown message type");
	}
}

int rp_token_check(const char *token, char *why, size_t why_len)
{
	size_t n = strlen(token);

	if (why && why_len)
		why[0] = '\0';
	if (n < RP_TOKEN_MIN || n > RP_TOKEN_MAX) {
		snprintf(why, why_len, "the token must be %d to %d characters long (it has %zu)", RP_TOKEN_MIN,
			 RP_TOKEN_MAX, n);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)token[i];

		if (ch <= 0x20 || ch >= 0x7f) {
			snprintf(why, why_len, "the token may hold only printable ASCII characters, no space "
				 "(character %zu is not)", i + 1);
			return -EINVAL;
		}
	}
	return 0;
}

void rp_token_field(const char *token, uint8_t field[RP_TOKEN_MAX])
{
	memset(field, 0, RP_TOKEN_MAX);
	if (token)
		memcpy(field, token, strnlen(token, RP_TOKEN_MAX));
}

bool rp_token_equal(const uint8_t a[RP_TOKEN_MAX], const uint8_t b[RP_TOKEN_MAX])
{
	const volatile uint8_t *va = a, *vb = b;
	uint8_t diff = 0;

	/* every byte, always; volatile so the compiler cannot leave the loop at the first difference */
	for (size_t i = 0; i < RP_TOKEN_MAX; i++)
		diff |= (uint8_t)(va[i] ^ vb[i]);
	return diff == 0;
}

const char *rp_sw_refusal_str(uint32_t verdict)
{
	switch (verdict) {
	case RP_SW_ACCEPTED:
		return "accepted";
	case RP_SW_BAD_TOKEN:
		return "wrong token (--token / RDMAPROBE_TOKEN must be the same on both sides)";
	case RP_SW_BAD_VERSION:
		return "unsupported protocol version (run the same rdmaprobe version on both sides)";
	case RP_SW_BAD_HELLO:
		return "invalid hello";
	default:
		return "unknown refusal";
	}
}
