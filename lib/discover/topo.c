/* topo.c: GPU-to-adapter path types as NCCL computes them; see topo.h.
 *
 * NCCL's model (src/graph/xml.cc ncclTopoGetXmlFromSys, topo.cc, paths.cc, read at 2.30.7), redone
 * here:
 * - A device's PCI path is the realpath of its sysfs directory: for an adapter,
 *   class/infiniband/<dev>/device with the function and both device digits of the bus id zeroed
 *   (ncclIbGetPciPath, NCCL_IB_MERGE_VFS=1) so that ports, functions and VFs of one NIC merge; the
 *   parents are unchanged, and a merged function that does not exist makes the NIC "not on PCI"
 *   (below); for a GPU, bus/pci/devices/<bus id>.
 * - Each PCI node's link to its parent has a bandwidth: the smaller max_link_width of the node and
 *   of the port above it (16 when 0) times the slower max_link_speed (NCCL's table, Gen3 when
 *   unknown) / 80 GB/s. A path's bandwidth is its narrowest link, the NIC's port rate included;
 *   NCCL picks a GPU's adapter by the widest path first, then the smallest type (ncclTopoGetLocal).
 * - Walking up from a device: strip one component; if it is not a BDF ("pci0000:00"), the device
 *   hangs off the CPU of its NUMA node. Strip a second; if that one is not a BDF either, same. Else
 *   that component (the upstream port of the switch above) is the parent PCI node, and the walk
 *   goes on from there. The CPU is keyed by the numa_node of the last device before it, read as
 *   text: every device whose numa_node is -1 hangs off one and the same CPU "-1", which is a
 *   different CPU from "0" (so -1 against 0 is SYS, -1 against -1 is PHB or better).
 *   A numa_node file that cannot be read counts as the endpoint's own numa_node.
 * - The path type is the worst hop: device to its PCI parent PIX, PCI node to PCI node PXB, any hop
 *   into or out of a CPU PHB, CPU to CPU SYS. So: one switch in common PIX, several PXB, through
 *   the root complex PHB, across NUMA nodes SYS.
 * - An adapter that is not on PCI (rxe/siw: no device link, or a link whose subsystem is not pci,
 *   e.g. virtio) is attached by NCCL's ncclTopoFillNet to the FIRST CPU of its topology ("Virtual
 *   NIC, no PCI device, attach to first CPU"). NCCL creates CPUs as it adds GPUs, so the first CPU
 *   is the CPU of the first GPU: here node->gpus[0] (CUDA index 0, or the lowest PCI address from a
 *   scan). Such an adapter is PHB from the GPUs under that CPU and SYS from the others.
 * - A GPU without a sysfs path hangs off CPU "-1" (NCCL: "No information on /sys").
 * - Broadcom PEX Gen4/Gen5 switches present themselves as two levels of switches; NCCL
 *   (ncclTopoFlattenBcmSwitches) removes the lower level when a switch and its child switch carry
 *   the same generation's ids (vendor:device:subsystem_vendor:subsystem_device 1000:c010:1000:axxx
 *   for Gen4 at both levels; 1000:c030:1000:0xxx above 1000:c030:1000:1xxx for Gen5), so devices
 *   below different halves of one such switch are PIX, not PXB; each switch absorbs one level
 *   only. Done here on the chain.
 * Not modelled: NVLink/C2C (not GPU-NIC PCI paths) and PXN (a route through another GPU, not a PCI
 * distance).
 */
#include "discover/topo.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover/sysfs.h"
#include "base/util.h"

#define TOPO_DEPTH 32

/* A device's ancestry as NCCL's graph has it: PCI parents bottom-up, then the CPU. */
struct topo_chain {
	int n;
	char bus[TOPO_DEPTH][RP_PCI_MAX];
	uint64_t id[TOPO_DEPTH];      /* vendor:device:subsystem_vendor:subsystem_device, as NCCL packs it */
	/* Link bandwidth (GB/s) of each node to its parent: bw[0] the device's own link, bw[k + 1]
	 * that of bus[k]; the last one leads into the CPU. */
	float bw[TOPO_DEPTH + 1];
	int cpu_numa;
};

/* PCIe per-lane rates as NCCL's kvDictPciGen has them (x100 Mbps), in its order, each entry
 * matching a text that starts with it (kvConvertToInt compares strlen(entry) characters: "2.5
 * GT/s" also takes "2.5 GT/s PCIe"); anything else (missing, unknown, "16.0 GT/s") is the Gen3
 * fallback 60. */
