/* result_pack.c: results with their zero runs packed; see result_pack.h. */
#include "base/result_pack.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Whether any of the 8 bytes of w is zero. */
static inline bool word_has_zero(uint64_t w)
{
	return ((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull) != 0;
}

static inline uint64_t word_at(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

size_t rp_result_pack(const struct rp_pair_result *r, uint8_t *out)
{
	const uint8_t *b = (const uint8_t *)r;
	size_t n = sizeof(*r), i = 0, o = 0;

	while (i < n) {
		size_t z = 0, lit = 0;

		/* a word at a time where it can be (the same tokens as byte by byte: a result is mostly
		 * long runs of zeros and of text, and this runs for every side of every round) */
		while (i + z < n && z < 128) {
			if (z + 8 <= 128 && i + z + 8 <= n && word_at(b + i + z) == 0)
				z += 8;
			else if (b[i + z] == 0)
				z++;
			else
				break;
		}
		if (z >= 3 || i + z == n) {
			out[o++] = (uint8_t)(127 + z);
			i += z;
			continue;
		}
		/* literal bytes up to the next run of 3 zeros (or 128 bytes); runs of fewer than 3 zeros stay
		 * in them, so at most 2 bytes per 128 more than the struct itself (RP_PACK_MAX); 8 bytes
		 * without a zero start no run */
		while (i + lit < n && lit < 128) {
			if (lit + 8 <= 128 && i + lit + 8 <= n && !word_has_zero(word_at(b + i + lit)))
				lit += 8;
			else if (!(i + lit + 2 < n && b[i + lit] == 0 && b[i + lit + 1] == 0 && b[i + lit + 2] == 0))
				lit++;
			else
				break;
		}
		out[o++] = (uint8_t)(lit - 1);
		memcpy(out + o, b + i, lit);
		o += lit;
		i += lit;
	}
	return o;
}

/* The tokens of buf[0..len) into out[0..n); the first `upto` bytes of out are all a caller needs (the
 * walk stops once they are written, the rest of out untouched). Returns the bytes of out written,
 * or SIZE_MAX when the tokens are not one packed result of n bytes (running past the result or the
 * buffer; ending short of n, or leaving bytes, when the whole was asked for). */
static size_t tokens_decode(const uint8_t *buf, size_t len, uint8_t *out, size_t n, size_t upto)
{
	size_t i = 0, o = 0, zeroed = upto + 128 < n ? upto + 128 : n;

	/* zeros first, in one go (a token spans at most 128 bytes, so the walk writes no further):
	 * a zero run is then only skipped, and a literal copied a word at a time */
	memset(out, 0, zeroed);
	while (i < len && o < upto) {
		size_t t = buf[i++], k = t < 128 ? t + 1 : t - 127;

		if (k > n - o || (t < 128 && k > len - i))
			return SIZE_MAX;     /* runs past the struct or the buffer */
		if (t < 128) {
			const uint8_t *src = buf + i;
			uint8_t *dst = out + o;
			size_t m = k;

			if (m >= 8) {
				/* whole words, then the last word again where it ends (the same bytes) */
				for (; m > 8; m -= 8, src += 8, dst += 8)
					memcpy(dst, src, 8);
				memcpy(dst + m - 8, src + m - 8, 8);
			} else {
				for (; m; m--)
					*dst++ = *src++;
			}
			i += k;
		}
		o += k;
	}
	if (o < upto || (upto == n && i != len))
		return SIZE_MAX;
	return o;
}

int rp_result_unpack(const uint8_t *buf, size_t len, struct rp_pair_result *r)
{
	if (tokens_decode(buf, len, (uint8_t *)r, sizeof(*r), sizeof(*r)) == SIZE_MAX) {
		memset(r, 0, sizeof(*r));
		return -EPROTO;
	}
	return 0;
}

int rp_result_status(const uint8_t *buf, size_t len, int32_t *status)
{
	/* a token spans at most 128 bytes: decoding up to the status writes at most that much past it */
	uint8_t head[offsetof(struct rp_pair_result, status) + sizeof(enum rp_status) + 128];
	enum rp_status st;

	if (tokens_decode(buf, len, head, sizeof(struct rp_pair_result),
			  offsetof(struct rp_pair_result, status) + sizeof(st)) == SIZE_MAX)
		return -EPROTO;
	memcpy(&st, head + offsetof(struct rp_pair_result, status), sizeof(st));
	*status = (int32_t)st;
	return 0;
}

int rp_packed_set_bytes(struct rp_packed *p, const uint8_t *bytes, size_t len, int32_t status)
{
	uint8_t *buf;

	if (len == 0 || len > RP_PACK_MAX)
		return -EPROTO;
	buf = len == p->len && p->buf ? p->buf : realloc(p->buf, len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, bytes, len);
	p->buf = buf;
	p->len = (uint32_t)len;
	p->status = status;
	return 0;
}

int rp_packed_set(struct rp_packed *p, const struct rp_pair_result *r)
{
	uint8_t tmp[RP_PACK_MAX];

	return rp_packed_set_bytes(p, tmp, rp_result_pack(r, tmp), (int32_t)r->status);
}

void rp_packed_get(const struct rp_packed *p, struct rp_pair_result *r)
{
	if (rp_result_unpack(p->buf, p->len, r) != 0)
		memset(r, 0, sizeof(*r));   /* never: rp_packed_set wrote it */
}

void rp_packed_clear(struct rp_packed *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}
