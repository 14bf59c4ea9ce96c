/* test_node_gids.c: a port's GID table from ibv_query_gid_table's entries (lib/discover/node_gids.h): the
 * same table the sysfs reader builds from the same machine, verbs winning a disagreement with a
 * warning, entries of other ports ignored, a table lengthened by an entry past its length. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "base/log.h"
#include "discover/node.h"
#include "discover/node_gids.h"
#include "discover/sysfs.h"
#include "testutil.h"

static char warnings[2048];

static void capture(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level <= RP_LOG_WARN && strlen(warnings) + strlen(msg) + 2 < sizeof(warnings)) {
		strcat(warnings, msg);
		strcat(warnings, "\n");
	}
}

/* The verbs entry for a valid sysfs entry. */
static struct ibv_gid_entry entry_of(const struct rp_gid *g, int port, uint32_t type)
{
	struct ibv_gid_entry e;

	memset(&e, 0, sizeof(e));
	memcpy(e.gid.raw, g->raw, sizeof(e.gid.raw));
	e.gid_index = (uint32_t)g->index;
	e.port_num = (uint32_t)port;
	e.gid_type = type;
	e.ndev_ifindex = 7;
	return e;
}

static uint32_t verbs_type(enum rp_gid_type t)
{
	return t == RP_GID_TYPE_ROCE_V2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
}

/* The entries of mlx5_0 port 1 of the RoCE machine, plus one of port 2 that must be ignored. */
static size_t entries_of(const struct rp_port *p, struct ibv_gid_entry *e)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_gids; i++)
		if (!rp_sysfs_gid_is_zero(p->gids[i].raw))
			e[n++] = entry_of(&p->gids[i], p->num, verbs_type(p->gids[i].type));
	e[n] = e[0];
	e[n].port_num = 2;
	e[n].gid_index = 5;
	return n + 1;
}

static void test_same_table_as_sysfs(void **state)
{
	struct ibv_gid_entry e[32];
	struct rp_port port = { .num = 1 };
	const struct rp_port *p;
	struct rp_node node;
	struct rp_fx fx;
	size_t n;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_roce, &node);
	p = rp_hca_find_port(rp_node_find_hca(&node, "mlx5_0"), 1);
	assert_non_null(p);
	n = entries_of(p, e);
	warnings[0] = '\0';
	rp_log_set_sink(capture, NULL);
	assert_int_equal(rp_port_gids_from_verbs(&port, p->n_gids, e, n, fx.root, "mlx5_0"), 0);
	rp_log_set_sink(NULL, NULL);
	assert_string_equal(warnings, "");
	assert_int_equal(port.n_gids, p->n_gids);
	for (size_t i = 0; i < p->n_gids; i++) {
		assert_int_equal(port.gids[i].index, (int)i);
		assert_string_equal(port.gids[i].text, p->gids[i].text);
		assert_int_equal(port.gids[i].type, p->gids[i].type);
		assert_string_equal(port.gids[i].ndev, p->gids[i].ndev);   /* from sysfs, not ifindex 7 */
	}
	free(port.gids);
	rp_test_discover_done(&fx, &node);
}

static void test_verbs_wins_with_a_warning(void **state)
{
	struct ibv_gid_entry e[32];
	struct rp_port port = { .num = 1 };
	const struct rp_port *p;
	struct rp_node node;
	struct rp_fx fx;
	size_t n;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_roce, &node);
	p = rp_hca_find_port(rp_node_find_hca(&node, "mlx5_0"), 1);
	n = entries_of(p, e);
	e[3].gid.raw[15] ^= 0x40;          /* GID 3 differs from sysfs */
	e[1].gid_type = IBV_GID_TYPE_ROCE_V1;   /* GID 1's type differs */
	e[2].gid_index = 20;               /* past the table's 16 entries: the table grows to 21 */
	warnings[0] = '\0';
	rp_log_set_sink(capture, NULL);
	assert_int_equal(rp_port_gids_from_verbs(&port, p->n_gids, e, n, fx.root, "mlx5_0"), 0);
	rp_log_set_sink(NULL, NULL);
	assert_int_equal(port.n_gids, 21);
	assert_int_equal(port.gids[3].raw[15], p->gids[3].raw[15] ^ 0x40);
	assert_non_null(strstr(warnings, "mlx5_0 port 1: GID 3 is "));
	assert_non_null(strstr(warnings, p->gids[3].text));
	assert_non_null(strstr(warnings, "GID 1 is IB/RoCE v1 in verbs but RoCE v2 in sysfs"));
	assert_non_null(strstr(warnings, "GID 20 is"));      /* sysfs has no gids/20 */
	assert_int_equal(port.gids[2].type, RP_GID_TYPE_NONE);  /* moved: index 2 is empty now */
	assert_int_equal(port.gids[20].type, RP_GID_TYPE_IB_ROCE_V1);
	assert_int_equal(port.gids[5].type, RP_GID_TYPE_NONE);  /* port 2's entry is not port 1's */
	free(port.gids);
	rp_test_discover_done(&fx, &node);
}

static void test_no_root_and_empty(void **state)
{
	struct ibv_gid_entry e[1];
	struct rp_port port = { .num = 1 };

	(void)state;
	memset(e, 0, sizeof(e));
	e[0].port_num = 1;
	e[0].gid_index = 0;
	e[0].gid.raw[0] = 0xfe;
	e[0].gid.raw[1] = 0x80;
	e[0].gid_type = IBV_GID_TYPE_IB;
	assert_int_equal(rp_port_gids_from_verbs(&port, 4, e, 1, NULL, "mlx5_9"), 0);
	assert_int_equal(port.n_gids, 4);
	assert_string_equal(port.gids[0].text, "fe80:0000:0000:0000:0000:0000:0000:0000");
	assert_int_equal(port.gids[0].type, RP_GID_TYPE_IB_ROCE_V1);
	assert_string_equal(port.gids[0].ndev, "");          /* ifindex 0: no netdev */
	assert_string_equal(port.gids[3].text, "0000:0000:0000:0000:0000:0000:0000:0000");
	free(port.gids);
	port.gids = NULL;
	assert_int_equal(rp_port_gids_from_verbs(&port, 0, e, 0, NULL, "mlx5_9"), 0);
	assert_int_equal(port.n_gids, 0);
	assert_null(port.gids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_table_as_sysfs),
		cmocka_unit_test(test_verbs_wins_with_a_warning),
		cmocka_unit_test(test_no_root_and_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
