/* test_nccl.c: NCCL's rules (newest release, 2.30.7; lib/nccl/nccl_rules.c has the per-release table and
 * tests/nccl/test_nccl_rules.c the boundaries) on nodes built in memory: the
 * NCCL_IB_HCA parser and matcher, the selection and its order, every warning code (raised by a node
 * that should raise it, absent on one that should not), the GID rule, the recommendation, and the
 * environment parser. */
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
#include "base/log.h"
#include "nccl/nccl.h"
#include "nodebuild.h"
#include "testutil.h"
#include "base/util.h"

/* --- building nodes in memory ---------------------------------------------------------------- */

/* The shared builder (tests/nodebuild.h) under this file's short names. */
static struct rp_hca *add_hca(struct rp_node *n, const char *name)
{
	return rp_test_hca(n, name, NULL);
}

/* The usual mlx5 RoCE table over an IPv4 address. */
static void add_mlx5_table(struct rp_port *p, const char *ipv4)
{
	char mapped[64];

	snprintf(mapped, sizeof(mapped), "::ffff:%s", ipv4);
	rp_test_gid_table(p, mapped);
}

#define add_port rp_test_port
#define add_gid rp_test_gid
#define add_ib_port rp_test_ib_port
#define free_node rp_test_node_free
#define ib_node rp_test_ib_node

/* --- helpers over results ---------------------------------------------------------------------- */

static struct rp_nccl_env env_with(const char *hca)
{
	struct rp_nccl_env env;

	rp_nccl_env_default(&env);
	env.ib_hca = hca;
	return env;
}

/* "mlx5_0:1 mlx5_1:1" */
static void sel_string(const struct rp_nccl_result *r, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < r->n_selected; i++) {
		size_t at = strlen(buf);

		snprintf(buf + at, len - at, "%s%s:%d", i ? " " : "", r->selected[i].hca, r->selected[i].port);
	}
}

static void eval_ok(const struct rp_node *n, const char *hca, struct rp_nccl_result *r)
{
	struct rp_nccl_env env = env_with(hca);

	assert_int_equal(rp_nccl_evaluate(n, &env, r), 0);
}

static void assert_selected(const struct rp_node *n, const char *hca, const char *want)
{
	struct rp_nccl_result r;
	char got[1024];

	eval_ok(n, hca, &r);
	sel_string(&r, got, sizeof(got));
	if (strcmp(got, want) != 0)
		fail_msg("NCCL_IB_HCA=%s: selected '%s', want '%s'", hca ? hca : "(unset)", got, want);
	rp_nccl_result_fini(&r);
}

/* Evaluate and count warnings with code. */
static size_t count_warn(const struct rp_node *n, const struct rp_nccl_env *env, enum rp_nccl_warn code)
{
	struct rp_nccl_result r;
	size_t c;

	assert_int_equal(rp_nccl_evaluate(n, env, &r), 0);
	c = rp_nccl_result_count(&r, code);
	rp_nccl_result_fini(&r);
	return c;
}

static size_t count_warn_hca(const struct rp_node *n, const char *hca, enum rp_nccl_warn code)
{
	struct rp_nccl_env env = env_with(hca);

	return count_warn(n, &env, code);
}

/* Log capture: the last error message, so tests can check it names the variable. */
static char last_log[1024];

static void capture_sink(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	rp_strlcpy(last_log, msg, sizeof(last_log));
}

static int setup_log(void **state)
{
	(void)state;
	rp_log_set_sink(capture_sink, NULL);
	return 0;
}

/* --- the NCCL_IB_HCA parser -------------------------------------------------------------------- */

/* --- NCCL_IB_HCA parsing: one row a spec ------------------------------------------------------- */

/* What a parsed spec looks like, in one line a row can state: "unset", else "^" when excluding, "="
 * when exact, then the entries in brackets, each "name", "name:port" when a port was given, and
 * "name:port:rail:plane" when 2.30.7's rail or plane fields are set. */
static void spec_render(const struct rp_nccl_spec *s, char *buf, size_t len)
{
	size_t at;

	if (!s->set) {
		snprintf(buf, len, "unset");
		return;
	}
	at = (size_t)snprintf(buf, len, "%s%s[", s->exclude ? "^" : "", s->exact ? "=" : "");
	for (size_t i = 0; i < s->n_entries && at < len; i++) {
		const struct rp_nccl_spec_entry *e = &s->entries[i];

		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "", e->name);
		if ((e->has_port || e->port != -1) && at < len)
			at += (size_t)snprintf(buf + at, len - at, ":%d", e->port);
		if ((e->rail != -1 || e->plane != -1) && at < len)
			at += (size_t)snprintf(buf + at, len - at, ":%d:%d", e->rail, e->plane);
	}
	if (at < len)
		snprintf(buf + at, len - at, "]");
}

struct spec_case {
	const char *name;             /* the test's name */
	const char *spec;             /* NULL: NCCL_IB_HCA unset */
	uint32_t version;             /* 0: the newest release modelled */
	const char *parsed;           /* spec_render() of the result */
	const char *port_text;        /* the first entry's port_text; NULL: not checked */
	const char *keeps[5];         /* "device:port" the spec keeps */
	const char *drops[5];         /* "device:port" it does not */
};

static const struct spec_case spec_cases[] = {
	{ "spec unset keeps all", NULL, 0, "unset", NULL, { "mlx5_0:1" }, { NULL } },
	{ "spec empty keeps all", "", 0, "[]", NULL, { "mlx5_0:1" }, { NULL } },
	{ "spec '=' alone keeps all", "=", 0, "=[]", NULL, { "anything:2" }, { NULL } },
	{ "spec '^' alone excludes all", "^", 0, "^[]", NULL, { NULL }, { "mlx5_0:1" } },
	{ "spec '^=' excludes all", "^=", 0, "^=[]", NULL, { NULL }, { "rxe0:1" } },
	{ "spec '^,,' excludes all", "^,,", 0, "^[]", NULL, { NULL }, { "rxe0:1" } },
	/* Without '=' an entry is a prefix; a shorter name is no match. */
	{ "spec prefix", "mlx5_1", 0, "[mlx5_1]", NULL, { "mlx5_1:1", "mlx5_10:1", "mlx5_11:2" },
	  { "mlx5_2:1", "mlx5_:1" } },
	{ "spec exact", "=mlx5_1", 0, "=[mlx5_1]", NULL, { "mlx5_1:1" }, { "mlx5_10:1" } },
	{ "spec exclude prefix", "^mlx5_1", 0, "^[mlx5_1]", NULL, { "mlx5_0:1" }, { "mlx5_1:1", "mlx5_10:1" } },
	{ "spec exclude exact", "^=mlx5_1", 0, "^=[mlx5_1]", NULL, { "mlx5_10:1" }, { "mlx5_1:1" } },
	/* Only "^" then "=" works: "=^x" is an exact match on the literal name "^x". */
	{ "spec '=^' is a literal name", "=^mlx5_0", 0, "=[^mlx5_0]", NULL, { "^mlx5_0:1" },
	  { "mlx5_0:1", "mlx5_1:1" } },
	/* A missing port is every port. */
	{ "spec ports", "mlx5_0:1,mlx5_1", 0, "[mlx5_0:1,mlx5_1]", "1", { "mlx5_0:1", "mlx5_1:1", "mlx5_1:2" },
	  { "mlx5_0:2" } },
	/* 2.30.7 (src/misc/utils.cc parseStringList, strsep on ':'): port:rail:plane. */
	{ "spec port:rail:plane (2.30.7)", "mlx5_0:2:0:1,mlx5_1:1", 0, "[mlx5_0:2:0:1,mlx5_1:1]", "2:0:1",
	  { "mlx5_0:2" }, { "mlx5_0:1" } },
	/* 2.30.4 (same file, the character loop): "2:0:1" is atoi() = 2, no rail or plane. */
	{ "spec port:rail:plane (2.30.4)", "mlx5_0:2:0:1", RP_NCCL_V(2, 30, 4), "[mlx5_0:2]", NULL,
	  { "mlx5_0:2" }, { "mlx5_0:1" } },
	/* Up to 2.30.4 what atoi() makes of odd ports: "" and "x" are 0 (no port), "-1" every port. */
	{ "spec odd ports (2.30.4)", "mlx5_0:,mlx5_1:x,mlx5_2:-1", RP_NCCL_V(2, 30, 4),
	  "[mlx5_0:0,mlx5_1:0,mlx5_2:-1]", NULL, { "mlx5_2:2" }, { "mlx5_0:1", "mlx5_1:1" } },
	/* 2.30.7: an empty port field is -1, every port; "x" is still atoi() = 0. */
	{ "spec odd ports (2.30.7)", "mlx5_0:,mlx5_1:x,mlx5_2::5", RP_NCCL_V(2, 30, 7),
	  "[mlx5_0:-1,mlx5_1:0,mlx5_2:-1:5:-1]", NULL, { "mlx5_0:1" }, { "mlx5_1:1" } },
	/* atoi() is (int)strtol(): a number past LONG_MAX is LONG_MAX, whose low 32 bits are -1. */
	{ "spec port past LONG_MAX", "mlx5_9:99999999999999999999", 0, "[mlx5_9:-1]", NULL, { "mlx5_9:3" },
	  { NULL } },
	{ "spec port past INT_MAX wraps", "mlx5_9:4294967297", 0, "[mlx5_9:1]", NULL, { "mlx5_9:1" },
	  { "mlx5_9:2" } },
	{ "spec long port", "mlx5_0:111111111111111111111111111111111111111", 0, "[mlx5_0:-1]", NULL,
	  { NULL }, { NULL } },
	/* Plane and rail are int16_t: 65537 is 1. */
	{ "spec rail and plane are int16_t", "mlx5_9:1:65537:65535", 0, "[mlx5_9:1:1:-1]", NULL, { NULL },
	  { NULL } },
	{ "spec empty entries skipped", ",,mlx5_0,,,mlx5_1,", 0, "[mlx5_0,mlx5_1]", NULL, { NULL }, { NULL } },
	/* ":1" has no name: skipped like an empty entry. */
	{ "spec entry without a name skipped", ":1,mlx5_2", 0, "[mlx5_2]", NULL, { NULL }, { NULL } },
	/* NCCL does not trim names. */
	{ "spec leading space kept", "mlx5_0, mlx5_1", 0, "[mlx5_0, mlx5_1]", NULL, { NULL }, { "mlx5_1:1" } },
	{ "spec trailing space kept", "mlx5_0 ", 0, "[mlx5_0 ]", NULL, { NULL }, { "mlx5_0:1" } },
	/* After the port, atoi() stops at the space: the port still matches. */
	{ "spec space after the port", "mlx5_0:1 ", 0, "[mlx5_0:1]", NULL, { "mlx5_0:1" }, { NULL } },
};

