/* test_topo.c: NCCL's GPU-to-adapter path types on fixture trees (same switch, two switches, same
 * root complex, other socket, a NIC not on PCI, numa_node -1), nearest adapters, NCCL_NET_GDR_LEVEL. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fixture.h"
#include "base/log.h"
#include "discover/node.h"
#include "testutil.h"
#include "nccl/nccl.h"
#include "discover/topo.h"
#include "discover/topo_cpu.h"
#include "base/util.h"

static const struct rp_gpu *gpu_by_pci(const struct rp_node *node, const char *pci)
{
	for (size_t i = 0; i < node->n_gpus; i++)
		if (strcmp(node->gpus[i].pci, pci) == 0)
			return &node->gpus[i];
	fail_msg("GPU %s not discovered", pci);
	return NULL;
}

static enum rp_path path_of(const struct rp_node *node, const char *gpu, const char *hca)
{
	const struct rp_hca *h = rp_node_find_hca(node, hca);

	if (!h)
		fail_msg("adapter %s not discovered", hca);
	return rp_topo_path(node, gpu_by_pci(node, gpu), h);
}

static void test_dgx_h100(void **state)
{
	static const char *const gpus[] = { "0000:03:00.0", "0000:04:00.0", "0000:23:00.0", "0000:24:00.0",
					    "0000:83:00.0", "0000:84:00.0", "0000:a3:00.0", "0000:a4:00.0" };
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_dgx_h100, &node);
	assert_int_equal(node.n_gpus, 8);
	assert_int_equal(node.n_hcas, 8);
	/* Every GPU: its switch's two NICs PIX, the other switch on its socket PHB, the other socket SYS. */
	for (int g = 0; g < 8; g++) {
		int sw = g / 2;

		for (int h = 0; h < 8; h++) {
			char name[16];
			enum rp_path want = h / 2 == sw ? RP_PATH_PIX : h / 4 == sw / 2 ? RP_PATH_PHB : RP_PATH_SYS;

			snprintf(name, sizeof(name), "mlx5_%d", h);
			assert_int_equal(path_of(&node, gpus[g], name), want);
		}
	}
	rp_test_discover_done(&fx, &node);
}

/* --gpu nearest: the GPU under the adapter's own switch, the lowest CUDA index of the two there,
 * never a GPU without a CUDA index, and none when no GPU has one. */
static void test_nearest_gpu(void **state)
{
	struct rp_node node;
	struct rp_fx fx;
	enum rp_path path = RP_PATH_SYS;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_dgx_h100, &node);
	assert_int_equal(node.n_gpus, 8);
	/* CUDA numbers the GPUs in reverse bus order here, so a tie must go by index, not position. */
	for (size_t g = 0; g < node.n_gpus; g++)
		node.gpus[g].index = 7 - (int)g;
	for (int h = 0; h < 8; h++) {
		char name[16];
		const struct rp_hca *hca;
		int pos;

		snprintf(name, sizeof(name), "mlx5_%d", h);
		hca = rp_node_find_hca(&node, name);
		assert_non_null(hca);
		pos = rp_topo_nearest_gpu(&node, hca, &path);
		assert_true(pos >= 0);
		assert_int_equal(path, RP_PATH_PIX);
		assert_int_equal(rp_topo_path(&node, &node.gpus[pos], hca), RP_PATH_PIX);
		for (size_t g = 0; g < node.n_gpus; g++)
			if (rp_topo_path(&node, &node.gpus[g], hca) == RP_PATH_PIX)
				assert_true(node.gpus[pos].index <= node.gpus[g].index);
	}
	/* A GPU without a CUDA index is never chosen: mlx5_0's switch then offers only the other one. */
	const struct rp_hca *hca0 = rp_node_find_hca(&node, "mlx5_0");
	int first = rp_topo_nearest_gpu(&node, hca0, NULL);

	node.gpus[first].index = -1;
	int second = rp_topo_nearest_gpu(&node, hca0, &path);
	assert_true(second >= 0 && second != first);
	assert_int_equal(path, RP_PATH_PIX);
	for (size_t g = 0; g < node.n_gpus; g++)
		node.gpus[g].index = -1;
	assert_int_equal(rp_topo_nearest_gpu(&node, hca0, NULL), -1);
	rp_test_discover_done(&fx, &node);
}

static void test_dual_socket(void **state)
{
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_dual_socket, &node);
	/* Through two switches. */
	assert_int_equal(path_of(&node, "0000:35:00.0", "mlx5_0"), RP_PATH_PXB);
	/* The second function of the same NIC merges with the first. */
	assert_int_equal(path_of(&node, "0000:35:00.0", "mlx5_1"), RP_PATH_PXB);
	/* Same root complex, no switch in common. */
	assert_int_equal(path_of(&node, "0000:17:00.0", "mlx5_0"), RP_PATH_PHB);
	/* Other socket. */
	assert_int_equal(path_of(&node, "0000:b1:00.0", "mlx5_0"), RP_PATH_SYS);
	rp_test_discover_done(&fx, &node);
}

