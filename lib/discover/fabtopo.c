/* fabtopo.c: --topology files (native, Slurm topology.conf) and their map onto a run's endpoints; see
 * fabtopo.h. */
#include "discover/fabtopo.h"
#include "discover/fabtopo_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define TOPO_MAX_WORDS 16
#define TOPO_MAX_NAMES (1u << 22)

struct tparse {
	struct rp_fabtopo *t;
	const char *name;
	unsigned line;
	char *err;
	size_t err_len;
	bool route_seen;
	size_t cap_adapters, cap_up, cap_leaves, cap_spines;
	char sw[RP_NAME_MAX];         /* Slurm: the switch of the line being read */
	bool sw_is_spine;
};

static int terr(struct tparse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int rp_fabtopo_verr(char *err, size_t err_len, const char *where, unsigned line, const char *fmt, va_list ap)
{
	int n = snprintf(err, err_len, "%s line %u: ", where, line);

	if (n >= 0 && (size_t)n < err_len)
		vsnprintf(err + n, err_len - (size_t)n, fmt, ap);
	return -EINVAL;
}

/* The error of the current line; returns -EINVAL. */
static int terr(struct tparse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rp_fabtopo_verr(p->err, p->err_len, p->name, p->line, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int rp_fabtopo_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *x;

	if (n < *cap)
		return 0;
	x = realloc(*arr, (*cap ? 2 * *cap : 16) * elem);
	if (!x)
		return -ENOMEM;
	*arr = x;
	*cap = *cap ? 2 * *cap : 16;
	return 0;
}

/* The index of name in names[0..*n), added when absent. */
static int name_index(char ***names, size_t *n, size_t *cap, const char *name, uint32_t *idx_p)
{
	for (size_t i = *n; i-- > 0;)
		if (strcmp((*names)[i], name) == 0) {
			*idx_p = (uint32_t)i;
			return 0;
		}
	if (rp_fabtopo_grow((void **)names, cap, *n, sizeof(**names)))
		return -ENOMEM;
	(*names)[*n] = strdup(name);
	if (!(*names)[*n])
		return -ENOMEM;
	*idx_p = (uint32_t)(*n)++;
	return 0;
}

static int uplink_add(struct tparse *p, uint32_t leaf, uint32_t spine)
{
	struct rp_fabtopo *t = p->t;

	for (size_t i = 0; i < t->n_up; i++)
		if (t->up[i].leaf == leaf && t->up[i].spine == spine)
			return 0;
	if (rp_fabtopo_grow((void **)&t->up, &p->cap_up, t->n_up, sizeof(*t->up)))
		return -ENOMEM;
	t->up[t->n_up++] = (struct rp_fabtopo_uplink){ .leaf = leaf, .spine = spine };
	return 0;
}

/* The node number of node (first appearance), from the adapters so far. */
static uint32_t node_number(const struct rp_fabtopo *t, const char *node)
{
	for (size_t i = t->n_adapters; i-- > 0;)
		if (strcmp(t->adapters[i].node, node) == 0)
			return t->adapters[i].node_idx;
	return (uint32_t)t->n_nodes;
}

static int adapter_add(struct tparse *p, const char *node, const char *dev, int port, uint32_t leaf, uint32_t lport)
{
	struct rp_fabtopo *t = p->t;
	struct rp_fabtopo_adapter *a;

	if (strlen(node) >= RP_NAME_MAX || strlen(dev) >= RP_NAME_MAX || !node[0] || !dev[0])
		return terr(p, "'%s/%s': a node and a device name of 1 to %d characters", node, dev, RP_NAME_MAX - 1);
	if (rp_fabtopo_grow((void **)&t->adapters, &p->cap_adapters, t->n_adapters, sizeof(*t->adapters)))
		return -ENOMEM;
	a = &t->adapters[t->n_adapters];
	memset(a, 0, sizeof(*a));
	rp_strlcpy(a->node, node, sizeof(a->node));
	rp_strlcpy(a->device, dev, sizeof(a->device));
	a->port = port;
	a->leaf = leaf;
	a->leaf_port = lport;
	a->node_idx = node_number(t, node);
	t->n_nodes += a->node_idx == t->n_nodes;
	t->n_adapters++;
	return 0;
}

/* Native "adapter NODE/DEVICE[:PORT] LEAF LEAF_PORT". */
static int native_adapter(struct tparse *p, char **w)
{
	char buf[2 * RP_NAME_MAX + 16], *slash, *colon;
	uint64_t port = 0, lport;
	uint32_t leaf;

	rp_strlcpy(buf, w[1], sizeof(buf));
	slash = strchr(buf, '/');
	if (!slash)
		return terr(p, "adapter: '%s' is not NODE/DEVICE[:PORT]", w[1]);
	*slash = '\0';
	colon = strchr(slash + 1, ':');
	if (colon) {
		*colon = '\0';
		if (rp_parse_u64(colon + 1, 1, 255, false, &port))
			return terr(p, "adapter: port '%s' of %s is not 1 to 255", colon + 1, w[1]);
	}
	if (strcmp(w[3], "-") == 0)
		lport = 0;            /* not known (LLDP named a port without a number) */
	else if (rp_parse_u64(w[3], 1, 65535, false, &lport))
		return terr(p, "adapter: leaf port '%s' is not 1 to 65535 (or - when not known)", w[3]);
	for (size_t i = 0; i < p->t->n_adapters; i++) {
		const struct rp_fabtopo_adapter *a = &p->t->adapters[i];

		if (strcmp(a->node, buf) == 0 && strcmp(a->device, slash + 1) == 0 && a->port == (int)port)
			return terr(p, "adapter: %s is listed twice", w[1]);
	}
	if (name_index(&p->t->leaves, &p->t->n_leaves, &p->cap_leaves, w[2], &leaf))
		return -ENOMEM;
	return adapter_add(p, buf, slash + 1, (int)port, leaf, (uint32_t)lport);
}

static int native_line(struct tparse *p, char **w, int n)
{
	uint32_t leaf, spine;

	if (strcmp(w[0], "adapter") == 0) {
		if (n != 4)
			return terr(p, "adapter takes NODE/DEVICE[:PORT] LEAF LEAF_PORT");
		return native_adapter(p, w);
	}
	if (strcmp(w[0], "uplink") == 0) {
		if (n != 3)
			return terr(p, "uplink takes LEAF SPINE");
		if (strcmp(w[1], w[2]) == 0)
			return terr(p, "uplink: a leaf is not its own spine ('%s')", w[1]);
		if (name_index(&p->t->leaves, &p->t->n_leaves, &p->cap_leaves, w[1], &leaf) ||
		    name_index(&p->t->spines, &p->t->n_spines, &p->cap_spines, w[2], &spine))
			return -ENOMEM;
		return uplink_add(p, leaf, spine);
	}
	if (strcmp(w[0], "route") == 0) {
		if (n != 2 || (strcmp(w[1], "dmodk") != 0 && strcmp(w[1], "unknown") != 0))
			return terr(p, "route takes dmodk or unknown");
		if (p->route_seen)
			return terr(p, "route is set twice");
		p->route_seen = true;
		p->t->dmodk = strcmp(w[1], "dmodk") == 0;
		return 0;
	}
	return terr(p, "unknown keyword '%s' (adapter, uplink, route; or Slurm's SwitchName=)", w[0]);
}

/* Expand one hostlist item "pre[a-b,c]post" (at most one bracket) into fn. */
static int hostlist_item(const char *s, size_t len, size_t max, size_t *count, int (*fn)(void *, const char *),
			 void *arg, char *err, size_t err_len)
{
	char item[512], name[1100];
	char *lb, *rb, *save = NULL;

	if (len >= sizeof(item)) {
		snprintf(err, err_len, "hostlist item longer than %zu characters", sizeof(item) - 1);
		return -EINVAL;
	}
	memcpy(item, s, len);
	item[len] = '\0';
	lb = strchr(item, '[');
	if (!lb) {
		if (++*count > max) {
			snprintf(err, err_len, "more than %zu names", max);
			return -EINVAL;
		}
		return fn(arg, item);
	}
	rb = strchr(lb, ']');
	if (!rb || strchr(rb + 1, '[')) {
		snprintf(err, err_len, "'%s': one [range] per name", item);
		return -EINVAL;
	}
	*lb = *rb = '\0';
	for (char *r = strtok_r(lb + 1, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(r, '-');
		uint64_t lo, hi;
		int width = dash ? (int)(dash - r) : (int)strlen(r);

		if (dash)
			*dash = '\0';
		if (rp_parse_u64(r, 0, 999999999, false, &lo) || (dash && rp_parse_u64(dash + 1, 0, 999999999, false, &hi))) {
			snprintf(err, err_len, "'%s': a range is NUMBER or NUMBER-NUMBER", s);
			return -EINVAL;
		}
		if (!dash)
			hi = lo;
		if (hi < lo) {
			snprintf(err, err_len, "'%.*s': the range runs backwards", (int)len, s);
			return -EINVAL;
		}
		for (uint64_t v = lo; v <= hi; v++) {
			int rc;

			if (++*count > max) {
				snprintf(err, err_len, "more than %zu names", max);
				return -EINVAL;
			}
			snprintf(name, sizeof(name), "%s%0*llu%s", item, width, (unsigned long long)v, rb + 1);
			rc = fn(arg, name);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int rp_hostlist_expand(const char *s, size_t max, int (*fn)(void *arg, const char *name), void *arg, char *err,
		       size_t err_len)
{
	size_t count = 0;

	while (*s) {
		size_t n = 0;
		int depth = 0, rc;

		while (s[n] && (depth || s[n] != ',')) {
			depth += (s[n] == '[') - (s[n] == ']');
			n++;
		}
		if (n == 0) {
			snprintf(err, err_len, "an empty name in the hostlist");
			return -EINVAL;
		}
		rc = hostlist_item(s, n, max, &count, fn, arg, err, err_len);
		if (rc)
			return rc;
		s += n + (s[n] == ',');
	}
	return 0;
}

/* Slurm: one node of a leaf switch's Nodes=, or one leaf of a spine's Switches=. */
static int slurm_name(void *arg, const char *name)
{
	struct tparse *p = arg;
	uint32_t leaf, spine;

	if (name_index(&p->t->leaves, &p->t->n_leaves, &p->cap_leaves, p->sw_is_spine ? name : p->sw, &leaf))
		return -ENOMEM;
	if (!p->sw_is_spine) {
		for (size_t i = 0; i < p->t->n_adapters; i++)
			if (strcmp(p->t->adapters[i].node, name) == 0)
				return terr(p, "node %s is under two switches (%s and %s)", name,
					    p->t->leaves[p->t->adapters[i].leaf], p->sw);
		return adapter_add(p, name, "*", 0, leaf, 0);
	}
	if (name_index(&p->t->spines, &p->t->n_spines, &p->cap_spines, p->sw, &spine))
		return -ENOMEM;
	return uplink_add(p, leaf, spine);
}

static int slurm_line(struct tparse *p, char **w, int n)
{
	const char *nodes = NULL, *switches = NULL;
	char err[200];
	int rc;

	for (int i = 0; i < n; i++) {
		if (strncmp(w[i], "SwitchName=", 11) == 0)
			rp_strlcpy(p->sw, w[i] + 11, sizeof(p->sw));
		else if (strncmp(w[i], "Nodes=", 6) == 0)
			nodes = w[i] + 6;
		else if (strncmp(w[i], "Switches=", 9) == 0)
			switches = w[i] + 9;
	}
	if (!p->sw[0] || strchr(p->sw, '['))
		return terr(p, "SwitchName= needs one switch name");
	if (!nodes && !switches)
		return 0;             /* a switch with neither: nothing to place */
	if (nodes && switches)
		return terr(p, "switch %s has both Nodes= and Switches= (a leaf or a spine, not both)", p->sw);
	p->sw_is_spine = switches != NULL;
	rc = rp_hostlist_expand(nodes ? nodes : switches, TOPO_MAX_NAMES, slurm_name, p, err, sizeof(err));
	if (rc == -EINVAL && !strstr(p->err, " line "))
		return terr(p, "%s=: %s", nodes ? "Nodes" : "Switches", err);
	return rc;
}

/* One line (NUL-terminated). */
static int topo_line(struct tparse *p, char *s)
{
	char *w[TOPO_MAX_WORDS], *hash = strchr(s, '#'), *save = NULL;
	int n = 0;

	if (hash)
		*hash = '\0';
	for (char *x = strtok_r(s, " \t\r", &save); x; x = strtok_r(NULL, " \t\r", &save)) {
		if (n == TOPO_MAX_WORDS)
			return terr(p, "too many words");
		w[n++] = x;
	}
	if (n == 0)
		return 0;
	if (strncmp(w[0], "SwitchName=", 11) == 0) {
		if (p->t->n_adapters && !p->t->slurm)
			return terr(p, "a Slurm line in a native topology file");
		p->t->slurm = true;
		return slurm_line(p, w, n);
	}
	if (p->t->slurm)
		return terr(p, "'%s' in a Slurm topology.conf (lines start with SwitchName=)", w[0]);
	return native_line(p, w, n);
}

int rp_fabtopo_parse(const char *name, const char *text, size_t len, struct rp_fabtopo **t_p, char *err, size_t err_len)
{
	struct tparse p = { .name = name, .err = err, .err_len = err_len };
	char line[4096];
	size_t pos = 0;
	int rc = 0;

	*t_p = NULL;
	err[0] = '\0';
	if (rp_fabtopo_is_ibnet(text, len)) {
		char *native = NULL, nname[512];
		size_t nlen = 0;

		rc = rp_fabtopo_ibnet_native(name, text, len, &native, &nlen, err, err_len);
		snprintf(nname, sizeof(nname), "%s (as read from ibnetdiscover)", name);
		if (rc == 0)
			rc = rp_fabtopo_parse(nname, native, nlen, t_p, err, err_len);
		free(native);
		return rc;
	}
	p.t = calloc(1, sizeof(*p.t));
	if (!p.t)
		return -ENOMEM;
	while (pos < len && rc == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		p.line++;
		if (n >= sizeof(line))
			rc = terr(&p, "longer than %zu characters", sizeof(line) - 1);
		else if (memchr(text + pos, '\0', n))
			rc = terr(&p, "a NUL byte (not a text file?)");
		if (rc == 0) {
			memcpy(line, text + pos, n);
			line[n] = '\0';
			rc = topo_line(&p, line);
		}
		pos += n + 1;
	}
	if (rc == 0 && p.t->n_adapters == 0) {
		snprintf(err, err_len, "%s: no adapter (native 'adapter' lines or Slurm 'SwitchName=... Nodes=')", name);
		rc = -EINVAL;
	}
	if (rc) {
		rp_fabtopo_destroy(p.t);
		return rc;
	}
	*t_p = p.t;
	return 0;
}

int rp_fabtopo_load(const char *path, struct rp_fabtopo **t_p, char *err, size_t err_len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	int rc;

	*t_p = NULL;
	if (!f) {
		rc = -errno;
		snprintf(err, err_len, "open %s: %s", path, strerror(-rc));
		return rc;
	}
	do {
		if (len + 65536 > cap) {
			char *n = cap > (256u << 20) ? NULL : realloc(buf, cap = cap ? 2 * cap : 1 << 20);

			if (!n) {
				free(buf);
				fclose(f);
				snprintf(err, err_len, "%s: %s", path, cap > (256u << 20) ? "larger than 256 MiB" : "out of memory");
				return cap > (256u << 20) ? -EFBIG : -ENOMEM;
			}
			buf = n;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	rc = ferror(f) ? -EIO : 0;
	fclose(f);
	if (rc)
		snprintf(err, err_len, "read %s: %s", path, strerror(EIO));
	else
		rc = rp_fabtopo_parse(path, buf, len, t_p, err, err_len);
	free(buf);
	return rc;
}

void rp_fabtopo_destroy(struct rp_fabtopo *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_leaves; i++)
		free(t->leaves[i]);
	for (size_t i = 0; i < t->n_spines; i++)
		free(t->spines[i]);
	free(t->leaves);
	free(t->spines);
	free(t->adapters);
	free(t->up);
	free(t);
}
