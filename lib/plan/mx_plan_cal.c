/* mx_plan_cal.c: the plan's model fitted from a previous matrix run's JSON report; see mx_plan.h.
 *
 * Robust figures: medians over the report's ok directions (a slow or stalled pair does not move
 * them); the per-round overhead is what the rounds took beyond their slowest pairs, rebuilt from the
 * report's endpoints, pattern and seed (the schedule is a pure function of them).
 */
#include "plan/mx_plan.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

/* One measured direction of the report. */
struct cal_dir {
	uint32_t a, b;                /* endpoint numbers, a -> b */
	double bytes;                 /* moved, warm-up included */
	double link_gbps;             /* the lower of its endpoints'; 0 unknown */
};

struct cal_key {
	char *key;
	uint32_t idx;                 /* the endpoint's number in matrix.endpoints */
};

/* What the report holds, borrowed from its JSON. */
struct cal_in {
	const char *path;
	bool allow_simulated;
	json_t *root, *matrix, *pairs, *eps;
	double duration_s, warmup;
	bool bidir;
	size_t n_eps;
	struct cal_key *keys;         /* "node/device:port" of each endpoint, sorted by key */
	struct cal_dir *dirs;
	size_t n_dirs;
	/* a notable report (matrix.pairs_listed.which "notable") lists its failed, flaky and warned pairs;
	 * its plain passes are counted, a sample of them in matrix.pairs_listed.ok_sample */
	bool notable;
	json_t *sample;               /* that sample; NULL none */
	double def_bytes;             /* a direction it does not list: the sample's median bytes */
};

/* Pair i of the report: its "pairs", then a notable report's ok sample. */
static const json_t *pair_at(const struct cal_in *in, size_t i)
{
	size_t n = json_array_size(in->pairs);

	return i < n ? json_array_get(in->pairs, i) : json_array_get(in->sample, i - n);
}

static size_t pairs_n(const struct cal_in *in)
{
	return json_array_size(in->pairs) + json_array_size(in->sample);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double num(const json_t *obj, const char *key, double dflt)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_number(v) && isfinite(json_number_value(v)) ? json_number_value(v) : dflt;
}

/* An endpoint object's key "node/device:port"; NULL when it is not one. */
static char *ep_key(const json_t *ep)
{
	const char *node = json_string_value(json_object_get(ep, "node"));
	const char *dev = json_string_value(json_object_get(ep, "device"));
	json_t *port = json_object_get(ep, "port");
	char buf[512];

	if (!node || !dev || !json_is_integer(port))
		return NULL;
	snprintf(buf, sizeof(buf), "%s/%s:%lld", node, dev, (long long)json_integer_value(port));
	return strdup(buf);
}

static int key_cmp(const void *x, const void *y)
{
	return strcmp(((const struct cal_key *)x)->key, ((const struct cal_key *)y)->key);
}

/* The endpoint number of an endpoint object (by its key, in the sorted keys). */
static int ep_find(const struct cal_in *in, const json_t *ep, uint32_t *idx_p)
{
	struct cal_key k = { .key = ep_key(ep) }, *hit;

	if (!k.key)
		return -ENOENT;
	hit = bsearch(&k, in->keys, in->n_eps, sizeof(*in->keys), key_cmp);
	free(k.key);
	if (!hit)
		return -ENOENT;
	*idx_p = hit->idx;
	return 0;
}