/* A NIC not on PCI hangs off NCCL's first CPU: the CPU of the first GPU. */
static void test_nic_not_on_pci(void **state)
{
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_rxe(&fx), 0);
	/* A second GPU on another socket (lower bus number on another root: still second in PCI order). */
	assert_int_equal(rp_fx_gpu(&fx, "pci0000:80/0000:80:01.0/0000:81:00.0", 1), 0);
	{
		struct rp_discover_opts opts = { .sysfs_root = fx.root };

		assert_int_equal(rp_node_discover(&node, &opts), 0);
	}
	assert_int_equal(node.n_gpus, 2);
	assert_string_equal(node.gpus[0].pci, "0000:00:05.0");
	/* No device link (veth-backed rxe) and a link to a non-PCI device (virtio): both not on PCI. */
	assert_string_equal(rp_node_find_hca(&node, "rxe0")->pci, "");
	assert_string_equal(rp_node_find_hca(&node, "rxe1")->pci, "");
	assert_int_equal(path_of(&node, "0000:00:05.0", "rxe0"), RP_PATH_PHB);
	assert_int_equal(path_of(&node, "0000:00:05.0", "rxe1"), RP_PATH_PHB);
	assert_int_equal(path_of(&node, "0000:81:00.0", "rxe0"), RP_PATH_SYS);
	assert_int_equal(path_of(&node, "0000:81:00.0", "rxe1"), RP_PATH_SYS);
	rp_test_discover_done(&fx, &node);
}

/* numa_node -1 is a CPU of its own to NCCL ("-1"): -1 with -1 is the same CPU, -1 with 0 is not. */
static void test_numa_unknown(void **state)
{
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_0", "pci0000:00/0000:00:02.0/0000:05:00.0", -1, "1.0", NULL), 0);
	assert_int_equal(rp_fx_port(&fx, "mlx5_0", 1, &rp_fx_port_ib_ndr_active), 0);
	assert_int_equal(rp_fx_gpu(&fx, "pci0000:00/0000:00:03.0/0000:06:00.0", -1), 0);
	assert_int_equal(rp_fx_gpu(&fx, "pci0000:40/0000:40:03.0/0000:41:00.0", 0), 0);
	{
		struct rp_discover_opts opts = { .sysfs_root = fx.root };

		assert_int_equal(rp_node_discover(&node, &opts), 0);
	}
	assert_int_equal(node.hcas[0].numa_node, -1);
	assert_int_equal(path_of(&node, "0000:06:00.0", "mlx5_0"), RP_PATH_PHB);
	assert_int_equal(path_of(&node, "0000:41:00.0", "mlx5_0"), RP_PATH_SYS);
	rp_test_discover_done(&fx, &node);
}

/* NCCL takes the switch two levels up: a GPU and a NIC under the same downstream port of a switch
 * whose upstream port hangs directly off the root are PIX; one more switch level on one side is PXB. */
static void test_switch_levels(void **state)
{
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_gpu(&fx, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0", 0), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_0", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0",
				   0, "1.0", NULL), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_1",
				   "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.0/0000:06:00.0/0000:07:00.0",
				   0, "1.0", NULL), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_2", "pci0000:00/0000:00:09.0/0000:09:00.0", 0, "1.0", NULL), 0);
	{
		struct rp_discover_opts opts = { .sysfs_root = fx.root };

		assert_int_equal(rp_node_discover(&node, &opts), 0);
	}
	assert_int_equal(path_of(&node, "0000:03:00.0", "mlx5_0"), RP_PATH_PIX);
	assert_int_equal(path_of(&node, "0000:03:00.0", "mlx5_1"), RP_PATH_PXB);
	assert_int_equal(path_of(&node, "0000:03:00.0", "mlx5_2"), RP_PATH_PHB);
	rp_test_discover_done(&fx, &node);
}

/* Write NCCL's 4-part PCI id of the bridge at devices/<path>. */
static void set_ids(struct rp_fx *fx, const char *path, unsigned v, unsigned d, unsigned sv, unsigned sd)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "devices/%s/vendor", path);
	assert_int_equal(rp_fx_writef(fx, rel, "0x%04x\n", v), 0);
	snprintf(rel, sizeof(rel), "devices/%s/device", path);
	assert_int_equal(rp_fx_writef(fx, rel, "0x%04x\n", d), 0);
	snprintf(rel, sizeof(rel), "devices/%s/subsystem_vendor", path);
	assert_int_equal(rp_fx_writef(fx, rel, "0x%04x\n", sv), 0);
	snprintf(rel, sizeof(rel), "devices/%s/subsystem_device", path);
	assert_int_equal(rp_fx_writef(fx, rel, "0x%04x\n", sd), 0);
}

/* A GPU and a NIC under the two lower halves of one two-level switch: PXB for an ordinary switch,
 * PIX for a Broadcom PEX Gen5 (or Gen4) one, which NCCL flattens. */
