/* test_health.c: the static health checks (lib/health/health.h) on fixture machines: a clean DGX gives no
 * item at all; then one fault at a time (a port at HDR among NDR ports, a port Polling, a port
 * without SM, PCIe degraded at an adapter and at a switch uplink, a Gen5 adapter in a Gen4 slot, a
 * GPU idling at Gen1, ACS redirect on one switch port from config-space bytes, config space without
 * root, IOMMU on in DMA and passthrough mode, GPUDirect without peermem) gives exactly its code;
 * and the 'devices' command shows the section in text and JSON ($RP_TEST_BIN). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "fixture.h"
#include "fixture_health.h"
#include "health/health.h"
#include "health/health_json.h"
#include "base/log.h"
#include "nccl/nccl.h"
#include "nccl/nccl_rules.h"
#include "discover/node.h"
#include "discover/pcie.h"
#include "testutil.h"

struct hx {
	struct rp_fx fx;
	struct rp_node node;
	struct rp_health h;
};

/* Build the clean machine; the test then breaks one thing and calls hx_check(). */
static void hx_start(struct hx *x)
{
	memset(x, 0, sizeof(*x));
	assert_int_equal(rp_fx_create(&x->fx), 0);
	assert_int_equal(rp_fxh_machine_clean(&x->fx), 0);
}

static void hx_check_opts(struct hx *x, enum rp_tri dmabuf)
{
	struct rp_discover_opts dopts = { .sysfs_root = x->fx.root };
	struct rp_health_opts hopts = { NULL, dmabuf, false, NULL };

	assert_int_equal(rp_node_discover(&x->node, &dopts), 0);
	assert_int_equal(rp_health_check(&x->node, &hopts, &x->h), 0);
}

static void hx_check(struct hx *x)
{
	hx_check_opts(x, RP_TRI_TRUE);
}

static void hx_done(struct hx *x)
{
	rp_health_fini(&x->h);
	rp_health_fini(&x->h);   /* safe twice */
	rp_node_fini(&x->node);
	rp_fx_destroy(&x->fx);
}

/* Every item, for a failure message. */
static const char *dump(const struct rp_health *h)
{
	static char buf[8192];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < h->n_items && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\n  %s [%s] %s",
					rp_health_code_str(h->items[i].code), h->items[i].device, h->items[i].message);
	return h->n_items ? buf : " (none)";
}

/* The only item of code c; fails unless there is exactly one, on device. */
static const struct rp_health_item *only(const struct rp_health *h, enum rp_health_code c, const char *device)
{
	const struct rp_health_item *found = NULL;

	if (rp_health_count(h, c) != 1)
		fail_msg("expected one %s, got %zu:%s", rp_health_code_str(c), rp_health_count(h, c), dump(h));
	for (size_t i = 0; i < h->n_items; i++)
		if (h->items[i].code == c)
			found = &h->items[i];
	if (device && strcmp(found->device, device) != 0)
		fail_msg("%s on '%s', expected '%s'", rp_health_code_str(c), found->device, device);
	return found;
}

static void assert_items(const struct rp_health *h, size_t n)
{
	if (h->n_items != n)
		fail_msg("expected %zu items, got %zu:%s", n, h->n_items, dump(h));
}

static void assert_contains(const char *s, const char *sub)
{
	if (!strstr(s, sub))
		fail_msg("'%s' does not contain '%s'", s, sub);
}

/* ---- tests ---- */

static void test_clean_machine_no_item(void **state)
{
	struct hx x;

	(void)state;
	hx_start(&x);
	hx_check(&x);
	assert_items(&x.h, 0);
	assert_true(rp_health_clean(&x.h));
	/* Every ACTIVE port has an expected rate, limited by the port (Gen5 x16 carries 504 Gb/s). */
	assert_int_equal(x.h.n_rates, 8);
	for (size_t i = 0; i < x.h.n_rates; i++) {
		assert_int_equal(x.h.rates[i].limit, RP_LIMIT_PORT);
		assert_true(x.h.rates[i].expected_gbps == 400.0);
	}
	assert_string_equal(x.h.rates[0].message, "expected 400 Gb/s: the port limits (PCIe Gen5 x16: 504 Gb/s)");
	assert_int_equal(x.h.gdr.iommu, RP_TRI_FALSE);
	assert_int_equal(x.h.gdr.peermem, RP_TRI_TRUE);
	/* 8 GPUs x 2 nearest adapters under one switch: 4 distinct downstream ports per switch. */
	assert_int_equal(x.h.gdr.acs_checked, 16);
	assert_int_equal(x.h.gdr.acs_unreadable, 0);
	hx_done(&x);
}

static void test_link_degraded(void **state)
{
	struct rp_fx_port hdr = rp_fx_port_ib_ndr_active;
	const struct rp_health_item *it;
	struct hx x;

	(void)state;
	hx_start(&x);
	hdr.rate = "200 Gb/sec (4X HDR)";
	hdr.lid = "0x4";
	assert_int_equal(rp_fx_port(&x.fx, "mlx5_3", 1, &hdr), 0);
	hx_check(&x);
	it = only(&x.h, RP_HC_LINK_DEGRADED, "mlx5_3:1");
	assert_string_equal(it->message, "mlx5_3:1 at 4X HDR 200 Gb/s, the other 7 ports at 4X NDR 400 Gb/s");
	assert_items(&x.h, 1);
	hx_done(&x);
}

