/* nccl.c: NCCL's environment, GID and NCCL_IB_HCA rules; see nccl.h and
 * ../shared/notes/nccl-semantics.md. Written from the rules, not from NCCL's code. */
#include "nccl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "log.h"
#include "util.h"

#define GID_INDEX_MAX 65535

void rp_nccl_env_default(struct rp_nccl_env *env)
{
	env->ib_hca = NULL;
	env->gid_index = -1;
	env->addr_family = AF_INET;
	env->addr_range = NULL;
	env->roce_version = 2;
	env->gdr_level = RP_PATH_PXB;
}

/* getenv() with "" meaning unset, as NCCL's integer parameters read it. */
static const char *env_get(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] ? v : NULL;
}

int rp_nccl_env_load(struct rp_nccl_env *env)
{
	struct rp_nccl_addr_range range;
	struct rp_nccl_spec *spec;
	const char *v;
	int rc;

	rp_nccl_env_default(env);
	v = getenv("NCCL_IB_HCA");
	if (v) {
		spec = malloc(sizeof(*spec));
		if (!spec)
			return rp_error(-ENOMEM, "read NCCL_IB_HCA: out of memory");
		rc = rp_nccl_spec_parse(v, spec);
		free(spec);
		if (rc)
			return rc;
		env->ib_hca = v;
	}
	v = env_get("NCCL_IB_GID_INDEX");
	if (v && rp_parse_int(v, -1, GID_INDEX_MAX, &env->gid_index))
		return rp_error(-EINVAL, "NCCL_IB_GID_INDEX=%s: not an integer from -1 to %d", v, GID_INDEX_MAX);
	v = env_get("NCCL_IB_ADDR_FAMILY");
	if (v) {
		if (strcmp(v, "AF_INET") == 0)
			env->addr_family = AF_INET;
		else if (strcmp(v, "AF_INET6") == 0)
			env->addr_family = AF_INET6;
		else
			return rp_error(-EINVAL, "NCCL_IB_ADDR_FAMILY=%s: must be AF_INET or AF_INET6", v);
	}
	v = env_get("NCCL_IB_ADDR_RANGE");
	if (v) {
		if (rp_nccl_addr_range_parse(v, env->addr_family, &range))
			return rp_error(-EINVAL, "NCCL_IB_ADDR_RANGE=%s: not an %s address/prefix-length (NCCL would ignore it)",
					v, env->addr_family == AF_INET6 ? "AF_INET6" : "AF_INET");
		env->addr_range = v;
	}
	v = env_get("NCCL_IB_ROCE_VERSION_NUM");
	if (v && rp_parse_int(v, 1, 2, &env->roce_version))
		return rp_error(-EINVAL, "NCCL_IB_ROCE_VERSION_NUM=%s: must be 1 or 2", v);
	v = env_get("NCCL_NET_GDR_LEVEL");
	if (v && rp_path_parse(v, &env->gdr_level))
		return rp_error(-EINVAL, "NCCL_NET_GDR_LEVEL=%s: not a path level (PIX, PXB, PHB, SYS or NCCL's number)", v);
	return 0;
}

/* --- NCCL_IB_ADDR_RANGE ------------------------------------------------------------------------ */

int rp_nccl_addr_range_parse(const char *s, int family, struct rp_nccl_addr_range *range_p)
{
	struct rp_nccl_addr_range r;
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash;
	size_t n;

	if (!s || (family != AF_INET && family != AF_INET6))
		return -EINVAL;
	slash = strchr(s, '/');
	if (!slash)
		return -EINVAL;
	n = (size_t)(slash - s);
	if (n == 0 || n >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, n);
	addr[n] = '\0';
	memset(&r, 0, sizeof(r));
	r.family = family;
	if (inet_pton(family, addr, r.addr) != 1)
		return -EINVAL;
	if (rp_parse_int(slash + 1, 0, family == AF_INET ? 32 : 128, &r.prefix_len))
		return -EINVAL;
	*range_p = r;
	return 0;
}

/* --- GID rule ---------------------------------------------------------------------------------- */