/* "device:port" of a row: the port after the last ':'. */
static void split_dev_port(const char *dp, char *dev, size_t len, int *port)
{
	const char *colon = strrchr(dp, ':');

	assert_non_null(colon);
	snprintf(dev, len, "%.*s", (int)(colon - dp), dp);
	*port = atoi(colon + 1);
}

static void test_spec_case(void **state)
{
	const struct spec_case *c = *state;
	struct rp_nccl_spec s;
	char got[512], dev[RP_NAME_MAX];
	int port;

	if (c->version)
		assert_int_equal(rp_nccl_spec_parse_v(c->spec, c->version, &s), 0);
	else
		assert_int_equal(rp_nccl_spec_parse(c->spec, &s), 0);
	spec_render(&s, got, sizeof(got));
	if (strcmp(got, c->parsed) != 0)
		fail_msg("\"%s\" parsed as %s, want %s", c->spec ? c->spec : "(unset)", got, c->parsed);
	if (c->port_text)
		assert_string_equal(s.entries[0].port_text, c->port_text);
	for (size_t i = 0; i < 5 && c->keeps[i]; i++) {
		split_dev_port(c->keeps[i], dev, sizeof(dev), &port);
		if (!rp_nccl_spec_keeps(&s, dev, port))
			fail_msg("\"%s\" does not keep %s", c->spec ? c->spec : "(unset)", c->keeps[i]);
	}
	for (size_t i = 0; i < 5 && c->drops[i]; i++) {
		split_dev_port(c->drops[i], dev, sizeof(dev), &port);
		if (rp_nccl_spec_keeps(&s, dev, port))
			fail_msg("\"%s\" keeps %s", c->spec ? c->spec : "(unset)", c->drops[i]);
	}
}

static void test_spec_32_entry_limit(void **state)
{
	struct rp_nccl_spec s;
	char spec[1024] = "";

	(void)state;
	for (int i = 0; i < 33; i++) {
		size_t at = strlen(spec);

		snprintf(spec + at, sizeof(spec) - at, "%sdev%d", i ? "," : "=", i);
	}
	assert_int_equal(rp_nccl_spec_parse(spec, &s), 0);
	assert_int_equal(s.n_entries, 32);
	assert_int_equal(s.n_ignored, 1);
	assert_true(rp_nccl_spec_keeps(&s, "dev31", 1));
	assert_false(rp_nccl_spec_keeps(&s, "dev32", 1));   /* the 33rd entry: NCCL ignores it */

	/* Exactly 32: nothing ignored. */
	*strrchr(spec, ',') = '\0';
	assert_int_equal(rp_nccl_spec_parse(spec, &s), 0);
	assert_int_equal(s.n_entries, 32);
	assert_int_equal(s.n_ignored, 0);
}

/* Names: 2.30.7 cuts them at 63 characters (snprintf into netIf.prefix[64]); 2.30.4 and earlier
 * write past the buffer (name_overrun). Only a spec past RP_NCCL_SPEC_MAX is refused. */
static void test_spec_overlong_rejected(void **state)
{
	struct rp_nccl_spec s;
	char name[RP_NAME_MAX + 2];
	char *big;

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(rp_nccl_spec_parse(name, &s), 0);
	assert_int_equal(strlen(s.entries[0].name), RP_NAME_MAX - 1);
	assert_false(s.entries[0].name_overrun);
	assert_int_equal(rp_nccl_spec_parse_v(name, RP_NCCL_V(2, 30, 4), &s), 0);
	assert_true(s.entries[0].name_overrun);
	name[RP_NAME_MAX - 1] = '\0';                       /* 63 characters: fine everywhere */
	assert_int_equal(rp_nccl_spec_parse_v(name, RP_NCCL_V(2, 30, 4), &s), 0);
	assert_false(s.entries[0].name_overrun);

	assert_int_equal(rp_nccl_spec_parse("mlx5_0:111111111111111111111111111111111111111", &s), 0);
	assert_int_equal(s.entries[0].port, -1);

	big = malloc(RP_NCCL_SPEC_MAX + 2);
	assert_non_null(big);
	memset(big, ',', RP_NCCL_SPEC_MAX + 1);
	big[RP_NCCL_SPEC_MAX + 1] = '\0';
	last_log[0] = '\0';
	assert_int_equal(rp_nccl_spec_parse(big, &s), -ENAMETOOLONG);
	assert_non_null(strstr(last_log, "NCCL_IB_HCA"));
	big[RP_NCCL_SPEC_MAX] = '\0';                       /* at the limit: fine (all empty entries) */
	assert_int_equal(rp_nccl_spec_parse(big, &s), 0);
	assert_int_equal(s.n_entries, 0);
	free(big);
}

/* --- selection --------------------------------------------------------------------------------- */

/* NCCL walks verbs devices in order, then ports 1..n; only ACTIVE IB/Ethernet ports count. */
static void test_select_order_and_usable_ports(void **state)
{
	struct rp_node n = { 0 };
	struct rp_hca *h;

	(void)state;
	h = add_hca(&n, "mlx5_2");
	add_ib_port(h, 1, RP_PORT_ACTIVE, "fe80::1");
	add_ib_port(h, 2, RP_PORT_ACTIVE, "fe80::2");
	h = add_hca(&n, "mlx5_0");
	add_ib_port(h, 1, RP_PORT_DOWN, "fe80::3");
	add_ib_port(h, 2, RP_PORT_ACTIVE, "fe80::4");
	h = add_hca(&n, "mlx5_1");
	add_port(h, 1, RP_PORT_ACTIVE, RP_LL_UNKNOWN);           /* neither IB nor Ethernet */
	h = add_hca(&n, "mlx5_3");
	add_ib_port(h, 1, RP_PORT_INIT, "fe80::5");
	add_ib_port(h, 2, RP_PORT_ARMED, "fe80::6");
	h = add_hca(&n, "mlx5_4");
	add_ib_port(h, 1, RP_PORT_ACTIVE_DEFER, "fe80::7");

	assert_selected(&n, NULL, "mlx5_2:1 mlx5_2:2 mlx5_0:2");
	assert_selected(&n, "", "mlx5_2:1 mlx5_2:2 mlx5_0:2");
	assert_selected(&n, "mlx5_0,mlx5_2", "mlx5_2:1 mlx5_2:2 mlx5_0:2");   /* node order, not spec order */
	assert_selected(&n, "mlx5_0:1", "");
	assert_selected(&n, "mlx5_1,mlx5_3", "");
	assert_selected(&n, "^mlx5_2", "mlx5_0:2");
	assert_selected(&n, "mlx5_2:2", "mlx5_2:2");
	assert_selected(&n, "^", "");
	free_node(&n);
}

static void test_select_prefix_exact_exclude(void **state)
{
	struct rp_node n;

	(void)state;
	ib_node(&n, 12);
	assert_selected(&n, "mlx5_1", "mlx5_1:1 mlx5_10:1 mlx5_11:1");
	assert_selected(&n, "=mlx5_1", "mlx5_1:1");
	assert_selected(&n, "^mlx5_1", "mlx5_0:1 mlx5_2:1 mlx5_3:1 mlx5_4:1 mlx5_5:1 mlx5_6:1 mlx5_7:1 mlx5_8:1 mlx5_9:1");
	assert_selected(&n, "^=mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_9,mlx5_10",
			"mlx5_0:1 mlx5_11:1");
	assert_selected(&n, "=^mlx5_1", "");
	assert_selected(&n, "mlx5_0:1,mlx5_3:1", "mlx5_0:1 mlx5_3:1");
	assert_selected(&n, " mlx5_0", "");
	free_node(&n);
}