static int pci_gen_speed(const char *s)
{
	static const struct { const char *text; int speed; } gens[] = {
		{ "2.5 GT/s", 15 }, { "5 GT/s", 30 }, { "8 GT/s", 60 }, { "16 GT/s", 120 }, { "32 GT/s", 240 },
		{ "2.5 GT/s PCIe", 15 }, { "5.0 GT/s PCIe", 30 }, { "8.0 GT/s PCIe", 60 }, { "16.0 GT/s PCIe", 120 },
		{ "32.0 GT/s PCIe", 240 }, { "64.0 GT/s PCIe", 480 },
	};

	for (size_t i = 0; i < RP_ARRAY_SIZE(gens); i++)
		if (strncmp(s, gens[i].text, strlen(gens[i].text)) == 0)
			return gens[i].speed;
	return 60;
}

/* A GPU's own link as NCCL 2.30.7 reads it (src/graph/xml.cc ncclTopoGetPciNode with an NVML
 * device): NVML's current PCIe generation (sysfs current_link_speed: 2.5 GT/s Gen1 ... 64 GT/s
 * Gen6) as that generation's per-lane rate, Gen3's 60 when NVML has none (NCCL then writes "16.0
 * GT/s", which its table does not hold); NVML's current width, 16 when it has none. An idle GPU
 * that trained its link down to Gen1 gets a narrow path. */
static float gpu_nvml_bw(const char *root, const char *path)
{
	static const int rate[] = { 60, 15, 30, 60, 120, 240, 480 };
	char buf[64];
	float gts = 0;
	long width = 0;
	int gen = 0;

	if (rp_sysfs_readf(root, buf, sizeof(buf), "%s/current_link_speed", path) == 0 &&
	    sscanf(buf, "%f", &gts) == 1)
		gen = gts >= 64 ? 6 : gts >= 32 ? 5 : gts >= 16 ? 4 : gts >= 8 ? 3 : gts >= 5 ? 2 : gts > 0 ? 1 : 0;
	if (rp_sysfs_readf(root, buf, sizeof(buf), "%s/current_link_width", path) == 0)
		width = strtol(buf, NULL, 0);
	if (width <= 0)
		width = 16;
	return (float)width * (float)rate[gen] / 80.0f;
}

/* The bandwidth of the link above the PCI node at path (src/graph/xml.cc and topo.cc,
 * ncclTopoGetPciNode/ncclTopoAddPci, 2.30.7): the narrower of max_link_width here and in the port
 * above ("../"), 16 when that is 0; the slower max_link_speed of the two texts; width * speed / 80. */
static float link_bw(const char *root, const char *path)
{
	char dspeed[64] = "", pspeed[64] = "", w[32];
	float ds = 3.4e38f, ps = 3.4e38f;
	long dw = 0, pw = 0, width;

	if (rp_sysfs_readf(root, w, sizeof(w), "%s/max_link_width", path) == 0)
		dw = strtol(w, NULL, 0);
	if (rp_sysfs_readf(root, w, sizeof(w), "%s/../max_link_width", path) == 0)
		pw = strtol(w, NULL, 0);
	if (rp_sysfs_readf(root, dspeed, sizeof(dspeed), "%s/max_link_speed", path))
		dspeed[0] = '\0';
	if (rp_sysfs_readf(root, pspeed, sizeof(pspeed), "%s/../max_link_speed", path))
		pspeed[0] = '\0';
	sscanf(dspeed, "%f GT/s", &ds);
	sscanf(pspeed, "%f GT/s", &ps);
	width = dw < pw ? dw : pw;
	if (width == 0)
		width = 16;
	return (float)width * (float)pci_gen_speed(ps < ds ? pspeed : dspeed) / 80.0f;
}

static const char *const path_names[] = { "PIX", "PXB", "PHB", "SYS" };

const char *rp_path_str(enum rp_path p)
{
	if (p == RP_PATH_LOC)
		return "LOC";
	return p >= RP_PATH_PIX && p <= RP_PATH_SYS ? path_names[p] : "?";
}

