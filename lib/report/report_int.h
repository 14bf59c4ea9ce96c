/* report_int.h: what report.c and report_csv.c share; private to lib/report. */
#ifndef RP_REPORT_INT_H
#define RP_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/result.h"

/* Append len bytes of s to out as valid UTF-8: every byte that does not start a valid sequence
 * becomes U+FFFD, and so does a control character other than tab, CR and LF when no_ctl. Returns
 * the bytes written (out has room for 3 x len). */
size_t rp_report_utf8_repair(const char *s, size_t len, bool no_ctl, char *out);

/* How many of r's attempts are real: a count from a peer is never trusted past the array. */
static inline unsigned rp_report_n_attempts(const struct rp_pair_result *r)
{
	return r->n_attempts < RP_MAX_ATTEMPTS ? r->n_attempts : RP_MAX_ATTEMPTS;
}

#endif