static void test_bcm_flatten(void **state)
{
	static const char *const top = "pci0000:00/0000:00:01.0/0000:01:00.0";
	static const char *const s1 = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0";
	static const char *const s2 = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:06:00.0";
	struct rp_discover_opts opts = { 0 };
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_gpu(&fx, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/0000:04:00.0/0000:05:00.0", 0), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_0", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:06:00.0/0000:07:00.0/0000:08:00.0",
				   0, "1.0", NULL), 0);
	opts.sysfs_root = fx.root;
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_int_equal(path_of(&node, "0000:05:00.0", "mlx5_0"), RP_PATH_PXB);
	rp_node_fini(&node);

	/* Gen5: 1000:c030 with subsystem 1000:0xxx above 1000:1xxx. */
	set_ids(&fx, top, 0x1000, 0xc030, 0x1000, 0x0042);
	set_ids(&fx, s1, 0x1000, 0xc030, 0x1000, 0x1042);
	set_ids(&fx, s2, 0x1000, 0xc030, 0x1000, 0x1043);
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_int_equal(path_of(&node, "0000:05:00.0", "mlx5_0"), RP_PATH_PIX);
	rp_node_fini(&node);

	/* Only one half is a matching lower level: still two switches on the GPU's side. */
	set_ids(&fx, s1, 0x1000, 0xc030, 0x1000, 0x0042);
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_int_equal(path_of(&node, "0000:05:00.0", "mlx5_0"), RP_PATH_PXB);
	rp_node_fini(&node);

	/* Gen4: 1000:c010:1000:axxx at both levels. */
	set_ids(&fx, top, 0x1000, 0xc010, 0x1000, 0xa064);
	set_ids(&fx, s1, 0x1000, 0xc010, 0x1000, 0xa064);
	set_ids(&fx, s2, 0x1000, 0xc010, 0x1000, 0xa064);
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_int_equal(path_of(&node, "0000:05:00.0", "mlx5_0"), RP_PATH_PIX);
	rp_test_discover_done(&fx, &node);
}

/* Write {max,current}_link_width/_speed of the PCI function at devices/<path>: a link trained at
 * what it can do. */
static void set_link(struct rp_fx *fx, const char *path, int width, const char *speed)
{
	char rel[512];

	for (int cur = 0; cur < 2; cur++) {
		snprintf(rel, sizeof(rel), "devices/%s/%s_link_width", path, cur ? "current" : "max");
		assert_int_equal(rp_fx_writef(fx, rel, "%d\n", width), 0);
		snprintf(rel, sizeof(rel), "devices/%s/%s_link_speed", path, cur ? "current" : "max");
		assert_int_equal(rp_fx_writef(fx, rel, "%s\n", speed), 0);
	}
}

/* Only the current link of a function (a GPU idle at a lower speed). */
static void set_cur_link(struct rp_fx *fx, const char *path, int width, const char *speed)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "devices/%s/current_link_width", path);
	assert_int_equal(rp_fx_writef(fx, rel, "%d\n", width), 0);
	snprintf(rel, sizeof(rel), "devices/%s/current_link_speed", path);
	assert_int_equal(rp_fx_writef(fx, rel, "%s\n", speed), 0);
}

/* The topology rules of a release, as nccl_eval.c derives them (rp_nccl_topo_merge). */
static struct rp_topo_merge merge_of(uint32_t v)
{
	struct rp_nccl_env env;
	struct rp_topo_merge m;

	rp_nccl_env_default(&env);
	env.version = v;
	rp_nccl_topo_merge(&env, &m);
	return m;
}

/* src/graph/xml.cc ncclTopoGetPciNode, v2.30.7-1: a GPU's own link is NVML's current PCIe
 * generation and width (sysfs current_link_*), so a GPU idle at 2.5 GT/s x16 has a 3 GB/s link
 * and every path from it is 3; v2.30.4-1 and older read max_link_* of the GPU and its port (24 at
 * Gen4 x16). No current link at all: NCCL 2.30.7 writes "16.0 GT/s", not in its table: Gen3, x16
 * (12). The per-lane table (kvDictPciGen) is matched by prefix: "16 GT/s PCIe" is 16 GT/s.
 * Failed before: every release read the maxima (24). */
