/* diff_stream.c: rp_diff_report_load, streamed (diff.h): the file is mapped, its top-level keys other
 * than "pairs" parsed into the report's root, and "pairs" read one element at a time, so that a
 * matrix report of 100,000 failures is never one tree in memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare/diff_int.h"
#include "base/log.h"
#include "base/sanitize.h"

#define BLOCK_SIZE (1u << 20)   /* the reasons are kept in blocks of this size */

struct scan {
	const char *buf;
	size_t len, at;
	const char *name;
	int line_err;             /* set once an error has been logged */
};

static void skip_ws(struct scan *s)
{
	while (s->at < s->len && (s->buf[s->at] == ' ' || s->buf[s->at] == '\t' || s->buf[s->at] == '\n' ||
				  s->buf[s->at] == '\r'))
		s->at++;
}

static int syntax(struct scan *s, const char *what)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < s->at && i < s->len; i++) {
		col = s->buf[i] == '\n' ? 1 : col + 1;
		line += s->buf[i] == '\n';
	}
	return rp_error(-EINVAL, "%s: line %zu column %zu: not valid JSON: %s", s->name, line, col, what);
}

/* The end of the value that starts at s->at (not parsed: its extent, strings and nesting followed). */
static int value_end(struct scan *s, size_t *end_p)
{
	size_t i = s->at, depth = 0;
	bool str = false;

	if (i >= s->len)
		return syntax(s, "a value expected");
	if (s->buf[i] != '{' && s->buf[i] != '[' && s->buf[i] != '"') {
		while (i < s->len && !strchr(",}] \t\r\n", s->buf[i]))
			i++;
		*end_p = i;
		return i > s->at ? 0 : syntax(s, "a value expected");
	}
	for (; i < s->len; i++) {
		char c = s->buf[i];

		if (str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				str = false;
			else
				continue;
			if (!str && depth == 0) {
				*end_p = i + 1;
				return 0;
			}
			continue;
		}
		if (c == '"')
			str = true;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0) {
			*end_p = i + 1;
			return 0;
		}
	}
	return syntax(s, "the file ends inside a value (truncated?)");
}

/* Parse buf[at, end) as one JSON value. */
static json_t *parse_span(struct scan *s, size_t end)
{
	json_error_t jerr;
	json_t *v = json_loadb(s->buf + s->at, end - s->at, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);

	if (!v)
		syntax(s, jerr.text);
	return v;
}

/* A copy of str in the report's blocks (they live as long as the report). */
static const char *keep_str(struct rp_diff_report *r, const char *str)
{
	size_t n = strlen(str) + 1;

	if (!r->n_blocks || r->block_used + n > BLOCK_SIZE) {
		char **b = realloc(r->blocks, (r->n_blocks + 1) * sizeof(*b));

		if (!b)
			return NULL;
		r->blocks = b;
		b[r->n_blocks] = malloc(n > BLOCK_SIZE ? n : BLOCK_SIZE);
		if (!b[r->n_blocks])
			return NULL;
		r->n_blocks++;
		r->block_used = 0;
	}
	memcpy(r->blocks[r->n_blocks - 1] + r->block_used, str, n);
	r->block_used += n;
	return r->blocks[r->n_blocks - 1] + r->block_used - n;
}

/* One endpoint object per distinct object: the last kept with the same identity if equal (pairs of
 * one endpoint repeat it thousands of times), else this one, kept. */
struct ep_intern {
	json_t **slot;            /* open addressing by identity hash; NULL empty */
	size_t cap, n;
};

static size_t ep_hash(const struct rp_diff_ep *e)
{
	size_t h = 1469598103934665603ull;

	for (const char *p = e->node; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (const char *p = e->device; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return (h ^ (size_t)e->port) * 1099511628211ull;
}

static json_t *intern(struct rp_diff_report *r, struct ep_intern *t, const struct rp_diff_ep *e, json_t *obj)
{
	if (t->n * 2 + 2 > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		json_t **slot = calloc(cap, sizeof(*slot));

		if (!slot)
			return NULL;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->slot[i])
				continue;
			struct rp_diff_ep k = { .port = (int)json_integer_value(json_object_get(t->slot[i], "port")) };

			snprintf(k.node, sizeof(k.node), "%s", json_string_value(json_object_get(t->slot[i], "node")));
			snprintf(k.device, sizeof(k.device), "%s", json_string_value(json_object_get(t->slot[i], "device")));
			size_t j = ep_hash(&k) & (cap - 1);

			while (slot[j])
				j = (j + 1) & (cap - 1);
			slot[j] = t->slot[i];
		}
		free(t->slot);
		t->slot = slot;
		t->cap = cap;
	}
	for (size_t j = ep_hash(e) & (t->cap - 1);; j = (j + 1) & (t->cap - 1)) {
		if (!t->slot[j]) {
			if (json_array_append(r->kept, obj) != 0)
				return NULL;
			t->slot[j] = obj;
			t->n++;
			return obj;
		}
		if (json_equal(t->slot[j], obj))
			return t->slot[j];
	}
}

