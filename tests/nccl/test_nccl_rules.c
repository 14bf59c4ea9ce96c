/* test_nccl_rules.c: NCCL's rules release by release (lib/nccl/nccl_rules.c, lib/nccl/nccl_select.c and the
 * per-release parts of lib/nccl/nccl.c), on nodes built in memory and on fixture trees. Each test names
 * the NCCL source file and the release tags it was derived from (github.com/NVIDIA/nccl, read at
 * every tag from v2.18.1-1 to v2.30.7-1), and checks both sides of every boundary it covers. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>
#include <jansson.h>

#include "fixture.h"
#include "nccl/nccl.h"
#include "nccl/nccl_int.h"
#include "nodebuild.h"
#include "report/node_json.h"
#include "testutil.h"
#include "base/util.h"

#define V2181 RP_NCCL_V(2, 18, 1)
#define V2183 RP_NCCL_V(2, 18, 3)
#define V2185 RP_NCCL_V(2, 18, 5)
#define V2186 RP_NCCL_V(2, 18, 6)
#define V2205 RP_NCCL_V(2, 20, 5)
#define V2215 RP_NCCL_V(2, 21, 5)
#define V2223 RP_NCCL_V(2, 22, 3)
#define V2234 RP_NCCL_V(2, 23, 4)
#define V2243 RP_NCCL_V(2, 24, 3)
#define V2251 RP_NCCL_V(2, 25, 1)
#define V2262 RP_NCCL_V(2, 26, 2)
#define V2289 RP_NCCL_V(2, 28, 9)
#define V2293 RP_NCCL_V(2, 29, 3)
#define V2297 RP_NCCL_V(2, 29, 7)
#define V2304 RP_NCCL_V(2, 30, 4)
#define V2307 RP_NCCL_V(2, 30, 7)

/* --- nodes in memory ------------------------------------------------------------------------- */

/* The shared builder (tests/nodebuild.h) under this file's short names: ports are ACTIVE. */
static struct rp_port *add_port(struct rp_hca *h, int num, enum rp_link_layer ll)
{
	return rp_test_port(h, num, RP_PORT_ACTIVE, ll);
}

#define add_hca rp_test_hca
#define add_gid rp_test_gid
#define add_table rp_test_gid_table
#define free_node rp_test_node_free

static struct rp_nccl_env env_v(uint32_t version, const char *hca)
{
	struct rp_nccl_env env;

	rp_nccl_env_default(&env);
	env.version = version;
	env.ib_hca = hca;
	return env;
}

/* "a:1 b:1" of the selection under env; the count of code into *count_p when not NULL. */
static void eval_sel(const struct rp_node *n, const struct rp_nccl_env *env, char *buf, size_t len,
		     enum rp_nccl_warn code, size_t *count_p)
{
	struct rp_nccl_result r;
	size_t at = 0;