/* Word i (0..3) of the GID, host order. */
static uint32_t gid_word(const struct rp_gid *g, int i)
{
	const uint8_t *b = g->raw + 4 * i;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Not all-zero, and not a bare fe80:: (an unconfigured entry). */
static bool gid_configured(const struct rp_gid *g)
{
	uint32_t rest = gid_word(g, 1) | gid_word(g, 2) | gid_word(g, 3);

	if ((gid_word(g, 0) | rest) == 0)
		return false;
	return !(gid_word(g, 0) == 0xfe800000u && rest == 0);
}

/* fe80:0000:... (link-local). */
static bool gid_link_local(const struct rp_gid *g)
{
	return gid_word(g, 0) == 0xfe800000u && gid_word(g, 1) == 0;
}

bool rp_nccl_gid_valid(const struct rp_gid *g)
{
	return gid_configured(g) && !gid_link_local(g);
}

/* AF_INET for an IPv4-mapped GID (::ffff:a.b.c.d, also the ff0e::ffff:a.b.c.d multicast form). */
static int gid_family(const struct rp_gid *g)
{
	bool mapped = (gid_word(g, 0) | gid_word(g, 1) | (gid_word(g, 2) ^ 0x0000ffffu)) == 0;
	bool mapped_mc = gid_word(g, 0) == 0xff0e0000u && (gid_word(g, 1) | (gid_word(g, 2) ^ 0x0000ffffu)) == 0;

	return mapped || mapped_mc ? AF_INET : AF_INET6;
}

/* The mask of the first bits of a 32-bit word (bits may exceed 32). */
static uint32_t prefix_mask(int bits)
{
	return bits <= 0 ? 0 : bits >= 32 ? 0xffffffffu : ~((1u << (32 - bits)) - 1);
}

/* Inside the range (no range: always). IPv4 compares the last word of the GID. */
static bool gid_in_range(const struct rp_gid *g, const struct rp_nccl_addr_range *r)
{
	int left;

	if (!r || r->prefix_len == 0)
		return true;
	if (r->family == AF_INET) {
		uint32_t base = (uint32_t)r->addr[0] << 24 | (uint32_t)r->addr[1] << 16 | (uint32_t)r->addr[2] << 8 | r->addr[3];
		uint32_t m = prefix_mask(r->prefix_len);

		return (base & m) == (gid_word(g, 3) & m);
	}
	left = r->prefix_len;
	for (int i = 0; i < 4 && left > 0; i++, left -= 32) {
		const uint8_t *b = r->addr + 4 * i;
		uint32_t base = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
		uint32_t m = prefix_mask(left);

		if ((base & m) != (gid_word(g, i) & m))
			return false;
	}
	return true;
}

/* The RoCE version NCCL reads from gid_attrs/types: 1, 2, or -1 (empty entry, unreadable, other). */
static int gid_version(const struct rp_gid *g)
{
	switch (g->type) {
	case RP_GID_TYPE_IB_ROCE_V1:
		return 1;
	case RP_GID_TYPE_ROCE_V2:
		return 2;
	default:
		return -1;
	}
}

/* The port's GID entry with this index; NULL when the table has none. */
static const struct rp_gid *port_gid(const struct rp_port *port, int index)
{
	for (size_t i = 0; i < port->n_gids; i++)
		if (port->gids[i].index == index)
			return &port->gids[i];
	return NULL;
}

/* The range NCCL would apply: none when unset or malformed (NCCL ignores a malformed range). */
static bool env_range(const struct rp_nccl_env *env, struct rp_nccl_addr_range *r)
{
	return env->addr_range && rp_nccl_addr_range_parse(env->addr_range, env->addr_family, r) == 0;
}

/* Does the GID pass every test of the automatic rule except the RoCE version? */
static bool gid_acceptable(const struct rp_gid *g, const struct rp_nccl_env *env, const struct rp_nccl_addr_range *r)
{
	return g && rp_nccl_gid_valid(g) && gid_family(g) == env->addr_family && gid_in_range(g, r);
}

/* NCCL's automatic choice: start at index 0 and walk the table once. A candidate replaces the current
 * choice when it brings the wanted family (and range) where the current one has the other family, or
 * when it is valid, of the wanted family and range, and brings the wanted RoCE version where the
 * current one has another version or is not valid. On an ordinary table this is the lowest valid GID
 * of the wanted family and range with the wanted version; when no such GID exists it can stop on one
 * of another version, and it stays on 0 when nothing fits. */
static int gid_auto(const struct rp_port *port, const struct rp_nccl_env *env)
{
	struct rp_nccl_addr_range range;
	const struct rp_nccl_addr_range *r = env_range(env, &range) ? &range : NULL;
	int cur = 0, max_index = -1;
	const struct rp_gid *cg;

	for (size_t i = 0; i < port->n_gids; i++)
		if (port->gids[i].index > max_index)
			max_index = port->gids[i].index;
	for (int cand = 1; cand <= max_index; cand++) {
		const struct rp_gid *g = port_gid(port, cand);
		const struct rp_gid *c = port_gid(port, cur);

		if (!g)
			continue;
		if (c && gid_family(g) != gid_family(c) && gid_family(g) == env->addr_family && gid_in_range(g, r)) {
			cur = cand;
			continue;
		}
		if (gid_family(g) != env->addr_family || !rp_nccl_gid_valid(g) || !gid_in_range(g, r))
			continue;
		if ((!c || gid_version(c) != gid_version(g) || !rp_nccl_gid_valid(c)) && gid_version(g) == env->roce_version)
			cur = cand;
	}
	cg = port_gid(port, cur);
	return gid_acceptable(cg, env, r) ? cur : -1;
}

int rp_nccl_gid_index(const struct rp_port *port, const struct rp_nccl_env *env)
{
	if (port->link_layer != RP_LL_ETHERNET)
		return 0;
	if (env->gid_index >= 0)
		return env->gid_index;
	return gid_auto(port, env);
}

/* --- NCCL_IB_HCA ------------------------------------------------------------------------------- */

/* atoi() as NCCL applies it to the port part: leading space, a sign, digits, stop at anything else.
 * Saturates instead of overflowing. */
static int nccl_atoi(const char *s)
{
	long v = 0;
	int sign = 1;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '+' || *s == '-')
		sign = *s++ == '-' ? -1 : 1;
	while (isdigit((unsigned char)*s)) {
		if (v < INT_MAX)
			v = v * 10 + (*s - '0');
		s++;
	}
	if (v > INT_MAX)
		v = INT_MAX;
	return (int)(sign * v);
}

