/* test_pcie.c: PCIe link speed parsing (both kernel spellings), encoding-aware bandwidth, the hop
 * chain of a device with the side of each link, the link a hop ends, the extended-capability walk
 * on crafted config images (loops, zero headers, short images) and ACS read from fixture config
 * bytes (full, 256 bytes, without root). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fixture.h"
#include "fixture_health.h"
#include "base/log.h"
#include "discover/pcie.h"

static void test_parse_speed(void **state)
{
	double g = -1;

	(void)state;
	assert_int_equal(rp_pcie_parse_speed("16.0 GT/s PCIe", &g), 0);
	assert_true(g == 16.0);
	assert_int_equal(rp_pcie_parse_speed("2.5 GT/s PCIe", &g), 0);
	assert_true(g == 2.5);
	assert_int_equal(rp_pcie_parse_speed("8 GT/s", &g), 0);   /* kernels up to 5.6 */
	assert_true(g == 8.0);
	assert_int_equal(rp_pcie_parse_speed("Unknown", &g), -ENODATA);
	assert_int_equal(rp_pcie_parse_speed("Unknown speed", &g), -ENODATA);
	g = 7;
	assert_int_equal(rp_pcie_parse_speed("", &g), -EINVAL);
	assert_int_equal(rp_pcie_parse_speed("16.0 GT/s PCIe x", &g), -EINVAL);
	assert_int_equal(rp_pcie_parse_speed("fast", &g), -EINVAL);
	assert_int_equal(rp_pcie_parse_speed("-8 GT/s", &g), -EINVAL);
	assert_int_equal(rp_pcie_parse_speed("16.0GT/s", &g), -EINVAL);
	assert_true(g == 7);
}

static void test_bandwidth(void **state)
{
	char t[32];

	(void)state;
	/* 8b/10b, 128b/130b, and Gen6 counted 1:1 as the kernel does. */
	assert_true(rp_pcie_lane_gbps(2.5) == 2.0);
	assert_true(rp_pcie_lane_gbps(5.0) == 4.0);
	assert_true(fabs(rp_pcie_lane_gbps(8.0) - 7.877) < 0.001);
	assert_true(fabs(rp_pcie_link_gbps(16.0, 8) - 126.03) < 0.01);
	assert_true(fabs(rp_pcie_link_gbps(16.0, 16) - 252.06) < 0.01);
	assert_true(fabs(rp_pcie_link_gbps(32.0, 16) - 504.12) < 0.01);
	assert_true(rp_pcie_link_gbps(64.0, 16) == 1024.0);
	assert_true(rp_pcie_link_gbps(16.0, 0) == 0);
	assert_true(rp_pcie_link_gbps(12.0, 16) == 0);
	assert_int_equal(rp_pcie_gen(32.0), 5);
	assert_int_equal(rp_pcie_gen(3.0), 0);
	rp_pcie_link_text(16.0, 8, t, sizeof(t));
	assert_string_equal(t, "Gen4 x8");
	rp_pcie_link_text(12.0, 4, t, sizeof(t));
	assert_string_equal(t, "12 GT/s x4");
	rp_pcie_link_text(0, 4, t, sizeof(t));
	assert_string_equal(t, "unknown");
}