	assert_int_equal(rp_nccl_evaluate(n, env, &r), 0);
	buf[0] = '\0';
	for (size_t i = 0; i < r.n_selected && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s:%d", i ? " " : "", r.selected[i].hca, r.selected[i].port);
	if (count_p)
		*count_p = rp_nccl_result_count(&r, code);
	rp_nccl_result_fini(&r);
}

static void assert_sel(const struct rp_node *n, uint32_t v, const char *hca, const char *want)
{
	struct rp_nccl_env env = env_v(v, hca);
	char got[2048];

	eval_sel(n, &env, got, sizeof(got), RP_NCCL_W_COUNT_, NULL);
	if (strcmp(got, want) != 0)
		fail_msg("NCCL %u, NCCL_IB_HCA=%s: selected '%s', want '%s'", v, hca ? hca : "(unset)", got, want);
}

static size_t count_v(const struct rp_node *n, const struct rp_nccl_env *env, enum rp_nccl_warn code)
{
	char got[2048];
	size_t c;

	eval_sel(n, env, got, sizeof(got), code, &c);
	return c;
}

/* --- the table itself ------------------------------------------------------------------------- */

/* Each rule's boundaries as read at the tags; the releases the issue names exactly. */
static void test_rule_table(void **state)
{
	(void)state;
	assert_int_equal(rp_nccl_max_devs(V2181), 16);                     /* net_ib.cc v2.18.1-1 */
	assert_int_equal(rp_nccl_max_devs(V2183), 16);
	assert_int_equal(rp_nccl_max_devs(V2185), 32);                     /* v2.18.5-1 */
	assert_false(rp_nccl_rule_on(V2205, RP_NCCL_R_GID_AUTO));          /* net_ib.cc v2.20.5-1 */
	assert_true(rp_nccl_rule_on(V2215, RP_NCCL_R_GID_AUTO));           /* v2.21.5-1 */
	assert_false(rp_nccl_rule_on(V2215, RP_NCCL_R_FLID_GID));
	assert_true(rp_nccl_rule_on(V2223, RP_NCCL_R_FLID_GID));           /* v2.22.3-1 */
	assert_true(rp_nccl_rule_on(V2223, RP_NCCL_R_RANGE_SLASH_CRASH));
	assert_false(rp_nccl_rule_on(V2234, RP_NCCL_R_RANGE_SLASH_CRASH)); /* v2.23.4-1 */
	assert_false(rp_nccl_rule_on(V2293, RP_NCCL_R_PCI_ORDER));         /* net_ib/init.cc v2.29.3-1 */
	assert_true(rp_nccl_rule_on(V2297, RP_NCCL_R_PCI_ORDER));          /* v2.29.7-1 */
	assert_false(rp_nccl_rule_on(V2304, RP_NCCL_R_HCA_FIELDS));        /* misc/utils.cc v2.30.4-1 */
	assert_true(rp_nccl_rule_on(V2307, RP_NCCL_R_HCA_FIELDS));         /* v2.30.7-1 */
	assert_true(rp_nccl_rule_on(V2181, RP_NCCL_R_MERGE_ONE_DIGIT));
	assert_false(rp_nccl_rule_on(V2183, RP_NCCL_R_MERGE_ONE_DIGIT));
	assert_true(rp_nccl_rule_on(V2243, RP_NCCL_R_NO_PATH_MERGE));
	assert_false(rp_nccl_rule_on(RP_NCCL_V(2, 27, 3), RP_NCCL_R_NO_PATH_MERGE));
	for (int r = 0; r < RP_NCCL_R_COUNT_; r++) {
		const struct rp_nccl_rule_info *info = rp_nccl_rule_info((enum rp_nccl_rule)r);

		assert_non_null(info->name);
		assert_non_null(strstr(info->source, "src/"));
		assert_true(info->since == 0 || rp_nccl_version_is_release(info->since));
		assert_true(info->until == 0 || rp_nccl_version_is_release(info->until));
	}
}

/* --- order ------------------------------------------------------------------------------------ */

/* net_ib/init.cc v2.29.7-1 ncclIbCompareDevs: sorted by the PCI id of the device link (mlx5_10 on
 * bus 0c before mlx5_4 on bus 85), devices without a link last; v2.29.3-1 and earlier keep
 * ibv_get_device_list() order. NCCL_IB_DEVICE_PCI_ORDER=0 turns the sort off. A virtio-backed
 * device (a link whose last component is "virtio0") reads as id 0 and goes first. */
static void test_order_pci(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	char got[256];

	(void)state;
	add_port(add_hca(&n, "mlx5_4", "devices/pci0000:80/0000:80:01.0/0000:85:00.0"), 1, RP_LL_INFINIBAND);
	add_port(add_hca(&n, "mlx5_10", "devices/pci0000:00/0000:00:01.0/0000:0c:00.0"), 1, RP_LL_INFINIBAND);
	add_port(add_hca(&n, "rxe9", NULL), 1, RP_LL_INFINIBAND);
	assert_sel(&n, V2293, NULL, "mlx5_4:1 mlx5_10:1 rxe9:1");
	assert_sel(&n, V2297, NULL, "mlx5_10:1 mlx5_4:1 rxe9:1");
	assert_sel(&n, V2304, NULL, "mlx5_10:1 mlx5_4:1 rxe9:1");
	assert_sel(&n, V2307, NULL, "mlx5_10:1 mlx5_4:1 rxe9:1");
	env = env_v(V2307, NULL);
	env.pci_order = false;
	eval_sel(&n, &env, got, sizeof(got), RP_NCCL_W_COUNT_, NULL);
	assert_string_equal(got, "mlx5_4:1 mlx5_10:1 rxe9:1");
	add_port(add_hca(&n, "vrdma0", "devices/pci0000:00/0000:00:03.0/virtio0"), 1, RP_LL_INFINIBAND);
	assert_sel(&n, V2307, NULL, "vrdma0:1 mlx5_10:1 mlx5_4:1 rxe9:1");
	assert_int_equal(rp_nccl_pci_sort_id("devices/pci0000:00/0000:00:01.0/0000:0c:00.0"), 0xc000);
	assert_int_equal(rp_nccl_pci_sort_id("x/virtio0"), 0);
	free_node(&n);
}

/* The port cap decides in ibv_get_device_list() order, before the sort (net_ib/init.cc
 * v2.30.7-1: the loop stops opening devices at MAX_IB_DEVS, qsort comes after), and the limit is
 * checked per device: 1 + 15 two-port adapters make 31, the next adapter is opened and both its
 * ports are written, the second past the 32-entry table (nccl_overflow). v2.18.1-1 and v2.18.3-1
 * have a table of 16. */
static void test_port_cap_per_device(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	char name[16], path[96];
	size_t c;

	(void)state;
	add_port(add_hca(&n, "mlx5_0", "devices/pci0000:00/0000:00:01.0/0000:f0:00.0"), 1, RP_LL_INFINIBAND);
	for (int i = 1; i <= 17; i++) {
		struct rp_hca *h;

		snprintf(name, sizeof(name), "mlx5_%d", i);
		snprintf(path, sizeof(path), "devices/pci0000:00/0000:00:02.0/0000:%02x:00.0", 0x60 - i);
		h = add_hca(&n, name, path);
		add_port(h, 1, RP_LL_INFINIBAND);
		add_port(h, 2, RP_LL_INFINIBAND);
	}
	env = env_v(V2307, NULL);
	{
		struct rp_nccl_result r;

		assert_int_equal(rp_nccl_evaluate(&n, &env, &r), 0);
		assert_int_equal(r.n_selected, 33);                         /* 1 + 16 * 2 */
		assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_NCCL_OVERFLOW), 1);
		assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_TOO_MANY_PORTS), 1);   /* mlx5_17 not opened */
		/* mlx5_0 on bus f0 sorts last although it was the first kept. */
		assert_string_equal(r.selected[32].hca, "mlx5_0");
		rp_nccl_result_fini(&r);
	}
	env = env_v(V2181, NULL);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_OVERFLOW), 1);   /* 1 + 7 * 2 = 15, then 2 */
	{
		struct rp_nccl_result r;

		assert_int_equal(rp_nccl_evaluate(&n, &env, &r), 0);
		assert_int_equal(r.n_selected, 17);
		assert_string_equal(r.selected[0].hca, "mlx5_0");           /* no sort in 2.18 */
		rp_nccl_result_fini(&r);
	}
	/* Exactly at the cap: two-port adapters only, 16 of them fill 32, the 17th is not opened. */
	free(n.hcas[0].ports);
	memmove(&n.hcas[0], &n.hcas[1], 17 * sizeof(n.hcas[0]));
	n.n_hcas = 17;
	env = env_v(V2307, NULL);
	eval_sel(&n, &env, (char[4096]){ 0 }, 4096, RP_NCCL_W_NCCL_OVERFLOW, &c);
	assert_int_equal(c, 0);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_TOO_MANY_PORTS), 1);
	free_node(&n);
}

/* --- crashes ---------------------------------------------------------------------------------- */

/* ncclIbGetPciPath (net_ib.cc v2.18.1-1 to v2.28.9-1) compares each new port's PCI path with
 * every earlier one, and a device without a device link (rxe, siw) has a NULL one: listed before a
 * PCI adapter it crashes NCCL (strcmp, later strncmp, on NULL). Since v2.29.7-1 the sort puts it
 * last (net_ib/init.cc ncclIbGetRealPort), unless NCCL_IB_DEVICE_PCI_ORDER=0. After the adapters,
 * or alone, nothing happens. */
