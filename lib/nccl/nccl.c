/* nccl.c: NCCL's environment, GID and NCCL_IB_HCA rules per release; see nccl.h. Each function
 * names the NCCL source it models and nccl_rules.c the release where a rule changed. Written from
 * reading NCCL's code at its release tags, not copied from it. */
#include "nccl/nccl.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/log.h"
#include "base/util.h"

static const char *const param_names[RP_NCCL_P_COUNT_] = {
	[RP_NCCL_P_GID_INDEX] = "NCCL_IB_GID_INDEX",
	[RP_NCCL_P_ROCE_VERSION] = "NCCL_IB_ROCE_VERSION_NUM",
	[RP_NCCL_P_FLID_GID_INDEX] = "NCCL_IB_ROUTABLE_FLID_GID_INDEX",
	[RP_NCCL_P_PCI_ORDER] = "NCCL_IB_DEVICE_PCI_ORDER",
	[RP_NCCL_P_IB_DISABLE] = "NCCL_IB_DISABLE",
	[RP_NCCL_P_MERGE_VFS] = "NCCL_IB_MERGE_VFS",
	[RP_NCCL_P_MERGE_NICS] = "NCCL_IB_MERGE_NICS",
};

const char *rp_nccl_param_name(enum rp_nccl_param p)
{
	return (unsigned)p < RP_NCCL_P_COUNT_ ? param_names[p] : "?";
}

void rp_nccl_env_default(struct rp_nccl_env *env)
{
	memset(env, 0, sizeof(*env));
	env->version = RP_NCCL_VERSION_NEWEST;
	env->ib_hca = NULL;
	env->gid_index = -1;
	env->gid_index_set = false;
	env->addr_family = AF_INET;
	env->addr_range = NULL;
	env->roce_version = 2;
	env->flid_gid_index = 1;
	env->pci_order = true;
	env->ib_disable = false;
	env->merge_vfs = true;
	env->merge_nics = true;
	env->gdr_level = RP_PATH_PXB;
}

/* getenv() with "" meaning unset, as NCCL's parameters read it. */
static const char *env_get(const char *name)
{
	const char *v = getenv(name);

	return v && v[0] ? v : NULL;
}

/* Is s a plain decimal integer: an optional '-', then "0" or digits without a leading zero? */
static bool plain_decimal(const char *s)
{
	if (*s == '-')
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	if (*s == '0' && s[1])
		return false;
	while (isdigit((unsigned char)*s))
		s++;
	return *s == '\0';
}

/* ncclLoadParam (src/misc/param.cc, every modelled release): strtoll(text, NULL, 0); errno set
 * (ERANGE) gives the default. */
bool rp_nccl_param_read(const char *text, int64_t deflt, int64_t *value_p, char *how, size_t how_len)
{
	const char *t = text, *digits;
	long long v;
	char *end;

	if (how_len)
		how[0] = '\0';
	*value_p = deflt;
	if (!text || !text[0])
		return false;
	errno = 0;
	v = strtoll(text, &end, 0);
	if (errno) {
		snprintf(how, how_len, "out of range: NCCL uses the default %lld", (long long)deflt);
		return true;
	}
	*value_p = v;
	if (plain_decimal(text))
		return false;
	while (isspace((unsigned char)*t))
		t++;
	if (*t == '+' || *t == '-')
		t++;
	digits = t;
	if (end == text)
		snprintf(how, how_len, "no number: NCCL reads 0");
	else if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
		snprintf(how, how_len, "%lld (hexadecimal)%s", v, *end ? ", the rest ignored" : "");
	else if (digits[0] == '0' && isdigit((unsigned char)digits[1]))
		snprintf(how, how_len, "%lld (octal)%s", v, *end ? ", the rest ignored" : "");
	else
		snprintf(how, how_len, "%lld%s", v, *end ? " (the rest is ignored)" : "");
	return true;
}

/* One integer parameter into *out as NCCL's int (the int64_t is cut to 32 bits where NCCL assigns
 * it to an int), keeping its text. */
static int64_t env_param(struct rp_nccl_env *env, enum rp_nccl_param p, int64_t deflt)
{
	char how[8];
	int64_t v;

	env->text[p] = env_get(param_names[p]);
	rp_nccl_param_read(env->text[p], deflt, &v, how, sizeof(how));
	return v;
}