int rp_path_parse(const char *s, enum rp_path *path_p)
{
	static const struct { const char *name; enum rp_path path; } names[] = {
		{ "LOC", RP_PATH_LOC }, { "NVL", RP_PATH_LOC }, { "NVB", RP_PATH_LOC }, { "C2C", RP_PATH_LOC },
		{ "PIX", RP_PATH_PIX }, { "PXB", RP_PATH_PXB }, { "PXN", RP_PATH_PXB }, { "PHB", RP_PATH_PHB },
		{ "SYS", RP_PATH_SYS },
	};
	static const enum rp_path old_levels[] = { RP_PATH_LOC, RP_PATH_PIX, RP_PATH_PXB, RP_PATH_PHB, RP_PATH_SYS };
	uint64_t v;

	if (!s)
		return -EINVAL;
	/* NCCL compares the names case-sensitively (strcmp). */
	for (size_t i = 0; i < RP_ARRAY_SIZE(names); i++) {
		if (strcmp(s, names[i].name) == 0) {
			*path_p = names[i].path;
			return 0;
		}
	}
	if (rp_parse_u64(s, 0, UINT64_MAX, true, &v))
		return -EINVAL;
	*path_p = v >= RP_ARRAY_SIZE(old_levels) ? RP_PATH_SYS : old_levels[v];
	return 0;
}

/* Cut the last component off p in place; the cut component is returned ("" when p has no '/'). */
static const char *cut_last(char *p)
{
	char *slash = strrchr(p, '/');

	if (!slash) {
		p[0] = '\0';
		return "";
	}
	*slash = '\0';
	return slash + 1;
}

/* The last component of p (p itself when it has no '/'). */
static const char *last_comp(const char *p)
{
	const char *slash = strrchr(p, '/');

	return slash ? slash + 1 : p;
}

static int read_numa(const char *root, const char *path, int fallback)
{
	char buf[32];
	int numa;

	if (rp_sysfs_readf(root, buf, sizeof(buf), "%s/numa_node", path) == 0 && rp_sysfs_parse_numa(buf, &numa) == 0)
		return numa;
	return fallback;
}

/* NCCL's 64-bit PCI id of the device at path: vendor<<48 | device<<32 | subsystem vendor<<16 |
 * subsystem device; a missing file counts 0. */
static uint64_t read_pci_id(const char *root, const char *path)
{
	static const char *const files[] = { "vendor", "device", "subsystem_vendor", "subsystem_device" };
	uint64_t id = 0;

	for (size_t i = 0; i < RP_ARRAY_SIZE(files); i++) {
		char buf[32];
		uint32_t v = 0;

		if (rp_sysfs_readf(root, buf, sizeof(buf), "%s/%s", path, files[i]) || rp_sysfs_parse_hex(buf, 0xffff, &v))
			v = 0;
		id = id << 16 | v;
	}
	return id;
}

/* The Broadcom PEX generation of a switch id at a level (0 the upper switch, 1 the lower), or 0. */
static int bcm_gen(uint64_t id, int level)
{
	if ((id & 0xfffffffffffff000ULL) == 0x1000c0101000a000ULL)
		return 4;
	if ((id & 0xfffffffffffff000ULL) == (0x1000c03010000000ULL | (uint64_t)level * 0x1000))
		return 5;
	return 0;
}

/* Remove the lower level of each Broadcom two-level switch from the chain (see the head comment).
 * ncclTopoFlattenBcmSwitches (src/graph/topo.cc) visits switches top-down and marks each one it
 * has visited (device |= 0xffff), so a switch absorbs at most one level: in a cascade T > S1 > S2
 * > S3, T absorbs S1 and S2 absorbs S3. */
static void chain_flatten_bcm(struct topo_chain *c)
{
	int k = c->n - 1;

	while (k > 0) {
		int gen = bcm_gen(c->id[k], 0);

		if (!gen || bcm_gen(c->id[k - 1], 1) != gen) {
			k--;
			continue;
		}
		/* Drop bus[k - 1]: its child now hangs off bus[k] with its own link. */
		memmove(&c->bus[k - 1], &c->bus[k], (size_t)(c->n - k) * sizeof(c->bus[0]));
		memmove(&c->id[k - 1], &c->id[k], (size_t)(c->n - k) * sizeof(c->id[0]));
		memmove(&c->bw[k], &c->bw[k + 1], (size_t)(c->n - k) * sizeof(c->bw[0]));
		c->n--;
		k -= 2;
	}
}

