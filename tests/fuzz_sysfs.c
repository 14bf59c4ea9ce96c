/* fuzz_sysfs.c: libFuzzer target over every sysfs parser (lib/discover/sysfs.h). The first byte picks the
 * parser, the rest is the file text. Beyond "no crash", it checks what each parser promises: on
 * success the output is well-formed (and round-trips where there is a canonical form), on failure the
 * output is untouched. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover/sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_sysfs: broken promise: %s\n", what);
		abort();
	}
}

/* A parser's return is 0 or a negative errno of the documented kinds. */
static void check_rc(int rc)
{
	check(rc == 0 || rc == -EINVAL || rc == -ERANGE, "return code is 0, -EINVAL or -ERANGE");
}

static void fuzz_one(unsigned which, const char *s)
{
	char text[32], small[4], pci[RP_PCI_MAX], pci2[RP_PCI_MAX], guid_text[20], out[RP_NAME_MAX];
	uint8_t raw[16], raw2[16];
	char gid_text[RP_GID_TEXT];
	enum rp_link_layer ll = RP_LL_UNKNOWN;
	enum rp_gid_type gt = RP_GID_TYPE_NONE;
	uint64_t guid = 0;
	uint32_t u = 12345;
	double g = -1;
	int v = -7, rc;

	switch (which % 14) {
	case 0:
		rc = rp_sysfs_parse_state(s, &v);
		check_rc(rc);
		check(rc ? v == -7 : v >= 0 && v <= 255, "state in range or untouched");
		break;
	case 1:
		rc = rp_sysfs_parse_phys_state(s, &v);
		check_rc(rc);
		check(rc ? v == -7 : v >= 0 && v <= 255, "phys_state in range or untouched");
		break;
	case 2:
		memcpy(text, "keep", 5);
		rc = rp_sysfs_parse_rate(s, &g, text, sizeof(text));
		check_rc(rc);
		check(rc ? g == -1 && strcmp(text, "keep") == 0 : g >= 0 && strlen(text) < sizeof(text),
		      "rate well-formed or untouched");
		rc = rp_sysfs_parse_rate(s, &g, small, sizeof(small));
		check_rc(rc);
		check(rc || strlen(small) < sizeof(small), "rate text fits a small buffer");
		break;
	case 3:
		rc = rp_sysfs_parse_link_layer(s, &ll);
		check_rc(rc);
		break;
	case 4:
		rc = rp_sysfs_parse_lid(s, &u);
		check_rc(rc);
		check(!rc || u == 12345 || s[0] != '\0', "lid from non-empty text");
		break;
	case 5:
		memset(raw, 0x5a, sizeof(raw));
		rc = rp_sysfs_parse_gid(s, raw);
		check_rc(rc);
		if (rc == 0) {
			/* The canonical text parses back to the same bytes. */
			rp_sysfs_gid_to_text(raw, gid_text);
			check(strlen(gid_text) == RP_GID_TEXT - 1, "GID text is 39 characters");
			check(rp_sysfs_parse_gid(gid_text, raw2) == 0 && memcmp(raw, raw2, 16) == 0, "GID round trip");
		} else {
			for (int i = 0; i < 16; i++)
				check(raw[i] == 0x5a, "GID untouched on error");
		}
		break;
	case 6:
		rc = rp_sysfs_parse_gid_type(s, &gt);
		check_rc(rc);
		check(rc ? gt == RP_GID_TYPE_NONE : gt == RP_GID_TYPE_IB_ROCE_V1 || gt == RP_GID_TYPE_ROCE_V2,
		      "GID type");
		break;
	case 7:
		rc = rp_sysfs_parse_ndev(s, out, sizeof(out));
		check_rc(rc);
		check(rc || (strlen(out) > 0 && strlen(out) < 16 && !strchr(out, '/')), "netdev name");
		break;
	case 8:
		rc = rp_sysfs_parse_fw_ver(s, out, sizeof(out));
		check_rc(rc);
		check(rc || strlen(out) < sizeof(out), "firmware fits");
		break;
	case 9:
		rc = rp_sysfs_parse_node_guid(s, &guid, guid_text);
		check_rc(rc);
		if (rc == 0) {
			uint64_t again = 0;
			char t2[20];

			check(rp_sysfs_parse_node_guid(guid_text, &again, t2) == 0 && again == guid, "GUID round trip");
		}
		break;
	case 10:
		rc = rp_sysfs_parse_node_type(s, &v);
		check_rc(rc);
		break;
	case 11:
		rc = rp_sysfs_parse_numa(s, &v);
		check_rc(rc);
		check(rc ? v == -7 : v >= -1 && v <= 65535, "numa in range or untouched");
		break;
	case 12:
		memcpy(pci, "keep", 5);
		rc = rp_sysfs_parse_pci(s, pci);
		check_rc(rc);
		if (rc == 0) {
			check(strlen(pci) >= 12 && strlen(pci) < RP_PCI_MAX, "PCI address length");
			check(rp_sysfs_parse_pci(pci, pci2) == 0 && strcmp(pci, pci2) == 0, "PCI round trip");
		} else {
			check(strcmp(pci, "keep") == 0, "PCI untouched on error");
		}
		(void)rp_sysfs_is_bdf(s);
		break;
	default:
		rc = rp_sysfs_parse_hex(s, 0xffffff, &u);
		check_rc(rc);
		check(rc ? u == 12345 : u <= 0xffffff, "hex in range or untouched");
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1)
		return 0;
	/* sysfs text: at most a page, NUL-terminated (a NUL inside ends it, as C strings do). */
	if (size > 4097)
		size = 4097;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	fuzz_one(data[0], s);
	free(s);
	return 0;
}