/* Store one entry [s, e) (no ',' inside); skipped when its name is empty, as NCCL does. */
static int spec_add_entry(struct rp_nccl_spec *spec, const char *s, const char *e)
{
	const char *colon = memchr(s, ':', (size_t)(e - s));
	const char *name_end = colon ? colon : e;
	size_t name_len = (size_t)(name_end - s);
	struct rp_nccl_spec_entry *ent;

	if (name_len == 0)
		return 0;
	if (spec->n_entries == RP_NCCL_MAX_ENTRIES) {
		spec->n_ignored++;
		return 0;
	}
	if (name_len >= RP_NAME_MAX)
		return rp_error(-ENAMETOOLONG, "NCCL_IB_HCA entry %zu: name of %zu characters '%.20s...' (the limit is %d)",
				spec->n_entries + 1, name_len, s, RP_NAME_MAX - 1);
	ent = &spec->entries[spec->n_entries];
	memset(ent, 0, sizeof(*ent));
	memcpy(ent->name, s, name_len);
	ent->exact = spec->exact;
	ent->port = -1;
	if (colon) {
		size_t plen = (size_t)(e - colon - 1);

		if (plen >= RP_NCCL_PORT_TEXT)
			return rp_error(-ENAMETOOLONG, "NCCL_IB_HCA entry '%s': port part of %zu characters (the limit is %d)",
					ent->name, plen, RP_NCCL_PORT_TEXT - 1);
		memcpy(ent->port_text, colon + 1, plen);
		ent->has_port = true;
		ent->port = nccl_atoi(ent->port_text);
	}
	spec->n_entries++;
	return 0;
}

int rp_nccl_spec_parse(const char *text, struct rp_nccl_spec *spec)
{
	const char *p;
	size_t len;
	int rc;

	memset(spec, 0, sizeof(*spec));
	if (!text)
		return 0;
	len = strnlen(text, RP_NCCL_SPEC_MAX + 1);
	if (len > RP_NCCL_SPEC_MAX)
		return rp_error(-ENAMETOOLONG, "NCCL_IB_HCA is longer than %d characters", RP_NCCL_SPEC_MAX);
	spec->set = true;
	p = text;
	if (*p == '^') {
		spec->exclude = true;
		p++;
	}
	if (*p == '=') {
		spec->exact = true;
		p++;
	}
	while (*p) {
		const char *e = strchr(p, ',');

		if (!e)
			e = p + strlen(p);
		rc = spec_add_entry(spec, p, e);
		if (rc)
			return rc;
		p = *e ? e + 1 : e;
	}
	return 0;
}

bool rp_nccl_entry_match(const struct rp_nccl_spec_entry *e, const char *dev, int port)
{
	bool name_ok = e->exact ? strcmp(dev, e->name) == 0 : strncmp(dev, e->name, strlen(e->name)) == 0;

	return name_ok && (e->port == -1 || port == -1 || e->port == port);
}

bool rp_nccl_spec_keeps(const struct rp_nccl_spec *spec, const char *dev, int port)
{
	bool hit = spec->n_entries == 0;

	for (size_t i = 0; i < spec->n_entries && !hit; i++)
		hit = rp_nccl_entry_match(&spec->entries[i], dev, port);
	return hit != spec->exclude;
}
