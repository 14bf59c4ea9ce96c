/* diff_load.c: read and validate one JSON report for the run-to-run comparison; see diff.h.
 *
 * Every field the rules read is checked for its type and range, and the first problem is logged with
 * the file and the field's path ("pairs[3].src.port"), so an operator can find it in the file.
 */
#include "compare/diff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/diff_int.h"
#include "base/log.h"
#include "base/sanitize.h"
#include "base/util.h"

/* Where a value sits, for messages: the file and the path to the object holding it. */
struct jloc {
	const char *file;
	const char *path;   /* "" at the top, "pairs[3].src" below */
};

const char *rp_diff_type_name(const json_t *v)
{
	if (!v)
		return "nothing (missing)";
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "something else";
}

static int bad_field(const struct jloc *at, const char *key, const char *want, const json_t *got)
{
	char val[48] = "";

	if (json_is_integer(got))
		snprintf(val, sizeof(val), " %lld", (long long)json_integer_value(got));
	else if (json_is_real(got))
		snprintf(val, sizeof(val), " %g", json_real_value(got));
	return rp_error(-EINVAL, "%s: %s%s%s: expected %s, got %s%s", at->file, at->path, at->path[0] ? "." : "",
			key, want, rp_diff_type_name(got), val);
}

static int get_obj(const struct jloc *at, const json_t *o, const char *key, json_t **out_p)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_object(v))
		return bad_field(at, key, "an object", v);
	*out_p = v;
	return 0;
}

static int get_str(const struct jloc *at, const json_t *o, const char *key, bool nonempty, const char **out_p)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v) || (nonempty && json_string_length(v) == 0))
		return bad_field(at, key, nonempty ? "a non-empty string" : "a string", v);
	*out_p = json_string_value(v);
	return 0;
}

static int get_int(const struct jloc *at, const json_t *o, const char *key, json_int_t min, json_int_t max,
		   json_int_t *out_p)
{
	json_t *v = json_object_get(o, key);
	char want[80];

	if (json_is_integer(v) && json_integer_value(v) >= min && json_integer_value(v) <= max) {
		*out_p = json_integer_value(v);
		return 0;
	}
	snprintf(want, sizeof(want), "an integer %lld to %lld", (long long)min, (long long)max);
	return bad_field(at, key, want, v);
}

static int get_num(const struct jloc *at, const json_t *o, const char *key, double min, double max, double *out_p)
{
	json_t *v = json_object_get(o, key);
	char want[80];

	if (json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) >= min &&
	    json_number_value(v) <= max) {
		*out_p = json_number_value(v);
		return 0;
	}
	snprintf(want, sizeof(want), "a number %g to %g", min, max);
	return bad_field(at, key, want, v);
}

static int get_bool(const struct jloc *at, const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_boolean(v) ? 0 : bad_field(at, key, "true or false", v);
}

/* Copy a validated string into a fixed field; too long is a malformed file, not a truncation. */
static int copy_str(const struct jloc *at, const char *key, const char *s, char *dst, size_t len)
{
	if (rp_strlcpy(dst, s, len) != 0)
		return rp_error(-EINVAL, "%s: %s.%s: longer than %zu characters", at->file, at->path, key, len - 1);
	return 0;
}

/* An endpoint object: the identity and every field report.c writes; extra fields must be scalars. */
static int load_ep(const struct jloc *pair_at, const json_t *pair, const char *role, struct rp_diff_ep *ep,
		   json_t **obj_p)
{
	char path[64];
	struct jloc at = { pair_at->file, path };
	const char *s, *key;
	json_int_t i;
	double d;
	json_t *o = NULL, *v;
	int rc;

	rc = get_obj(pair_at, pair, role, &o);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s.%s", pair_at->path, role);
	if ((rc = get_str(&at, o, "node", true, &s)) || (rc = copy_str(&at, "node", s, ep->node, sizeof(ep->node))) ||
	    (rc = get_str(&at, o, "device", true, &s)) ||
	    (rc = copy_str(&at, "device", s, ep->device, sizeof(ep->device))) ||
	    (rc = get_int(&at, o, "port", 0, 255, &i)))
		return rc;
	ep->port = (int)i;
	if ((rc = get_int(&at, o, "gid_index", -1, 65535, &i)) || (rc = get_int(&at, o, "mtu", 0, 1 << 20, &i)) ||
	    (rc = get_num(&at, o, "link_gbps", 0, 1e9, &d)) || (rc = get_str(&at, o, "mem", false, &s)) ||
	    (rc = get_str(&at, o, "mem_reg", false, &s)))
		return rc;
	json_object_foreach(o, key, v) {
		if (json_is_object(v) || json_is_array(v))
			return bad_field(&at, key, "a string, number, boolean or null", v);
	}
	*obj_p = o;
	return 0;
}