static void test_select_not_in_verbs_invisible(void **state)
{
	struct rp_node n;

	(void)state;
	ib_node(&n, 3);
	n.hcas[0].in_verbs = RP_TRI_TRUE;
	n.hcas[1].in_verbs = RP_TRI_FALSE;
	n.hcas[2].in_verbs = RP_TRI_TRUE;
	assert_selected(&n, NULL, "mlx5_0:1 mlx5_2:1");
	assert_selected(&n, "mlx5_1", "");
	free_node(&n);
}

/* --- warnings: each raised where it should be, and not where it should not ------------------ */

static void test_warn_prefix_overmatch(void **state)
{
	struct rp_node n, small;

	(void)state;
	ib_node(&n, 12);
	ib_node(&small, 4);
	assert_int_equal(count_warn_hca(&n, "mlx5_1", RP_NCCL_W_PREFIX_OVERMATCH), 1);
	assert_int_equal(count_warn_hca(&n, "^mlx5_1", RP_NCCL_W_PREFIX_OVERMATCH), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_1:1", RP_NCCL_W_PREFIX_OVERMATCH), 1);
	assert_int_equal(count_warn_hca(&n, "=mlx5_1", RP_NCCL_W_PREFIX_OVERMATCH), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5", RP_NCCL_W_PREFIX_OVERMATCH), 0);     /* a family on purpose */
	assert_int_equal(count_warn_hca(&n, "mlx5_", RP_NCCL_W_PREFIX_OVERMATCH), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5_2", RP_NCCL_W_PREFIX_OVERMATCH), 0);
	assert_int_equal(count_warn_hca(&small, "mlx5_1", RP_NCCL_W_PREFIX_OVERMATCH), 0);
	assert_true(rp_nccl_warn_fatal(RP_NCCL_W_PREFIX_OVERMATCH));
	/* mlx5_10 down: the overmatch changes nothing, so no warning. */
	n.hcas[10].ports[0].state = RP_PORT_DOWN;
	n.hcas[11].ports[0].state = RP_PORT_DOWN;
	assert_int_equal(count_warn_hca(&n, "mlx5_1", RP_NCCL_W_PREFIX_OVERMATCH), 0);
	free_node(&n);
	free_node(&small);
}

static void test_warn_no_match(void **state)
{
	struct rp_node n;

	(void)state;
	ib_node(&n, 4);
	assert_int_equal(count_warn_hca(&n, "mlx5_9", RP_NCCL_W_NO_MATCH), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0,mlx4_0", RP_NCCL_W_NO_MATCH), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0:2", RP_NCCL_W_NO_MATCH), 1);     /* no port 2 */
	assert_int_equal(count_warn_hca(&n, "=mlx5", RP_NCCL_W_NO_MATCH), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0", RP_NCCL_W_NO_MATCH), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5", RP_NCCL_W_NO_MATCH), 0);
	assert_int_equal(count_warn_hca(&n, NULL, RP_NCCL_W_NO_MATCH), 0);
	assert_int_equal(count_warn_hca(&n, "^mlx5_9", RP_NCCL_W_NO_MATCH), 0);
	free_node(&n);
}

static void test_warn_exclude_no_match_not_fatal(void **state)
{
	struct rp_node n;
	struct rp_nccl_result r;

	(void)state;
	ib_node(&n, 2);
	assert_int_equal(count_warn_hca(&n, "^mlx5_9", RP_NCCL_W_EXCLUDE_NO_MATCH), 1);
	assert_int_equal(count_warn_hca(&n, "^mlx5_1", RP_NCCL_W_EXCLUDE_NO_MATCH), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5_9", RP_NCCL_W_EXCLUDE_NO_MATCH), 0);
	eval_ok(&n, "^mlx5_9", &r);
	assert_true(rp_nccl_result_usable(&r));
	rp_nccl_result_fini(&r);
	free_node(&n);
}

static void test_warn_whitespace(void **state)
{
	struct rp_node n;
	struct rp_nccl_result r;

	(void)state;
	ib_node(&n, 2);
	assert_int_equal(count_warn_hca(&n, "mlx5_0, mlx5_1", RP_NCCL_W_WHITESPACE), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0 ", RP_NCCL_W_WHITESPACE), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0,mlx5_1", RP_NCCL_W_WHITESPACE), 0);
	/* After the port NCCL's atoi() skips whitespace: NCCL does what was meant, no warning. */
	assert_int_equal(count_warn_hca(&n, "mlx5_0:\t1", RP_NCCL_W_WHITESPACE), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5_0:1 ", RP_NCCL_W_WHITESPACE), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5_0:1 ", RP_NCCL_W_BAD_PORT), 0);
	assert_selected(&n, "mlx5_0:1 ,mlx5_1: 1", "mlx5_0:1 mlx5_1:1");
	eval_ok(&n, "mlx5_0, mlx5_1", &r);
	assert_false(rp_nccl_result_usable(&r));
	assert_int_equal(r.n_selected, 1);                       /* " mlx5_1" matched nothing */
	assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_NO_MATCH), 1);
	rp_nccl_result_fini(&r);
	free_node(&n);
}

static void test_warn_bad_port(void **state)
{
	struct rp_node n;

	(void)state;
	ib_node(&n, 2);
	assert_int_equal(count_warn_hca(&n, "mlx5_0:x", RP_NCCL_W_BAD_PORT), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0:", RP_NCCL_W_BAD_PORT), 0);  /* 2.30.7: every port */
	assert_int_equal(count_warn_hca(&n, "mlx5_0:0", RP_NCCL_W_BAD_PORT), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0:-1", RP_NCCL_W_BAD_PORT), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0:1", RP_NCCL_W_BAD_PORT), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5_0:1:0:1", RP_NCCL_W_BAD_PORT), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5_0:x", RP_NCCL_W_NO_MATCH), 1);   /* port 0: nothing */
	assert_int_equal(count_warn_hca(&n, "mlx5_0:-1", RP_NCCL_W_NO_MATCH), 0);  /* every port */
	free_node(&n);
}

static void test_warn_too_many_entries(void **state)
{
	struct rp_node n;
	char spec[1024] = "";

	(void)state;
	ib_node(&n, 33);
	for (int i = 0; i < 33; i++) {
		size_t at = strlen(spec);

		snprintf(spec + at, sizeof(spec) - at, "%smlx5_%d", i ? "," : "=", i);
	}
	assert_int_equal(count_warn_hca(&n, spec, RP_NCCL_W_TOO_MANY_ENTRIES), 1);
	assert_selected(&n, "=mlx5_32", "mlx5_32:1");
	*strrchr(spec, ',') = '\0';
	assert_int_equal(count_warn_hca(&n, spec, RP_NCCL_W_TOO_MANY_ENTRIES), 0);
	free_node(&n);
}

static void test_warn_all_excluded_and_nothing_selected(void **state)
{
	struct rp_node n, dead = { 0 };
	struct rp_nccl_result r;

	(void)state;
	ib_node(&n, 2);
	assert_int_equal(count_warn_hca(&n, "^", RP_NCCL_W_ALL_EXCLUDED), 1);
	assert_int_equal(count_warn_hca(&n, "^=", RP_NCCL_W_ALL_EXCLUDED), 1);
	assert_int_equal(count_warn_hca(&n, "^mlx5", RP_NCCL_W_ALL_EXCLUDED), 1);
	assert_int_equal(count_warn_hca(&n, "^mlx5", RP_NCCL_W_NOTHING_SELECTED), 1);
	assert_int_equal(count_warn_hca(&n, "^mlx5_0", RP_NCCL_W_ALL_EXCLUDED), 0);
	assert_int_equal(count_warn_hca(&n, "^mlx5_0", RP_NCCL_W_NOTHING_SELECTED), 0);
	assert_int_equal(count_warn_hca(&n, NULL, RP_NCCL_W_NOTHING_SELECTED), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5_7", RP_NCCL_W_NOTHING_SELECTED), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_7", RP_NCCL_W_ALL_EXCLUDED), 0);

	/* No usable port at all: nothing selected, but nothing was excluded either. */
	add_ib_port(add_hca(&dead, "mlx5_0"), 1, RP_PORT_DOWN, "fe80::1");
	assert_int_equal(count_warn_hca(&dead, NULL, RP_NCCL_W_NOTHING_SELECTED), 1);
	assert_int_equal(count_warn_hca(&dead, "^", RP_NCCL_W_ALL_EXCLUDED), 0);
	eval_ok(&dead, NULL, &r);
	assert_false(rp_nccl_result_usable(&r));
	assert_null(r.recommended);
	rp_nccl_result_fini(&r);
	free_node(&dead);

	/* An empty node (no adapter at all). */
	memset(&dead, 0, sizeof(dead));
	assert_int_equal(count_warn_hca(&dead, NULL, RP_NCCL_W_NOTHING_SELECTED), 1);
	free_node(&n);
}

