/* report_junit.c: JUnit XML of a matrix; see report_junit.h. */
#include "report/report_junit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/log.h"
#include "verdict/result_seq.h"
#include "report/report.h"
#include "verdict/verdict_groups.h"

#define RP_JUNIT_CHUNK 65536   /* test cases move into the file this often */

/* "node/dev:port" escaped. */
static void ep_xml(struct rp_sb *sb, const struct rp_endpoint *ep)
{
	char port[16];

	rp_sb_xmln(sb, ep->node, sizeof(ep->node));
	rp_sb_puts(sb, "/");
	rp_sb_xmln(sb, ep->device, sizeof(ep->device));
	snprintf(port, sizeof(port), ":%d", ep->port);
	rp_sb_puts(sb, port);
}

/* A number for a text or an attribute: "n/a" when it is not finite (JUnit readers choke on "nan"). */
static void num_xml(struct rp_sb *sb, double v)
{
	if (isfinite(v))
		rp_sb_printf(sb, "%.3f", v);
	else
		rp_sb_puts(sb, "n/a");
}

/* --bidir: the reverse direction's own line (dst into src), and both directions' sum. */
static void reverse_out(struct rp_sb *sb, const struct rp_pair_result *r)
{
	const struct rp_pair_reverse *v = &r->reverse;
	char warn[128];

	if (!v->measured)
		return;
	rp_sb_puts(sb, "\nreverse ");
	rp_sb_xml(sb, r->dst.device);
	rp_sb_printf(sb, ":%d -> ", r->dst.port);
	rp_sb_xml(sb, r->src.device);
	rp_sb_printf(sb, ":%d: %s, ", r->src.port, rp_status_code(v->status));
	num_xml(sb, v->gbps);
	rp_sb_puts(sb, " Gb/s, slowest interval ");
	num_xml(sb, v->gbps_min);
	rp_sb_printf(sb, " Gb/s, %s", v->verified ? "verified" : "not verified");
	if (v->reason[0]) {
		rp_sb_puts(sb, ": ");
		rp_sb_xmln(sb, v->reason, sizeof(v->reason));
	}
	if (v->warnings)
		rp_sb_printf(sb, "\nreverse warnings: %s", rp_report_warnings(v->warnings, warn, sizeof(warn)));
	rp_sb_puts(sb, "\nboth directions: ");
	num_xml(sb, rp_pair_gbps_sum(r));
	rp_sb_puts(sb, " Gb/s");
}

/* What a passing pair says: its rates, and, when it failed before passing (flaky) or carries
 * warnings, that too, with every attempt. */
static void pass_out(struct rp_sb *sb, const struct rp_pair_result *r)
{
	char warn[128];

	rp_sb_puts(sb, ">\n      <system-out>");
	num_xml(sb, r->gbps);
	rp_sb_puts(sb, " Gb/s, slowest interval ");
	num_xml(sb, r->gbps_min);
	rp_sb_printf(sb, " Gb/s, %s", r->verified ? "verified" : "not verified");
	if (r->confirm == RP_CONFIRM_FLAKY)
		rp_sb_printf(sb, "\n%s (a warning, not a failure)", rp_report_confirm_text(r->confirm));
	if (r->warnings)
		rp_sb_printf(sb, "\nwarnings: %s", rp_report_warnings(r->warnings, warn, sizeof(warn)));
	reverse_out(sb, r);
	if (r->n_attempts > 1) {
		rp_sb_puts(sb, "\n");
		rp_report_attempts_xml(sb, r);
	}
	rp_sb_puts(sb, "</system-out>\n    </testcase>\n");
}

/* A failed pair: the message says whether the failure was confirmed on retest or not. */
static void fail_out(struct rp_sb *sb, const struct rp_pair_result *r)
{
	const char *code = rp_status_code(r->status), *c = rp_report_confirm_text(r->confirm);

	rp_sb_puts(sb, ">\n      <failure type=\"");
	rp_sb_xml(sb, code);
	rp_sb_puts(sb, "\" message=\"");
	rp_sb_xml(sb, code);
	rp_sb_puts(sb, ": ");
	rp_sb_xmln(sb, r->reason, sizeof(r->reason));
	if (c[0])
		rp_sb_printf(sb, " (%s)", c);
	rp_sb_printf(sb, "\">status %s, ", code);
	num_xml(sb, r->gbps);
	rp_sb_puts(sb, " Gb/s: ");
	rp_sb_xmln(sb, r->reason, sizeof(r->reason));
	if (c[0])
		rp_sb_printf(sb, "\n%s", c);
	if (r->secondary.status != RP_ST_OK) {
		rp_sb_printf(sb, "\nthe other side saw %s: ", rp_status_code(r->secondary.status));
		rp_sb_xmln(sb, r->secondary.reason, sizeof(r->secondary.reason));
	}
	reverse_out(sb, r);
	if (r->n_attempts > 0) {
		rp_sb_puts(sb, "\n");
		rp_report_attempts_xml(sb, r);
	}
	rp_sb_puts(sb, "</failure>\n    </testcase>\n");
}

