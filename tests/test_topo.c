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
#include "log.h"
#include "node.h"
#include "testutil.h"
#include "topo.h"

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

/* Write max_link_width/max_link_speed of the PCI function at devices/<path>. */
static void set_link(struct rp_fx *fx, const char *path, int width, const char *speed)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "devices/%s/max_link_width", path);
	assert_int_equal(rp_fx_writef(fx, rel, "%d\n", width), 0);
	snprintf(rel, sizeof(rel), "devices/%s/max_link_speed", path);
	assert_int_equal(rp_fx_writef(fx, rel, "%s\n", speed), 0);
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
		cmocka_unit_test(test_nic_bus_id_merge),
		cmocka_unit_test(test_bcm_one_level),
		cmocka_unit_test(test_path_parse),
	};

	return cmocka_run_group_tests_name("topo", tests, quiet, NULL);
}