static void test_gpu_link_nvml(void **state)
{
	static const char *const rp1 = "pci0000:00/0000:00:01.0";
	static const char *const gpu = "pci0000:00/0000:00:01.0/0000:03:00.0";
	static const char *const rp2 = "pci0000:00/0000:00:02.0";
	static const char *const nic = "pci0000:00/0000:00:02.0/0000:04:00.0";
	struct rp_discover_opts opts = { 0 };
	struct rp_topo_merge m2307 = merge_of(RP_NCCL_V(2, 30, 7)), m2304 = merge_of(RP_NCCL_V(2, 30, 4));
	struct rp_node node;
	struct rp_fx fx;
	char rel[512];

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_gpu(&fx, gpu, 0), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_0", nic, 0, "1.0", NULL), 0);
	assert_int_equal(rp_fx_port(&fx, "mlx5_0", 1, &rp_fx_port_ib_ndr_active), 0);
	for (size_t i = 0; i < 4; i++)
		set_link(&fx, (const char *[]){ rp1, gpu, rp2, nic }[i], 16, "16.0 GT/s PCIe");
	set_cur_link(&fx, gpu, 16, "2.5 GT/s PCIe");
	opts.sysfs_root = fx.root;
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_true(rp_topo_path_bw_m(&node, gpu_by_pci(&node, "0000:03:00.0"), &node.hcas[0], &m2307) == 3.0f);
	assert_true(rp_topo_path_bw_m(&node, gpu_by_pci(&node, "0000:03:00.0"), &node.hcas[0], &m2304) == 24.0f);
	rp_node_fini(&node);
	snprintf(rel, sizeof(rel), "devices/%s/current_link_speed", gpu);
	assert_int_equal(rp_fx_remove(&fx, rel), 0);
	snprintf(rel, sizeof(rel), "devices/%s/current_link_width", gpu);
	assert_int_equal(rp_fx_remove(&fx, rel), 0);
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_true(rp_topo_path_bw_m(&node, gpu_by_pci(&node, "0000:03:00.0"), &node.hcas[0], &m2307) == 12.0f);
	rp_node_fini(&node);
	set_link(&fx, gpu, 16, "16 GT/s PCIe");
	set_link(&fx, nic, 16, "16 GT/s PCIe");
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_true(rp_topo_path_bw_m(&node, gpu_by_pci(&node, "0000:03:00.0"), &node.hcas[0], &m2304) == 24.0f);
	rp_test_discover_done(&fx, &node);
}

/* A GPU on NUMA 0 and three NICs on NUMA 1, all SYS, PCI links of 12, 24 and 6 GB/s. NCCL caps a
 * SYS path at its inter-CPU figure (src/graph/topo.cc ncclTopoGetInterCpuBw; CPU from CPUID, here
 * from the tree's devices/system/cpu/modalias): AMD 16 from v2.19.1-1 -> 12, 16, 6: mlx5_1 alone
 * is nearest; AMD before v2.19.1-1 (no AMD case: 5000) -> 12, 24, 6: mlx5_1; Intel Skylake (family
 * 6, model 0x55) 10 -> 10, 10, 6: mlx5_0 and mlx5_1; Sapphire Rapids (0x8F) 22 from v2.26.2-1 ->
 * mlx5_1, but 10 (SKL) in v2.25.1-1 -> both. Failed before: a fixed 10 for every CPU, so mlx5_0
 * and mlx5_1 everywhere. */
static void test_sys_bw_per_cpu(void **state)
{
	static const char *const rp0 = "pci0000:00/0000:00:01.0";
	static const char *const gpu = "pci0000:00/0000:00:01.0/0000:01:00.0";
	static const char *const rps[] = { "pci0000:80/0000:80:01.0", "pci0000:80/0000:80:02.0", "pci0000:80/0000:80:03.0" };
	static const char *const nics[] = { "pci0000:80/0000:80:01.0/0000:81:00.0", "pci0000:80/0000:80:02.0/0000:82:00.0",
					    "pci0000:80/0000:80:03.0/0000:83:00.0" };
	static const struct { const char *modalias; uint32_t v; const char *want; float bw1; } cases[] = {
		{ "cpu:type:x86,ven0002fam0019mod0011:feature:,0000", RP_NCCL_V(2, 30, 7), "mlx5_1", 16.0f },
		{ "cpu:type:x86,ven0002fam0019mod0011:feature:,0000", RP_NCCL_V(2, 19, 1), "mlx5_1", 16.0f },
		{ "cpu:type:x86,ven0002fam0019mod0011:feature:,0000", RP_NCCL_V(2, 18, 6), "mlx5_1", 24.0f },
		{ "cpu:type:x86,ven0000fam0006mod0055:feature:,0000", RP_NCCL_V(2, 30, 7), "mlx5_0 mlx5_1", 10.0f },
		{ "cpu:type:x86,ven0000fam0006mod008F:feature:,0000", RP_NCCL_V(2, 26, 2), "mlx5_1", 22.0f },
		{ "cpu:type:x86,ven0000fam0006mod008F:feature:,0000", RP_NCCL_V(2, 25, 1), "mlx5_0 mlx5_1", 10.0f },
		{ "cpu:type:aarch64:feature:,0000", RP_NCCL_V(2, 30, 7), "mlx5_0 mlx5_1 mlx5_2", 6.0f },
	};
	struct rp_discover_opts opts = { 0 };
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_gpu(&fx, gpu, 0), 0);
	set_link(&fx, rp0, 16, "16.0 GT/s PCIe");
	set_link(&fx, gpu, 16, "16.0 GT/s PCIe");
	for (int i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "mlx5_%d", i);
		assert_int_equal(rp_fx_hca(&fx, name, nics[i], 1, "1.0", NULL), 0);
		assert_int_equal(rp_fx_port(&fx, name, 1, &rp_fx_port_ib_ndr_active), 0);
		set_link(&fx, rps[i], 16, "16.0 GT/s PCIe");
		set_link(&fx, nics[i], i == 2 ? 8 : 16, i == 1 ? "16.0 GT/s PCIe" : "8.0 GT/s PCIe");
	}
	opts.sysfs_root = fx.root;
	for (size_t c = 0; c < RP_ARRAY_SIZE(cases); c++) {
		struct rp_topo_merge m = merge_of(cases[c].v);
		struct rp_topo_cpu cpu;
		char got[256] = "";
		size_t idx[4], n, at = 0;

		assert_int_equal(rp_fx_write(&fx, "devices/system/cpu/modalias", cases[c].modalias), 0);
		assert_int_equal(rp_node_discover(&node, &opts), 0);
		assert_int_equal(rp_topo_path(&node, &node.gpus[0], rp_node_find_hca(&node, "mlx5_0")), RP_PATH_SYS);
		n = rp_topo_nearest_m(&node, &node.gpus[0], &m, idx, 4);
		for (size_t i = 0; i < n && i < 4 && at < 128; i++)
			at += (size_t)snprintf(got + at, sizeof(got) - at, "%s%.*s", i ? " " : "", 32, node.hcas[idx[i]].name);
		if (strcmp(got, cases[c].want) != 0)
			fail_msg("%s, NCCL %u: nearest '%s', want '%s'", cases[c].modalias, cases[c].v, got, cases[c].want);
		assert_true(rp_topo_path_bw_m(&node, &node.gpus[0], rp_node_find_hca(&node, "mlx5_1"), &m) == cases[c].bw1);
		rp_topo_cpu_read(fx.root, cases[c].v, &cpu);
		assert_non_null(strstr(cpu.source, "devices/system/cpu/modalias"));
		rp_node_fini(&node);
	}
	rp_test_discover_done(&fx, &node);
}