static void test_warn_port_not_active(void **state)
{
	struct rp_node n = { 0 };
	struct rp_hca *h;

	(void)state;
	h = add_hca(&n, "mlx5_0");                             /* dual port, one cable */
	add_ib_port(h, 1, RP_PORT_ACTIVE, "fe80::1");
	add_ib_port(h, 2, RP_PORT_DOWN, "fe80::2");
	h = add_hca(&n, "mlx5_1");                             /* nothing plugged */
	add_ib_port(h, 1, RP_PORT_DOWN, "fe80::3");
	h = add_hca(&n, "mlx5_2");
	add_port(h, 1, RP_PORT_ACTIVE, RP_LL_UNKNOWN);
	add_hca(&n, "mlx5_3");                                 /* no ports directory */

	assert_int_equal(count_warn_hca(&n, "mlx5_0:2", RP_NCCL_W_PORT_NOT_ACTIVE), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_3", RP_NCCL_W_PORT_NOT_ACTIVE), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_3", RP_NCCL_W_NO_MATCH), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5_1", RP_NCCL_W_PORT_NOT_ACTIVE), 1);
	assert_int_equal(count_warn_hca(&n, "=mlx5_2", RP_NCCL_W_PORT_NOT_ACTIVE), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0:1", RP_NCCL_W_PORT_NOT_ACTIVE), 0);
	assert_int_equal(count_warn_hca(&n, "mlx5_0", RP_NCCL_W_PORT_NOT_ACTIVE), 0);   /* port 2 not named */
	assert_int_equal(count_warn_hca(&n, NULL, RP_NCCL_W_PORT_NOT_ACTIVE), 0);
	assert_int_equal(count_warn_hca(&n, "^mlx5_1", RP_NCCL_W_PORT_NOT_ACTIVE), 0);
	free_node(&n);
}

static void test_warn_not_in_verbs(void **state)
{
	struct rp_node n;

	(void)state;
	ib_node(&n, 2);
	assert_int_equal(count_warn_hca(&n, NULL, RP_NCCL_W_NOT_IN_VERBS), 0);   /* unknown: fixture root */
	n.hcas[0].in_verbs = RP_TRI_TRUE;
	n.hcas[1].in_verbs = RP_TRI_TRUE;
	assert_int_equal(count_warn_hca(&n, NULL, RP_NCCL_W_NOT_IN_VERBS), 0);
	n.hcas[1].in_verbs = RP_TRI_FALSE;
	rp_strlcpy(n.hcas[1].unusable_reason, "no /dev/infiniband/uverbs1", sizeof(n.hcas[1].unusable_reason));
	assert_int_equal(count_warn_hca(&n, NULL, RP_NCCL_W_NOT_IN_VERBS), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_1", RP_NCCL_W_NOT_IN_VERBS), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0", RP_NCCL_W_NOT_IN_VERBS), 0);
	assert_int_equal(count_warn_hca(&n, "^mlx5_1", RP_NCCL_W_NOT_IN_VERBS), 0);
	free_node(&n);
}

static void test_warn_too_many_ports(void **state)
{
	struct rp_node n;
	struct rp_nccl_result r;

	(void)state;
	ib_node(&n, 33);
	eval_ok(&n, NULL, &r);
	assert_int_equal(r.n_selected, RP_NCCL_MAX_PORTS);
	assert_string_equal(r.selected[31].hca, "mlx5_31");
	assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_TOO_MANY_PORTS), 1);
	rp_nccl_result_fini(&r);
	assert_int_equal(count_warn_hca(&n, "^=mlx5_32", RP_NCCL_W_TOO_MANY_PORTS), 0);
	free_node(&n);
}

static void test_warn_mixed_link_layer(void **state)
{
	struct rp_node n;
	struct rp_port *p;

	(void)state;
	ib_node(&n, 2);
	p = add_port(add_hca(&n, "mlx5_2"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	add_mlx5_table(p, "10.0.0.1");
	assert_int_equal(count_warn_hca(&n, NULL, RP_NCCL_W_MIXED_LINK_LAYER), 1);
	assert_int_equal(count_warn_hca(&n, "mlx5_0,mlx5_1", RP_NCCL_W_MIXED_LINK_LAYER), 0);
	assert_int_equal(count_warn_hca(&n, "=mlx5_2", RP_NCCL_W_MIXED_LINK_LAYER), 0);
	free_node(&n);
}

static void test_warn_ib_subnet_mismatch(void **state)
{
	struct rp_node n = { 0 };

	(void)state;
	add_ib_port(add_hca(&n, "mlx5_0"), 1, RP_PORT_ACTIVE, "fe80::1:2:3:4");
	add_ib_port(add_hca(&n, "mlx5_1"), 1, RP_PORT_ACTIVE, "fe80::5:6:7:8");
	add_ib_port(add_hca(&n, "mlx5_2"), 1, RP_PORT_ACTIVE, "fec0:0:0:1::9");
	assert_int_equal(count_warn_hca(&n, NULL, RP_NCCL_W_IB_SUBNET_MISMATCH), 1);
	assert_int_equal(count_warn_hca(&n, "=mlx5_0,mlx5_1", RP_NCCL_W_IB_SUBNET_MISMATCH), 0);
	assert_int_equal(count_warn_hca(&n, "=mlx5_0,mlx5_2", RP_NCCL_W_IB_SUBNET_MISMATCH), 1);
	free_node(&n);
}

static void test_warn_gid_codes(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "mlx5_0"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	add_mlx5_table(p, "10.0.0.1");
	rp_nccl_env_default(&env);
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_NO_USABLE_GID), 0);
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_BAD_GID_OVERRIDE), 0);
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_ROCE_VERSION), 0);
	env.gid_index = 7;                                       /* beyond the table */
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_BAD_GID_OVERRIDE), 1);
	env.gid_index = 5;                                       /* an empty entry: NCCL uses it */
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_BAD_GID_OVERRIDE), 0);
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_GID_INVALID), 1);
	env.gid_index = 1;                                       /* link-local */
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_GID_INVALID), 1);
	env.gid_index = 3;
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_BAD_GID_OVERRIDE), 0);
	env.gid_index = 2;                                       /* a v1 GID while v2 is wanted */
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_ROCE_VERSION), 1);
	env.gid_index = -1;
	env.addr_range = "192.168.0.0/16";                       /* no GID inside: NCCL stays on fe80 0 */
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_GID_INVALID), 1);
	env.addr_range = NULL;
	env.addr_family = AF_INET6;                              /* only link-local IPv6 GIDs */
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_GID_INVALID), 1);
	assert_true(rp_nccl_warn_fatal(RP_NCCL_W_NO_USABLE_GID));
	assert_false(rp_nccl_warn_fatal(RP_NCCL_W_ROCE_VERSION));
	free_node(&n);
}

/* Every code has a distinct, stable name. */
static void test_warn_codes_stable(void **state)
{
	static const char *const want[RP_NCCL_W_COUNT_] = {
		"prefix_overmatch", "no_match", "exclude_no_match", "whitespace", "bad_port", "too_many_entries",
		"all_excluded", "port_not_active", "not_in_verbs", "nothing_selected", "too_many_ports",
		"mixed_link_layer", "ib_subnet_mismatch", "no_usable_gid", "bad_gid_override", "roce_version",
		"gdr_disabled", "env_parsed_as", "gid_invalid", "port_failed", "ib_disabled", "nccl_crash",
		"nccl_overflow", "nccl_version", "nccl_newer_than_model",
	};

	/* Not fatal: an exclude entry that excludes nothing, a GID of the other RoCE version, no GDR. */
	static const bool fatal[RP_NCCL_W_COUNT_] = {
		true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, false, false,
		false, true, true, true, true, true, false, false,
	};

	(void)state;
	for (int i = 0; i < RP_NCCL_W_COUNT_; i++) {
		assert_string_equal(rp_nccl_warn_code(i), want[i]);
		if (rp_nccl_warn_fatal(i) != fatal[i])
			fail_msg("%s: fatal is %d", want[i], rp_nccl_warn_fatal(i));
	}
	assert_string_equal(rp_nccl_warn_code(RP_NCCL_W_COUNT_), "unknown");
	assert_false(rp_nccl_warn_fatal(RP_NCCL_W_GDR_DISABLED));
	assert_false(rp_nccl_warn_fatal(RP_NCCL_W_EXCLUDE_NO_MATCH));
}

/* --- the recommendation ------------------------------------------------------------------------ */

static void assert_recommended(const struct rp_node *n, const char *hca, const char *want)
{
	struct rp_nccl_result r;

	eval_ok(n, hca, &r);
	if (!want)
		assert_null(r.recommended);
	else if (!r.recommended || strcmp(r.recommended, want) != 0)
		fail_msg("NCCL_IB_HCA=%s: recommended '%s', want '%s'", hca ? hca : "(unset)",
			 r.recommended ? r.recommended : "(null)", want);
	rp_nccl_result_fini(&r);
}

