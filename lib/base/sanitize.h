/* sanitize.h: make a string from elsewhere (a peer, a file) safe to log, print and put in JSON.
 *
 * Safe means: valid UTF-8 (no stray continuation byte, no overlong form, no surrogate, nothing past
 * U+10FFFF) and no control character (C0, DEL, C1). Every offending byte is replaced by '?', so the
 * result is never longer than the input and the caller's buffer suffices. A copy into a smaller
 * buffer is cut at a character boundary, never inside a multi-byte character.
 */
#ifndef RP_SANITIZE_H
#define RP_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>

/* Sanitise the NUL-terminated s in place; returns how many bytes were replaced. */
size_t rp_str_sanitize(char *s);
/* Copy src into dst (dst_size bytes, NUL included), sanitised and cut at a character boundary.
 * Returns how many bytes were replaced (a cut is not a replacement). dst_size 0 does nothing. */
size_t rp_str_sanitize_copy(char *dst, size_t dst_size, const char *src);
/* True when s is already safe (rp_str_sanitize would change nothing). */
bool rp_str_is_clean(const char *s);

#endif
