/* report_matrix.c: the matrix report's keys beside its pairs, and the run's pass rule (report_matrix.h). */
#include "report/report_matrix.h"

#include <errno.h>

#include "base/sanitize.h"
#include "matrix/mx_run.h"
#include "matrix/mx_sweep.h"
#include "nccl/nccl_rules.h"
#include "nccl/nccl_version.h"
#include "plan/mx_plan_json.h"
#include "report/report.h"
#include "report/report_list.h"
#include "verdict/drift.h"
#include "verdict/result_seq.h"
#include "verdict/verdict_json.h"

bool rp_matrix_passed(const struct rp_matrix_facts *f, const struct rp_verdict *v)
{
	return v->pass && f->rounds_done == f->n_rounds && !f->stop_sig && !f->conc_sum.n_failed;
}

/* Set key to val (a new reference, NULL when it could not be built), remembering the first key that
 * failed instead of leaking. */
static void jset(json_t *obj, const char *key, json_t *val, const char **bad)
{
	if ((!val || json_object_set_new(obj, key, val) != 0) && !*bad)   /* set_new takes val either way */
		*bad = key;
}

static const struct rp_endpoint *ep_of(const void *arg, size_t e)
{
	return &((const struct mx_ep *)arg)[e].ep;
}

/* "endpoints": each with its directions as the verdict counted them (listed or not). */
static json_t *endpoints_json(const struct rp_matrix_facts *f, const struct rp_verdict *v, const char **bad)
{
	json_t *eps = json_array();

	for (size_t e = 0; eps && !*bad && e < f->n_eps; e++) {
		const struct mx_ep *x = &f->eps[e];
		json_t *j = json_pack("{s:o, s:o, s:i, s:i, s:i, s:f}", "node", rp_json_string_safe(x->ep.node), "device",
				      rp_json_string_safe(x->ep.device), "port", x->ep.port, "rank", x->owner,
				      "gid_index", x->ep.gid_index, "link_gbps", x->ep.link_gbps);

		if (j && x->no_port[0])
			jset(j, "no_port", rp_json_string_safe(x->no_port), bad);
		if (j && e < v->n_eps) {
			jset(j, "pairs", json_integer((json_int_t)v->eps[e].pairs), bad);
			jset(j, "failed", json_integer((json_int_t)v->eps[e].failed), bad);
		}
		if (!j || json_array_append_new(eps, j) != 0)
			*bad = *bad ? *bad : "endpoints";
	}
	if (!eps)
		*bad = *bad ? *bad : "endpoints";
	return eps;
}

/* "sweep": null without one; with the run, how it held and what it decided. */
static json_t *sweep_json(const struct rp_matrix_facts *f, const char **bad)
{
	const struct mx_sweep *s = f->sweep;
	json_t *sw;

	if (!s || !s->width)
		return json_null();
	sw = json_pack("{s:I, s:I, s:I, s:I, s:I, s:o, s:f}", "width", (json_int_t)s->width, "rounds",
		       (json_int_t)s->rounds, "unreachable", (json_int_t)s->n_dead, "flaky", (json_int_t)s->n_flaky,
		       "cleared", (json_int_t)s->n_cleared, "screen_s", s->screen_s > 0 ? json_real(s->screen_s) : json_null(),
		       "elapsed_s", f->sweep_s);
	if (!sw || !f->run)
		return sw;
	jset(sw, "hold", json_boolean(f->hold), bad);
	/* endpoints found dead (mx_sweep.h): their directions endpoint_dead, not probed one by one */
	jset(sw, "dead_endpoints", json_integer((json_int_t)s->n_ep_dead), bad);
	jset(sw, "endpoint_dead_directions", json_integer((json_int_t)s->n_ep_dirs), bad);
	jset(sw, "confirm_rounds", json_integer((json_int_t)s->n_confirm), bad);
	jset(sw, "hold_off", f->hold_off && f->hold_off[0] ? rp_json_string_safe(f->hold_off) : json_null(), bad);
	jset(sw, "late_rounds", json_integer((json_int_t)f->run->n_late), bad);
	/* rank 0's own writer sides only: each rank prints its own counts on stderr */
	jset(sw, "rank0_writes_on_held", json_integer((json_int_t)f->run->holds.reused), bad);
	jset(sw, "rank0_writes_fresh", json_integer((json_int_t)f->run->holds.fresh), bad);
	return sw;
}

