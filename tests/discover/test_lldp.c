/* test_lldp.c: lldpctl's JSON (both of its shapes), the switch port's number, this node's adapters as
 * native --topology lines that the topology reader accepts, and `devices --lldp` on a fixture tree
 * (lib/discover/lldp.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "discover/fabtopo.h"
#include "discover/lldp.h"
#include "discover/node.h"
#include "fixture.h"
#include "testutil.h"

/* Two neighbours (lldpctl lists several as an array): a named switch whose port id is an interface
 * name, and one that sent no system name (its chassis id stands for it) with a port described. */
static const char two[] =
	"{\"lldp\": {\"interface\": [\n"
	" {\"ens1f0np0\": {\"via\": \"LLDP\", \"rid\": \"1\", \"age\": \"0 day, 01:00:00\",\n"
	"   \"chassis\": {\"leaf 07\": {\"id\": {\"type\": \"mac\", \"value\": \"0c:42:a1:00:00:07\"}, \"descr\": \"Cumulus\"}},\n"
	"   \"port\": {\"id\": {\"type\": \"ifname\", \"value\": \"swp12\"}, \"descr\": \"to gpu01\", \"ttl\": \"120\"}}},\n"
	" {\"ens2f0np0\": {\"via\": \"LLDP\",\n"
	"   \"chassis\": {\"id\": {\"type\": \"mac\", \"value\": \"0c:42:a1:00:00:08\"}},\n"
	"   \"port\": {\"id\": {\"type\": \"mac\", \"value\": \"0c:42:a1:00:00:99\"}, \"descr\": \"Ethernet1/3\"}}}\n"
	"]}}\n";

static int parse_str(const char *s, struct rp_lldp_neighbor **nb, size_t *n, char *err)
{
	return rp_lldp_parse(s, strlen(s), nb, n, err, 256);
}

