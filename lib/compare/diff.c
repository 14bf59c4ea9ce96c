/* diff.c: the run-to-run rules over two loaded reports, and their JSON; see diff.h. */
#include "compare/diff.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"

static const char *const kind_codes[RP_DIFF_KIND_COUNT_] = {
	[RP_DIFF_NEW_FAILURE] = "new_failure",
	[RP_DIFF_NOT_MEASURED] = "not_measured",
	[RP_DIFF_DROP] = "drop",
	[RP_DIFF_ENDPOINT_DROP] = "endpoint_drop",
	[RP_DIFF_CHANGED] = "changed",
	[RP_DIFF_RECOVERED] = "recovered",
	[RP_DIFF_STILL_FAILING] = "still_failing",
	[RP_DIFF_ADDED] = "added",
	[RP_DIFF_GONE] = "gone",
	[RP_DIFF_ENDPOINT_GONE] = "endpoint_gone",
	[RP_DIFF_ENDPOINT_NEW] = "endpoint_new",
};

const char *rp_diff_kind_code(enum rp_diff_kind k)
{
	return (int)k >= 0 && k < RP_DIFF_KIND_COUNT_ ? kind_codes[k] : "unknown";
}

/* One endpoint across both reports: its fields in each (field -> array of the distinct values seen)
 * and its bandwidth summed over the pairs ok in both. */
struct ep_acc {
	struct rp_diff_ep ep;
	json_t *fields[2];            /* [0] old, [1] cur; NULL when the report does not have it */
	double sum[2];
	size_t n_pairs;
};

struct cmp {
	struct rp_diff *d;
	const struct rp_diff_report *r[2];
	size_t cap;
	struct ep_acc *eps;
	size_t n_eps;
	double drop;
	int rc;
};

static int ep_key_cmp(const void *a, const void *b)
{
	const struct rp_diff_ep *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	if (!c)
		c = strcmp(x->device, y->device);
	return c ? c : (x->port > y->port) - (x->port < y->port);
}

static struct ep_acc *ep_find(const struct cmp *c, const struct rp_diff_ep *ep)
{
	return bsearch(ep, c->eps, c->n_eps, sizeof(*c->eps), ep_key_cmp);
}

static struct rp_diff_item *item_add(struct cmp *c, enum rp_diff_kind kind, bool regression)
{
	struct rp_diff *d = c->d;
	struct rp_diff_item *it;

	if (c->rc)
		return NULL;
	if (d->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		void *p = realloc(d->items, cap * sizeof(*d->items));

		if (!p) {
			c->rc = rp_error(-ENOMEM, "diff: out of memory for %zu findings", cap);
			return NULL;
		}
		d->items = p;
		c->cap = cap;
	}
	it = &d->items[d->n++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->regression = regression;
	d->count[kind]++;
	d->regression |= regression;
	return it;
}

static void pair_item(struct cmp *c, enum rp_diff_kind kind, bool regression, const struct rp_diff_pair *o,
		      const struct rp_diff_pair *n)
{
	struct rp_diff_item *it = item_add(c, kind, regression);

	if (!it)
		return;
	it->old = o;
	it->cur = n;
	it->old_gbps = o ? o->gbps : 0;
	it->cur_gbps = n ? n->gbps : 0;
}

/* Remember value under key for one side of an endpoint, once per distinct value. */
static int field_note(json_t **fields_p, const char *key, json_t *value)
{
	json_t *arr;
	size_t i;
	json_t *v;

	if (!*fields_p && !(*fields_p = json_object()))
		return -ENOMEM;
	arr = json_object_get(*fields_p, key);
	if (!arr) {
		arr = json_array();
		if (!arr || json_object_set_new(*fields_p, key, arr) != 0)
			return -ENOMEM;
	}
	json_array_foreach(arr, i, v) {
		if (json_equal(v, value))
			return 0;
	}
	return json_array_append(arr, value) ? -ENOMEM : 0;
}

static int ep_note(struct cmp *c, int side, const struct rp_diff_ep *ep, json_t *obj)
{
	struct ep_acc *e = ep_find(c, ep);
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		if (strcmp(key, "node") == 0 || strcmp(key, "device") == 0 || strcmp(key, "port") == 0)
			continue;
		if (field_note(&e->fields[side], key, v))
			return rp_error(-ENOMEM, "diff: out of memory");
	}
	if (!e->fields[side] && !(e->fields[side] = json_object()))
		return rp_error(-ENOMEM, "diff: out of memory");
	return 0;
}

