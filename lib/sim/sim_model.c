/* sim_model.c: the fabric model's parser and time model; see sim_model.h. */
#include "sim/sim_model.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/counters.h"
#include "engine/engine.h"
#include "sim/sim_fabric.h"
#include "base/util.h"

#define LINE_MAX_LEN 1024
#define MAX_WORDS 8

/* The parser's state: the model, which settings were seen, and the error. */
struct parse {
	struct rp_sim_model *m;
	struct rp_sim_error *err;
	unsigned line;
	bool seen[32];
	unsigned digits_line;         /* where node-digits was given */
	bool named;                   /* an override resolved names: naming settings are closed */
};

static int perr(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record the error of the current line; returns -EINVAL. */
static int perr(struct parse *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	p->err->line = p->line;
	n = snprintf(p->err->msg, sizeof(p->err->msg), "line %u: ", p->line);
	va_start(ap, fmt);
	vsnprintf(p->err->msg + n, sizeof(p->err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int digits_of(uint32_t v)
{
	int d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

void rp_sim_ep_names(const struct rp_sim_model *m, uint32_t e, char *node, size_t node_len, char *dev,
		     size_t dev_len)
{
	snprintf(node, node_len, "%s%0*u", m->node_prefix, m->node_digits, e / m->adapters);
	snprintf(dev, dev_len, "%s%u", m->device_prefix, e % m->adapters);
}

/* A decimal number after a prefix, exactly: "node0003" with prefix "node" -> 3; -1 when not. */
static long number_after(const char *s, size_t len, const char *prefix, int digits)
{
	size_t pl = strlen(prefix);
	long v = 0;

	if (len <= pl || strncmp(s, prefix, pl) != 0 || len - pl > 9)
		return -1;
	if (digits > 0 && len - pl != (size_t)digits)
		return -1;    /* node0003 is not node3 when names are padded */
	for (size_t i = pl; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (digits == 0 && len - pl > 1 && s[pl] == '0')
		return -1;
	return v;
}

int rp_sim_ep_find(const struct rp_sim_model *m, const char *node, const char *dev, uint32_t *e_p)
{
	long n = number_after(node, strlen(node), m->node_prefix, m->node_digits);
	long d = number_after(dev, strlen(dev), m->device_prefix, 0);

	if (n < 0 || d < 0 || n >= (long)m->nodes || d >= (long)m->adapters)
		return -ENOENT;
	*e_p = (uint32_t)n * m->adapters + (uint32_t)d;
	return 0;
}

/* NODE/DEVICE to its endpoint number. 0 or -EINVAL (the error recorded). */
static int ep_resolve(struct parse *p, const char *kw, const char *name, uint32_t *e_p)
{
	const struct rp_sim_model *m = p->m;
	const char *slash = strchr(name, '/');
	long n, d;

	if (!slash)
		return perr(p, "%s: endpoint '%s' is not NODE/DEVICE (e.g. %s%0*u/%s0)", kw, name, m->node_prefix,
			    m->node_digits, 0u, m->device_prefix);
	n = number_after(name, (size_t)(slash - name), m->node_prefix, m->node_digits);
	d = number_after(slash + 1, strlen(slash + 1), m->device_prefix, 0);
	if (n < 0 || d < 0 || n >= (long)m->nodes || d >= (long)m->adapters)
		return perr(p, "%s: no endpoint '%s' in this fabric (%u nodes %s%0*u..%s%0*u, devices %s0..%s%u)", kw,
			    name, m->nodes, m->node_prefix, m->node_digits, 0u, m->node_prefix, m->node_digits,
			    m->nodes - 1, m->device_prefix, m->device_prefix, m->adapters - 1);
	*e_p = (uint32_t)n * m->adapters + (uint32_t)d;
	return 0;
}

/* A rate in Gb/s: "390" or "390G". */
static int parse_gbps(const char *s, double min, double max, double *out_p)
{
	char buf[64];
	size_t n = strlen(s);

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n + 1);
	if (buf[n - 1] == 'G' || buf[n - 1] == 'g')
		buf[n - 1] = '\0';
	return rp_parse_double(buf, min, max, out_p);
}

/* A setting's value check messages: -EINVAL for a malformed one, -ERANGE out of range. */
static int bad_value(struct parse *p, const char *kw, const char *v, int rc, const char *what)
{
	return perr(p, "%s: '%s' is %s (%s)", kw, v, rc == -ERANGE ? "out of range" : "not a valid value", what);
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= RP_SIM_PREFIX_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return s[n - 1] < '0' || s[n - 1] > '9';   /* the number must start where the prefix ends */
}

enum kw_id {
	KW_NODES, KW_ADAPTERS, KW_NODE_PREFIX, KW_NODE_DIGITS, KW_DEVICE_PREFIX, KW_RATE, KW_BANDWIDTH,
	KW_LATENCY, KW_SETUP, KW_OVERHEAD, KW_RANDOM_DEAD, KW_DEAD, KW_LOSSY, KW_SLOW, KW_DEAD_EP, KW_SLOW_EP,
	KW_FABRIC, KW_FAULT,
};

static const struct {
	const char *name;
	int args;
	bool setting;                 /* at most once */
	bool naming;                  /* must come before the first override */
} keywords[] = {
	[KW_NODES] = { "nodes", 1, true, true },           [KW_ADAPTERS] = { "adapters", 1, true, true },
	[KW_NODE_PREFIX] = { "node-prefix", 1, true, true }, [KW_NODE_DIGITS] = { "node-digits", 1, true, true },
	[KW_DEVICE_PREFIX] = { "device-prefix", 1, true, true }, [KW_RATE] = { "rate", 1, true, false },
	[KW_BANDWIDTH] = { "bandwidth", 1, true, false },  [KW_LATENCY] = { "latency", 1, true, false },
	[KW_SETUP] = { "setup", 1, true, false },          [KW_OVERHEAD] = { "round-overhead", 1, true, false },
	[KW_RANDOM_DEAD] = { "random-dead", 2, true, false }, [KW_DEAD] = { "dead", 2, false, false },
	[KW_LOSSY] = { "lossy", 3, false, false },         [KW_SLOW] = { "slow", 3, false, false },
	[KW_DEAD_EP] = { "dead-endpoint", 1, false, false }, [KW_SLOW_EP] = { "slow-endpoint", 2, false, false },
	[KW_FABRIC] = { "fabric", 3, true, false },        [KW_FAULT] = { "fault", 3, false, false },
};

/* A setting with one value. */
static int setting(struct parse *p, enum kw_id k, char **w)
{
	struct rp_sim_model *m = p->m;
	const char *kw = keywords[k].name, *v = w[1];
	uint64_t u = 0;
	int rc = 0;

	switch (k) {
	case KW_NODES:
		rc = rp_parse_u64(v, 1, RP_SIM_MAX_NODES, false, &u);
		m->nodes = (uint32_t)u;
		return rc ? bad_value(p, kw, v, rc, "1 to 65536") : 0;
	case KW_ADAPTERS:
		rc = rp_parse_u64(v, 1, RP_SIM_MAX_ADAPTERS, false, &u);
		m->adapters = (uint32_t)u;
		return rc ? bad_value(p, kw, v, rc, "1 to 64") : 0;
	case KW_NODE_DIGITS:
		rc = rp_parse_int(v, 0, 9, &m->node_digits);
		p->digits_line = p->line;
		return rc ? bad_value(p, kw, v, rc, "0 to 9") : 0;
	case KW_NODE_PREFIX:
	case KW_DEVICE_PREFIX:
		if (!name_ok(v))
			return perr(p, "%s: '%s' is not a name prefix (1 to %d of A-Z a-z 0-9 . _ -, not ending in a digit)",
				    kw, v, RP_SIM_PREFIX_MAX - 1);
		rp_strlcpy(k == KW_NODE_PREFIX ? m->node_prefix : m->device_prefix, v, RP_SIM_PREFIX_MAX);
		return 0;
	case KW_RATE:
		rc = parse_gbps(v, 0.001, 1e6, &m->rate_gbps);
		return rc ? bad_value(p, kw, v, rc, "Gb/s, 0.001 to 1e6") : 0;
	case KW_BANDWIDTH:
		rc = parse_gbps(v, 0.001, 1e6, &m->bw_gbps);
		return rc ? bad_value(p, kw, v, rc, "Gb/s, 0.001 to 1e6") : 0;
	case KW_LATENCY:
		rc = rp_parse_seconds(v, 0, 10, &m->latency_s);
		return rc ? bad_value(p, kw, v, rc, "a duration, 0 to 10 s") : 0;
	case KW_SETUP:
		rc = rp_parse_seconds(v, 0, 3600, &m->setup_s);
		return rc ? bad_value(p, kw, v, rc, "a duration, 0 to 3600 s") : 0;
	case KW_OVERHEAD:
		rc = rp_parse_seconds(v, 0, 3600, &m->round_overhead_s);
		return rc ? bad_value(p, kw, v, rc, "a duration, 0 to 3600 s") : 0;
	case KW_RANDOM_DEAD:
		rc = rp_parse_double(v, 0, 1, &m->random_dead);
		if (rc)
			return bad_value(p, kw, v, rc, "a probability, 0 to 1");
		rc = rp_parse_u64(w[2], 0, UINT64_MAX, false, &m->random_seed);
		return rc ? bad_value(p, kw, w[2], rc, "a seed, 0 to 2^64-1") : 0;
	default:
		return perr(p, "%s: internal: not a setting", kw);
	}
}

static int ovr_cmp(const void *x, const void *y)
{
	const struct rp_sim_override *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* By link, then by line: a link's overrides in the order the file gives them. */
static int ovr_line_cmp(const void *x, const void *y)
{
	const struct rp_sim_override *a = x, *b = y;
	int c = ovr_cmp(x, y);

	return c ? c : (a->line > b->line) - (a->line < b->line);
}

/* Sort the overrides (n log n) and refuse a link given twice, naming the first line that repeats one
 * (the error an insertion-time search gave, at its cost of n^2 / 2 comparisons). */
static int ovr_dup_check(struct parse *p)
{
	static const char *const kind_kw[] = { [RP_SIM_LINK_DEAD] = "dead", [RP_SIM_LINK_LOSSY] = "lossy",
					       [RP_SIM_LINK_SLOW] = "slow" };
	struct rp_sim_model *m = p->m;
	const struct rp_sim_override *dup = NULL;
	char na[64], da[64], nb[64], db[64];

	if (!m->n_ovr)
		return 0;
	if (m->n_ovr > 1)   /* qsort's array may be NULL when empty */
		qsort(m->ovr, m->n_ovr, sizeof(*m->ovr), ovr_line_cmp);
	for (size_t i = 1; i < m->n_ovr; i++)
		if (ovr_cmp(&m->ovr[i - 1], &m->ovr[i]) == 0 && (!dup || m->ovr[i].line < dup->line))
			dup = &m->ovr[i];
	if (!dup)
		return 0;
	rp_sim_ep_names(m, dup->a, na, sizeof(na), da, sizeof(da));
	rp_sim_ep_names(m, dup->b, nb, sizeof(nb), db, sizeof(db));
	p->line = dup->line;
	return perr(p, "%s: the link %s/%s - %s/%s already has an override", kind_kw[dup->kind], na, da, nb, db);
}

/* Close the naming settings at the first override: fill the defaults, check what is required. */
static int names_close(struct parse *p, const char *kw)
{
	struct rp_sim_model *m = p->m;

	if (p->named)
		return 0;
	if (!p->seen[KW_NODES] || !p->seen[KW_ADAPTERS])
		return perr(p, "%s: 'nodes' and 'adapters' must come before the first override", kw);
	if ((uint64_t)m->nodes * m->adapters > RP_SIM_MAX_EPS)
		return perr(p, "%s: %u nodes x %u adapters is more than %u endpoints", kw, m->nodes, m->adapters,
			    RP_SIM_MAX_EPS);
	if (!p->seen[KW_NODE_DIGITS]) {
		m->node_digits = digits_of(m->nodes - 1);
	} else if (m->node_digits > 0 && digits_of(m->nodes - 1) > m->node_digits) {
		/* the names would not be fixed-width: node9 and node10 with node-digits 1, which the run
		 * then failed on; refused here, naming the line */
		p->line = p->digits_line;
		return perr(p, "node-digits: %d is too few for %u nodes (node numbers up to %u need %d; 0: no padding)",
			    m->node_digits, m->nodes, m->nodes - 1, digits_of(m->nodes - 1));
	}
	m->dead_ep = calloc(rp_sim_n_eps(m), sizeof(*m->dead_ep));
	m->slow_ep = calloc(rp_sim_n_eps(m), sizeof(*m->slow_ep));
	m->slow_ep_line = calloc(rp_sim_n_eps(m), sizeof(*m->slow_ep_line));
	if (!m->dead_ep || !m->slow_ep || !m->slow_ep_line)
		return -ENOMEM;
	p->named = true;
	return 0;
}

/* An override line. */
static int override(struct parse *p, enum kw_id k, char **w)
{
	struct rp_sim_model *m = p->m;
	const char *kw = keywords[k].name;
	struct rp_sim_override o = { 0 };
	uint32_t a, b;
	int rc = names_close(p, kw);

	if (rc)
		return rc;
	if (k == KW_FABRIC || k == KW_FAULT) {     /* lib/sim/sim_fabric.h */
		char msg[200];

		rc = k == KW_FABRIC ? rp_sim_fabric_parse(m, w, msg, sizeof(msg)) : rp_sim_fault_parse(m, w, msg, sizeof(msg));
		return rc == -EINVAL ? perr(p, "%s", msg) : rc;
	}
	if (ep_resolve(p, kw, w[1], &a))
		return -EINVAL;
	if (k == KW_DEAD_EP) {
		if (m->dead_ep[a])
			return perr(p, "%s: %s is already dead", kw, w[1]);
		m->dead_ep[a] = true;
		return 0;
	}
	if (k == KW_SLOW_EP) {
		if (m->slow_ep[a] > 0)
			return perr(p, "%s: %s is already slow", kw, w[1]);
		if (parse_gbps(w[2], 0, 1e6, &m->slow_ep[a]) != 0 || m->slow_ep[a] <= 0) {
			m->slow_ep[a] = 0;
			return perr(p, "%s: '%s' is not a bandwidth in Gb/s above 0", kw, w[2]);
		}
		m->slow_ep_line[a] = p->line;
		return 0;
	}
	if (ep_resolve(p, kw, w[2], &b))
		return -EINVAL;
	if (a == b)
		return perr(p, "%s: %s and %s are the same endpoint: a link has two ends", kw, w[1], w[2]);
	o = (struct rp_sim_override){ .a = a < b ? a : b, .b = a < b ? b : a, .line = p->line };
	if (k == KW_DEAD) {
		o.kind = RP_SIM_LINK_DEAD;
	} else if (k == KW_LOSSY) {
		o.kind = RP_SIM_LINK_LOSSY;
		rc = rp_parse_double(w[3], 0, 1, &o.value);
		if (rc || o.value <= 0 || o.value >= 1)
			return perr(p, "%s: loss '%s' is not in (0, 1) (a fraction of packets; 'dead' for all)", kw, w[3]);
	} else {
		o.kind = RP_SIM_LINK_SLOW;
		rc = parse_gbps(w[3], 0, 1e6, &o.value);
		if (rc || o.value <= 0)
			return perr(p, "%s: '%s' is not a bandwidth in Gb/s above 0", kw, w[3]);
	}
	/* a link given twice is found once every override is read, after one sort (ovr_dup_check): a
	 * search here made 40,000 lines take seconds */
	if (m->n_ovr == m->cap_ovr) {
		size_t cap = m->cap_ovr ? 2 * m->cap_ovr : 16;
		struct rp_sim_override *n = realloc(m->ovr, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		m->ovr = n;
		m->cap_ovr = cap;
	}
	m->ovr[m->n_ovr++] = o;
	return 0;
}

/* One line (NUL-terminated, no newline). */
static int parse_line(struct parse *p, char *s)
{
	char *w[MAX_WORDS + 1], *hash = strchr(s, '#'), *save = NULL;
	int n = 0;

	if (hash)
		*hash = '\0';
	for (char *t = strtok_r(s, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (n == MAX_WORDS)
			return perr(p, "too many words");
		w[n++] = t;
	}
	if (n == 0)
		return 0;
	for (size_t k = 0; k < RP_ARRAY_SIZE(keywords); k++) {
		if (strcmp(w[0], keywords[k].name) != 0)
			continue;
		if (n - 1 != keywords[k].args)
			return perr(p, "%s takes %d value%s, not %d", w[0], keywords[k].args, keywords[k].args == 1 ? "" : "s",
				    n - 1);
		if (keywords[k].setting && p->seen[k])
			return perr(p, "%s is set twice", w[0]);
		if (keywords[k].naming && p->named)
			return perr(p, "%s must come before the first override (the names are fixed by then)", w[0]);
		p->seen[k] = true;
		return keywords[k].setting && k != KW_FABRIC ? setting(p, (enum kw_id)k, w) : override(p, (enum kw_id)k, w);
	}
	return perr(p, "unknown keyword '%s' (nodes, adapters, node-prefix, node-digits, device-prefix, rate, "
		    "bandwidth, latency, setup, round-overhead, random-dead, dead, lossy, slow, dead-endpoint, fabric, fault)", w[0]);
}

/* After the last line: what is required, and the defaults that depend on other settings. */
static int parse_finish(struct parse *p)
{
	struct rp_sim_model *m = p->m;
	int rc;

	p->line = 0;
	if (!p->seen[KW_NODES] || !p->seen[KW_ADAPTERS]) {
		p->err->line = 0;
		snprintf(p->err->msg, sizeof(p->err->msg), "the model has no '%s' line (required)",
			 p->seen[KW_NODES] ? "adapters" : "nodes");
		return -EINVAL;
	}
	if ((rc = names_close(p, "the model")) != 0)
		return rc;
	if (!p->seen[KW_BANDWIDTH])
		m->bw_gbps = 0.97 * m->rate_gbps;
	if (m->bw_gbps > m->rate_gbps) {
		p->err->line = 0;
		snprintf(p->err->msg, sizeof(p->err->msg), "bandwidth %g Gb/s is above the link rate %g Gb/s", m->bw_gbps,
			 m->rate_gbps);
		return -EINVAL;
	}
	for (size_t i = 0; i < m->n_ovr; i++)
		if (m->ovr[i].kind == RP_SIM_LINK_SLOW && m->ovr[i].value > m->rate_gbps) {
			p->line = m->ovr[i].line;
			return perr(p, "slow: %g Gb/s is above the link rate %g Gb/s", m->ovr[i].value, m->rate_gbps);
		}
	for (size_t e = 0; e < rp_sim_n_eps(m); e++)
		if (m->slow_ep[e] > m->rate_gbps) {
			p->line = m->slow_ep_line[e];
			return perr(p, "slow-endpoint: %g Gb/s is above the link rate %g Gb/s", m->slow_ep[e], m->rate_gbps);
		}
	return ovr_dup_check(p);
}

int rp_sim_model_parse(const char *text, size_t len, struct rp_sim_model *m, struct rp_sim_error *err)
{
	struct parse p = { .m = m, .err = err };
	char line[LINE_MAX_LEN + 1];
	size_t pos = 0;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	memset(err, 0, sizeof(*err));
	strcpy(m->node_prefix, "node");
	strcpy(m->device_prefix, "mlx5_");
	m->rate_gbps = 400;
	m->latency_s = 2e-6;
	m->setup_s = 0.025;
	m->round_overhead_s = 0.005;
	while (pos < len && rc == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		p.line++;
		if (n > LINE_MAX_LEN)
			rc = perr(&p, "longer than %d characters", LINE_MAX_LEN);
		else if (memchr(text + pos, '\0', n))
			rc = perr(&p, "a NUL byte in the line (not a text file?)");
		if (rc == 0) {
			memcpy(line, text + pos, n);
			line[n] = '\0';
			rc = parse_line(&p, line);
		}
		pos += n + 1;
	}
	if (rc == 0)
		rc = parse_finish(&p);
	if (rc)
		rp_sim_model_fini(m);
	return rc;
}

int rp_sim_model_load(const char *path, struct rp_sim_model *m, struct rp_sim_error *err)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	int rc;

	memset(m, 0, sizeof(*m));
	memset(err, 0, sizeof(*err));
	if (!f) {
		rc = -errno;
		snprintf(err->msg, sizeof(err->msg), "open %s: %s", path, strerror(-rc));
		return rc;
	}
	do {
		if (len + 4096 > cap) {
			char *n = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!n || cap > (64u << 20)) {
				free(n ? n : buf);
				fclose(f);
				snprintf(err->msg, sizeof(err->msg), "%s: %s", path, n ? "larger than 64 MiB" : "out of memory");
				return n ? -EFBIG : -ENOMEM;
			}
			buf = n;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	rc = ferror(f) ? -EIO : 0;
	fclose(f);
	if (rc)
		snprintf(err->msg, sizeof(err->msg), "read %s: %s", path, strerror(EIO));
	else
		rc = rp_sim_model_parse(buf, len, m, err);
	free(buf);
	return rc;
}

void rp_sim_model_fini(struct rp_sim_model *m)
{
	free(m->ovr);
	free(m->dead_ep);
	free(m->slow_ep);
	free(m->slow_ep_line);
	rp_sim_fabric_free(m->fabric);
	m->fabric = NULL;
	m->ovr = NULL;
	m->dead_ep = NULL;
	m->slow_ep = NULL;
	m->slow_ep_line = NULL;
	m->n_ovr = m->cap_ovr = 0;
}

/* A 64-bit mix (splitmix64's finaliser) for the random dead pairs. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

enum rp_sim_link rp_sim_link_of(const struct rp_sim_model *m, uint32_t a, uint32_t b, double *value_p)
{
	struct rp_sim_override key = { .a = a < b ? a : b, .b = a < b ? b : a };
	const struct rp_sim_override *o = m->n_ovr ? bsearch(&key, m->ovr, m->n_ovr, sizeof(key), ovr_cmp) : NULL;

	*value_p = 0;
	if (o) {
		*value_p = o->value;
		return o->kind;
	}
	if (m->dead_ep && (m->dead_ep[a] || m->dead_ep[b]))
		return RP_SIM_LINK_DEAD;
	if (m->random_dead > 0) {
		uint64_t h = mix64(m->random_seed ^ mix64(((uint64_t)key.a << 32) | key.b));

		if ((double)(h >> 11) * 0x1.0p-53 < m->random_dead)
			return RP_SIM_LINK_DEAD;
	}
	if (m->slow_ep && (m->slow_ep[a] > 0 || m->slow_ep[b] > 0)) {
		/* the slower end's rate: a link runs no faster than either adapter */
		*value_p = m->slow_ep[a] > 0 && (m->slow_ep[b] <= 0 || m->slow_ep[a] < m->slow_ep[b]) ? m->slow_ep[a] : m->slow_ep[b];
		return RP_SIM_LINK_SLOW;
	}
	return RP_SIM_LINK_OK;
}

double rp_sim_dead_time(const struct rp_sim_model *m, const struct rp_engine_cfg *cfg, enum rp_status *status_p)
{
	double ack = 4.096e-6 * ldexp(1.0, cfg->qp.qp_timeout), retry = ack * (cfg->qp.retry_cnt + 1), run, probe;

	if (cfg->cm) {
		*status_p = RP_ST_TIMEOUT;
		return m->setup_s + cfg->timeout_s;
	}
	*status_p = retry < cfg->timeout_s ? RP_ST_RETRY_EXCEEDED : RP_ST_TIMEOUT;
	run = retry < cfg->timeout_s ? retry : cfg->timeout_s;
	probe = retry < RP_ENGINE_MTUCHECK_TIMEOUT_S ? retry : RP_ENGINE_MTUCHECK_TIMEOUT_S;
	if (cfg->meas.mode != RP_MODE_BW || cfg->no_mtucheck)
		return m->setup_s + run;
	/* the probe's small write does not arrive either, so its MTU-size one is never tried */
	return m->setup_s + run + m->setup_s + probe;
}

/* Bytes one direction moves, and the seconds of traffic. */
static double traffic_s(const struct rp_engine_meas *meas, double bw_gbps, uint64_t *bytes_p, uint64_t *iters_p)
{
	double Bps = bw_gbps * 1e9 / 8, warm = (double)meas->msg_size * (double)meas->warmup_iters;

	if (meas->duration_s > 0) {
		*bytes_p = (uint64_t)(Bps * meas->duration_s);
		*iters_p = meas->msg_size ? *bytes_p / meas->msg_size : 0;
		return warm / Bps + meas->duration_s;
	}
	*iters_p = meas->iters;
	*bytes_p = meas->msg_size * meas->iters;
	return (warm + (double)*bytes_p) / Bps;
}

/* The port counters each side of a direction lists as a real one does (lib/health/counters.h): measured,
 * judged ok, and the packet counters that moved (class "other", listed; the byte counters are
 * traffic, never listed): the sender's data packets out and the ACKs in, the receiver's the other
 * way round, one ACK per 16 packets. A dead link's sender moved its retries, its receiver nothing. */
static void sim_counters(struct rp_pair_result *res, uint64_t pkts_out, uint64_t acks_in)
{
	struct rp_pair_ctr_side *sides[2] = { &res->counters.src, &res->counters.dst };
	const uint64_t tx[2] = { pkts_out, acks_in }, rx[2] = { acks_in, pkts_out };

	for (int k = 0; k < 2; k++) {
		struct rp_pair_ctr_side *s = sides[k];

		s->measured = 1;
		s->verdict = RP_CV_OK;
		s->cls = RP_CC_OTHER;
		if (tx[k]) {
			rp_strlcpy(s->c[s->n].name, "port_xmit_packets", sizeof(s->c[s->n].name));
			s->c[s->n++].delta = tx[k];
		}
		if (rx[k]) {
			rp_strlcpy(s->c[s->n].name, "port_rcv_packets", sizeof(s->c[s->n].name));
			s->c[s->n++].delta = rx[k];
		}
		s->n_moved = s->n;
	}
}

double rp_sim_dir(const struct rp_sim_model *m, const struct rp_engine_cfg *cfg, uint32_t src, uint32_t dst,
		  const struct rp_endpoint *src_ep, const struct rp_endpoint *dst_ep, struct rp_pair_result *res)
{
	double v = 0, bw = m->bw_gbps, t;
	enum rp_sim_link k = rp_sim_link_of(m, src, dst, &v);
	enum rp_status st;
	double loss = 0;

	if (k != RP_SIM_LINK_DEAD && rp_sim_fabric_dir(m, src, dst, &loss))
		k = RP_SIM_LINK_DEAD;     /* a fault on the direction's route (lib/sim/sim_fabric.h) */

	rp_pair_result_init(res, src_ep, dst_ep);
	res->msg_size = cfg->meas.msg_size;
	if (k == RP_SIM_LINK_DEAD) {
		t = rp_sim_dead_time(m, cfg, &st);
		if (st == RP_ST_RETRY_EXCEEDED)
			rp_pair_result_fail(res, st, "simulated dead link: work completion: transport retry counter "
				 "exceeded (%d tries of %.0f ms%s)", cfg->qp.retry_cnt + 1,
				 4.096e-3 * ldexp(1.0, cfg->qp.qp_timeout), cfg->no_mtucheck ? "" : "; MTU probe: nothing arrived");
		else
			rp_pair_result_fail(res, st, "simulated dead link: no progress for %.0f s", cfg->timeout_s);
		res->cause_side = RP_SIDE_SRC;
		res->elapsed_s = t;
		sim_counters(res, (uint64_t)cfg->qp.retry_cnt + 1, 0);
		rp_pair_result_record_attempt(res, cfg->qp.qp_timeout);
		return t;
	}
	if (k == RP_SIM_LINK_LOSSY)
		bw *= 1 - v;
	else if (k == RP_SIM_LINK_SLOW && v < bw)
		bw = v;
	bw *= 1 - loss;
	res->status = RP_ST_OK;
	res->reason[0] = '\0';
	if (cfg->meas.mode == RP_MODE_LAT) {
		res->iters = cfg->meas.iters;
		res->lat = (struct rp_latency){ .measured = true, .min_us = 2e6 * m->latency_s, .median_us = 2e6 * m->latency_s,
						.p99_us = 2e6 * m->latency_s, .max_us = 2e6 * m->latency_s,
						.samples = cfg->meas.iters };
		t = m->setup_s + 2 * m->latency_s * (double)cfg->meas.iters;
	} else {
		t = m->setup_s + m->latency_s + traffic_s(&cfg->meas, bw, &res->bytes, &res->iters);
		res->gbps = res->gbps_min = bw;
	}
	res->verified = cfg->meas.verify != 0;
	res->elapsed_s = t;
	{
		uint64_t mtu = src_ep->mtu ? (uint64_t)src_ep->mtu : 4096, moved = res->bytes ? res->bytes : res->iters;
		uint64_t pkts = (moved + mtu - 1) / mtu + cfg->meas.warmup_iters;

		sim_counters(res, pkts, pkts / 16 + 1);
	}
	rp_pair_result_record_attempt(res, cfg->qp.qp_timeout);
	return t;
}