/* The int NCCL keeps when it stores an int64_t parameter in an int (two's complement wrap). */
static int nccl_int(int64_t v)
{
	return (int)(int32_t)(uint32_t)(uint64_t)v;
}

/* NCCL_NET_GDR_LEVEL as ncclGetLevel (src/graph/paths.cc) reads it: a path name (strcmp), else
 * when the text starts with a digit the old numbering through strtol; anything else is ignored. */
static void env_gdr_level(struct rp_nccl_env *env)
{
	static const enum rp_path old_levels[] = { RP_PATH_LOC, RP_PATH_PIX, RP_PATH_PXB, RP_PATH_PHB, RP_PATH_SYS };
	const char *v = getenv("NCCL_NET_GDR_LEVEL");
	long n;

	env->gdr_level_text = v;
	if (!v)
		return;
	if (rp_path_parse(v, &env->gdr_level) == 0)
		return;
	if (isdigit((unsigned char)v[0])) {
		n = strtol(v, NULL, 0);
		env->gdr_level = n < 0 || n >= (long)RP_ARRAY_SIZE(old_levels) ? RP_PATH_SYS : old_levels[n];
	}
}

int rp_nccl_env_load(struct rp_nccl_env *env)
{
	const char *v;

	rp_nccl_env_default(env);
	v = getenv("NCCL_IB_HCA");
	if (v) {
		if (strnlen(v, RP_NCCL_SPEC_MAX + 1) > RP_NCCL_SPEC_MAX)
			return rp_error(-ENAMETOOLONG, "NCCL_IB_HCA is longer than %d characters", RP_NCCL_SPEC_MAX);
		env->ib_hca = v;
	}
	env->gid_index = nccl_int(env_param(env, RP_NCCL_P_GID_INDEX, -1));
	/* Out of range is the release's own default (0 before 2.21.5, -1 since): as if unset. */
	if (env->text[RP_NCCL_P_GID_INDEX]) {
		errno = 0;
		(void)strtoll(env->text[RP_NCCL_P_GID_INDEX], NULL, 0);
		env->gid_index_set = errno == 0;
	}
	env->roce_version = nccl_int(env_param(env, RP_NCCL_P_ROCE_VERSION, 2));
	env->flid_gid_index = nccl_int(env_param(env, RP_NCCL_P_FLID_GID_INDEX, 1));
	env->pci_order = env_param(env, RP_NCCL_P_PCI_ORDER, 1) != 0;
	env->ib_disable = env_param(env, RP_NCCL_P_IB_DISABLE, 0) != 0;
	env->merge_vfs = env_param(env, RP_NCCL_P_MERGE_VFS, 1) != 0;
	env->merge_nics = env_param(env, RP_NCCL_P_MERGE_NICS, 1) != 0;
	/* envIbAddrFamily: exactly "AF_INET6" selects IPv6, anything else is AF_INET. */
	env->addr_family_text = env_get("NCCL_IB_ADDR_FAMILY");
	env->addr_family = env->addr_family_text && strcmp(env->addr_family_text, "AF_INET6") == 0 ? AF_INET6 : AF_INET;
	env->addr_range = env_get("NCCL_IB_ADDR_RANGE");
	env_gdr_level(env);
	return 0;
}

/* --- NCCL_IB_ADDR_RANGE ------------------------------------------------------------------------ */

/* envIbAddrRange: the text is cut to 127 characters; a missing '/' is a crash before 2.23.4 and
 * ignored after; inet_pton() failing ignores the range; the length is (int)strtol(, 10): above
 * 32/128 ignored, negative kept (and then matches nothing). */
enum rp_nccl_range_status rp_nccl_addr_range_read(const char *s, int family, uint32_t version,
						  struct rp_nccl_addr_range *range_p)
{
	struct rp_nccl_addr_range r;
	char buf[128];
	char *slash;
	long len;

	if (!s || !s[0])
		return RP_NCCL_RANGE_UNSET;
	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (!slash)
		return rp_nccl_rule_on(version, RP_NCCL_R_RANGE_SLASH_CRASH) ? RP_NCCL_RANGE_CRASH : RP_NCCL_RANGE_IGNORED;
	*slash = '\0';
	memset(&r, 0, sizeof(r));
	r.family = family == AF_INET6 ? AF_INET6 : AF_INET;
	if (inet_pton(r.family, buf, r.addr) != 1)
		return RP_NCCL_RANGE_IGNORED;
	len = strtol(slash + 1, NULL, 10);
	r.prefix_len = nccl_int(len);
	if (r.prefix_len > (r.family == AF_INET ? 32 : 128))
		return RP_NCCL_RANGE_IGNORED;
	*range_p = r;
	return RP_NCCL_RANGE_OK;
}

