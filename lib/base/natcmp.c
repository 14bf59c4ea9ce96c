/* natcmp.c: natural order of names; see natcmp.h. */
#include "base/natcmp.h"

#include <stdint.h>

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Compare the digit runs at a[*i] and b[*j] by value; advance both past their runs. The zero
 * padding difference (a tie-break) goes to *pad when it is still 0. */
static int digits_cmp(const char *a, size_t *i, const char *b, size_t *j, size_t max, int *pad)
{
	size_t za = 0, zb = 0, la, lb, k;
	int first = 0;

	while (*i + za < max && a[*i + za] == '0' && *i + za + 1 < max && is_digit(a[*i + za + 1]))
		za++;
	while (*j + zb < max && b[*j + zb] == '0' && *j + zb + 1 < max && is_digit(b[*j + zb + 1]))
		zb++;
	*i += za;
	*j += zb;
	for (la = 0; *i + la < max && is_digit(a[*i + la]); la++)
		;
	for (lb = 0; *j + lb < max && is_digit(b[*j + lb]); lb++)
		;
	if (la != lb)
		return la < lb ? -1 : 1;
	for (k = 0; k < la; k++)
		if (a[*i + k] != b[*j + k]) {
			first = (unsigned char)a[*i + k] < (unsigned char)b[*j + k] ? -1 : 1;
			break;
		}
	*i += la;
	*j += lb;
	if (!*pad && za != zb)
		*pad = za < zb ? -1 : 1;
	return first;
}

int rp_natcmp_n(const char *a, const char *b, size_t max)
{
	size_t i = 0, j = 0;
	int pad = 0;

	for (;;) {
		char ca = i < max ? a[i] : '\0', cb = j < max ? b[j] : '\0';

		if (ca == '\0' || cb == '\0') {
			if (ca != cb)
				return ca == '\0' ? -1 : 1;
			return pad;
		}
		if (is_digit(ca) && is_digit(cb)) {
			int c = digits_cmp(a, &i, b, &j, max, &pad);

			if (c)
				return c;
			continue;
		}
		if (ca != cb)
			return (unsigned char)ca < (unsigned char)cb ? -1 : 1;
		i++;
		j++;
	}
}

int rp_natcmp(const char *a, const char *b)
{
	return rp_natcmp_n(a, b, SIZE_MAX);
}
