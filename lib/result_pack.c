/* result_pack.c: results with their zero runs packed; see result_pack.h. */
#include "result_pack.h"

#include <errno.h>
#include <stdbool.h>
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

int rp_result_unpack(const uint8_t *buf, size_t len, struct rp_pair_result *r)
{
	uint8_t *b = (uint8_t *)r;
	size_t n = sizeof(*r), i = 0, o = 0;

	while (i < len && o < n) {
		size_t t = buf[i++], k = t < 128 ? t + 1 : t - 127;

		if (k > n - o || (t < 128 && k > len - i))
			break;               /* runs past the struct or the buffer */
		if (t < 128) {
			memcpy(b + o, buf + i, k);
			i += k;
		} else {
			memset(b + o, 0, k);
		}
		o += k;
	}
	if (i != len || o != n) {
		memset(r, 0, sizeof(*r));
		return -EPROTO;
	}
	return 0;
}

int rp_packed_set(struct rp_packed *p, const struct rp_pair_result *r)
{
	uint8_t tmp[RP_PACK_MAX], *buf;
	size_t len = rp_result_pack(r, tmp);

	buf = len == p->len && p->buf ? p->buf : realloc(p->buf, len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, tmp, len);
	p->buf = buf;
	p->len = (uint32_t)len;
	p->status = (int32_t)r->status;
	return 0;
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
