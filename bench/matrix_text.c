/* matrix_text.c: the matrix's text for a person, sized by its findings rather than by the fabric:
 * the nodes with a finding (every node with --nodes-all), the failures grouped by suspect
 * (lib/verdict/verdict_groups.h), each group with its count and an example, and what the verdict drains. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"
#include "matrix/mx_results.h"
#include "verdict/verdict_groups.h"

#define MX_TEXT_NODES 12    /* nodes with a finding listed without --nodes-all */
#define MX_TEXT_GROUPS 5    /* groups of each kind of suspect listed */
#define MX_TEXT_DRAIN 6     /* adapters named on the verdict line */

/* A node has a finding when it has an adapter to drain, none left to use, or an end of a failure that
 * no drain explains (suspect[e]: endpoint e is an end of such a group); a failure with a drained peer
 * is the peer's finding, not this node's. */
static bool node_finding(const struct rp_verdict_node *nd, const bool *suspect)
{
	if (nd->n_drain || nd->n_unusable || !nd->recommended)
		return true;
	for (size_t e = nd->first_ep; e < nd->first_ep + nd->n_eps; e++)
		if (suspect && suspect[e])
			return true;
	return false;
}

/* "; unusable, not drained: a, b (why)": the reason once when every one of them has the same. */
static void unusable_list(const struct matrix_out *o, const struct rp_verdict *v, const struct rp_verdict_node *nd)
{
	const char *why = NULL;
	bool same = true;
	char name[RP_NAME_MAX + 16];

	if (!nd->n_unusable)
		return;
	for (size_t e = nd->first_ep; e < nd->first_ep + nd->n_eps; e++) {
		if (!v->eps[e].unusable)
			continue;
		same = same && (!why || strcmp(why, v->eps[e].why) == 0);
		why = v->eps[e].why;
	}
	printf("; unusable, not drained:");
	for (size_t e = nd->first_ep, k = 0; e < nd->first_ep + nd->n_eps; e++) {
		if (!v->eps[e].unusable)
			continue;
		printf("%s %s", k++ ? "," : "", rp_verdict_ep_name(&o->eps[e].ep, name, sizeof(name)));
		if (!same)
			printf(" (%s)", v->eps[e].why);
	}
	if (same)
		printf(" (%s)", why);
}

static void node_line(const struct matrix_out *o, const struct rp_verdict *v, const struct rp_verdict_node *nd)
{
	size_t pairs = 0, failed = 0;
	char name[RP_NAME_MAX + 16];

	for (size_t e = nd->first_ep; e < nd->first_ep + nd->n_eps; e++) {
		pairs += v->eps[e].pairs;
		failed += v->eps[e].failed;
	}
	printf("  %s: %zu endpoint%s; %zu measurements, %zu failed; drain:", o->eps[nd->first_ep].ep.node, nd->n_eps,
	       nd->n_eps == 1 ? "" : "s", pairs, failed);
	if (!nd->n_drain)
		printf(" none");
	for (size_t e = nd->first_ep; e < nd->first_ep + nd->n_eps; e++)
		if (v->eps[e].drain)
			printf(" %s (%s)", rp_verdict_ep_name(&o->eps[e].ep, name, sizeof(name)), v->eps[e].why);
	unusable_list(o, v, nd);
	printf("; NCCL_IB_HCA=%s\n", nd->recommended ? nd->recommended :
	       nd->n_unusable ? "(none: no usable adapter)" : "(none: no adapter passed)");
}

/* The nodes: those with a finding (a drain, a failure, no adapter left), at most MX_TEXT_NODES of
 * them unless every node is asked for; the others in one line when they agree. */
