/* cmd_diff.c: 'rdmaprobe diff OLD.json NEW.json': what got worse (and better) between two runs'
 * JSON reports, as text or JSON (lib/compare/diff.h has the rules).
 *
 * Exit status: 0 no regression, 1 a regression (a new failure, a pair no longer measured, a drop past
 * --drop, a lower link rate or MTU), 2 usage or a malformed report.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "compare/diff.h"
#include "ops_cli.h"
#include "opts.h"
#include "report/report.h"

static const char usage_text[] =
	"[--drop X] [--json FILE] [--all] OLD.json NEW.json\n\n"
	"Compares two reports of loopback, pair or matrix (--json FILE of those commands). --json FILE writes\n"
	"the comparison as JSON (- for stdout, instead of the text). Exit: 0 no regression, 1 regression, 2\n"
	"usage or a malformed report.";

static const char *const headings[RP_DIFF_KIND_COUNT_] = {
	[RP_DIFF_NEW_FAILURE] = "new failures",
	[RP_DIFF_NOT_MEASURED] = "measured in OLD, not in NEW",
	[RP_DIFF_DROP] = "bandwidth drops",
	[RP_DIFF_ENDPOINT_DROP] = "endpoint bandwidth drops (sum over its pairs ok in both)",
	[RP_DIFF_CHANGED] = "endpoints that changed",
	[RP_DIFF_RECOVERED] = "recovered",
	[RP_DIFF_STILL_FAILING] = "still failing",
	[RP_DIFF_ADDED] = "new pairs (ok)",
	[RP_DIFF_GONE] = "failed in OLD, not in NEW",
	[RP_DIFF_ENDPOINT_GONE] = "endpoints only in OLD",
	[RP_DIFF_ENDPOINT_NEW] = "endpoints only in NEW",
};

static void print_side(const char *label, const struct rp_diff_pair *p, bool unlisted)
{
	if (!p && unlisted)
		printf("  %s ok (a plain pass its notable report counts, not listed)", label);
	if (!p)
		return;
	if (p->status == RP_ST_OK)
		printf("  %s ok %.3f Gb/s", label, p->gbps);
	else
		printf("  %s %s%s%s%s", label, rp_status_code(p->status), p->reason[0] ? " (" : "", p->reason,
		       p->reason[0] ? ")" : "");
}

static void print_item(const struct rp_diff_item *it)
{
	char a[RP_NAME_MAX * 2 + 16], b[RP_NAME_MAX * 2 + 16];
	const struct rp_diff_pair *p = it->old ? it->old : it->cur;

	if (it->kind == RP_DIFF_CHANGED) {
		printf("  %s %s: %s -> %s%s\n", rp_diff_ep_name(&it->ep, a, sizeof(a)), it->field,
		       it->old_val[0] ? it->old_val : "(absent)", it->cur_val[0] ? it->cur_val : "(absent)",
		       it->regression ? "  REGRESSION" : "");
		return;
	}
	if (!p) {
		printf("  %s", rp_diff_ep_name(&it->ep, a, sizeof(a)));
		if (it->kind == RP_DIFF_ENDPOINT_DROP)
			printf(": %.3f -> %.3f Gb/s over %zu pair%s (%+.1f%%)", it->old_gbps, it->cur_gbps, it->n_pairs,
			       it->n_pairs == 1 ? "" : "s",
			       100 * (it->cur_gbps / it->old_gbps - 1));
		printf("\n");
		return;
	}
	printf("  %s -> %s %llu B", rp_diff_ep_name(&p->src, a, sizeof(a)), rp_diff_ep_name(&p->dst, b, sizeof(b)),
	       (unsigned long long)p->msg_size);
	if (it->kind == RP_DIFF_DROP) {
		printf(": %.3f -> %.3f Gb/s (%+.1f%%)\n", it->old_gbps, it->cur_gbps, 100 * (it->cur_gbps / it->old_gbps - 1));
		return;
	}
	print_side("was", it->old, it->old_unlisted);
	print_side(it->old || it->old_unlisted ? "now" : "NEW:", it->cur, it->cur_unlisted);
	printf("\n");
}

/* "OLD file (matrix, started, 83352 pairs listed + 8297064 plain passes counted, SIMULATED)" */
static void print_head(const char *which, const struct rp_diff_report *r)
{
	printf("%s%s %s (%s, %s, %zu pairs", rp_diff_report_simulated(r) ? "SIMULATED " : "", which, r->name, r->command,
	       r->started, r->n);
	if (r->notable)
		printf(" listed + %zu plain passes counted: a notable report", r->n_unlisted);
	printf("%s)\n", rp_diff_report_simulated(r) ? ", SIMULATED: the model's results, not hardware's" : "");
}

#define DIFF_TEXT_MAX 20   /* items of a kind listed without --all */
#define DIFF_TEXT_TOP 3    /* endpoints named as the most involved in what is not listed */