static void test_link_degraded_width_mixed(void **state)
{
	struct rp_fx_port p = rp_fx_port_ib_ndr_active;
	const struct rp_health_item *it;
	struct hx x;

	(void)state;
	hx_start(&x);
	p.rate = "100 Gb/sec (1X NDR)";   /* trained at one lane */
	assert_int_equal(rp_fx_port(&x.fx, "mlx5_0", 1, &p), 0);
	p.rate = "200 Gb/sec (4X HDR)";
	assert_int_equal(rp_fx_port(&x.fx, "mlx5_6", 1, &p), 0);
	hx_check(&x);
	assert_int_equal(rp_health_count(&x.h, RP_HC_LINK_DEGRADED), 2);
	it = &x.h.items[0];
	assert_string_equal(it->device, "mlx5_0:1");
	assert_string_equal(it->message, "mlx5_0:1 at 1X NDR 100 Gb/s, 6 of the other 7 ports at 4X NDR 400 Gb/s");
	assert_items(&x.h, 2);
	hx_done(&x);
}

static void test_port_states(void **state)
{
	struct rp_fx_port polling = rp_fx_port_ib_ndr_active, init = rp_fx_port_ib_ndr_active;
	const struct rp_health_item *it;
	struct hx x;

	(void)state;
	hx_start(&x);
	polling.state = "1: DOWN";
	polling.phys_state = "2: Polling";
	assert_int_equal(rp_fx_port(&x.fx, "mlx5_5", 1, &polling), 0);
	init.state = "2: INIT";
	assert_int_equal(rp_fx_port(&x.fx, "mlx5_7", 1, &init), 0);
	hx_check(&x);
	it = only(&x.h, RP_HC_PORT_DOWN, "mlx5_5:1");
	assert_contains(it->message, "mlx5_5:1 is DOWN: no link partner (Polling): no cable");
	it = only(&x.h, RP_HC_PORT_NO_SM, "mlx5_7:1");
	assert_contains(it->message, "mlx5_7:1 is INIT with the physical link up: no subnet manager");
	/* Neither is compared for its rate, and neither has an expected rate. */
	assert_items(&x.h, 2);
	assert_int_equal(x.h.n_rates, 6);
	hx_done(&x);
}

/* Issue 26 item 2: DOWN is unhealthy whatever phys_state says (missing, NOP, garbage). */
static void test_port_down_phys_unknown(void **state)
{
	struct rp_fx_port down = rp_fx_port_ib_ndr_active;
	const char *phys[] = { NULL, "0: NOP", "garbage" };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct hx x;

		hx_start(&x);
		down.state = "1: DOWN";
		down.phys_state = phys[i];
		assert_int_equal(rp_fx_port(&x.fx, "mlx5_5", 1, &down), 0);
		if (!phys[i])
			assert_int_equal(rp_fx_remove(&x.fx, "class/infiniband/mlx5_5/ports/1/phys_state"), 0);
		hx_check(&x);
		assert_contains(only(&x.h, RP_HC_PORT_DOWN, "mlx5_5:1")->message, "mlx5_5:1 is DOWN");
		assert_false(rp_health_clean(&x.h));
		hx_done(&x);
	}
}

static void test_pcie_degraded_at_adapter(void **state)
{
	const struct rp_health_item *it;
	struct hx x;

	(void)state;
	hx_start(&x);
	assert_int_equal(rp_fxh_link_pair(&x.fx, FXH_DN_NIC0, FXH_NIC0, "16.0 GT/s PCIe", 8, "32.0 GT/s PCIe", 16), 0);
	hx_check(&x);
	it = only(&x.h, RP_HC_PCIE_DEGRADED, FXH_NIC0);
	assert_string_equal(it->message, "PCIe link of 0000:05:00.0 (mlx5_0) at Gen4 x8 (126 Gb/s), both ends can do "
			    "Gen5 x16 (504 Gb/s) (link from 0000:02:02.0)");
	it = only(&x.h, RP_HC_PCIE_BOTTLENECK, "mlx5_0:1");
	assert_string_equal(it->message, "mlx5_0:1: expected 126 Gb/s: PCIe Gen4 x8 limits the 400 Gb/s port");
	assert_int_equal(x.h.rates[0].limit, RP_LIMIT_PCIE);
	assert_string_equal(x.h.rates[0].pcie_at, FXH_NIC0);
	assert_items(&x.h, 2);
	hx_done(&x);
}

static void test_pcie_degraded_at_bridge(void **state)
{
	const struct rp_health_item *it;
	struct hx x;

	(void)state;
	hx_start(&x);
	/* The switch uplink (root port 00:01.0 - upstream port 01:00.0) trained at x4. */
	assert_int_equal(rp_fxh_link_pair(&x.fx, FXH_RP_A, FXH_UP_A, "32.0 GT/s PCIe", 4, "32.0 GT/s PCIe", 16), 0);
	hx_check(&x);
	it = only(&x.h, RP_HC_PCIE_DEGRADED, FXH_UP_A);
	assert_contains(it->message, "PCIe link of 0000:01:00.0 (switch upstream port) at Gen5 x4 (126 Gb/s)");
	assert_contains(it->message, "(link from 0000:00:01.0)");
	/* Both adapters behind it are limited by it, and the message says where. */
	assert_int_equal(rp_health_count(&x.h, RP_HC_PCIE_BOTTLENECK), 2);
	assert_string_equal(x.h.rates[0].message, "expected 126 Gb/s: PCIe Gen5 x4 at 0000:01:00.0 limits the 400 Gb/s port");
	assert_items(&x.h, 3);
	hx_done(&x);
}

