/* test_diff.c: the run-to-run comparison: reports written by the real writer (lib/report/report.c), every
 * rule, every malformed-input path the loader names, and the front end through the binary. */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "compare/diff.h"
#include "base/log.h"
#include "report/report.h"
#include "testutil.h"
#include "base/util.h"

static char last_log[1024];

static void capture(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)ctx;
	rp_strlcpy(last_log, msg, sizeof(last_log));
}

static struct rp_endpoint ep(const char *node, const char *dev)
{
	struct rp_endpoint e = { .port = 1, .gid_index = 1, .mtu = 1024, .link_gbps = 100 };

	rp_strlcpy(e.node, node, sizeof(e.node));
	rp_strlcpy(e.device, dev, sizeof(e.device));
	rp_strlcpy(e.mem, "host", sizeof(e.mem));
	rp_strlcpy(e.mem_reg, "host", sizeof(e.mem_reg));
	return e;
}

/* A measured pair at gbps, or failed with st when st != OK. */
static void mk(struct rp_pair_result *r, struct rp_endpoint s, struct rp_endpoint d, size_t size, enum rp_status st,
	       double gbps)
{
	rp_pair_result_init(r, &s, &d);
	r->msg_size = size;
	if (st == RP_ST_OK) {
		r->status = RP_ST_OK;
		r->gbps = gbps;
		r->gbps_min = gbps / 2;
		r->iters = 100;
		r->bytes = 100 * size;
		r->verified = true;
	} else {
		rp_pair_result_fail(r, st, "injected %s", rp_status_code(st));
	}
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", rp_test_tmpdir(), name);
}

/* The real writer's document for pairs. */
static json_t *doc(const struct rp_pair_result *r, size_t n)
{
	char *argv[] = { "rdmaprobe", "loopback" };
	struct rp_report_info info = { .command = "loopback", .version = "test", .argc = 2, .argv = argv, .started = 1e9 };
	json_t *j = rp_report_json(&info, r, n);

	assert_non_null(j);
	return j;
}

static void write_doc(json_t *j, const char *name, char *path, size_t len)
{
	path_of(path, len, name);
	assert_int_equal(rp_report_write_json(j, path), 0);
	json_decref(j);
}

/* Write r as a report and load it back through the diff loader. */
static void load(const struct rp_pair_result *r, size_t n, const char *name, struct rp_diff_report *out)
{
	char path[512];

	write_doc(doc(r, n), name, path, sizeof(path));
	assert_int_equal(rp_diff_report_load(out, path), 0);
}

/* The comparison of the two result sets at threshold drop. */
static void compare(const struct rp_pair_result *o, size_t no, const struct rp_pair_result *n, size_t nn,
		    double drop, struct rp_diff_report rep[2], struct rp_diff *d)
{
	load(o, no, "old.json", &rep[0]);
	load(n, nn, "new.json", &rep[1]);
	assert_int_equal(rp_diff_compare(&rep[0], &rep[1], drop, d), 0);
}

static void done(struct rp_diff_report rep[2], struct rp_diff *d)
{
	rp_diff_fini(d);
	rp_diff_report_fini(&rep[0]);
	rp_diff_report_fini(&rep[1]);
}

static const struct rp_diff_item *find(const struct rp_diff *d, enum rp_diff_kind k, size_t nth)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->items[i].kind == k && nth-- == 0)
			return &d->items[i];
	return NULL;
}

static void test_identical(void **state)
{
	struct rp_pair_result r[2];
	struct rp_diff_report rep[2];
	struct rp_diff d;

	(void)state;
	mk(&r[0], ep("n1", "rxe0"), ep("n1", "rxe1"), 65536, RP_ST_OK, 10);
	mk(&r[1], ep("n1", "rxe1"), ep("n1", "rxe0"), 65536, RP_ST_RETRY_EXCEEDED, 0);
	compare(r, 2, r, 2, 0.1, rep, &d);
	assert_false(d.regression);
	assert_int_equal(d.matched, 2);
	assert_int_equal(d.n, 1);       /* the failing pair is still failing, nothing else */
	assert_int_equal(d.items[0].kind, RP_DIFF_STILL_FAILING);
	assert_false(d.items[0].regression);
	done(rep, &d);
}