/* Every endpoint either report names, sorted and unique, with its fields per side. */
static int eps_build(struct cmp *c, const struct rp_diff_report *r[2])
{
	size_t n = 2 * (r[0]->n + r[1]->n) + r[0]->n_eps + r[1]->n_eps, k = 0;

	c->eps = calloc(n + 1, sizeof(*c->eps));
	if (!c->eps)
		return rp_error(-ENOMEM, "diff: out of memory for %zu endpoints", n);
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < r[s]->n; i++) {
			c->eps[k++].ep = r[s]->pairs[i].src;
			c->eps[k++].ep = r[s]->pairs[i].dst;
		}
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < r[s]->n_eps; i++)
			c->eps[k++].ep = r[s]->eps[i];
	qsort(c->eps, n, sizeof(*c->eps), ep_key_cmp);
	for (size_t i = 0; i < n; i++)
		if (c->n_eps == 0 || ep_key_cmp(&c->eps[c->n_eps - 1], &c->eps[i]) != 0)
			c->eps[c->n_eps++] = c->eps[i];
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < r[s]->n; i++) {
			int rc = ep_note(c, s, &r[s]->pairs[i].src, r[s]->pairs[i].src_obj);

			if (rc || (rc = ep_note(c, s, &r[s]->pairs[i].dst, r[s]->pairs[i].dst_obj)))
				return rc;
		}
	for (int s = 0; s < 2; s++)   /* a notable report's endpoints are in it, listed pairs or not */
		for (size_t i = 0; i < r[s]->n_eps; i++) {
			struct ep_acc *e = ep_find(c, &r[s]->eps[i]);

			if (!e->fields[s] && !(e->fields[s] = json_object()))
				return rp_error(-ENOMEM, "diff: out of memory");
		}
	return 0;
}

static bool below(double cur, double old, double drop)
{
	return old > 0 && cur < old * (1 - drop);
}

/* Both reports measured the pair. */
static void pair_both(struct cmp *c, const struct rp_diff_pair *o, const struct rp_diff_pair *n)
{
	bool o_ok = o->status == RP_ST_OK, n_ok = n->status == RP_ST_OK;

	c->d->matched++;
	if (o_ok && !n_ok) {
		pair_item(c, RP_DIFF_NEW_FAILURE, true, o, n);
	} else if (!o_ok && n_ok) {
		pair_item(c, RP_DIFF_RECOVERED, false, o, n);
	} else if (!o_ok) {
		pair_item(c, RP_DIFF_STILL_FAILING, false, o, n);
	} else {
		if (below(n->gbps, o->gbps, c->drop))
			pair_item(c, RP_DIFF_DROP, true, o, n);
		if (o->gbps > 0) {
			struct ep_acc *es = ep_find(c, &o->src), *ed = ep_find(c, &o->dst);

			es->sum[0] += o->gbps;
			es->sum[1] += n->gbps;
			es->n_pairs++;
			if (ed != es) {
				ed->sum[0] += o->gbps;
				ed->sum[1] += n->gbps;
				ed->n_pairs++;
			}
		}
	}
}

/* Whether report r, notable, counts the pair of p as a plain pass it did not list. */
static bool unlisted_in(const struct rp_diff_report *r, const struct rp_diff_pair *p)
{
	return r->notable && rp_diff_report_has_ep(r, &p->src) && rp_diff_report_has_ep(r, &p->dst);
}