static void test_recommended(void **state)
{
	struct rp_node n;

	(void)state;
	ib_node(&n, 12);
	n.hcas[2].ports[0].state = RP_PORT_DOWN;
	assert_recommended(&n, "mlx5_1", "=mlx5_1:1");
	assert_recommended(&n, "mlx5_0,mlx5_3", "=mlx5_0:1,mlx5_3:1");
	assert_recommended(&n, " mlx5_0 ,mlx5_3", "=mlx5_0:1,mlx5_3:1");
	assert_recommended(&n, "mlx5_0,mlx5_2", "=mlx5_0:1");            /* mlx5_2 is down */
	assert_recommended(&n, "^mlx5_1,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_9",
			   "=mlx5_0:1,mlx5_10:1,mlx5_11:1");                 /* mlx5_1 read as exact */
	assert_recommended(&n, "^", NULL);
	free_node(&n);

	ib_node(&n, 2);
	add_ib_port(&n.hcas[1], 2, RP_PORT_ACTIVE, "fe80::9");
	assert_recommended(&n, NULL, "=mlx5_0:1,mlx5_1:1,mlx5_1:2");
	assert_recommended(&n, "", "=mlx5_0:1,mlx5_1:1,mlx5_1:2");
	assert_recommended(&n, "mlx5_1:2", "=mlx5_1:2");
	free_node(&n);
}

/* --- the GID rule ------------------------------------------------------------------------------ */

static void test_gid_usual_mlx5_table(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_nccl_result r;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "mlx5_4"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	add_mlx5_table(p, "10.77.0.1");
	rp_nccl_env_default(&env);
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	eval_ok(&n, NULL, &r);
	assert_int_equal(r.n_selected, 1);
	assert_int_equal(r.selected[0].gid_index, 3);
	rp_nccl_result_fini(&r);
	free_node(&n);
}

static void test_gid_roce_v1(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "mlx5_0"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	add_mlx5_table(p, "10.0.0.1");
	rp_nccl_env_default(&env);
	env.roce_version = 1;
	assert_int_equal(rp_nccl_gid_index(p, &env), 2);
	free_node(&n);
}

static void test_gid_ipv6_family(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "mlx5_0"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	add_mlx5_table(p, "10.0.0.1");                           /* 0..3, then empty 4, 5 */
	p->gids[4].type = RP_GID_TYPE_IB_ROCE_V1;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::7", p->gids[4].raw), 1);
	p->gids[5].type = RP_GID_TYPE_ROCE_V2;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::7", p->gids[5].raw), 1);
	rp_nccl_env_default(&env);
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	env.addr_family = AF_INET6;
	assert_int_equal(rp_nccl_gid_index(p, &env), 5);
	env.roce_version = 1;
	assert_int_equal(rp_nccl_gid_index(p, &env), 4);
	free_node(&n);
}

static void test_gid_addr_range(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "mlx5_0"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	add_mlx5_table(p, "10.0.0.1");
	p->gids[4].type = RP_GID_TYPE_IB_ROCE_V1;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:192.168.7.9", p->gids[4].raw), 1);
	p->gids[5].type = RP_GID_TYPE_ROCE_V2;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:192.168.7.9", p->gids[5].raw), 1);
	rp_nccl_env_default(&env);
	env.addr_range = "192.168.0.0/16";
	assert_int_equal(rp_nccl_gid_index(p, &env), 5);
	env.addr_range = "10.0.0.0/8";
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	env.addr_range = "10.0.0.1/32";
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	env.addr_range = "172.16.0.0/12";                        /* nothing inside: the walk stays on 0 */
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	env.addr_range = "0.0.0.0/0";
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	env.addr_range = "bogus";                                /* NCCL ignores a malformed range */
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	env.addr_range = "10.0.0.0/-1";                          /* a negative length matches nothing */
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);
	env.addr_range = "10.0.0.0/abc";                         /* strtol: length 0 matches every GID */
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	env.addr_range = "10.0.0.0/33";                          /* too long: ignored */
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	env.addr_range = "10.0.0.0";                             /* no '/': ignored since 2.23.4 ... */
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	env.version = RP_NCCL_V(2, 21, 5);                       /* ... a crash in 2.21.5 and 2.22.3 */
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);
	env.version = RP_NCCL_V(2, 23, 4);
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	free_node(&n);
}