static void test_failures_and_recoveries(void **state)
{
	struct rp_pair_result o[3], n[3];
	struct rp_diff_report rep[2];
	struct rp_diff d;
	const struct rp_diff_item *it;

	(void)state;
	mk(&o[0], ep("n1", "a"), ep("n1", "b"), 4096, RP_ST_OK, 10);
	mk(&o[1], ep("n1", "b"), ep("n1", "a"), 4096, RP_ST_TIMEOUT, 0);
	mk(&o[2], ep("n1", "a"), ep("n1", "a"), 4096, RP_ST_OK, 10);
	mk(&n[0], ep("n1", "a"), ep("n1", "b"), 4096, RP_ST_PORT_DOWN, 0);
	mk(&n[1], ep("n1", "b"), ep("n1", "a"), 4096, RP_ST_OK, 10);
	mk(&n[2], ep("n1", "a"), ep("n1", "a"), 4096, RP_ST_OK, 10);
	compare(o, 3, n, 3, 0.1, rep, &d);
	assert_true(d.regression);
	assert_int_equal(d.count[RP_DIFF_NEW_FAILURE], 1);
	assert_int_equal(d.count[RP_DIFF_RECOVERED], 1);
	assert_int_equal(d.n, 2);
	it = find(&d, RP_DIFF_NEW_FAILURE, 0);
	assert_true(it->regression);
	assert_string_equal(it->old->dst.device, "b");
	assert_int_equal(it->cur->status, RP_ST_PORT_DOWN);
	assert_string_equal(it->cur->reason, "injected port_down");
	it = find(&d, RP_DIFF_RECOVERED, 0);
	assert_false(it->regression);
	assert_int_equal(it->old->status, RP_ST_TIMEOUT);
	/* new failures come first */
	assert_int_equal(d.items[0].kind, RP_DIFF_NEW_FAILURE);
	done(rep, &d);
}

static void test_drop_threshold(void **state)
{
	struct rp_pair_result o[1], n[1];
	struct rp_diff_report rep[2];
	struct rp_diff d;

	(void)state;
	mk(&o[0], ep("n1", "a"), ep("n2", "a"), 65536, RP_ST_OK, 100);
	mk(&n[0], ep("n1", "a"), ep("n2", "a"), 65536, RP_ST_OK, 92);
	compare(o, 1, n, 1, 0.1, rep, &d);      /* -8% within 10% */
	assert_false(d.regression);
	assert_int_equal(d.n, 0);
	done(rep, &d);
	compare(o, 1, n, 1, 0.05, rep, &d);     /* -8% past 5%: the pair and both its endpoints */
	assert_true(d.regression);
	assert_int_equal(d.count[RP_DIFF_DROP], 1);
	assert_int_equal(d.count[RP_DIFF_ENDPOINT_DROP], 2);
	assert_true(find(&d, RP_DIFF_DROP, 0)->regression);
	assert_true(find(&d, RP_DIFF_DROP, 0)->cur_gbps < find(&d, RP_DIFF_DROP, 0)->old_gbps);
	done(rep, &d);
	n[0].gbps = 130;                          /* faster is never a drop */
	compare(o, 1, n, 1, 0, rep, &d);
	assert_int_equal(d.n, 0);
	done(rep, &d);
}

/* An endpoint's sum falls past the threshold though only one of its pairs does. */
static void test_endpoint_drop(void **state)
{
	struct rp_pair_result o[2], n[2];
	struct rp_diff_report rep[2];
	struct rp_diff d;
	const struct rp_diff_item *it;

	(void)state;
	mk(&o[0], ep("n1", "a"), ep("n1", "b"), 65536, RP_ST_OK, 10);
	mk(&o[1], ep("n1", "a"), ep("n1", "c"), 65536, RP_ST_OK, 10);
	mk(&n[0], ep("n1", "a"), ep("n1", "b"), 65536, RP_ST_OK, 7);      /* -30% */
	mk(&n[1], ep("n1", "a"), ep("n1", "c"), 65536, RP_ST_OK, 10.5);   /* +5% */
	compare(o, 2, n, 2, 0.1, rep, &d);
	assert_int_equal(d.count[RP_DIFF_DROP], 1);
	assert_int_equal(d.count[RP_DIFF_ENDPOINT_DROP], 2);              /* a (-12.5%) and b (-30%), not c */
	it = find(&d, RP_DIFF_ENDPOINT_DROP, 0);
	assert_string_equal(it->ep.device, "a");
	assert_int_equal(it->n_pairs, 2);
	assert_true(it->old_gbps == 20 && it->cur_gbps == 17.5);
	assert_string_equal(find(&d, RP_DIFF_ENDPOINT_DROP, 1)->ep.device, "b");
	done(rep, &d);
	compare(o, 2, n, 2, 0.2, rep, &d);       /* at 20% endpoint a (-12.5%) is within */
	assert_int_equal(d.count[RP_DIFF_ENDPOINT_DROP], 1);
	assert_string_equal(find(&d, RP_DIFF_ENDPOINT_DROP, 0)->ep.device, "b");
	done(rep, &d);
}