/* Build the chain of a device at pci_path (relative to root), NCCL's walk. */
static void chain_build(const char *root, const char *pci_path, int own_numa, struct topo_chain *c)
{
	char p[RP_PATHBUF];

	c->n = 0;
	c->cpu_numa = -1;
	c->bw[0] = 3.4e38f;
	if (!pci_path || !pci_path[0] || rp_strlcpy(p, pci_path, sizeof(p))) {
		c->cpu_numa = -1;
		return;
	}
	c->bw[0] = link_bw(root, p);
	for (int depth = 0; depth < TOPO_DEPTH; depth++) {
		/* NCCL reads numa_node of the device whose parent it is looking for. */
		int numa = read_numa(root, p, own_numa);

		cut_last(p);
		if (!rp_sysfs_is_bdf(last_comp(p))) {
			c->cpu_numa = numa;
			return;
		}
		cut_last(p);
		if (!rp_sysfs_is_bdf(last_comp(p))) {
			c->cpu_numa = numa;
			return;
		}
		rp_strlcpy(c->bus[c->n], last_comp(p), RP_PCI_MAX);
		c->id[c->n] = read_pci_id(root, p);
		c->bw[c->n + 1] = link_bw(root, p);
		c->n++;
	}
	c->cpu_numa = own_numa;
}

static void chain_gpu(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_topo_merge *m,
		      struct topo_chain *c)
{
	chain_build(node->sysfs_root, gpu->pci_path, gpu->numa_node, c);
	if (m->gpu_link_nvml && gpu->pci_path[0])
		c->bw[0] = gpu_nvml_bw(node->sysfs_root, gpu->pci_path);
	chain_flatten_bcm(c);
}

/* NCCL's "first CPU" for a NIC not on PCI: the CPU of the first GPU (see the head comment); without
 * GPUs, the CPU of the first adapter on PCI; else "-1". */
static int first_cpu(const struct rp_node *node)
{
	struct topo_chain c;

	if (node->n_gpus > 0) {
		chain_gpu(node, &node->gpus[0], &rp_topo_merge_newest, &c);
		return c.cpu_numa;
	}
	for (size_t i = 0; i < node->n_hcas; i++) {
		if (node->hcas[i].pci[0]) {
			chain_build(node->sysfs_root, node->hcas[i].pci_path, node->hcas[i].numa_node, &c);
			return c.cpu_numa;
		}
	}
	return -1;
}

/* NCCL's PCI path for an adapter (ncclIbGetPciPath, src/transport/net_ib/init.cc 2.30.7, the same
 * from 2.18.3 to 2.23.4 and from 2.27.3 on): the function digit and, with NCCL_IB_MERGE_VFS
 * (default), both device digits zeroed, so that ports, functions and VFs of one NIC merge. The
 * merged function may not exist ("0000:06:1e.0" on a root bus gives "0000:06:00.0"); NCCL then
 * finds no pci subsystem there and attaches the NIC to the first CPU (ncclTopoFillNet). */
static bool hca_merged_path(const struct rp_node *node, const struct rp_hca *hca, const struct rp_topo_merge *m,
			    char *out, size_t len)
{
	char sub[RP_PATHBUF + 16], real[RP_PATHBUF];
	size_t n;

	if (!hca->pci[0] || !hca->pci_path[0] || rp_strlcpy(out, hca->pci_path, len))
		return false;
	n = strlen(out);
	if (n < 5 || m->off)
		return true;
	out[n - 1] = '0';
	if (m->vfs)
		out[n - 3] = '0';
	if (m->vfs && !m->one_digit)
		out[n - 4] = '0';
	if (strcmp(out, hca->pci_path) == 0)
		return true;
	snprintf(sub, sizeof(sub), "%s/subsystem", out);
	if (rp_sysfs_realpath_rel(node->sysfs_root, sub, real, sizeof(real)))
		return false;
	return strcmp(last_comp(real), "pci") == 0;
}

/* Does NCCL see this adapter (an ACTIVE port: ncclIbInitDevices lists no other)? */
static bool hca_active(const struct rp_hca *hca)
{
	for (size_t i = 0; i < hca->n_ports; i++)
		if (hca->ports[i].state == RP_PORT_ACTIVE)
			return true;
	return false;
}

/* Is the merged bus id 0000:00:00.0? NCCL's NIC node id is then 0 (NCCL_TOPO_LOCAL_NIC_ID of bus id
 * 0), the id every adapter not on PCI shares (topo.cc ncclTopoAddCpu: NCCL_TOPO_LOCAL_NIC_ID(numa,
 * 0), the numa bits masked away by NCCL_TOPO_ID): the two land on ONE NIC node, created by whichever
 * ncclTopoAddPci/ncclTopoAddCpu meets first and hanging where that one put it. */