/* A pair one notable report lists and the other counts as a plain pass without listing it. */
static void pair_unlisted(struct cmp *c, const struct rp_diff_pair *o, const struct rp_diff_pair *n)
{
	const struct rp_diff_pair *p = o ? o : n;
	struct rp_diff_item *it;

	c->d->matched++;
	if (p->status == RP_ST_OK)
		return;   /* ok in both: no rate to compare */
	it = item_add(c, o ? RP_DIFF_RECOVERED : RP_DIFF_NEW_FAILURE, !o);
	if (!it)
		return;
	it->old = o;
	it->cur = n;
	it->old_unlisted = !o;
	it->cur_unlisted = !n;
}

/* One step of the merge: o and/or n (NULL when that report lacks the key). */
static void pair_step(struct cmp *c, const struct rp_diff_pair *o, const struct rp_diff_pair *n)
{
	bool o_measured = o && o->status != RP_ST_INTERRUPTED, n_measured = n && n->status != RP_ST_INTERRUPTED;

	if ((!o && n_measured && unlisted_in(c->r[0], n)) || (!n && o_measured && unlisted_in(c->r[1], o)))
		pair_unlisted(c, o, n);
	else if (o_measured && n_measured)
		pair_both(c, o, n);
	else if (o_measured)
		pair_item(c, o->status == RP_ST_OK ? RP_DIFF_NOT_MEASURED : RP_DIFF_GONE, o->status == RP_ST_OK, o, n);
	else if (n_measured)
		pair_item(c, n->status == RP_ST_OK ? RP_DIFF_ADDED : RP_DIFF_NEW_FAILURE, n->status != RP_ST_OK, o, n);
}

static void pairs_merge(struct cmp *c, const struct rp_diff_report *old, const struct rp_diff_report *cur)
{
	size_t i = 0, j = 0;

	while (i < old->n || j < cur->n) {
		int k = i == old->n ? 1 : j == cur->n ? -1 : rp_diff_pair_key_cmp(&old->pairs[i], &cur->pairs[j]);

		pair_step(c, k <= 0 ? &old->pairs[i] : NULL, k >= 0 ? &cur->pairs[j] : NULL);
		i += k <= 0;
		j += k >= 0;
	}
}

/* The values of one field as text: "400.0" or "\"host\", \"cuda:0\""; "" when absent. */
static void values_text(const json_t *arr, char *buf, size_t len)
{
	size_t i, used = 0;
	json_t *v;

	buf[0] = '\0';
	json_array_foreach(arr, i, v) {
		char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(10));

		if (s && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", s);
		free(s);
	}
}

static bool same_set(const json_t *a, const json_t *b)
{
	size_t i, j;
	json_t *v, *w;

	if (json_array_size(a) != json_array_size(b))
		return false;
	json_array_foreach(a, i, v) {
		bool found = false;

		json_array_foreach(b, j, w)
			found |= json_equal(v, w);
		if (!found)
			return false;
	}
	return true;
}

/* A lower link rate or MTU is a regression (a link trained down); other changes are information. */
static bool change_is_regression(const char *key, const json_t *o, const json_t *n)
{
	if (strcmp(key, "link_gbps") != 0 && strcmp(key, "mtu") != 0)
		return false;
	if (json_array_size(o) != 1 || json_array_size(n) != 1)
		return false;
	return json_number_value(json_array_get(n, 0)) < json_number_value(json_array_get(o, 0));
}

static void field_changed(struct cmp *c, const struct ep_acc *e, const char *key)
{
	json_t *o = json_object_get(e->fields[0], key), *n = json_object_get(e->fields[1], key);
	struct rp_diff_item *it;

	if (same_set(o, n))
		return;
	it = item_add(c, RP_DIFF_CHANGED, change_is_regression(key, o, n));
	if (!it)
		return;
	it->ep = e->ep;
	rp_strlcpy(it->field, key, sizeof(it->field));
	values_text(o, it->old_val, sizeof(it->old_val));
	values_text(n, it->cur_val, sizeof(it->cur_val));
}