static void test_gid_override_and_ib(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *eth, *ib;

	(void)state;
	eth = add_port(add_hca(&n, "mlx5_0"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	add_mlx5_table(eth, "10.0.0.1");
	ib = add_ib_port(add_hca(&n, "mlx5_1"), 1, RP_PORT_ACTIVE, "fe80::1");
	eth = &n.hcas[0].ports[0];
	rp_nccl_env_default(&env);
	env.gid_index = 1;
	assert_int_equal(rp_nccl_gid_index(eth, &env), 1);      /* used as is, even link-local */
	env.gid_index = 9;                                       /* past the table: ibv_query_gid fails */
	assert_int_equal(rp_nccl_gid_index(eth, &env), -1);
	assert_int_equal(rp_nccl_gid_index(ib, &env), 0);       /* InfiniBand ignores it */
	env.gid_index = -1;
	assert_int_equal(rp_nccl_gid_index(ib, &env), 0);
	free_node(&n);
}

static void test_gid_none(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "rxe0"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	rp_nccl_env_default(&env);
	assert_int_equal(rp_nccl_gid_index(p, &env), -1);       /* empty table: the query of 0 fails */
	add_gid(p, "fe80::1", RP_GID_TYPE_IB_ROCE_V1);
	add_gid(p, "fe80::1", RP_GID_TYPE_ROCE_V2);
	add_gid(p, NULL, RP_GID_TYPE_NONE);
	assert_int_equal(rp_nccl_gid_index(p, &env), 0);        /* NCCL stays on the link-local 0 */
	free_node(&n);
}

/* Where no IPv4 GID has the wanted version, NCCL stops on the IPv4 one it has (here v1 at 2). */
static void test_gid_no_v2_takes_v1(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_env env;
	struct rp_port *p;

	(void)state;
	p = add_port(add_hca(&n, "rxe0"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	add_gid(p, "fe80::1", RP_GID_TYPE_IB_ROCE_V1);
	add_gid(p, "fe80::1", RP_GID_TYPE_ROCE_V2);
	add_gid(p, "::ffff:10.1.1.1", RP_GID_TYPE_IB_ROCE_V1);
	rp_nccl_env_default(&env);
	assert_int_equal(rp_nccl_gid_index(p, &env), 2);
	free_node(&n);
}

/* --- NCCL_IB_ADDR_RANGE and the environment ---------------------------------------------------- */

static void test_addr_range_parse(void **state)
{
	static const struct {
		const char *text;
		int family;
		int rc;                   /* 0 or -EINVAL */
		int prefix_len, first;    /* when 0: the prefix length and the address's first byte */
	} cases[] = {
		{ "10.0.0.0/8", AF_INET, 0, 8, 10 },
		{ "2001:db8::/32", AF_INET6, 0, 32, 0x20 },
		{ "10.0.0.0", AF_INET, -EINVAL, 0, 0 },          /* no prefix length */
		{ "10.0.0.0/33", AF_INET, -EINVAL, 0, 0 },
		{ "10.0.0.0/x", AF_INET, -EINVAL, 0, 0 },
		{ "/8", AF_INET, -EINVAL, 0, 0 },
		{ "2001:db8::/32", AF_INET, -EINVAL, 0, 0 },     /* another family */
		{ "10.0.0.0/8", AF_INET6, -EINVAL, 0, 0 },
		{ "2001:db8::/129", AF_INET6, -EINVAL, 0, 0 },
	};
	struct rp_nccl_addr_range r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = rp_nccl_addr_range_parse(cases[i].text, cases[i].family, &r);

		if (rc != cases[i].rc)
			fail_msg("\"%s\" (%s): %d, want %d", cases[i].text, cases[i].family == AF_INET ? "AF_INET" : "AF_INET6",
				 rc, cases[i].rc);
		if (rc == 0 && (r.prefix_len != cases[i].prefix_len || r.addr[0] != cases[i].first))
			fail_msg("\"%s\": /%d first byte %d, want /%d %d", cases[i].text, r.prefix_len, r.addr[0],
				 cases[i].prefix_len, cases[i].first);
	}
}

static const char *const nccl_vars[] = {
	"NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_ADDR_FAMILY", "NCCL_IB_ADDR_RANGE",
	"NCCL_IB_ROCE_VERSION_NUM", "NCCL_NET_GDR_LEVEL", "NCCL_IB_ROUTABLE_FLID_GID_INDEX",
	"NCCL_IB_DEVICE_PCI_ORDER", "NCCL_IB_DISABLE", "NCCL_IB_MERGE_VFS",
};

static int clear_env(void **state)
{
	(void)state;
	for (size_t i = 0; i < RP_ARRAY_SIZE(nccl_vars); i++)
		unsetenv(nccl_vars[i]);
	return 0;
}

static void test_env_defaults(void **state)
{
	struct rp_nccl_env env;

	(void)state;
	assert_int_equal(rp_nccl_env_load(&env), 0);
	assert_null(env.ib_hca);
	assert_int_equal(env.gid_index, -1);
	assert_int_equal(env.addr_family, AF_INET);
	assert_null(env.addr_range);
	assert_int_equal(env.roce_version, 2);
	assert_int_equal(env.gdr_level, RP_PATH_PXB);
	/* Empty values count as unset, except NCCL_IB_HCA which is kept (and keeps every device). */
	setenv("NCCL_IB_GID_INDEX", "", 1);
	setenv("NCCL_IB_HCA", "", 1);
	assert_int_equal(rp_nccl_env_load(&env), 0);
	assert_int_equal(env.gid_index, -1);
	assert_non_null(env.ib_hca);
	assert_string_equal(env.ib_hca, "");
}

static void test_env_values(void **state)
{
	struct rp_nccl_env env;

	(void)state;
	setenv("NCCL_IB_HCA", "=mlx5_0:1", 1);
	setenv("NCCL_IB_GID_INDEX", "3", 1);
	setenv("NCCL_IB_ADDR_FAMILY", "AF_INET6", 1);
	setenv("NCCL_IB_ADDR_RANGE", "2001:db8::/64", 1);
	setenv("NCCL_IB_ROCE_VERSION_NUM", "1", 1);
	setenv("NCCL_NET_GDR_LEVEL", "SYS", 1);
	assert_int_equal(rp_nccl_env_load(&env), 0);
	assert_string_equal(env.ib_hca, "=mlx5_0:1");
	assert_int_equal(env.gid_index, 3);
	assert_int_equal(env.addr_family, AF_INET6);
	assert_string_equal(env.addr_range, "2001:db8::/64");
	assert_int_equal(env.roce_version, 1);
	assert_int_equal(env.gdr_level, RP_PATH_SYS);
}

/* Each malformed value is an error whose message names the variable. */
/* Values rdmaprobe used to refuse (exit 2) and NCCL reads without a word: ncclLoadParam
 * (src/misc/param.cc, every release 2.18.1 to 2.30.7) is strtoll(text, NULL, 0); envIbAddrFamily
 * (src/transport/net_ib.cc 2.21.5, net_ib/connect.cc 2.30.7) takes anything but AF_INET6 as
 * AF_INET; envIbAddrRange ignores a malformed range; ncclGetLevel (src/graph/paths.cc) ignores an
 * unknown NCCL_NET_GDR_LEVEL name. Each is read as NCCL reads it and raises env_parsed_as. */
static void test_env_read_as_nccl(void **state)
{
	static const struct {
		const char *var, *value;
		int gid_index, roce_version, family;
		size_t parsed_as;
	} cases[] = {
		{ "NCCL_IB_GID_INDEX", "010", 8, 2, AF_INET, 1 },           /* octal */
		{ "NCCL_IB_GID_INDEX", "0x3", 3, 2, AF_INET, 1 },           /* hexadecimal */
		{ "NCCL_IB_GID_INDEX", "abc", 0, 2, AF_INET, 1 },           /* no number: 0 */
		{ "NCCL_IB_GID_INDEX", "3 ", 3, 2, AF_INET, 1 },            /* the rest ignored */
		{ "NCCL_IB_GID_INDEX", "-2", -2, 2, AF_INET, 0 },           /* plain: automatic */
		{ "NCCL_IB_GID_INDEX", "99999999999999999999", -1, 2, AF_INET, 1 }, /* ERANGE: default */
		{ "NCCL_IB_GID_INDEX", "4294967299", 3, 2, AF_INET, 0 },    /* int64 cut to int */
		{ "NCCL_IB_ADDR_FAMILY", "inet", -1, 2, AF_INET, 1 },
		{ "NCCL_IB_ADDR_FAMILY", "AF_INET4", -1, 2, AF_INET, 1 },
		{ "NCCL_IB_ADDR_RANGE", "10.0.0.0", -1, 2, AF_INET, 1 },     /* no '/': ignored */
		{ "NCCL_IB_ADDR_RANGE", "10.0.0.0/40", -1, 2, AF_INET, 1 },
		{ "NCCL_IB_ADDR_RANGE", "2001:db8::/64", -1, 2, AF_INET, 1 }, /* IPv6 under AF_INET */
		{ "NCCL_IB_ADDR_RANGE", "10.0.0.0/-1", -1, 2, AF_INET, 1 },  /* matches nothing */
		{ "NCCL_IB_ROCE_VERSION_NUM", "3", -1, 3, AF_INET, 0 },
		{ "NCCL_IB_ROCE_VERSION_NUM", "v2", -1, 0, AF_INET, 1 },
		{ "NCCL_NET_GDR_LEVEL", "NEAR", -1, 2, AF_INET, 1 },
	};
	struct rp_nccl_env env;
	struct rp_node n = { 0 };
	char *big;

	(void)state;
	add_mlx5_table(add_port(add_hca(&n, "mlx5_0"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET), "10.0.0.1");
	for (size_t i = 0; i < RP_ARRAY_SIZE(cases); i++) {
		clear_env(NULL);
		setenv(cases[i].var, cases[i].value, 1);
		env.version = 0;
		if (rp_nccl_env_load(&env) != 0)
			fail_msg("%s=%s was refused", cases[i].var, cases[i].value);
		if (env.gid_index != cases[i].gid_index || env.roce_version != cases[i].roce_version ||
		    env.addr_family != cases[i].family)
			fail_msg("%s=%s: read as gid %d roce %d family %d", cases[i].var, cases[i].value, env.gid_index,
				 env.roce_version, env.addr_family);
		if (count_warn(&n, &env, RP_NCCL_W_ENV_PARSED_AS) != cases[i].parsed_as)
			fail_msg("%s=%s: %zu env_parsed_as warnings", cases[i].var, cases[i].value,
				 count_warn(&n, &env, RP_NCCL_W_ENV_PARSED_AS));
	}
	clear_env(NULL);
	setenv("NCCL_NET_GDR_LEVEL", "NEAR", 1);                  /* unknown name: the default PXB */
	assert_int_equal(rp_nccl_env_load(&env), 0);
	assert_int_equal(env.gdr_level, RP_PATH_PXB);
	setenv("NCCL_NET_GDR_LEVEL", "3", 1);                     /* old numbering: PHB */
	assert_int_equal(rp_nccl_env_load(&env), 0);
	assert_int_equal(env.gdr_level, RP_PATH_PHB);
	clear_env(NULL);
	big = malloc(RP_NCCL_SPEC_MAX + 10);
	assert_non_null(big);
	memset(big, 'm', RP_NCCL_SPEC_MAX + 9);
	big[RP_NCCL_SPEC_MAX + 9] = '\0';
	setenv("NCCL_IB_HCA", big, 1);
	last_log[0] = '\0';
	assert_int_equal(rp_nccl_env_load(&env), -ENAMETOOLONG);
	assert_non_null(strstr(last_log, "NCCL_IB_HCA"));
	free(big);
	clear_env(NULL);
	free_node(&n);
}

/* A name of 64+ characters: 2.30.7 cuts it (and matches on the cut name); 2.30.4 overruns NCCL's
 * 64-byte buffer (src/misc/utils.cc parseStringList), nccl_overflow. */
static void test_evaluate_long_name(void **state)
{
	struct rp_node n;
	struct rp_nccl_result r;
	struct rp_nccl_env env;
	char name[RP_NAME_MAX + 8];

	(void)state;
	ib_node(&n, 1);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	env = env_with(name);
	assert_int_equal(rp_nccl_evaluate(&n, &env, &r), 0);
	assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_NCCL_OVERFLOW), 0);
	assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_NO_MATCH), 1);
	rp_nccl_result_fini(&r);
	rp_nccl_result_fini(&r);                                 /* safe twice */
	env.version = RP_NCCL_V(2, 30, 4);
	assert_int_equal(count_warn(&n, &env, RP_NCCL_W_NCCL_OVERFLOW), 1);
	free_node(&n);
}


/* --- fixture trees: discovery + rules, and the command end to end ----------------------------- */

/* Discover the fixture and evaluate under env. */
static void eval_fixture(const struct rp_fx *fx, const struct rp_nccl_env *env, struct rp_node *node,
			 struct rp_nccl_result *r)
{
	struct rp_discover_opts o = { .sysfs_root = fx->root };

	assert_int_equal(rp_node_discover(node, &o), 0);
	assert_int_equal(rp_nccl_evaluate(node, env, r), 0);
}

static const struct rp_nccl_gpu_choice *gpu_choice(const struct rp_nccl_result *r, const char *pci)
{
	for (size_t i = 0; i < r->n_gpus; i++)
		if (strcmp(r->gpus[i].pci, pci) == 0)
			return &r->gpus[i];
	fail_msg("GPU %s not in the result", pci);
	return NULL;
}

