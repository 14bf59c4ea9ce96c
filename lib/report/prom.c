/* prom.c: Prometheus text exposition of pair results and their endpoints; see prom.h. */
#include "report/prom.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/util.h"

#define GBPS_TO_BYTES_PS (1e9 / 8)   /* the reports' Gb/s in Prometheus's base unit, bytes per second */

/* One endpoint of the page: the first description seen of it, and what its pairs add up to. */
struct ep_stat {
	const struct rp_endpoint *ep;
	size_t order;                 /* where it was first seen: eps[] first, then the pairs */
	int drain;                    /* -1 no verdict given, 0 keep, 1 drain */
	int unusable;                 /* -1 not given, 0 usable, 1 left out of NCCL_IB_HCA without a drain */
	size_t pairs, failed;
	long long given_pairs, given_failed;   /* the caller's counts (rp_prom_run.ep_pairs); -1 none */
	double min_gbps;              /* slowest measured pair; < 0 none measured */
	unsigned warnings[RP_WARN_COUNT_];
};

struct page {
	struct rp_sb *sb;
	const struct rp_prom_run *run;
	const struct rp_pair_result *pairs;
	size_t *order;                /* pair indices sorted by key, duplicates left out */
	size_t n;
	struct ep_stat *eps;
	size_t n_eps;
};

/* s as its label value reads (label_value() below, before escaping): every byte that is not UTF-8 and
 * every control character but newline is '?'. Cut to len - 1 bytes. */
static void label_form(const char *s, char *out, size_t len)
{
	size_t k = 0;

	while (*s && k + 1 < len) {
		size_t n = rp_utf8_seq_len(s, strlen(s));

		if (n == 0 || ((unsigned char)*s < 0x20 && *s != '\n') || *s == 0x7f || k + n >= len) {
			out[k++] = '?';
			s += n ? n : 1;
			continue;
		}
		memcpy(out + k, s, n);
		k += n;
		s += n;
	}
	out[k] = '\0';
}

static bool plain_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* Names compared as their labels read: two names that differ only in bytes the page shows as '?'
 * are one series (they were two series with the same labels, which Prometheus rejects). */
static int name_cmp(const char *a, const char *b)
{
	char x[4 * RP_NAME_MAX], y[4 * RP_NAME_MAX];
	int c = strcmp(a, b);

	if (!c || (plain_ascii(a) && plain_ascii(b)))
		return c;
	label_form(a, x, sizeof(x));
	label_form(b, y, sizeof(y));
	return strcmp(x, y);
}

static int ep_cmp(const struct rp_endpoint *a, const struct rp_endpoint *b)
{
	int c = name_cmp(a->node, b->node);

	if (!c)
		c = name_cmp(a->device, b->device);
	return c ? c : (a->port > b->port) - (a->port < b->port);
}

