/* mx_plain.h: a plain pass as a fixed 64-byte record instead of a 3.4 KB struct rp_pair_result:
 * the form in which the overwhelming majority of a matrix's results are sent to rank 0 (a REPORT's
 * plain side, lib/job/mx_wire.h) and kept there (lib/matrix/mx_results.h), so that rank 0 neither
 * unpacks nor compares 3.4 KB per direction.
 *
 * A plain pass: measured ok, verified, one attempt, no latency, no reverse direction, no reason
 * (nor any in the secondary or the attempt), nothing the verdict said against it but warning bits,
 * and port counters that were either not measured or judged ok with only informational counters
 * moved (classes "other" and "traffic"). The record rebuilds such a result exactly between the
 * same two endpoints, except those informational counters' names and deltas: a rebuilt side keeps
 * its judgement and n_moved, lists none, and has `brief` set (the JSON says "listed": false).
 * mx_plain_of says whether a result is one by building the record, rebuilding the result from it and
 * comparing the two byte for byte, so a field the record does not hold is never lost silently.
 */
#ifndef RP_MX_PLAIN_H
#define RP_MX_PLAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "base/result.h"

struct mx_plain {               /* 64 bytes, the same on every host of a job (fixed-width fields) */
	double gbps, gbps_min, gbps_min_at_s, elapsed_s;
	uint64_t bytes, iters;
	uint32_t msg_size;
	uint16_t warnings;
	uint8_t qp_timeout;           /* its one attempt's */
	uint8_t ctr_measured;         /* bit 0: src's counters measured (judged ok), bit 1: dst's */
	uint16_t n_moved[2];          /* src's, dst's informational counters that moved */
	uint32_t pad;
};

/* Whether r is a plain pass between src and dst (the endpoints its rebuild takes: r's own, or those a
 * store keeps); *p its record when so (else unspecified). */
bool mx_plain_of(const struct rp_pair_result *r, const struct rp_endpoint *src, const struct rp_endpoint *dst,
		 struct mx_plain *p);
/* The result p stands for between src and dst, into out. */
void mx_plain_expand(const struct mx_plain *p, const struct rp_endpoint *src, const struct rp_endpoint *dst,
		     struct rp_pair_result *out);
/* A record from another process: its fields in range (ctr_measured's two bits, the warnings known,
 * n_moved within what a side counts, the rates and times finite: a result with a rate that is not a
 * number is never plain, it goes whole). */
bool mx_plain_valid(const struct mx_plain *p);

#endif