/* The report's top level: an rdmaprobe matrix report with pairs and endpoints. */
static int open_report(struct cal_in *in)
{
	json_error_t jerr;
	FILE *f = fopen(in->path, "r");
	const char *tool, *cmd;

	if (!f) {
		int err = errno;

		rp_log(RP_LOG_ERROR, "--calibrate-from %s: cannot read it: %s", in->path, strerror(err));
		return err == ENOENT || err == EACCES ? -err : -EIO;
	}
	in->root = json_loadf(f, 0, &jerr);
	fclose(f);
	if (!in->root) {
		rp_log(RP_LOG_ERROR, "--calibrate-from %s: not JSON (line %d: %s)", in->path, jerr.line, jerr.text);
		return -EINVAL;
	}
	tool = json_string_value(json_object_get(in->root, "tool"));
	cmd = json_string_value(json_object_get(in->root, "command"));
	if (!tool || strcmp(tool, "rdmaprobe") != 0) {
		rp_log(RP_LOG_ERROR, "--calibrate-from %s: not an rdmaprobe report (no \"tool\": \"rdmaprobe\")", in->path);
		return -EINVAL;
	}
	if (json_is_true(json_object_get(in->root, "simulated")) && !in->allow_simulated) {
		rp_log(RP_LOG_ERROR, "--calibrate-from %s: a SIMULATED run's report (fabric model %s): its figures are the "
		       "model's, not this fabric's; --allow-simulated fits the plan from it anyway", in->path,
		       json_string_value(json_object_get(in->root, "fabric_model")) ?
		       json_string_value(json_object_get(in->root, "fabric_model")) : "?");
		return -EINVAL;
	}
	if (!cmd || strcmp(cmd, "matrix") != 0) {
		rp_log(RP_LOG_ERROR, "--calibrate-from %s: a report of rdmaprobe %s, not of a matrix run", in->path,
		       cmd ? cmd : "(no command)");
		return -EINVAL;
	}
	in->matrix = json_object_get(in->root, "matrix");
	in->pairs = json_object_get(in->root, "pairs");
	in->eps = json_object_get(in->matrix, "endpoints");
	if (!json_is_object(in->matrix) || !json_is_array(in->pairs) || !json_is_array(in->eps)) {
		rp_log(RP_LOG_ERROR, "--calibrate-from %s: a matrix report without its %s", in->path,
		       !json_is_object(in->matrix) ? "\"matrix\" object" : !json_is_array(in->pairs) ? "\"pairs\" array"
										       : "\"matrix.endpoints\" array");
		return -EINVAL;
	}
	{
		json_t *listed = json_object_get(in->matrix, "pairs_listed");
		const char *which = json_string_value(json_object_get(listed, "which"));

		in->notable = which && strcmp(which, "notable") == 0;
		in->sample = in->notable && json_is_array(json_object_get(listed, "ok_sample")) ?
				     json_object_get(listed, "ok_sample") : NULL;
	}
	in->duration_s = num(json_object_get(in->root, "config"), "duration_s", 0);
	in->warmup = num(json_object_get(in->root, "config"), "warmup_iters", 0);
	in->bidir = json_is_true(json_object_get(json_object_get(in->root, "config"), "bidir"));
	return 0;
}

/* One figure's range: absent (or null) is allowed (the fit leaves what lacks it out); a value outside
 * [lo, hi] is a damaged or hand-made report, refused naming the field (it used to be fitted: a rate of
 * 1e-300 Gb/s made the plan's times overflow and the planner report "out of memory"). */
static int range_bad(const struct cal_in *in, const json_t *obj, const char *where, const char *key, double lo,
		     double hi)
{
	const json_t *v = json_object_get(obj, key);
	double x;

	if (!v || json_is_null(v))
		return 0;
	x = json_is_number(v) ? json_number_value(v) : NAN;
	if (isfinite(x) && x >= lo && x <= hi)
		return 0;
	if (!json_is_number(v))
		rp_log(RP_LOG_ERROR, "--calibrate-from %s: %s%s: not a number", in->path, where, key);
	else
		rp_log(RP_LOG_ERROR, "--calibrate-from %s: %s%s: %g is out of range (%g to %g)", in->path, where, key, x, lo,
		       hi);
	return -EINVAL;
}

/* Every figure the fit reads, in the ranges a real run can give: a direction of an ok pair moves at
 * least 1 kb/s (1e-6 Gb/s) and at most 100 Tb/s; times at most 1e7 s (116 days). */