/* An SR-IOV virtual function: its own Link Status reads as unknown, its link is the PF's. */
static void test_vf_link_is_the_pf_link(void **state)
{
	struct rp_fx_port p = rp_fx_port_ib_ndr_active;
	const struct rp_health_item *it;
	const struct rp_health_rate *vf = NULL;
	struct hx x;

	(void)state;
	hx_start(&x);
	p.lid = "0x9";
	assert_int_equal(rp_fx_hca(&x.fx, "mlx5_8", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.2", 0,
				   "28.39.1002", "b8ce:f603:00a1:0099"), 0);
	assert_int_equal(rp_fx_port(&x.fx, "mlx5_8", 1, &p), 0);
	assert_int_equal(rp_fxh_link(&x.fx, "0000:05:00.2", "Unknown", 0, "Unknown", 0), 0);
	assert_int_equal(rp_fx_symlink(&x.fx, "bus/pci/devices/0000:05:00.2/physfn", "../0000:05:00.0"), 0);
	assert_int_equal(rp_fxh_link_pair(&x.fx, FXH_DN_NIC0, FXH_NIC0, "16.0 GT/s PCIe", 8, "32.0 GT/s PCIe", 16), 0);
	hx_check(&x);
	/* One degraded link (the PF's), limiting both the PF and the VF. */
	it = only(&x.h, RP_HC_PCIE_DEGRADED, FXH_NIC0);
	assert_contains(it->message, "PCIe link of 0000:05:00.0 (mlx5_0) at Gen4 x8");
	assert_int_equal(rp_health_count(&x.h, RP_HC_PCIE_BOTTLENECK), 2);
	for (size_t i = 0; i < x.h.n_rates; i++)
		if (strcmp(x.h.rates[i].device, "mlx5_8") == 0)
			vf = &x.h.rates[i];
	assert_non_null(vf);
	assert_string_equal(vf->message, "expected 126 Gb/s: PCIe Gen4 x8 at 0000:05:00.0 limits the 400 Gb/s port");
	assert_items(&x.h, 3);
	hx_done(&x);
}

