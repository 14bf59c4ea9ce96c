/* nccl_rules.c: the per-release rule table; see nccl_rules.h.
 *
 * Each entry was found by reading NCCL's repository (github.com/NVIDIA/nccl) at every release tag
 * from v2.18.1-1 to v2.30.7-1 and noting the first tag where the code differs. Rules that are the
 * same in every modelled release (parameters read with strtoll(..., 0), NCCL_IB_ADDR_FAMILY
 * falling back to AF_INET, the per-device 32-port check, the NULL PCI path dereference) are not in
 * the table; the code that applies them names its source instead.
 */
#include "nccl/nccl_rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static const struct rp_nccl_rule_info rules[RP_NCCL_R_COUNT_] = {
	[RP_NCCL_R_MAX_DEVS_32] = { "max_ib_devs_32", RP_NCCL_V(2, 18, 5), 0, "src/transport/net_ib.cc",
		"MAX_IB_DEVS is 32 (16 in 2.18.1 and 2.18.3): at most that many NCCL_IB_HCA entries, and no "
		"device is opened once that many ports are taken" },
	[RP_NCCL_R_MERGE_ONE_DIGIT] = { "vf_merge_one_digit", 0, RP_NCCL_V(2, 18, 3), "src/transport/net_ib.cc",
		"ncclIbGetPciPath zeroes the function and only the last device digit of the NIC's bus id" },
	[RP_NCCL_R_NO_PATH_MERGE] = { "no_pci_path_merge", RP_NCCL_V(2, 24, 3), RP_NCCL_V(2, 27, 3),
		"src/transport/net_ib.cc",
		"ncclIbGetPciPath hands the topology the NIC's own bus id (functions and VFs not merged)" },
	[RP_NCCL_R_GID_AUTO] = { "gid_auto", RP_NCCL_V(2, 21, 5), 0, "src/transport/net_ib.cc",
		"RoCE ports walk the GID table (ncclIbGetGidIndex); NCCL_IB_GID_INDEX defaults to -1 "
		"(before: 0, used as given)" },
	[RP_NCCL_R_RANGE_SLASH_CRASH] = { "addr_range_slash_crash", RP_NCCL_V(2, 21, 5), RP_NCCL_V(2, 23, 4),
		"src/transport/net_ib.cc",
		"envIbAddrRange adds 1 to strstr()'s result before the NULL test: a range without '/' writes "
		"through a NULL pointer" },
	[RP_NCCL_R_FLID_GID] = { "flid_gid_index", RP_NCCL_V(2, 22, 3), 0, "src/transport/net_ib.cc",
		"InfiniBand ports use GID NCCL_IB_ROUTABLE_FLID_GID_INDEX (default 1) when it carries a "
		"non-zero FLID, else 0" },
	[RP_NCCL_R_TYPES_EINVAL_OK] = { "gid_types_einval_ok", RP_NCCL_V(2, 26, 2), 0, "src/transport/net_ib.cc",
		"reading gid_attrs/types/<i> failing with EINVAL (an empty entry, or a container's sysfs) no "
		"longer fails the port: the GID is skipped (ncclIbRoceGetVersionNum, commit f44ac759, "
		"v2.26.2-1; the candidate's version starts at -1 from the same release)" },
	[RP_NCCL_R_PCI_ORDER] = { "pci_order", RP_NCCL_V(2, 29, 7), 0, "src/transport/net_ib/init.cc",
		"the selected ports are sorted by the PCI address of class/infiniband/<dev>/device "
		"(NCCL_IB_DEVICE_PCI_ORDER, default 1), devices without one last" },
	[RP_NCCL_R_HCA_FIELDS] = { "hca_fields", RP_NCCL_V(2, 30, 7), 0, "src/misc/utils.cc",
		"parseStringList splits entries on ',' and fields on ':': an empty port field means every "
		"port, ':rail:plane' follow the port, names are cut at 63 characters (before: 'dev:' is "
		"port 0 and a longer name overruns NCCL's buffer)" },
	[RP_NCCL_R_MERGE_NICS_STRCMP] = { "merge_nics_null_crash", RP_NCCL_V(2, 20, 3), RP_NCCL_V(2, 24, 3),
		"src/transport/net_ib.cc",
		"ncclIbFindMatchingDev (NCCL_IB_MERGE_NICS, default 1) compares each new port's PCI path with "
		"the first port of every merged NIC that has room for a second one: a device without a device "
		"link on either side is a strcmp() of NULL" },
	[RP_NCCL_R_GPU_LINK_NVML] = { "gpu_link_nvml", RP_NCCL_V(2, 30, 7), 0, "src/graph/xml.cc",
		"ncclTopoGetPciNode takes a GPU's link from NVML's current PCIe generation and width (a GPU idle "
		"at Gen1 gets a narrow path; no answer: Gen3, x16); before, like every other device, from "
		"max_link_speed/max_link_width of the GPU and the port above it" },
	[RP_NCCL_R_AMD_SYS_BW] = { "amd_inter_cpu_bw", RP_NCCL_V(2, 19, 1), 0, "src/graph/topo.cc",
		"ncclTopoGetInterCpuBw gives AMD CPUs AMD_BW (16 GB/s); before, no AMD case: LOC_BW (5000), "
		"SYS paths are not capped" },
	[RP_NCCL_R_INTEL_SRP_ERP] = { "intel_srp_erp_bw", RP_NCCL_V(2, 26, 2), 0, "src/graph/topo.cc",
		"ncclTopoAddCpu classes Intel family 6 model >= 0xCF as Emerald Rapids (ERP_QPI_BW 40) and >= "
		"0x8F as Sapphire Rapids (SRP_QPI_BW 22); before, model >= 0x55 is SKL (10), else 6" },
};