static bool merged_is_zero(const char *merged)
{
	return strcmp(last_comp(merged), "0000:00:00.0") == 0;
}

/* The chain of the first adapter (node order) NCCL sees whose merged bus id is 0000:00:00.0 and that
 * hangs off the first CPU; false when there is none. */
static bool zero_nic_on_first_cpu(const struct rp_node *node, const struct rp_topo_merge *m, int first,
				  struct topo_chain *c)
{
	char merged[RP_PATHBUF];

	for (size_t i = 0; i < node->n_hcas; i++) {
		const struct rp_hca *h = &node->hcas[i];

		if (!hca_active(h) || !hca_merged_path(node, h, m, merged, sizeof(merged)) || !merged_is_zero(merged))
			continue;
		chain_build(node->sysfs_root, merged, h->numa_node, c);
		chain_flatten_bcm(c);
		if (c->cpu_numa == first)
			return true;
	}
	return false;
}

/* Does NCCL see an adapter that is not on PCI? */
static bool any_nic_off_pci(const struct rp_node *node, const struct rp_topo_merge *m)
{
	char merged[RP_PATHBUF];

	for (size_t i = 0; i < node->n_hcas; i++)
		if (hca_active(&node->hcas[i]) && !hca_merged_path(node, &node->hcas[i], m, merged, sizeof(merged)))
			return true;
	return false;
}

/* An adapter's place in NCCL's graph. Not on PCI: the shared NIC node under the first CPU, linked
 * at LOC_BW, unless an adapter merged to 0000:00:00.0 under that same CPU created the node first
 * (its PCI node sorts before the "nic" one there): then that adapter's chain. Merged to
 * 0000:00:00.0 with an adapter off PCI present and its own CPU another one: the node the first
 * CPU's "nic" made, as if off PCI. */
static void chain_hca(const struct rp_node *node, const struct rp_hca *hca, const struct rp_topo_merge *m,
		      struct topo_chain *c)
{
	char merged[RP_PATHBUF];
	int first;

	if (!hca_merged_path(node, hca, m, merged, sizeof(merged))) {
		first = first_cpu(node);
		if (zero_nic_on_first_cpu(node, m, first, c))
			return;
		c->n = 0;
		c->bw[0] = 3.4e38f;
		c->cpu_numa = first;
		return;
	}
	chain_build(node->sysfs_root, merged, hca->numa_node, c);
	chain_flatten_bcm(c);
	if (merged_is_zero(merged) && any_nic_off_pci(node, m) && c->cpu_numa != (first = first_cpu(node))) {
		c->n = 0;
		c->bw[0] = 3.4e38f;
		c->cpu_numa = first;
	}
}

/* The port rate NCCL gives the NIC's network link, GB/s (Mbps / 8000): the fastest usable port;
 * no limit when unknown. */
static float hca_net_bw(const struct rp_hca *hca)
{
	double best = 0;

	for (size_t i = 0; i < hca->n_ports; i++)
		if (hca->ports[i].state == RP_PORT_ACTIVE && hca->ports[i].rate_gbps > best)
			best = hca->ports[i].rate_gbps;
	return best > 0 ? (float)(best * 1000.0 / 8000.0) : 3.4e38f;
}

/* The smallest of c->bw[from..to]. */
static float chain_min_bw(const struct topo_chain *c, int from, int to)
{
	float m = 3.4e38f;

	for (int i = from; i <= to && i <= c->n; i++)
		if (c->bw[i] < m)
			m = c->bw[i];
	return m;
}

const struct rp_topo_merge rp_topo_merge_newest = {
	.off = false, .one_digit = false, .vfs = true, .gpu_link_nvml = true, .version = 0,
};

float rp_topo_path_bw(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_hca *hca)
{
	return rp_topo_path_bw_m(node, gpu, hca, &rp_topo_merge_newest);
}