static void test_gen5_adapter_in_gen4_slot(void **state)
{
	struct hx x;

	(void)state;
	hx_start(&x);
	/* The slot (downstream port) can only do Gen4: the link is at its best, not degraded. */
	assert_int_equal(rp_fxh_link(&x.fx, FXH_DN_NIC0, "16.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16), 0);
	assert_int_equal(rp_fxh_link(&x.fx, FXH_NIC0, "16.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16), 0);
	hx_check(&x);
	assert_int_equal(rp_health_count(&x.h, RP_HC_PCIE_DEGRADED), 0);
	/* But 252 Gb/s cannot carry a 400 Gb/s port. */
	only(&x.h, RP_HC_PCIE_BOTTLENECK, "mlx5_0:1");
	assert_string_equal(x.h.rates[0].message, "expected 252 Gb/s: PCIe Gen4 x16 limits the 400 Gb/s port");
	assert_items(&x.h, 1);
	hx_done(&x);
}

static void test_gpu_link(void **state)
{
	const struct rp_health_item *it;
	struct hx x;

	(void)state;
	hx_start(&x);
	/* Idle GPU at 2.5 GT/s full width: a note, not a warning. */
	assert_int_equal(rp_fxh_link_pair(&x.fx, FXH_DN_GPU0, FXH_GPU0, "2.5 GT/s PCIe", 16, "32.0 GT/s PCIe", 16), 0);
	/* Another GPU at half width: degraded. */
	assert_int_equal(rp_fxh_link_pair(&x.fx, "0000:22:01.0", "0000:24:00.0", "32.0 GT/s PCIe", 8, "32.0 GT/s PCIe",
					  16), 0);
	hx_check(&x);
	it = only(&x.h, RP_HC_GPU_LINK_IDLE, FXH_GPU0);
	assert_contains(it->message, "at Gen1 x16, its maximum Gen5 x16");
	it = only(&x.h, RP_HC_PCIE_DEGRADED, "0000:24:00.0");
	assert_contains(it->message, "(GPU) at Gen5 x8");
	assert_items(&x.h, 2);
	assert_false(rp_health_clean(&x.h));
	hx_done(&x);
}

static void test_acs_redirect_one_switch_port(void **state)
{
	const struct rp_health_item *it;
	struct hx x;

	(void)state;
	hx_start(&x);
	/* What the kernel sets with an IOMMU: SV RR CR UF, on the GPU's downstream port only. */
	assert_int_equal(rp_fxh_config(&x.fx, FXH_DN_GPU0, RP_ACS_SV | RP_ACS_RR | RP_ACS_CR | RP_ACS_UF, 4096), 0);
	/* Upstream forwarding alone on another switch's port: no effect inside a switch. */
	assert_int_equal(rp_fxh_config(&x.fx, "0000:22:00.0", RP_ACS_UF | RP_ACS_SV, 4096), 0);
	hx_check(&x);
	it = only(&x.h, RP_HC_ACS_REDIRECT, FXH_DN_GPU0);
	assert_contains(it->message, "ACS on bridge 0000:02:00.0 between GPU 0000:03:00.0 and mlx5_0 redirects P2P "
			"(RR CR set; control: SV RR CR UF)");
	assert_contains(it->message, "setpci -s 0000:02:00.0 ECAP_ACS+0x6.w=0000");
	assert_items(&x.h, 1);
	hx_done(&x);
}

static void test_acs_unreadable_without_root(void **state)
{
	const struct rp_health_item *it;
	struct hx x;
	const char *ports[] = { "0000:02:00.0", "0000:02:01.0", "0000:02:02.0", "0000:02:03.0" };

	(void)state;
	hx_start(&x);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(rp_fxh_config(&x.fx, ports[i], RP_ACS_RR, 64), 0);   /* ends at byte 64 */
	hx_check(&x);
	it = only(&x.h, RP_HC_ACS_UNREADABLE, "");
	assert_contains(it->message, "ACS of 4 of 16 bridges");
	assert_contains(it->message, "needs CAP_SYS_ADMIN");
	assert_items(&x.h, 1);
	assert_true(rp_health_clean(&x.h));   /* a note, no warning */
	hx_done(&x);
}

static void test_acs_not_on_root_complex_paths(void **state)
{
	struct hx x;

	(void)state;
	hx_start(&x);
	/* Redirect on the root port: GPU and adapters share the switch below it, so P2P never reaches it. */
	assert_int_equal(rp_fxh_config(&x.fx, FXH_RP_A, RP_ACS_RR | RP_ACS_CR, 4096), 0);
	/* A bridge with no ACS capability at all (AER only), and one with no extended space. */
	assert_int_equal(rp_fxh_config(&x.fx, FXH_DN_NIC0, -1, 4096), 0);
	assert_int_equal(rp_fxh_config(&x.fx, "0000:02:03.0", 0, 256), 0);
	hx_check(&x);
	assert_items(&x.h, 0);
	hx_done(&x);
}

/* The ACS check reads the bridges between each GPU and its nearest adapters as NCCL's release picks
 * them (ncclIbGetPciPath's bus-id merge, src/transport/net_ib.cc v2.24.3-1 to v2.26.6-1: the real
 * bus id; v2.27.3-1 on, 2.30.7 included: device and function digits zeroed). A VF at 0000:03:1e.0
 * beside the GPU is PIX and nearest under 2.24.3, so ACS redirect on its downstream port 0000:02:01.0
 * is a warning; under 2.30.7 the VF merges into 0000:03:00.0, which does not exist, and only the PF
 * is nearest: no warning. Failed before health_pci.c took the release's merge (2.30.7's always: no
 * warning under 2.24.3). */
/* the tree: tests/fixture_health.h (rp_fxh_machine_vf), ACS redirect on the VF's downstream port */
static int machine_vf_acs(struct rp_fx *fx)
{
	int rc = rp_fxh_machine_vf(fx);

	return rc ? rc : rp_fxh_config(fx, "0000:02:01.0", RP_ACS_RR, 4096);
}

static size_t acs_under(const struct rp_node *node, uint32_t version)
{
	struct rp_nccl_env env;
	struct rp_topo_merge m;
	struct rp_health_opts hopts = { NULL, RP_TRI_TRUE, false, &m };
	struct rp_health h;
	size_t n;

	rp_nccl_env_default(&env);
	env.version = version;
	rp_nccl_topo_merge(&env, &m);
	assert_int_equal(rp_health_check(node, &hopts, &h), 0);
	n = rp_health_count(&h, RP_HC_ACS_REDIRECT);
	if (n)
		assert_contains(h.items[0].message, "ACS on bridge 0000:02:01.0 between GPU 0000:04:00.0 and mlx5_vf");
	rp_health_fini(&h);
	return n;
}

static void test_acs_nearest_per_release(void **state)
{
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	rp_test_discover(&fx, machine_vf_acs, &node);
	assert_int_equal(acs_under(&node, RP_NCCL_V(2, 24, 3)), 1);
	assert_int_equal(acs_under(&node, RP_NCCL_V(2, 26, 6)), 1);
	assert_int_equal(acs_under(&node, RP_NCCL_V(2, 27, 3)), 0);
	assert_int_equal(acs_under(&node, RP_NCCL_V(2, 30, 7)), 0);
	rp_test_discover_done(&fx, &node);
}

static void test_iommu(void **state)
{
	static const char *const devs[] = { FXH_GPU0, FXH_NIC0, NULL };
	const struct rp_health_item *it;
	struct hx x;

	(void)state;
	hx_start(&x);
	assert_int_equal(rp_fxh_iommu(&x.fx, 1, "DMA-FQ", devs), 0);
	hx_check(&x);
	assert_int_equal(x.h.gdr.iommu, RP_TRI_TRUE);
	assert_string_equal(x.h.gdr.iommu_mode, "DMA-FQ");
	it = only(&x.h, RP_HC_IOMMU_TRANSLATED, "");
	assert_contains(it->message, "group type DMA-FQ");
	assert_contains(it->message, "iommu=pt");
	assert_items(&x.h, 1);
	hx_done(&x);

	/* Passthrough: on, but no warning. */
	hx_start(&x);
	assert_int_equal(rp_fxh_iommu(&x.fx, 1, "identity", devs), 0);
	hx_check(&x);
	assert_int_equal(x.h.gdr.iommu, RP_TRI_TRUE);
	assert_string_equal(x.h.gdr.iommu_mode, "identity");
	assert_items(&x.h, 0);
	hx_done(&x);
}

static void test_iommu_cmdline(void **state)
{
	char path[PATH_MAX];
	struct rp_discover_opts dopts = { 0 };
	struct rp_health_opts hopts = { NULL, RP_TRI_TRUE, false, NULL };
	struct hx x;

	(void)state;
	hx_start(&x);
	assert_int_equal(rp_fx_write(&x.fx, "proc-cmdline",
				     "BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on iommu=pt quiet pci=noaer\n"), 0);
	rp_fx_path(&x.fx, "proc-cmdline", path, sizeof(path));
	hopts.cmdline_path = path;
	dopts.sysfs_root = x.fx.root;
	dopts.skip_gpus = false;
	assert_int_equal(rp_node_discover(&x.node, &dopts), 0);
	assert_int_equal(rp_health_check(&x.node, &hopts, &x.h), 0);
	assert_true(x.h.gdr.cmdline_read);
	assert_string_equal(x.h.gdr.cmdline_hints, "intel_iommu=on iommu=pt");
	hx_done(&x);
}

static void test_gpudirect_readiness(void **state)
{
	struct hx x;

	(void)state;
	/* No peermem, no dma-buf: unavailable. */
	hx_start(&x);
	assert_int_equal(rp_fx_remove(&x.fx, "module/nvidia_peermem"), 0);
	hx_check_opts(&x, RP_TRI_FALSE);
	assert_contains(only(&x.h, RP_HC_GPUDIRECT_UNAVAILABLE, "")->message, "nvidia-peermem is not loaded");
	assert_items(&x.h, 1);
	hx_done(&x);
	/* No peermem, dma-buf possible: ready. */
	hx_start(&x);
	assert_int_equal(rp_fx_remove(&x.fx, "module/nvidia_peermem"), 0);
	hx_check_opts(&x, RP_TRI_TRUE);
	assert_items(&x.h, 0);
	hx_done(&x);
	/* No peermem, dma-buf unknown: a note. */
	hx_start(&x);
	assert_int_equal(rp_fx_remove(&x.fx, "module/nvidia_peermem"), 0);
	hx_check_opts(&x, RP_TRI_UNKNOWN);
	only(&x.h, RP_HC_GPUDIRECT_UNKNOWN, "");
	assert_items(&x.h, 1);
	hx_done(&x);
	/* peermem loaded, dma-buf impossible: ready. */
	hx_start(&x);
	hx_check_opts(&x, RP_TRI_FALSE);
	assert_items(&x.h, 0);
	hx_done(&x);
}

static void test_soft_roce_machine(void **state)
{
	struct rp_fx fx;
	struct rp_node node;
	struct rp_health h;
	struct rp_health_opts hopts = { NULL, RP_TRI_FALSE, false, NULL };

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_rxe, &node);
	assert_int_equal(rp_health_check(&node, &hopts, &h), 0);
	/* Not on PCI: no PCIe checks, no GPUDirect warning (no adapter shares PCIe with the GPU). */
	assert_items(&h, 0);
	assert_int_equal(h.n_rates, 2);
	assert_string_equal(h.rates[0].message, "expected 10 Gb/s: the port rate (not on PCI)");
	rp_health_fini(&h);
	rp_test_discover_done(&fx, &node);
}

/* Per-node mtu_mismatch on the Soft-RoCE machine: the active MTU comes from each netdev's MTU
 * (no verbs on a fixture), as in the test VM where rxe1's netdev is at 1500 (IB MTU 1024) and
 * rxe0's at 9000 (4096). Two ports, one each: the tie goes to the larger MTU. Equal MTUs and
 * unknown MTUs give no item. */
static void test_mtu_mismatch_node(void **state)
{
	struct rp_health_opts hopts = { .cmdline_path = NULL, .dmabuf = RP_TRI_FALSE, .probe_host = false };
	const struct rp_health_item *it;
	struct rp_node node;
	struct rp_health h;
	struct rp_fx fx;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_rxe, &node);
	assert_int_equal(node.hcas[0].ports[0].active_mtu, 0);   /* no netdev MTU: unknown */
	assert_int_equal(rp_health_check(&node, &hopts, &h), 0);
	assert_items(&h, 0);
	rp_health_fini(&h);
	rp_node_fini(&node);

	assert_int_equal(rp_fx_write(&fx, "class/net/eth0/mtu", "9000\n"), 0);
	assert_int_equal(rp_fx_write(&fx, "class/net/eth1/mtu", "9000\n"), 0);
	assert_int_equal(rp_node_discover(&node, &(struct rp_discover_opts){ .sysfs_root = fx.root }), 0);
	assert_int_equal(node.hcas[0].ports[0].active_mtu, 4096);
	assert_int_equal(rp_health_check(&node, &hopts, &h), 0);
	assert_items(&h, 0);
	rp_health_fini(&h);
	rp_node_fini(&node);

	assert_int_equal(rp_fx_write(&fx, "class/net/eth1/mtu", "1500\n"), 0);
	assert_int_equal(rp_node_discover(&node, &(struct rp_discover_opts){ .sysfs_root = fx.root }), 0);
	assert_int_equal(node.hcas[1].ports[0].active_mtu, 1024);
	assert_int_equal(rp_health_check(&node, &hopts, &h), 0);
	assert_items(&h, 1);
	it = only(&h, RP_HC_MTU_MISMATCH, "rxe1:1");
	assert_string_equal(it->message, "rxe1:1 at active MTU 1024, the other 1 port at 4096: a pair with it runs at 1024");
	assert_false(rp_health_clean(&h));
	rp_health_fini(&h);
	/* devices shows it with its code, and the port's active MTU. */
	{
		json_t *j = rp_test_devices_json(fx.root, NULL), *w;

		w = json_array_get(rp_test_key(rp_test_key(j, "health"), "warnings"), 0);
		assert_string_equal(json_string_value(rp_test_key(w, "code")), "mtu_mismatch");
		assert_string_equal(json_string_value(rp_test_key(w, "device")), "rxe1:1");
		assert_int_equal(json_integer_value(rp_test_key(json_array_get(rp_test_key(json_array_get(
			rp_test_key(j, "devices"), 1), "ports"), 0), "active_mtu")), 1024);
		json_decref(j);
	}
	rp_test_discover_done(&fx, &node);
}

/* The majority MTU per link layer on an 8-port node (MTUs set as verbs would give them): one port
 * at 2048 among 4096s; then a second odd one; a DOWN port's MTU does not count. */
static void test_mtu_mismatch_majority(void **state)
{
	struct rp_health_opts hopts = { .cmdline_path = NULL, .dmabuf = RP_TRI_TRUE, .probe_host = false };
	struct rp_node node;
	struct rp_health h;
	struct rp_fx fx;

	(void)state;
	rp_test_discover(&fx, rp_fxh_machine_clean, &node);
	assert_int_equal(node.n_hcas, 8);
	for (size_t i = 0; i < node.n_hcas; i++)
		node.hcas[i].ports[0].active_mtu = 4096;
	node.hcas[3].ports[0].active_mtu = 2048;
	assert_int_equal(rp_health_check(&node, &hopts, &h), 0);
	assert_items(&h, 1);
	assert_string_equal(only(&h, RP_HC_MTU_MISMATCH, "mlx5_3:1")->message,
			    "mlx5_3:1 at active MTU 2048, the other 7 ports at 4096: a pair with it runs at 2048");
	rp_health_fini(&h);
	node.hcas[5].ports[0].active_mtu = 1024;
	assert_int_equal(rp_health_check(&node, &hopts, &h), 0);
	assert_int_equal(rp_health_count(&h, RP_HC_MTU_MISMATCH), 2);
	assert_string_equal(h.items[1].message,
			    "mlx5_5:1 at active MTU 1024, 6 of the other 7 ports at 4096: a pair with it runs at 1024");
	rp_health_fini(&h);
	node.hcas[5].ports[0].state = RP_PORT_DOWN;
	node.hcas[5].ports[0].phys_state = 5;
	assert_int_equal(rp_health_check(&node, &hopts, &h), 0);
	assert_int_equal(rp_health_count(&h, RP_HC_MTU_MISMATCH), 1);
	assert_string_equal(only(&h, RP_HC_MTU_MISMATCH, "mlx5_3:1")->message,
			    "mlx5_3:1 at active MTU 2048, the other 6 ports at 4096: a pair with it runs at 2048");
	rp_health_fini(&h);
	rp_test_discover_done(&fx, &node);
}

static void test_codes_stable(void **state)
{
	(void)state;
	assert_string_equal(rp_health_code_str(RP_HC_LINK_DEGRADED), "link_degraded");
	assert_string_equal(rp_health_code_str(RP_HC_PCIE_DEGRADED), "pcie_degraded");
	assert_string_equal(rp_health_code_str(RP_HC_ACS_REDIRECT), "acs_redirect");
	assert_string_equal(rp_health_code_str(RP_HC_GPUDIRECT_UNKNOWN), "gpudirect_unknown");
	assert_string_equal(rp_health_code_str(RP_HC_MTU_MISMATCH), "mtu_mismatch");
	assert_false(rp_health_code_is_note(RP_HC_MTU_MISMATCH));
	assert_string_equal(rp_health_code_str(RP_HC_COUNT_), "");
	for (int c = 0; c < RP_HC_COUNT_; c++)
		assert_true(rp_health_code_str(c)[0] != '\0');
	assert_false(rp_health_code_is_note(RP_HC_GPUDIRECT_UNAVAILABLE));
	assert_true(rp_health_code_is_note(RP_HC_ACS_UNREADABLE));
}

/* ---- the devices command ---- */

/* The JSON of the section: warnings and notes apart, node-wide items with a null device, the
 * limiting PCIe link of a rate. */
static void test_health_json(void **state)
{
	json_t *j, *n, *r;
	struct hx x;

	(void)state;
	hx_start(&x);
	assert_int_equal(rp_fxh_config(&x.fx, FXH_DN_GPU0, 0, 64), 0);
	assert_int_equal(rp_fxh_link_pair(&x.fx, FXH_DN_NIC0, FXH_NIC0, "16.0 GT/s PCIe", 8, "32.0 GT/s PCIe", 16), 0);
	hx_check(&x);
	j = rp_health_to_json(&x.h);
	assert_non_null(j);
	assert_int_equal(json_array_size(rp_test_key(j, "warnings")), 2);
	assert_int_equal(json_array_size(rp_test_key(j, "notes")), 1);
	n = json_array_get(rp_test_key(j, "notes"), 0);
	assert_string_equal(json_string_value(rp_test_key(n, "code")), "acs_unreadable");
	assert_true(json_is_null(rp_test_key(n, "device")));
	r = json_array_get(rp_test_key(j, "expected_rates"), 0);
	assert_string_equal(json_string_value(rp_test_key(r, "device")), "mlx5_0");
	assert_string_equal(json_string_value(rp_test_key(r, "limit")), "pcie");
	assert_string_equal(json_string_value(rp_test_key(r, "pcie_link")), "Gen4 x8");
	assert_string_equal(json_string_value(rp_test_key(r, "pcie_at")), FXH_NIC0);
	assert_true(json_real_value(rp_test_key(r, "expected_gbps")) > 126.0 && json_real_value(rp_test_key(r, "expected_gbps")) < 126.1);
	r = json_array_get(rp_test_key(j, "expected_rates"), 1);
	assert_string_equal(json_string_value(rp_test_key(r, "limit")), "port");
	assert_int_equal(json_integer_value(rp_test_key(rp_test_key(j, "gpudirect"), "acs_bridges_unreadable")), 1);
	assert_true(json_is_false(rp_test_key(rp_test_key(j, "gpudirect"), "iommu")));
	json_decref(j);
	hx_done(&x);
}

static void test_cmd_devices_json(void **state)
{
	struct rp_fx_port hdr = rp_fx_port_ib_ndr_active;
	json_t *j, *health, *w;
	struct rp_fx fx;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fxh_machine_clean(&fx), 0);
	j = rp_test_devices_json(fx.root, NULL);
	health = rp_test_key(j, "health");
	assert_int_equal(json_array_size(rp_test_key(health, "warnings")), 0);
	assert_int_equal(json_array_size(rp_test_key(health, "notes")), 0);
	assert_int_equal(json_array_size(rp_test_key(health, "expected_rates")), 8);
	assert_string_equal(json_string_value(rp_test_key(json_array_get(rp_test_key(health, "expected_rates"), 0), "limit")), "port");
	assert_true(json_is_true(rp_test_key(rp_test_key(health, "gpudirect"), "nvidia_peermem")));
	assert_true(json_is_null(rp_test_key(rp_test_key(health, "gpudirect"), "dmabuf")));   /* not probed on a fixture */
	json_decref(j);

	hdr.rate = "200 Gb/sec (4X HDR)";
	assert_int_equal(rp_fx_port(&fx, "mlx5_3", 1, &hdr), 0);
	/* The exit status of devices does not change with a warning. */
	j = rp_test_devices_json(fx.root, NULL);
	health = rp_test_key(j, "health");
	assert_int_equal(json_array_size(rp_test_key(health, "warnings")), 1);
	w = json_array_get(rp_test_key(health, "warnings"), 0);
	assert_string_equal(json_string_value(rp_test_key(w, "code")), "link_degraded");
	assert_string_equal(json_string_value(rp_test_key(w, "device")), "mlx5_3:1");
	assert_string_equal(json_string_value(rp_test_key(w, "message")),
			    "mlx5_3:1 at 4X HDR 200 Gb/s, the other 7 ports at 4X NDR 400 Gb/s");
	json_decref(j);
	rp_fx_destroy(&fx);
}

static void test_cmd_devices_text(void **state)
{
	static char out[1 << 20];
	struct rp_fx fx;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fxh_machine_clean(&fx), 0);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --sysfs-root '%s' 2>/dev/null", fx.root), 0);
	assert_contains(out, "\nHealth\n  no warning\n");
	assert_contains(out, "rate    mlx5_0:1 expected 400 Gb/s: the port limits (PCIe Gen5 x16: 504 Gb/s)");
	assert_int_equal(rp_fxh_config(&fx, FXH_DN_GPU0, RP_ACS_RR, 4096), 0);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --sysfs-root '%s' 2>/dev/null", fx.root), 0);
	assert_contains(out, "WARNING acs_redirect           ACS on bridge 0000:02:00.0");
	assert_true(strstr(out, "no warning") == NULL);
	rp_fx_destroy(&fx);
}