static void endpoint_rules(struct cmp *c, const struct ep_acc *e)
{
	const char *key;
	json_t *v;

	if (!e->fields[0] || !e->fields[1]) {
		struct rp_diff_item *it = item_add(c, e->fields[0] ? RP_DIFF_ENDPOINT_GONE : RP_DIFF_ENDPOINT_NEW, false);

		if (it)
			it->ep = e->ep;
		return;
	}
	if (e->n_pairs && below(e->sum[1], e->sum[0], c->drop)) {
		struct rp_diff_item *it = item_add(c, RP_DIFF_ENDPOINT_DROP, true);

		if (it) {
			it->ep = e->ep;
			it->old_gbps = e->sum[0];
			it->cur_gbps = e->sum[1];
			it->n_pairs = e->n_pairs;
		}
	}
	/* a notable report names an endpoint without its fields when none of its pairs is listed */
	bool both_only = c->r[0]->notable || c->r[1]->notable;

	json_object_foreach(e->fields[0], key, v) {
		if (!both_only || json_object_get(e->fields[1], key))
			field_changed(c, e, key);
	}
	json_object_foreach(e->fields[1], key, v) {
		if (!both_only && !json_object_get(e->fields[0], key))
			field_changed(c, e, key);
	}
}

/* Items grouped by kind, each group in the order it was found (key order). */
static int items_group(struct rp_diff *d)
{
	struct rp_diff_item *sorted;
	size_t k = 0;

	if (d->n == 0)
		return 0;
	sorted = malloc(d->n * sizeof(*sorted));
	if (!sorted)
		return rp_error(-ENOMEM, "diff: out of memory");
	for (int kind = 0; kind < RP_DIFF_KIND_COUNT_; kind++)
		for (size_t i = 0; i < d->n; i++)
			if ((int)d->items[i].kind == kind)
				sorted[k++] = d->items[i];
	free(d->items);
	d->items = sorted;
	return 0;
}

int rp_diff_compare(const struct rp_diff_report *old, const struct rp_diff_report *cur, double drop,
		    struct rp_diff *d)
{
	const struct rp_diff_report *r[2] = { old, cur };
	struct cmp c = { .d = d, .r = { old, cur }, .drop = drop };

	memset(d, 0, sizeof(*d));
	d->drop = drop;
	c.rc = eps_build(&c, r);
	if (!c.rc)
		pairs_merge(&c, old, cur);
	for (size_t i = 0; !c.rc && i < c.n_eps; i++)
		endpoint_rules(&c, &c.eps[i]);
	for (size_t i = 0; c.eps && i < c.n_eps; i++) {
		json_decref(c.eps[i].fields[0]);
		json_decref(c.eps[i].fields[1]);
	}
	free(c.eps);
	return c.rc ? c.rc : items_group(d);
}

void rp_diff_fini(struct rp_diff *d)
{
	free(d->items);
	d->items = NULL;
	d->n = 0;
}

/* Add key = value, counting a failure (jansson returns -1 on out of memory or a NULL value). */
static void jset(json_t *o, const char *key, json_t *value, int *bad)
{
	if (!value || json_object_set_new(o, key, value) != 0)
		(*bad)++;
}

static json_t *side_json(const struct rp_diff_pair *p, bool unlisted, int *bad)
{
	json_t *o;

	if (!p && unlisted)
		return json_pack("{s:s, s:b}", "status", "ok", "unlisted", 1);
	if (!p)
		return json_null();
	o = json_object();
	if (!o) {
		(*bad)++;
		return NULL;
	}
	jset(o, "status", json_string(rp_status_code(p->status)), bad);
	jset(o, "reason", json_string(p->reason), bad);
	jset(o, "gbps", json_real(p->gbps), bad);
	jset(o, "gbps_min", json_real(p->gbps_min), bad);
	jset(o, "index", json_integer((json_int_t)p->index), bad);
	return o;
}