/* "matrix": how the run was scheduled and how far it got. */
static json_t *matrix_json(const struct rp_matrix_facts *f, const struct rp_verdict *v, size_t n_listed,
			   const char **bad)
{
	json_t *m = json_object();

	jset(m, "pattern", rp_json_string_safe(f->pattern), bad);
	jset(m, "seed", json_integer((json_int_t)f->seed), bad);
	jset(m, "rounds", json_integer((json_int_t)f->n_rounds), bad);
	jset(m, "rounds_done", json_integer((json_int_t)f->rounds_done), bad);
	/* a round a stop cut short is not done, but its finished directions are in the pairs */
	jset(m, "rounds_run", json_integer((json_int_t)(f->rounds_run > f->rounds_done ? f->rounds_run : f->rounds_done)),
	     bad);
	jset(m, "complete", json_boolean(f->rounds_done == f->n_rounds && !f->stop_sig), bad);
	jset(m, "retest", json_integer((json_int_t)f->max_retest), bad);
	jset(m, "retest_rounds", json_integer((json_int_t)f->retest_rounds), bad);
	jset(m, "sweep", sweep_json(f, bad), bad);
	jset(m, "sweep_off", f->sweep_off ? rp_json_string_safe(f->sweep_off) : json_null(), bad);
	jset(m, "pairs_listed", json_pack("{s:s, s:I, s:I, s:I, s:o}", "which", f->list_notable ? "notable" : "all",
					   "listed", (json_int_t)n_listed, "total", (json_int_t)f->n_results,
					   "not_listed", (json_int_t)(f->n_results - n_listed), "every_pair_in",
					   f->jsonl ? rp_json_string_safe(f->jsonl) : json_null()), bad);
	jset(m, "interrupted", json_boolean(f->stop_sig != 0), bad);
	jset(m, "signal", f->stop_sig ? json_integer(f->stop_sig) : json_null(), bad);
	jset(m, "elapsed_s", json_real(f->elapsed_s), bad);
	if (f->startup_s > 0)
		jset(m, "startup_s", json_real(f->startup_s), bad);
	jset(m, "endpoints", endpoints_json(f, v, bad), bad);
	return m;
}

/* "verdict": the run's, with its settings, suspects and path faults. */
static json_t *verdict_json(const struct rp_matrix_facts *f, const struct rp_verdict *v, const char **bad)
{
	json_t *vj = json_object();

	jset(vj, "pass", json_boolean(rp_matrix_passed(f, v)), bad);
	if (f->conc) {
		jset(vj, "concurrent_failed", json_integer((json_int_t)f->conc_sum.n_failed), bad);
		jset(vj, "concurrent_drop", json_integer((json_int_t)f->conc_sum.n_drop), bad);
	}
	jset(vj, "pairs", json_integer((json_int_t)v->n_pairs), bad);
	jset(vj, "ok", json_integer((json_int_t)v->n_ok), bad);
	jset(vj, "failed", json_integer((json_int_t)v->n_failed), bad);
	jset(vj, "below_threshold", json_integer((json_int_t)v->n_below), bad);
	if (f->vcfg) {
		jset(vj, "min_bw", json_real(f->vcfg->min_bw), bad);
		jset(vj, "min_bw_unit", json_string(f->vcfg->min_bw_absolute ? "Gb/s" : "fraction of link rate"), bad);
		jset(vj, "outlier", json_real(f->vcfg->outlier), bad);
		jset(vj, "interval_drop", json_real(f->vcfg->interval_drop), bad);
	}
	jset(vj, "suspects", rp_verdict_suspects_json(v), bad);
	jset(vj, "path_faults", rp_verdict_paths_json(v, ep_of, f->eps, 1000), bad);
	jset(vj, "localized", json_boolean(v->localized), bad);
	jset(vj, "topology_unknown_endpoints", json_integer((json_int_t)v->topo_unknown), bad);
	return vj;
}

/* Endpoint e into the node's lists: every endpoint, and the drained or unusable ones with why. */
static const char *node_ep_add(const struct rp_matrix_facts *f, const struct rp_verdict *v, size_t e, json_t *list,
			       json_t *drain, json_t *why, json_t *unus, json_t *uwhy)
{
	char name[RP_NAME_MAX + 16];

	rp_verdict_ep_name(&f->eps[e].ep, name, sizeof(name));
	rp_str_sanitize(name);   /* a key as well as a value: safe before it is either */
	if (json_array_append_new(list, rp_json_string_safe(name)) != 0)
		return "endpoints";
	if (v->eps[e].drain && (json_array_append_new(drain, rp_json_string_safe(name)) != 0 ||
				json_object_set_new(why, name, rp_json_string_safe(v->eps[e].why)) != 0))
		return "drain_reasons";
	if (v->eps[e].unusable && (json_array_append_new(unus, rp_json_string_safe(name)) != 0 ||
				   json_object_set_new(uwhy, name, rp_json_string_safe(v->eps[e].why)) != 0))
		return "unusable_reasons";
	return NULL;
}