/* A NIC on a root bus at 0000:00:1d.0 merges (ncclIbGetPciPath, both device digits zeroed) into
 * 0000:00:00.0, which exists (the host bridge): on PCI, NIC id 0, the id NCCL gives the node every
 * adapter off PCI shares (src/graph/topo.cc ncclTopoAddCpu and ncclTopoAddPci, 2.30.7). With rxe0
 * there, the first CPU's "nic" creates that node first (the CPU of the first GPU, NUMA 1 here), and
 * the NIC joins it: PHB from the GPU on NUMA 1, not SYS. Without an adapter off PCI it stays on its
 * own CPU (NUMA 0): SYS. Failed before: SYS in both. */
static int machine_zero_merge(struct rp_fx *fx)
{
	int rc = rp_fx_gpu(fx, "pci0000:11/0000:11:02.0/0000:15:00.0", 1);

	rc = rc ? rc : rp_fx_pci(fx, "pci0000:00/0000:00:00.0", 0x8086, 0x09a2, 0x060000, 0);
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_2", "pci0000:00/0000:00:1d.0", 0, "1.0", NULL);
	rc = rc ? rc : rp_fx_port(fx, "mlx5_2", 1, &rp_fx_port_ib_ndr_active);
	rc = rc ? rc : rp_fx_hca(fx, "rxe0", NULL, -1, "1.0", NULL);
	return rc ? rc : rp_fx_port(fx, "rxe0", 1, &rp_fx_port_eth_100_active);
}

static void test_zero_merged_nic_joins_virtual(void **state)
{
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	rp_test_discover(&fx, machine_zero_merge, &node);
	assert_int_equal(path_of(&node, "0000:15:00.0", "mlx5_2"), RP_PATH_PHB);
	assert_int_equal(path_of(&node, "0000:15:00.0", "rxe0"), RP_PATH_PHB);
	rp_node_fini(&node);
	assert_int_equal(rp_fx_remove(&fx, "class/infiniband/rxe0"), 0);
	{
		struct rp_discover_opts opts = { 0 };

		opts.sysfs_root = fx.root;
		assert_int_equal(rp_node_discover(&node, &opts), 0);
	}
	assert_int_equal(node.n_hcas, 1);
	assert_int_equal(path_of(&node, "0000:15:00.0", "mlx5_2"), RP_PATH_SYS);
	rp_test_discover_done(&fx, &node);
}

/* The CPU classes of ncclTopoAddCpu / ncclTopoGetInterCpuBw (src/graph/topo.cc) from a modalias,
 * and their release boundaries, which must be those of nccl_rules.c's table: Intel family 6 models
 * 0xCF (ERP 40) and 0x8F (SRP 22) from v2.26.2-1, 0x55 SKL 10, older 6; AMD 16 from v2.19.1-1;
 * Zhaoxin 6, Yongfeng (family 7 model 0x5B) 9; an unknown x86 vendor (Hygon) 5000; POWER 32. A
 * tree without a modalias is this machine (CPUID), and says so. */
