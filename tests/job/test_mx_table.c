/* test_mx_table.c: the matrix's start-up exchange (lib/mx_table) between ranks as threads over the
 * in-process transport (tests/mx_tcomm).
 *
 * - Every received endpoint record is a peer's: its strings (node, device and the drift
 *   description) reach the table terminated and sanitised, whatever the sender put there.
 * - Rank 0 compares the endpoints for drift (lib/verdict/drift.h) once per endpoint: two ranks that share a
 *   node's adapter (both offer it) do not count its firmware twice, and a port-less entry takes no
 *   part.
 * - A peer's start-up message that is not a ports message (too short) fails the table on every rank
 *   with the reason logged by rank 0; one from outside the run's envelope (another run's nonce) is
 *   dropped and does not count as the rank's.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/log.h"
#include "job/mx_startup.h"
#include "job/mx_table.h"
#include "mx_tcomm.h"
#include "base/util.h"

#define NR 4

struct offer {
	struct mx_wire_ep ep;
	struct mx_offer o;
};

struct rank {
	struct mxt_world *w;
	int r;
	struct offer *off;
	struct mx_table t;
	pthread_t thread;
	int rc;
	size_t junk;                  /* first send this many bytes as its ports message */
	uint64_t junk_run;            /* ... in the envelope of this run (0: the start-up's) */
	unsigned long dropped;        /* mx_comm_dropped after the exchange */
};

static void ep_set(struct offer *x, const char *node, const char *dev, const char *fw, uint32_t flags)
{
	memset(x, 0, sizeof(*x));
	rp_strlcpy(x->ep.node, node, sizeof(x->ep.node));
	rp_strlcpy(x->ep.device, dev, sizeof(x->ep.device));
	x->ep.port = 1;
	x->ep.gid_index = 3;
	x->ep.mtu = 4096;
	x->ep.flags = flags;
	if (!(flags & MX_EP_NO_PORT)) {
		rp_strlcpy(x->ep.drift.node, node, sizeof(x->ep.drift.node));
		rp_strlcpy(x->ep.drift.device, dev, sizeof(x->ep.drift.device));
		x->ep.drift.port = 1;
		rp_strlcpy(x->ep.drift.model, "pci 0x15b3:0x1021", sizeof(x->ep.drift.model));
		rp_strlcpy(x->ep.drift.value[RP_DF_FIRMWARE], fw, RP_DRIFT_VALUE);
		rp_strlcpy(x->ep.drift.value[RP_DF_MTU], "4096", RP_DRIFT_VALUE);
	}
	x->o.eps = &x->ep;
	x->o.n = 1;
	x->o.why = "";
	x->o.nccl_version = 22809;
}

static void *rank_main(void *arg)
{
	struct rank *k = arg;
	struct mx_comm c;

	mxt_comm(k->w, k->r, &c);
	if (k->junk) {
		char *junk = calloc(1, k->junk);

		assert_non_null(junk);
		if (k->junk >= sizeof(struct mx_hdr))
			mx_hdr_init((struct mx_hdr *)(void *)junk, MX_KIND_EPS, k->r, 0, 0, sizeof(struct mx_wire_ep));
		mx_comm_set_run(&c, k->junk_run);
		mx_comm_send(&c, 0, MX_TAG_STARTUP_IN, MX_STARTUP_ROUND, junk, k->junk, rp_now() + 5);
		mx_comm_set_run(&c, 0);
		free(junk);
	}
	k->rc = mx_table_gather(&c, &k->off->o, 10, 0, &k->t);
	k->dropped = mx_comm_dropped(&c);
	return NULL;
}

static void fini(struct rank *ranks);

/* The exchange among NR ranks (ranks[] preset by the caller: junk); every rank's t.err must be err. */
static void gather_err(struct offer *off, struct rank *ranks, int err)
{
	struct mxt_world *w = mxt_world_new(NR, 1, 1 << 15);

	assert_non_null(w);
	for (int r = 0; r < NR; r++) {
		ranks[r].w = w;
		ranks[r].r = r;
		ranks[r].off = &off[r];
		assert_int_equal(pthread_create(&ranks[r].thread, NULL, rank_main, &ranks[r]), 0);
	}
	for (int r = 0; r < NR; r++) {
		pthread_join(ranks[r].thread, NULL);
		assert_int_equal(ranks[r].rc, 0);
		assert_int_equal(ranks[r].t.err, err);
	}
	mxt_world_free(w);
}

static void gather(struct offer *off, struct rank *ranks)
{
	memset(ranks, 0, NR * sizeof(*ranks));
	gather_err(off, ranks, 0);
}

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char logged[8192];

static void sink(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	(void)level;
	pthread_mutex_lock(&log_lock);
	strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
	strcat(logged, "\n");
	pthread_mutex_unlock(&log_lock);
}

static void four_nodes(struct offer *off)
{
	for (int r = 0; r < NR; r++) {
		char node[16];

		snprintf(node, sizeof(node), "node%d", r);
		ep_set(&off[r], node, "mlx5_0", "28.39.1002", 0);
	}
}