/* ---- the nccl command: the health of the ports NCCL would select ---- */

#define ALL_PORTS "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1"

/* "nccl --json" with the rules of 2.28.9 (pinned: the test machine's libnccl must not decide) and
 * --hca spec; the codes of health.warnings, space-separated with their devices ("code@device "). */
static json_t *nccl_json(const struct rp_fx *fx, const char *spec, int want_exit, char *codes, size_t size)
{
	static char out[1 << 20];
	json_t *j, *w;
	size_t len = 0;
	int rc;

	rc = rp_test_run_bin(out, sizeof(out), "nccl --json --nccl-version 2.28.9 --hca '%s' --sysfs-root '%s' 2>/dev/null",
			     spec, fx->root);
	if (rc != want_exit)
		fail_msg("nccl --hca %s exited with %d, want %d:\n%s", spec, rc, want_exit, out);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	w = rp_test_key(rp_test_key(j, "health"), "warnings");
	codes[0] = '\0';
	for (size_t i = 0; i < json_array_size(w); i++)
		len += (size_t)snprintf(codes + len, size - len, "%s@%s ",
					json_string_value(rp_test_key(json_array_get(w, i), "code")),
					json_string_value(rp_test_key(json_array_get(w, i), "device")));
	return j;
}

/* A port at HDR, mlx5_0's PCIe link at Gen4 x8 and ACS redirect above GPU 0: with every port
 * selected, each code appears; with mlx5_1 alone only the node-wide acs_redirect does (the bridge
 * above GPU 0 also sits between it and mlx5_1); the text shows the same with the codes. */