/* The endpoints most involved in the pair items of kind k (every one, listed or not): "A (n), B (m)". */
static void print_most_involved(const struct rp_diff *d, int k)
{
	struct rp_diff_ep *e = malloc(2 * d->count[k] * sizeof(*e) + 1);
	size_t n = 0, best[DIFF_TEXT_TOP] = { 0 }, at[DIFF_TEXT_TOP] = { 0 };
	char a[RP_NAME_MAX * 2 + 16];

	if (!e)
		return;
	for (size_t i = 0; i < d->n; i++) {
		const struct rp_diff_item *it = &d->items[i];
		const struct rp_diff_pair *p = it->old ? it->old : it->cur;

		if ((int)it->kind != k || !p)
			continue;
		e[n++] = p->src;
		if (rp_diff_ep_cmp(&p->src, &p->dst) != 0)
			e[n++] = p->dst;
	}
	if (n > 1)
		qsort(e, n, sizeof(*e), rp_diff_ep_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && rp_diff_ep_cmp(&e[i], &e[j]) == 0; j++)
			;
		for (int t = 0; t < DIFF_TEXT_TOP; t++)
			if (j - i > best[t]) {
				memmove(&best[t + 1], &best[t], (DIFF_TEXT_TOP - 1 - t) * sizeof(*best));
				memmove(&at[t + 1], &at[t], (DIFF_TEXT_TOP - 1 - t) * sizeof(*at));
				best[t] = j - i;
				at[t] = i;
				break;
			}
	}
	for (int t = 0; t < DIFF_TEXT_TOP && best[t]; t++)
		printf("%s%s (%zu)", t ? ", " : "; most involved: ", rp_diff_ep_name(&e[at[t]], a, sizeof(a)), best[t]);
	free(e);
}

static void print_text(const struct rp_diff *d, const struct rp_diff_report *old, const struct rp_diff_report *cur,
		       bool all)
{
	size_t regressions = 0;

	print_head("OLD", old);
	print_head("NEW", cur);
	printf("%zu pairs measured in both; drop threshold %g%%\n", d->matched, 100 * d->drop);
	if (old->notable || cur->notable)
		printf("note: a notable report lists its failed, flaky and warned pairs and counts its plain passes: a pair "
		       "it does not list is ok there, without a rate to compare\n");
	if (strcmp(old->command, cur->command) != 0)
		printf("note: comparing a %s report with a %s report\n", old->command, cur->command);
	for (int k = 0; k < RP_DIFF_KIND_COUNT_; k++) {
		if (!d->count[k])
			continue;
		size_t shown = 0;

		printf("\n%s (%zu):\n", headings[k], d->count[k]);
		for (size_t i = 0; i < d->n; i++)
			if ((int)d->items[i].kind == k && (all || shown++ < DIFF_TEXT_MAX))
				print_item(&d->items[i]);
		if (!all && d->count[k] > DIFF_TEXT_MAX) {
			printf("  ... and %zu more (--all lists every one; --json has them)", d->count[k] - DIFF_TEXT_MAX);
			print_most_involved(d, k);
			printf("\n");
		}
	}
	for (size_t i = 0; i < d->n; i++)
		regressions += d->items[i].regression;
	if (d->regression)
		printf("\nREGRESSION: %zu finding(s) worse than OLD\n", regressions);
	else
		printf("\nno regression against OLD\n");
}

/* --json FILE ("-": stdout), atomically; a failure said with its cause. */
static int write_json(const char *path, const struct rp_diff *d, const struct rp_diff_report *old,
		      const struct rp_diff_report *cur)
{
	json_t *j = rp_diff_json(d, old, cur);
	int rc;

	if (!j) {
		rp_cli_write_failed("diff", path, 0, "comparison");
		return -ENOMEM;
	}
	rc = rp_report_write_json(j, path);
	json_decref(j);
	if (rc)
		rp_cli_write_failed("diff", path, rc, NULL);
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	const char *drop_s = "10%", *pos[2] = { 0 }, *json = NULL;
	bool all = false;
	const struct rp_opt table[] = {
		{ "drop", 0, RP_OPT_STR, &drop_s, 0, 0, "X",
		  "a drop in Gb/s past X is a regression: 10% or 0.1 (default 10%)", NULL },
		{ "json", 'j', RP_OPT_OUTPUT, &json, 0, 0, "FILE", "write the comparison as JSON to FILE (- for stdout, instead of the text)", NULL },
		{ "all", 0, RP_OPT_FLAG, &all, 0, 0, NULL, "list every finding of a kind in the text (default: the first 20, then "
		  "the count and the endpoints most involved)", NULL },
		{ 0 },
	};
	struct rp_diff_report old = { 0 }, cur = { 0 };
	struct rp_diff d = { 0 };
	double drop;
	int rc, npos = 0, status = RP_EXIT_USAGE;

	rc = rp_opts_parse("diff", usage_text, table, argc, argv, pos, 2, &npos);
	if (rc)
		return rc > 0 ? RP_EXIT_OK : RP_EXIT_USAGE;
	if (npos != 2) {
		fprintf(stderr, "rdmaprobe diff: give two reports, OLD.json NEW.json%s\n",
			json ? " (--json takes the output FILE, - for stdout)" : "");
		return RP_EXIT_USAGE;
	}
	if (json && rp_report_path_check(json) != 0) {
		fprintf(stderr, "rdmaprobe diff: --json %s: cannot write the comparison there\n", json);
		return RP_EXIT_USAGE;
	}
	if (rp_diff_drop_parse(drop_s, &drop) != 0) {
		fprintf(stderr, "rdmaprobe diff: --drop %s: a percentage (10%%) or a fraction (0.1), at least 0, below 100%%\n",
			drop_s);
		return RP_EXIT_USAGE;
	}
	/* A file that cannot be read or is malformed was named by the loader, with its field. */
	if (rp_diff_report_load(&old, pos[0]) != 0 || rp_diff_report_load(&cur, pos[1]) != 0)
		goto out;
	if (rp_diff_compare(&old, &cur, drop, &d) != 0) {
		status = RP_EXIT_ENV;
		goto out;
	}
	status = d.regression ? RP_EXIT_FAIL : RP_EXIT_OK;
	if (!json || strcmp(json, "-") != 0)
		print_text(&d, &old, &cur, all);
	if (json && write_json(json, &d, &old, &cur) != 0)
		status = RP_EXIT_ENV;
out:
	rp_diff_fini(&d);
	rp_diff_report_fini(&old);
	rp_diff_report_fini(&cur);
	return status;
}