static int ep_stat_cmp(const void *a, const void *b)
{
	const struct ep_stat *x = a, *y = b;
	int c = ep_cmp(x->ep, y->ep);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

static int ep_find_cmp(const void *key, const void *elem)
{
	return ep_cmp(key, ((const struct ep_stat *)elem)->ep);
}

/* qsort_r over indices into the pairs (ctx), by key, then by index so the first given sorts first. */
static int pair_cmp(const void *a, const void *b, void *ctx)
{
	const struct rp_pair_result *pairs = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct rp_pair_result *x = &pairs[i], *y = &pairs[j];
	int c = ep_cmp(&x->src, &y->src);

	if (!c)
		c = ep_cmp(&x->dst, &y->dst);
	if (!c)
		c = (x->msg_size > y->msg_size) - (x->msg_size < y->msg_size);
	return c ? c : (i > j) - (i < j);
}

static bool same_key(const struct rp_pair_result *x, const struct rp_pair_result *y)
{
	return ep_cmp(&x->src, &y->src) == 0 && ep_cmp(&x->dst, &y->dst) == 0 && x->msg_size == y->msg_size;
}

/* The pairs in key order, each key once (the first given wins). */
static int pairs_sort(struct page *pg, size_t n)
{
	size_t k = 0;

	pg->order = malloc((n + 1) * sizeof(*pg->order));
	if (!pg->order)
		return rp_error(-ENOMEM, "prom: out of memory for %zu pairs", n);
	for (size_t i = 0; i < n; i++)
		pg->order[i] = i;
	qsort_r(pg->order, n, sizeof(*pg->order), pair_cmp, (void *)pg->pairs);
	for (size_t i = 0; i < n; i++) {
		if (k && same_key(&pg->pairs[pg->order[k - 1]], &pg->pairs[pg->order[i]])) {
			rp_warn("prom: pair %zu repeats pair %zu (%s/%s:%d -> %s/%s:%d, %zu B): left out", pg->order[i],
				pg->order[k - 1], pg->pairs[pg->order[i]].src.node, pg->pairs[pg->order[i]].src.device,
				pg->pairs[pg->order[i]].src.port, pg->pairs[pg->order[i]].dst.node,
				pg->pairs[pg->order[i]].dst.device, pg->pairs[pg->order[i]].dst.port,
				pg->pairs[pg->order[i]].msg_size);
			continue;
		}
		pg->order[k++] = pg->order[i];
	}
	pg->n = k;
	return 0;
}

static bool measured(const struct rp_pair_result *r)
{
	return (r->status == RP_ST_OK || r->status == RP_ST_BELOW_THRESHOLD) && r->iters > 0 && isfinite(r->gbps);
}

static void ep_count(struct ep_stat *e, const struct rp_pair_result *r)
{
	e->pairs++;
	e->failed += r->status != RP_ST_OK;
	if (measured(r) && (e->min_gbps < 0 || r->gbps < e->min_gbps))
		e->min_gbps = r->gbps;
	for (int w = 0; w < RP_WARN_COUNT_; w++)
		e->warnings[w] += (r->warnings >> w) & 1u;
}

/* Every endpoint once: the caller's, then those the pairs name; then each pair counted on both ends. */
static int eps_build(struct page *pg)
{
	const struct rp_prom_run *run = pg->run;
	size_t total = run->n_eps + 2 * pg->n, k = 0;

	pg->eps = calloc(total + 1, sizeof(*pg->eps));
	if (!pg->eps)
		return rp_error(-ENOMEM, "prom: out of memory for %zu endpoints", total);
	for (size_t i = 0; i < run->n_eps; i++, k++)
		pg->eps[k] = (struct ep_stat){ .ep = &run->eps[i], .order = k, .drain = run->drain ? run->drain[i] : -1,
					       .unusable = run->unusable ? run->unusable[i] : -1,
					       .given_pairs = run->ep_pairs ? (long long)run->ep_pairs[i] : -1,
					       .given_failed = run->ep_failed ? (long long)run->ep_failed[i] : -1 };
	for (size_t i = 0; i < pg->n; i++) {
		pg->eps[k] = (struct ep_stat){ .ep = &pg->pairs[pg->order[i]].src, .order = k, .drain = -1,
					       .unusable = -1, .given_pairs = -1, .given_failed = -1 };
		k++;
		pg->eps[k] = (struct ep_stat){ .ep = &pg->pairs[pg->order[i]].dst, .order = k, .drain = -1,
					       .unusable = -1, .given_pairs = -1, .given_failed = -1 };
		k++;
	}
	if (total > 1)   /* qsort's array may be NULL when empty */
		qsort(pg->eps, total, sizeof(*pg->eps), ep_stat_cmp);
	for (size_t i = 0; i < total; i++) {
		if (pg->n_eps && ep_cmp(pg->eps[pg->n_eps - 1].ep, pg->eps[i].ep) == 0)
			continue;
		pg->eps[pg->n_eps] = pg->eps[i];
		pg->eps[pg->n_eps++].min_gbps = -1;
	}
	for (size_t i = 0; i < pg->n; i++) {
		const struct rp_pair_result *r = &pg->pairs[pg->order[i]];
		struct ep_stat *s = bsearch(&r->src, pg->eps, pg->n_eps, sizeof(*pg->eps), ep_find_cmp);
		struct ep_stat *d = bsearch(&r->dst, pg->eps, pg->n_eps, sizeof(*pg->eps), ep_find_cmp);

		ep_count(s, r);
		if (d != s)
			ep_count(d, r);
	}
	for (size_t i = 0; i < pg->n_eps; i++) {   /* the verdict's counts over every pair, listed or not */
		if (pg->eps[i].given_pairs >= 0)
			pg->eps[i].pairs = (size_t)pg->eps[i].given_pairs;
		if (pg->eps[i].given_failed >= 0)
			pg->eps[i].failed = (size_t)pg->eps[i].given_failed;
	}
	return 0;
}

/* A label value: \ " and newline escaped as the format says; bytes that are not UTF-8 and other
 * control characters become '?', so no name can end the value, the line or the page. */
static void label_value(struct rp_sb *sb, const char *s)
{
	while (*s) {
		size_t n = rp_utf8_seq_len(s, strlen(s));

		if (*s == '\\')
			rp_sb_puts(sb, "\\\\");
		else if (*s == '"')
			rp_sb_puts(sb, "\\\"");
		else if (*s == '\n')
			rp_sb_puts(sb, "\\n");
		else if (n == 0 || (unsigned char)*s < 0x20 || *s == 0x7f)
			rp_sb_puts(sb, "?");
		else
			rp_sb_printf(sb, "%.*s", (int)n, s);
		s += n ? n : 1;
	}
}

static void label(struct rp_sb *sb, const char *name, const char *value, bool first)
{
	rp_sb_printf(sb, "%s%s=\"", first ? "" : ",", name);
	label_value(sb, value);
	rp_sb_puts(sb, "\"");
}

static void family(struct rp_sb *sb, const char *name, const char *help)
{
	rp_sb_printf(sb, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* name{command="..." (the labels stay open for more) */
static void sample_open(const struct page *pg, const char *name)
{
	rp_sb_printf(pg->sb, "%s{", name);
	label(pg->sb, "command", pg->run->command, true);
}

static void sample_close(struct rp_sb *sb, double value)
{
	rp_sb_printf(sb, "} %.12g\n", value);
}

static void ep_labels(const struct page *pg, const struct rp_endpoint *e)
{
	char port[16];

	snprintf(port, sizeof(port), "%d", e->port);
	label(pg->sb, "node", e->node, false);
	label(pg->sb, "device", e->device, false);
	label(pg->sb, "port", port, false);
}

static void pair_labels(const struct page *pg, const struct rp_pair_result *r)
{
	char num[24];

	snprintf(num, sizeof(num), "%d", r->src.port);
	label(pg->sb, "src_node", r->src.node, false);
	label(pg->sb, "src_device", r->src.device, false);
	label(pg->sb, "src_port", num, false);
	snprintf(num, sizeof(num), "%d", r->dst.port);
	label(pg->sb, "dst_node", r->dst.node, false);
	label(pg->sb, "dst_device", r->dst.device, false);
	label(pg->sb, "dst_port", num, false);
	snprintf(num, sizeof(num), "%zu", r->msg_size);
	label(pg->sb, "msg_size", num, false);
}

static void run_families(const struct page *pg, size_t failed)
{
	const struct rp_prom_run *run = pg->run;
	struct rp_sb *sb = pg->sb;

	if (run->version) {
		family(sb, "rdmaprobe_run_info", "the rdmaprobe that wrote this file");
		sample_open(pg, "rdmaprobe_run_info");
		label(sb, "version", run->version, false);
		sample_close(sb, 1);
	}
	family(sb, "rdmaprobe_run_timestamp_seconds", "when the run was measured, seconds since the epoch");
	sample_open(pg, "rdmaprobe_run_timestamp_seconds");
	sample_close(sb, run->timestamp > 0 ? run->timestamp : (double)time(NULL));
	family(sb, "rdmaprobe_run_pass", "1 when the run passed: its verdict, else every pair passed; with a check, "
	       "the check healthy too");
	sample_open(pg, "rdmaprobe_run_pass");
	sample_close(sb, (run->pass ? *run->pass : failed == 0) && (!run->check || rp_check_status(run->check) == 0));
	family(sb, "rdmaprobe_run_pairs", "pairs measured (or attempted) by the run");
	sample_open(pg, "rdmaprobe_run_pairs");
	sample_close(sb, (double)(run->totals ? run->total_pairs : pg->n));
	family(sb, "rdmaprobe_run_failed_pairs", "pairs of the run that did not pass");
	sample_open(pg, "rdmaprobe_run_failed_pairs");
	sample_close(sb, (double)(run->totals ? run->total_failed : failed));
}

/* The node check's families: its status and its problems counted by (severity, source, code). */
static void check_families(const struct page *pg)
{
	const struct rp_check *c = pg->run->check;

	family(pg->sb, "rdmaprobe_check_status", "the node check: 0 healthy, 1 unhealthy, 3 could not check");
	sample_open(pg, "rdmaprobe_check_status");
	sample_close(pg->sb, (double)rp_check_status(c));
	family(pg->sb, "rdmaprobe_check_problems", "problems the node check found, by severity, source and code");
	for (size_t i = 0; i < c->n; i++) {
		const struct rp_check_problem *p = &c->items[i];
		size_t count = 0, first = i;

		for (size_t k = 0; k < c->n; k++) {
			const struct rp_check_problem *q = &c->items[k];

			if (q->sev == p->sev && q->src == p->src && strcmp(q->code, p->code) == 0) {
				first = k < first ? k : first;
				count++;
			}
		}
		if (first != i)
			continue;   /* counted at its first */
		sample_open(pg, "rdmaprobe_check_problems");
		label(pg->sb, "severity", p->sev == RP_CHECK_FAIL ? "fail" : "warn", false);
		label(pg->sb, "source", rp_check_src_str(p->src), false);
		label(pg->sb, "code", p->code, false);
		sample_close(pg->sb, (double)count);
	}
}

enum ep_metric { EP_PASS, EP_DRAIN, EP_UNUSABLE, EP_PAIRS, EP_FAILED, EP_RATE, EP_MTU, EP_MIN_BW, EP_METRIC_COUNT_ };

static const struct {
	const char *name, *help;
} ep_metrics[EP_METRIC_COUNT_] = {
	[EP_PASS] = { "rdmaprobe_endpoint_pass",
		      "1 when every pair the endpoint was in passed (a failure may be the peer's: see _drain)" },
	[EP_DRAIN] = { "rdmaprobe_endpoint_drain", "1 when the verdict says drain this endpoint" },
	[EP_UNUSABLE] = { "rdmaprobe_endpoint_unusable",
			  "1 when the verdict leaves the endpoint out of NCCL_IB_HCA without draining it: a shared "
			  "component (see rdmaprobe_finding_failed_directions) explains its failures" },
	[EP_PAIRS] = { "rdmaprobe_endpoint_pairs", "pairs the endpoint was in" },
	[EP_FAILED] = { "rdmaprobe_endpoint_failed_pairs", "pairs the endpoint was in that did not pass" },
	[EP_RATE] = { "rdmaprobe_endpoint_link_rate_bytes_per_second", "the port's link rate (nominal on soft devices)" },
	[EP_MTU] = { "rdmaprobe_endpoint_mtu_bytes", "the port's active MTU" },
	[EP_MIN_BW] = { "rdmaprobe_endpoint_min_bandwidth_bytes_per_second",
			"average bandwidth of the endpoint's slowest measured pair" },
};

/* The value of metric m for endpoint e; false when it has none (no verdict, unknown MTU, ...). */
static bool ep_value(const struct page *pg, const struct ep_stat *e, enum ep_metric m, double *v)
{
	if (m == EP_MIN_BW && pg->run->pairs_partial)
		return false;   /* its slowest pair may be a pass the page was not given */
	switch (m) {
	case EP_PASS: *v = e->failed == 0; return e->pairs > 0;
	case EP_DRAIN: *v = e->drain; return e->drain >= 0;
	case EP_UNUSABLE: *v = e->unusable; return e->unusable >= 0;
	case EP_PAIRS: *v = (double)e->pairs; return true;
	case EP_FAILED: *v = (double)e->failed; return true;
	case EP_RATE: *v = e->ep->link_gbps * GBPS_TO_BYTES_PS; return e->ep->link_gbps > 0 && isfinite(e->ep->link_gbps);
	case EP_MTU: *v = e->ep->mtu; return e->ep->mtu > 0;
	case EP_MIN_BW: *v = e->min_gbps * GBPS_TO_BYTES_PS; return e->min_gbps >= 0;
	case EP_METRIC_COUNT_: break;
	}
	return false;
}

static void ep_families(const struct page *pg)
{
	for (int m = 0; m < EP_METRIC_COUNT_; m++) {
		bool any = false;
		double v;

		for (size_t i = 0; i < pg->n_eps; i++) {
			if (!ep_value(pg, &pg->eps[i], (enum ep_metric)m, &v))
				continue;
			if (!any)
				family(pg->sb, ep_metrics[m].name, ep_metrics[m].help);
			any = true;
			sample_open(pg, ep_metrics[m].name);
			ep_labels(pg, pg->eps[i].ep);
			sample_close(pg->sb, v);
		}
	}
	bool any = false;

	for (size_t i = 0; i < pg->n_eps; i++)
		for (int w = 0; w < RP_WARN_COUNT_; w++) {
			if (!pg->eps[i].warnings[w])
				continue;   /* the series an endpoint has: its warnings, not every code */
			if (!any)
				family(pg->sb, "rdmaprobe_endpoint_warnings",
				       "pairs the endpoint was in that carry the warning code (absent: none)");
			any = true;
			sample_open(pg, "rdmaprobe_endpoint_warnings");
			ep_labels(pg, pg->eps[i].ep);
			label(pg->sb, "code", rp_pair_warning_code((enum rp_pair_warning)w), false);
			sample_close(pg->sb, pg->eps[i].warnings[w]);
		}
}

static void pair_sample(const struct page *pg, const char *name, const struct rp_pair_result *r, const char *lname,
			const char *lvalue, double v)
{
	sample_open(pg, name);
	pair_labels(pg, r);
	if (lname)
		label(pg->sb, lname, lvalue, false);
	sample_close(pg->sb, v);
}

static void pair_latency(const struct page *pg)
{
	static const char *const stats[] = { "min", "median", "p99", "max" };
	bool any = false;

	for (size_t i = 0; i < pg->n; i++) {
		const struct rp_pair_result *r = &pg->pairs[pg->order[i]];
		const double us[] = { r->lat.min_us, r->lat.median_us, r->lat.p99_us, r->lat.max_us };

		if (!r->lat.measured)
			continue;
		if (!any)
			family(pg->sb, "rdmaprobe_pair_latency_seconds", "one-way latency of the pair (latency mode)");
		any = true;
		for (size_t k = 0; k < 4; k++)
			if (isfinite(us[k]))
				pair_sample(pg, "rdmaprobe_pair_latency_seconds", r, "stat", stats[k], us[k] / 1e6);
	}
}

static void pair_families(const struct page *pg)
{
	static const char *const names[] = { "rdmaprobe_pair_bandwidth_bytes_per_second",
					     "rdmaprobe_pair_min_interval_bandwidth_bytes_per_second" };
	static const char *const helps[] = { "average bandwidth, first post to last completion",
					     "bandwidth of the pair's slowest interval" };

	family(pg->sb, "rdmaprobe_pair_pass", "1 when the pair passed");
	for (size_t i = 0; i < pg->n; i++)
		pair_sample(pg, "rdmaprobe_pair_pass", &pg->pairs[pg->order[i]], NULL, NULL,
			    pg->pairs[pg->order[i]].status == RP_ST_OK);
	family(pg->sb, "rdmaprobe_pair_status", "the pair's status code (always 1; the code is the label)");
	for (size_t i = 0; i < pg->n; i++)
		pair_sample(pg, "rdmaprobe_pair_status", &pg->pairs[pg->order[i]], "status",
			    rp_status_code(pg->pairs[pg->order[i]].status), 1);
	for (int b = 0; b < 2; b++) {
		bool any = false;

		for (size_t i = 0; i < pg->n; i++) {
			const struct rp_pair_result *r = &pg->pairs[pg->order[i]];
			double g = b ? r->gbps_min : r->gbps;

			if (!measured(r) || !isfinite(g))
				continue;
			if (!any)
				family(pg->sb, names[b], helps[b]);
			any = true;
			pair_sample(pg, names[b], r, NULL, NULL, g * GBPS_TO_BYTES_PS);
		}
	}
	pair_latency(pg);
	family(pg->sb, "rdmaprobe_pair_warning", "1 for each warning code the pair carries");
	for (size_t i = 0; i < pg->n; i++)
		for (int w = 0; w < RP_WARN_COUNT_; w++)
			if ((pg->pairs[pg->order[i]].warnings >> w) & 1u)
				pair_sample(pg, "rdmaprobe_pair_warning", &pg->pairs[pg->order[i]], "code",
					    rp_pair_warning_code((enum rp_pair_warning)w), 1);
}

/* One series per finding (a suspect of the verdict): its failed directions. */
static void finding_families(const struct page *pg)
{
	const struct rp_prom_run *run = pg->run;

	if (!run->n_findings)
		return;
	family(pg->sb, "rdmaprobe_finding_failed_directions",
	       "failed directions blamed on one suspect: an adapter (peer labels empty) or the link between two");
	for (size_t i = 0; i < run->n_findings; i++) {
		const struct rp_prom_finding *f = &run->findings[i];
		char port[16];

		sample_open(pg, "rdmaprobe_finding_failed_directions");
		label(pg->sb, "kind", f->kind, false);
		ep_labels(pg, f->a);
		label(pg->sb, "peer_node", f->b ? f->b->node : "", false);
		label(pg->sb, "peer_device", f->b ? f->b->device : "", false);
		snprintf(port, sizeof(port), "%d", f->b ? f->b->port : 0);
		label(pg->sb, "peer_port", f->b ? port : "", false);
		sample_close(pg->sb, (double)f->failed);
	}
}

int rp_prom_format(struct rp_sb *sb, const struct rp_prom_run *run, const struct rp_pair_result *pairs, size_t n)
{
	struct page pg = { .sb = sb, .run = run, .pairs = pairs };
	size_t failed = 0;
	int rc;

	if (!run->command || !run->command[0])
		return rp_error(-EINVAL, "prom: no command to label the metrics with");
	rc = pairs_sort(&pg, n);
	if (!rc)
		rc = eps_build(&pg);
	if (!rc) {
		for (size_t i = 0; i < pg.n; i++)
			failed += pairs[pg.order[i]].status != RP_ST_OK;
		run_families(&pg, failed);
		if (run->check)
			check_families(&pg);
		ep_families(&pg);
		finding_families(&pg);
		if (!run->no_pairs)
			pair_families(&pg);
	}
	free(pg.order);
	free(pg.eps);
	return rc;
}

int rp_prom_write(const char *path, const struct rp_prom_run *run, const struct rp_pair_result *pairs, size_t n)
{
	struct rp_sb sb;
	int rc;

	rp_sb_init(&sb);
	rc = rp_prom_format(&sb, run, pairs, n);
	if (!rc)
		rc = rp_sb_write_atomic(&sb, path);
	rp_sb_fini(&sb);
	return rc;
}