static int ranges_check(const struct cal_in *in)
{
	static const double max_s = 1e7, max_gbps = 1e5;
	const json_t *cfg = json_object_get(in->root, "config"), *sw = json_object_get(in->matrix, "sweep");
	char where[64];
	int rc = 0;

	rc = rc ? rc : range_bad(in, cfg, "config.", "duration_s", 0, max_s);
	rc = rc ? rc : range_bad(in, cfg, "config.", "warmup_iters", 0, 1e12);
	rc = rc ? rc : range_bad(in, in->matrix, "matrix.", "elapsed_s", 0, max_s);
	rc = rc ? rc : range_bad(in, in->matrix, "matrix.", "startup_s", 0, max_s);
	if (json_is_object(sw))
		rc = rc ? rc : range_bad(in, sw, "matrix.sweep.", "elapsed_s", 0, max_s);
	for (size_t i = 0; !rc && i < json_array_size(in->pairs); i++) {
		const json_t *p = json_array_get(in->pairs, i);
		const char *st = json_string_value(json_object_get(p, "status"));
		bool ok = st && strcmp(st, "ok") == 0;

		snprintf(where, sizeof(where), "pairs[%zu].", i);
		rc = range_bad(in, p, where, "gbps", ok ? 1e-6 : 0, max_gbps);
		rc = rc ? rc : range_bad(in, p, where, "elapsed_s", 0, max_s);
		rc = rc ? rc : range_bad(in, p, where, "bytes", 0, 1e18);
		rc = rc ? rc : range_bad(in, p, where, "msg_size", 0, 1ULL << 32);
		snprintf(where, sizeof(where), "pairs[%zu].src.", i);
		rc = rc ? rc : range_bad(in, json_object_get(p, "src"), where, "link_gbps", 0, max_gbps);
		snprintf(where, sizeof(where), "pairs[%zu].dst.", i);
		rc = rc ? rc : range_bad(in, json_object_get(p, "dst"), where, "link_gbps", 0, max_gbps);
	}
	return rc;
}

/* The endpoint keys, sorted for ep_find. */
static int load_eps(struct cal_in *in)
{
	in->n_eps = json_array_size(in->eps);
	in->keys = calloc(in->n_eps ? in->n_eps : 1, sizeof(*in->keys));
	if (!in->keys)
		return -ENOMEM;
	for (size_t e = 0; e < in->n_eps; e++) {
		in->keys[e] = (struct cal_key){ .key = ep_key(json_array_get(in->eps, e)), .idx = (uint32_t)e };
		if (!in->keys[e].key) {
			rp_log(RP_LOG_ERROR, "--calibrate-from %s: matrix.endpoints[%zu] is not an endpoint (node, device, port)",
			       in->path, e);
			return -EINVAL;
		}
	}
	qsort(in->keys, in->n_eps, sizeof(*in->keys), key_cmp);
	return 0;
}

/* One pair object's set-up and rate fraction, when it is an ok direction that moved bytes. */
static bool dir_fit(const struct cal_in *in, const json_t *p, double *setup_p, double *frac_p)
{
	const char *st = json_string_value(json_object_get(p, "status"));
	double gbps = num(p, "gbps", 0), el = num(p, "elapsed_s", 0), bytes = num(p, "bytes", 0);
	double msg = num(p, "msg_size", 0), ls = num(json_object_get(p, "src"), "link_gbps", 0);
	double ld = num(json_object_get(p, "dst"), "link_gbps", 0), link = ls < ld ? ls : ld, xfer;

	if (!st || strcmp(st, "ok") != 0 || !(gbps > 0) || !(el > 0) || !(bytes > 0))
		return false;
	xfer = in->duration_s > 0 ? in->duration_s : (bytes + in->warmup * msg) * 8 / (gbps * 1e9);
	*setup_p = el > xfer ? el - xfer : 0;
	*frac_p = link > 0 ? gbps / link : -1;
	return true;
}