/* PXB through two switches, PHB through the root complex, SYS across sockets; GPUDirect at PXB. */
static void test_fixture_gpu_paths_and_gdr(void **state)
{
	struct rp_fx fx = { "" };
	struct rp_node node = { 0 };
	struct rp_nccl_result r;
	struct rp_nccl_env env;
	const struct rp_nccl_gpu_choice *g;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_dual_socket(&fx), 0);
	rp_nccl_env_default(&env);
	eval_fixture(&fx, &env, &node, &r);
	assert_int_equal(r.n_selected, 1);                       /* mlx5_1's port is DOWN */
	assert_string_equal(r.selected[0].hca, "mlx5_0");
	assert_int_equal(r.n_gpus, 3);
	g = gpu_choice(&r, "0000:35:00.0");
	assert_string_equal(g->hca, "mlx5_0");
	assert_int_equal(g->path, RP_PATH_PXB);
	assert_true(g->gdr);
	g = gpu_choice(&r, "0000:17:00.0");
	assert_int_equal(g->path, RP_PATH_PHB);
	assert_false(g->gdr);
	g = gpu_choice(&r, "0000:b1:00.0");
	assert_int_equal(g->path, RP_PATH_SYS);
	assert_false(g->gdr);
	assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_GDR_DISABLED), 2);
	assert_true(rp_nccl_result_usable(&r));                  /* gdr_disabled is not fatal */
	rp_nccl_result_fini(&r);

	env.gdr_level = RP_PATH_PHB;
	assert_int_equal(rp_nccl_evaluate(&node, &env, &r), 0);
	assert_true(gpu_choice(&r, "0000:17:00.0")->gdr);
	assert_false(gpu_choice(&r, "0000:b1:00.0")->gdr);
	assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_GDR_DISABLED), 1);
	rp_nccl_result_fini(&r);

	env.gdr_level = RP_PATH_SYS;
	assert_int_equal(rp_nccl_evaluate(&node, &env, &r), 0);
	assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_GDR_DISABLED), 0);
	rp_nccl_result_fini(&r);

	env.gdr_level = RP_PATH_PIX;
	assert_int_equal(rp_nccl_evaluate(&node, &env, &r), 0);
	assert_false(gpu_choice(&r, "0000:35:00.0")->gdr);
	rp_nccl_result_fini(&r);

	/* Nothing selected: no adapter for any GPU, and no GPUDirect. */
	env = env_with("mlx5_1");
	assert_int_equal(rp_nccl_evaluate(&node, &env, &r), 0);
	assert_int_equal(r.n_selected, 0);
	assert_string_equal(gpu_choice(&r, "0000:35:00.0")->hca, "");
	assert_false(gpu_choice(&r, "0000:35:00.0")->gdr);
	assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_PORT_NOT_ACTIVE), 1);
	assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_NOTHING_SELECTED), 1);
	rp_nccl_result_fini(&r);
	rp_node_fini(&node);
	rp_fx_destroy(&fx);
}

/* Each GPU of a DGX-like node gets the NIC under its own switch (the first one on a tie). */
static void test_fixture_dgx_nearest(void **state)
{
	static const struct {
		const char *gpu, *hca;
	} want[] = {
		{ "0000:03:00.0", "mlx5_0" }, { "0000:04:00.0", "mlx5_0" }, { "0000:23:00.0", "mlx5_2" },
		{ "0000:24:00.0", "mlx5_2" }, { "0000:83:00.0", "mlx5_4" }, { "0000:84:00.0", "mlx5_4" },
		{ "0000:a3:00.0", "mlx5_6" }, { "0000:a4:00.0", "mlx5_6" },
	};
	struct rp_fx fx = { "" };
	struct rp_node node = { 0 };
	struct rp_nccl_result r;
	struct rp_nccl_env env;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_dgx_h100(&fx), 0);
	rp_nccl_env_default(&env);
	eval_fixture(&fx, &env, &node, &r);
	assert_int_equal(r.n_selected, 8);
	for (size_t i = 0; i < RP_ARRAY_SIZE(want); i++) {
		const struct rp_nccl_gpu_choice *g = gpu_choice(&r, want[i].gpu);

		assert_string_equal(g->hca, want[i].hca);
		assert_int_equal(g->path, RP_PATH_PIX);
		assert_true(g->gdr);
	}
	assert_true(rp_nccl_result_usable(&r));
	assert_string_equal(r.recommended, "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1");
	rp_nccl_result_fini(&r);

	/* Only mlx5_1 (exact): GPUs on switch B reach it through the CPU, socket 1 across sockets. */
	env = env_with("=mlx5_1");
	assert_int_equal(rp_nccl_evaluate(&node, &env, &r), 0);
	assert_int_equal(gpu_choice(&r, "0000:03:00.0")->path, RP_PATH_PIX);
	assert_int_equal(gpu_choice(&r, "0000:23:00.0")->path, RP_PATH_PHB);
	assert_int_equal(gpu_choice(&r, "0000:a3:00.0")->path, RP_PATH_SYS);
	assert_int_equal(rp_nccl_result_count(&r, RP_NCCL_W_GDR_DISABLED), 6);
	rp_nccl_result_fini(&r);
	rp_node_fini(&node);
	rp_fx_destroy(&fx);
}

/* Run "rdmaprobe nccl ARGS"; stdout (and stderr when merge_err) into out. Returns the exit status. */
/* The binary under the newest release's rules unless args name one: the default would be the
 * libnccl of the machine running the tests. */
static int run_bin(char *out, size_t len, bool merge_err, const char *args)
{
	return rp_test_run_bin(out, len, "nccl %s %s %s", strstr(args, "--nccl-version") ? "" : "--nccl-version 2.30.7",
			       args, merge_err ? "2>&1" : "2>/dev/null");
}

static json_t *run_json(const struct rp_fx *fx, const char *extra, int want_status)
{
	static char out[1 << 17];
	char args[PATH_MAX + 512];
	json_error_t err;
	json_t *j;

	snprintf(args, sizeof(args), "--json --sysfs-root '%s' %s", fx->root, extra);
	assert_int_equal(run_bin(out, sizeof(out), false, args), want_status);
	j = json_loads(out, 0, &err);
	if (!j)
		fail_msg("not JSON (%s): %s", err.text, out);
	return j;
}

static bool json_has_warning(const json_t *j, const char *code)
{
	size_t i;
	json_t *w;

	json_array_foreach(json_object_get(j, "warnings"), i, w)
		if (strcmp(json_string_value(json_object_get(w, "code")), code) == 0)
			return true;
	return false;
}

/* The JSON report straight from the library (the command tests below need the binary). */
static void test_json_report(void **state)
{
	struct rp_node n = { 0 };
	struct rp_nccl_result r;
	struct rp_nccl_env env;
	struct rp_port *p;
	json_t *j, *w;
	char *dump;

	(void)state;
	add_ib_port(add_hca(&n, "mlx5_0"), 1, RP_PORT_ACTIVE, "fe80::1");
	p = add_port(add_hca(&n, "mlx5_4"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	add_mlx5_table(p, "10.0.0.4");
	p = add_port(add_hca(&n, "mlx5_5"), 1, RP_PORT_ACTIVE, RP_LL_ETHERNET);
	add_gid(p, "fe80::1", RP_GID_TYPE_ROCE_V2);
	env = env_with("mlx5_0,mlx5_4,mlx5_5,\xff\xfe");
	assert_int_equal(rp_nccl_evaluate(&n, &env, &r), 0);
	j = rp_nccl_result_json(&r, &env);
	assert_non_null(j);
	dump = json_dumps(j, JSON_COMPACT);
	assert_non_null(dump);                                   /* valid UTF-8 despite the spec */
	free(dump);
	assert_string_equal(json_string_value(json_object_get(j, "hca_spec")), "mlx5_0,mlx5_4,mlx5_5,??");
	assert_int_equal(json_array_size(json_object_get(j, "selected")), 3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "selected"), 1)), "mlx5_4:1");
	assert_int_equal(json_object_size(json_object_get(j, "gid_index")), 2);   /* RoCE ports only */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "gid_index"), "mlx5_4:1")), 3);
	/* Only a link-local GID: NCCL's walk (net_ib/connect.cc, 2.30.7) stays on 0 and uses it. */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "gid_index"), "mlx5_5:1")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "gpus")), 0);
	w = json_array_get(json_object_get(j, "warnings"), 0);
	assert_non_null(w);
	assert_non_null(json_string_value(json_object_get(w, "code")));
	assert_non_null(json_string_value(json_object_get(w, "message")));
	assert_true(json_is_boolean(json_object_get(w, "fatal")));
	assert_true(json_has_warning(j, "mixed_link_layer"));
	assert_true(json_has_warning(j, "gid_invalid"));
	assert_true(json_has_warning(j, "no_match"));
	assert_true(json_is_false(json_object_get(j, "usable")));
	assert_string_equal(json_string_value(json_object_get(j, "recommended_nccl_ib_hca")), "=mlx5_0:1,mlx5_4:1");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "env"), "NCCL_NET_GDR_LEVEL")), "PXB");
	json_decref(j);
	rp_nccl_result_fini(&r);

	env = env_with("^");
	assert_int_equal(rp_nccl_evaluate(&n, &env, &r), 0);
	j = rp_nccl_result_json(&r, NULL);
	assert_true(json_is_null(json_object_get(j, "recommended_nccl_ib_hca")));
	assert_null(json_object_get(j, "env"));
	json_decref(j);
	rp_nccl_result_fini(&r);
	free_node(&n);
}

static int skip_without_bin(void **state)
{
	(void)state;
	unsetenv("NCCL_IB_HCA");
	unsetenv("NCCL_IB_GID_INDEX");
	unsetenv("NCCL_NET_GDR_LEVEL");
	if (!getenv("RP_TEST_BIN"))
		fprintf(stderr, "SKIP: RP_TEST_BIN is not set (run through make check) - command tests skipped\n");
	return 0;
}

