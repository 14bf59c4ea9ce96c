/* topo_cpu.c: NCCL's CPU classes and inter-CPU bandwidth; see topo_cpu.h. */
#include "discover/topo_cpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <jansson.h>

#include "discover/sysfs.h"

/* NCCL's figures, GB/s (src/graph/topo.h). */
#define BW_LOC 5000.0f
#define BW_P9 32.0f
#define BW_ARM 6.0f
#define BW_AMD 16.0f
#define BW_INTEL_BDW 6.0f
#define BW_INTEL_SKL 10.0f
#define BW_INTEL_SRP 22.0f
#define BW_INTEL_ERP 40.0f
#define BW_ZPI 6.0f
#define BW_YONGFENG 9.0f

/* The first release with AMD's own figure (before: as local), and with the Sapphire/Emerald
 * Rapids classes (before: SKL for model >= 0x55, else 6): nccl_rules.c's amd_inter_cpu_bw and
 * intel_srp_erp_bw (test_topo_cpu checks that they agree). */
#define V_AMD 21901u      /* 2.19.1 */
#define V_SRP_ERP 22602u  /* 2.26.2 */

/* NCCL's class and figure for cpu->arch/vendor/family/model under release version (0: newest). */
static void classify(struct rp_topo_cpu *cpu, uint32_t version)
{
	bool newest = version == 0;

	if (strcmp(cpu->arch, "ppc64") == 0) {
		cpu->cls = "power";
		cpu->sys_bw = BW_P9;
	} else if (strcmp(cpu->arch, "arm64") == 0) {
		cpu->cls = "arm";
		cpu->sys_bw = BW_ARM;
	} else if (strcmp(cpu->arch, "x86_64") != 0) {
		cpu->cls = "unknown";
		cpu->sys_bw = BW_LOC;
	} else if (strncmp(cpu->vendor, "GenuineIntel", 12) == 0) {
		/* kvDictCpuVendor is matched by prefix (xml.h kvConvertToInt). */
		bool srp_erp = newest || version >= V_SRP_ERP;

		if (srp_erp && cpu->family == 6 && cpu->model >= 0xCF) {
			cpu->cls = "intel_erp";
			cpu->sys_bw = BW_INTEL_ERP;
		} else if (srp_erp && cpu->family == 6 && cpu->model >= 0x8F) {
			cpu->cls = "intel_srp";
			cpu->sys_bw = BW_INTEL_SRP;
		} else if (cpu->family == 6 && cpu->model >= 0x55) {
			cpu->cls = "intel_skl";
			cpu->sys_bw = BW_INTEL_SKL;
		} else {
			cpu->cls = "intel_bdw";
			cpu->sys_bw = BW_INTEL_BDW;
		}
	} else if (strncmp(cpu->vendor, "AuthenticAMD", 12) == 0) {
		cpu->cls = "amd";
		cpu->sys_bw = newest || version >= V_AMD ? BW_AMD : BW_LOC;
	} else if (strncmp(cpu->vendor, "CentaurHauls", 12) == 0 || strncmp(cpu->vendor, "  Shanghai  ", 12) == 0) {
		bool yongfeng = cpu->family == 7 && cpu->model == 0x5B;

		cpu->cls = yongfeng ? "zhaoxin_yongfeng" : "zhaoxin";
		cpu->sys_bw = yongfeng ? BW_YONGFENG : BW_ZPI;
	} else {
		cpu->cls = "unknown";
		cpu->sys_bw = BW_LOC;
	}
}

/* The kernel's x86 vendor numbers (arch/x86/include/asm/processor.h X86_VENDOR_*) as CPUID's
 * vendor string. */
static const char *x86_vendor_name(unsigned v)
{
	switch (v) {
	case 0:
		return "GenuineIntel";
	case 2:
		return "AuthenticAMD";
	case 5:
		return "CentaurHauls";
	case 9:
		return "HygonGenuine";
	case 10:
		return "  Shanghai  ";
	default:
		return "";
	}
}