/* A pair's keys the rules never read and that hold most of its text (every attempt, both sides' port
 * counters): left out before the element is parsed. */
static bool key_skipped(const char *k, size_t n)
{
	return (n == 10 && memcmp(k, "\"counters\"", 10) == 0) || (n == 10 && memcmp(k, "\"attempts\"", 10) == 0);
}

/* The element at s->at .. end, an object, parsed without its skipped keys (copied into *tmp without
 * them first). NULL: logged. */
static json_t *pair_parse(struct scan *s, size_t end, char **tmp, size_t *cap)
{
	struct scan e = *s;
	size_t n = 0, kend, vend;

	if (s->buf[s->at] != '{')
		return parse_span(s, end);
	if (*cap < end - s->at + 2) {
		char *t = realloc(*tmp, end - s->at + 2);

		if (!t)
			return NULL;
		*tmp = t;
		*cap = end - s->at + 2;
	}
	(*tmp)[n++] = '{';
	e.at = s->at + 1;
	for (;;) {
		skip_ws(&e);
		if (e.at >= end || e.buf[e.at] == '}' || value_end(&e, &kend) != 0)
			break;
		size_t k0 = e.at;

		e.at = kend;
		skip_ws(&e);
		if (e.at >= end || e.buf[e.at] != ':')
			return parse_span(s, end);   /* malformed: the parser names it */
		e.at++;
		skip_ws(&e);
		if (value_end(&e, &vend) != 0)
			return parse_span(s, end);
		if (!key_skipped(e.buf + k0, kend - k0)) {
			if (n > 1)
				(*tmp)[n++] = ',';
			memcpy(*tmp + n, e.buf + k0, vend - k0);
			n += vend - k0;
		}
		e.at = vend;
		skip_ws(&e);
		if (e.at < end && e.buf[e.at] == ',')
			e.at++;
	}
	(*tmp)[n++] = '}';

	json_error_t jerr;
	json_t *v = json_loadb(*tmp, n, JSON_REJECT_DUPLICATES, &jerr);

	return v ? v : parse_span(s, end);
}

/* "pairs": each element parsed, validated, kept compact, freed. */
static int pairs_stream(struct scan *s, struct rp_diff_report *r, struct ep_intern *t)
{
	size_t cap = 0, tmp_cap = 0;
	char *tmp = NULL;
	int out = 0;

	if (s->buf[s->at] != '[') {
		size_t end;
		json_t *v = value_end(s, &end) == 0 ? parse_span(s, end) : NULL;
		int rc = rp_error(-EINVAL, "%s: pairs: expected an array, got %s", r->name, rp_diff_type_name(v));

		json_decref(v);
		return rc;
	}
	s->at++;
	for (;;) {
		size_t end;
		json_t *pj;
		int rc;

		skip_ws(s);
		if (s->at < s->len && s->buf[s->at] == ']' && r->n == 0) {
			s->at++;
			return 0;
		}
		if ((rc = value_end(s, &end)) != 0 || !(pj = pair_parse(s, end, &tmp, &tmp_cap))) {
			out = rc ? rc : -EINVAL;
			break;
		}
		if (r->n == cap) {
			size_t nc = cap ? 2 * cap : 1024;
			struct rp_diff_pair *p = realloc(r->pairs, nc * sizeof(*p));

			if (!p) {
				json_decref(pj);
				out = rp_error(-ENOMEM, "%s: out of memory for %zu pairs", r->name, nc);
				break;
			}
			r->pairs = p;
			cap = nc;
		}
		struct rp_diff_pair *p = &r->pairs[r->n];

		rc = rp_diff_tree_clean(pj) ? rp_error(-ENOMEM, "%s: out of memory", r->name) : 0;
		if (!rc)
			rc = rp_diff_pair_load(r->name, pj, r->n, p);
		if (!rc) {
			p->reason = keep_str(r, p->reason);
			p->src_obj = intern(r, t, &p->src, p->src_obj);
			p->dst_obj = intern(r, t, &p->dst, p->dst_obj);
			if (!p->reason || !p->src_obj || !p->dst_obj)
				rc = rp_error(-ENOMEM, "%s: out of memory", r->name);
		}
		json_decref(pj);
		if (rc) {
			out = rc;
			break;
		}
		r->n++;
		s->at = end;
		skip_ws(s);
		if (s->at < s->len && s->buf[s->at] == ',') {
			s->at++;
			continue;
		}
		if (s->at < s->len && s->buf[s->at] == ']') {
			s->at++;
			break;
		}
		out = syntax(s, "',' or ']' expected in \"pairs\"");
		break;
	}
	free(tmp);
	return out;
}