/* Set-up and rate from the ok directions; every direction with both endpoints known kept in dirs. */
static int fit_dirs(struct cal_in *in, struct mx_plan_model *m)
{
	size_t n = pairs_n(in), n_setup = 0, n_frac = 0;
	double *setup = calloc(n ? n : 1, sizeof(*setup)), *frac = calloc(n ? n : 1, sizeof(*frac));
	int rc = 0;

	in->dirs = calloc(n ? n : 1, sizeof(*in->dirs));
	if (!setup || !frac || !in->dirs) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *p = pair_at(in, i);
		struct cal_dir *d = &in->dirs[in->n_dirs];
		double f, ls = num(json_object_get(p, "src"), "link_gbps", 0), ld = num(json_object_get(p, "dst"), "link_gbps", 0);

		if (dir_fit(in, p, &setup[n_setup], &f)) {
			n_setup++;
			if (f > 0)
				frac[n_frac++] = f;
		}
		d->bytes = num(p, "bytes", 0) + in->warmup * num(p, "msg_size", 0);
		d->link_gbps = ls < ld ? ls : ld;
		if (ep_find(in, json_object_get(p, "src"), &d->a) == 0 && ep_find(in, json_object_get(p, "dst"), &d->b) == 0)
			in->n_dirs++;
	}
	if (!n_setup) {
		rp_log(RP_LOG_ERROR, "--calibrate-from %s: no ok direction to fit from (%zu pair results, none ok with bytes "
		       "moved%s)", in->path, n, in->notable && !in->sample ? "; a notable report lists its failed, flaky and "
		       "warned pairs only, and this one has no matrix.pairs_listed.ok_sample (an older writer)" : "");
		rc = -EINVAL;
		goto out;
	}
	if (in->notable && in->sample) {   /* the directions it does not list: the sample's median bytes */
		size_t first = json_array_size(in->pairs), k = n - first;
		double *bytes = calloc(k ? k : 1, sizeof(*bytes));

		if (!bytes) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = first; i < n; i++)
			bytes[i - first] = num(pair_at(in, i), "bytes", 0) + in->warmup * num(pair_at(in, i), "msg_size", 0);
		in->def_bytes = k ? median(bytes, k) : 0;
		free(bytes);
	}
	m->setup_s = median(setup, n_setup);
	snprintf(m->setup_src, sizeof(m->setup_src), "median of %zu ok directions in %s", n_setup, in->path);
	if (n_frac) {
		m->rate_frac = median(frac, n_frac);
		snprintf(m->rate_src, sizeof(m->rate_src), "median of %zu ok directions in %s (measured / link rate)",
			 n_frac, in->path);
	}
out:
	free(setup);
	free(frac);
	return rc;
}

static int dir_cmp(const void *x, const void *y)
{
	const struct cal_dir *p = x, *q = y;

	return p->a != q->a ? (p->a < q->a ? -1 : 1) : p->b != q->b ? (p->b < q->b ? -1 : 1) : 0;
}

/* The model's time for direction a -> b of the report (dirs sorted by dir_cmp): its bytes at the
 * fitted rate of its link; 0 when the report has no such direction. */
static double dir_model_s(const struct cal_in *in, const struct mx_plan_model *m, uint32_t a, uint32_t b)
{
	struct cal_dir k = { .a = a, .b = b }, *hit = bsearch(&k, in->dirs, in->n_dirs, sizeof(k), dir_cmp);

	if (!hit && in->notable && in->def_bytes > 0) {   /* a plain pass it does not list */
		double la = num(json_array_get(in->eps, a), "link_gbps", 0), lb = num(json_array_get(in->eps, b), "link_gbps", 0);

		k.bytes = in->def_bytes;
		k.link_gbps = la < lb ? la : lb;
		hit = &k;
	}
	if (!hit)
		return 0;
	if (in->duration_s > 0)
		return m->setup_s + in->duration_s;
	return m->setup_s + (hit->link_gbps > 0 ? hit->bytes * 8 / (m->rate_frac * hit->link_gbps * 1e9) : 0);
}

/* The rebuilt schedule's endpoints: a node number per change of node name, rails in order. */
static int sched_eps(const struct cal_in *in, struct rp_sched_ep **se_p)
{
	struct rp_sched_ep *se = calloc(in->n_eps ? in->n_eps : 1, sizeof(*se));
	const char *prev = NULL;

	if (!se)
		return -ENOMEM;
	for (size_t e = 0; e < in->n_eps; e++) {
		const char *node = json_string_value(json_object_get(json_array_get(in->eps, e), "node"));
		bool same = prev && strcmp(prev, node) == 0;

		se[e].node = e == 0 ? 0 : se[e - 1].node + !same;
		se[e].rail = same ? se[e - 1].rail + 1 : 0;
		prev = node;
	}
	*se_p = se;
	return 0;
}

/* The report's schedule, rebuilt from its endpoints, pattern and seed (a pure function of them); NULL
 * with *why when it cannot be. 0 or -ENOMEM. */
static int sched_rebuild(const struct cal_in *in, struct rp_sched **s_p, const char **why)
{
	const char *ps = json_string_value(json_object_get(in->matrix, "pattern"));
	const json_t *seed = json_object_get(in->matrix, "seed");
	struct rp_pattern pat;
	struct rp_sched_ep *se;
	int rc;

	*s_p = NULL;
	*why = NULL;
	if (!ps || rp_pattern_parse(ps, &pat) != 0 || !json_is_integer(seed)) {
		*why = "its pattern or seed is missing";
		return 0;
	}
	rc = sched_eps(in, &se);
	if (rc)
		return rc;
	if (rp_sched_create(se, in->n_eps, &pat, (uint64_t)json_integer_value(seed), s_p) != 0) {
		*s_p = NULL;
		*why = "its schedule cannot be rebuilt";
	}
	free(se);
	return 0;
}

