/* fabtopo_int.h: the --topology readers' shared parts (lib/discover/fabtopo.c, fabtopo_ibnet.c). */
#ifndef RP_FABTOPO_INT_H
#define RP_FABTOPO_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "discover/fabtopo.h"

/* Whether text is ibnetdiscover's output (its first line that is not a comment starts a node:
 * "vendid=", "switchguid=" or "Switch"). */
bool rp_fabtopo_is_ibnet(const char *text, size_t len);
/* ibnetdiscover's output as native text in *out (malloc'ed, *out_len bytes): 0, -EINVAL with err
 * naming the line, -ENOMEM. */
int rp_fabtopo_ibnet_native(const char *name, const char *text, size_t len, char **out, size_t *out_len, char *err,
			    size_t err_len);

/* "WHERE line N: " and fmt into err; returns -EINVAL. */
int rp_fabtopo_verr(char *err, size_t err_len, const char *where, unsigned line, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));
/* Grow *arr (of elem bytes, *cap of them) to hold n + 1. 0 or -ENOMEM. */
int rp_fabtopo_grow(void **arr, size_t *cap, size_t n, size_t elem);

#endif
