/* sanitize.c: valid UTF-8 without control characters; see sanitize.h. */
#include "base/sanitize.h"

#include <stdint.h>
#include <string.h>

/* The length of the well-formed UTF-8 character at s (1 to 4), or 0 when the bytes there are not
 * one (or it is a control character). Reads no further than the NUL. */
static size_t utf8_char_len(const unsigned char *s)
{
	unsigned char c = s[0];
	uint32_t cp;
	size_t n;

	if (c < 0x20 || c == 0x7f)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;   /* continuation byte, overlong lead (0xc0, 0xc1), or past U+10FFFF */
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;   /* also stops at the NUL */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;   /* overlong or out of range */
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;   /* a surrogate */
	if (cp >= 0x80 && cp <= 0x9f)
		return 0;   /* a C1 control character */
	return n;
}

size_t rp_str_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t replaced = 0;

	while (*p) {
		size_t n = utf8_char_len(p);

		if (n == 0) {
			*p++ = '?';
			replaced++;
		} else {
			p += n;
		}
	}
	return replaced;
}

size_t rp_str_sanitize_copy(char *dst, size_t dst_size, const char *src)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t out = 0, replaced = 0;

	if (dst_size == 0)
		return 0;
	while (*p) {
		size_t n = utf8_char_len(p);

		if (n == 0) {
			if (out + 1 >= dst_size)
				break;
			dst[out++] = '?';
			replaced++;
			p++;
			continue;
		}
		if (out + n >= dst_size)
			break;   /* the whole character or nothing */
		memcpy(dst + out, p, n);
		out += n;
		p += n;
	}
	dst[out] = '\0';
	return replaced;
}

bool rp_str_is_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8_char_len(p);

		if (n == 0)
			return false;
		p += n;
	}
	return true;
}