static void print_nodes(const struct matrix_out *o, const struct rp_verdict *v, const bool *suspect)
{
	size_t with = 0, shown = 0, quiet = 0;
	const char *same = NULL;
	bool agree = true;

	for (size_t k = 0; k < v->n_nodes; k++) {
		const struct rp_verdict_node *nd = &v->nodes[k];

		if (node_finding(nd, suspect)) {
			with++;
			continue;
		}
		quiet++;
		agree = agree && (!same || strcmp(same, nd->recommended) == 0);
		same = nd->recommended;
	}
	printf("NCCL_IB_HCA values below start with '=': NCCL's exact match of the adapter names that follow (not a typo)\n");
	if (o->nodes_all)
		printf("nodes:\n");
	else if (with)
		printf("nodes with a finding (%zu of %zu; --nodes-all lists every node):\n", with, v->n_nodes);
	/* the nodes that lose an adapter first (drained, unusable, none left), then those with a failure
	 * only: a path fault on every node must not push the lost adapters off the list */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < v->n_nodes; k++) {
			const struct rp_verdict_node *nd = &v->nodes[k];
			bool loses = nd->n_drain || nd->n_unusable || !nd->recommended;

			if (!o->nodes_all && (loses != (pass == 0) || !node_finding(nd, suspect) || shown++ >= MX_TEXT_NODES))
				continue;
			if (o->nodes_all && pass)
				break;
			node_line(o, v, nd);
		}
	}
	if (!o->nodes_all && with > MX_TEXT_NODES)
		printf("  ... and %zu more nodes with a finding (--nodes-all, or the JSON's \"nodes\")\n", with - MX_TEXT_NODES);
	if (!o->nodes_all && quiet)
		printf("%zu node%s without a finding%s%s%s\n", quiet, quiet == 1 ? "" : "s",
		       agree ? ": NCCL_IB_HCA=" : " (their NCCL_IB_HCA: --nodes-all, or the JSON)", agree ? same : "",
		       agree && quiet > 1 ? " on each" : "");
}

static void ep_text(const struct matrix_out *o, uint32_t e, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s:%d", o->eps[e].ep.node, o->eps[e].ep.device, o->eps[e].ep.port);
}

/* One group: its suspect, its count, its first failure in full and the others' peers. */
static void group_line(const struct matrix_out *o, const struct rp_result_seq *ps, const struct rp_fail_group *g)
{
	const struct mx_results *mr = o->results;
	char a[RP_NAME_MAX * 2 + 16], b[RP_NAME_MAX * 2 + 16], s[RP_NAME_MAX * 2 + 16], d[RP_NAME_MAX * 2 + 16];
	struct rp_pair_result tmp;

	ep_text(o, g->a, a, sizeof(a));
	ep_text(o, g->b, b, sizeof(b));
	if (g->kind != RP_SUSPECT_LINK)
		printf("    %s: %zu failed direction%s (%zu confirmed", a, g->n, g->n == 1 ? "" : "s", g->confirmed);
	else
		printf("    %s <-> %s: %zu failed direction%s (%zu confirmed", a, b, g->n, g->n == 1 ? "" : "s",
		       g->confirmed);
	if (g->by_endpoint)
		printf(", %zu of them by an endpoint's sample, not measured again", g->by_endpoint);
	printf(")");
	for (size_t k = 0; k < g->n_ex; k++) {
		const struct rp_pair_result *r = rp_result_seq_get(ps, g->ex[k], &tmp);

		ep_text(o, mr->pair_eps[2 * g->ex[k]], s, sizeof(s));
		ep_text(o, mr->pair_eps[2 * g->ex[k] + 1], d, sizeof(d));
		if (k == 0)
			printf(", e.g. %s -> %s: %s: %s", s, d, rp_status_code(r->status), r->reason);
		else
			printf("; %s -> %s: %s", s, d, rp_status_code(r->status));
	}
	printf("\n");
}

/* The failures, grouped by suspect: per kind, its count and its largest groups. */
static void print_failures(const struct matrix_out *o, const struct rp_verdict *v, const struct rp_result_seq *ps,
			   const struct rp_fail_groups *grouped)
{
	static const char *const heads[RP_SUSPECT_KIND_COUNT_] = {
		[RP_SUSPECT_ADAPTER] = "on an adapter the verdict drains",
		[RP_SUSPECT_UNUSABLE] = "on an adapter left out of NCCL_IB_HCA, not drained: a switch or route around it",
		[RP_SUSPECT_LINK] = "between adapters it keeps: the link or the path between them",
	};
	const struct rp_fail_groups fg = *grouped;

	if (!v->n_failed)
		return;
	if (!fg.g) {
		printf("failures: %zu (could not group them: see the reports)\n", v->n_failed);
		return;
	}
	printf("failures by suspect: %zu failed direction%s\n", fg.n_failed, fg.n_failed == 1 ? "" : "s");
	for (int k = 0; k < RP_SUSPECT_KIND_COUNT_; k++) {
		size_t n = fg.kind_groups[k];

		if (!n)
			continue;
		printf("  %zu %s suspect%s (%s): %zu failed direction%s%s\n", n,
		       rp_suspect_kind_name((enum rp_suspect_kind)k), n == 1 ? "" : "s", heads[k], fg.kind_failed[k],
		       fg.kind_failed[k] == 1 ? "" : "s", n > MX_TEXT_GROUPS ? "; the largest:" : "");
		for (size_t j = 0; j < n && j < MX_TEXT_GROUPS; j++)
			group_line(o, ps, &fg.g[fg.kind_first[k] + j]);
		if (n > MX_TEXT_GROUPS)
			printf("    ... and %zu more %s suspects (the reports list every failure)\n", n - MX_TEXT_GROUPS,
			       rp_suspect_kind_name((enum rp_suspect_kind)k));
	}
}