static void test_coverage(void **state)
{
	struct rp_pair_result o[4], n[4];
	struct rp_diff_report rep[2];
	struct rp_diff d;

	(void)state;
	mk(&o[0], ep("n1", "a"), ep("n1", "b"), 4096, RP_ST_OK, 10);          /* not in new: coverage lost */
	mk(&o[1], ep("n1", "b"), ep("n1", "a"), 4096, RP_ST_OK, 10);          /* interrupted in new */
	mk(&o[2], ep("n1", "a"), ep("n1", "a"), 4096, RP_ST_RETRY_EXCEEDED, 0); /* failed, not in new */
	mk(&o[3], ep("n1", "b"), ep("n1", "b"), 4096, RP_ST_OK, 10);          /* only this size in old */
	mk(&n[0], ep("n1", "b"), ep("n1", "a"), 4096, RP_ST_INTERRUPTED, 0);
	mk(&n[1], ep("n1", "b"), ep("n1", "b"), 65536, RP_ST_OK, 10);         /* another size: added */
	mk(&n[2], ep("n1", "b"), ep("n1", "c"), 4096, RP_ST_OK, 10);          /* a new endpoint, ok */
	mk(&n[3], ep("n1", "c"), ep("n1", "b"), 4096, RP_ST_SETUP, 0);        /* new and failing */
	compare(o, 4, n, 4, 0.1, rep, &d);
	assert_int_equal(d.matched, 0);
	assert_int_equal(d.count[RP_DIFF_NOT_MEASURED], 3);   /* a->b, b->a (interrupted), b->b 4K */
	assert_int_equal(d.count[RP_DIFF_GONE], 1);
	assert_int_equal(d.count[RP_DIFF_ADDED], 2);
	assert_int_equal(d.count[RP_DIFF_NEW_FAILURE], 1);
	assert_int_equal(d.count[RP_DIFF_ENDPOINT_NEW], 1);
	assert_int_equal(d.count[RP_DIFF_ENDPOINT_GONE], 0);
	assert_true(find(&d, RP_DIFF_NOT_MEASURED, 0)->regression);
	assert_false(find(&d, RP_DIFF_GONE, 0)->regression);
	assert_false(find(&d, RP_DIFF_ADDED, 0)->regression);
	assert_true(find(&d, RP_DIFF_NEW_FAILURE, 0)->regression);
	assert_null(find(&d, RP_DIFF_NEW_FAILURE, 0)->old);
	assert_string_equal(find(&d, RP_DIFF_ENDPOINT_NEW, 0)->ep.device, "c");
	assert_true(d.regression);
	done(rep, &d);
	/* the other way round: c is gone, and nothing that only failed before is a regression */
	compare(n + 2, 1, n + 2, 1, 0.1, rep, &d);
	done(rep, &d);
	compare(n + 1, 2, n + 1, 1, 0.1, rep, &d);
	assert_int_equal(d.count[RP_DIFF_ENDPOINT_GONE], 1);
	assert_int_equal(d.count[RP_DIFF_NOT_MEASURED], 1);
	done(rep, &d);
}

static void test_endpoint_changes(void **state)
{
	struct rp_pair_result o[1], n[1];
	struct rp_diff_report rep[2];
	struct rp_diff d;
	const struct rp_diff_item *it;

	(void)state;
	mk(&o[0], ep("n1", "a"), ep("n1", "b"), 4096, RP_ST_OK, 10);
	n[0] = o[0];
	n[0].src.link_gbps = 50;                     /* trained down: a regression */
	rp_strlcpy(n[0].dst.mem, "cuda:0", sizeof(n[0].dst.mem));   /* information */
	compare(o, 1, n, 1, 0.1, rep, &d);
	assert_int_equal(d.count[RP_DIFF_CHANGED], 2);
	it = find(&d, RP_DIFF_CHANGED, 0);
	assert_string_equal(it->ep.device, "a");
	assert_string_equal(it->field, "link_gbps");
	assert_string_equal(it->old_val, "100.0");
	assert_string_equal(it->cur_val, "50.0");
	assert_true(it->regression);
	it = find(&d, RP_DIFF_CHANGED, 1);
	assert_string_equal(it->ep.device, "b");
	assert_string_equal(it->field, "mem");
	assert_string_equal(it->old_val, "\"host\"");
	assert_string_equal(it->cur_val, "\"cuda:0\"");
	assert_false(it->regression);
	assert_true(d.regression);
	done(rep, &d);
	/* a higher MTU is information; a lower one a regression */
	n[0] = o[0];
	n[0].src.mtu = 4096;
	compare(o, 1, n, 1, 0.1, rep, &d);
	assert_int_equal(d.n, 1);
	assert_false(d.regression);
	done(rep, &d);
	compare(n, 1, o, 1, 0.1, rep, &d);
	assert_true(d.regression);
	assert_string_equal(d.items[0].field, "mtu");
	done(rep, &d);
}