static void test_cmd_nccl_health(void **state)
{
	static char out[1 << 20];
	struct rp_fx_port hdr = rp_fx_port_ib_ndr_active;
	char codes[1024];
	struct rp_fx fx;
	json_t *j;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fxh_machine_clean(&fx), 0);
	j = nccl_json(&fx, ALL_PORTS, 0, codes, sizeof(codes));
	assert_string_equal(codes, "");
	assert_int_equal(json_array_size(rp_test_key(rp_test_key(j, "health"), "expected_rates")), 8);
	json_decref(j);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "nccl --nccl-version 2.28.9 --hca '=mlx5_7:1' --sysfs-root '%s' "
					 "2>/dev/null", fx.root), 0);
	assert_contains(out, "\nhealth of the selected ports: no warning\n");

	hdr.rate = "200 Gb/sec (4X HDR)";
	assert_int_equal(rp_fx_port(&fx, "mlx5_3", 1, &hdr), 0);
	assert_int_equal(rp_fxh_link_pair(&fx, FXH_DN_NIC0, FXH_NIC0, "16.0 GT/s PCIe", 8, "32.0 GT/s PCIe", 16), 0);
	assert_int_equal(rp_fxh_config(&fx, FXH_DN_GPU0, RP_ACS_SV | RP_ACS_RR | RP_ACS_CR | RP_ACS_UF, 4096), 0);
	j = nccl_json(&fx, ALL_PORTS, 0, codes, sizeof(codes));
	assert_string_equal(codes, "link_degraded@mlx5_3:1 pcie_degraded@0000:05:00.0 pcie_bottleneck@mlx5_0:1 "
			    "acs_redirect@0000:02:00.0 ");
	json_decref(j);
	j = nccl_json(&fx, "=mlx5_1:1", 0, codes, sizeof(codes));
	assert_string_equal(codes, "acs_redirect@0000:02:00.0 ");
	assert_int_equal(json_array_size(rp_test_key(rp_test_key(j, "health"), "expected_rates")), 1);
	json_decref(j);
	j = nccl_json(&fx, "=mlx5_0:1,mlx5_3:1", 0, codes, sizeof(codes));
	assert_string_equal(codes, "link_degraded@mlx5_3:1 pcie_degraded@0000:05:00.0 pcie_bottleneck@mlx5_0:1 "
			    "acs_redirect@0000:02:00.0 ");
	json_decref(j);

	assert_int_equal(rp_test_run_bin(out, sizeof(out), "nccl --nccl-version 2.28.9 --hca '=mlx5_3:1' --sysfs-root '%s' "
					 "2>/dev/null", fx.root), 0);
	assert_contains(out, "\nhealth of the selected ports:\n");
	assert_contains(out, "  WARNING link_degraded      mlx5_3:1 at 4X HDR 200 Gb/s, the other 7 ports at 4X NDR 400 Gb/s\n");
	assert_contains(out, "  rate    mlx5_3:1 expected 200 Gb/s");
	assert_null(strstr(out, "pcie_degraded"));
	rp_fx_destroy(&fx);
}