/* Every release tag read, oldest first. */
static const uint32_t releases[] = {
	RP_NCCL_V(2, 18, 1), RP_NCCL_V(2, 18, 3), RP_NCCL_V(2, 18, 5), RP_NCCL_V(2, 18, 6),
	RP_NCCL_V(2, 19, 1), RP_NCCL_V(2, 19, 3), RP_NCCL_V(2, 19, 4), RP_NCCL_V(2, 20, 3),
	RP_NCCL_V(2, 20, 5), RP_NCCL_V(2, 21, 5), RP_NCCL_V(2, 22, 3), RP_NCCL_V(2, 23, 4),
	RP_NCCL_V(2, 24, 3), RP_NCCL_V(2, 25, 1), RP_NCCL_V(2, 26, 2), RP_NCCL_V(2, 26, 3),
	RP_NCCL_V(2, 26, 5), RP_NCCL_V(2, 26, 6), RP_NCCL_V(2, 27, 3), RP_NCCL_V(2, 27, 5),
	RP_NCCL_V(2, 27, 6), RP_NCCL_V(2, 27, 7), RP_NCCL_V(2, 28, 3), RP_NCCL_V(2, 28, 7),
	RP_NCCL_V(2, 28, 9), RP_NCCL_V(2, 29, 2), RP_NCCL_V(2, 29, 3), RP_NCCL_V(2, 29, 7),
	RP_NCCL_V(2, 30, 3), RP_NCCL_V(2, 30, 4), RP_NCCL_V(2, 30, 7),
};

const struct rp_nccl_rule_info *rp_nccl_rule_info(enum rp_nccl_rule r)
{
	return (unsigned)r < RP_NCCL_R_COUNT_ ? &rules[r] : &rules[0];
}

bool rp_nccl_rule_on(uint32_t v, enum rp_nccl_rule r)
{
	const struct rp_nccl_rule_info *info;

	if ((unsigned)r >= RP_NCCL_R_COUNT_)
		return false;
	info = &rules[r];
	return v >= info->since && (info->until == 0 || v < info->until);
}

int rp_nccl_max_devs(uint32_t v)
{
	return rp_nccl_rule_on(v, RP_NCCL_R_MAX_DEVS_32) ? 32 : 16;
}

/* One decimal field of a version: digits, at most 3 of them (NCCL's minor and patch are < 100). */
static const char *version_field(const char *s, uint32_t max, uint32_t *out_p)
{
	uint32_t v = 0;
	int n = 0;

	while (*s >= '0' && *s <= '9' && n < 4) {
		v = v * 10 + (uint32_t)(*s++ - '0');
		n++;
	}
	if (n == 0 || n == 4 || v > max)
		return NULL;
	*out_p = v;
	return s;
}

int rp_nccl_version_parse(const char *s, uint32_t *v_p)
{
	uint32_t maj, min, pat;

	if (!s)
		return -EINVAL;
	s = version_field(s, 99, &maj);
	if (!s || *s++ != '.')
		return -EINVAL;
	s = version_field(s, 99, &min);
	if (!s || *s++ != '.')
		return -EINVAL;
	s = version_field(s, 99, &pat);
	if (!s)
		return -EINVAL;
	if (*s == '-') {
		uint32_t build;

		s = version_field(s + 1, 999, &build);
		if (!s)
			return -EINVAL;
	}
	if (*s || maj == 0)
		return -EINVAL;
	*v_p = RP_NCCL_V(maj, min, pat);
	return 0;
}

void rp_nccl_version_format(uint32_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u", v / 10000, v / 100 % 100, v % 100);
}

bool rp_nccl_version_is_release(uint32_t v)
{
	for (size_t i = 0; i < RP_ARRAY_SIZE(releases); i++)
		if (releases[i] == v)
			return true;
	return false;
}

uint32_t rp_nccl_version_modelled(uint32_t v)
{
	if (v < RP_NCCL_VERSION_OLDEST)
		return 0;
	return v > RP_NCCL_VERSION_NEWEST ? RP_NCCL_VERSION_NEWEST : v;
}

bool rp_nccl_newer_than_model(uint32_t v, char *msg, size_t len)
{
	char a[16], b[16];

	if (v <= RP_NCCL_VERSION_NEWEST)
		return false;
	rp_nccl_version_format(v, a, sizeof(a));
	rp_nccl_version_format(RP_NCCL_VERSION_NEWEST, b, sizeof(b));
	if (len)
		snprintf(msg, len, "NCCL %s is newer than the newest release modelled (%s): the answer follows %s's "
			 "rules and is not exact where %s changed them", a, b, b, a);
	return true;
}