static void test_crash_null_pci_path(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;

	(void)state;
	add_port(add_hca(&n, "irxe0", NULL), 1, RP_LL_ETHERNET);
	add_port(add_hca(&n, "mlx5_0", "devices/pci0000:00/0000:00:01.0/0000:3b:00.0"), 1, RP_LL_ETHERNET);
	add_table(&n.hcas[0].ports[0], "::ffff:10.0.0.1");
	add_table(&n.hcas[1].ports[0], "::ffff:10.0.0.2");
	for (uint32_t v = V2181; v <= V2307; v++) {
		if (!rp_nccl_version_is_release(v))
			continue;
		env = env_v(v, NULL);
		if (count_v(&n, &env, RP_NCCL_W_NCCL_CRASH) != (v < V2297 ? 1u : 0u))
			fail_msg("release %u: nccl_crash expected %s", v, v < V2297 ? "yes" : "no");
	}
	env = env_v(V2307, NULL);
	env.pci_order = false;
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 1);
	env = env_v(V2215, "mlx5_0");                                  /* the soft device not selected */
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 0);
	env = env_v(V2215, "irxe0");
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 0);
	free_node(&n);
}

/* ncclIbFindMatchingDev (net_ib.cc v2.20.3-1 to v2.23.4-1; absent in v2.19.4-1 and v2.24.3-1): with
 * NCCL_IB_MERGE_NICS=1 each new port's PCI path is strcmp()ed with the first port of every merged
 * NIC that has room (NCCL_IB_MAX_DEVS_PER_NIC 2). A soft device AFTER a PCI adapter therefore
 * crashes these releases too (the older ncclIbGetPciPath check only catches it before one), and
 * so do two soft devices; a dual-port adapter whose two ports merge leaves no NIC with room, so a
 * soft device after it is never compared. Failed before: no crash was modelled for these. */
static void test_crash_merge_nics(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;

	(void)state;
	add_port(add_hca(&n, "mlx5_0", "devices/pci0000:00/0000:00:01.0/0000:3b:00.0"), 1, RP_LL_INFINIBAND);
	add_port(add_hca(&n, "rxe0", NULL), 1, RP_LL_INFINIBAND);
	for (uint32_t v = V2181; v <= V2307; v++) {
		bool crash = v >= RP_NCCL_V(2, 20, 3) && v < V2243;

		if (!rp_nccl_version_is_release(v))
			continue;
		env = env_v(v, NULL);
		if (count_v(&n, &env, RP_NCCL_W_NCCL_CRASH) != (crash ? 1u : 0u))
			fail_msg("release %u: nccl_crash expected %s", v, crash ? "yes" : "no");
	}
	assert_false(rp_nccl_rule_on(RP_NCCL_V(2, 19, 4), RP_NCCL_R_MERGE_NICS_STRCMP));
	assert_true(rp_nccl_rule_on(RP_NCCL_V(2, 20, 3), RP_NCCL_R_MERGE_NICS_STRCMP));
	assert_true(rp_nccl_rule_on(V2234, RP_NCCL_R_MERGE_NICS_STRCMP));
	assert_false(rp_nccl_rule_on(V2243, RP_NCCL_R_MERGE_NICS_STRCMP));
	env = env_v(V2215, NULL);
	env.merge_nics = false;                                        /* NCCL_IB_MERGE_NICS=0 */
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 0);
	/* the two ports of mlx5_0 merge into one NIC, full: rxe0 is compared with nothing */
	add_port(&n.hcas[0], 2, RP_LL_INFINIBAND);
	env = env_v(V2215, NULL);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 0);
	free_node(&n);

	/* two soft devices: strcmp(NULL, NULL) */
	memset(&n, 0, sizeof(n));
	add_port(add_hca(&n, "rxe0", NULL), 1, RP_LL_ETHERNET);
	add_port(add_hca(&n, "rxe1", NULL), 1, RP_LL_ETHERNET);
	add_table(&n.hcas[0].ports[0], "::ffff:10.0.0.1");
	add_table(&n.hcas[1].ports[0], "::ffff:10.0.0.2");
	env = env_v(V2215, NULL);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 1);
	env = env_v(V2186, NULL);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 0);
	env = env_v(V2307, NULL);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 0);
	free_node(&n);
}

/* rp_nccl_crash_check, what loopback, pair and the matrix ask (net_ib.cc as in the two tests
 * around it): the Soft-RoCE fixture crashes 2.28.9 (rxe1's path compared with rxe0's NULL one),
 * not 2.30.7; NCCL_IB_ADDR_RANGE without '/' crashes 2.21.5 on a RoCE port, not 2.23.4. The message
 * is the nccl_crash warning's. */
static void test_crash_check(void **state)
{
	struct rp_nccl_env env;
	struct rp_node n;
	struct rp_fx fx;
	char msg[320];

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_rxe, &n);
	env = env_v(V2289, NULL);
	assert_int_equal(rp_nccl_crash_check(&n, &env, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "has no PCI device link"));
	env = env_v(V2307, NULL);
	assert_int_equal(rp_nccl_crash_check(&n, &env, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	rp_test_discover_done(&fx, &n);

	rp_test_discover(&fx, rp_fx_machine_roce, &n);
	env = env_v(V2215, NULL);
	env.addr_range = "10.0.0.0";
	assert_int_equal(rp_nccl_crash_check(&n, &env, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "NCCL_IB_ADDR_RANGE='10.0.0.0' has no '/'"));
	env = env_v(V2234, NULL);
	env.addr_range = "10.0.0.0";
	assert_int_equal(rp_nccl_crash_check(&n, &env, msg, sizeof(msg)), 0);
	rp_test_discover_done(&fx, &n);
}

/* envIbAddrRange (net_ib.cc v2.21.5-1 and v2.22.3-1): strstr(s, "/") + 1 is never NULL, so a
 * range without '/' writes through address 0; v2.23.4-1 tests first and ignores the range.
 * Before v2.21.5-1 NCCL does not read the variable (no GID walk). */
static void test_crash_addr_range(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;

	(void)state;
	add_table(add_port(add_hca(&n, "mlx5_0", "devices/pci0000:00/0000:00:01.0/0000:3b:00.0"), 1,
			   RP_LL_ETHERNET), "::ffff:10.0.0.1");
	env = env_v(V2215, NULL);
	env.addr_range = "10.0.0.0";
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 1);
	env.version = V2223;
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 1);
	env.version = V2234;
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 0);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_ENV_PARSED_AS), 1);
	assert_int_equal(rp_nccl_gid_index(&n.hcas[0].ports[0], &env), 3);
	env.version = V2205;
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 0);
	env.version = V2215;
	env.gid_index = 3;                                             /* no walk, no range read */
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_NCCL_CRASH), 0);
	free_node(&n);
}

