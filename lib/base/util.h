/* util.h: checked number parsing and small string helpers shared by every module.
 *
 * Every number a user or a file gives goes through one of these parsers: the whole string must be
 * consumed, the value must be in range, and nothing is silently rounded or clamped. Each returns 0 or
 * -EINVAL / -ERANGE and leaves *out_p untouched on error; none of them logs (the caller knows what the
 * number was for and says so).
 */
#ifndef RP_UTIL_H
#define RP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define RP_NAME_MAX 64   /* device, netdev, GPU and host names */

/* Unsigned decimal (or 0x hex when allow_hex) in [min, max]. No sign, no spaces. */
int rp_parse_u64(const char *s, uint64_t min, uint64_t max, bool allow_hex, uint64_t *out_p);
int rp_parse_int(const char *s, int min, int max, int *out_p);
/* A size with an optional binary unit: 64, 64K, 1M, 2G, 1T (also KiB/MiB/GiB, k/m/g), in [min, max]. */
int rp_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out_p);
/* A finite decimal number in [min, max] (e.g. "0.9", "2.5"). */
int rp_parse_double(const char *s, double min, double max, double *out_p);
/* A duration in seconds with an optional unit: 500ms, 10s, 2m, 1.5 (seconds), in [min, max] seconds. */
int rp_parse_seconds(const char *s, double min, double max, double *out_p);

/* Copy src into dst (size dst_size), always NUL-terminated; returns -ENAMETOOLONG if it was cut. */
int rp_strlcpy(char *dst, const char *src, size_t dst_size);
/* Strip trailing whitespace (newline from sysfs) in place; returns s. */
char *rp_rstrip(char *s);
/* Length (1..4) of the valid UTF-8 sequence at s, reading at most avail bytes, or 0 when it is not
 * one (a stray or missing continuation byte, an overlong form, a surrogate, U+FFFE/U+FFFF, a code
 * point past U+10FFFF, or a sequence cut by avail). The one UTF-8 rule of the report writers. */
size_t rp_utf8_seq_len(const char *s, size_t avail);
/* Monotonic time in seconds. */
double rp_now(void);

#endif