/* Rank 3's first message is 10 bytes: rejected with the reason (rank 0 says it once), and the table
 * fails on every rank alike; its real message after that is a second one and dropped. */
static void test_short_message_rejected(void **state)
{
	struct offer off[NR];
	struct rank ranks[NR] = { 0 };

	(void)state;
	four_nodes(off);
	ranks[3].junk = 10;
	logged[0] = '\0';
	rp_log_set_sink(sink, NULL);
	gather_err(off, ranks, -EPROTO);
	rp_log_set_sink(NULL, NULL);
	assert_non_null(strstr(logged, "matrix: rank 3 sent 10 bytes, too short for a ports message"));
	fini(ranks);
}

/* Rank 1 first sends a well-formed ports message in another run's envelope: dropped (counted on
 * rank 0), and the rank's own message counts: the table is whole. */
static void test_foreign_envelope_dropped(void **state)
{
	struct offer off[NR];
	struct rank ranks[NR] = { 0 };

	(void)state;
	four_nodes(off);
	ranks[1].junk = sizeof(struct mx_hdr);
	ranks[1].junk_run = 0x1234;
	gather_err(off, ranks, 0);
	assert_int_equal(ranks[0].dropped, 1);
	assert_int_equal(ranks[0].t.n_eps, NR);
	fini(ranks);
}

/* Rank 2 was started with other schedule settings (its digest is not rank 0's): the table fails on
 * every rank alike as a usage error, and rank 0 names rank 2 once. Failed before the offer carried
 * the digest: the table was whole and rank 2 would have run other rounds than the rest. */
static void test_other_schedule_refused(void **state)
{
	struct offer off[NR];
	struct rank ranks[NR] = { 0 };

	(void)state;
	four_nodes(off);
	for (int r = 0; r < NR; r++)
		off[r].o.sched_digest = 0x5eed;
	off[2].o.sched_digest = 0x5eee;
	logged[0] = '\0';
	rp_log_set_sink(sink, NULL);
	gather_err(off, ranks, -EINVAL);
	rp_log_set_sink(NULL, NULL);
	assert_non_null(strstr(logged, "matrix: rank 2 was started with other schedule settings than rank 0"));
	assert_null(strstr(logged, "rank 1 was started"));
	assert_null(strstr(logged, "rank 3 was started"));
	fini(ranks);
	/* the same digest everywhere: the table is whole */
	off[2].o.sched_digest = 0x5eed;
	memset(ranks, 0, sizeof(ranks));
	gather_err(off, ranks, 0);
	assert_int_equal(ranks[3].t.n_eps, NR);
	fini(ranks);
}

static void fini(struct rank *ranks)
{
	for (int r = 0; r < NR; r++)
		mx_table_fini(&ranks[r].t);
}

/* Ranks 0 and 1 share node0's adapter (fw A); node1 and node2 run fw B: B is the majority (two
 * endpoints against one). Counting node0's adapter once per rank would make it a 2:2 split. */
static void test_drift_once_per_endpoint(void **state)
{
	struct offer off[NR];
	struct rank ranks[NR];
	const struct rp_drift *d;

	(void)state;
	ep_set(&off[0], "node0", "mlx5_0", "28.36.1010", 0);
	ep_set(&off[1], "node0", "mlx5_0", "28.36.1010", 0);
	ep_set(&off[2], "node1", "mlx5_0", "28.39.1002", 0);
	ep_set(&off[3], "node2", "mlx5_0", "28.39.1002", 0);
	gather(off, ranks);
	assert_int_equal(ranks[0].t.n_eps, 3);
	d = &ranks[0].t.drift;
	assert_int_equal(d->n_warnings, 1);
	assert_int_equal(d->warnings[0].field, RP_DF_FIRMWARE);
	assert_string_equal(d->warnings[0].value, "28.36.1010");
	assert_string_equal(d->warnings[0].majority, "28.39.1002");
	assert_non_null(strstr(d->warnings[0].nodes, "node0"));
	assert_int_equal(d->warnings[0].n_odd, 1);
	/* only rank 0 compares */
	for (int r = 1; r < NR; r++)
		assert_int_equal(ranks[r].t.drift.n_warnings, 0);
	fini(ranks);
}

/* Issue 26 item 1: ranks 0, 1 on one host and ranks 2, 3 on another, all four calling their node
 * "localhost" (host ids differ): two endpoints on two nodes, not one; each host's name says its
 * lowest rank, and rank 0 warns once, naming both hosts' ranks. Ranks of one host (one host id, one
 * name) still share its adapter. Failed before: the four claims were one endpoint (one node,
 * coverage of a single adapter, the other host never measured). */
