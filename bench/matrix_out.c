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
#include "nccl/nccl_rules.h"
#include "report/report_list.h"
#include "report/report.h"
#include "report/report_html.h"
#include "report/report_junit.h"
#include "report/report_matrix.h"
#include "verdict_cli.h"
#include "verdict/verdict_groups.h"
#include "verdict/verdict_json.h"

/* Endpoint e of an mx_ep array, for the verdict's writers. */
static const struct rp_endpoint *mx_ep_of(const void *arg, size_t e)
{
	return &((const struct mx_ep *)arg)[e].ep;
}

#define MX_GRID_MAX 16   /* endpoints up to which stdout shows a grid */

/* The run's facts for the reports (lib/report/report_matrix.h), as o holds them now. */
void matrix_cli_facts(const struct matrix_out *o, struct rp_matrix_facts *f)
{
	*f = (struct rp_matrix_facts){
		.pattern = o->pattern, .pattern_requested = o->pattern_requested, .seed = o->seed, .eps = o->eps,
		.n_eps = o->n_eps, .n_rounds = o->n_rounds, .rounds_done = o->rounds_done, .rounds_run = o->rounds_run,
		.retest_rounds = o->retest_rounds, .max_retest = o->max_retest, .sweep = o->sweep, .sweep_s = o->sweep_s,
		.sweep_off = o->sweep_off, .hold = o->hold, .hold_off = o->hold_off, .run = o->run,
		.list_notable = o->list_notable, .jsonl = o->jsonl, .n_results = o->results ? o->results->n : 0,
		.stop_sig = o->stop_sig, .elapsed_s = o->elapsed_s, .startup_s = o->startup_s, .vcfg = o->vcfg,
		.conc = o->conc != NULL, .conc_sum = o->conc_sum, .coverage = o->coverage, .budget_s = o->budget_s,
		.nccl_ver = o->nccl_ver, .rank_ver = o->rank_ver, .n_rank_ver = o->n_rank_ver, .drift = o->drift,
	};
}

bool matrix_cli_passed(const struct matrix_out *o, const struct rp_verdict *v)
{
	struct rp_matrix_facts f;

	matrix_cli_facts(o, &f);
	return rp_matrix_passed(&f, v);
}

/* One file; a failure is named on stderr with its cause (what: a key of the report that could not be
 * built, else the negative errno rc), once per file kind and run, and always at the end. */
