/* result_pack.h: a result with its runs of zero bytes packed, the one form in which a result is
 * kept in bulk or sent between ranks: rank 0's store (lib/matrix/mx_results.h), a round's directions
 * (lib/matrix/mx_got.h), a rank's sides and the REPORT messages that carry them (lib/job/mx_wire.h).
 *
 * A struct rp_pair_result is 3.4 KB, most of it zeros (unused attempts and counters, empty reasons,
 * the ends of names): packed, a pass or an unreachable pair takes a few hundred bytes. The format: a
 * token byte t < 128 is followed by t + 1 bytes as they are; t >= 128 stands for t - 127 zero bytes.
 * Packing never takes more than RP_PACK_MAX bytes, and unpacking gives back exactly what was packed.
 * Bytes from another process are unpacked with rp_result_unpack, which refuses anything that is not
 * exactly one packed result (tokens running past the buffer, too few or too many bytes); what it
 * gives is then checked for meaning by its reader (lib/job/mx_wire.h's mx_side_ok). */
#ifndef RP_RESULT_PACK_H
#define RP_RESULT_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "base/result.h"

#define RP_PACK_MAX (sizeof(struct rp_pair_result) + sizeof(struct rp_pair_result) / 64 + 2)

/* r packed into out (room for RP_PACK_MAX bytes); returns the length. */
size_t rp_result_pack(const struct rp_pair_result *r, uint8_t *out);
/* buf[0..len) back into *r. 0, or -EPROTO (not one packed result; *r is zeroed). */
int rp_result_unpack(const uint8_t *buf, size_t len, struct rp_pair_result *r);
/* The status of the packed result buf[0..len), decoded only as far as it. 0, or -EPROTO (the tokens
 * run past the result or the buffer, or end before the status). Only rp_result_unpack says that
 * bytes are exactly one result: use this on bytes already known to be one. */
int rp_result_status(const uint8_t *buf, size_t len, int32_t *status);

/* One packed result in its own allocation. */
struct rp_packed {
	uint8_t *buf;
	uint32_t len;
	int32_t status;               /* its enum rp_status, read without unpacking it */
};

/* Keep r packed in p (whatever p held before; a zeroed p holds nothing). 0 or -ENOMEM (p unchanged). */
int rp_packed_set(struct rp_packed *p, const struct rp_pair_result *r);
/* Keep a copy of the packed result bytes[0..len) in p, as they are: bytes that rp_result_unpack
 * accepts (a side's, checked as its REPORT arrived), whose status is `status` (rp_result_status's,
 * or that of the result they pack), so that a result is not unpacked and packed again only to be
 * kept. 0, -EPROTO (len is no packed result's) or -ENOMEM (p unchanged). */
int rp_packed_set_bytes(struct rp_packed *p, const uint8_t *bytes, size_t len, int32_t status);
/* What p holds, into *r (p was set by rp_packed_set or rp_packed_set_bytes). */
void rp_packed_get(const struct rp_packed *p, struct rp_pair_result *r);
/* Free what p holds; p is empty again. */
void rp_packed_clear(struct rp_packed *p);

#endif