/* The top-level object: every key but "pairs" into r->root, "pairs" streamed. */
static int top_scan(struct scan *s, struct rp_diff_report *r)
{
	struct ep_intern t = { 0 };
	int rc = 0;

	skip_ws(s);
	if (s->at >= s->len || s->buf[s->at] != '{') {
		size_t end;
		json_t *v = s->at < s->len && value_end(s, &end) == 0 ? parse_span(s, end) : NULL;

		rc = v || s->at >= s->len ? rp_error(-EINVAL, "%s: expected a JSON object at the top, got %s", r->name,
						     rp_diff_type_name(v)) : -EINVAL;
		json_decref(v);
		return rc;
	}
	s->at++;
	for (bool first = true; !rc; first = false) {
		size_t end;
		json_t *key, *v;

		skip_ws(s);
		if (first && s->at < s->len && s->buf[s->at] == '}') {
			s->at++;
			break;
		}
		if ((rc = value_end(s, &end)) != 0)
			break;
		key = s->buf[s->at] == '"' ? parse_span(s, end) : NULL;
		if (!key) {
			rc = syntax(s, "a key expected");
			break;
		}
		s->at = end;
		skip_ws(s);
		if (s->at >= s->len || s->buf[s->at] != ':') {
			json_decref(key);
			rc = syntax(s, "':' expected");
			break;
		}
		s->at++;
		skip_ws(s);
		if (json_object_get(r->root, json_string_value(key)) ||
		    (strcmp(json_string_value(key), "pairs") == 0 && r->pairs)) {
			rc = syntax(s, "duplicate object key");
		} else if (strcmp(json_string_value(key), "pairs") == 0) {
			if (!r->pairs && !(r->pairs = calloc(1, sizeof(*r->pairs))))
				rc = -ENOMEM;
			else
				rc = pairs_stream(s, r, &t);
		} else if ((rc = value_end(s, &end)) == 0) {
			v = parse_span(s, end);
			if (!v)
				rc = -EINVAL;
			else if (rp_diff_tree_clean(v) || rp_diff_tree_clean(key)) {
				json_decref(v);
				rc = -ENOMEM;
			} else {   /* set_new takes v either way */
				rc = json_object_set_new(r->root, json_string_value(key), v) ? -ENOMEM : 0;
			}
			s->at = end;
		}
		json_decref(key);
		skip_ws(s);
		if (rc)
			break;
		if (s->at < s->len && s->buf[s->at] == '}') {
			s->at++;
			break;
		}
		if (s->at >= s->len || s->buf[s->at] != ',')
			rc = syntax(s, "',' or '}' expected");
		else
			s->at++;
	}
	free(t.slot);
	return rc;
}

int rp_diff_report_load(struct rp_diff_report *r, const char *path)
{
	struct scan s = { 0 };
	struct stat st;
	void *map = MAP_FAILED;
	int fd, rc;

	memset(r, 0, sizeof(*r));
	rp_str_sanitize_copy(r->name, sizeof(r->name), path);   /* named in messages: safe to print */
	s.name = r->name;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		return rp_error(rc == -ENOENT ? -ENOENT : rc, "%s: unable to open it: %s", r->name, strerror(-rc));
	}
	if (st.st_size > 0)
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (st.st_size > 0 && map == MAP_FAILED)
		return rp_error(-errno, "%s: cannot map it: %s", r->name, strerror(errno));
	s.buf = st.st_size > 0 ? map : "";
	s.len = (size_t)st.st_size;
	if (map != MAP_FAILED)
		(void)madvise(map, s.len, MADV_SEQUENTIAL);
	r->root = json_object();
	r->kept = json_array();
	rc = r->root && r->kept ? top_scan(&s, r) : -ENOMEM;
	if (!rc) {
		skip_ws(&s);
		if (s.at != s.len)
			rc = syntax(&s, "something after the top-level object");
	}
	if (map != MAP_FAILED)
		munmap(map, s.len);
	if (!rc)
		rc = rp_diff_head_load(r, NULL);   /* the top-level fields first, as a whole document's load */
	if (!rc && !r->pairs)
		rc = rp_error(-EINVAL, "%s: pairs: expected an array, got nothing (missing)", r->name);
	return rc ? rc : rp_diff_report_finish(r);
}