/* Why the report's rounds cannot give the per-round overhead, or NULL when they can. */
static const char *rounds_unfit(const struct cal_in *in)
{
	const json_t *mx = in->matrix, *sw = json_object_get(mx, "sweep");

	if (!json_is_true(json_object_get(mx, "complete")))
		return "its run is not complete";
	if (num(mx, "retest_rounds", -1) != 0)
		return "its run has retest rounds";
	if (json_object_get(in->root, "concurrent_rails"))
		return "its run has concurrent rounds";
	if (json_is_object(sw) && (num(sw, "unreachable", -1) != 0 || num(sw, "flaky", -1) != 0 ||
				   num(sw, "dead_endpoints", 0) != 0))
		return "its reachability sweep left pairs out of the rounds or changed their timeout";
	if (json_is_object(sw) && num(sw, "late_rounds", 0) != 0)
		return "its run has late rounds (directions its sweep cleared, measured after the planned rounds)";
	if (json_is_object(sw) && !(num(sw, "elapsed_s", -1) >= 0))
		return "its reachability sweep has no elapsed_s";
	if (!(num(mx, "elapsed_s", -1) > 0))
		return "it has no matrix.elapsed_s";
	return NULL;
}

/* Sum over the report's rounds of the model's slowest pair (both directions; --bidir the longer). */
static int model_sum(const struct cal_in *in, const struct mx_plan_model *m, const struct rp_sched *s, double *sum_p)
{
	size_t cap = rp_sched_max_round_pairs(s), got;
	struct rp_sched_pair *pairs = calloc(cap ? cap : 1, sizeof(*pairs));
	int rc = pairs ? 0 : -ENOMEM;

	*sum_p = 0;
	for (size_t r = 0; !rc && r < rp_sched_n_rounds(s); r++) {
		double worst = 0;

		rc = rp_sched_round(s, r, pairs, cap, &got);
		for (size_t i = 0; !rc && i < got; i++) {
			double ab = dir_model_s(in, m, pairs[i].a, pairs[i].b), ba = dir_model_s(in, m, pairs[i].b, pairs[i].a);
			double t = in->bidir ? (ab > ba ? ab : ba) : ab + ba;

			worst = t > worst ? t : worst;
		}
		*sum_p += worst;
	}
	free(pairs);
	return rc;
}

/* The per-round overhead, when the report's rounds are the schedule's alone (s: its schedule, or NULL
 * and sched_why). */
static int fit_rounds(struct cal_in *in, const struct rp_sched *s, const char *sched_why, struct mx_plan_model *m)
{
	const char *why = rounds_unfit(in);
	const json_t *sw = json_object_get(in->matrix, "sweep");
	/* the rounds' time: the run's after start-up less its reachability sweep's own rounds */
	double sum, sweep_s = json_is_object(sw) ? num(sw, "elapsed_s", 0) : 0;
	double elapsed = num(in->matrix, "elapsed_s", 0) - sweep_s;
	char swept[64] = "";
	size_t n;
	int rc;

	if (!why && !s)
		why = sched_why;
	if (why) {
		snprintf(m->round_src, sizeof(m->round_src), "assumed: not fitted from %s (%s)", in->path, why);
		return 0;
	}
	qsort(in->dirs, in->n_dirs, sizeof(*in->dirs), dir_cmp);
	rc = model_sum(in, m, s, &sum);
	if (rc)
		return rc;
	n = rp_sched_n_rounds(s);
	m->round_overhead_s = elapsed > sum ? (elapsed - sum) / (double)n : 0;
	if (json_is_object(sw))
		snprintf(swept, sizeof(swept), " after its sweep's %.2f s", sweep_s);
	snprintf(m->round_src, sizeof(m->round_src), "mean over %zu round%s in %s (its elapsed %.2f s%s - the "
		 "model's slowest pairs %.2f s, / %zu%s)", n, n == 1 ? "" : "s", in->path, elapsed, swept, sum, n,
		 elapsed > sum ? "" : ", at least 0");
	return 0;
}

