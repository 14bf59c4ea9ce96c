/* test_sysfs.c: every sysfs format (good, malformed, empty) and the root-prefixed readers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture.h"
#include "discover/sysfs.h"

static void test_state(void **state)
{
	int v = 99;

	(void)state;
	assert_int_equal(rp_sysfs_parse_state("4: ACTIVE", &v), 0);
	assert_int_equal(v, 4);
	assert_int_equal(rp_sysfs_parse_state("1: DOWN", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(rp_sysfs_parse_state("2: INIT", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(rp_sysfs_parse_state("3: ARMED", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(rp_sysfs_parse_state("5: ACTIVE_DEFER", &v), 0);
	assert_int_equal(v, 5);
	v = 99;
	assert_int_equal(rp_sysfs_parse_state("", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_state("garbage", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_state("4: DOWN", &v), -EINVAL);      /* number and name disagree */
	assert_int_equal(rp_sysfs_parse_state("4:ACTIVE", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_state("4: ", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_state(": ACTIVE", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_state("-4: ACTIVE", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_state(" 4: ACTIVE", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_state("99999999999: ACTIVE", &v), -ERANGE);
	assert_int_equal(rp_sysfs_parse_state("4: ACTIVE\x01", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_state(NULL, &v), -EINVAL);
	assert_int_equal(v, 99);
	/* A newer kernel's state number past the table is accepted with its own name. */
	assert_int_equal(rp_sysfs_parse_state("7: FUTURE", &v), 0);
	assert_int_equal(v, 7);
}

static void test_phys_state(void **state)
{
	static const char *const good[] = { "1: Sleep", "2: Polling", "3: Disabled", "4: PortConfigurationTraining",
					     "5: LinkUp", "6: LinkErrorRecovery", "7: Phy Test" };
	int v = 0;

	(void)state;
	for (int i = 0; i < 7; i++) {
		assert_int_equal(rp_sysfs_parse_phys_state(good[i], &v), 0);
		assert_int_equal(v, i + 1);
	}
	v = 42;
	assert_int_equal(rp_sysfs_parse_phys_state("", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_phys_state("5: Linkup", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_phys_state("LinkUp", &v), -EINVAL);
	assert_int_equal(v, 42);
}

static void test_rate(void **state)
{
	char text[32] = "x";
	double g = -1;

	(void)state;
	assert_int_equal(rp_sysfs_parse_rate("100 Gb/sec (4X EDR)", &g, text, sizeof(text)), 0);
	assert_true(g == 100.0);
	assert_string_equal(text, "4X EDR");
	assert_int_equal(rp_sysfs_parse_rate("400 Gb/sec (4X NDR)", &g, text, sizeof(text)), 0);
	assert_true(g == 400.0);
	assert_string_equal(text, "4X NDR");
	assert_int_equal(rp_sysfs_parse_rate("2.5 Gb/sec (1X SDR)", &g, text, sizeof(text)), 0);
	assert_true(g == 2.5);
	assert_string_equal(text, "1X SDR");
	assert_int_equal(rp_sysfs_parse_rate("10 Gb/sec (4X)", &g, text, sizeof(text)), 0);   /* old kernels */
	assert_true(g == 10.0);
	assert_string_equal(text, "4X");
	assert_int_equal(rp_sysfs_parse_rate("600 Gb/sec (12X HDR)", &g, text, sizeof(text)), 0);
	assert_string_equal(text, "12X HDR");
	assert_int_equal(rp_sysfs_parse_rate("56 Gb/sec (4X FDR)", &g, text, sizeof(text)), 0);
	assert_int_equal(rp_sysfs_parse_rate("40 Gb/sec (4X FDR10)", &g, text, sizeof(text)), 0);
	assert_string_equal(text, "4X FDR10");
	assert_int_equal(rp_sysfs_parse_rate("25 Gb/sec", &g, text, sizeof(text)), 0);
	assert_string_equal(text, "");

	g = -1;
	strcpy(text, "keep");
	assert_int_equal(rp_sysfs_parse_rate("", &g, text, sizeof(text)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_rate("fast", &g, text, sizeof(text)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_rate("100 Gb/sec (4X EDR", &g, text, sizeof(text)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_rate("100 Gb/sec (EDR)", &g, text, sizeof(text)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_rate("100 Gb/sec ()", &g, text, sizeof(text)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_rate("100 Gb/sec (4X edr)", &g, text, sizeof(text)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_rate("1.2.3 Gb/sec (4X)", &g, text, sizeof(text)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_rate("-100 Gb/sec (4X)", &g, text, sizeof(text)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_rate("100 Mb/sec (4X)", &g, text, sizeof(text)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_rate("100 Gb/sec (4X EDR) trailing", &g, text, sizeof(text)), -EINVAL);
	/* The width/speed text must fit the caller's buffer. */
	assert_int_equal(rp_sysfs_parse_rate("100 Gb/sec (4X EDR)", &g, text, 4), -EINVAL);
	assert_true(g == -1);
	assert_string_equal(text, "keep");
}

static void test_link_layer(void **state)
{
	enum rp_link_layer ll = RP_LL_UNKNOWN;

	(void)state;
	assert_int_equal(rp_sysfs_parse_link_layer("InfiniBand", &ll), 0);
	assert_int_equal(ll, RP_LL_INFINIBAND);
	assert_int_equal(rp_sysfs_parse_link_layer("Ethernet", &ll), 0);
	assert_int_equal(ll, RP_LL_ETHERNET);
	assert_int_equal(rp_sysfs_parse_link_layer("Unknown", &ll), 0);
	assert_int_equal(ll, RP_LL_UNKNOWN);
	ll = RP_LL_ETHERNET;
	assert_int_equal(rp_sysfs_parse_link_layer("", &ll), -EINVAL);
	assert_int_equal(rp_sysfs_parse_link_layer("infiniband", &ll), -EINVAL);
	assert_int_equal(rp_sysfs_parse_link_layer("Ethernet ", &ll), -EINVAL);
	assert_int_equal(ll, RP_LL_ETHERNET);
}

static void test_lid(void **state)
{
	uint32_t lid = 7;

	(void)state;
	assert_int_equal(rp_sysfs_parse_lid("0x1a", &lid), 0);
	assert_int_equal(lid, 26);
	assert_int_equal(rp_sysfs_parse_lid("26", &lid), 0);    /* some drivers write decimal */
	assert_int_equal(lid, 26);
	assert_int_equal(rp_sysfs_parse_lid("0x0", &lid), 0);
	assert_int_equal(lid, 0);
	lid = 7;
	assert_int_equal(rp_sysfs_parse_lid("", &lid), -EINVAL);
	assert_int_equal(rp_sysfs_parse_lid("zz", &lid), -EINVAL);
	assert_int_equal(rp_sysfs_parse_lid("0x", &lid), -EINVAL);
	assert_int_equal(rp_sysfs_parse_lid("-1", &lid), -EINVAL);
	assert_int_equal(rp_sysfs_parse_lid("0x1ffffffff", &lid), -ERANGE);
	assert_int_equal(lid, 7);
}

static void test_gid(void **state)
{
	uint8_t raw[16], keep[16];
	char text[RP_GID_TEXT];

	(void)state;
	assert_int_equal(rp_sysfs_parse_gid("0000:0000:0000:0000:0000:ffff:0a4d:0001", raw), 0);
	assert_int_equal(raw[10], 0xff);
	assert_int_equal(raw[11], 0xff);
	assert_int_equal(raw[12], 10);
	assert_int_equal(raw[13], 77);
	assert_int_equal(raw[15], 1);
	rp_sysfs_gid_to_text(raw, text);
	assert_string_equal(text, "0000:0000:0000:0000:0000:ffff:0a4d:0001");
	assert_false(rp_sysfs_gid_is_zero(raw));

	assert_int_equal(rp_sysfs_parse_gid("FE80:0000:0000:0000:B8CE:F6FF:FE00:0001", raw), 0);
	rp_sysfs_gid_to_text(raw, text);
	assert_string_equal(text, "fe80:0000:0000:0000:b8ce:f6ff:fe00:0001");
	assert_int_equal(rp_sysfs_parse_gid("fe80::1", raw), 0);      /* people type short forms */
	rp_sysfs_gid_to_text(raw, text);
	assert_string_equal(text, "fe80:0000:0000:0000:0000:0000:0000:0001");
	assert_int_equal(rp_sysfs_parse_gid("0000:0000:0000:0000:0000:0000:0000:0000", raw), 0);
	assert_true(rp_sysfs_gid_is_zero(raw));

	memset(keep, 0xab, sizeof(keep));
	memcpy(raw, keep, sizeof(raw));
	assert_int_equal(rp_sysfs_parse_gid("", raw), -EINVAL);
	assert_int_equal(rp_sysfs_parse_gid("0000:0000:0000:0000:0000:ffff:0a4d", raw), -EINVAL);
	assert_int_equal(rp_sysfs_parse_gid("0000:0000:0000:0000:0000:ffff:0a4d:0001:0002", raw), -EINVAL);
	assert_int_equal(rp_sysfs_parse_gid("00000:0000:0000:0000:0000:ffff:0a4d:0001", raw), -EINVAL);
	assert_int_equal(rp_sysfs_parse_gid("gggg:0000:0000:0000:0000:ffff:0a4d:0001", raw), -EINVAL);
	assert_int_equal(rp_sysfs_parse_gid("not a gid", raw), -EINVAL);
	assert_memory_equal(raw, keep, sizeof(raw));
}

static void test_gid_type_and_ndev(void **state)
{
	enum rp_gid_type t = RP_GID_TYPE_NONE;
	char nd[RP_NAME_MAX] = "keep";

	(void)state;
	assert_int_equal(rp_sysfs_parse_gid_type("IB/RoCE v1", &t), 0);
	assert_int_equal(t, RP_GID_TYPE_IB_ROCE_V1);
	assert_int_equal(rp_sysfs_parse_gid_type("RoCE v2", &t), 0);
	assert_int_equal(t, RP_GID_TYPE_ROCE_V2);
	assert_int_equal(rp_sysfs_parse_gid_type("", &t), -EINVAL);
	assert_int_equal(rp_sysfs_parse_gid_type("RoCE v3", &t), -EINVAL);
	assert_int_equal(rp_sysfs_parse_gid_type("roce v2", &t), -EINVAL);
	assert_int_equal(t, RP_GID_TYPE_ROCE_V2);

	assert_int_equal(rp_sysfs_parse_ndev("ens1f0np0", nd, sizeof(nd)), 0);
	assert_string_equal(nd, "ens1f0np0");
	assert_int_equal(rp_sysfs_parse_ndev("", nd, sizeof(nd)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_ndev("a/b", nd, sizeof(nd)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_ndev("eth 0", nd, sizeof(nd)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_ndev("sixteen_chars_xx", nd, sizeof(nd)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_ndev("..", nd, sizeof(nd)), -EINVAL);
	assert_string_equal(nd, "ens1f0np0");
}

static void test_device_attrs(void **state)
{
	char fw[16] = "", guid_text[20] = "";
	uint64_t guid = 0;
	int v = 0;

	(void)state;
	assert_int_equal(rp_sysfs_parse_fw_ver("28.39.1002", fw, sizeof(fw)), 0);
	assert_string_equal(fw, "28.39.1002");
	assert_int_equal(rp_sysfs_parse_fw_ver("", fw, sizeof(fw)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_fw_ver("1.2\x07", fw, sizeof(fw)), -EINVAL);
	assert_int_equal(rp_sysfs_parse_fw_ver("a-very-long-firmware-version", fw, sizeof(fw)), -EINVAL);
	assert_string_equal(fw, "28.39.1002");

	assert_int_equal(rp_sysfs_parse_node_guid("B8CE:F603:00A1:0010", &guid, guid_text), 0);
	assert_true(guid == 0xb8cef60300a10010ULL);
	assert_string_equal(guid_text, "b8ce:f603:00a1:0010");
	assert_int_equal(rp_sysfs_parse_node_guid("", &guid, guid_text), -EINVAL);
	assert_int_equal(rp_sysfs_parse_node_guid("b8ce:f603:00a1", &guid, guid_text), -EINVAL);
	assert_int_equal(rp_sysfs_parse_node_guid("b8cef60300a10010000", &guid, guid_text), -EINVAL);
	assert_int_equal(rp_sysfs_parse_node_guid("b8ce:f603:00a1:001g", &guid, guid_text), -EINVAL);

	assert_int_equal(rp_sysfs_parse_node_type("1: CA", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(rp_sysfs_parse_node_type("4: RNIC", &v), 0);
	assert_int_equal(v, 4);
	assert_int_equal(rp_sysfs_parse_node_type("1: switch", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_node_type("0: CA", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_node_type("", &v), -EINVAL);
	assert_int_equal(v, 4);

	assert_int_equal(rp_sysfs_parse_numa("-1", &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(rp_sysfs_parse_numa("3", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(rp_sysfs_parse_numa("", &v), -EINVAL);
	assert_int_equal(rp_sysfs_parse_numa("-2", &v), -ERANGE);
	assert_int_equal(rp_sysfs_parse_numa("x", &v), -EINVAL);
}

static void test_pci(void **state)
{
	char pci[RP_PCI_MAX] = "keep";
	uint32_t h = 0;

	(void)state;
	assert_int_equal(rp_sysfs_parse_pci("0000:3B:00.1", pci), 0);
	assert_string_equal(pci, "0000:3b:00.1");
	assert_int_equal(rp_sysfs_parse_pci("00000000:3B:00.0", pci), 0);    /* nvidia-smi's form */
	assert_string_equal(pci, "0000:3b:00.0");
	assert_int_equal(rp_sysfs_parse_pci("3b:00.0", pci), 0);
	assert_string_equal(pci, "0000:3b:00.0");
	assert_int_equal(rp_sysfs_parse_pci("10000:01:00.0", pci), 0);      /* VMD domains */
	assert_string_equal(pci, "10000:01:00.0");
	strcpy(pci, "keep");
	assert_int_equal(rp_sysfs_parse_pci("", pci), -EINVAL);
	assert_int_equal(rp_sysfs_parse_pci("pci0000:00", pci), -EINVAL);
	assert_int_equal(rp_sysfs_parse_pci("0000:3b:00", pci), -EINVAL);
	assert_int_equal(rp_sysfs_parse_pci("0000:3b:00.8", pci), -ERANGE);
	assert_int_equal(rp_sysfs_parse_pci("0000:3b:20.0", pci), -ERANGE);
	assert_int_equal(rp_sysfs_parse_pci("0000:3b:00.0x", pci), -EINVAL);
	assert_int_equal(rp_sysfs_parse_pci("0000:0000:3b:00.0", pci), -EINVAL);
	assert_string_equal(pci, "keep");

	assert_true(rp_sysfs_is_bdf("0000:3b:00.0"));
	assert_false(rp_sysfs_is_bdf("pci0000:00"));
	assert_false(rp_sysfs_is_bdf("0000:3b:00.0/"));
	assert_false(rp_sysfs_is_bdf("virtio0"));

	assert_int_equal(rp_sysfs_parse_hex("0x10de", 0xffff, &h), 0);
	assert_int_equal(h, 0x10de);
	assert_int_equal(rp_sysfs_parse_hex("0x030200", 0xffffff, &h), 0);
	assert_int_equal(h, 0x030200);
	assert_int_equal(rp_sysfs_parse_hex("10de", 0xffff, &h), -EINVAL);
	assert_int_equal(rp_sysfs_parse_hex("0x1ffff", 0xffff, &h), -ERANGE);
	assert_int_equal(rp_sysfs_parse_hex("", 0xffff, &h), -EINVAL);
}

static void test_readers(void **state)
{
	struct rp_fx fx;
	char buf[16], rel[64], **names = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_write(&fx, "a/state", "4: ACTIVE\n"), 0);
	assert_int_equal(rp_fx_write(&fx, "a/empty", ""), 0);
	assert_int_equal(rp_fx_write(&fx, "a/big", "0123456789abcdefghij\n"), 0);
	assert_int_equal(rp_fx_unreadable(&fx, "a/dir"), 0);
	for (int i = 0; i < 12; i++) {
		snprintf(rel, sizeof(rel), "g/%d", i);
		assert_int_equal(rp_fx_write(&fx, rel, "x"), 0);
	}

	assert_int_equal(rp_sysfs_read(fx.root, "a/state", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "4: ACTIVE");
	assert_int_equal(rp_sysfs_readf(fx.root, buf, sizeof(buf), "a/%s", "empty"), 0);
	assert_string_equal(buf, "");
	assert_int_equal(rp_sysfs_read(fx.root, "a/missing", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(rp_sysfs_read(fx.root, "a/big", buf, sizeof(buf)), -EOVERFLOW);
	assert_int_equal(rp_sysfs_read(fx.root, "a/dir", buf, sizeof(buf)), -EISDIR);

	/* Numeric entries sort by value: 2 before 10. */
	assert_int_equal(rp_sysfs_list_dir(fx.root, "g", &names, &n), 0);
	assert_int_equal(n, 12);
	assert_string_equal(names[2], "2");
	assert_string_equal(names[10], "10");
	assert_null(names[12]);
	rp_sysfs_free_names(names);
	assert_int_equal(rp_sysfs_list_dir(fx.root, "nope", &names, &n), -ENOENT);

	/* realpath relative to the root, and links out of the root refused. */
	assert_int_equal(rp_fx_symlink(&fx, "link", "a"), 0);
	assert_int_equal(rp_fx_symlink(&fx, "out", "/"), 0);
	assert_int_equal(rp_sysfs_realpath_rel(fx.root, "link", rel, sizeof(rel)), 0);
	assert_string_equal(rel, "a");
	assert_int_equal(rp_sysfs_realpath_rel(fx.root, "out", rel, sizeof(rel)), -EXDEV);
	rp_fx_destroy(&fx);
}

static void test_reader_long_path(void **state)
{
	char root[5000], buf[8];

	(void)state;
	memset(root, 'a', sizeof(root) - 1);
	root[0] = '/';
	root[sizeof(root) - 1] = '\0';
	assert_int_equal(rp_sysfs_read(root, "x", buf, sizeof(buf)), -ENAMETOOLONG);
	assert_int_equal(rp_sysfs_join("/sys", "class", buf, sizeof(buf)), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_phys_state),
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_link_layer),
		cmocka_unit_test(test_lid),
		cmocka_unit_test(test_gid),
		cmocka_unit_test(test_gid_type_and_ndev),
		cmocka_unit_test(test_device_attrs),
		cmocka_unit_test(test_pci),
		cmocka_unit_test(test_readers),
		cmocka_unit_test(test_reader_long_path),
	};

	return cmocka_run_group_tests_name("sysfs", tests, NULL, NULL);
}