/* The latency object: validated though the rules do not read it, so a damaged file is not half-read. */
static int load_latency(const struct jloc *at, const json_t *pair)
{
	char path[64];
	struct jloc lat_at = { at->file, path };
	static const char *const us[] = { "min_us", "median_us", "p99_us", "max_us" };
	json_t *lat = NULL;
	json_int_t i;
	double d;
	int rc = get_obj(at, pair, "latency", &lat);

	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s.latency", at->path);
	if ((rc = get_bool(&lat_at, lat, "measured")) || (rc = get_int(&lat_at, lat, "samples", 0, INT64_MAX, &i)))
		return rc;
	for (size_t k = 0; k < RP_ARRAY_SIZE(us); k++)
		if ((rc = get_num(&lat_at, lat, us[k], 0, 1e12, &d)))
			return rc;
	return 0;
}

int rp_diff_pair_load(const char *file, const json_t *pj, size_t index, struct rp_diff_pair *p)
{
	char path[32];
	struct jloc at = { file, path };
	const char *code;
	json_int_t i;
	double d;
	int rc, st;

	snprintf(path, sizeof(path), "pairs[%zu]", index);
	if (!json_is_object(pj))
		return rp_error(-EINVAL, "%s: %s: expected an object, got %s", file, path, rp_diff_type_name(pj));
	memset(p, 0, sizeof(*p));
	p->index = index;
	if ((rc = load_ep(&at, pj, "src", &p->src, &p->src_obj)) || (rc = load_ep(&at, pj, "dst", &p->dst, &p->dst_obj)) ||
	    (rc = get_str(&at, pj, "status", true, &code)))
		return rc;
	st = rp_status_from_code(code);
	if (st < 0)
		return rp_error(-EINVAL, "%s: %s.status: unknown status \"%s\"", file, path, code);
	p->status = (enum rp_status)st;
	if ((rc = get_str(&at, pj, "reason", false, &p->reason)) || (rc = get_num(&at, pj, "gbps", 0, 1e9, &p->gbps)) ||
	    (rc = get_num(&at, pj, "gbps_min", 0, 1e9, &p->gbps_min)) ||
	    (rc = get_int(&at, pj, "msg_size", p->status == RP_ST_OK ? 1 : 0, INT64_MAX, &i)))
		return rc;
	p->msg_size = (uint64_t)i;
	if ((rc = get_int(&at, pj, "bytes", 0, INT64_MAX, &i)) || (rc = get_int(&at, pj, "iters", 0, INT64_MAX, &i)) ||
	    (rc = get_bool(&at, pj, "verified")) || (rc = get_int(&at, pj, "bad_offset", -1, INT64_MAX, &i)) ||
	    (rc = get_num(&at, pj, "elapsed_s", 0, 1e9, &d)))
		return rc;
	return load_latency(&at, pj);
}

int rp_diff_ep_cmp(const void *x, const void *y)
{
	const struct rp_diff_ep *a = x, *b = y;
	int c = strcmp(a->node, b->node);

	if (!c)
		c = strcmp(a->device, b->device);
	return c ? c : (a->port > b->port) - (a->port < b->port);
}

int rp_diff_pair_key_cmp(const struct rp_diff_pair *a, const struct rp_diff_pair *b)
{
	int c = rp_diff_ep_cmp(&a->src, &b->src);

	if (!c)
		c = rp_diff_ep_cmp(&a->dst, &b->dst);
	return c ? c : (a->key_size > b->key_size) - (a->key_size < b->key_size);
}