static void test_topo_cpu_classes(void **state)
{
	static const struct { const char *m; uint32_t v; float bw; const char *cls; } cases[] = {
		{ "cpu:type:x86,ven0000fam0006mod00CF:feature:", 0, 40.0f, "intel_erp" },
		{ "cpu:type:x86,ven0000fam0006mod00CF:feature:", RP_NCCL_V(2, 25, 1), 10.0f, "intel_skl" },
		{ "cpu:type:x86,ven0000fam0006mod008F:feature:", RP_NCCL_V(2, 26, 2), 22.0f, "intel_srp" },
		{ "cpu:type:x86,ven0000fam0006mod0055:feature:", RP_NCCL_V(2, 18, 1), 10.0f, "intel_skl" },
		{ "cpu:type:x86,ven0000fam0006mod004F:feature:", 0, 6.0f, "intel_bdw" },
		{ "cpu:type:x86,ven0002fam0019mod0011:feature:", RP_NCCL_V(2, 19, 1), 16.0f, "amd" },
		{ "cpu:type:x86,ven0002fam0019mod0011:feature:", RP_NCCL_V(2, 18, 6), 5000.0f, "amd" },
		{ "cpu:type:x86,ven000Afam0007mod005B:feature:", 0, 9.0f, "zhaoxin_yongfeng" },
		{ "cpu:type:x86,ven0005fam0006mod000F:feature:", 0, 6.0f, "zhaoxin" },
		{ "cpu:type:x86,ven0009fam0018mod0000:feature:", 0, 5000.0f, "unknown" },
		{ "cpu:type:powerpc64le:feature:", 0, 32.0f, "power" },
	};
	struct rp_topo_cpu cpu;
	struct rp_fx fx;

	(void)state;
	for (size_t i = 0; i < RP_ARRAY_SIZE(cases); i++) {
		assert_int_equal(rp_topo_cpu_from_modalias(cases[i].m, cases[i].v, &cpu), 0);
		if (cpu.sys_bw != cases[i].bw || strcmp(cpu.cls, cases[i].cls) != 0)
			fail_msg("%s at %u: %s %g, want %s %g", cases[i].m, cases[i].v, cpu.cls, cpu.sys_bw, cases[i].cls,
				 cases[i].bw);
	}
	assert_int_equal(rp_topo_cpu_from_modalias("cpu:type:x86:feature:", 0, &cpu), -EINVAL);
	assert_int_equal(rp_topo_cpu_from_modalias("acpi:PNP0A08", 0, &cpu), -EINVAL);
	/* The boundaries are the rule table's. */
	assert_int_equal(rp_nccl_rule_info(RP_NCCL_R_AMD_SYS_BW)->since, RP_NCCL_V(2, 19, 1));
	assert_int_equal(rp_nccl_rule_info(RP_NCCL_R_INTEL_SRP_ERP)->since, RP_NCCL_V(2, 26, 2));
	assert_int_equal(rp_topo_cpu_from_modalias(cases[5].m, RP_NCCL_V(2, 18, 6), &cpu), 0);
	assert_true(cpu.sys_bw == 5000.0f);
	assert_int_equal(rp_fx_create(&fx), 0);
	rp_topo_cpu_read(fx.root, 0, &cpu);
	assert_non_null(strstr(cpu.source, "cpuid (this machine"));
	assert_true(cpu.sys_bw > 0);
	rp_fx_destroy(&fx);
}

/* ncclTopoGetLocal (src/graph/topo.cc, 2.30.7) takes the widest path first and only then the
 * smallest type; a path's bandwidth is its narrowest PCI link (xml.cc: the smaller max_link_width
 * of a function and the port above it, times the slower max_link_speed, / 80) and the port rate.
 * GPU 0000:03:00.0 is PIX to mlx5_0 on a Gen3 x8 link (6 GB/s) and PHB to mlx5_1 on Gen4 x16
 * (24 GB/s): NCCL takes mlx5_1. Before this test rdmaprobe answered mlx5_0 (smallest type). */