/* A field the writer adds later (firmware) is compared like the known ones, absent on one side. */
static void test_endpoint_extra_field(void **state)
{
	struct rp_pair_result o[1];
	struct rp_diff_report rep[2];
	struct rp_diff d;
	char p0[512], p1[512];
	json_t *j;

	(void)state;
	mk(&o[0], ep("n1", "a"), ep("n1", "b"), 4096, RP_ST_OK, 10);
	write_doc(doc(o, 1), "x0.json", p0, sizeof(p0));
	j = doc(o, 1);
	json_object_set_new(json_object_get(json_array_get(json_object_get(j, "pairs"), 0), "src"), "fw_ver",
			    json_string("28.39.1002"));
	write_doc(j, "x1.json", p1, sizeof(p1));
	assert_int_equal(rp_diff_report_load(&rep[0], p0), 0);
	assert_int_equal(rp_diff_report_load(&rep[1], p1), 0);
	assert_int_equal(rp_diff_compare(&rep[0], &rep[1], 0.1, &d), 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.items[0].field, "fw_ver");
	assert_string_equal(d.items[0].old_val, "");
	assert_string_equal(d.items[0].cur_val, "\"28.39.1002\"");
	assert_false(d.regression);
	done(rep, &d);
}

/* The engine records no size for a pair that failed before measuring (msg_size 0): it is matched at
 * the run's config.msg_size, and a sweep's several such failures of one pair count once. */
static void test_failed_before_measuring(void **state)
{
	struct rp_pair_result o[1], n[3];
	char *argv[] = { "rdmaprobe", "loopback" };
	struct rp_engine_cfg cfg;
	struct rp_report_info info = { .command = "loopback", .version = "test", .argc = 2, .argv = argv, .cfg = &cfg };
	struct rp_diff_report rep[2];
	struct rp_diff d;
	char p0[512], p1[512];

	(void)state;
	rp_engine_cfg_default(&cfg);
	cfg.meas.msg_size = 4096;
	mk(&o[0], ep("n1", "a"), ep("n1", "b"), 4096, RP_ST_OK, 10);
	mk(&n[0], ep("n1", "a"), ep("n1", "b"), 0, RP_ST_TIMEOUT, 0);
	mk(&n[1], ep("n1", "a"), ep("n1", "b"), 0, RP_ST_RETRY_EXCEEDED, 0);   /* a sweep's next size */
	mk(&n[2], ep("n1", "b"), ep("n1", "a"), 0, RP_ST_TIMEOUT, 0);
	write_doc(rp_report_json(&info, o, 1), "s0.json", p0, sizeof(p0));
	write_doc(rp_report_json(&info, n, 3), "s1.json", p1, sizeof(p1));
	assert_int_equal(rp_diff_report_load(&rep[0], p0), 0);
	rp_log_set_sink(capture, NULL);
	last_log[0] = '\0';
	assert_int_equal(rp_diff_report_load(&rep[1], p1), 0);
	rp_log_set_sink(NULL, NULL);
	assert_non_null(strstr(last_log, "pairs[1] failed before its size was recorded, like pairs[0]"));
	assert_int_equal(rep[1].n, 2);
	assert_int_equal(rep[1].pairs[0].msg_size, 4096);
	assert_true(rep[1].pairs[0].size_inferred);
	assert_int_equal(rep[1].pairs[0].status, RP_ST_TIMEOUT);            /* the first stands */
	assert_int_equal(rp_diff_compare(&rep[0], &rep[1], 0.1, &d), 0);
	assert_int_equal(d.matched, 1);
	assert_int_equal(d.count[RP_DIFF_NEW_FAILURE], 2);                  /* a->b matched, b->a new */
	assert_int_equal(d.count[RP_DIFF_NOT_MEASURED], 0);
	assert_non_null(find(&d, RP_DIFF_NEW_FAILURE, 0)->old);
	done(rep, &d);
	/* without a config the size stays unknown (0) and the pair is not matched to a measured one */
	write_doc(doc(n, 1), "s2.json", p1, sizeof(p1));
	assert_int_equal(rp_diff_report_load(&rep[1], p1), 0);
	assert_int_equal(rep[1].pairs[0].msg_size, 0);
	rp_diff_report_fini(&rep[1]);
	/* an ok pair must say its size */
	o[0].msg_size = 0;
	write_doc(rp_report_json(&info, o, 1), "s3.json", p1, sizeof(p1));
	rp_log_set_sink(capture, NULL);
	assert_int_equal(rp_diff_report_load(&rep[1], p1), -EINVAL);
	rp_log_set_sink(NULL, NULL);
	assert_non_null(strstr(last_log, "pairs[0].msg_size: expected an integer 1 to"));
	rp_diff_report_fini(&rep[1]);
}