/* --- NCCL_IB_HCA fields --------------------------------------------------------------------- */

/* parseStringList (misc/utils.cc): "dev:" is port 0 up to v2.30.4-1 (atoi("")), so it selects
 * nothing; in v2.30.7-1 an empty port field is every port. */
static void test_empty_port_field(void **state)
{
	struct rp_node n = { 0 };
	struct rp_hca *h;

	(void)state;
	h = add_hca(&n, "mlx5_1", "devices/pci0000:00/0000:00:01.0/0000:3b:00.0");
	add_port(h, 1, RP_LL_INFINIBAND);
	add_port(h, 2, RP_LL_INFINIBAND);
	assert_sel(&n, V2304, "mlx5_1:", "");
	assert_sel(&n, V2181, "mlx5_1:", "");
	assert_sel(&n, V2307, "mlx5_1:", "mlx5_1:1 mlx5_1:2");
	assert_sel(&n, V2307, "mlx5_1:99999999999999999999", "mlx5_1:1 mlx5_1:2");   /* atoi wraps to -1 */
	assert_sel(&n, V2304, "mlx5_1:99999999999999999999", "mlx5_1:1 mlx5_1:2");
	assert_sel(&n, V2304, "mlx5_1:2:7", "mlx5_1:2");
	assert_sel(&n, V2307, "mlx5_1:2:7", "mlx5_1:2");
	free_node(&n);
}

/* ncclIbGetPlaneIndex (net_ib/init.cc v2.30.7-1): the plane field of the entry that kept a port
 * (an int16_t) must not have bit 14 set, and at most 12 distinct plane ids fit; otherwise IB
 * initialisation fails and NCCL falls back to sockets (ib_disabled, nothing selected). 2.30.4
 * has no plane field: the same text is just port 1. */
static void test_planes(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	char spec[1024], got[1024], name[16], path[96];
	size_t c;

	(void)state;
	for (int i = 0; i < 13; i++) {
		snprintf(name, sizeof(name), "mlx5_%d", i);
		snprintf(path, sizeof(path), "devices/pci0000:00/0000:00:02.0/0000:%02x:00.0", 0x10 + i);
		add_port(add_hca(&n, name, path), 1, RP_LL_INFINIBAND);
	}
	env = env_v(V2307, "=mlx5_0:1:0:16384");
	eval_sel(&n, &env, got, sizeof(got), RP_NCCL_W_IB_DISABLED, &c);
	assert_int_equal(c, 1);
	assert_string_equal(got, "");
	env = env_v(V2307, "=mlx5_0:1:0:3");
	eval_sel(&n, &env, got, sizeof(got), RP_NCCL_W_IB_DISABLED, &c);
	assert_int_equal(c, 0);
	assert_string_equal(got, "mlx5_0:1");
	env = env_v(V2304, "=mlx5_0:1:0:16384");
	eval_sel(&n, &env, got, sizeof(got), RP_NCCL_W_IB_DISABLED, &c);
	assert_int_equal(c, 0);
	assert_string_equal(got, "mlx5_0:1");
	/* 12 distinct planes are fine, a 13th disables IB. */
	spec[0] = '=';
	spec[1] = '\0';
	for (int i = 0; i < 13; i++)
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "%smlx5_%d:1:0:%d", i ? "," : "", i, i);
	env = env_v(V2307, spec);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_IB_DISABLED), 1);
	*strrchr(spec, ',') = '\0';
	env = env_v(V2307, spec);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_IB_DISABLED), 0);
	free_node(&n);
}

/* parseStringList's limit is MAX_IB_DEVS entries: 16 in v2.18.1-1/v2.18.3-1, 32 from v2.18.5-1. */
static void test_entry_limit(void **state)
{
	struct rp_nccl_spec s;
	char spec[1024] = "";

	(void)state;
	for (int i = 0; i < 20; i++)
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "%smlx5_%d", i ? "," : "", i);
	assert_int_equal(rp_nccl_spec_parse_v(spec, V2183, &s), 0);
	assert_int_equal(s.n_entries, 16);
	assert_int_equal(s.n_ignored, 4);
	assert_int_equal(rp_nccl_spec_parse_v(spec, V2185, &s), 0);
	assert_int_equal(s.n_entries, 20);
	assert_int_equal(s.n_ignored, 0);
}

/* --- GID -------------------------------------------------------------------------------------- */

/* net_ib.cc v2.18.1-1 to v2.20.5-1: NCCL_IB_GID_INDEX (default 0) is used as given, -1 fails
 * ibv_query_gid; v2.21.5-1 adds the walk (default -1), the usual mlx5 table gives 3. */
static void test_gid_before_walk(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "mlx5_0", "devices/pci0000:00/0000:00:01.0/0000:3b:00.0"), 1, RP_LL_ETHERNET);
	add_table(p, "::ffff:10.0.0.1");
	env = env_v(V2181, NULL);
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_GID_INVALID), 1);    /* link-local fe80 */
	env.version = V2186;
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	env.version = V2205;
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	env.version = V2215;
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_GID_INVALID), 0);
	env = env_v(V2186, NULL);
	env.gid_index = -1;
	env.gid_index_set = true;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_BAD_GID_OVERRIDE), 1);
	env.version = V2215;                                           /* -1: automatic */
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	/* An out-of-range value is the release's default (param.cc): 0 in 2.18.6, not -1. */
	setenv("NCCL_IB_GID_INDEX", "99999999999999999999", 1);
	assert_int_equal(rp_nccl_env_load(&env), 0);
	unsetenv("NCCL_IB_GID_INDEX");
	env.version = V2186;
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	env.version = V2215;
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	free_node(&n);
}

