/* matrix_out.c: the matrix front end's outputs: JSON (the engine's report plus "matrix", "verdict"
 * and "nodes"), CSV, HTML, JUnit and the text for a person. */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "verdict/drift.h"
#include "discover/fabtopo.h"
#include "matrix.h"
#include "matrix/mx_run.h"
#include "matrix/mx_retest.h"
#include "plan/mx_plan_json.h"
#include "nccl/nccl_rules.h"
#include "report/report_list.h"
#include "report/report.h"
#include "report/report_html.h"
#include "report/report_junit.h"
#include "base/sanitize.h"
#include "verdict_cli.h"
#include "verdict/verdict_groups.h"
#include "verdict/verdict_json.h"

/* Endpoint e of an mx_ep array, for the verdict's writers. */
static const struct rp_endpoint *mx_ep_of(const void *arg, size_t e)
{
	return &((const struct mx_ep *)arg)[e].ep;
}

#define MX_GRID_MAX 16   /* endpoints up to which stdout shows a grid */

/* jansson setters that remember the first key that failed (out of memory) instead of leaking. */
static void jset(json_t *obj, const char *key, json_t *val, const char **bad)
{
	if ((!val || json_object_set_new(obj, key, val) != 0) && !*bad)
		*bad = key;
}

/* A JSON string of s made safe first (lib/base/sanitize.h): a node name given with --node, a path or a
 * reason that is not UTF-8 is written with '?' for its bad bytes, never a reason to lose the report
 * (jansson refuses invalid UTF-8). NULL only when out of memory. */
static json_t *jsafe(const char *s)
{
	char *copy;
	json_t *j;

	if (!s || rp_str_is_clean(s))
		return json_string(s ? s : "");
	copy = strdup(s);
	if (!copy)
		return NULL;
	rp_str_sanitize(copy);
	j = json_string(copy);
	free(copy);
	return j;
}

/* "matrix": how the run was scheduled and how far it got; "verdict"; "nodes". NULL, or the first key
 * that could not be added (out of memory). */
