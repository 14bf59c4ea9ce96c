/* topo_cpu.h: the CPU as NCCL's topology classes it, and the bandwidth NCCL gives the link between
 * two CPUs (NUMA nodes) of it: the figure that caps every SYS path (src/graph/topo.cc
 * ncclTopoGetInterCpuBw and ncclTopoAddCpu, the same from 2.18.1 to 2.30.7 but for the Intel
 * classes: SRP from 2.20.3, ERP from 2.23.4).
 *
 * NCCL takes the architecture it was built for and, on x86, CPUID leaves 0 and 1 of the machine it
 * runs on: the vendor string, then family and model (base plus extended fields). It gives
 * POWER 32 GB/s, ARM 6, Intel by model (family 6: model >= 0xCF ERP 40, >= 0x8F SRP 22, >= 0x55
 * SKL 10, else BDW 6), AMD 16, Zhaoxin 6 (family 7 model 0x5B Yongfeng: 9), and anything else
 * (an unknown vendor: Hygon) 5000, as if local. Its vendor match is by prefix.
 *
 * Where the CPU is read from: a --sysfs-root tree that carries devices/system/cpu/modalias (what
 * the kernel writes on x86: "cpu:type:x86,venVVVVfamFFFFmodMMMM:feature:...", on arm64
 * "cpu:type:aarch64:...") is read from there, so a tree captured on another machine is answered
 * for that machine; otherwise, and for the live /sys, the CPU rdmaprobe runs on (CPUID, as NCCL
 * does). The result says which.
 *
 * Memory: caller storage only; reads one file. Never fails: what cannot be read is this machine's.
 */
#ifndef RP_TOPO_CPU_H
#define RP_TOPO_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "discover/node.h"

struct rp_topo_cpu {
	char arch[16];                /* "x86_64", "arm64", "ppc64", or "" when unknown */
	char vendor[16];              /* x86: the CPUID vendor string ("GenuineIntel"); else "" */
	int family, model;            /* x86, as the kernel numbers them (AMD Zen 3: 25, 1); -1 unknown */
	const char *cls;              /* NCCL's class: "intel_skl", "amd", "arm", "unknown", ... */
	float sys_bw;                 /* NCCL's inter-CPU link bandwidth, GB/s */
	char source[RP_PATHBUF + 64]; /* "<root>/devices/system/cpu/modalias" or "cpuid (this machine)" */
};

/* The CPU of the machine whose sysfs is at root ("/sys" or a tree) and NCCL's inter-CPU figure for
 * it, as described above. uint32_t version: the NCCL release (the Intel SRP/ERP classes are newer
 * than 2.18); 0 = the newest. */
void rp_topo_cpu_read(const char *root, uint32_t version, struct rp_topo_cpu *cpu);

/* The same from a modalias text (for tests and trees); returns 0, or -EINVAL when it is not one. */
int rp_topo_cpu_from_modalias(const char *text, uint32_t version, struct rp_topo_cpu *cpu);

/* {"arch", "vendor", "family", "model", "class", "inter_cpu_bw", "source"} (jansson); NULL when
 * memory runs out. */
struct json_t;
struct json_t *rp_topo_cpu_json(const struct rp_topo_cpu *cpu);

#endif
