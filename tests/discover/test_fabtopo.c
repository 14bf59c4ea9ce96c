/* test_fabtopo.c: --topology files (native and Slurm topology.conf), their errors, and their map onto a
 * run's endpoints (lib/discover/fabtopo.h). */
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

#include "discover/fabtopo.h"

/* the test binaries run from the repository root (make check) */
#define RP_TEST_DATA "tests/discover/data"

static int parse(const char *text, struct rp_fabtopo **t, char *err, size_t len)
{
	return rp_fabtopo_parse("topo", text, strlen(text), t, err, len);
}

static void ep_set(struct rp_endpoint *e, const char *node, const char *dev, int port)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->node, sizeof(e->node), "%s", node);
	snprintf(e->device, sizeof(e->device), "%s", dev);
	e->port = port;
}

static void test_native(void **state)
{
	struct rp_fabtopo *t;
	struct rp_fabtopo_map mp;
	struct rp_endpoint eps[5];
	char err[256];

	(void)state;
	assert_int_equal(parse("# two leaves, two spines\nroute dmodk\n"
			       "adapter a/mlx5_0:1 L0 1\nadapter a/mlx5_1 L1 1   # every port\n"
			       "adapter b/mlx5_0:1 L0 2\nadapter c/mlx5_0:1 L1 3\n"
			       "uplink L0 S0\nuplink L0 S1\nuplink L1 S0\nuplink L1 S1\nuplink L1 S1\n", &t, err, sizeof(err)), 0);
	assert_int_equal(t->n_leaves, 2);
	assert_int_equal(t->n_spines, 2);
	assert_int_equal(t->n_up, 4);   /* the repeated line is one link */
	assert_int_equal(t->n_nodes, 3);
	assert_true(t->dmodk);
	ep_set(&eps[0], "a", "mlx5_0", 1);
	ep_set(&eps[1], "a", "mlx5_1", 2);
	ep_set(&eps[2], "b", "mlx5_0", 1);
	ep_set(&eps[3], "c", "mlx5_0", 1);
	ep_set(&eps[4], "d", "mlx5_0", 1);
	assert_int_equal(rp_fabtopo_map_build(t, eps, 5, &mp), 0);
	assert_int_equal(mp.n_unknown, 1);
	assert_int_equal(mp.leaf[4], RP_FABTOPO_NONE);
	assert_string_equal(mp.leaf_names[mp.leaf[0]], "L0");
	assert_string_equal(mp.leaf_names[mp.leaf[1]], "L1");   /* the any-port line */
	assert_int_equal(mp.leaf_port[3], 3);
	assert_int_equal(mp.node_idx[2], 1);
	assert_int_equal(mp.node_idx[3], 2);
	/* dmodk: the destination's node number modulo the spines; a same-leaf pair has none */
	assert_int_equal(rp_fabtopo_map_spine(&mp, 0, 3), 2 % 2);
	assert_int_equal(rp_fabtopo_map_spine(&mp, 3, 2), 1);
	assert_int_equal(rp_fabtopo_map_spine(&mp, 0, 2), RP_FABTOPO_NONE);
	assert_int_equal(rp_fabtopo_map_spine(&mp, 0, 4), RP_FABTOPO_NONE);
	assert_int_equal(mp.up[mp.leaf[0] * mp.n_spines + 1], 1);
	rp_fabtopo_map_fini(&mp);
	rp_fabtopo_destroy(t);
}