static void pair_case(struct rp_sb *sb, const struct rp_pair_result *r)
{
	rp_sb_puts(sb, "    <testcase classname=\"");
	rp_sb_xmln(sb, r->src.node, sizeof(r->src.node));
	rp_sb_puts(sb, "\" name=\"");
	ep_xml(sb, &r->src);
	rp_sb_puts(sb, " -&gt; ");
	ep_xml(sb, &r->dst);
	rp_sb_printf(sb, "\" time=\"%.3f\"", isfinite(r->elapsed_s) && r->elapsed_s > 0 ? r->elapsed_s : 0.0);
	if (r->status == RP_ST_OK)
		pass_out(sb, r);
	else
		fail_out(sb, r);
}

/* The plain passes a report does not list one by one (lib/report/report_list.h): one passing case. */
static void unlisted_case(struct rp_sb *sb, const struct rp_matrix_view *mv)
{
	rp_sb_printf(sb, "    <testcase classname=\"pairs\" name=\"%zu more directions passed\" time=\"0\">\n"
		     "      <system-out>passed, not listed one by one here (--list-pairs notable): ", mv->n_unlisted);
	rp_sb_xml(sb, mv->unlisted_in ? mv->unlisted_in : "--jsonl FILE has every pair");
	rp_sb_puts(sb, "</system-out>\n    </testcase>\n");
}

/* One test case per node: fails when some of its adapters are to be drained. */
static void node_case(struct rp_sb *sb, const struct rp_matrix_view *mv, const struct rp_verdict_node *nd, bool whys)
{
	const struct rp_endpoint *first = &mv->eps[nd->first_ep];
	char name[80];

	rp_sb_puts(sb, "    <testcase classname=\"nodes\" name=\"");
	rp_sb_xmln(sb, first->node, sizeof(first->node));
	rp_sb_puts(sb, "\" time=\"0\">\n");
	if (nd->n_drain) {
		rp_sb_printf(sb, "      <failure type=\"drain\" message=\"%zu of %zu adapters to drain\">drain:", nd->n_drain,
			     nd->n_eps);
		for (size_t e = nd->first_ep; e < nd->first_ep + nd->n_eps; e++) {
			if (!mv->verdict->eps[e].drain)
				continue;
			rp_sb_puts(sb, " ");
			rp_sb_xml(sb, rp_verdict_ep_name(&mv->eps[e], name, sizeof(name)));
			if (!whys)
				continue;   /* by endpoint: its own case says why */
			rp_sb_puts(sb, " (");
			rp_sb_xml(sb, mv->verdict->eps[e].why);
			rp_sb_puts(sb, ")");
		}
		rp_sb_puts(sb, "</failure>\n");
	}
	rp_sb_puts(sb, "      <system-out>recommended NCCL_IB_HCA=");
	rp_sb_xml(sb, nd->recommended ? nd->recommended : "(none: no adapter passed)");
	rp_sb_puts(sb, "</system-out>\n    </testcase>\n");
}

/* An endpoint's case (by endpoint): its failed directions, its own and those blamed on a drained peer. */
struct ep_case {
	uint32_t own, peer;
	uint32_t n_ex;
	size_t ex[RP_JUNIT_EP_PAIRS]; /* the first of its own failures, listed pair indices */
};

static enum rp_status view_status(const struct rp_matrix_view *mv, size_t i)
{
	struct rp_result_peek pk;

	if (mv->pairs) {
		rp_result_seq_peek(mv->pairs, i, &pk);
		return pk.status;
	}
	return mv->res[i].status;
}

static void ep_own(struct ep_case *c, size_t i)
{
	if (c->n_ex < RP_JUNIT_EP_PAIRS)
		c->ex[c->n_ex++] = i;
	c->own++;
}

/* Every listed failure counted on its ends (see the header); NULL out of memory. */
static struct ep_case *ep_cases(const struct rp_matrix_view *mv)
{
	const struct rp_verdict *v = mv->verdict && mv->verdict->n_eps == mv->n_eps ? mv->verdict : NULL;
	struct ep_case *c = calloc(mv->n_eps + 1, sizeof(*c));