static void test_same_name_two_hosts(void **state)
{
	struct offer off[NR];
	struct rank ranks[NR];
	struct rp_sched_ep *se;
	size_t n_nodes = 0;

	(void)state;
	for (int r = 0; r < NR; r++) {
		ep_set(&off[r], "localhost", "mlx5_0", "28.39.1002", 0);
		off[r].ep.host_id = r < 2 ? 0xa11ce : 0xb0b;
	}
	logged[0] = '\0';
	rp_log_set_sink(sink, NULL);
	gather(off, ranks);
	rp_log_set_sink(NULL, NULL);
	for (int r = 0; r < NR; r++) {
		assert_int_equal(ranks[r].t.n_eps, 2);
		assert_string_equal(ranks[r].t.eps[0].ep.node, "localhost#r0");
		assert_string_equal(ranks[r].t.eps[1].ep.node, "localhost#r2");
		assert_true(ranks[r].t.eps[0].owner == 0 || ranks[r].t.eps[0].owner == 1);
		assert_true(ranks[r].t.eps[1].owner == 2 || ranks[r].t.eps[1].owner == 3);
	}
	assert_string_equal(ranks[0].t.rank_ver[3].node, "localhost#r2");
	se = mx_sched_eps(ranks[0].t.eps, ranks[0].t.n_eps, &n_nodes);
	assert_non_null(se);
	assert_int_equal(n_nodes, 2);
	free(se);
	if (!strstr(logged, "report the same node name 'localhost' (ranks 2,3 as localhost#r2; ranks 0,1 as "
			    "localhost#r0)"))
		fail_msg("no warning naming the ranks:\n%s", logged);
	assert_non_null(strstr(logged, "give each host its own name"));
	fini(ranks);

	/* one host (one id): one endpoint, shared, and no warning */
	for (int r = 0; r < NR; r++)
		off[r].ep.host_id = 0xa11ce;
	logged[0] = '\0';
	rp_log_set_sink(sink, NULL);
	gather(off, ranks);
	rp_log_set_sink(NULL, NULL);
	assert_int_equal(ranks[0].t.n_eps, 1);
	assert_string_equal(ranks[0].t.eps[0].ep.node, "localhost");
	assert_null(strstr(logged, "same node name"));
	fini(ranks);
}

/* A port-less entry (its rank's -d selects nothing) is no vote; the same firmware everywhere else
 * is no drift. */
static void test_no_port_entry_takes_no_part(void **state)
{
	struct offer off[NR];
	struct rank ranks[NR];

	(void)state;
	ep_set(&off[0], "node0", "mlx5_0", "28.39.1002", 0);
	ep_set(&off[1], "node1", "mlx5_0", "28.39.1002", 0);
	ep_set(&off[2], "node2", "mlx5_0", "28.39.1002", 0);
	ep_set(&off[3], "node3", "mlx5_9", "", MX_EP_NO_PORT);
	gather(off, ranks);
	assert_int_equal(ranks[0].t.n_eps, 4);
	assert_int_equal(ranks[0].t.drift.n_warnings, 0);
	fini(ranks);
}

/* A peer's strings: an escape sequence in its node name and a firmware string with no terminator
 * reach the table and the drift message cleaned: terminated, no control character. */
static void test_peer_strings_sanitised(void **state)
{
	struct offer off[NR];
	struct rank ranks[NR];
	const struct rp_drift *d;

	(void)state;
	ep_set(&off[0], "node0", "mlx5_0", "28.39.1002", 0);
	ep_set(&off[1], "node1", "mlx5_0", "28.39.1002", 0);
	ep_set(&off[2], "node2\xffname", "mlx5_0", "28.39.1002", 0);   /* not UTF-8 (--node $'node2\xffname') */
	ep_set(&off[3], "node3\x1b[2J", "mlx5_0", "x", 0);
	rp_strlcpy(off[3].ep.drift.node, "node3\x1b[2J", sizeof(off[3].ep.drift.node));
	memset(off[3].ep.drift.value[RP_DF_FIRMWARE], 'z', RP_DRIFT_VALUE);   /* no terminator */
	gather(off, ranks);
	for (size_t i = 0; i < ranks[0].t.n_eps; i++)
		assert_null(strchr(ranks[0].t.eps[i].ep.node, '\x1b'));
	/* every rank's NCCL release names its node too (the JSON's "nccl_versions"): cleaned as well */
	assert_int_equal(ranks[0].t.n_rank_ver, NR);
	assert_string_equal(ranks[0].t.rank_ver[3].node, "node3?[2J");
	assert_string_equal(ranks[0].t.rank_ver[2].node, "node2?name");
	d = &ranks[0].t.drift;
	assert_int_equal(d->n_warnings, 1);
	assert_int_equal(strlen(d->warnings[0].value), RP_DRIFT_VALUE - 1);
	assert_null(strchr(d->warnings[0].nodes, '\x1b'));
	assert_null(strchr(d->warnings[0].message, '\x1b'));
	fini(ranks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drift_once_per_endpoint),
		cmocka_unit_test(test_no_port_entry_takes_no_part),
		cmocka_unit_test(test_same_name_two_hosts),
		cmocka_unit_test(test_peer_strings_sanitised),
		cmocka_unit_test(test_short_message_rejected),
		cmocka_unit_test(test_foreign_envelope_dropped),
		cmocka_unit_test(test_other_schedule_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
