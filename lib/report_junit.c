/* report_junit.c: JUnit XML of a matrix; see report_junit.h. */
#include "report_junit.h"

#include <stdio.h>

/* "node/dev:port" escaped. */
static void ep_xml(struct rp_sb *sb, const struct rp_endpoint *ep)
{
	char port[16];

	rp_sb_xml(sb, ep->node);
	rp_sb_puts(sb, "/");
	rp_sb_xml(sb, ep->device);
	snprintf(port, sizeof(port), ":%d", ep->port);
	rp_sb_puts(sb, port);
}

static void pair_case(struct rp_sb *sb, const struct rp_pair_result *r)
{
	rp_sb_puts(sb, "    <testcase classname=\"");
	rp_sb_xml(sb, r->src.node);
	rp_sb_puts(sb, "\" name=\"");
	ep_xml(sb, &r->src);
	rp_sb_puts(sb, " -&gt; ");
	ep_xml(sb, &r->dst);
	rp_sb_printf(sb, "\" time=\"%.3f\"", r->elapsed_s);
	if (r->status == RP_ST_OK) {
		rp_sb_printf(sb, ">\n      <system-out>%.3f Gb/s, slowest interval %.3f Gb/s, %s</system-out>\n"
			     "    </testcase>\n", r->gbps, r->gbps_min, r->verified ? "verified" : "not verified");
		return;
	}
	rp_sb_puts(sb, ">\n      <failure type=\"");
	rp_sb_xml(sb, rp_status_code(r->status));
	rp_sb_puts(sb, "\" message=\"");
	rp_sb_xml(sb, rp_status_code(r->status));
	rp_sb_puts(sb, ": ");
	rp_sb_xml(sb, r->reason);
	rp_sb_printf(sb, "\">status %s, %.3f Gb/s: ", rp_status_code(r->status), r->gbps);
	rp_sb_xml(sb, r->reason);
	rp_sb_puts(sb, "</failure>\n    </testcase>\n");
}

/* One test case per node: fails when some of its adapters are to be drained. */
static void node_case(struct rp_sb *sb, const struct rp_matrix_view *mv, const struct rp_verdict_node *nd)
{
	const struct rp_endpoint *first = &mv->eps[nd->first_ep];
	char name[80];

	rp_sb_puts(sb, "    <testcase classname=\"nodes\" name=\"");
	rp_sb_xml(sb, first->node);
	rp_sb_puts(sb, "\" time=\"0\">\n");
	if (nd->n_drain) {
		rp_sb_printf(sb, "      <failure type=\"drain\" message=\"%zu of %zu adapters to drain\">drain:", nd->n_drain,
			     nd->n_eps);
		for (size_t e = nd->first_ep; e < nd->first_ep + nd->n_eps; e++) {
			if (!mv->verdict->eps[e].drain)
				continue;
			rp_sb_puts(sb, " ");
			rp_sb_xml(sb, rp_verdict_ep_name(&mv->eps[e], name, sizeof(name)));
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

void rp_report_junit_build(const struct rp_matrix_view *mv, struct rp_sb *sb)
{
	size_t failures = 0, tests = mv->n, node_fail = 0;

	for (size_t i = 0; i < mv->n; i++)
		failures += mv->res[i].status != RP_ST_OK;
	if (mv->verdict) {
		tests += mv->verdict->n_nodes;
		for (size_t k = 0; k < mv->verdict->n_nodes; k++)
			node_fail += mv->verdict->nodes[k].n_drain > 0;
	}
	rp_sb_puts(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	rp_sb_printf(sb, "<testsuites name=\"rdmaprobe matrix\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n",
		     tests, failures + node_fail, mv->elapsed_s);
	rp_sb_printf(sb, "  <testsuite name=\"rdmaprobe matrix\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"%.3f\">\n",
		     tests, failures + node_fail, mv->elapsed_s);
	rp_sb_puts(sb, "    <properties>\n      <property name=\"version\" value=\"");
	rp_sb_xml(sb, mv->version ? mv->version : "");
	rp_sb_puts(sb, "\"/>\n      <property name=\"command_line\" value=\"");
	rp_sb_xml(sb, mv->title ? mv->title : "");
	rp_sb_puts(sb, "\"/>\n      <property name=\"pattern\" value=\"");
	rp_sb_xml(sb, mv->pattern ? mv->pattern : "");
	rp_sb_printf(sb, "\"/>\n      <property name=\"rounds\" value=\"%zu/%zu\"/>\n    </properties>\n",
		     mv->rounds_done, mv->n_rounds);
	for (size_t i = 0; i < mv->n; i++)
		pair_case(sb, &mv->res[i]);
	for (size_t k = 0; mv->verdict && k < mv->verdict->n_nodes; k++)
		node_case(sb, mv, &mv->verdict->nodes[k]);
	rp_sb_puts(sb, "  </testsuite>\n</testsuites>\n");
}

int rp_report_junit_write(const struct rp_matrix_view *mv, const char *path)
{
	struct rp_sb sb;
	int rc;

	rp_sb_init(&sb);
	rp_report_junit_build(mv, &sb);
	rc = rp_sb_write_atomic(&sb, path);
	rp_sb_fini(&sb);
	return rc;
}