static void test_drop_parse(void **state)
{
	double f = -1;

	(void)state;
	assert_int_equal(rp_diff_drop_parse("10%", &f), 0);
	assert_true(f == 0.1);
	assert_int_equal(rp_diff_drop_parse("0.25", &f), 0);
	assert_true(f == 0.25);
	assert_int_equal(rp_diff_drop_parse("0", &f), 0);
	assert_true(f == 0);
	assert_int_equal(rp_diff_drop_parse("12.5%", &f), 0);
	assert_true(f == 0.125);
	f = 7;
	assert_int_equal(rp_diff_drop_parse("100%", &f), -EINVAL);
	assert_int_equal(rp_diff_drop_parse("1", &f), -EINVAL);
	assert_int_equal(rp_diff_drop_parse("-5%", &f), -EINVAL);
	assert_int_equal(rp_diff_drop_parse("10%%", &f), -EINVAL);
	assert_int_equal(rp_diff_drop_parse("ten", &f), -EINVAL);
	assert_int_equal(rp_diff_drop_parse("", &f), -EINVAL);
	assert_int_equal(rp_diff_drop_parse("%", &f), -EINVAL);
	assert_true(f == 7);
}

/* Walk "pairs[0].src.port" to the object holding the last key. */
static json_t *walk(json_t *root, const char *path, char *last, size_t len)
{
	char buf[128], *save = NULL, *seg, *next;
	json_t *cur = root;

	rp_strlcpy(buf, path, sizeof(buf));
	seg = strtok_r(buf, ".", &save);
	while ((next = strtok_r(NULL, ".", &save))) {
		char *br = strchr(seg, '[');

		if (br) {
			*br = '\0';
			cur = json_array_get(json_object_get(cur, seg), strtoul(br + 1, NULL, 10));
		} else {
			cur = json_object_get(cur, seg);
		}
		seg = next;
	}
	rp_strlcpy(last, seg, len);
	return cur;
}

struct bad_case {
	const char *path;      /* the field to change */
	const char *value;     /* its new JSON value; NULL deletes it */
	const char *message;   /* what the error must say after the file name */
};

static const struct bad_case bad_cases[] = {
	{ "schema", "2", "schema: 2 is not a report schema" },
	{ "schema", NULL, "schema: expected an integer" },
	{ "schema", "\"1\"", "schema: expected an integer 0 to 2147483647, got a string" },
	{ "tool", "\"perftest\"", "tool: \"perftest\", not an rdmaprobe report" },
	{ "command", NULL, "command: expected a non-empty string, got nothing (missing)" },
	{ "started", "7", "started: expected a string, got an integer 7" },
	{ "version", "null", "version: expected a string, got null" },
	{ "summary", "[]", "summary: expected an object, got an array" },
	{ "pairs", "{}", "pairs: expected an array, got an object" },
	{ "summary.pairs", "3", "summary: says 3 pairs, 1 ok, 1 failed" },
	{ "summary.ok", "2", "summary: says 2 pairs, 2 ok, 1 failed" },
	{ "summary.failed", "-1", "summary.failed: expected an integer 0 to" },
	{ "pairs[1]", "\"x\"", "pairs[1]: expected an object, got a string" },
	{ "pairs[0].src", NULL, "pairs[0].src: expected an object, got nothing (missing)" },
	{ "pairs[0].src.node", "\"\"", "pairs[0].src.node: expected a non-empty string, got a string" },
	{ "pairs[0].src.node", "\"" "n234567890123456789012345678901234567890123456789012345678901234\"",
	  "pairs[0].src.node: longer than 63 characters" },
	{ "pairs[0].dst.device", "1", "pairs[0].dst.device: expected a non-empty string, got an integer 1" },
	{ "pairs[0].src.port", "\"1\"", "pairs[0].src.port: expected an integer 0 to 255, got a string" },
	{ "pairs[0].src.port", "256", "pairs[0].src.port: expected an integer 0 to 255, got an integer 256" },
	{ "pairs[1].dst.gid_index", "-2", "pairs[1].dst.gid_index: expected an integer -1 to 65535" },
	{ "pairs[0].src.mtu", "1.5", "pairs[0].src.mtu: expected an integer 0 to 1048576, got a real number 1.5" },
	{ "pairs[0].src.link_gbps", "\"fast\"", "pairs[0].src.link_gbps: expected a number 0 to 1e+09" },
	{ "pairs[0].src.link_gbps", "-1", "pairs[0].src.link_gbps: expected a number 0 to 1e+09, got an integer -1" },
	{ "pairs[0].dst.mem", "5", "pairs[0].dst.mem: expected a string" },
	{ "pairs[0].dst.mem_reg", NULL, "pairs[0].dst.mem_reg: expected a string, got nothing" },
	{ "pairs[0].dst.pcie", "{}", "pairs[0].dst.pcie: expected a string, number, boolean or null, got an object" },
	{ "pairs[0].status", "\"bogus\"", "pairs[0].status: unknown status \"bogus\"" },
	{ "pairs[0].status", NULL, "pairs[0].status: expected a non-empty string" },
	{ "pairs[1].reason", "3", "pairs[1].reason: expected a string, got an integer 3" },
	{ "pairs[0].gbps", "-0.5", "pairs[0].gbps: expected a number 0 to 1e+09, got a real number -0.5" },
	{ "pairs[0].gbps_min", NULL, "pairs[0].gbps_min: expected a number" },
	{ "pairs[0].msg_size", "0", "pairs[0].msg_size: expected an integer 1 to" },
	{ "pairs[1].msg_size", "-1", "pairs[1].msg_size: expected an integer 0 to" },
	{ "pairs[0].bytes", "-1", "pairs[0].bytes: expected an integer 0 to" },
	{ "pairs[0].iters", "1.5", "pairs[0].iters: expected an integer 0 to" },
	{ "pairs[0].verified", "\"yes\"", "pairs[0].verified: expected true or false, got a string" },
	{ "pairs[0].bad_offset", "-2", "pairs[0].bad_offset: expected an integer -1 to" },
	{ "pairs[0].elapsed_s", "null", "pairs[0].elapsed_s: expected a number 0 to 1e+09, got null" },
	{ "pairs[0].latency", NULL, "pairs[0].latency: expected an object, got nothing" },
	{ "pairs[0].latency.measured", "1", "pairs[0].latency.measured: expected true or false, got an integer 1" },
	{ "pairs[0].latency.samples", "-1", "pairs[0].latency.samples: expected an integer 0 to" },
	{ "pairs[1].latency.p99_us", "\"x\"", "pairs[1].latency.p99_us: expected a number 0 to 1e+12, got a string" },
	{ "pairs[1].src.device", "\"a\"", "pairs[1]: the same pair as pairs[0] (n1/a:1 -> n1/b:1, msg_size 4096)" },
};

