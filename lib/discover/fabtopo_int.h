/* fabtopo_int.h: the --topology readers' shared parts (lib/discover/fabtopo.c, fabtopo_ibnet.c). */
#ifndef RP_FABTOPO_INT_H
#define RP_FABTOPO_INT_H

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

#endif