int rp_topo_cpu_from_modalias(const char *text, uint32_t version, struct rp_topo_cpu *cpu)
{
	unsigned ven, fam, mod;
	const char *type;

	memset(cpu, 0, sizeof(*cpu));
	cpu->family = cpu->model = -1;
	if (!text || strncmp(text, "cpu:type:", 9) != 0)
		return -EINVAL;
	type = text + 9;
	if (strncmp(type, "x86", 3) == 0) {
		const char *v = strstr(type, ",ven");

		if (!v || sscanf(v, ",ven%4xfam%4xmod%4x", &ven, &fam, &mod) != 3)
			return -EINVAL;
		snprintf(cpu->arch, sizeof(cpu->arch), "x86_64");
		snprintf(cpu->vendor, sizeof(cpu->vendor), "%s", x86_vendor_name(ven));
		/* The kernel's family and model, as cpu_here() reports them too. */
		cpu->family = (int)fam;
		cpu->model = (int)mod;
	} else if (strncmp(type, "aarch64", 7) == 0 || strncmp(type, "arm64", 5) == 0) {
		snprintf(cpu->arch, sizeof(cpu->arch), "arm64");
	} else if (strncmp(type, "ppc", 3) == 0 || strncmp(type, "powerpc", 7) == 0) {
		snprintf(cpu->arch, sizeof(cpu->arch), "ppc64");
	} else {
		return -EINVAL;
	}
	classify(cpu, version);
	return 0;
}

/* This machine, as NCCL reads it: the architecture built for, and on x86 CPUID leaves 0 and 1. */
static void cpu_here(uint32_t version, struct rp_topo_cpu *cpu)
{
	memset(cpu, 0, sizeof(*cpu));
	cpu->family = cpu->model = -1;
#if defined(__x86_64__)
	{
		unsigned a, b, c, d;
		char vendor[13];

		snprintf(cpu->arch, sizeof(cpu->arch), "x86_64");
		if (__get_cpuid(0, &a, &b, &c, &d)) {
			memcpy(vendor, &b, 4);
			memcpy(vendor + 4, &d, 4);
			memcpy(vendor + 8, &c, 4);
			vendor[12] = '\0';
			snprintf(cpu->vendor, sizeof(cpu->vendor), "%s", vendor);
		}
		if (__get_cpuid(1, &a, &b, &c, &d)) {
			/* As the kernel numbers them (the modalias' figures): NCCL adds the extended
			 * family << 4 whatever the base family, which differs only above 0xf, where no
			 * class looks (Intel 6, Zhaoxin 7). The model is base + extended << 4 in both. */
			unsigned base = (a >> 8) & 0xf;

			cpu->family = (int)(base == 0xf ? base + ((a >> 20) & 0xff) : base);
			cpu->model = (int)(((a >> 4) & 0xf) + (((a >> 16) & 0xf) << 4));
		}
	}
#elif defined(__aarch64__)
	snprintf(cpu->arch, sizeof(cpu->arch), "arm64");
#elif defined(__powerpc64__)
	snprintf(cpu->arch, sizeof(cpu->arch), "ppc64");
#endif
	snprintf(cpu->source, sizeof(cpu->source), "cpuid (this machine)");
	classify(cpu, version);
}

void rp_topo_cpu_read(const char *root, uint32_t version, struct rp_topo_cpu *cpu)
{
	char buf[512];
	int rc = -ENOENT;

	/* The live /sys is this machine: CPUID, as NCCL. A tree: its modalias when it has one. */
	if (root && strcmp(root, "/sys") != 0) {
		/* The whole line is long (the feature list): only its head is needed. */
		rc = rp_sysfs_read(root, "devices/system/cpu/modalias", buf, sizeof(buf));
		if (rc == -EOVERFLOW || rc == 0) {
			buf[sizeof(buf) - 1] = '\0';
			rc = rp_topo_cpu_from_modalias(buf, version, cpu);
		}
		if (rc == 0) {
			snprintf(cpu->source, sizeof(cpu->source), "%s/devices/system/cpu/modalias", root);
			return;
		}
	}
	cpu_here(version, cpu);
	if (root && strcmp(root, "/sys") != 0)
		snprintf(cpu->source, sizeof(cpu->source), "cpuid (this machine: %s has no devices/system/cpu/modalias)",
			 root);
}

json_t *rp_topo_cpu_json(const struct rp_topo_cpu *cpu)
{
	json_t *o = json_object();
	bool ok = o != NULL;

	ok = ok && json_object_set_new(o, "arch", cpu->arch[0] ? json_string(cpu->arch) : json_null()) == 0;
	ok = ok && json_object_set_new(o, "vendor", cpu->vendor[0] ? json_string(cpu->vendor) : json_null()) == 0;
	ok = ok && json_object_set_new(o, "family", cpu->family >= 0 ? json_integer(cpu->family) : json_null()) == 0;
	ok = ok && json_object_set_new(o, "model", cpu->model >= 0 ? json_integer(cpu->model) : json_null()) == 0;
	ok = ok && json_object_set_new(o, "class", json_string(cpu->cls ? cpu->cls : "unknown")) == 0;
	ok = ok && json_object_set_new(o, "inter_cpu_bw", json_real(cpu->sys_bw)) == 0;
	ok = ok && json_object_set_new(o, "source", json_string(cpu->source)) == 0;
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