static void good_doc_pairs(struct rp_pair_result r[2])
{
	mk(&r[0], ep("n1", "a"), ep("n1", "b"), 4096, RP_ST_OK, 10);
	mk(&r[1], ep("n1", "c"), ep("n1", "b"), 4096, RP_ST_TIMEOUT, 0);
}

static void test_malformed_fields(void **state)
{
	struct rp_pair_result r[2];
	struct rp_diff_report rep;
	char path[512], key[64], want[600];

	(void)state;
	good_doc_pairs(r);
	rp_log_set_sink(capture, NULL);
	for (size_t i = 0; i < RP_ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		json_t *j = doc(r, 2), *holder = walk(j, c->path, key, sizeof(key));

		print_message("case %s = %s\n", c->path, c->value ? c->value : "(deleted)");
		assert_non_null(holder);
		if (strchr(key, '[')) {    /* an array element: "pairs[1]" */
			*strchr(key, '[') = '\0';
			assert_int_equal(json_array_set_new(json_object_get(holder, key), strtoul(c->path + strlen(key) + 1, NULL, 10),
							    json_loads(c->value, JSON_DECODE_ANY, NULL)), 0);
		} else if (c->value)
			assert_int_equal(json_object_set_new(holder, key, json_loads(c->value, JSON_DECODE_ANY, NULL)), 0);
		else
			assert_int_equal(json_object_del(holder, key), 0);
		write_doc(j, "bad.json", path, sizeof(path));
		last_log[0] = '\0';
		assert_int_equal(rp_diff_report_load(&rep, path), -EINVAL);
		snprintf(want, sizeof(want), "%s: %s", path, c->message);
		if (strncmp(last_log, want, strlen(want)) != 0)
			fail_msg("logged \"%s\", wanted it to start with \"%s\"", last_log, want);
		rp_diff_report_fini(&rep);
	}
	/* the unchanged document loads: the cases above fail for their change alone */
	write_doc(doc(r, 2), "good.json", path, sizeof(path));
	assert_int_equal(rp_diff_report_load(&rep, path), 0);
	assert_int_equal(rep.n, 2);
	assert_string_equal(rep.command, "loopback");
	rp_diff_report_fini(&rep);
	rp_log_set_sink(NULL, NULL);
}