/* One entry of "nodes". */
static json_t *node_json(const struct rp_matrix_facts *f, const struct rp_verdict *v, const struct rp_verdict_node *nd,
			 const char **bad)
{
	json_t *j = json_object(), *list = json_array(), *drain = json_array(), *why = json_object();
	json_t *unus = json_array(), *uwhy = json_object();

	if (!j || !list || !drain || !why || !unus || !uwhy)
		*bad = *bad ? *bad : "nodes";
	for (size_t e = nd->first_ep; !*bad && e < nd->first_ep + nd->n_eps; e++)
		*bad = node_ep_add(f, v, e, list, drain, why, unus, uwhy);
	jset(j, "node", rp_json_string_safe(f->eps[nd->first_ep].ep.node), bad);
	jset(j, "endpoints", list, bad);
	jset(j, "drain", drain, bad);
	jset(j, "drain_reasons", why, bad);
	jset(j, "unusable", unus, bad);
	jset(j, "unusable_reasons", uwhy, bad);
	jset(j, "recommended_nccl_ib_hca", nd->recommended ? rp_json_string_safe(nd->recommended) : json_null(), bad);
	return j;
}

/* The releases whose rules selected each rank's ports: rank 0's ("nccl_version"), every rank's
 * ("nccl_versions"), and "warnings": [{"code": "nccl_version_mismatch", "message"}] when they differ,
 * followed by the `drift` warnings rank 0 found across the endpoints (lib/verdict/drift.h's JSON). NULL, or the
 * key that could not be added. */
static const char *nccl_json(json_t *root, const struct rp_matrix_facts *o)
{
	json_t *list = json_array(), *warn = json_array();
	char msg[1024], v[16];
	const char *bad = !list || !warn ? "nccl_versions" : NULL;

	jset(root, "nccl_version", o->nccl_ver ? rp_nccl_version_json(o->nccl_ver) : json_null(), &bad);
	for (size_t i = 0; !bad && i < o->n_rank_ver; i++) {
		rp_nccl_version_format(o->rank_ver[i].version, v, sizeof(v));
		if (json_array_append_new(list, json_pack("{s:i, s:o, s:s}", "rank", o->rank_ver[i].rank, "node",
							  rp_json_string_safe(o->rank_ver[i].node), "version", v)) != 0)
			bad = "nccl_versions";
	}
	if (!bad && rp_nccl_versions_differ(o->rank_ver, o->n_rank_ver, msg, sizeof(msg)) &&
	    json_array_append_new(warn, json_pack("{s:s, s:o}", "code", "nccl_version_mismatch", "message", rp_json_string_safe(msg))) != 0)
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


const char *rp_matrix_report_json(json_t *root, const struct rp_matrix_facts *f, const struct rp_verdict *v,
				  size_t n_listed)
{
	const char *bad = NULL;
	json_t *nodes = json_array();

	jset(root, "matrix", matrix_json(f, v, n_listed, &bad), &bad);
	jset(root, "verdict", verdict_json(f, v, &bad), &bad);
	for (size_t k = 0; nodes && !bad && k < v->n_nodes; k++) {
		json_t *j = node_json(f, v, &v->nodes[k], &bad);

		if (bad || !j || json_array_append_new(nodes, j) != 0) {
			json_decref(bad ? j : NULL);
			bad = bad ? bad : "nodes";
		}
	}
	jset(root, "nodes", nodes, &bad);
	if (f->coverage)   /* the final write's: what the run covered */
		jset(root, "coverage", mx_coverage_json(f->coverage, f->pattern_requested, f->pattern, f->budget_s), &bad);
	return bad ? bad : nccl_json(root, f);
}

int rp_matrix_ok_sample_json(json_t *root, const struct rp_result_seq *judged)
{
	json_t *listed = json_object_get(json_object_get(root, "matrix"), "pairs_listed"), *a = json_array();
	size_t step = judged->n / RP_MATRIX_OK_SAMPLE ? judged->n / RP_MATRIX_OK_SAMPLE : 1, got = 0;
	struct rp_pair_result tmp;

	if (!listed || !a) {
		json_decref(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < judged->n && got < RP_MATRIX_OK_SAMPLE; i += step) {
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

const char *rp_matrix_conc_json(json_t *root, const struct rp_matrix_conc *mc, const struct rp_result_seq *solo)
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
