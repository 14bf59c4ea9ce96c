/* baseline.c: a run judged against an accepted earlier report (baseline.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/baseline.h"
#include "base/log.h"

int rp_baseline_load(struct rp_baseline *b, const char *path, double drop)
{
	memset(b, 0, sizeof(*b));
	b->drop = drop;
	return rp_diff_report_load(&b->old, path);
}

static void judged_fini(struct rp_baseline *b)
{
	if (!b->judged)
		return;
	rp_diff_fini(&b->d);
	rp_diff_report_fini(&b->cur);
	b->judged = false;
	b->n_regressions = 0;
}

void rp_baseline_fini(struct rp_baseline *b)
{
	judged_fini(b);
	rp_diff_report_fini(&b->old);
}

int rp_baseline_judge(struct rp_baseline *b, const struct rp_report_info *info, const struct rp_pair_result *pairs,
		      size_t n)
{
	return rp_baseline_judge_notable(b, info, pairs, n, NULL, 0, 0);
}

/* This run's endpoints as a notable report's (sorted for rp_diff_report_has_ep). */
static int cur_notable(struct rp_diff_report *r, const struct rp_endpoint *eps, size_t n_eps, size_t n_unlisted)
{
	r->eps = calloc(n_eps + 1, sizeof(*r->eps));
	if (!r->eps)
		return rp_error(-ENOMEM, "baseline: out of memory for %zu endpoints", n_eps);
	for (size_t i = 0; i < n_eps; i++) {
		snprintf(r->eps[i].node, sizeof(r->eps[i].node), "%s", eps[i].node);
		snprintf(r->eps[i].device, sizeof(r->eps[i].device), "%s", eps[i].device);
		r->eps[i].port = eps[i].port;
	}
	r->n_eps = n_eps;
	qsort(r->eps, n_eps, sizeof(*r->eps), rp_diff_ep_cmp);
	r->notable = true;
	r->n_unlisted = n_unlisted;
	return 0;
}

int rp_baseline_judge_notable(struct rp_baseline *b, const struct rp_report_info *info,
			      const struct rp_pair_result *pairs, size_t n, const struct rp_endpoint *eps, size_t n_eps,
			      size_t n_unlisted)
{
	json_t *root;
	int rc;

	judged_fini(b);
	root = rp_report_json(info, pairs, n);
	if (!root)
		return rp_error(-ENOMEM, "baseline: out of memory for this run's report");
	b->judged = true;   /* from here on cur and d are safe to finish */
	memset(&b->d, 0, sizeof(b->d));
	rc = rp_diff_report_from_json(&b->cur, root, "this run");
	if (!rc && n_eps)
		rc = cur_notable(&b->cur, eps, n_eps, n_unlisted);
	if (!rc)
		rc = rp_diff_compare(&b->old, &b->cur, b->drop, &b->d);
	for (size_t i = 0; !rc && i < b->d.n; i++)
		b->n_regressions += b->d.items[i].regression;
	return rc;
}

bool rp_baseline_regressed(const struct rp_baseline *b)
{
	return b->judged && b->d.regression;
}

json_t *rp_baseline_json(const struct rp_baseline *b)
{
	json_t *cmp, *j;

	if (!b->judged)
		return NULL;
	cmp = rp_diff_json(&b->d, &b->old, &b->cur);
	j = cmp ? json_pack("{s:s, s:f, s:b, s:I, s:o}", "file", b->old.name, "drop", b->drop, "regression",
			    b->d.regression, "regressions", (json_int_t)b->n_regressions, "comparison", cmp)
		: NULL;
	if (!j)
		rp_error(-ENOMEM, "baseline: out of memory for the JSON section");
	return j;
}

static void side_text(const char *label, const struct rp_diff_pair *p, char *buf, size_t len)
{
	size_t at = strlen(buf);

	if (!p || at >= len)
		return;
	if (p->status == RP_ST_OK)
		snprintf(buf + at, len - at, "; %s ok %.3f Gb/s", label, p->gbps);
	else
		snprintf(buf + at, len - at, "; %s %s%s%s%s", label, rp_status_code(p->status), p->reason[0] ? " (" : "",
			 p->reason, p->reason[0] ? ")" : "");
}

const char *rp_baseline_item_text(const struct rp_diff_item *it, char *buf, size_t len)
{
	char a[RP_NAME_MAX * 2 + 16], c[RP_NAME_MAX * 2 + 16];
	const struct rp_diff_pair *p = it->old ? it->old : it->cur;
	const char *code = rp_diff_kind_code(it->kind);

	if (it->kind == RP_DIFF_CHANGED) {
		snprintf(buf, len, "%s: %s %s %s -> %s", code, rp_diff_ep_name(&it->ep, a, sizeof(a)), it->field,
			 it->old_val[0] ? it->old_val : "(absent)", it->cur_val[0] ? it->cur_val : "(absent)");
	} else if (!p) {
		snprintf(buf, len, "%s: %s", code, rp_diff_ep_name(&it->ep, a, sizeof(a)));
		if (it->kind == RP_DIFF_ENDPOINT_DROP && it->old_gbps > 0)
			snprintf(buf + strlen(buf), len - strlen(buf), " %.3f -> %.3f Gb/s over %zu pair%s (%+.1f%%)",
				 it->old_gbps, it->cur_gbps, it->n_pairs, it->n_pairs == 1 ? "" : "s",
				 100 * (it->cur_gbps / it->old_gbps - 1));
	} else {
		snprintf(buf, len, "%s: %s -> %s %llu B", code, rp_diff_ep_name(&p->src, a, sizeof(a)),
			 rp_diff_ep_name(&p->dst, c, sizeof(c)), (unsigned long long)p->msg_size);
		if (it->kind == RP_DIFF_DROP && it->old_gbps > 0) {
			snprintf(buf + strlen(buf), len - strlen(buf), " %.3f -> %.3f Gb/s (%+.1f%%)", it->old_gbps,
				 it->cur_gbps, 100 * (it->cur_gbps / it->old_gbps - 1));
		} else {
			side_text("was", it->old, buf, len);
			side_text("now", it->cur, buf, len);
			if (!it->cur && it->kind == RP_DIFF_NOT_MEASURED)
				snprintf(buf + strlen(buf), len - strlen(buf), "; not measured now");
		}
	}
	return buf;
}