float rp_topo_path_bw_m(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_hca *hca,
			const struct rp_topo_merge *m)
{
	struct topo_chain g, h;
	struct rp_topo_cpu cpu;
	float bw = hca_net_bw(hca), up;

	chain_gpu(node, gpu, m, &g);
	chain_hca(node, hca, m, &h);
	for (int i = 0; i < g.n; i++) {
		for (int j = 0; j < h.n; j++) {
			if (strcmp(g.bus[i], h.bus[j]) == 0) {
				up = chain_min_bw(&g, 0, i);
				bw = up < bw ? up : bw;
				up = chain_min_bw(&h, 0, j);
				return up < bw ? up : bw;
			}
		}
	}
	up = chain_min_bw(&g, 0, g.n);
	bw = up < bw ? up : bw;
	up = chain_min_bw(&h, 0, h.n);
	bw = up < bw ? up : bw;
	if (g.cpu_numa != h.cpu_numa) {
		/* ncclTopoConnectCpus: every CPU pair linked at ncclTopoGetInterCpuBw's figure. */
		rp_topo_cpu_read(node->sysfs_root, m->version, &cpu);
		if (bw > cpu.sys_bw)
			bw = cpu.sys_bw;
	}
	return bw;
}

enum rp_path rp_topo_path(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_hca *hca)
{
	return rp_topo_path_m(node, gpu, hca, &rp_topo_merge_newest);
}

enum rp_path rp_topo_path_m(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_hca *hca,
			    const struct rp_topo_merge *m)
{
	struct topo_chain g, h;

	chain_gpu(node, gpu, m, &g);
	chain_hca(node, hca, m, &h);
	if (g.cpu_numa != h.cpu_numa)
		return RP_PATH_SYS;
	for (int i = 0; i < g.n; i++)
		for (int j = 0; j < h.n; j++)
			if (strcmp(g.bus[i], h.bus[j]) == 0)
				return i == 0 && j == 0 ? RP_PATH_PIX : RP_PATH_PXB;
	return RP_PATH_PHB;
}

size_t rp_topo_nearest(const struct rp_node *node, const struct rp_gpu *gpu, size_t *idx_out, size_t max)
{
	return rp_topo_nearest_m(node, gpu, &rp_topo_merge_newest, idx_out, max);
}

size_t rp_topo_nearest_m(const struct rp_node *node, const struct rp_gpu *gpu, const struct rp_topo_merge *m,
			 size_t *idx_out, size_t max)
{
	enum rp_path best = RP_PATH_SYS;
	float best_bw = 0;
	bool any_usable = false;
	size_t n = 0;

	for (size_t i = 0; i < node->n_hcas; i++)
		any_usable = any_usable || !node->hcas[i].unusable_reason[0];
	/* ncclTopoGetLocal (src/graph/topo.cc, 2.30.7): the widest path first, then the smallest type. */
	for (size_t pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < node->n_hcas; i++) {
			enum rp_path p;
			float bw;

			if (any_usable && node->hcas[i].unusable_reason[0])
				continue;
			p = rp_topo_path_m(node, gpu, &node->hcas[i], m);
			bw = rp_topo_path_bw_m(node, gpu, &node->hcas[i], m);
			if (pass == 0) {
				if (bw > best_bw || (bw == best_bw && p < best)) {
					best_bw = bw;
					best = p;
				}
			} else if (p == best && bw == best_bw) {
				if (n < max)
					idx_out[n] = i;
				n++;
			}
		}
	}
	return n;
}

int rp_topo_nearest_gpu(const struct rp_node *node, const struct rp_hca *hca, enum rp_path *path_p)
{
	return rp_topo_nearest_gpu_m(node, hca, &rp_topo_merge_newest, path_p);
}

int rp_topo_nearest_gpu_m(const struct rp_node *node, const struct rp_hca *hca, const struct rp_topo_merge *m,
			  enum rp_path *path_p)
{
	enum rp_path best = RP_PATH_SYS;
	float best_bw = 0;
	int pos = -1;

	/* ncclTopoGetLocal from the NIC's side: the widest path, then the smallest type. */
	for (size_t g = 0; g < node->n_gpus; g++) {
		const struct rp_gpu *gpu = &node->gpus[g];
		enum rp_path p;
		float bw;

		if (gpu->index < 0)
			continue;
		p = rp_topo_path_m(node, gpu, hca, m);
		bw = rp_topo_path_bw_m(node, gpu, hca, m);
		if (pos < 0 || bw > best_bw || (bw == best_bw && (p < best || (p == best && gpu->index < node->gpus[pos].index)))) {
			best = p;
			best_bw = bw;
			pos = (int)g;
		}
	}
	if (pos >= 0 && path_p)
		*path_p = best;
	return pos;
}