static const char *json_extend(json_t *root, const struct mx_out *o, const struct rp_verdict *v, size_t n_listed)
{
	json_t *m = json_object(), *eps = json_array(), *vj = json_object(), *nodes = json_array();
	char name[RP_NAME_MAX + 16];
	const char *bad = !m || !eps || !vj || !nodes ? "matrix" : NULL;

	for (size_t e = 0; !bad && e < o->n_eps; e++) {
		const struct mx_ep *x = &o->eps[e];
		json_t *j = json_pack("{s:o, s:o, s:i, s:i, s:i, s:f}", "node", jsafe(x->ep.node), "device", jsafe(x->ep.device),
				      "port", x->ep.port, "rank", x->owner, "gid_index", x->ep.gid_index, "link_gbps",
				      x->ep.link_gbps);

		if (j && x->no_port[0])
			jset(j, "no_port", jsafe(x->no_port), &bad);
		if (j && e < v->n_eps) {      /* its directions, as the verdict counted them (listed or not) */
			jset(j, "pairs", json_integer((json_int_t)v->eps[e].pairs), &bad);
			jset(j, "failed", json_integer((json_int_t)v->eps[e].failed), &bad);
		}

		if (!j || json_array_append_new(eps, j) != 0)
			bad = bad ? bad : "endpoints";
	}
	jset(m, "pattern", jsafe(o->pattern), &bad);
	jset(m, "seed", json_integer((json_int_t)o->seed), &bad);
	jset(m, "rounds", json_integer((json_int_t)o->n_rounds), &bad);
	jset(m, "rounds_done", json_integer((json_int_t)o->rounds_done), &bad);
	/* a round a stop cut short is not done, but its finished directions are in the pairs */
	jset(m, "rounds_run", json_integer((json_int_t)(o->rounds_run > o->rounds_done ? o->rounds_run : o->rounds_done)),
	     &bad);
	jset(m, "complete", json_boolean(o->rounds_done == o->n_rounds && !o->stop_sig), &bad);
	jset(m, "retest", json_integer((json_int_t)o->max_retest), &bad);
	jset(m, "retest_rounds", json_integer((json_int_t)o->retest_rounds), &bad);
	jset(m, "sweep", o->sweep && o->sweep->width ?
		 json_pack("{s:I, s:I, s:I, s:I, s:I, s:o, s:f}", "width", (json_int_t)o->sweep->width, "rounds",
			   (json_int_t)o->sweep->rounds, "unreachable", (json_int_t)o->sweep->n_dead, "flaky",
			   (json_int_t)o->sweep->n_flaky, "cleared", (json_int_t)o->sweep->n_cleared, "screen_s",
			   o->sweep->screen_s > 0 ? json_real(o->sweep->screen_s) : json_null(), "elapsed_s", o->sweep_s)
				    : json_null(), &bad);
	jset(m, "sweep_off", o->sweep_off ? jsafe(o->sweep_off) : json_null(), &bad);
	if (o->sweep && o->sweep->width && o->run) {
		json_t *sw = json_object_get(m, "sweep");

		jset(sw, "hold", json_boolean(o->hold), &bad);
		/* endpoints found dead (mx_sweep.h): their directions endpoint_dead, not probed one by one */
		jset(sw, "dead_endpoints", json_integer((json_int_t)o->sweep->n_ep_dead), &bad);
		jset(sw, "endpoint_dead_directions", json_integer((json_int_t)o->sweep->n_ep_dirs), &bad);
		jset(sw, "confirm_rounds", json_integer((json_int_t)o->sweep->n_confirm), &bad);
		jset(sw, "hold_off", o->hold_off && o->hold_off[0] ? jsafe(o->hold_off) : json_null(), &bad);
		jset(sw, "late_rounds", json_integer((json_int_t)o->run->n_late), &bad);
		/* rank 0's own writer sides only: each rank prints its own counts on stderr */
		jset(sw, "rank0_writes_on_held", json_integer((json_int_t)o->run->holds.reused), &bad);
		jset(sw, "rank0_writes_fresh", json_integer((json_int_t)o->run->holds.fresh), &bad);
	}
	jset(m, "pairs_listed", json_pack("{s:s, s:I, s:I, s:I, s:o}", "which", o->list_notable ? "notable" : "all",
					   "listed", (json_int_t)n_listed, "total", (json_int_t)o->results->n,
					   "not_listed", (json_int_t)(o->results->n - n_listed), "every_pair_in",
					   o->jsonl ? jsafe(o->jsonl) : json_null()), &bad);
	jset(m, "interrupted", json_boolean(o->stop_sig != 0), &bad);
	jset(m, "signal", o->stop_sig ? json_integer(o->stop_sig) : json_null(), &bad);
	jset(m, "elapsed_s", json_real(o->elapsed_s), &bad);
	if (o->startup_s > 0)
		jset(m, "startup_s", json_real(o->startup_s), &bad);
	jset(m, "endpoints", eps, &bad);
	eps = NULL;
	jset(vj, "pass", json_boolean(v->pass && o->rounds_done == o->n_rounds && !o->stop_sig && !o->conc_sum.n_failed),
	     &bad);
	if (o->conc) {
		jset(vj, "concurrent_failed", json_integer((json_int_t)o->conc_sum.n_failed), &bad);
		jset(vj, "concurrent_drop", json_integer((json_int_t)o->conc_sum.n_drop), &bad);
	}
	jset(vj, "pairs", json_integer((json_int_t)v->n_pairs), &bad);
	jset(vj, "ok", json_integer((json_int_t)v->n_ok), &bad);
	jset(vj, "failed", json_integer((json_int_t)v->n_failed), &bad);
	jset(vj, "below_threshold", json_integer((json_int_t)v->n_below), &bad);
	jset(vj, "min_bw", json_real(o->vcfg->min_bw), &bad);
	jset(vj, "min_bw_unit", json_string(o->vcfg->min_bw_absolute ? "Gb/s" : "fraction of link rate"), &bad);
	jset(vj, "outlier", json_real(o->vcfg->outlier), &bad);
	jset(vj, "interval_drop", json_real(o->vcfg->interval_drop), &bad);
	jset(vj, "suspects", rp_verdict_suspects_json(v), &bad);
	jset(vj, "path_faults", rp_verdict_paths_json(v, mx_ep_of, o->eps, 1000), &bad);
	jset(vj, "localized", json_boolean(v->localized), &bad);
	jset(vj, "topology_unknown_endpoints", json_integer((json_int_t)v->topo_unknown), &bad);
	for (size_t k = 0; !bad && k < v->n_nodes; k++) {
		const struct rp_verdict_node *nd = &v->nodes[k];
		json_t *j = json_object(), *list = json_array(), *drain = json_array(), *why = json_object();
		json_t *unus = json_array(), *uwhy = json_object();

		bad = !j || !list || !drain || !why || !unus || !uwhy ? "nodes" : NULL;
		for (size_t e = nd->first_ep; !bad && e < nd->first_ep + nd->n_eps; e++) {
			rp_verdict_ep_name(&o->eps[e].ep, name, sizeof(name));
			rp_str_sanitize(name);   /* a key as well as a value: safe before it is either */
			if (json_array_append_new(list, jsafe(name)) != 0)
				bad = "endpoints";
			if (v->eps[e].drain && (json_array_append_new(drain, jsafe(name)) != 0 ||
						json_object_set_new(why, name, jsafe(v->eps[e].why)) != 0))
				bad = "drain_reasons";
			if (v->eps[e].unusable && (json_array_append_new(unus, jsafe(name)) != 0 ||
						   json_object_set_new(uwhy, name, jsafe(v->eps[e].why)) != 0))
				bad = "unusable_reasons";
		}
		jset(j, "node", jsafe(o->eps[nd->first_ep].ep.node), &bad);
		jset(j, "endpoints", list, &bad);
		jset(j, "drain", drain, &bad);
		jset(j, "drain_reasons", why, &bad);
		jset(j, "unusable", unus, &bad);
		jset(j, "unusable_reasons", uwhy, &bad);
		jset(j, "recommended_nccl_ib_hca", nd->recommended ? jsafe(nd->recommended) : json_null(), &bad);
		if (bad || json_array_append_new(nodes, j) != 0) {
			json_decref(j);
			bad = bad ? bad : "nodes";
		}
	}
	jset(root, "matrix", m, &bad);
	jset(root, "verdict", vj, &bad);
	jset(root, "nodes", nodes, &bad);
	if (o->coverage)   /* the final write's: what the run covered (mx_plan_json.h) */
		jset(root, "coverage", mx_coverage_json(o->coverage, o->pattern_requested, o->pattern, o->budget_s), &bad);
	json_decref(eps);
	return bad;
}