/* The walk (net_ib.cc v2.21.5-1, net_ib/connect.cc v2.30.7-1) on an IPv6-only RoCE table: with
 * the default AF_INET nothing of the family exists and NCCL stays on the link-local GID 0
 * (gid_invalid); with NCCL_IB_ADDR_FAMILY=AF_INET6 it takes the global v2 entry. */
static void test_gid_ipv6_only(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "mlx5_4", "devices/pci0000:00/0000:00:01.0/0000:3b:00.0"), 1, RP_LL_ETHERNET);
	add_table(p, "2001:db8::4");
	env = env_v(V2307, NULL);
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_GID_INVALID), 1);
	env.addr_family = AF_INET6;
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_GID_INVALID), 0);
	env.addr_range = "2001:db8::/32";
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	env.addr_range = "2001:db9::/32";
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	free_node(&n);
}

/* ncclIbRoceGetVersionNum (net_ib.cc v2.21.5-1 to v2.28.9-1, net_ib/connect.cc since): a RoCE
 * port whose gid_attrs/types cannot be opened fails the walk and NCCL fails the port (gid_index
 * null, port_failed) in every release with the walk. A read that fails with EINVAL (the current
 * index is an empty entry) fails the port up to v2.25.1-1 and is skipped from v2.26.2-1 (commit
 * f44ac759), not v2.24.3-1. */
static void test_gid_types_unreadable(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p, *q;
	char got[128];
	size_t c;

	(void)state;
	p = add_port(add_hca(&n, "mlx5_0", "devices/pci0000:00/0000:00:01.0/0000:3b:00.0"), 1, RP_LL_ETHERNET);
	add_table(p, "::ffff:10.0.0.1");
	for (size_t i = 0; i < p->n_gids; i++)
		p->gids[i].type_read = RP_GID_TREAD_FAILS;                 /* no gid_attrs */
	env = env_v(V2307, NULL);
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	eval_sel(&n, &env, got, sizeof(got), RP_NCCL_W_PORT_FAILED, &c);
	assert_int_equal(c, 1);
	env.version = V2262;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	env.version = V2215;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	env.version = V2205;                                           /* no walk: index 0, no read */
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);

	q = add_port(add_hca(&n, "mlx5_1", "devices/pci0000:00/0000:00:01.0/0000:3c:00.0"), 1, RP_LL_ETHERNET);
	add_gid(q, NULL, RP_GID_TYPE_NONE);                            /* 0 empty: its read fails with EINVAL */
	add_gid(q, "2001:db8::9", RP_GID_TYPE_ROCE_V2);
	env = env_v(V2234, NULL);
	env.addr_family = AF_INET6;
	assert_int_equal(rp_nccl_gid_index(q, &env), -1);
	env.version = V2243;
	assert_int_equal(rp_nccl_gid_index(q, &env), -1);
	env.version = V2251;
	assert_int_equal(rp_nccl_gid_index(q, &env), -1);
	env.version = V2262;
	assert_int_equal(rp_nccl_gid_index(q, &env), 1);
	free_node(&n);
}

/* The same rule on a tree (what `nccl --sysfs-root` reads): a valid GID whose gid_attrs/types/<i>
 * is missing beside its siblings reads as the kernel's EINVAL. NCCL v2.26.2-1 on skips it (its
 * version stays -1: net_ib.cc v2.26.2-1 ncclUpdateGidIndex) and keeps the v1 GID 1 it had; up to
 * v2.25.1-1 the read fails the port. Without a gid_attrs directory the open fails: the port fails
 * in every release with the walk, once two GIDs of the wanted family are compared. */
static int machine_types_einval(struct rp_fx *fx)
{
	const char *pci = "pci0000:00/0000:00:01.0/0000:3b:00.0";
	int rc = rp_fx_hca(fx, "bnxt_re0", pci, 0, "1.0", NULL);

	rc = rc ? rc : rp_fx_port(fx, "bnxt_re0", 1, &rp_fx_port_eth_100_active);
	rc = rc ? rc : rp_fx_gid(fx, "bnxt_re0", 1, 0, "0000:0000:0000:0000:0000:0000:0000:0000", NULL, NULL);
	rc = rc ? rc : rp_fx_gid(fx, "bnxt_re0", 1, 1, "0000:0000:0000:0000:0000:ffff:ac10:05e5", "IB/RoCE v1", "eth0");
	rc = rc ? rc : rp_fx_gid(fx, "bnxt_re0", 1, 2, "0000:0000:0000:0000:0000:ffff:ac10:05e5", "RoCE v2", "eth0");
	rc = rc ? rc : rp_fx_remove(fx, "class/infiniband/bnxt_re0/ports/1/gid_attrs/types/0");
	rc = rc ? rc : rp_fx_remove(fx, "class/infiniband/bnxt_re0/ports/1/gid_attrs/types/2");
	rc = rc ? rc : rp_fx_hca(fx, "bnxt_re1", "pci0000:00/0000:00:01.0/0000:3c:00.0", 0, "1.0", NULL);
	rc = rc ? rc : rp_fx_port(fx, "bnxt_re1", 1, &rp_fx_port_eth_100_active);
	rc = rc ? rc : rp_fx_gid(fx, "bnxt_re1", 1, 0, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", NULL);
	rc = rc ? rc : rp_fx_gid(fx, "bnxt_re1", 1, 1, "0000:0000:0000:0000:0000:ffff:0a00:0002", "RoCE v2", NULL);
	return rc ? rc : rp_fx_remove(fx, "class/infiniband/bnxt_re1/ports/1/gid_attrs");
}

static void test_gid_types_einval_tree(void **state)
{
	struct rp_fx fx;
	struct rp_node n;
	struct rp_nccl_env env;
	const struct rp_port *p, *q;

	(void)state;
	rp_test_discover(&fx, machine_types_einval, &n);
	assert_int_equal(n.n_hcas, 2);
	p = &n.hcas[0].ports[0];
	q = &n.hcas[1].ports[0];
	assert_int_equal(p->n_gids, 3);
	env = env_v(V2307, NULL);
	assert_int_equal(rp_nccl_gid_index(p, &env), 1);
	assert_int_equal(rp_nccl_gid_index(q, &env), -1);
	env.version = V2262;
	assert_int_equal(rp_nccl_gid_index(p, &env), 1);
	assert_int_equal(rp_nccl_gid_index(q, &env), -1);
	env.version = V2251;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	env.version = V2243;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	env.version = V2215;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	assert_int_equal(rp_nccl_gid_index(q, &env), -1);
	env.version = V2205;                                           /* no walk, nothing read */
	assert_int_equal(rp_nccl_gid_index(q, &env), 0);
	rp_test_discover_done(&fx, &n);
}

/* InfiniBand before the FLID rule: ncclIbAccept queries the GID index on every port (net_ib.cc
 * v2.18.1-1 to v2.20.5-1: NCCL_IB_GID_INDEX as given, default 0; v2.21.5-1: ncclIbGetGidIndex's
 * RoCE rule, NCCL_IB_GID_INDEX when >= 0, else the walk). An index past the table, or -1 given
 * to 2.18-2.20, fails ibv_query_gid and with it the connection; from v2.22.3-1 the variable is
 * not read on InfiniBand. */
static void test_gid_ib_query_before_flid(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "mlx5_0", "devices/pci0000:00/0000:00:01.0/0000:3b:00.0"), 1, RP_LL_INFINIBAND);
	add_gid(p, "fe80::1", RP_GID_TYPE_IB_ROCE_V1);
	add_gid(p, "fe80::2", RP_GID_TYPE_IB_ROCE_V1);
	env = env_v(V2181, NULL);
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	env.gid_index = 7;                                             /* past the table of 2 */
	env.gid_index_set = true;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_PORT_FAILED), 1);
	env.version = V2205;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	env.version = V2215;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_PORT_FAILED), 1);
	env.version = V2223;                                           /* the FLID rule: 0 */
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_PORT_FAILED), 0);
	env.gid_index = -1;                                            /* -1: used as given before 2.21.5 */
	env.version = V2181;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	env.version = V2215;                                           /* automatic: the walk stays on 0 */
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	env.gid_index = 1;
	env.version = V2181;
	assert_int_equal(rp_nccl_gid_index(p, &env), 1);
	env.version = V2215;
	assert_int_equal(rp_nccl_gid_index(p, &env), 1);
	free_node(&n);
}