/* mtu_mismatch in nccl: rxe1's netdev at 1500 against rxe0's 9000. */
static void test_cmd_nccl_mtu_mismatch(void **state)
{
	char codes[512];
	struct rp_fx fx;
	json_t *j;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_rxe(&fx), 0);
	assert_int_equal(rp_fx_write(&fx, "class/net/eth0/mtu", "9000\n"), 0);
	assert_int_equal(rp_fx_write(&fx, "class/net/eth1/mtu", "1500\n"), 0);
	/* 2.28.9 crashes on this pair (rxe0 has no PCI link and comes first): exit 1, health still there. */
	j = nccl_json(&fx, "=rxe0:1,rxe1:1", 1, codes, sizeof(codes));
	assert_string_equal(codes, "mtu_mismatch@rxe1:1 ");
	json_decref(j);
	j = nccl_json(&fx, "=rxe0:1", 0, codes, sizeof(codes));
	assert_string_equal(codes, "");
	json_decref(j);
	rp_fx_destroy(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_machine_no_item),
		cmocka_unit_test(test_link_degraded),
		cmocka_unit_test(test_link_degraded_width_mixed),
		cmocka_unit_test(test_port_states),
		cmocka_unit_test(test_port_down_phys_unknown),
		cmocka_unit_test(test_pcie_degraded_at_adapter),
		cmocka_unit_test(test_pcie_degraded_at_bridge),
		cmocka_unit_test(test_vf_link_is_the_pf_link),
		cmocka_unit_test(test_gen5_adapter_in_gen4_slot),
		cmocka_unit_test(test_gpu_link),
		cmocka_unit_test(test_acs_redirect_one_switch_port),
		cmocka_unit_test(test_acs_unreadable_without_root),
		cmocka_unit_test(test_acs_not_on_root_complex_paths),
		cmocka_unit_test(test_acs_nearest_per_release),
		cmocka_unit_test(test_iommu),
		cmocka_unit_test(test_iommu_cmdline),
		cmocka_unit_test(test_gpudirect_readiness),
		cmocka_unit_test(test_soft_roce_machine),
		cmocka_unit_test(test_mtu_mismatch_node),
		cmocka_unit_test(test_mtu_mismatch_majority),
		cmocka_unit_test(test_codes_stable),
		cmocka_unit_test(test_health_json),
		cmocka_unit_test(test_cmd_devices_json),
		cmocka_unit_test(test_cmd_devices_text),
		cmocka_unit_test(test_cmd_nccl_health),
		cmocka_unit_test(test_cmd_nccl_mtu_mismatch),
	};

	return cmocka_run_group_tests_name("health", tests, quiet, NULL);
}