#define MX_OK_SAMPLE 256   /* plain passes a notable report keeps for --calibrate-from */

/* A notable report: "matrix.pairs_listed.ok_sample", up to MX_OK_SAMPLE of the plain passes it does not
 * list, spread over the run (every n / MX_OK_SAMPLE-th), whole: what --calibrate-from fits its set-up
 * and rate from (the listed pairs are the failed, flaky and warned ones). */
static int ok_sample_json(json_t *root, const struct rp_result_seq *judged)
{
	json_t *listed = json_object_get(json_object_get(root, "matrix"), "pairs_listed"), *a = json_array();
	size_t step = judged->n / MX_OK_SAMPLE ? judged->n / MX_OK_SAMPLE : 1, got = 0;
	struct rp_pair_result tmp;

	if (!listed || !a) {
		json_decref(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < judged->n && got < MX_OK_SAMPLE; i += step) {
		struct rp_result_peek pk;

		for (size_t j = i; j < judged->n && j < i + step; j++) {
			rp_result_seq_peek(judged, j, &pk);
			if (rp_result_notable(&pk) || pk.status != RP_ST_OK)
				continue;
			if (json_array_append_new(a, rp_report_pair_json(rp_result_seq_get(judged, j, &tmp))) != 0) {
				json_decref(a);
				return -ENOMEM;
			}
			got++;
			break;
		}
	}
	return json_object_set_new(listed, "ok_sample", a) ? -ENOMEM : 0;
}

/* --concurrent-rails: "concurrent_rails": {"max_drop", "pairs": [{"round", "solo_gbps", "ratio",
 * "pair"}]}, each pair measured with every rail busy, beside the same pair measured alone. NULL, or
 * the key that could not be added. */
static const char *conc_json(json_t *root, const struct rp_matrix_conc *mc, const struct rp_result_seq *solo)
{
	json_t *o = json_object(), *a = json_array();
	const char *bad = !o || !a ? "concurrent_rails" : NULL;
	struct rp_pair_result tmp;

	for (size_t k = 0; !bad && k < mc->n; k++) {
		const struct rp_pair_result *sr = mc->solo[k] >= 0 ? rp_result_seq_get(solo, (size_t)mc->solo[k], &tmp) : NULL;
		json_t *e = json_pack("{s:I, s:o, s:o, s:o}", "round", (json_int_t)mc->round[k], "solo_gbps",
				      sr && sr->status == RP_ST_OK ? json_real(sr->gbps) : json_null(), "ratio",
				      mc->ratio[k] > 0 ? json_real(mc->ratio[k]) : json_null(), "pair",
				      rp_report_pair_json(&mc->res[k]));

		if (!e || json_array_append_new(a, e) != 0)
			bad = "concurrent_rails";
	}
	jset(o, "max_drop", json_real(mc->max_drop), &bad);
	jset(o, "pairs", a, &bad);
	a = NULL;
	jset(root, "concurrent_rails", o, &bad);
	json_decref(a);
	return bad;
}

/* The releases whose rules selected each rank's ports: rank 0's ("nccl_version"), every rank's
 * ("nccl_versions"), and "warnings": [{"code": "nccl_version_mismatch", "message"}] when they differ,
 * followed by the `drift` warnings rank 0 found across the endpoints (lib/verdict/drift.h's JSON). NULL, or the
 * key that could not be added. */
static const char *nccl_json(json_t *root, const struct mx_out *o)
{
	json_t *list = json_array(), *warn = json_array();
	char msg[1024], v[16];
	const char *bad = !list || !warn ? "nccl_versions" : NULL;

	jset(root, "nccl_version", o->nccl_ver ? rp_nccl_version_json(o->nccl_ver) : json_null(), &bad);
	for (size_t i = 0; !bad && i < o->n_rank_ver; i++) {
		rp_nccl_version_format(o->rank_ver[i].version, v, sizeof(v));
		if (json_array_append_new(list, json_pack("{s:i, s:o, s:s}", "rank", o->rank_ver[i].rank, "node",
							  jsafe(o->rank_ver[i].node), "version", v)) != 0)
			bad = "nccl_versions";
	}
	if (!bad && rp_nccl_versions_differ(o->rank_ver, o->n_rank_ver, msg, sizeof(msg)) &&
	    json_array_append_new(warn, json_pack("{s:s, s:o}", "code", "nccl_version_mismatch", "message", jsafe(msg))) != 0)
		bad = "warnings";
	if (!bad && o->drift && o->drift->n_warnings) {
		json_t *dj = rp_drift_to_json(o->drift);

		if (!dj || json_array_extend(warn, dj) != 0)
			bad = "warnings";
		json_decref(dj);
	}
	jset(root, "nccl_versions", list, &bad);
	jset(root, "warnings", warn, &bad);
	return bad;
}

/* One file; a failure is named on stderr with its cause (what: a key of the report that could not be
 * built, else the negative errno rc), once per file kind and run, and always at the end. */
static void write_failed(struct mx_out *o, const char *path, bool final, int rc, const char *what)
{
	char part[96];

	if (!final && o->write_failed)
		return;
	if (what)
		snprintf(part, sizeof(part), "report's \"%s\"", what);
	rp_cli_write_failed("matrix", path, rc, what ? part : NULL);
	if (!final)
		fprintf(stderr, "rdmaprobe matrix: (%s: tried again after every round; the verdict is printed at the end)\n",
			path);
	o->write_failed = true;
}

/* --prom: every endpoint with the verdict's counts and drain, and the verdict's findings (its
 * suspects, lib/verdict/verdict_groups.h); no series per pair, so that the page is bounded by the endpoints and
 * the findings, not by the pairs (a 1,024 x 8 run has 8 million). */
static int prom_write(struct mx_out *o, const struct rp_matrix_view *mv, const struct rp_verdict *v, bool final)
{
	size_t n = o->n_eps ? o->n_eps : 1;
	bool *drain = calloc(n, sizeof(*drain)), *unusable = calloc(n, sizeof(*unusable));
	uint32_t *pairs = calloc(n, sizeof(*pairs)), *failed = calloc(n, sizeof(*failed));
	struct rp_prom_finding *fd = NULL;
	struct rp_fail_groups fg = { 0 };
	bool pass = v->pass && o->rounds_done == o->n_rounds && !o->stop_sig && !o->conc_sum.n_failed;
	struct rp_result_seq every = mx_results_pairs(o->results);
	int status = RP_EXIT_ENV;

	if (drain && unusable && pairs && failed && (!v->n_failed || rp_fail_groups_build(v, o->results->pair_eps, &every, &fg) == 0))
		fd = calloc(fg.n + 1, sizeof(*fd));
	if (!fd) {
		fprintf(stderr, "rdmaprobe matrix: out of memory for --prom\n");
		goto out;
	}
	for (size_t e = 0; e < o->n_eps && e < v->n_eps; e++) {
		drain[e] = v->eps[e].drain;
		unusable[e] = v->eps[e].unusable;
		pairs[e] = v->eps[e].pairs;
		failed[e] = v->eps[e].failed;
	}
	for (size_t k = 0; k < fg.n; k++)
		fd[k] = (struct rp_prom_finding){ .kind = rp_suspect_kind_name(fg.g[k].kind), .a = &mv->eps[fg.g[k].a],
						  .b = fg.g[k].kind != RP_SUSPECT_LINK ? NULL : &mv->eps[fg.g[k].b],
						  .failed = fg.g[k].n };
	status = rp_cli_ops_prom(o->ops, &(struct rp_prom_run){ .command = "matrix", .version = rp_version_string(),
				 .timestamp = o->started_wall, .eps = mv->eps, .n_eps = o->n_eps, .drain = drain,
				 .unusable = unusable, .pass = &pass, .totals = true, .total_pairs = v->n_pairs, .total_failed = v->n_failed, .ep_pairs = pairs, .ep_failed = failed, .pairs_partial = mv->n_unlisted > 0,
				 .no_pairs = true, .findings = fd, .n_findings = fg.n }, mv->res, mv->n, final);
out:
	rp_fail_groups_fini(&fg);
	free(fd);
	free(drain);
	free(unusable);
	free(pairs);
	free(failed);
	return status;
}

/* The HTML page; a simulated run's with its banner (above everything and in the title). */
static int html_write(const struct mx_out *o, const struct rp_matrix_view *mv)
{
	struct rp_html_opts hopts = { .banner = o->sim_banner };
	struct rp_sb sb;
	int rc;

	if (!o->simulated)
		return rp_report_html_write(mv, o->html);
	rp_sb_init(&sb);
	rp_report_html_build_opts(mv, &hopts, &sb);
	rc = rp_sb_write_atomic(&sb, o->html);
	rp_sb_fini(&sb);
	return rc;
}

/* --json: the engine's report plus the matrix's keys; 0 or 3 (named on stderr with its cause). */
static int json_write(struct mx_out *o, const struct rp_matrix_view *mv, const struct rp_result_seq *judged,
		      const struct rp_result_seq *listed, const struct rp_verdict *v, bool final)
{
	struct rp_report_info info = { .command = "matrix", .version = rp_version_string(), .argc = o->argc,
				       .argv = o->argv, .started = o->started_wall, .cfg = o->cfg };
	/* the pairs are streamed into the file, never all in one tree (a run keeps millions) */
	json_t *root = rp_report_json_head_of(&info, judged);   /* its summary counts every pair */
	json_t *bl = final && o->ops ? rp_cli_ops_baseline_json(o->ops) : NULL;
	const char *bad = root ? NULL : "command_line";
	int rc = 0;

	if (bl && root && json_object_set_new(root, "baseline", bl) != 0)   /* takes bl either way */
		bad = "baseline";
	else if (!root)
		json_decref(bl);
	if (!bad && o->simulated && (json_object_set_new(root, "simulated", json_true()) != 0 ||
				     json_object_set_new(root, "fabric_model", jsafe(o->simulated)) != 0))
		bad = "fabric_model";
	if (!bad && o->simulated && o->json_more && o->json_more(root, o->json_more_arg) != 0)
		bad = "simulation";
	if (!bad)
		bad = json_extend(root, o, v, listed->n);
	if (!bad)
		bad = nccl_json(root, o);
	if (!bad && o->list_notable && final && ok_sample_json(root, judged) != 0)
		bad = "matrix.pairs_listed.ok_sample";
	if (!bad && mv->conc)
		bad = conc_json(root, mv->conc, judged);
	if (!bad)
		rc = rp_report_write_json_of(root, listed, o->json);
	json_decref(root);
	if (!bad && !rc)
		return 0;
	write_failed(o, o->json, final, rc, bad);
	return RP_EXIT_ENV;
}

/* judged: every pair (the concurrent pairs' solo results index it); listed: the pairs the files list. */
static int files_write(struct mx_out *o, const struct rp_matrix_view *mv, const struct rp_result_seq *judged,
		       const struct rp_result_seq *listed, const struct rp_verdict *v, bool final)
{
	int status = o->json ? json_write(o, mv, judged, listed, v, final) : 0;
	int rc;

	if (o->csv && (rc = rp_report_write_csv_sim(listed, o->simulated, o->csv)) != 0) {
		write_failed(o, o->csv, final, rc, NULL);
		status = RP_EXIT_ENV;
	}
	if (o->html && (rc = html_write(o, mv)) != 0) {
		write_failed(o, o->html, final, rc, NULL);
		status = RP_EXIT_ENV;
	}
	if (o->junit && (rc = rp_report_junit_write_opts(mv, &(struct rp_junit_opts){ .per_pair = o->junit_pairs,
					.simulated = o->simulated }, o->junit)) != 0) {
		write_failed(o, o->junit, final, rc, NULL);
		status = RP_EXIT_ENV;
	}
	if (o->ops && prom_write(o, mv, v, final) != 0)
		status = RP_EXIT_ENV;
	return status;
}

int matrix_cli_outputs_check(const struct rp_cli_engine *e, const char *html, const char *junit)
{
	const char *opt[2] = { "html", "junit" }, *path[2] = { html, junit };
	int rc = rp_cli_check_outputs(e, "matrix");

	for (int i = 0; !rc && i < 2; i++) {
		if (path[i] && rp_report_path_check(path[i]) != 0) {
			fprintf(stderr, "rdmaprobe matrix: --%s %s: cannot write the report there; nothing was measured\n",
				opt[i], path[i]);
			rc = RP_EXIT_USAGE;
		}
	}
	return rc;
}

/* The concurrent pairs judged against the solo results as the verdict judged them. */
struct mx_conc_judged {
	struct rp_matrix_conc view;
	struct rp_pair_result *res;
	double *ratio;
};

static int conc_judge(struct mx_out *o, const struct rp_result_seq *judged, struct mx_conc_judged *cj)
{
	size_t m = o->conc ? o->conc->n : 0;

	memset(cj, 0, sizeof(*cj));
	memset(&o->conc_sum, 0, sizeof(o->conc_sum));
	if (!o->conc)
		return 0;
	cj->res = malloc((m ? m : 1) * sizeof(*cj->res));
	cj->ratio = malloc((m ? m : 1) * sizeof(*cj->ratio));
	if (!cj->res || !cj->ratio) {
		free(cj->res);
		free(cj->ratio);
		return -ENOMEM;
	}
	mx_conc_judge(o->conc, judged, o->conc_drop, cj->res, cj->ratio, &o->conc_sum);
	cj->view = (struct rp_matrix_conc){ .res = cj->res, .solo = o->conc->solo, .ratio = cj->ratio,
					    .round = o->conc->round, .n = m, .max_drop = o->conc_drop };
	return 0;
}

static void conc_judged_fini(struct mx_conc_judged *cj)
{
	free(cj->res);
	free(cj->ratio);
}

/* --prom and --baseline read the listed pairs as one array: they get a whole copy for their write
 * (O(listed pairs) while it lasts; the JSON, CSV, HTML, JUnit and the text read one pair at a time).
 * NULL when neither is asked for, or out of memory (*oom). */
static struct rp_pair_result *whole_copy(const struct mx_out *o, const struct rp_result_seq *ps, bool final, bool *oom)
{
	bool want = o->ops && (o->ops->prom || (final && o->ops->baseline));
	struct rp_pair_result *all = want ? malloc((ps->n ? ps->n : 1) * sizeof(*all)) : NULL;

	*oom = want && !all;
	for (size_t i = 0; all && i < ps->n; i++) {
		struct rp_pair_result *r = rp_result_seq_get(ps, i, &all[i]);

		if (r != &all[i])
			all[i] = *r;
	}
	return all;
}

int matrix_cli_write_files(struct mx_out *o, struct rp_verdict *v_out, bool *judged_p)
{
	struct mx_results *mr = o->results;
	struct rp_result_seq judged = mx_results_pairs(mr);
	struct rp_endpoint *eps = malloc((o->n_eps ? o->n_eps : 1) * sizeof(*eps));
	struct rp_pair_result *all = NULL;
	struct rp_verdict v;
	bool oom = false;
	int status = 0;

	memset(&v, 0, sizeof(v));
	if (judged_p)
		*judged_p = false;
	if (!eps) {
		fprintf(stderr, "rdmaprobe matrix: out of memory for the reports\n");
		return RP_EXIT_ENV;
	}
	for (size_t e = 0; e < o->n_eps; e++)
		eps[e] = o->eps[e].ep;
	/* judged in place: the verdict judges afresh every time (verdict.h), so rank 0 never holds a
	 * second copy of every result */
	if (mx_judge(o->vcfg, eps, o->n_eps, mr->pair_eps, &judged, o->max_retest, &v) != 0) {
		fprintf(stderr, "rdmaprobe matrix: could not compute the verdict (see above)\n");
		rp_verdict_fini(&v);
		free(eps);
		return RP_EXIT_ENV;
	}
	/* --list-pairs notable: the files list what the verdict left notable, and count the rest */
	struct rp_report_listed lst = { 0 };
	struct rp_result_seq listed = judged;

	if (o->list_notable) {
		oom = rp_report_list_build(&lst, &judged, mr->pair_eps) != 0;
		listed = rp_report_listed_view(&lst);
	}
	all = oom ? NULL : whole_copy(o, &listed, v_out != NULL, &oom);
	struct rp_matrix_view mv = {
		.title = o->cmd_line, .version = rp_version_string(), .pattern = o->pattern, .eps = eps,
		.n_eps = o->n_eps, .pair_eps = o->list_notable ? lst.pair_eps : mr->pair_eps, .res = all,
		.pairs = &listed, .n = listed.n, .verdict = &v, .rounds_done = o->rounds_done, .n_rounds = o->n_rounds,
		.elapsed_s = o->elapsed_s, .drift = o->drift, .n_unlisted = mr->n - listed.n,
		.unlisted_in = o->jsonl, .every = &judged, .every_pair_eps = mr->pair_eps,
	};
	struct mx_conc_judged cj;

	if (oom || conc_judge(o, &judged, &cj) != 0) {
		fprintf(stderr, "rdmaprobe matrix: out of memory for the reports\n");
		rp_verdict_fini(&v);
		rp_report_listed_fini(&lst);
		free(all);
		free(eps);
		return RP_EXIT_ENV;
	}
	mv.conc = o->conc ? &cj.view : NULL;
	/* the HTML orders the nodes by leaf when the topology places them (nothing lost when it cannot) */
	struct rp_fabtopo_map tmap;
	bool tmapped = o->vcfg && o->vcfg->topology && rp_fabtopo_map_build(o->vcfg->topology, eps, o->n_eps, &tmap) == 0;

	if (tmapped) {
		mv.leaf = tmap.leaf;
		mv.leaf_names = tmap.leaf_names;
	}

	if (v_out && all && o->ops &&
	    rp_cli_ops_baseline_judge_notable(o->ops, "matrix", o->cfg, all, listed.n, eps, o->list_notable ? o->n_eps : 0,
					      mr->n - listed.n) != 0)
		status = RP_EXIT_ENV;
	status = files_write(o, &mv, &judged, &listed, &v, v_out != NULL) ? RP_EXIT_ENV : status;
	if (tmapped)
		rp_fabtopo_map_fini(&tmap);
	conc_judged_fini(&cj);
	rp_report_listed_fini(&lst);
	if (v_out) {
		*v_out = v;
		*judged_p = true;
	} else {
		rp_verdict_fini(&v);
	}
	free(all);
	free(eps);
	return status;
}

/* A short cell for the grid: the rate, or the failure. */
static void grid_cell(const struct rp_pair_result *r, char *buf, size_t len)
{
	static const char *const short_codes[RP_ST_COUNT_] = {
		[RP_ST_RESOLVE] = "RESOLV", [RP_ST_RTR] = "RTR", [RP_ST_RTS] = "RTS", [RP_ST_RETRY_EXCEEDED] = "RETRY",
		[RP_ST_RNR_RETRY] = "RNR", [RP_ST_REMOTE_ACCESS] = "RACCES", [RP_ST_LOCAL_PROT] = "LPROT",
		[RP_ST_REGISTRATION] = "REG", [RP_ST_PEER_LOST] = "LOST", [RP_ST_TIMEOUT] = "TIMEOUT",
		[RP_ST_DATA_MISMATCH] = "DATA", [RP_ST_BELOW_THRESHOLD] = "SLOW", [RP_ST_SETUP] = "SETUP",
		[RP_ST_NO_PORT] = "NOPORT", [RP_ST_INTERRUPTED] = "INTR", [RP_ST_PORT_DOWN] = "DOWN",
		[RP_ST_FLUSHED] = "FLUSH", [RP_ST_LINK_ERRORS] = "LINKERR", [RP_ST_MTU_BLACKHOLE] = "MTUHOLE",
		[RP_ST_ENDPOINT_DEAD] = "EPDEAD",
	};

	if (!r)
		snprintf(buf, len, "-");
	else if (r->status == RP_ST_OK)
		snprintf(buf, len, "%.*f", r->gbps < 10 ? 2 : 1, r->gbps);
	else if (r->status == RP_ST_BELOW_THRESHOLD)
		snprintf(buf, len, "%.*f!", r->gbps < 10 ? 2 : 1, r->gbps);
	else
		snprintf(buf, len, "%s", short_codes[r->status] ? short_codes[r->status] : "FAIL");
}

static void print_grid(const struct mx_out *o, const struct rp_result_seq *judged)
{
	struct rp_pair_result tmp;
	const struct mx_results *mr = o->results;
	size_t n = o->n_eps;
	int32_t idx[MX_GRID_MAX * MX_GRID_MAX];
	char cell[32];

	memset(idx, 0xff, sizeof(idx));
	for (size_t i = 0; i < mr->n; i++)
		idx[mr->pair_eps[2 * i] * n + mr->pair_eps[2 * i + 1]] = (int32_t)i;
	/* --bidir: one result per unordered pair; its reverse fills the other cell */
	for (size_t i = 0; i < mr->n; i++)
		if (rp_result_seq_get(judged, i, &tmp)->reverse.measured && idx[mr->pair_eps[2 * i + 1] * n + mr->pair_eps[2 * i]] < 0)
			idx[mr->pair_eps[2 * i + 1] * n + mr->pair_eps[2 * i]] = -2 - (int32_t)i;
	printf("Gb/s, rows write into columns (! below threshold):\n%-28s", "");
	for (size_t d = 0; d < n; d++)
		printf(" %7zu", d);
	printf("\n");
	for (size_t s = 0; s < n; s++) {
		char name[RP_NAME_MAX * 2 + 48];

		snprintf(name, sizeof(name), "%zu %s/%s:%d", s, o->eps[s].ep.node, o->eps[s].ep.device, o->eps[s].ep.port);
		printf("%-28.28s", name);
		for (size_t d = 0; d < n; d++) {
			int32_t k = idx[s * n + d];
			struct rp_pair_result rev;

			if (k <= -2)
				rp_pair_reverse_view(rp_result_seq_get(judged, (size_t)(-2 - k), &tmp), &rev);
			grid_cell(k >= 0 ? rp_result_seq_get(judged, (size_t)k, &tmp) : k <= -2 ? &rev : NULL, cell, sizeof(cell));
			printf(" %7s", s == d ? "" : cell);
		}
		printf("\n");
	}
}

/* --concurrent-rails: each concurrent pair against its solo figure (small runs: every pair; larger
 * ones: those that failed or dropped, at most 20). */
static void print_conc(const struct mx_out *o, const struct rp_result_seq *judged)
{
	struct rp_pair_result tmp;
	struct mx_out copy = *o;
	struct mx_conc_judged cj;
	size_t shown = 0;
	bool all = o->n_eps <= MX_GRID_MAX;

	if (!o->conc || conc_judge(&copy, judged, &cj) != 0)
		return;
	printf("concurrent rails (each round's rails at once) against solo, concurrent_drop below %.0f%%:\n",
	       100.0 * (1.0 - o->conc_drop));
	for (size_t k = 0; k < cj.view.n && shown < (all ? SIZE_MAX : 20); k++) {
		const struct rp_pair_result *c = &cj.res[k];
		const struct rp_pair_result *solo = o->conc->solo[k] >= 0 ? rp_result_seq_get(judged, (size_t)o->conc->solo[k], &tmp)
									  : NULL;
		bool drop = c->warnings & (1u << RP_WARN_CONCURRENT_DROP);
		char name[4 * RP_NAME_MAX + 40];

		if (!all && c->status == RP_ST_OK && !drop)
			continue;
		shown++;
		snprintf(name, sizeof(name), "%s/%s:%d -> %s/%s:%d", c->src.node, c->src.device, c->src.port, c->dst.node,
			 c->dst.device, c->dst.port);
		if (c->status != RP_ST_OK)
			printf("  round %u  %s %s: %s: %s\n", cj.view.round[k] + 1, name,
			       c->status == RP_ST_NO_PORT ? "not measured" : "FAILED under load",
			       rp_status_code(c->status), c->reason);
		else if (cj.ratio[k] > 0)
			printf("  round %u  %s %9.3f Gb/s, solo %9.3f Gb/s (%5.1f%%)%s\n", cj.view.round[k] + 1, name, c->gbps,
			       solo->gbps, 100.0 * cj.ratio[k], drop ? "  warning: concurrent_drop" : "");
		else
			printf("  round %u  %s %9.3f Gb/s, no solo figure to compare\n", cj.view.round[k] + 1, name, c->gbps);
	}
	if (copy.conc_sum.n_failed + copy.conc_sum.n_drop > shown && !all)
		printf("  ... see the reports for every concurrent pair\n");
	printf("concurrent rails: %zu pairs, %zu failed under load, %zu with concurrent_drop\n", copy.conc_sum.n,
	       copy.conc_sum.n_failed, copy.conc_sum.n_drop);
	conc_judged_fini(&cj);
}

void matrix_cli_print(const struct mx_out *o, const struct rp_verdict *v)
{
	struct mx_results *mr = o->results;
	struct rp_result_seq ps = mx_results_pairs(mr), *judged = &ps;
	char msg[1024];

	if (o->simulated)
		printf("SIMULATED run on the fabric model %s: %zu endpoints simulated, every result below is the "
		       "model's, not hardware's\n", o->simulated, o->n_eps);
	if (!o->summary_only && o->n_eps <= MX_GRID_MAX)
		print_grid(o, judged);
	matrix_cli_print_findings(o, v, judged);
	rp_cli_print_suspects(v, mx_ep_of, o->eps, 20);
	print_conc(o, judged);
	if (rp_nccl_versions_differ(o->rank_ver, o->n_rank_ver, msg, sizeof(msg)))
		printf("warning nccl_version_mismatch: the nodes run different NCCL releases, so the same NCCL_IB_HCA "
		       "selects different ports on them: %s\n", msg);
	for (size_t i = 0; o->drift && i < o->drift->n_warnings; i++)
		printf("warning %s: %s\n", rp_drift_code(), o->drift->warnings[i].message);
	if (o->stop_sig)
		printf("INTERRUPTED by signal %d: the pairs measured so far are above and in the reports\n", o->stop_sig);
	if (o->rounds_done < o->n_rounds && o->rounds_run > o->rounds_done)
		printf("INCOMPLETE: %zu of %zu rounds done; round %zu was cut short by the stop (the directions it "
		       "finished are counted below, the coverage counts the rounds done)\n", o->rounds_done, o->n_rounds,
		       o->rounds_run);
	else if (o->rounds_done < o->n_rounds)
		printf("INCOMPLETE: %zu of %zu rounds done\n", o->rounds_done, o->n_rounds);
	printf("%s%s: %zu of %zu pairs ok, %zu failed (%zu below threshold) over %zu endpoints in %zu rounds",
	       o->simulated ? "SIMULATED " : "",
	       v->pass && o->rounds_done == o->n_rounds && !o->stop_sig && !o->conc_sum.n_failed ? "PASS" : "FAIL", v->n_ok,
	       v->n_pairs, v->n_failed,
	       v->n_below, o->n_eps, o->rounds_done);
	if (o->retest_rounds)
		printf(" and %zu retest round%s", o->retest_rounds, o->retest_rounds == 1 ? "" : "s");
	/* the run's one duration: the JSON's matrix.elapsed_s and the HTML's are this figure */
	printf(" (%.1f s%s)", o->elapsed_s, o->simulated ? " on the projected clock" : "");
	if (o->sweep && o->sweep->width) {
		printf(", after a reachability sweep of %zu round%s (%zu direction%s unreachable, %zu flaky",
		       o->sweep->rounds, o->sweep->rounds == 1 ? "" : "s", o->sweep->n_dead, o->sweep->n_dead == 1 ? "" : "s",
		       o->sweep->n_flaky);
		if (o->sweep->n_cleared)
			printf(", %zu whose screen failed passed the full probe", o->sweep->n_cleared);
		if (o->sweep->n_ep_dead)
			printf(", %zu endpoint%s dead: %zu direction%s endpoint_dead", o->sweep->n_ep_dead,
			       o->sweep->n_ep_dead == 1 ? "" : "s", o->sweep->n_ep_dirs, o->sweep->n_ep_dirs == 1 ? "" : "s");
		printf(")");
		if (o->hold)
			printf(", bandwidth on the probes' connections%s", o->run && o->run->n_late ? " and in late rounds" : "");
	} else if (o->sweep_off) {
		printf(", without the reachability sweep (not yet with %s)", o->sweep_off);
	}
	matrix_cli_print_drain(o, v);
	printf("\n");
	fflush(stdout);
}