/* ncclIbGetGidIndex for InfiniBand (net_ib.cc v2.22.3-1 on): GID NCCL_IB_ROUTABLE_FLID_GID_INDEX
 * (default 1) when its FLID (bytes 4-5) is not zero, else 0; v2.21.5-1 always 0. A negative index
 * makes ibv_query_gid fail the port; one past the table is not tried. */
static void test_gid_flid(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "mlx5_0", "devices/pci0000:00/0000:00:01.0/0000:3b:00.0"), 1, RP_LL_INFINIBAND);
	add_gid(p, "fe80::1", RP_GID_TYPE_IB_ROCE_V1);
	add_gid(p, "fec0:0:12:1::1", RP_GID_TYPE_IB_ROCE_V1);          /* FLID 0x0012 */
	env = env_v(V2215, NULL);
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	env.version = V2223;
	assert_int_equal(rp_nccl_gid_index(p, &env), 1);
	env.version = V2307;
	assert_int_equal(rp_nccl_gid_index(p, &env), 1);
	env.flid_gid_index = 5;                                        /* past the table */
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	env.flid_gid_index = -1;
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	assert_int_equal(count_v(&n, &env, RP_NCCL_W_PORT_FAILED), 1);
	env.flid_gid_index = 1;
	assert_int_equal(inet_pton(AF_INET6, "fec0:0:0:1::1", p->gids[1].raw), 1);   /* FLID 0 */
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	free_node(&n);
}

/* ncclIbGetPciPath's bus-id merge, handed to the topology (net_ib.cc, net_ib/init.cc): v2.18.1-1
 * zeroes the function and the last device digit, v2.18.3-1 to v2.23.4-1 and v2.27.3-1 on both
 * device digits, v2.24.3-1 to v2.26.6-1 nothing; NCCL_IB_MERGE_VFS=0 only the function. A VF at
 * 0000:03:1e.0 beside the GPU whose merged function does not exist is not on PCI for NCCL (PHB
 * through the first CPU) instead of PIX. */