static void write_failed(struct matrix_out *o, const char *path, bool final, int rc, const char *what)
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
static int prom_write(struct matrix_out *o, const struct rp_matrix_view *mv, const struct rp_verdict *v, bool final)
{
	size_t n = o->n_eps ? o->n_eps : 1;
	bool *drain = calloc(n, sizeof(*drain)), *unusable = calloc(n, sizeof(*unusable));
	uint32_t *pairs = calloc(n, sizeof(*pairs)), *failed = calloc(n, sizeof(*failed));
	struct rp_prom_finding *fd = NULL;
	struct rp_fail_groups fg = { 0 };
	bool pass = matrix_cli_passed(o, v);
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
static int html_write(const struct matrix_out *o, const struct rp_matrix_view *mv)
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
static int json_write(struct matrix_out *o, const struct rp_matrix_view *mv, const struct rp_result_seq *judged,
		      const struct rp_result_seq *listed, const struct rp_verdict *v, bool final)
{
	struct rp_report_info info = { .command = "matrix", .version = rp_version_string(), .argc = o->argc,
				       .argv = o->argv, .started = o->started_wall, .cfg = o->cfg };
	/* the pairs are streamed into the file, never all in one tree (a run keeps millions) */
	json_t *root = rp_report_json_head_of(&info, judged);   /* its summary counts every pair */
	json_t *bl = final && o->ops ? rp_cli_ops_baseline_json(o->ops) : NULL;
	const char *bad = root ? NULL : "command_line";
	struct rp_matrix_facts facts;
	int rc = 0;

	if (bl && root && json_object_set_new(root, "baseline", bl) != 0)   /* takes bl either way */
		bad = "baseline";
	else if (!root)
		json_decref(bl);
	if (!bad && o->simulated && (json_object_set_new(root, "simulated", json_true()) != 0 ||
				     json_object_set_new(root, "fabric_model", rp_json_string_safe(o->simulated)) != 0))
		bad = "fabric_model";
	if (!bad && o->simulated && o->json_more && o->json_more(root, o->json_more_arg) != 0)
		bad = "simulation";
	matrix_cli_facts(o, &facts);
	if (!bad)
		bad = rp_matrix_report_json(root, &facts, v, listed->n);
	if (!bad && o->list_notable && final && rp_matrix_ok_sample_json(root, judged) != 0)
		bad = "matrix.pairs_listed.ok_sample";
	if (!bad && mv->conc)
		bad = rp_matrix_conc_json(root, mv->conc, judged);
	if (!bad)
		rc = rp_report_write_json_of(root, listed, o->json);
	json_decref(root);
	if (!bad && !rc)
		return 0;
	write_failed(o, o->json, final, rc, bad);
	return RP_EXIT_ENV;
}

/* judged: every pair (the concurrent pairs' solo results index it); listed: the pairs the files list. */
static int files_write(struct matrix_out *o, const struct rp_matrix_view *mv, const struct rp_result_seq *judged,
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
struct matrix_conc_judged {
	struct rp_matrix_conc view;
	struct rp_pair_result *res;
	double *ratio;
};

static int conc_judge(struct matrix_out *o, const struct rp_result_seq *judged, struct matrix_conc_judged *cj)
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

static void conc_judged_fini(struct matrix_conc_judged *cj)
{
	free(cj->res);
	free(cj->ratio);
}

/* --prom and --baseline read the listed pairs as one array: they get a whole copy for their write
 * (O(listed pairs) while it lasts; the JSON, CSV, HTML, JUnit and the text read one pair at a time).
 * NULL when neither is asked for, or out of memory (*oom). */
static struct rp_pair_result *whole_copy(const struct matrix_out *o, const struct rp_result_seq *ps, bool final, bool *oom)
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

/* The reports of the judged results under verdict v (--list-pairs notable: what it left notable),
 * the baseline compared when keep (the verdict goes back to the caller). RP_EXIT_OK or RP_EXIT_ENV;
 * *fatal when nothing was written (out of memory, said on stderr). */
static int views_write(struct matrix_out *o, const struct rp_endpoint *eps, struct rp_result_seq *judged,
		       struct rp_verdict *v, bool keep, bool *fatal)
{
	struct mx_results *mr = o->results;
	struct rp_report_listed lst = { 0 };
	struct rp_result_seq listed = *judged;
	struct rp_pair_result *all = NULL;
	bool oom = false;
	int status = RP_EXIT_OK;

	if (o->list_notable) {
		oom = rp_report_list_build(&lst, judged, mr->pair_eps) != 0;
		listed = rp_report_listed_view(&lst);
	}
	all = oom ? NULL : whole_copy(o, &listed, keep, &oom);
	struct rp_matrix_view mv = {
		.title = o->cmd_line, .version = rp_version_string(), .pattern = o->pattern, .eps = eps,
		.n_eps = o->n_eps, .pair_eps = o->list_notable ? lst.pair_eps : mr->pair_eps, .res = all,
		.pairs = &listed, .n = listed.n, .verdict = v, .rounds_done = o->rounds_done, .n_rounds = o->n_rounds,
		.elapsed_s = o->elapsed_s, .drift = o->drift, .n_unlisted = mr->n - listed.n,
		.unlisted_in = o->jsonl, .every = judged, .every_pair_eps = mr->pair_eps,
	};
	struct matrix_conc_judged cj;

	*fatal = oom || conc_judge(o, judged, &cj) != 0;
	if (*fatal) {
		fprintf(stderr, "rdmaprobe matrix: out of memory for the reports\n");
		rp_report_listed_fini(&lst);
		free(all);
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
	if (keep && all && o->ops &&
	    rp_cli_ops_baseline_judge_notable(o->ops, "matrix", o->cfg, all, listed.n, eps, o->list_notable ? o->n_eps : 0,
					      mr->n - listed.n) != 0)
		status = RP_EXIT_ENV;
	status = files_write(o, &mv, judged, &listed, v, keep) ? RP_EXIT_ENV : status;
	if (tmapped)
		rp_fabtopo_map_fini(&tmap);
	conc_judged_fini(&cj);
	rp_report_listed_fini(&lst);
	free(all);
	return status;
}

int matrix_cli_write_files(struct matrix_out *o, struct rp_verdict *v_out, bool *judged_p)
{
	struct mx_results *mr = o->results;
	struct rp_result_seq judged = mx_results_pairs(mr);
	struct rp_endpoint *eps = malloc((o->n_eps ? o->n_eps : 1) * sizeof(*eps));
	struct rp_verdict v;
	bool fatal = false;
	int status;

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
	 * second copy of every result; or the run's kept verdict, when nothing changed since it */
	if (mx_judge_results(o->judged, o->vcfg, eps, o->n_eps, mr, o->max_retest, &v, NULL) != 0) {
		fprintf(stderr, "rdmaprobe matrix: could not compute the verdict (see above)\n");
		rp_verdict_fini(&v);
		free(eps);
		return RP_EXIT_ENV;
	}
	status = views_write(o, eps, &judged, &v, v_out != NULL, &fatal);
	if (v_out && !fatal) {
		*v_out = v;
		*judged_p = true;
	} else {
		rp_verdict_fini(&v);
	}
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

static void print_grid(const struct matrix_out *o, const struct rp_result_seq *judged)
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
static void print_conc(const struct matrix_out *o, const struct rp_result_seq *judged)
{
	struct rp_pair_result tmp;
	struct matrix_out copy = *o;
	struct matrix_conc_judged cj;
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

void matrix_cli_print(const struct matrix_out *o, const struct rp_verdict *v)
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
	       matrix_cli_passed(o, v) ? "PASS" : "FAIL", v->n_ok,
	       v->n_pairs, v->n_failed,
	       v->n_below, o->n_eps, o->rounds_done);
	if (o->retest_rounds)
		printf(" and %zu retest round%s", o->retest_rounds, o->retest_rounds == 1 ? "" : "s");
	if (o->run && o->run->retest_by_endpoint)
		printf(" (%zu failed direction%s confirmed by %s endpoint's sample, not measured again)",
		       o->run->retest_by_endpoint, o->run->retest_by_endpoint == 1 ? "" : "s",
		       o->run->retest_by_endpoint == 1 ? "its" : "their");
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