static json_t *item_json(const struct rp_diff_item *it)
{
	json_t *o = json_object();
	char a[RP_NAME_MAX * 2 + 16];
	int bad = !o;

	if (bad)
		return NULL;
	jset(o, "kind", json_string(rp_diff_kind_code(it->kind)), &bad);
	jset(o, "regression", json_boolean(it->regression), &bad);
	if (it->old || it->cur) {
		const struct rp_diff_pair *p = it->old ? it->old : it->cur;

		jset(o, "src", json_string(rp_diff_ep_name(&p->src, a, sizeof(a))), &bad);
		jset(o, "dst", json_string(rp_diff_ep_name(&p->dst, a, sizeof(a))), &bad);
		jset(o, "msg_size", json_integer((json_int_t)p->msg_size), &bad);
		jset(o, "old", side_json(it->old, it->old_unlisted, &bad), &bad);
		jset(o, "new", side_json(it->cur, it->cur_unlisted, &bad), &bad);
	} else {
		jset(o, "endpoint", json_string(rp_diff_ep_name(&it->ep, a, sizeof(a))), &bad);
	}
	if (it->kind == RP_DIFF_ENDPOINT_DROP) {
		jset(o, "old_gbps", json_real(it->old_gbps), &bad);
		jset(o, "new_gbps", json_real(it->cur_gbps), &bad);
		jset(o, "pairs", json_integer((json_int_t)it->n_pairs), &bad);
	}
	if (it->kind == RP_DIFF_DROP || it->kind == RP_DIFF_ENDPOINT_DROP)
		jset(o, "change", json_real(it->old_gbps > 0 ? it->cur_gbps / it->old_gbps - 1 : 0), &bad);
	if (it->kind == RP_DIFF_CHANGED) {
		jset(o, "field", json_string(it->field), &bad);
		jset(o, "old_value", json_string(it->old_val), &bad);
		jset(o, "new_value", json_string(it->cur_val), &bad);
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *report_json(const struct rp_diff_report *r, int *bad)
{
	json_t *o = json_object();

	if (!o) {
		(*bad)++;
		return NULL;
	}
	jset(o, "file", json_string(r->name), bad);
	jset(o, "command", json_string(r->command), bad);
	jset(o, "started", json_string(r->started), bad);
	jset(o, "pairs", json_integer((json_int_t)r->n), bad);
	jset(o, "notable", json_boolean(r->notable), bad);
	jset(o, "unlisted", json_integer((json_int_t)r->n_unlisted), bad);
	jset(o, "simulated", json_boolean(rp_diff_report_simulated(r)), bad);
	return o;
}

bool rp_diff_report_simulated(const struct rp_diff_report *r)
{
	return json_is_true(json_object_get(r->root, "simulated"));
}

json_t *rp_diff_json(const struct rp_diff *d, const struct rp_diff_report *old, const struct rp_diff_report *cur)
{
	json_t *root = json_object(), *counts = json_object(), *items = json_array();
	int bad = !root || !counts || !items;

	for (int k = 0; !bad && k < RP_DIFF_KIND_COUNT_; k++)
		jset(counts, rp_diff_kind_code((enum rp_diff_kind)k), json_integer((json_int_t)d->count[k]), &bad);
	for (size_t i = 0; !bad && i < d->n; i++) {
		json_t *it = item_json(&d->items[i]);

		if (!it || json_array_append_new(items, it) != 0)
			bad++;
	}
	if (!bad) {
		jset(root, "old", report_json(old, &bad), &bad);
		jset(root, "new", report_json(cur, &bad), &bad);
		jset(root, "drop", json_real(d->drop), &bad);
		jset(root, "regression", json_boolean(d->regression), &bad);
		jset(root, "matched", json_integer((json_int_t)d->matched), &bad);
		jset(root, "counts", counts, &bad);
		counts = NULL;
		jset(root, "items", items, &bad);
		items = NULL;
	}
	json_decref(counts);
	json_decref(items);
	if (bad) {
		json_decref(root);
		rp_error(-ENOMEM, "diff: out of memory building the JSON");
		return NULL;
	}
	return root;
}