/* By key, then by position in the file, so the first of equal keys comes first. */
static int pair_qsort_cmp(const void *a, const void *b)
{
	const struct rp_diff_pair *x = a, *y = b;
	int c = rp_diff_pair_key_cmp(x, y);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* A matrix report that lists only its notable pairs (matrix.pairs_listed.which "notable": failed,
 * flaky, warned; the plain passes counted, not listed): its endpoints (matrix.endpoints), sorted, so
 * that a pair it does not list between two of them reads as a plain pass. */
static int notable_load(struct rp_diff_report *r)
{
	json_t *m = json_object_get(r->root, "matrix"), *listed = json_object_get(m, "pairs_listed");
	json_t *eps = json_object_get(m, "endpoints"), *e;
	const char *which = json_string_value(json_object_get(listed, "which"));
	size_t i;

	r->matrix = strcmp(r->command, "matrix") == 0;
	if (!which || strcmp(which, "notable") != 0)
		return 0;
	r->notable = true;
	r->n_unlisted = (size_t)json_integer_value(json_object_get(listed, "not_listed"));
	if (!json_is_array(eps))
		return bad_field(&(struct jloc){ r->name, "matrix" }, "endpoints", "an array (a notable report names its "
				 "endpoints)", eps);
	r->eps = calloc(json_array_size(eps) + 1, sizeof(*r->eps));
	if (!r->eps)
		return rp_error(-ENOMEM, "%s: out of memory", r->name);
	json_array_foreach(eps, i, e) {
		const char *node = json_string_value(json_object_get(e, "node"));
		const char *dev = json_string_value(json_object_get(e, "device"));
		json_t *port = json_object_get(e, "port");
		struct rp_diff_ep *d = &r->eps[r->n_eps++];

		if (!node || !dev || !json_is_integer(port) || rp_strlcpy(d->node, node, sizeof(d->node)) ||
		    rp_strlcpy(d->device, dev, sizeof(d->device)))
			return rp_error(-EINVAL, "%s: matrix.endpoints[%zu]: expected node, device and port", r->name, i);
		d->port = (int)json_integer_value(port);
	}
	qsort(r->eps, r->n_eps, sizeof(*r->eps), rp_diff_ep_cmp);
	return 0;
}

bool rp_diff_report_has_ep(const struct rp_diff_report *r, const struct rp_diff_ep *ep)
{
	return bsearch(ep, r->eps, r->n_eps, sizeof(*r->eps), rp_diff_ep_cmp) != NULL;
}

/* The top-level fields, then the summary against the pairs it counts (pairs_p NULL: a streamed load,
 * whose pairs are not in the document). */
int rp_diff_head_load(struct rp_diff_report *r, json_t **pairs_p)
{
	const struct jloc at = { r->name, "" };
	const char *s;
	json_int_t schema;
	json_t *summary, *pairs;
	int rc;

	if (!json_is_object(r->root))
		return rp_error(-EINVAL, "%s: expected a JSON object at the top, got %s", r->name, rp_diff_type_name(r->root));
	if ((rc = get_int(&at, r->root, "schema", 0, INT32_MAX, &schema)))
		return rc;
	if (schema != 1)
		return rp_error(-EINVAL, "%s: schema: %lld is not a report schema this version reads (1)", r->name,
				(long long)schema);
	if ((rc = get_str(&at, r->root, "tool", true, &s)))
		return rc;
	if (strcmp(s, "rdmaprobe") != 0)
		return rp_error(-EINVAL, "%s: tool: \"%s\", not an rdmaprobe report", r->name, s);
	if ((rc = get_str(&at, r->root, "command", true, &s)) ||
	    (rc = copy_str(&at, "command", s, r->command, sizeof(r->command))) ||
	    (rc = get_str(&at, r->root, "started", false, &s)) ||
	    (rc = copy_str(&at, "started", s, r->started, sizeof(r->started))) ||
	    (rc = get_str(&at, r->root, "version", false, &s)) || (rc = get_obj(&at, r->root, "summary", &summary)))
		return rc;
	rc = notable_load(r);
	if (rc || !pairs_p)
		return rc;
	pairs = json_object_get(r->root, "pairs");
	if (!json_is_array(pairs))
		return bad_field(&at, "pairs", "an array", pairs);
	*pairs_p = pairs;
	return 0;
}

static int check_summary(const struct rp_diff_report *r)
{
	const struct jloc at = { r->name, "summary" };
	json_t *summary = json_object_get(r->root, "summary");
	json_int_t pairs, ok, failed;
	size_t n_ok = 0;
	int rc;

	for (size_t i = 0; i < r->n; i++)
		n_ok += r->pairs[i].status == RP_ST_OK;
	if ((rc = get_int(&at, summary, "pairs", 0, INT64_MAX, &pairs)) ||
	    (rc = get_int(&at, summary, "ok", 0, INT64_MAX, &ok)) ||
	    (rc = get_int(&at, summary, "failed", 0, INT64_MAX, &failed)))
		return rc;
	if (r->notable && ((size_t)pairs != r->n + r->n_unlisted || (size_t)ok != n_ok + r->n_unlisted ||
			   (size_t)failed != r->n - n_ok))
		return rp_error(-EINVAL, "%s: summary: says %lld pairs, %lld ok, %lld failed; this notable report (matrix."
				"pairs_listed) lists %zu, %zu ok, %zu failed, and counts %zu plain passes it does not list "
				"(a truncated or edited file?)", r->name, (long long)pairs, (long long)ok, (long long)failed,
				r->n, n_ok, r->n - n_ok, r->n_unlisted);
	if (!r->notable && ((size_t)pairs != r->n || (size_t)ok != n_ok || (size_t)failed != r->n - n_ok))
		return rp_error(-EINVAL, "%s: summary: says %lld pairs, %lld ok, %lld failed; \"pairs\" holds %zu, %zu ok, "
				"%zu failed (a truncated or edited file?)", r->name, (long long)pairs, (long long)ok,
				(long long)failed, r->n, n_ok, r->n - n_ok);
	return 0;
}

/* The size a pair that failed before measuring was asked for: the run's config.msg_size. */
static int infer_sizes(struct rp_diff_report *r)
{
	const struct jloc at = { r->name, "config" };
	json_t *cfg = json_object_get(r->root, "config");
	json_int_t size = 0;
	int rc;

	if (cfg && !json_is_object(cfg))
		return bad_field(&(struct jloc){ r->name, "" }, "config", "an object", cfg);
	if (cfg && (rc = get_int(&at, cfg, "msg_size", 1, INT64_MAX, &size)))
		return rc;
	for (size_t i = 0; size && i < r->n; i++)
		if (r->pairs[i].msg_size == 0) {
			r->pairs[i].msg_size = (uint64_t)size;
			r->pairs[i].size_inferred = true;
		}
	/* a matrix measures one size: a direction is its key, so the sweep's 4 KiB probe that failed and
	 * a bandwidth failure of the same direction in another run are the same pair */
	for (size_t i = 0; i < r->n; i++)
		r->pairs[i].key_size = r->matrix ? 0 : r->pairs[i].msg_size;
	return 0;
}

/* Two entries with one key would make the comparison ambiguous: an error, except for failures whose
 * size was inferred (a sweep's failures before measuring), where the first stands for the rest. */
static int check_unique(struct rp_diff_report *r)
{
	char a[RP_NAME_MAX * 2 + 16], b[RP_NAME_MAX * 2 + 16];
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct rp_diff_pair *p = k ? &r->pairs[k - 1] : NULL, *q = &r->pairs[i];

		if (!p || rp_diff_pair_key_cmp(p, q) != 0) {
			r->pairs[k++] = *q;
			continue;
		}
		rp_diff_ep_name(&p->src, a, sizeof(a));
		rp_diff_ep_name(&p->dst, b, sizeof(b));
		if (!(p->size_inferred || q->size_inferred) || p->status == RP_ST_OK || q->status == RP_ST_OK)
			return rp_error(-EINVAL, "%s: pairs[%zu]: the same pair as pairs[%zu] (%s -> %s, msg_size %llu)",
					r->name, q->index > p->index ? q->index : p->index,
					q->index > p->index ? p->index : q->index, a, b, (unsigned long long)p->msg_size);
		rp_warn("%s: pairs[%zu] failed before its size was recorded, like pairs[%zu] (%s -> %s): compared once",
			r->name, q->index, p->index, a, b);
	}
	r->n = k;
	return 0;
}