static void test_nearest_widest_path(void **state)
{
	static const char *const rp1 = "pci0000:00/0000:00:01.0";
	static const char *const up = "pci0000:00/0000:00:01.0/0000:01:00.0";
	static const char *const dgpu = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0";
	static const char *const dnic = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0";
	static const char *const gpu = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0";
	static const char *const nic0 = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0";
	static const char *const rp2 = "pci0000:00/0000:00:02.0";
	static const char *const nic1 = "pci0000:00/0000:00:02.0/0000:05:00.0";
	struct rp_discover_opts opts = { 0 };
	struct rp_node node;
	struct rp_fx fx;
	size_t idx[4];

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_gpu(&fx, gpu, 0), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_0", nic0, 0, "1.0", NULL), 0);
	assert_int_equal(rp_fx_port(&fx, "mlx5_0", 1, &rp_fx_port_ib_ndr_active), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_1", nic1, 0, "1.0", NULL), 0);
	assert_int_equal(rp_fx_port(&fx, "mlx5_1", 1, &rp_fx_port_ib_ndr_active), 0);
	opts.sysfs_root = fx.root;
	/* No link files: every link is NCCL's default x16 Gen3, a tie, and PIX wins. */
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_int_equal(rp_topo_nearest(&node, gpu_by_pci(&node, "0000:03:00.0"), idx, 4), 1);
	assert_string_equal(node.hcas[idx[0]].name, "mlx5_0");
	rp_node_fini(&node);
	for (size_t i = 0; i < 6; i++)
		set_link(&fx, (const char *[]){ rp1, up, dgpu, dnic, gpu, rp2 }[i], 16, "16.0 GT/s PCIe");
	set_link(&fx, nic0, 8, "8.0 GT/s PCIe");
	set_link(&fx, nic1, 16, "16.0 GT/s PCIe");
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_int_equal(path_of(&node, "0000:03:00.0", "mlx5_0"), RP_PATH_PIX);
	assert_int_equal(path_of(&node, "0000:03:00.0", "mlx5_1"), RP_PATH_PHB);
	assert_true(rp_topo_path_bw(&node, gpu_by_pci(&node, "0000:03:00.0"), rp_node_find_hca(&node, "mlx5_0")) == 6.0f);
	assert_true(rp_topo_path_bw(&node, gpu_by_pci(&node, "0000:03:00.0"), rp_node_find_hca(&node, "mlx5_1")) == 24.0f);
	assert_int_equal(rp_topo_nearest(&node, gpu_by_pci(&node, "0000:03:00.0"), idx, 4), 1);
	assert_string_equal(node.hcas[idx[0]].name, "mlx5_1");
	rp_node_fini(&node);
	/* The narrower of the function and the port above it counts: x16 NIC in an x8 slot. */
	set_link(&fx, nic0, 16, "16.0 GT/s PCIe");
	set_link(&fx, dnic, 8, "16.0 GT/s PCIe");
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_true(rp_topo_path_bw(&node, gpu_by_pci(&node, "0000:03:00.0"), rp_node_find_hca(&node, "mlx5_0")) == 12.0f);
	assert_int_equal(rp_topo_nearest(&node, gpu_by_pci(&node, "0000:03:00.0"), idx, 4), 1);
	assert_string_equal(node.hcas[idx[0]].name, "mlx5_1");
	rp_test_discover_done(&fx, &node);
}

/* ncclIbGetPciPath (src/transport/net_ib/init.cc 2.30.7) zeroes the function and device digits of
 * the NIC's bus id; a VF at 0000:03:1e.0 whose 0000:03:00.0 does not exist has no pci subsystem
 * there, and ncclTopoFillNet attaches it to the first CPU: PHB from the GPU beside it, not PIX.
 * A function .1 of a NIC whose .0 exists merges into .0 and keeps its place. */
static void test_nic_bus_id_merge(void **state)
{
	struct rp_discover_opts opts = { 0 };
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_gpu(&fx, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:04:00.0", 0), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_vf", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:03:1e.0", 0,
				   "1.0", NULL), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_0", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.0", 0,
				   "1.0", NULL), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_1", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.1", 0,
				   "1.0", NULL), 0);
	opts.sysfs_root = fx.root;
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_int_equal(path_of(&node, "0000:04:00.0", "mlx5_vf"), RP_PATH_PHB);
	assert_int_equal(path_of(&node, "0000:04:00.0", "mlx5_0"), RP_PATH_PIX);
	assert_int_equal(path_of(&node, "0000:04:00.0", "mlx5_1"), RP_PATH_PIX);
	rp_test_discover_done(&fx, &node);
}

/* ncclTopoFlattenBcmSwitches marks each switch it visits, so one switch absorbs one level: in a
 * Gen4 cascade top > s1 > s2 > s3 on the GPU's side, top absorbs s1 and s2 absorbs s3, leaving two
 * switches (PXB to a NIC under top's other half), where flattening every level made it PIX. */
static void test_bcm_one_level(void **state)
{
	static const char *const top = "pci0000:00/0000:00:01.0/0000:01:00.0";
	static const char *const s1 = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0";
	static const char *const s2 = "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/0000:04:00.0/0000:05:00.0";
	static const char *const s3 =
		"pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/0000:04:00.0/0000:05:00.0/0000:06:00.0/0000:07:00.0";
	struct rp_discover_opts opts = { 0 };
	struct rp_node node;
	struct rp_fx fx;
	char gpu[512];

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	snprintf(gpu, sizeof(gpu), "%s/0000:08:00.0/0000:09:00.0", s3);
	assert_int_equal(rp_fx_gpu(&fx, gpu, 0), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_0", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:0a:00.0", 0,
				   "1.0", NULL), 0);
	set_ids(&fx, top, 0x1000, 0xc010, 0x1000, 0xa064);
	set_ids(&fx, s1, 0x1000, 0xc010, 0x1000, 0xa064);
	set_ids(&fx, s2, 0x1000, 0xc010, 0x1000, 0xa064);
	set_ids(&fx, s3, 0x1000, 0xc010, 0x1000, 0xa064);
	opts.sysfs_root = fx.root;
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_int_equal(path_of(&node, "0000:09:00.0", "mlx5_0"), RP_PATH_PXB);
	rp_node_fini(&node);
	/* Only top > s1 are Broadcom: s1 goes, s3 and s2 stay two switches on the GPU's side: PXB. */
	set_ids(&fx, s2, 0x15b3, 0x1021, 0x15b3, 0x0001);
	set_ids(&fx, s3, 0x15b3, 0x1021, 0x15b3, 0x0001);
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_int_equal(path_of(&node, "0000:09:00.0", "mlx5_0"), RP_PATH_PXB);
	rp_test_discover_done(&fx, &node);
}

