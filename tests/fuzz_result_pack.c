/* fuzz_result_pack.c: libFuzzer target over the packed-result reader, which takes bytes from other
 * ranks (a REPORT's sides, lib/job/mx_wire.h). Beyond "no crash, no read or write outside the buffers",
 * it checks the promises of lib/base/result_pack.h: unpack accepts exactly one packed result or zeroes
 * its output; what it accepts packs and unpacks back to the same struct; the status read without
 * unpacking is the unpacked one's whenever unpack accepts, and the partial decode never accepts a
 * buffer whose tokens run past it. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/result_pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_result_pack: broken promise: %s\n", what);
		abort();
	}
}

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rp_pair_result r, again;
	static uint8_t packed[RP_PACK_MAX];
	/* a copy of exactly size bytes, so that any read past them is ASan's to see */
	uint8_t *buf = malloc(size ? size : 1);
	int32_t st = -1;
	int rc, src;

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	memset(&r, 0x5a, sizeof(r));
	rc = rp_result_unpack(buf, size, &r);
	src = rp_result_status(buf, size, &st);
	check(rc == 0 || rc == -EPROTO, "unpack: 0 or -EPROTO");
	check(src == 0 || src == -EPROTO, "status: 0 or -EPROTO");
	if (rc != 0) {
		check(all_zero(&r, sizeof(r)), "a refused buffer leaves the result zeroed");
	} else {
		size_t len = rp_result_pack(&r, packed);

		check(len <= RP_PACK_MAX, "a pack fits RP_PACK_MAX");
		check(rp_result_unpack(packed, len, &again) == 0, "what was accepted packs into what unpacks");
		check(memcmp(&r, &again, sizeof(r)) == 0, "and unpacks back to the same bytes");
		check(src == 0 && st == (int32_t)r.status, "the status read alone is the unpacked one's");
	}
	free(buf);
	return 0;
}