static void write_raw(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	path_of(path, len, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* In matrix reports a direction is the key: the sweep's dead probe (4 KiB) and the same direction
 * failed at 64 KiB in a run without the sweep are one still-failing pair (before: a new failure and
 * a gone one, every dead direction counted twice). */
static void test_matrix_key_is_direction(void **state)
{
	struct rp_endpoint a = ep("h1", "mlx5_0"), b = ep("h2", "mlx5_0");
	struct rp_pair_result o[2], n[2];
	struct rp_diff_report rep[2];
	struct rp_diff d;
	char path[512];
	json_t *j;

	(void)state;
	mk(&o[0], a, b, 4096, RP_ST_TIMEOUT, 0);
	mk(&o[1], b, a, 65536, RP_ST_OK, 90);
	mk(&n[0], a, b, 65536, RP_ST_RETRY_EXCEEDED, 0);
	mk(&n[1], b, a, 65536, RP_ST_OK, 91);
	for (int s = 0; s < 2; s++) {
		j = doc(s ? n : o, 2);
		json_object_set_new(j, "command", json_string("matrix"));
		write_doc(j, s ? "mn.json" : "mo.json", path, sizeof(path));
		assert_int_equal(rp_diff_report_load(&rep[s], path), 0);
	}
	assert_int_equal(rp_diff_compare(&rep[0], &rep[1], 0.1, &d), 0);
	assert_int_equal(d.count[RP_DIFF_STILL_FAILING], 1);
	assert_int_equal(d.count[RP_DIFF_NEW_FAILURE], 0);
	assert_int_equal(d.count[RP_DIFF_GONE], 0);
	assert_int_equal(d.matched, 2);
	done(rep, &d);
}

/* A notable report's summary that does not add up says so, naming the notable listing. */
static void test_notable_summary(void **state)
{
	struct rp_endpoint a = ep("h1", "mlx5_0"), b = ep("h2", "mlx5_0");
	struct rp_pair_result r;
	struct rp_diff_report rep;
	char path[512];
	json_t *j;

	(void)state;
	mk(&r, a, b, 65536, RP_ST_TIMEOUT, 0);
	j = doc(&r, 1);
	json_object_set_new(j, "command", json_string("matrix"));
	json_object_set_new(j, "matrix", json_pack("{s:{s:s, s:i}, s:[{s:s, s:s, s:i}, {s:s, s:s, s:i}]}", "pairs_listed",
						   "which", "notable", "not_listed", 5, "endpoints", "node", "h1", "device",
						   "mlx5_0", "port", 1, "node", "h2", "device", "mlx5_0", "port", 1));
	write_doc(j, "nt.json", path, sizeof(path));
	rp_log_set_sink(capture, NULL);
	assert_int_equal(rp_diff_report_load(&rep, path), -EINVAL);
	assert_non_null(strstr(last_log, "this notable report (matrix.pairs_listed) lists 1, 0 ok, 1 failed, and counts 5 "
					 "plain passes it does not list"));
	rp_diff_report_fini(&rep);
	rp_log_set_sink(NULL, NULL);
}

static void test_malformed_files(void **state)
{
	struct rp_diff_report rep;
	char path[512];

	(void)state;
	rp_log_set_sink(capture, NULL);
	write_raw("trunc.json", "{\"schema\": 1, \"pairs\": [", path, sizeof(path));
	assert_int_equal(rp_diff_report_load(&rep, path), -EINVAL);
	assert_non_null(strstr(last_log, "trunc.json: line 1 column"));
	assert_non_null(strstr(last_log, "not valid JSON"));
	rp_diff_report_fini(&rep);
	write_raw("dup.json", "{\"schema\": 1, \"schema\": 1}", path, sizeof(path));
	assert_int_equal(rp_diff_report_load(&rep, path), -EINVAL);
	assert_non_null(strstr(last_log, "duplicate object key"));
	rp_diff_report_fini(&rep);
	write_raw("array.json", "[1, 2]", path, sizeof(path));
	assert_int_equal(rp_diff_report_load(&rep, path), -EINVAL);
	assert_non_null(strstr(last_log, "array.json: expected a JSON object at the top, got an array"));
	rp_diff_report_fini(&rep);
	path_of(path, sizeof(path), "absent.json");
	assert_int_equal(rp_diff_report_load(&rep, path), -ENOENT);
	assert_non_null(strstr(last_log, "absent.json"));
	rp_diff_report_fini(&rep);
	rp_log_set_sink(NULL, NULL);
}

static void test_json_output(void **state)
{
	struct rp_pair_result o[2], n[2];
	struct rp_diff_report rep[2];
	struct rp_diff d;
	json_t *j, *it;

	(void)state;
	good_doc_pairs(o);
	good_doc_pairs(n);
	n[0].gbps = 5;
	compare(o, 2, n, 2, 0.1, rep, &d);
	j = rp_diff_json(&d, &rep[0], &rep[1]);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(j, "regression")));
	assert_int_equal(json_integer_value(json_object_get(j, "matched")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "counts"), "drop")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "counts"), "still_failing")), 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "old"), "command")), "loopback");
	it = json_array_get(json_object_get(j, "items"), 0);
	assert_string_equal(json_string_value(json_object_get(it, "kind")), "drop");
	assert_string_equal(json_string_value(json_object_get(it, "src")), "n1/a:1");
	assert_string_equal(json_string_value(json_object_get(it, "dst")), "n1/b:1");
	assert_int_equal(json_integer_value(json_object_get(it, "msg_size")), 4096);
	assert_true(json_real_value(json_object_get(json_object_get(it, "new"), "gbps")) == 5);
	assert_true(json_real_value(json_object_get(it, "change")) == -0.5);
	json_decref(j);
	done(rep, &d);
}

