/* strbuf.c: growable text buffer, XML escaping, atomic file write (atomic_file.c); see strbuf.h. */
#include "base/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/util.h"

void rp_sb_init(struct rp_sb *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void rp_sb_fini(struct rp_sb *sb)
{
	free(sb->buf);
	memset(sb, 0, sizeof(*sb));
}

bool rp_sb_failed(const struct rp_sb *sb)
{
	return sb->oom;
}

/* Make room for n more bytes and the NUL. */
static bool sb_grow(struct rp_sb *sb, size_t n)
{
	size_t want = sb->len + n + 1, cap = sb->cap ? sb->cap : 4096;
	char *nb;

	if (sb->oom)
		return false;
	if (want <= sb->cap)
		return true;
	while (cap < want)
		cap *= 2;
	nb = realloc(sb->buf, cap);
	if (!nb) {
		sb->oom = true;
		return false;
	}
	sb->buf = nb;
	sb->cap = cap;
	return true;
}

static void sb_add(struct rp_sb *sb, const char *s, size_t n)
{
	if (!sb_grow(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void rp_sb_putn(struct rp_sb *sb, const char *s, size_t n)
{
	sb_add(sb, s, n);
}

void rp_sb_puts(struct rp_sb *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void rp_sb_printf(struct rp_sb *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->oom)
		return;
	/* straight into the room left when it fits (the writers append millions of short pieces): one
	 * formatting pass, not a measuring pass and a writing one */
	if (sb->cap > sb->len + 1) {
		va_start(ap, fmt);
		n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			sb->buf[sb->len] = '\0';
			return;
		}
		if ((size_t)n < sb->cap - sb->len) {
			sb->len += (size_t)n;
			return;
		}
		sb->buf[sb->len] = '\0';
	} else {
		va_start(ap, fmt);
		n = vsnprintf(NULL, 0, fmt, ap);
		va_end(ap);
	}
	if (n < 0 || !sb_grow(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void rp_sb_xmln(struct rp_sb *sb, const char *s, size_t max)
{
	size_t len = strnlen(s, max);

	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t n = rp_utf8_seq_len(s + i, len - i);

		switch (c) {
		case '&': rp_sb_puts(sb, "&amp;"); break;
		case '<': rp_sb_puts(sb, "&lt;"); break;
		case '>': rp_sb_puts(sb, "&gt;"); break;
		case '"': rp_sb_puts(sb, "&quot;"); break;
		case '\'': rp_sb_puts(sb, "&#39;"); break;
		default:
			if (n == 0 || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
				sb_add(sb, "?", 1);
				n = 1;
			} else {
				sb_add(sb, s + i, n);
			}
			i += n;
			continue;
		}
		i++;
	}
}

void rp_sb_xml(struct rp_sb *sb, const char *s)
{
	rp_sb_xmln(sb, s, SIZE_MAX);
}

int rp_sb_write_atomic(const struct rp_sb *sb, const char *path)
{
	if (sb->oom)
		return rp_error(-ENOMEM, "write %s: out of memory while building it", path);
	return rp_atomic_write(path, sb->buf, sb->len);
}

int rp_sb_drain(struct rp_sb *sb, struct rp_atomic_file *af)
{
	if (sb->oom)
		return -ENOMEM;
	rp_atomic_file_write(af, sb->buf, sb->len);
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
	return 0;
}
