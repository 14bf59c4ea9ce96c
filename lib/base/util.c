/* util.c: checked number parsing and string helpers; see util.h. */
#include "base/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int rp_parse_u64(const char *s, uint64_t min, uint64_t max, bool allow_hex, uint64_t *out_p)
{
	unsigned long long v;
	char *end;
	int base = 10;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	if (allow_hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		if (!isxdigit((unsigned char)s[2]))
			return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, base);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out_p = v;
	return 0;
}

int rp_parse_int(const char *s, int min, int max, int *out_p)
{
	long v;
	char *end;

	if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out_p = (int)v;
	return 0;
}

/* The multiplier for a unit suffix, or 0 when the suffix is not a unit. */
static uint64_t size_unit(const char *u)
{
	static const struct { const char *name; unsigned shift; } units[] = {
		{ "", 0 }, { "B", 0 },
		{ "K", 10 }, { "KB", 10 }, { "KiB", 10 },
		{ "M", 20 }, { "MB", 20 }, { "MiB", 20 },
		{ "G", 30 }, { "GB", 30 }, { "GiB", 30 },
		{ "T", 40 }, { "TB", 40 }, { "TiB", 40 },
	};

	for (size_t i = 0; i < RP_ARRAY_SIZE(units); i++)
		if (strcasecmp(u, units[i].name) == 0)
			return 1ULL << units[i].shift;
	return 0;
}

int rp_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out_p)
{
	unsigned long long v;
	uint64_t mult;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	mult = size_unit(end);
	if (!mult)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	v *= mult;
	if (v < min || v > max)
		return -ERANGE;
	*out_p = v;
	return 0;
}

int rp_parse_double(const char *s, double min, double max, double *out_p)
{
	double v;
	char *end;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.' || s[0] == '-'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0')
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*out_p = v;
	return 0;
}

int rp_parse_seconds(const char *s, double min, double max, double *out_p)
{
	static const struct { const char *name; double mult; } units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "m", 60 }, { "h", 3600 },
	};
	double v;
	char *end;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno == ERANGE || !isfinite(v))
		return -EINVAL;
	for (size_t i = 0; i < RP_ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].name) == 0) {
			v *= units[i].mult;
			if (v < min || v > max)
				return -ERANGE;
			*out_p = v;
			return 0;
		}
	}
	return -EINVAL;
}

int rp_strlcpy(char *dst, const char *src, size_t dst_size)
{
	size_t n = strlen(src);

	if (dst_size == 0)
		return -ENAMETOOLONG;
	if (n >= dst_size) {
		memcpy(dst, src, dst_size - 1);
		dst[dst_size - 1] = '\0';
		return -ENAMETOOLONG;
	}
	memcpy(dst, src, n + 1);
	return 0;
}

char *rp_rstrip(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

size_t rp_utf8_seq_len(const char *str, size_t avail)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;
	uint32_t cp;

	if (avail == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

double rp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