	for (size_t i = 0; c && i < mv->n; i++) {
		uint32_t s = mv->pair_eps[2 * i], d = mv->pair_eps[2 * i + 1], a = s, b = d;

		if (s >= mv->n_eps || d >= mv->n_eps || view_status(mv, i) == RP_ST_OK)
			continue;
		if (v && rp_fail_suspect(v, s, d, &a, &b) != RP_SUSPECT_LINK) {
			ep_own(&c[a], i);
			if (s != d)
				c[a == s ? d : s].peer++;
			continue;
		}
		ep_own(&c[s], i);
		if (d != s)
			ep_own(&c[d], i);
	}
	return c;
}

static bool ep_fails(const struct rp_matrix_view *mv, const struct ep_case *c, size_t e)
{
	return c[e].own || (mv->verdict && e < mv->verdict->n_eps && (mv->verdict->eps[e].drain || mv->verdict->eps[e].unusable));
}

/* One failed direction of an endpoint's case: "src -> dst: status", its reason when it is not the
 * previous example's (a dead adapter's thousands share one), and whether it was not confirmed. */
static void ep_example(struct rp_sb *sb, const struct rp_pair_result *r, char *prev, size_t prev_len)
{
	rp_sb_puts(sb, "\n");
	ep_xml(sb, &r->src);
	rp_sb_puts(sb, " -&gt; ");
	ep_xml(sb, &r->dst);
	rp_sb_printf(sb, ": %s", rp_status_code(r->status));
	if (strncmp(prev, r->reason, prev_len) != 0) {
		rp_sb_puts(sb, ": ");
		rp_sb_xmln(sb, r->reason, sizeof(r->reason));
		snprintf(prev, prev_len, "%s", r->reason);
	}
	if (!rp_confirm_held(r->confirm) && r->confirm != RP_CONFIRM_NONE)
		rp_sb_printf(sb, " (%s)", rp_report_confirm_text(r->confirm));
}

static void ep_case_out(struct rp_sb *sb, const struct rp_matrix_view *mv, const struct ep_case *c, size_t e)
{
	const struct rp_verdict_ep *ve = mv->verdict && e < mv->verdict->n_eps ? &mv->verdict->eps[e] : NULL;
	struct rp_pair_result tmp;
	char prev[sizeof(tmp.reason)] = "";

	rp_sb_puts(sb, "    <testcase classname=\"");
	rp_sb_xmln(sb, mv->eps[e].node, sizeof(mv->eps[e].node));
	rp_sb_puts(sb, "\" name=\"");
	ep_xml(sb, &mv->eps[e]);
	rp_sb_puts(sb, "\" time=\"0\">\n");
	if (ep_fails(mv, c, e)) {
		rp_sb_printf(sb, "      <failure type=\"%s\" message=\"",
			     ve && ve->drain ? "drain" : ve && ve->unusable ? "unusable" : "failed");
		if (ve && (ve->drain || ve->unusable)) {
			rp_sb_puts(sb, ve->drain ? "drain: " : "unusable, not drained: ");
			rp_sb_xml(sb, ve->why);
		} else {
			rp_sb_printf(sb, "%u failed direction%s that no drain explains (the link or the path)", c[e].own,
				     c[e].own == 1 ? "" : "s");
		}
		rp_sb_printf(sb, "\">%u failed direction%s of its own", c[e].own, c[e].own == 1 ? "" : "s");
		for (uint32_t k = 0; k < c[e].n_ex; k++)
			ep_example(sb, rp_matrix_view_pair(mv, c[e].ex[k], &tmp), prev, sizeof(prev));
		if (c[e].own > c[e].n_ex)
			rp_sb_printf(sb, "\n... and %u more", c[e].own - c[e].n_ex);
		rp_sb_puts(sb, "</failure>\n");
	}
	rp_sb_puts(sb, "      <system-out>");
	if (ve)
		rp_sb_printf(sb, "%u directions, %u failed", ve->pairs, ve->failed);
	else
		rp_sb_printf(sb, "%u failed directions", c[e].own + c[e].peer);
	if (c[e].peer)
		rp_sb_printf(sb, " (%u with a drained peer: its case)", c[e].peer);
	rp_sb_puts(sb, "</system-out>\n    </testcase>\n");
}

/* The document into sb; with af, moved into af after every chunk of test cases (streamed). 0 or
 * -ENOMEM (sb ran out of memory). */
static int junit_emit(const struct rp_matrix_view *mv, const struct rp_junit_opts *opts, struct rp_sb *sb,
		      struct rp_atomic_file *af)
{
	bool per_pair = !opts || opts->per_pair;
	const char *sim = opts ? opts->simulated : NULL;
	struct ep_case *c = per_pair ? NULL : ep_cases(mv);
	size_t failures = 0, tests = per_pair ? mv->n + (mv->n_unlisted > 0) : mv->n_eps, node_fail = 0;
	struct rp_pair_result tmp;