/* The front end: text, --json, exit statuses, a malformed file and bad options. */
static void test_binary(void **state)
{
	struct rp_pair_result o[2], n[2];
	char p0[512], p1[512], bad[512], out[16384];
	json_error_t jerr;
	json_t *j;

	(void)state;
	good_doc_pairs(o);
	good_doc_pairs(n);
	write_doc(doc(o, 2), "b0.json", p0, sizeof(p0));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff '%s' '%s'", p0, p0), 0);
	assert_non_null(strstr(out, "no regression against OLD"));
	assert_non_null(strstr(out, "still failing (1):"));
	n[0].status = RP_ST_RETRY_EXCEEDED;
	write_doc(doc(n, 2), "b1.json", p1, sizeof(p1));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff '%s' '%s'", p0, p1), 1);
	assert_non_null(strstr(out, "new failures (1):\n  n1/a:1 -> n1/b:1 4096 B  was ok 10.000 Gb/s  now retry_exceeded"));
	assert_non_null(strstr(out, "REGRESSION: 1 finding(s) worse than OLD"));
	assert_int_equal(out[strlen(out) - 1], '\n');   /* the text ends its last line */
	/* --json FILE as every command takes it: "-" is stdout instead of the text, a file beside it */
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff --json - '%s' '%s'", p0, p1), 1);
	assert_int_equal(out[strlen(out) - 1], '\n');
	j = json_loads(out, 0, &jerr);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "counts"), "new_failure")), 1);
	json_decref(j);
	path_of(bad, sizeof(bad), "d.json");
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff --json '%s' '%s' '%s'", bad, p0, p1), 1);
	assert_non_null(strstr(out, "REGRESSION: 1 finding(s) worse than OLD\n"));
	j = json_load_file(bad, 0, &jerr);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "counts"), "new_failure")), 1);
	json_decref(j);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff --json /dev/full '%s' '%s' 2>&1", p0, p1), 2);
	assert_non_null(strstr(out, "--json /dev/full: cannot write the comparison there"));
	/* the other way round the pair recovered: no regression */
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff '%s' '%s'", p1, p0), 0);
	assert_non_null(strstr(out, "recovered (1):"));
	write_raw("b2.json", "{\"schema\": 1, \"tool\": \"rdmaprobe\"}", bad, sizeof(bad));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff '%s' '%s' 2>&1", p0, bad), 2);
	assert_non_null(strstr(out, "b2.json: command: expected a non-empty string, got nothing (missing)"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff --drop 150%% '%s' '%s' 2>&1", p0, p1), 2);
	assert_non_null(strstr(out, "--drop 150%"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff '%s' 2>&1", p0), 2);
	assert_non_null(strstr(out, "give two reports"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff --help"), 0);
	assert_non_null(strstr(out, "--drop X"));
}

/* A report is a file from elsewhere: an escape sequence in a pair's reason, a node name or a key
 * never reaches the terminal (it did: "\x1b[2J" cleared the screen of whoever ran diff). */
static void test_binary_control_characters(void **state)
{
	struct rp_pair_result o[2], n[2];
	char p0[512], p1[512], out[16384];
	json_t *j, *p;

	(void)state;
	good_doc_pairs(o);
	good_doc_pairs(n);
	write_doc(doc(o, 2), "c0.json", p0, sizeof(p0));
	n[0].status = RP_ST_RETRY_EXCEEDED;
	j = doc(n, 2);
	p = json_array_get(json_object_get(j, "pairs"), 0);
	json_object_set_new(p, "reason", json_string("peer said \x1b[2J\x1b]0;owned\x07 bye"));
	json_object_set_new(json_object_get(p, "src"), "mem\x1b[31m", json_string("x\xc2\x9b"));
	write_doc(j, "c1.json", p1, sizeof(p1));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "diff '%s' '%s' 2>&1", p0, p1), 1);
	assert_non_null(strstr(out, "peer said ?[2J?]0;owned? bye"));
	assert_null(strstr(out, "\xc2\x9b"));   /* C1 CSI */
	for (const char *c = out; *c; c++)
		assert_false(((unsigned char)*c < 0x20 && *c != '\n') || *c == 0x7f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_failures_and_recoveries),
		cmocka_unit_test(test_drop_threshold),
		cmocka_unit_test(test_endpoint_drop),
		cmocka_unit_test(test_coverage),
		cmocka_unit_test(test_endpoint_changes),
		cmocka_unit_test(test_endpoint_extra_field),
		cmocka_unit_test(test_failed_before_measuring),
		cmocka_unit_test(test_drop_parse),
		cmocka_unit_test(test_malformed_fields),
		cmocka_unit_test(test_malformed_files),
		cmocka_unit_test(test_matrix_key_is_direction),
		cmocka_unit_test(test_notable_summary),
		cmocka_unit_test(test_json_output),
		cmocka_unit_test(test_binary),
		cmocka_unit_test(test_binary_control_characters),
	};

	return cmocka_run_group_tests_name("diff", tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