static int machine_vf(struct rp_fx *fx)
{
	int rc = rp_fx_gpu(fx, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:04:00.0", 0);

	rc = rc ? rc : rp_fx_hca(fx, "mlx5_vf", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:03:1e.0", 0,
				 "1.0", NULL);
	return rc ? rc : rp_fx_port(fx, "mlx5_vf", 1, &rp_fx_port_ib_ndr_active);
}

static enum rp_path vf_path(const struct rp_node *n, uint32_t v, bool merge_vfs)
{
	struct rp_nccl_env env = env_v(v, NULL);
	struct rp_nccl_result r;
	enum rp_path p;

	env.merge_vfs = merge_vfs;
	assert_int_equal(rp_nccl_evaluate(n, &env, &r), 0);
	assert_int_equal(r.n_gpus, 1);
	assert_string_equal(r.gpus[0].hca, "mlx5_vf");
	p = r.gpus[0].path;
	rp_nccl_result_fini(&r);
	return p;
}

static void test_topo_merge_per_release(void **state)
{
	struct rp_node n;
	struct rp_fx fx;

	(void)state;
	rp_test_discover(&fx, machine_vf, &n);
	assert_int_equal(vf_path(&n, V2307, true), RP_PATH_PHB);
	assert_int_equal(vf_path(&n, V2307, false), RP_PATH_PIX);
	assert_int_equal(vf_path(&n, V2243, true), RP_PATH_PIX);
	assert_int_equal(vf_path(&n, RP_NCCL_V(2, 26, 6), true), RP_PATH_PIX);
	assert_int_equal(vf_path(&n, RP_NCCL_V(2, 27, 3), true), RP_PATH_PHB);
	assert_int_equal(vf_path(&n, V2234, true), RP_PATH_PHB);
	assert_int_equal(vf_path(&n, V2181, true), RP_PATH_PHB);        /* 0000:03:10.0: absent too */
	rp_test_discover_done(&fx, &n);
}

/* The devices report follows the release's merge too (node_json.c, with the same ncclIbGetPciPath
 * merges as above): machine_vf plus a PF on a sibling port of the GPU's switch. v2.24.3-1 keeps the
 * VF's real bus id, so the VF is PIX like the PF and both are nearest; v2.30.7-1 merges it to
 * 0000:03:00.0, which does not exist: the VF is PHB and the PF alone is nearest. Failed before
 * node_json.c took env's merge (it always used 2.30.7's: PHB and mlx5_pf alone for both). */
static int machine_vf_pf(struct rp_fx *fx)
{
	int rc = machine_vf(fx);

	rc = rc ? rc : rp_fx_hca(fx, "mlx5_pf", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.0", 0,
				 "1.0", NULL);
	return rc ? rc : rp_fx_port(fx, "mlx5_pf", 1, &rp_fx_port_ib_ndr_active);
}

static void devices_view(const struct rp_node *n, uint32_t v, char *nearest, size_t len, char vf_path[8])
{
	struct rp_nccl_env env = env_v(v, NULL);
	json_t *j = rp_node_to_json(n, &env), *list, *aff, *e;
	size_t i;

	assert_non_null(j);
	list = json_object_get(json_object_get(j, "nearest"), "0000:04:00.0");
	assert_true(json_is_array(list));
	nearest[0] = '\0';
	json_array_foreach(list, i, e) {
		strncat(nearest, i ? "," : "", len - strlen(nearest) - 1);
		strncat(nearest, json_string_value(e), len - strlen(nearest) - 1);
	}
	vf_path[0] = '\0';
	aff = json_object_get(j, "affinity");
	json_array_foreach(aff, i, e)
		if (strcmp(json_string_value(json_object_get(e, "hca")), "mlx5_vf") == 0)
			snprintf(vf_path, 8, "%s", json_string_value(json_object_get(e, "path")));
	json_decref(j);
}

static void test_devices_nearest_per_release(void **state)
{
	char nearest[128], vf_path[8];
	struct rp_node n;
	struct rp_fx fx;

	(void)state;
	rp_test_discover(&fx, machine_vf_pf, &n);
	devices_view(&n, V2307, nearest, sizeof(nearest), vf_path);
	assert_string_equal(nearest, "mlx5_pf");
	assert_string_equal(vf_path, "PHB");
	devices_view(&n, V2243, nearest, sizeof(nearest), vf_path);
	assert_string_equal(nearest, "mlx5_pf,mlx5_vf");
	assert_string_equal(vf_path, "PIX");
	rp_test_discover_done(&fx, &n);
}

/* --gpu nearest (engine_cli.c: rp_topo_nearest_gpu_m under rp_nccl_topo_merge), with the merges
 * above: machine_vf plus a second GPU (CUDA 0) on another root port of the same CPU. v2.24.3-1
 * keeps the VF's bus id: the GPU beside it (CUDA 1) is PIX and is the VF's GPU. v2.30.7-1 (and
 * v2.27.3-1) merge the VF to 0000:03:00.0, not on PCI: it hangs off the first CPU, both GPUs are PHB
 * at the same bandwidth and the lowest CUDA index wins. Before, --gpu nearest always took 2.30.7's
 * merge (cuda:0 under 2.24.3 too). */
static int machine_vf_two_gpus(struct rp_fx *fx)
{
	int rc = machine_vf(fx);

	return rc ? rc : rp_fx_gpu(fx, "pci0000:00/0000:00:02.0/0000:10:00.0", 0);
}

static int nearest_gpu_under(const struct rp_node *n, uint32_t v, enum rp_path *path_p)
{
	struct rp_nccl_env env = env_v(v, NULL);
	struct rp_topo_merge m;
	int pos;

	rp_nccl_topo_merge(&env, &m);
	pos = rp_topo_nearest_gpu_m(n, rp_node_find_hca(n, "mlx5_vf"), &m, path_p);
	assert_true(pos >= 0);
	return n->gpus[pos].index;
}

static void test_nearest_gpu_per_release(void **state)
{
	enum rp_path path;
	struct rp_node n;
	struct rp_fx fx;

	(void)state;
	rp_test_discover(&fx, machine_vf_two_gpus, &n);
	assert_int_equal(n.n_gpus, 2);
	for (size_t g = 0; g < n.n_gpus; g++)   /* CUDA 1 beside the VF, CUDA 0 on the other root port */
		n.gpus[g].index = strcmp(n.gpus[g].pci, "0000:04:00.0") == 0 ? 1 : 0;
	assert_int_equal(nearest_gpu_under(&n, V2243, &path), 1);
	assert_int_equal(path, RP_PATH_PIX);
	assert_int_equal(nearest_gpu_under(&n, RP_NCCL_V(2, 26, 6), &path), 1);
	assert_int_equal(nearest_gpu_under(&n, RP_NCCL_V(2, 27, 3), &path), 0);
	assert_int_equal(path, RP_PATH_PHB);
	assert_int_equal(nearest_gpu_under(&n, V2307, &path), 0);
	assert_int_equal(rp_topo_nearest_gpu(&n, rp_node_find_hca(&n, "mlx5_vf"), NULL),
			 strcmp(n.gpus[0].pci, "0000:10:00.0") == 0 ? 0 : 1);   /* the newest's, by position */
	rp_test_discover_done(&fx, &n);
}

/* --- fixtures through the binary ------------------------------------------------------------- */

/* 'devices' text: the affinity table and the nearest adapters follow the release as the JSON does
 * (machine_vf_pf, merges above), and the header names the release. Failed before: the table always
 * used 2.30.7's merge (mlx5_pf alone, the VF PHB, under 2.24.3 too) and named no release. */
static void test_cmd_devices_text_per_release(void **state)
{
	static char out[1 << 16];
	struct rp_fx fx;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(machine_vf_pf(&fx), 0);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --nccl-version 2.24.3 --sysfs-root '%s' 2>/dev/null",
					 fx.root), 0);
	assert_non_null(strstr(out, "path type as NCCL 2.24.3 (--nccl-version) computes it"));
	assert_non_null(strstr(out, "\n0000:04:00.0  mlx5_pf, mlx5_vf  (PIX)\n"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --nccl-version 2.30.7 --sysfs-root '%s' 2>/dev/null",
					 fx.root), 0);
	assert_non_null(strstr(out, "path type as NCCL 2.30.7 (--nccl-version) computes it"));
	assert_non_null(strstr(out, "\n0000:04:00.0  mlx5_pf  (PIX)\n"));
	rp_fx_destroy(&fx);
}