static void test_chain_sides(void **state)
{
	struct rp_pci_hop hops[RP_PCIE_MAX_HOPS];
	struct rp_pcie_hop_link l;
	struct rp_fx fx;
	size_t n = 0;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fxh_machine_clean(&fx), 0);
	/* The adapter slot can only do Gen4 x8. */
	assert_int_equal(rp_fxh_link(&fx, FXH_DN_NIC0, "16.0 GT/s PCIe", 8, "16.0 GT/s PCIe", 8), 0);
	assert_int_equal(rp_fxh_link(&fx, FXH_NIC0, "16.0 GT/s PCIe", 8, "32.0 GT/s PCIe", 16), 0);
	assert_int_equal(rp_pcie_chain(fx.root, "devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.0/infiniband/mlx5_0",
				       hops, RP_PCIE_MAX_HOPS, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(hops[0].bdf, FXH_RP_A);
	assert_true(hops[0].bridge && hops[0].downstream_facing);      /* root port */
	assert_true(hops[1].bridge && !hops[1].downstream_facing);     /* switch upstream port */
	assert_true(hops[2].bridge && hops[2].downstream_facing);      /* switch downstream port */
	assert_true(!hops[3].bridge && !hops[3].downstream_facing);    /* the adapter */
	assert_string_equal(hops[3].rel, "devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.0");
	/* Links end at upstream facing hops only. */
	assert_false(rp_pcie_hop_link(hops, n, 0, &l));
	assert_false(rp_pcie_hop_link(hops, n, n, &l));   /* past the chain */
	assert_false(rp_pcie_hop_link(hops, n, 2, &l));
	assert_true(rp_pcie_hop_link(hops, n, 1, &l));
	assert_ptr_equal(l.parent, &hops[0]);
	assert_true(rp_pcie_hop_link(hops, n, 3, &l));
	assert_ptr_equal(l.parent, &hops[2]);
	/* What both ends can do: the smaller maximum. */
	assert_true(l.exp_gts == 16.0 && l.exp_width == 8);
	assert_true(l.cur_gts == 16.0 && l.cur_width == 8);
	/* Not a PCI path; too many hops. */
	assert_int_equal(rp_pcie_chain(fx.root, "devices/virtual/infiniband/rxe0", hops, RP_PCIE_MAX_HOPS, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(rp_pcie_chain(fx.root, "devices/pci0000:00/0000:00:01.0/0000:01:00.0", hops, 1, &n), -E2BIG);
	rp_fx_destroy(&fx);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void test_ext_cap_walk(void **state)
{
	static uint8_t cfg[4096];

	(void)state;
	memset(cfg, 0, sizeof(cfg));
	assert_int_equal(rp_pcie_find_ext_cap(cfg, 0x100, 0x000d), -ENODATA);
	assert_int_equal(rp_pcie_find_ext_cap(cfg, sizeof(cfg), 0x000d), -ENOENT);   /* header 0 */
	put32(cfg + 0x100, 0x150u << 20 | 0x10001);
	put32(cfg + 0x150, 0x200u << 20 | 0x1000b);
	put32(cfg + 0x200, 0u << 20 | 0x1000d);
	assert_int_equal(rp_pcie_find_ext_cap(cfg, sizeof(cfg), 0x000d), 0x200);
	assert_int_equal(rp_pcie_find_ext_cap(cfg, sizeof(cfg), 0x000b), 0x150);
	assert_int_equal(rp_pcie_find_ext_cap(cfg, sizeof(cfg), 0x000f), -ENOENT);
	/* The image ends before the next capability. */
	assert_int_equal(rp_pcie_find_ext_cap(cfg, 0x180, 0x000d), -ENOENT);
	/* A loop (0x150 -> 0x100 -> 0x150 ...) ends after the kernel's 480 steps. */
	put32(cfg + 0x150, 0x100u << 20 | 0x1000b);
	assert_int_equal(rp_pcie_find_ext_cap(cfg, sizeof(cfg), 0x000d), -ENOENT);
	/* All ones: no device behind it. */
	put32(cfg + 0x100, 0xffffffffu);
	assert_int_equal(rp_pcie_find_ext_cap(cfg, sizeof(cfg), 0xffff), -ENOENT);
}

static void test_read_acs(void **state)
{
	struct rp_fx fx;
	uint16_t ctrl = 0;
	char bits[48];

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_dgx_h100(&fx), 0);
	/* No config file at all. */
	assert_int_equal(rp_pcie_read_acs(fx.root, "bus/pci/devices/" FXH_DN_GPU0, &ctrl), -ENOENT);
	assert_int_equal(rp_fxh_config(&fx, FXH_DN_GPU0, 0x1d, 4096), 0);
	assert_int_equal(rp_pcie_read_acs(fx.root, "bus/pci/devices/" FXH_DN_GPU0, &ctrl), 0);
	assert_int_equal(ctrl, 0x1d);
	rp_pcie_acs_text(ctrl, bits, sizeof(bits));
	assert_string_equal(bits, "SV RR CR UF");
	rp_pcie_acs_text(0, bits, sizeof(bits));
	assert_string_equal(bits, "none");
	/* Without root the kernel stops at byte 64. */
	assert_int_equal(rp_fxh_config(&fx, FXH_DN_GPU0, 0x1d, 64), 0);
	assert_int_equal(rp_pcie_read_acs(fx.root, "bus/pci/devices/" FXH_DN_GPU0, &ctrl), -EPERM);
	/* Conventional (256 bytes) and extended space without ACS. */
	assert_int_equal(rp_fxh_config(&fx, FXH_DN_GPU0, 0x1d, 256), 0);
	assert_int_equal(rp_pcie_read_acs(fx.root, "bus/pci/devices/" FXH_DN_GPU0, &ctrl), -ENXIO);
	assert_int_equal(rp_fxh_config(&fx, FXH_DN_GPU0, -1, 4096), 0);
	assert_int_equal(rp_pcie_read_acs(fx.root, "bus/pci/devices/" FXH_DN_GPU0, &ctrl), -ENXIO);
	rp_fx_destroy(&fx);
}

static void test_read_link(void **state)
{
	struct rp_pcie_link l;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_dgx_h100(&fx), 0);
	assert_int_equal(rp_pcie_read_link(fx.root, "bus/pci/devices/" FXH_NIC0, &l), -ENOENT);
	assert_int_equal(rp_fxh_link(&fx, FXH_NIC0, "Unknown", 0, "32.0 GT/s PCIe", 16), 0);
	assert_int_equal(rp_pcie_read_link(fx.root, "bus/pci/devices/" FXH_NIC0, &l), 0);
	assert_true(l.cur_gts == 0 && l.cur_width == 0);   /* unknown stays unknown */
	assert_true(l.max_gts == 32.0 && l.max_width == 16);
	rp_fx_destroy(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_speed),
		cmocka_unit_test(test_bandwidth),
		cmocka_unit_test(test_chain_sides),
		cmocka_unit_test(test_ext_cap_walk),
		cmocka_unit_test(test_read_acs),
		cmocka_unit_test(test_read_link),
	};

	rp_log_set_level(RP_LOG_ERROR);
	return cmocka_run_group_tests_name("pcie", tests, NULL, NULL);
}