	if (!per_pair && !c)
		return -ENOMEM;
	for (size_t i = 0; per_pair && i < mv->n; i++)
		failures += rp_matrix_view_pair(mv, i, &tmp)->status != RP_ST_OK;
	for (size_t e = 0; !per_pair && e < mv->n_eps; e++)
		failures += ep_fails(mv, c, e);
	if (mv->verdict) {
		tests += mv->verdict->n_nodes;
		for (size_t k = 0; k < mv->verdict->n_nodes; k++)
			node_fail += mv->verdict->nodes[k].n_drain > 0;
	}
	rp_sb_puts(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	rp_sb_printf(sb, "<testsuites name=\"%srdmaprobe matrix\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n",
		     sim ? "SIMULATED " : "", tests, failures + node_fail, mv->elapsed_s);
	rp_sb_printf(sb, "  <testsuite name=\"%srdmaprobe matrix\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"%.3f\">\n",
		     sim ? "SIMULATED " : "", tests, failures + node_fail, mv->elapsed_s);
	rp_sb_puts(sb, "    <properties>\n      <property name=\"version\" value=\"");
	rp_sb_xml(sb, mv->version ? mv->version : "");
	rp_sb_puts(sb, "\"/>\n      <property name=\"command_line\" value=\"");
	rp_sb_xml(sb, mv->title ? mv->title : "");
	rp_sb_puts(sb, "\"/>\n      <property name=\"pattern\" value=\"");
	rp_sb_xml(sb, mv->pattern ? mv->pattern : "");
	rp_sb_printf(sb, "\"/>\n      <property name=\"rounds\" value=\"%zu/%zu\"/>\n", mv->rounds_done, mv->n_rounds);
	rp_sb_printf(sb, "      <property name=\"test_cases\" value=\"%s\"/>\n", per_pair ? "pair" : "endpoint");
	if (sim) {
		rp_sb_puts(sb, "      <property name=\"simulated\" value=\"true\"/>\n      <property name=\"fabric_model\" value=\"");
		rp_sb_xml(sb, sim);
		rp_sb_puts(sb, "\"/>\n");
	}
	rp_sb_puts(sb, "    </properties>\n");
	for (size_t i = 0; per_pair && i < mv->n; i++) {
		pair_case(sb, rp_matrix_view_pair(mv, i, &tmp));
		if (af && sb->len >= RP_JUNIT_CHUNK && rp_sb_drain(sb, af) != 0)
			return -ENOMEM;
	}
	for (size_t e = 0; !per_pair && e < mv->n_eps; e++) {
		ep_case_out(sb, mv, c, e);
		if (af && sb->len >= RP_JUNIT_CHUNK && rp_sb_drain(sb, af) != 0) {
			free(c);
			return -ENOMEM;
		}
	}
	free(c);
	if (per_pair && mv->n_unlisted)
		unlisted_case(sb, mv);
	for (size_t k = 0; mv->verdict && k < mv->verdict->n_nodes; k++)
		node_case(sb, mv, &mv->verdict->nodes[k], per_pair);
	rp_sb_puts(sb, "  </testsuite>\n</testsuites>\n");
	return af ? rp_sb_drain(sb, af) : rp_sb_failed(sb) ? -ENOMEM : 0;
}

void rp_report_junit_build_opts(const struct rp_matrix_view *mv, const struct rp_junit_opts *opts, struct rp_sb *sb)
{
	if (junit_emit(mv, opts, sb, NULL) != 0)
		sb->oom = true;                 /* an out-of-memory stays in sb */
}

void rp_report_junit_build(const struct rp_matrix_view *mv, struct rp_sb *sb)
{
	rp_report_junit_build_opts(mv, NULL, sb);
}

int rp_report_junit_write(const struct rp_matrix_view *mv, const char *path)
{
	return rp_report_junit_write_opts(mv, NULL, path);
}

int rp_report_junit_write_opts(const struct rp_matrix_view *mv, const struct rp_junit_opts *opts, const char *path)
{
	struct rp_atomic_file af;
	struct rp_sb sb;
	int rc = rp_atomic_file_open(&af, path);

	if (rc)
		return rc;
	rp_sb_init(&sb);
	rc = junit_emit(mv, opts, &sb, &af);
	rp_sb_fini(&sb);
	if (rc) {
		rp_atomic_file_abort(&af);
		return rp_error(rc, "write %s: out of memory while building it", path);
	}
	return rp_atomic_file_commit(&af);
}
