/* report_pair_text.h: one pair as compact JSON text, written directly (no jansson tree).
 *
 * The JSON report streams every pair of a run (8.4 million at 1,024 nodes x 8 rails): building a
 * jansson object per pair (about 80 values, each allocated, then dumped) was most of rank 0's final
 * CPU time. This writes the same bytes that json_dumps(rp_report_pair_json(r), JSON_COMPACT |
 * JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) writes (the same keys in the same order, numbers as
 * jansson prints them, strings cut, repaired and escaped as lib/report/report.c does), or declines: a
 * result whose port counters list names jansson would merge or refuse (two equal names, a name or
 * reason without its NUL or not valid UTF-8) is left to the jansson path, which stays the reference
 * (tests/report/test_report_pair_text.c compares the two byte for byte).
 */
#ifndef RP_REPORT_PAIR_TEXT_H
#define RP_REPORT_PAIR_TEXT_H

#include "base/result.h"
#include "base/strbuf.h"

/* Append r's compact JSON to sb. 0 (appended; sb may have run out of memory: rp_sb_failed), or 1
 * (declined, nothing appended: encode it with rp_report_pair_json() instead). */
int rp_report_pair_text(const struct rp_pair_result *r, struct rp_sb *sb);

#endif
