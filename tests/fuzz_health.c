/* fuzz_health.c: libFuzzer target over the health parsers that read untrusted bytes: the
 * extended-capability walk over a config-space image (lib/discover/pcie.h), the PCIe speed parser and the
 * --max-errors parser (lib/health/counters.h). The first byte picks one. Beyond "no crash", it checks their
 * promises: a capability offset lies inside the image and holds the id asked for; a speed is a
 * positive finite number; a failed --max-errors parse leaves the limits untouched and says why. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/counters.h"
#include "discover/pcie.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_health: broken promise: %s\n", what);
		abort();
	}
}

static void fuzz_ext_cap(const uint8_t *cfg, size_t len, uint16_t id)
{
	int pos = rp_pcie_find_ext_cap(cfg, len, id);

	check(pos >= 0 || pos == -ENOENT || pos == -ENODATA, "0, -ENOENT or -ENODATA");
	if (pos >= 0) {
		check((size_t)pos >= 0x100 && (size_t)pos + 4 <= len && (pos & 3) == 0, "offset inside the image");
		check((cfg[pos] | cfg[pos + 1] << 8) == id, "the capability found has the id asked for");
	}
}

static void fuzz_text(unsigned which, const char *s)
{
	struct rp_ctr_limits lim, before;
	char err[160] = "";
	double g = -1;
	int rc;

	if (which == 1) {
		rc = rp_pcie_parse_speed(s, &g);
		check(rc == 0 || rc == -EINVAL || rc == -ENODATA, "speed: 0, -EINVAL or -ENODATA");
		check(rc ? g == -1 : (isfinite(g) && g > 0), "speed positive on success, untouched on error");
		return;
	}
	rp_ctr_limits_default(&lim);
	before = lim;
	rc = rp_ctr_limits_parse(s, &lim, err, sizeof(err));
	check(rc == 0 || rc == -EINVAL, "limits: 0 or -EINVAL");
	if (rc) {
		check(memcmp(&lim, &before, sizeof(lim)) == 0, "limits untouched on error");
		check(err[0] != '\0', "an error says why");
	} else {
		char text[256];

		rp_ctr_limits_format(&lim, text, sizeof(text));
		check(rp_ctr_limits_parse(text, &before, err, sizeof(err)) == 0, "the formatted limits parse again");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 3)
		return 0;
	if (data[0] % 3 == 0) {
		fuzz_ext_cap(data + 3, size - 3, (uint16_t)(data[1] | data[2] << 8));
		return 0;
	}
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	fuzz_text(data[0] % 3, s);
	free(s);
	return 0;
}