/* Every bad line is named, with what is wrong. */
static void test_native_errors(void **state)
{
	static const struct { const char *text, *want; } bad[] = {
		{ "adapter a/mlx5_0 L0\n", "line 1: adapter takes" },
		{ "adapter a L0 1\n", "line 1: adapter: 'a' is not NODE/DEVICE" },
		{ "adapter a/x:0 L0 1\n", "port '0' of a/x" },
		{ "adapter a/x L0 0\n", "leaf port '0'" },
		{ "adapter a/x L0 1\nadapter a/x L1 2\n", "line 2: adapter: a/x is listed twice" },
		{ "uplink L0 L0\n", "not its own spine" },
		{ "route ecmp\n", "route takes dmodk or unknown" },
		{ "route dmodk\nroute dmodk\n", "line 2: route is set twice" },
		{ "switch L0\n", "unknown keyword 'switch'" },
		{ "# nothing\n", "no adapter" },
		{ "adapter a/x L0 1\nSwitchName=s1 Nodes=a\n", "line 2: a Slurm line in a native" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rp_fabtopo *t = (struct rp_fabtopo *)1;
		char err[256];

		assert_int_equal(parse(bad[i].text, &t, err, sizeof(err)), -EINVAL);
		assert_null(t);
		if (!strstr(err, bad[i].want))
			fail_msg("'%s': got '%s', want '%s'", bad[i].text, err, bad[i].want);
	}
}

static int collect(void *arg, const char *name)
{
	char *buf = arg;

	strcat(buf, name);
	strcat(buf, " ");
	return 0;
}

static void test_hostlist(void **state)
{
	char out[512] = "", err[128];

	(void)state;
	assert_int_equal(rp_hostlist_expand("n[08-11,20],login1,gpu[1-2]x", 100, collect, out, err, sizeof(err)), 0);
	assert_string_equal(out, "n08 n09 n10 n11 n20 login1 gpu1x gpu2x ");
	assert_int_equal(rp_hostlist_expand("n[3-1]", 100, collect, out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "runs backwards"));
	assert_int_equal(rp_hostlist_expand("n[1-x]", 100, collect, out, err, sizeof(err)), -EINVAL);
	assert_int_equal(rp_hostlist_expand("n[0-99]", 10, collect, out, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than 10"));
}

/* Slurm: a node's adapters on its switch's leaf for their rail; the spines' uplinks to each rail. */
static void test_slurm(void **state)
{
	struct rp_fabtopo *t;
	struct rp_fabtopo_map mp;
	struct rp_endpoint eps[4];
	char err[256];

	(void)state;
	assert_int_equal(parse("SwitchName=s0 Nodes=gpu[00-01]\nSwitchName=s1 Nodes=gpu02 LinkSpeed=100\n"
			       "SwitchName=core Switches=s[0-1]\n", &t, err, sizeof(err)), 0);
	assert_true(t->slurm);
	assert_false(t->dmodk);
	ep_set(&eps[0], "gpu00", "mlx5_0", 1);
	ep_set(&eps[1], "gpu00", "mlx5_1", 1);
	ep_set(&eps[2], "gpu01", "mlx5_0", 1);
	ep_set(&eps[3], "gpu02", "mlx5_1", 1);
	assert_int_equal(rp_fabtopo_map_build(t, eps, 4, &mp), 0);
	assert_int_equal(mp.n_unknown, 0);
	assert_string_equal(mp.leaf_names[mp.leaf[0]], "s0/mlx5_0");
	assert_string_equal(mp.leaf_names[mp.leaf[1]], "s0/mlx5_1");
	assert_int_equal(mp.leaf[2], mp.leaf[0]);
	assert_string_equal(mp.leaf_names[mp.leaf[3]], "s1/mlx5_1");
	assert_int_equal(mp.n_spines, 1);
	for (size_t l = 0; l < mp.n_leaves; l++)
		assert_int_equal(mp.up[l], 1);
	rp_fabtopo_map_fini(&mp);
	rp_fabtopo_destroy(t);

	assert_int_equal(parse("SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=a\n", &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2: node a is under two switches"));
	assert_int_equal(parse("SwitchName=s0 Nodes=a[2-1]\n", &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 1: Nodes=: 'a[2-1]': the range runs backwards"));
	assert_int_equal(parse("SwitchName=s0 Nodes=a Switches=b\n", &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse("SwitchName=s0 Nodes=a\nadapter a/x L 1\n", &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2: 'adapter' in a Slurm topology.conf"));
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(1 << 16);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 16) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* ibnetdiscover's output (tests/discover/data/ibnet-2leaf.txt: two leaves, one spine, a two-port
 * adapter, an adapter whose NodeDescription names no host and device): the adapters on their leaves
 * and ports, the leaves' uplinks (two cables from leaf-b count once), the spine not taken for a leaf,
 * the CA section's repeat of a link ignored; and its errors. */
static void test_ibnetdiscover(void **state)
{
	struct rp_fabtopo *t;
	struct rp_fabtopo_map mp;
	struct rp_endpoint eps[5];
	char err[256], *text;
	size_t len;

	(void)state;
	text = slurp(RP_TEST_DATA "/ibnet-2leaf.txt", &len);
	assert_int_equal(rp_fabtopo_parse("ib.txt", text, len, &t, err, sizeof(err)), 0);
	free(text);
	assert_false(t->slurm);
	assert_false(t->dmodk);
	assert_int_equal(t->n_adapters, 4);          /* the ConnectX-7 described by its model: not placed */
	assert_int_equal(t->n_leaves, 2);
	assert_int_equal(t->n_spines, 1);
	assert_string_equal(t->spines[0], "MF0;spine-1:MQM9700/U1");
	assert_int_equal(t->n_up, 2);
	ep_set(&eps[0], "gpu01", "mlx5_0", 1);
	ep_set(&eps[1], "gpu02", "mlx5_0", 1);
	ep_set(&eps[2], "gpu03", "mlx5_1", 1);
	ep_set(&eps[3], "gpu03", "mlx5_1", 2);
	ep_set(&eps[4], "gpu04", "mlx5_0", 1);
	assert_int_equal(rp_fabtopo_map_build(t, eps, 5, &mp), 0);
	assert_int_equal(mp.n_unknown, 1);
	assert_string_equal(mp.leaf_names[mp.leaf[0]], "MF0;leaf-a:MQM9700/U1");
	assert_int_equal(mp.leaf[1], mp.leaf[0]);
	assert_int_equal(mp.leaf_port[1], 2);
	assert_string_equal(mp.leaf_names[mp.leaf[2]], "MF0;leaf-b:MQM9700/U1");
	assert_int_equal(mp.leaf_port[3], 2);
	assert_int_equal(mp.leaf[4], RP_FABTOPO_NONE);
	rp_fabtopo_map_fini(&mp);
	rp_fabtopo_destroy(t);

	assert_int_equal(parse("switchguid=0x1(1)\n[1]\t\"H-2\"[1](2)\t\t# \"a mlx5_0\" lid 1\n", &t, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "topo (ibnetdiscover) line 2: a port line before any Switch line"));
	assert_int_equal(parse("Switch\t8 \"S-1\"\t\t# \"leaf\"\n[1]\tH-2[1]\n", &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "(ibnetdiscover) line 2: a port line without its remote"));
	assert_int_equal(parse("Switch\t8 \"S-1\"\t\t# \"leaf\"\n[1]\t\"H-2\"[1](2)\t\t# \"MT4129 ConnectX-7 NIC\" lid 1\n",
			       &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no adapter port named \"HOST DEVICE\" (1 adapter ports with another"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native),
		cmocka_unit_test(test_native_errors),
		cmocka_unit_test(test_hostlist),
		cmocka_unit_test(test_slurm),
		cmocka_unit_test(test_ibnetdiscover),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