int rp_nccl_addr_range_parse(const char *s, int family, struct rp_nccl_addr_range *range_p)
{
	struct rp_nccl_addr_range r;
	const char *slash = s ? strchr(s, '/') : NULL;
	int len;

	if (!slash || slash == s || (family != AF_INET && family != AF_INET6))
		return -EINVAL;
	if (rp_parse_int(slash + 1, 0, family == AF_INET ? 32 : 128, &len))
		return -EINVAL;
	if (rp_nccl_addr_range_read(s, family, RP_NCCL_VERSION_NEWEST, &r) != RP_NCCL_RANGE_OK)
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

/* Does the GID match the range as matchGidAddrPrefix does? No range: yes. AF_INET compares the
 * last word of the GID; AF_INET6 whole words, then the masked rest. A negative length never ends
 * the loop at 0, so it matches nothing. */
static bool gid_in_range(const struct rp_gid *g, const struct rp_nccl_addr_range *r)
{
	int left;

	if (!r)
		return true;
	left = r->prefix_len;
	for (int i = 0; left > 0 && i < 4;) {
		int w = r->family == AF_INET ? 3 : i;
		const uint8_t *b = r->addr + (r->family == AF_INET ? 0 : 4 * i);
		uint32_t base = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
		uint32_t m = left >= 32 ? 0xffffffffu : ~((1u << (32 - left)) - 1);

		if ((base & m) != (gid_word(g, w) & m))
			break;
		if (r->family == AF_INET || left < 32) {
			left = 0;
			break;
		}
		left -= 32;
		i++;
	}
	return left == 0;
}

/* The port's GID entry with this index; NULL when the table has none. */
static const struct rp_gid *port_gid(const struct rp_port *port, int index)
{
	for (size_t i = 0; i < port->n_gids; i++)
		if (port->gids[i].index == index)
			return &port->gids[i];
	return NULL;
}

/* The GID table length as ibv_query_port() reports it: sysfs lists every entry of the table. */
static int gid_tbl_len(const struct rp_port *port)
{
	int n = 0;

	for (size_t i = 0; i < port->n_gids; i++)
		if (port->gids[i].index + 1 > n)
			n = port->gids[i].index + 1;
	return n;
}

/* What ibv_query_gid() gives for an index inside the table: the entry, or zero for a hole. */
static struct rp_gid gid_query(const struct rp_port *port, int index)
{
	const struct rp_gid *g = port_gid(port, index);
	struct rp_gid zero;

	if (g)
		return *g;
	memset(&zero, 0, sizeof(zero));
	zero.index = index;
	return zero;
}

/* The range NCCL applies, or NULL; *crash_p when reading it crashes NCCL. */
static const struct rp_nccl_addr_range *env_range(const struct rp_nccl_env *env, struct rp_nccl_addr_range *r,
						  bool *crash_p)
{
	enum rp_nccl_range_status st = rp_nccl_addr_range_read(env->addr_range, env->addr_family, env->version, r);

	*crash_p = st == RP_NCCL_RANGE_CRASH;
	return st == RP_NCCL_RANGE_OK ? r : NULL;
}

bool rp_nccl_gid_wanted(const struct rp_gid *g, const struct rp_nccl_env *env)
{
	struct rp_nccl_addr_range range;
	bool crash;

	return g && gid_family(g) == env->addr_family && gid_in_range(g, env_range(env, &range, &crash));
}

/* What ncclIbRoceGetVersionNum leaves in its caller's variable. */
#define VER_FAIL (-100)     /* NCCL fails the port */
#define VER_UNSET (-101)    /* not set: the candidate's stays -1 (since 2.26.2), the current one's is
			     * uninitialised in NCCL (its result then depends on garbage) */

/* ncclIbRoceGetVersionNum (net_ib.cc v2.21.5-1 to v2.28.9-1, net_ib/connect.cc since): open
 * gid_attrs/types/<i> (failing: NCCL fails the port), read it (failing: the port fails, except
 * that from v2.26.2-1 an EINVAL read is skipped, the version left unset), then 1 for "IB/RoCE v1"
 * or "RoCE v1", 2 for "RoCE v2", else unset. An empty entry's read fails with EINVAL. */
static int gid_types_version(const struct rp_gid *g, uint32_t version)
{
	bool einval = g->type_read == RP_GID_TREAD_EINVAL ||
		      (g->type_read == RP_GID_TREAD_KERNEL && g->type == RP_GID_TYPE_NONE);

	if (g->type_read == RP_GID_TREAD_FAILS)
		return VER_FAIL;
	if (einval)
		return rp_nccl_rule_on(version, RP_NCCL_R_TYPES_EINVAL_OK) ? VER_UNSET : VER_FAIL;
	switch (g->type) {
	case RP_GID_TYPE_IB_ROCE_V1:
		return 1;
	case RP_GID_TYPE_ROCE_V2:
		return 2;
	default:
		return VER_UNSET;
	}
}

/* ncclIbGetGidIndex's walk (since 2.21.5): start at 0, for each candidate 1..len-1 take it when it
 * brings the wanted family (and range) where the current one has the other family; else, when it
 * is valid, of the wanted family and range, read both RoCE versions (the current one first; a
 * failed read fails the port) and take it when it has the wanted version and the current one has
 * another version or is not valid. A candidate whose version is unset has -1 (never the wanted
 * one unless NCCL_IB_ROCE_VERSION_NUM=-1); a current one whose version is unset is taken as
 * different (NCCL compares an uninitialised variable there). */
static void gid_walk(const struct rp_port *port, const struct rp_nccl_env *env, const struct rp_nccl_addr_range *r,
		     struct rp_nccl_gid_choice *c)
{
	int len = gid_tbl_len(port);

	c->index = 0;
	for (int cand = 1; cand < len; cand++) {
		struct rp_gid cur = gid_query(port, c->index), g = gid_query(port, cand);
		int vcur, vcand;

		if (gid_family(&g) != gid_family(&cur) && gid_family(&g) == env->addr_family && gid_in_range(&g, r)) {
			c->index = cand;
			continue;
		}
		if (gid_family(&g) != env->addr_family || !rp_nccl_gid_valid(&g) || !gid_in_range(&g, r))
			continue;
		vcur = gid_types_version(&cur, env->version);
		vcand = vcur == VER_FAIL ? VER_FAIL : gid_types_version(&g, env->version);
		if (vcur == VER_FAIL || vcand == VER_FAIL) {
			c->status = RP_NCCL_GID_TYPES_FAIL;
			c->index = vcur == VER_FAIL ? cur.index : cand;
			return;
		}
		if (vcand == VER_UNSET)
			vcand = -1;
		if ((vcur != vcand || !rp_nccl_gid_valid(&cur)) && vcand == env->roce_version)
			c->index = cand;
	}
}

/* The FLID of a GID: bytes 4 and 5, big-endian. */
static int gid_flid(const struct rp_gid *g)
{
	return g->raw[4] << 8 | g->raw[5];
}

int rp_nccl_env_gid_index(const struct rp_nccl_env *env)
{
	if (env->gid_index_set || env->gid_index >= 0)
		return env->gid_index;
	return rp_nccl_rule_on(env->version, RP_NCCL_R_GID_AUTO) ? -1 : 0;
}

void rp_nccl_gid_choose(const struct rp_port *port, const struct rp_nccl_env *env, struct rp_nccl_gid_choice *c)
{
	struct rp_nccl_addr_range range;
	const struct rp_nccl_addr_range *r;
	bool auto_rule = rp_nccl_rule_on(env->version, RP_NCCL_R_GID_AUTO);
	int idx, len = gid_tbl_len(port);
	struct rp_gid g;
	bool crash;

	c->status = RP_NCCL_GID_OK;
	c->index = 0;
	if (port->link_layer != RP_LL_ETHERNET && rp_nccl_rule_on(env->version, RP_NCCL_R_FLID_GID)) {
		/* InfiniBand since 2.22.3: the FLID index when its GID has one, else 0; the index is then
		 * queried (ibv_query_gid): a negative one, or 0 in an empty table, fails the port. */
		if (env->flid_gid_index < len) {
			if (env->flid_gid_index < 0) {
				c->status = RP_NCCL_GID_QUERY_FAILS;
				c->index = env->flid_gid_index;
				return;
			}
			g = gid_query(port, env->flid_gid_index);
			if (gid_flid(&g) != 0)
				c->index = env->flid_gid_index;
		}
		if (c->index >= len)
			c->status = RP_NCCL_GID_QUERY_FAILS;
		return;
	}
	/* RoCE, and InfiniBand before 2.22.3 (ncclIbAccept queries the index on every port: net_ib.cc
	 * v2.18.1-1 to v2.21.5-1; IB QPs route by LID, so it is only queried): before 2.21.5
	 * NCCL_IB_GID_INDEX (default 0) as given; since, as given when >= 0, else the walk. */
	idx = rp_nccl_env_gid_index(env);
	if (!auto_rule || idx >= 0) {
		c->index = idx;
		if (idx < 0 || idx >= len)
			c->status = RP_NCCL_GID_QUERY_FAILS;
		return;
	}
	r = env_range(env, &range, &crash);
	if (crash) {
		c->status = RP_NCCL_GID_CRASH;
		return;
	}
	gid_walk(port, env, r, c);
	/* The index found is then queried (ibv_query_gid): an empty table fails there. */
	if (c->status == RP_NCCL_GID_OK && c->index >= len)
		c->status = RP_NCCL_GID_QUERY_FAILS;
}

int rp_nccl_gid_index(const struct rp_port *port, const struct rp_nccl_env *env)
{
	struct rp_nccl_gid_choice c;

	rp_nccl_gid_choose(port, env, &c);
	return c.status == RP_NCCL_GID_OK ? c.index : -1;
}

/* --- NCCL_IB_HCA ------------------------------------------------------------------------------- */

/* glibc's atoi(): (int)strtol(s, NULL, 10), so an out-of-range number saturates as a long and is
 * then cut to 32 bits ("99999999999999999999" is LONG_MAX, read as -1). */
static int nccl_atoi(const char *s)
{
	return (int)(int32_t)(uint32_t)(unsigned long)strtol(s, NULL, 10);
}

/* The int16_t NCCL keeps of a rail or plane field. */
static int nccl_int16(int v)
{
	return (int)(int16_t)(uint16_t)(unsigned)v;
}

/* A new entry named [s, s + n) with no port; NULL (counted in n_ignored) past the limit. */
static struct rp_nccl_spec_entry *entry_new(struct rp_nccl_spec *spec, const char *s, size_t n, size_t max)
{
	struct rp_nccl_spec_entry *ent;

	if (spec->n_entries >= max) {
		spec->n_ignored++;
		return NULL;
	}
	ent = &spec->entries[spec->n_entries++];
	memset(ent, 0, sizeof(*ent));
	ent->name_overrun = n >= RP_NAME_MAX && !rp_nccl_rule_on(spec->version, RP_NCCL_R_HCA_FIELDS);
	memcpy(ent->name, s, n < RP_NAME_MAX ? n : RP_NAME_MAX - 1);
	ent->exact = spec->exact;
	ent->port = -1;
	ent->rail = -1;
	ent->plane = -1;
	return ent;
}

/* Keep [s, e) as the entry's port text, for messages. */
static void entry_port_text(struct rp_nccl_spec_entry *ent, const char *s, const char *e)
{
	size_t n = (size_t)(e - s);

	ent->has_port = true;
	memcpy(ent->port_text, s, n < RP_NCCL_PORT_TEXT ? n : RP_NCCL_PORT_TEXT - 1);
}

/* Up to 2.30.4 (src/misc/utils.cc parseStringList, one character at a time): a name ends at ':'
 * or ','; after ':' the port is atoi() of the rest of the text (so "dev:" and "dev:x" are port 0
 * and "dev:1:2" is port 1), and everything up to the next ',' is skipped. An empty name is
 * skipped. Parsing stops once max entries are read. */
static void spec_parse_old(struct rp_nccl_spec *spec, const char *p, size_t max)
{
	while (*p) {
		const char *name = p, *e;
		size_t n = strcspn(p, ":,");
		struct rp_nccl_spec_entry *ent;

		p += n;
		if (n == 0) {
			p += *p == ':' ? strcspn(p, ",") : 0;
			p += *p == ',';
			continue;
		}
		if (spec->n_entries >= max) {
			spec->n_ignored++;
			p += strcspn(p, ",");
			p += *p == ',';
			continue;
		}
		ent = entry_new(spec, name, n, max);
		if (*p == ':') {
			e = p + 1 + strcspn(p + 1, ",");
			entry_port_text(ent, p + 1, e);
			ent->port = nccl_atoi(p + 1);
			p = e;
		}
		p += *p == ',';
	}
}

/* One ':' field of [*s, e): advances *s past it and its ':'; false when there is none. */
static bool next_field(const char **s, const char *e, const char **fs_p, const char **fe_p)
{
	const char *c;

	if (!*s)
		return false;
	c = memchr(*s, ':', (size_t)(e - *s));
	*fs_p = *s;
	*fe_p = c ? c : e;
	*s = c ? c + 1 : NULL;
	return true;
}

/* atoi() of [s, e) (the field ends at ':' or ','; atoi stops there anyway), -1 when empty. */
static int field_int(const char *s, const char *e)
{
	return e > s ? nccl_atoi(s) : -1;
}

/* 2.30.7 (src/misc/utils.cc parseStringList with strtok_r and strsep): entries split on ',' (empty
 * ones skipped), fields on ':': name (cut to 63 characters; empty: skipped), port, rail, plane;
 * an absent or empty field is -1; rail and plane are int16_t. */
static void spec_parse_fields(struct rp_nccl_spec *spec, const char *p, size_t max)
{
	while (*p) {
		const char *e = p + strcspn(p, ","), *s = p, *fs, *fe;
		struct rp_nccl_spec_entry *ent;

		if (e == p) {
			p++;
			continue;
		}
		next_field(&s, e, &fs, &fe);
		if (fe > fs && spec->n_entries >= max) {
			spec->n_ignored++;
		} else if (fe > fs) {
			ent = entry_new(spec, fs, (size_t)(fe - fs), max);
			if (s)
				entry_port_text(ent, s, e);
			if (next_field(&s, e, &fs, &fe))
				ent->port = field_int(fs, fe);
			if (next_field(&s, e, &fs, &fe))
				ent->rail = nccl_int16(field_int(fs, fe));
			if (next_field(&s, e, &fs, &fe))
				ent->plane = nccl_int16(field_int(fs, fe));
		}
		p = *e ? e + 1 : e;
	}
}

int rp_nccl_spec_parse_v(const char *text, uint32_t version, struct rp_nccl_spec *spec)
{
	size_t max = (size_t)rp_nccl_max_devs(version);
	const char *p;

	memset(spec, 0, sizeof(*spec));
	spec->version = version;
	if (!text)
		return 0;
	if (strnlen(text, RP_NCCL_SPEC_MAX + 1) > RP_NCCL_SPEC_MAX)
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
	if (rp_nccl_rule_on(version, RP_NCCL_R_HCA_FIELDS))
		spec_parse_fields(spec, p, max);
	else
		spec_parse_old(spec, p, max);
	return 0;
}

int rp_nccl_spec_parse(const char *text, struct rp_nccl_spec *spec)
{
	return rp_nccl_spec_parse_v(text, RP_NCCL_VERSION_NEWEST, spec);
}

bool rp_nccl_entry_match(const struct rp_nccl_spec_entry *e, const char *dev, int port)
{
	bool name_ok = e->exact ? strcmp(dev, e->name) == 0 : strncmp(dev, e->name, strlen(e->name)) == 0;

	return name_ok && (e->port == -1 || port == -1 || e->port == port);
}

bool rp_nccl_spec_keeps_at(const struct rp_nccl_spec *spec, const char *dev, int port, int *entry_p)
{
	int hit = -1;

	if (entry_p)
		*entry_p = -1;
	if (spec->n_entries == 0)
		return !spec->exclude;
	for (size_t i = 0; i < spec->n_entries && hit < 0; i++)
		if (rp_nccl_entry_match(&spec->entries[i], dev, port))
			hit = (int)i;
	if (spec->exclude)
		return hit < 0;
	if (entry_p)
		*entry_p = hit;
	return hit >= 0;
}

bool rp_nccl_spec_keeps(const struct rp_nccl_spec *spec, const char *dev, int port)
{
	return rp_nccl_spec_keeps_at(spec, dev, port, NULL);
}