/* Start-up: matrix.startup_s over the report's endpoints, assumed proportional to the endpoints. */
static void fit_startup(const struct cal_in *in, struct mx_plan_model *m)
{
	double st = num(in->matrix, "startup_s", -1);

	if (st < 0 || !in->n_eps) {
		snprintf(m->startup_src, sizeof(m->startup_src), "assumed: %s has no matrix.startup_s (an older writer)",
			 in->path);
		return;
	}
	m->startup_s = 0;
	m->startup_per_ep_s = st / (double)in->n_eps;
	snprintf(m->startup_src, sizeof(m->startup_src), "matrix.startup_s %.2f s at the %zu endpoints of %s, assumed "
		 "proportional to the endpoints", st, in->n_eps, in->path);
}

/* The sweep's probe: its rounds' time over their busiest endpoints' probes, from a sweep that found
 * nothing and ran the rounds its schedule makes (s, or NULL and sched_why). */
static int fit_sweep(const struct cal_in *in, const struct rp_sched *s, const char *sched_why, struct mx_plan_model *m)
{
	const json_t *sw = json_object_get(in->matrix, "sweep");
	double el = num(sw, "elapsed_s", -1), rounds = num(sw, "rounds", -1), width = num(sw, "width", 0);
	const char *why = NULL;
	size_t n_rounds = 0, busiest = 0;
	uint64_t probes = 0;
	int rc = 0;

	if (!json_is_object(sw))
		why = "its run had no reachability sweep";
	else if (num(sw, "unreachable", -1) != 0 || num(sw, "flaky", -1) != 0 || num(sw, "cleared", -1) != 0 ||
		 num(sw, "dead_endpoints", 0) != 0)
		why = "its sweep found failing directions, whose probes wait out their deadlines";
	else if (!(el >= 0) || !(rounds >= 1) || !(width >= 1) || width > UINT32_MAX)
		why = "its sweep has no elapsed_s, rounds or width";
	else if (!s)
		why = sched_why;
	else if ((rc = mx_plan_sweep_load(s, in->n_eps, (unsigned)width, &n_rounds, &probes, &busiest)) != 0)
		return rc;
	else if ((double)n_rounds != rounds || !probes)
		why = "its sweep's rounds are not the ones its schedule makes";
	if (why) {
		snprintf(m->sweep_src, sizeof(m->sweep_src), "a set-up + the per-round overhead: not fitted from %s (%s)",
			 in->path, why);
		return 0;
	}
	m->sweep_probe_s = el / (double)probes;
	if (!(m->sweep_probe_s > 0))
		m->sweep_probe_s = 1e-9;    /* 0 would mean "derived": a measured instant round is kept as one */
	snprintf(m->sweep_src, sizeof(m->sweep_src), "%.2f s over %llu probes of the busiest endpoints of the %zu sweep "
		 "round%s in %s (at most %zu at one)", el, (unsigned long long)probes, n_rounds, n_rounds == 1 ? "" : "s",
		 in->path, busiest);
	return 0;
}

int mx_plan_calibrate(const char *path, struct mx_plan_model *m)
{
	return mx_plan_calibrate_opts(path, false, m);
}

int mx_plan_calibrate_opts(const char *path, bool allow_simulated, struct mx_plan_model *m)
{
	struct cal_in in = { .path = path, .allow_simulated = allow_simulated };
	struct mx_plan_model fit = *m;
	struct rp_sched *s = NULL;
	const char *sched_why = NULL;
	int rc = open_report(&in);

	if (!rc)
		rc = ranges_check(&in);
	if (!rc)
		rc = load_eps(&in);
	if (!rc)
		rc = fit_dirs(&in, &fit);
	if (!rc)
		rc = sched_rebuild(&in, &s, &sched_why);
	if (!rc)
		rc = fit_rounds(&in, s, sched_why, &fit);
	if (!rc)
		rc = fit_sweep(&in, s, sched_why, &fit);
	if (!rc) {
		fit_startup(&in, &fit);
		fit.calibrated = true;
		*m = fit;
	}
	rp_sched_destroy(s);
	if (rc == -ENOMEM)
		rp_log(RP_LOG_ERROR, "--calibrate-from %s: out of memory", path);
	for (size_t e = 0; in.keys && e < in.n_eps; e++)
		free(in.keys[e].key);
	free(in.keys);
	free(in.dirs);
	json_decref(in.root);
	return rc;
}
