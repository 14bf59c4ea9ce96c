/* strbuf.h: a growable text buffer for the report writers, with the escaping HTML and XML need,
 * and an atomic write to disk.
 *
 * Appending never fails visibly: on out-of-memory the buffer remembers it, further appends do
 * nothing, and rp_sb_write_atomic() / rp_sb_failed() report -ENOMEM. The caller owns sb and calls
 * rp_sb_fini() (safe twice).
 */
#ifndef RP_STRBUF_H
#define RP_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct rp_sb {
	char *buf;                    /* NUL-terminated when len > 0 */
	size_t len, cap;
	bool oom;
};

void rp_sb_init(struct rp_sb *sb);
void rp_sb_fini(struct rp_sb *sb);
bool rp_sb_failed(const struct rp_sb *sb);
void rp_sb_puts(struct rp_sb *sb, const char *s);
/* Append the n bytes of s (NULs included). */
void rp_sb_putn(struct rp_sb *sb, const char *s, size_t n);
void rp_sb_printf(struct rp_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s escaped for XML/HTML text and attribute values: & < > " ' as entities; bytes that are
 * not valid UTF-8 and control characters other than tab/newline become '?', so a hostile name can
 * neither close a tag nor make the document invalid. */
void rp_sb_xml(struct rp_sb *sb, const char *s);
/* rp_sb_xml() of at most max bytes of s (a fixed-size field that may lack its NUL). */
void rp_sb_xmln(struct rp_sb *sb, const char *s, size_t max);
/* Write the buffer to path with rp_atomic_write() (a new temporary beside path, fsync, rename,
 * directory fsync; "-" is standard output): the file on disk is always a whole version. 0 or a
 * negative errno (logged, naming the file and the real cause). */
int rp_sb_write_atomic(const struct rp_sb *sb, const char *path);

struct rp_atomic_file;
/* A writer that streams (one pair after another) builds a piece in sb, then moves it into af: the
 * buffer is emptied (len 0) and kept for the next piece. -ENOMEM when sb ran out of memory (nothing
 * written; the caller aborts af), else 0 (a write error stays in af->err for the commit). */
int rp_sb_drain(struct rp_sb *sb, struct rp_atomic_file *af);

#endif