/* The Soft-RoCE fixture (rxe0 without a device link, rxe1 linked to a virtio device) crashes
 * NCCL 2.28.9 (net_ib.cc: rxe1's path compared with rxe0's NULL one) and not 2.30.7, which sorts
 * rxe1 (id 0) first and rxe0 last. */
static void test_cmd_rxe_fixture_versions(void **state)
{
	static char out[1 << 16];
	struct rp_fx fx;
	json_t *j;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_rxe(&fx), 0);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "nccl --json --nccl-version 2.28.9 --sysfs-root '%s' 2>/dev/null",
					 fx.root), 1);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_non_null(strstr(out, "\"nccl_crash\""));
	json_decref(j);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "nccl --json --nccl-version 2.30.7 --sysfs-root '%s' 2>/dev/null",
					 fx.root), 0);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "selected"), 0)), "rxe1:1");
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "selected"), 1)), "rxe0:1");
	assert_null(strstr(out, "\"nccl_crash\""));
	json_decref(j);
	rp_fx_destroy(&fx);
}

static void test_cmd_env_never_refused(void **state)
{
	static char out[1 << 16];
	struct rp_fx fx;
	int rc;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_roce(&fx), 0);
	setenv("NCCL_IB_GID_INDEX", "010", 1);
	rc = rp_test_run_bin(out, sizeof(out), "nccl --json --nccl-version 2.30.7 --hca =mlx5_0 --sysfs-root '%s' 2>/dev/null",
			     fx.root);
	unsetenv("NCCL_IB_GID_INDEX");
	assert_int_not_equal(rc, 2);
	assert_non_null(strstr(out, "env_parsed_as"));
	assert_non_null(strstr(out, "\"mlx5_0:1\": 8"));
	rp_fx_destroy(&fx);
}

/* On a fixture tree through the binary: mlx5_10 on bus 0c, mlx5_4 on bus 85 (net_ib/init.cc
 * v2.29.7-1 sorts by PCI address; v2.29.3-1 keeps ibv_get_device_list() order, here name order). */
static int machine_pci_order(struct rp_fx *fx)
{
	int rc = rp_fx_hca(fx, "mlx5_4", "pci0000:80/0000:80:01.0/0000:85:00.0", 1, "1.0", NULL);

	rc = rc ? rc : rp_fx_port(fx, "mlx5_4", 1, &rp_fx_port_ib_ndr_active);
	rc = rc ? rc : rp_fx_gid(fx, "mlx5_4", 1, 0, "fe80:0000:0000:0000:0000:0000:0000:0004", "IB/RoCE v1", NULL);
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_10", "pci0000:00/0000:00:01.0/0000:0c:00.0", 0, "1.0", NULL);
	rc = rc ? rc : rp_fx_port(fx, "mlx5_10", 1, &rp_fx_port_ib_ndr_active);
	return rc ? rc : rp_fx_gid(fx, "mlx5_10", 1, 0, "fe80:0000:0000:0000:0000:0000:0000:000a", "IB/RoCE v1", NULL);
}

static void test_cmd_pci_order_fixture(void **state)
{
	static char out[1 << 16];
	struct rp_fx fx;
	json_t *j, *sel;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(machine_pci_order(&fx), 0);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "nccl --json --nccl-version 2.30.7 --sysfs-root '%s' 2>/dev/null",
					 fx.root), 0);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	sel = json_object_get(j, "selected");
	assert_string_equal(json_string_value(json_array_get(sel, 0)), "mlx5_10:1");
	assert_string_equal(json_string_value(json_array_get(sel, 1)), "mlx5_4:1");
	assert_string_equal(json_string_value(json_object_get(j, "recommended_nccl_ib_hca")), "=mlx5_10:1,mlx5_4:1");
	assert_non_null(strstr(out, "\"pci_order\""));
	assert_non_null(strstr(out, "\"hca_fields\""));
	json_decref(j);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "nccl --json --nccl-version 2.29.3 --sysfs-root '%s' 2>/dev/null",
					 fx.root), 0);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	sel = json_object_get(j, "selected");
	assert_null(strstr(out, "\"pci_order\""));
	assert_string_equal(json_string_value(json_array_get(sel, 0)), "mlx5_4:1");
	assert_string_equal(json_string_value(json_array_get(sel, 1)), "mlx5_10:1");
	json_decref(j);
	rp_fx_destroy(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_table),
		cmocka_unit_test(test_order_pci),
		cmocka_unit_test(test_port_cap_per_device),
		cmocka_unit_test(test_crash_null_pci_path),
		cmocka_unit_test(test_crash_addr_range),
		cmocka_unit_test(test_crash_merge_nics),
		cmocka_unit_test(test_crash_check),
		cmocka_unit_test(test_empty_port_field),
		cmocka_unit_test(test_planes),
		cmocka_unit_test(test_entry_limit),
		cmocka_unit_test(test_gid_before_walk),
		cmocka_unit_test(test_gid_ipv6_only),
		cmocka_unit_test(test_gid_types_unreadable),
		cmocka_unit_test(test_gid_types_einval_tree),
		cmocka_unit_test(test_gid_ib_query_before_flid),
		cmocka_unit_test(test_gid_flid),
		cmocka_unit_test(test_topo_merge_per_release),
		cmocka_unit_test(test_devices_nearest_per_release),
		cmocka_unit_test(test_nearest_gpu_per_release),
		cmocka_unit_test(test_cmd_devices_text_per_release),
		cmocka_unit_test(test_cmd_rxe_fixture_versions),
		cmocka_unit_test(test_cmd_env_never_refused),
		cmocka_unit_test(test_cmd_pci_order_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