static void test_parse(void **state)
{
	static const char one[] = "{\"lldp\": {\"interface\": {\"eth0\": {\"chassis\": {\"sw1\": {}}, "
				  "\"port\": {\"id\": {\"type\": \"ifname\", \"value\": \"Ethernet4\"}}}}}}";
	struct rp_lldp_neighbor *nb;
	size_t n;
	char err[256];

	(void)state;
	assert_int_equal(rp_lldp_parse(two, strlen(two), &nb, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(nb[0].ifname, "ens1f0np0");
	assert_string_equal(nb[0].chassis, "leaf_07");       /* spaces would split a native line */
	assert_string_equal(nb[0].port, "swp12");            /* the id, an interface name, not the description */
	assert_string_equal(nb[1].chassis, "0c:42:a1:00:00:08");
	assert_string_equal(nb[1].port, "Ethernet1/3");      /* a MAC id: the description instead */
	free(nb);
	assert_int_equal(rp_lldp_parse(one, strlen(one), &nb, &n, err, sizeof(err)), 0);   /* one: an object */
	assert_int_equal(n, 1);
	assert_string_equal(nb[0].chassis, "sw1");
	free(nb);
	assert_int_equal(parse_str("{\"lldp\": {}}", &nb, &n, err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(parse_str("{\"lldp\": [1]}", &nb, &n, err), -EINVAL);
	assert_non_null(strstr(err, "not lldpctl -f json: no lldp.interface"));
	assert_int_equal(parse_str("lldp: yes", &nb, &n, err), -EINVAL);
	assert_non_null(strstr(err, "not JSON (line 1"));
	assert_int_equal(parse_str("{\"lldp\": {\"interface\": {\"eth0\": {\"chassis\": {\"sw\": {}}}}}}", &nb, &n, err), -EINVAL);
	assert_non_null(strstr(err, "interface eth0: its neighbour has no port"));
	assert_null(nb);
}

static void test_port_number(void **state)
{
	(void)state;
	assert_int_equal(rp_lldp_port_number("swp12"), 12);
	assert_int_equal(rp_lldp_port_number("Ethernet1/12"), 12);
	assert_int_equal(rp_lldp_port_number("eth-1/1/3 "), 3);
	assert_int_equal(rp_lldp_port_number("uplink"), 0);
	assert_int_equal(rp_lldp_port_number("p0"), 0);
	assert_int_equal(rp_lldp_port_number("p123456"), 0);
}

/* Two RoCE adapters whose GID tables name ens1f0np0 and ens2f0np0, and a third whose netdev heard
 * nobody: two lines, each read back by the topology reader onto its leaf and port. */
static int roce_machine(struct rp_fx *fx)
{
	static const char *const names[] = { "mlx5_0", "mlx5_1", "mlx5_2" }, *const nds[] = { "ens1f0np0", "ens2f0np0", "ens3f0np0" };

	for (int i = 0; i < 3; i++) {
		char pci[64];

		snprintf(pci, sizeof(pci), "pci0000:00/0000:00:0%d.0/0000:0%d:00.0", i + 1, i + 1);
		if (rp_fx_hca(fx, names[i], pci, 0, "28.39.1002", "0c42:a103:0000:0001") ||
		    rp_fx_port(fx, names[i], 1, &rp_fx_port_eth_100_active) ||
		    rp_fx_gid(fx, names[i], 1, 0, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "IB/RoCE v1", nds[i]) ||
		    rp_fx_gid(fx, names[i], 1, 1, "fe80:0000:0000:0000:0e42:a1ff:fe00:0001", "RoCE v2", nds[i]))
			return -1;
	}
	return 0;
}

static void test_topology_lines(void **state)
{
	struct rp_fx fx;
	struct rp_node node;
	struct rp_lldp_neighbor *nb;
	struct rp_fabtopo *t;
	struct rp_fabtopo_map mp;
	struct rp_endpoint eps[2] = { { .node = "gpu01", .device = "mlx5_0", .port = 1 },
				      { .node = "gpu01", .device = "mlx5_1", .port = 1 } };
	size_t n;
	char err[256], *out;

	(void)state;
	assert_int_equal(rp_lldp_parse(two, strlen(two), &nb, &n, err, sizeof(err)), 0);
	rp_test_discover(&fx, roce_machine, &node);
	assert_int_equal(rp_lldp_topology(&node, "gpu01", nb, n, &out), 2);
	assert_string_equal(out, "adapter gpu01/mlx5_0:1 leaf_07 12   # ens1f0np0, switch port swp12\n"
				 "adapter gpu01/mlx5_1:1 0c:42:a1:00:00:08 3   # ens2f0np0, switch port Ethernet1/3\n");
	assert_int_equal(rp_fabtopo_parse("lldp", out, strlen(out), &t, err, sizeof(err)), 0);
	assert_int_equal(rp_fabtopo_map_build(t, eps, 2, &mp), 0);
	assert_string_equal(mp.leaf_names[mp.leaf[0]], "leaf_07");
	assert_int_equal(mp.leaf_port[0], 12);
	assert_int_equal(mp.leaf_port[1], 3);
	rp_fabtopo_map_fini(&mp);
	rp_fabtopo_destroy(t);
	free(out);
	rp_test_discover_done(&fx, &node);
	free(nb);
}

/* The command: its lines on stdout, exit 0; a node none of whose netdevs heard anyone exits 3 saying
 * so; a file that is not lldpctl's JSON exits 2 naming what is wrong; --node without --lldp is a usage error. */
static void test_cli(void **state)
{
	static char out[8192];
	struct rp_fx fx;
	char path[512], root[512];
	FILE *f;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(roce_machine(&fx), 0);
	rp_fx_path(&fx, "", root, sizeof(root));
	snprintf(path, sizeof(path), "%s/lldp.json", rp_test_tmpdir());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(two, f);
	fclose(f);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --sysfs-root '%s' --lldp '%s' --node gpu01 2>&1", root, path), 0);
	assert_string_equal(out, "adapter gpu01/mlx5_0:1 leaf_07 12   # ens1f0np0, switch port swp12\n"
				 "adapter gpu01/mlx5_1:1 0c:42:a1:00:00:08 3   # ens2f0np0, switch port Ethernet1/3\n");
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --sysfs-root '%s' --lldp - --node gpu01 < '%s' 2>/dev/null",
					 root, path), 0);
	assert_non_null(strstr(out, "adapter gpu01/mlx5_1:1"));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"lldp\": {\"interface\": {\"eth9\": {\"chassis\": {\"sw\": {}}, \"port\": {\"descr\": \"p1\"}}}}}", f);
	fclose(f);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --sysfs-root '%s' --lldp '%s' 2>&1", root, path), 3);
	assert_non_null(strstr(out, "none of this node's 3 adapters has a netdev that heard an LLDP neighbour (1 interfaces did: eth9)"));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[]", f);
	fclose(f);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --sysfs-root '%s' --lldp '%s' 2>&1", root, path), 2);
	assert_non_null(strstr(out, "rdmaprobe devices: --lldp"));
	assert_non_null(strstr(out, "not lldpctl -f json"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --sysfs-root '%s' --node x 2>&1", root), 2);
	assert_non_null(strstr(out, "--node goes with --lldp"));
	rp_fx_destroy(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_port_number),
		cmocka_unit_test(test_topology_lines),
		cmocka_unit_test(test_cli),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