static void test_nearest(void **state)
{
	size_t idx[8];
	struct rp_node node;
	struct rp_fx fx;
	size_t n;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_dgx_h100(&fx), 0);
	/* mlx5_1 loses its ports: no longer usable, no longer "nearest". */
	assert_int_equal(rp_fx_remove(&fx, "class/infiniband/mlx5_1/ports"), 0);
	{
		struct rp_discover_opts opts = { .sysfs_root = fx.root };

		assert_int_equal(rp_node_discover(&node, &opts), 0);
	}
	n = rp_topo_nearest(&node, gpu_by_pci(&node, "0000:03:00.0"), idx, 8);
	assert_int_equal(n, 1);
	assert_string_equal(node.hcas[idx[0]].name, "mlx5_0");
	n = rp_topo_nearest(&node, gpu_by_pci(&node, "0000:a3:00.0"), idx, 8);
	assert_int_equal(n, 2);
	assert_string_equal(node.hcas[idx[0]].name, "mlx5_6");
	assert_string_equal(node.hcas[idx[1]].name, "mlx5_7");
	/* More ties than room: the count still says how many. */
	n = rp_topo_nearest(&node, gpu_by_pci(&node, "0000:a3:00.0"), idx, 1);
	assert_int_equal(n, 2);
	rp_test_discover_done(&fx, &node);
}

static void test_path_parse(void **state)
{
	enum rp_path p = RP_PATH_SYS;

	(void)state;
	assert_int_equal(rp_path_parse("PIX", &p), 0);
	assert_int_equal(p, RP_PATH_PIX);
	assert_int_equal(rp_path_parse("PXB", &p), 0);
	assert_int_equal(p, RP_PATH_PXB);
	assert_int_equal(rp_path_parse("PHB", &p), 0);
	assert_int_equal(p, RP_PATH_PHB);
	assert_int_equal(rp_path_parse("SYS", &p), 0);
	assert_int_equal(p, RP_PATH_SYS);
	assert_int_equal(rp_path_parse("LOC", &p), 0);
	assert_int_equal(p, RP_PATH_LOC);
	assert_int_equal(rp_path_parse("PXN", &p), 0);
	assert_int_equal(p, RP_PATH_PXB);
	/* NCCL's old integers: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS, larger clamps to SYS. */
	assert_int_equal(rp_path_parse("0", &p), 0);
	assert_int_equal(p, RP_PATH_LOC);
	assert_int_equal(rp_path_parse("2", &p), 0);
	assert_int_equal(p, RP_PATH_PXB);
	assert_int_equal(rp_path_parse("9", &p), 0);
	assert_int_equal(p, RP_PATH_SYS);
	p = RP_PATH_PHB;
	assert_int_equal(rp_path_parse("", &p), -EINVAL);
	assert_int_equal(rp_path_parse("pix", &p), -EINVAL);
	assert_int_equal(rp_path_parse("PIX ", &p), -EINVAL);
	assert_int_equal(rp_path_parse("-1", &p), -EINVAL);
	assert_int_equal(p, RP_PATH_PHB);
	assert_string_equal(rp_path_str(RP_PATH_PIX), "PIX");
	assert_string_equal(rp_path_str(RP_PATH_SYS), "SYS");
	assert_string_equal(rp_path_str(RP_PATH_LOC), "LOC");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dgx_h100),
		cmocka_unit_test(test_nearest_gpu),
		cmocka_unit_test(test_dual_socket),
		cmocka_unit_test(test_nic_not_on_pci),
		cmocka_unit_test(test_numa_unknown),
		cmocka_unit_test(test_switch_levels),
		cmocka_unit_test(test_bcm_flatten),
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_nearest_widest_path),
		cmocka_unit_test(test_gpu_link_nvml),
		cmocka_unit_test(test_sys_bw_per_cpu),
		cmocka_unit_test(test_topo_cpu_classes),
		cmocka_unit_test(test_zero_merged_nic_joins_virtual),
		cmocka_unit_test(test_nic_bus_id_merge),
		cmocka_unit_test(test_bcm_one_level),
		cmocka_unit_test(test_path_parse),
	};

	return cmocka_run_group_tests_name("topo", tests, quiet, NULL);
}