static void test_cmd_json_roce(void **state)
{
	struct rp_fx fx = { "" };
	json_t *j, *gpu;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_roce(&fx), 0);
	j = run_json(&fx, "", 0);
	assert_true(json_is_null(json_object_get(j, "hca_spec")));
	assert_int_equal(json_array_size(json_object_get(j, "selected")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "selected"), 0)), "mlx5_0:1");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "gid_index"), "mlx5_0:1")), 3);
	gpu = json_array_get(json_object_get(j, "gpus"), 0);
	assert_string_equal(json_string_value(json_object_get(gpu, "pci")), "0000:3c:00.0");
	assert_string_equal(json_string_value(json_object_get(gpu, "hca")), "mlx5_0");
	assert_string_equal(json_string_value(json_object_get(gpu, "path")), "PHB");
	assert_true(json_is_false(json_object_get(gpu, "gdr")));
	assert_true(json_has_warning(j, "gdr_disabled"));
	assert_string_equal(json_string_value(json_object_get(j, "recommended_nccl_ib_hca")), "=mlx5_0:1");
	json_decref(j);

	/* NCCL_IB_ROCE_VERSION_NUM=1 from the environment: the IPv4 v1 entry. */
	setenv("NCCL_IB_ROCE_VERSION_NUM", "1", 1);
	j = run_json(&fx, "", 0);
	unsetenv("NCCL_IB_ROCE_VERSION_NUM");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "gid_index"), "mlx5_0:1")), 2);
	json_decref(j);

	/* An override on an empty entry: NCCL uses the zero GID (gid_invalid); past the table of 16
	 * ibv_query_gid fails and NCCL fails the port (null, bad_gid_override). Both fatal.
	 * --hca naming the DOWN function: fatal too. */
	j = run_json(&fx, "--gid-index 7", 1);
	assert_true(json_has_warning(j, "gid_invalid"));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "gid_index"), "mlx5_0:1")), 7);
	assert_true(json_is_false(json_object_get(j, "usable")));
	json_decref(j);
	j = run_json(&fx, "--gid-index 16", 1);
	assert_true(json_has_warning(j, "bad_gid_override"));
	assert_true(json_is_null(json_object_get(json_object_get(j, "gid_index"), "mlx5_0:1")));
	json_decref(j);
	j = run_json(&fx, "--hca mlx5_1", 1);
	assert_string_equal(json_string_value(json_object_get(j, "hca_spec")), "mlx5_1");
	assert_true(json_has_warning(j, "port_not_active"));
	assert_true(json_has_warning(j, "nothing_selected"));
	assert_int_equal(json_array_size(json_object_get(j, "selected")), 0);
	json_decref(j);
	rp_fx_destroy(&fx);
}

static void test_cmd_spec_from_env_and_text(void **state)
{
	static char out[1 << 16];
	struct rp_fx fx = { "" };
	char args[PATH_MAX + 512];
	json_t *j;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	for (int i = 0; i < 12; i++) {
		char name[16], bdf[64];

		snprintf(name, sizeof(name), "mlx5_%d", i);
		snprintf(bdf, sizeof(bdf), "pci0000:00/0000:00:01.0/0000:%02x:00.0", 0x10 + i);
		assert_int_equal(rp_fx_hca(&fx, name, bdf, 0, "28.39.1002", "0c42:a103:0000:0001"), 0);
		assert_int_equal(rp_fx_port(&fx, name, 1, &rp_fx_port_ib_ndr_active), 0);
		assert_int_equal(rp_fx_gid(&fx, name, 1, 0, "fe80:0000:0000:0000:0c42:a103:0000:0001", "IB/RoCE v1", NULL), 0);
	}
	setenv("NCCL_IB_HCA", "mlx5_1", 1);
	j = run_json(&fx, "", 1);
	unsetenv("NCCL_IB_HCA");
	assert_string_equal(json_string_value(json_object_get(j, "hca_spec")), "mlx5_1");
	assert_int_equal(json_array_size(json_object_get(j, "selected")), 3);
	assert_true(json_has_warning(j, "prefix_overmatch"));
	assert_string_equal(json_string_value(json_object_get(j, "recommended_nccl_ib_hca")), "=mlx5_1:1");
	json_decref(j);

	j = run_json(&fx, "--hca =mlx5_1:1", 0);
	assert_int_equal(json_array_size(json_object_get(j, "selected")), 1);
	assert_int_equal(json_array_size(json_object_get(j, "warnings")), 0);
	json_decref(j);

	snprintf(args, sizeof(args), "--sysfs-root '%s' --hca mlx5_1", fx.root);
	assert_int_equal(run_bin(out, sizeof(out), false, args), 1);
	assert_non_null(strstr(out, "prefix_overmatch"));
	assert_non_null(strstr(out, "FATAL"));
	assert_non_null(strstr(out, "mlx5_10:1"));
	assert_non_null(strstr(out, "NCCL_IB_HCA='=mlx5_1:1'"));
	rp_fx_destroy(&fx);
}

static void test_cmd_exit_codes(void **state)
{
	static char out[1 << 14];
	struct rp_fx fx = { "" };
	char args[PATH_MAX + 512];
	char big[RP_NCCL_SPEC_MAX + 64];

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_rxe(&fx), 0);
	snprintf(args, sizeof(args), "--sysfs-root '%s'", fx.root);
	assert_int_equal(run_bin(out, sizeof(out), false, args), 0);
	assert_non_null(strstr(out, "rxe0:1"));
	assert_non_null(strstr(out, "GID index 1"));

	assert_int_equal(run_bin(out, sizeof(out), true, "--sysfs-root /nonexistent/rdmaprobe-fixture"), 3);
	assert_int_equal(run_bin(out, sizeof(out), true, "--gid-index abc"), 2);
	assert_non_null(strstr(out, "--gid-index"));
	assert_int_equal(run_bin(out, sizeof(out), true, "--frobnicate"), 2);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "--hca ", 6);
	assert_int_equal(run_bin(out, sizeof(out), true, big), 2);
	assert_non_null(strstr(out, "NCCL_IB_HCA"));
	/* NCCL ignores an unknown level (src/graph/paths.cc ncclGetLevel): not a usage error. */
	setenv("NCCL_NET_GDR_LEVEL", "FAR", 1);
	assert_int_equal(run_bin(out, sizeof(out), true, args), 0);
	unsetenv("NCCL_NET_GDR_LEVEL");
	assert_non_null(strstr(out, "env_parsed_as"));
	assert_non_null(strstr(out, "NCCL_NET_GDR_LEVEL"));
	rp_fx_destroy(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_32_entry_limit),
		cmocka_unit_test(test_spec_overlong_rejected),
		cmocka_unit_test(test_select_order_and_usable_ports),
		cmocka_unit_test(test_select_prefix_exact_exclude),
		cmocka_unit_test(test_select_not_in_verbs_invisible),
		cmocka_unit_test(test_warn_prefix_overmatch),
		cmocka_unit_test(test_warn_no_match),
		cmocka_unit_test(test_warn_exclude_no_match_not_fatal),
		cmocka_unit_test(test_warn_whitespace),
		cmocka_unit_test(test_warn_bad_port),
		cmocka_unit_test(test_warn_too_many_entries),
		cmocka_unit_test(test_warn_all_excluded_and_nothing_selected),
		cmocka_unit_test(test_warn_port_not_active),
		cmocka_unit_test(test_warn_not_in_verbs),
		cmocka_unit_test(test_warn_too_many_ports),
		cmocka_unit_test(test_warn_mixed_link_layer),
		cmocka_unit_test(test_warn_ib_subnet_mismatch),
		cmocka_unit_test(test_warn_gid_codes),
		cmocka_unit_test(test_warn_codes_stable),
		cmocka_unit_test(test_recommended),
		cmocka_unit_test(test_gid_usual_mlx5_table),
		cmocka_unit_test(test_gid_roce_v1),
		cmocka_unit_test(test_gid_ipv6_family),
		cmocka_unit_test(test_gid_addr_range),
		cmocka_unit_test(test_gid_override_and_ib),
		cmocka_unit_test(test_gid_none),
		cmocka_unit_test(test_gid_no_v2_takes_v1),
		cmocka_unit_test(test_addr_range_parse),
		cmocka_unit_test_setup(test_env_defaults, clear_env),
		cmocka_unit_test_setup(test_env_values, clear_env),
		cmocka_unit_test_setup(test_env_read_as_nccl, clear_env),
		cmocka_unit_test(test_evaluate_long_name),
		cmocka_unit_test(test_fixture_gpu_paths_and_gdr),
		cmocka_unit_test(test_fixture_dgx_nearest),
		cmocka_unit_test(test_json_report),
		cmocka_unit_test_setup(test_cmd_json_roce, skip_without_bin),
		cmocka_unit_test_setup(test_cmd_spec_from_env_and_text, skip_without_bin),
		cmocka_unit_test_setup(test_cmd_exit_codes, skip_without_bin),
	};

	struct CMUnitTest spec[sizeof(spec_cases) / sizeof(spec_cases[0])];
	int failed;

	for (size_t i = 0; i < sizeof(spec) / sizeof(spec[0]); i++)
		spec[i] = (struct CMUnitTest){ .name = spec_cases[i].name, .test_func = test_spec_case,
					       .initial_state = (void *)&spec_cases[i] };
	failed = cmocka_run_group_tests_name("nccl_spec", spec, setup_log, NULL);
	return failed + cmocka_run_group_tests_name("nccl", tests, setup_log, NULL);
}