/* Every string of the tree, keys included, made safe to print (lib/base/sanitize.h): a report is a file
 * from elsewhere, and diff prints its reasons, names and values to a terminal. -ENOMEM or 0. */
int rp_diff_tree_clean(json_t *v)
{
	const char *key;
	json_t *x;
	void *tmp;
	size_t i;

	if (json_is_string(v) && !rp_str_is_clean(json_string_value(v))) {
		char *c = strdup(json_string_value(v));
		int rc = c ? (rp_str_sanitize(c), json_string_set(v, c)) : -1;

		free(c);
		return rc ? -ENOMEM : 0;
	}
	json_array_foreach(v, i, x)
		if (rp_diff_tree_clean(x))
			return -ENOMEM;
	json_object_foreach_safe(v, tmp, key, x) {
		if (rp_diff_tree_clean(x))
			return -ENOMEM;
		if (!rp_str_is_clean(key)) {
			char *c = strdup(key);
			int rc = c ? (rp_str_sanitize(c), json_object_set(v, c, x)) : -1;

			free(c);
			if (rc || json_object_del(v, key))
				return -ENOMEM;
		}
	}
	return 0;
}

int rp_diff_report_from_json(struct rp_diff_report *r, json_t *root, const char *name)
{
	json_t *pairs = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	r->root = root;
	rp_str_sanitize_copy(r->name, sizeof(r->name), name);
	if (rp_diff_tree_clean(root))
		return rp_error(-ENOMEM, "%s: out of memory", r->name);
	rc = rp_diff_head_load(r, &pairs);
	if (rc)
		return rc;
	r->pairs = calloc(json_array_size(pairs) + 1, sizeof(*r->pairs));
	if (!r->pairs)
		return rp_error(-ENOMEM, "%s: out of memory for %zu pairs", name, json_array_size(pairs));
	for (size_t i = 0; i < json_array_size(pairs); i++, r->n++)
		if ((rc = rp_diff_pair_load(r->name, json_array_get(pairs, i), i, &r->pairs[i])))
			return rc;
	return rp_diff_report_finish(r);
}