/* The flaky pairs: at most MX_TEXT_GROUPS of them, and their count. */
static void print_flaky(const struct rp_verdict *v, const struct rp_result_seq *ps)
{
	struct rp_pair_result tmp;
	size_t shown = 0;

	for (size_t i = 0; i < ps->n && shown < MX_TEXT_GROUPS; i++) {
		struct rp_result_peek pk;

		if (rp_result_seq_quiet(ps, i))
			continue;     /* a quiet pass is never flaky (result_seq.h) */
		rp_result_seq_peek(ps, i, &pk);
		if (pk.confirm != RP_CONFIRM_FLAKY)
			continue;
		const struct rp_pair_result *r = rp_result_seq_get(ps, i, &tmp);

		if (shown++ == 0)
			printf("flaky (failed, then passed when measured again; a warning, not a drain): %zu\n", v->n_flaky);
		printf("  %s/%s:%d -> %s/%s:%d: first %s, then ok at %.2f Gb/s\n", r->src.node, r->src.device, r->src.port,
		       r->dst.node, r->dst.device, r->dst.port, rp_status_code(r->attempts[0].status), r->gbps);
	}
	if (v->n_flaky > shown && shown)
		printf("  ... and %zu more (see the reports)\n", v->n_flaky - shown);
}

void matrix_cli_print_findings(const struct matrix_out *o, const struct rp_verdict *v, const struct rp_result_seq *ps)
{
	struct rp_fail_groups fg = { 0 };
	bool *suspect = calloc(v->n_eps + 1, sizeof(*suspect));

	if (v->n_failed && rp_fail_groups_build(v, o->results->pair_eps, ps, &fg) != 0)
		memset(&fg, 0, sizeof(fg));
	for (size_t j = 0; suspect && j < fg.kind_groups[RP_SUSPECT_LINK]; j++) {
		suspect[fg.g[fg.kind_first[RP_SUSPECT_LINK] + j].a] = true;
		suspect[fg.g[fg.kind_first[RP_SUSPECT_LINK] + j].b] = true;
	}
	print_nodes(o, v, suspect);
	print_failures(o, v, ps, &fg);
	print_flaky(v, ps);
	rp_fail_groups_fini(&fg);
	free(suspect);
}

/* "; drain: none" or "; drain N adapters on M nodes: a, b, ... (K more: ...)", for the verdict line. */
void matrix_cli_print_drain(const struct matrix_out *o, const struct rp_verdict *v)
{
	size_t n = 0, nodes = 0, shown = 0;
	char name[RP_NAME_MAX * 2 + 16];

	for (size_t k = 0; k < v->n_nodes; k++) {
		n += v->nodes[k].n_drain;
		nodes += v->nodes[k].n_drain > 0;
	}
	size_t u = v->n_unusable;

	if (!n) {
		printf("; drain: none");
		if (u)
			printf("; %zu adapter%s unusable, not drained (a switch or route around %s)", u, u == 1 ? "" : "s",
			       u == 1 ? "it" : "them");
		return;
	}
	printf("; drain %zu adapter%s on %zu node%s:", n, n == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
	for (size_t e = 0; e < v->n_eps && shown < MX_TEXT_DRAIN; e++) {
		if (!v->eps[e].drain)
			continue;
		ep_text(o, (uint32_t)e, name, sizeof(name));
		printf("%s %s", shown++ ? "," : "", name);
	}
	if (n > shown)
		printf(" and %zu more (the JSON's nodes[].drain)", n - shown);
	if (u)
		printf("; %zu more unusable, not drained (a switch or route around them)", u);
}