int rp_diff_report_finish(struct rp_diff_report *r)
{
	int rc = check_summary(r);

	if (!rc)
		rc = infer_sizes(r);
	if (rc)
		return rc;
	qsort(r->pairs, r->n, sizeof(*r->pairs), pair_qsort_cmp);
	return check_unique(r);
}

void rp_diff_report_fini(struct rp_diff_report *r)
{
	json_decref(r->root);
	json_decref(r->kept);
	free(r->pairs);
	free(r->eps);
	for (size_t i = 0; i < r->n_blocks; i++)
		free(r->blocks[i]);
	free(r->blocks);
	memset(r, 0, sizeof(*r));
}

const char *rp_diff_ep_name(const struct rp_diff_ep *ep, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s:%d", ep->node, ep->device, ep->port);
	return buf;
}

int rp_diff_drop_parse(const char *s, double *frac_p)
{
	size_t n = s ? strlen(s) : 0;
	char num[32];
	double d;

	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n + 1);
	if (num[n - 1] == '%') {
		num[n - 1] = '\0';
		if (rp_parse_double(num, 0, 100, &d) != 0 || d >= 100)
			return -EINVAL;
		*frac_p = d / 100;
		return 0;
	}
	if (rp_parse_double(num, 0, 1, &d) != 0 || d >= 1)
		return -EINVAL;
	*frac_p = d;
	return 0;
}
