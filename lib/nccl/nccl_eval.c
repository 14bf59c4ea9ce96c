/* nccl_eval.c: what NCCL would do on a node under its environment: the (device, port) selection in
 * NCCL's order, GID indices, the adapter and GPUDirect decision per GPU, warnings with stable codes
 * and a recommended NCCL_IB_HCA; see nccl.h. */
#include "nccl/nccl_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/log.h"
#include "base/util.h"

static const struct {
	const char *code;
	bool fatal;
} warn_info[RP_NCCL_W_COUNT_] = {
	[RP_NCCL_W_PREFIX_OVERMATCH] = { "prefix_overmatch", true },
	[RP_NCCL_W_NO_MATCH] = { "no_match", true },
	[RP_NCCL_W_EXCLUDE_NO_MATCH] = { "exclude_no_match", false },
	[RP_NCCL_W_WHITESPACE] = { "whitespace", true },
	[RP_NCCL_W_BAD_PORT] = { "bad_port", true },
	[RP_NCCL_W_TOO_MANY_ENTRIES] = { "too_many_entries", true },
	[RP_NCCL_W_ALL_EXCLUDED] = { "all_excluded", true },
	[RP_NCCL_W_PORT_NOT_ACTIVE] = { "port_not_active", true },
	[RP_NCCL_W_NOT_IN_VERBS] = { "not_in_verbs", true },
	[RP_NCCL_W_NOTHING_SELECTED] = { "nothing_selected", true },
	[RP_NCCL_W_TOO_MANY_PORTS] = { "too_many_ports", true },
	[RP_NCCL_W_MIXED_LINK_LAYER] = { "mixed_link_layer", true },
	[RP_NCCL_W_IB_SUBNET_MISMATCH] = { "ib_subnet_mismatch", true },
	[RP_NCCL_W_NO_USABLE_GID] = { "no_usable_gid", true },
	[RP_NCCL_W_BAD_GID_OVERRIDE] = { "bad_gid_override", true },
	[RP_NCCL_W_ROCE_VERSION] = { "roce_version", false },
	[RP_NCCL_W_GDR_DISABLED] = { "gdr_disabled", false },
	[RP_NCCL_W_ENV_PARSED_AS] = { "env_parsed_as", false },
	[RP_NCCL_W_GID_INVALID] = { "gid_invalid", true },
	[RP_NCCL_W_PORT_FAILED] = { "port_failed", true },
	[RP_NCCL_W_IB_DISABLED] = { "ib_disabled", true },
	[RP_NCCL_W_NCCL_CRASH] = { "nccl_crash", true },
	[RP_NCCL_W_NCCL_OVERFLOW] = { "nccl_overflow", true },
	[RP_NCCL_W_NCCL_VERSION] = { "nccl_version", false },
	[RP_NCCL_W_NEWER_THAN_MODEL] = { "nccl_newer_than_model", false },
};

const char *rp_nccl_warn_code(enum rp_nccl_warn w)
{
	return (unsigned)w < RP_NCCL_W_COUNT_ ? warn_info[w].code : "unknown";
}

bool rp_nccl_warn_fatal(enum rp_nccl_warn w)
{
	return (unsigned)w < RP_NCCL_W_COUNT_ && warn_info[w].fatal;
}

/* The evaluation in progress; err is sticky (the first allocation failure). */
struct eval {
	const struct rp_node *node;
	const struct rp_nccl_env *env;
	struct rp_nccl_result *res;
	size_t cap_warnings;
	int err;
};

static void warn_add(struct eval *ev, enum rp_nccl_warn code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void warn_add(struct eval *ev, enum rp_nccl_warn code, const char *fmt, ...)
{
	struct rp_nccl_result *res = ev->res;
	struct rp_nccl_warning *w;
	va_list ap;

	if (ev->err)
		return;
	if (res->n_warnings == ev->cap_warnings) {
		size_t cap = ev->cap_warnings ? 2 * ev->cap_warnings : 8;

		w = realloc(res->warnings, cap * sizeof(*w));
		if (!w) {
			ev->err = rp_error(-ENOMEM, "nccl rules: out of memory for warnings");
			return;
		}
		res->warnings = w;
		ev->cap_warnings = cap;
	}
	w = &res->warnings[res->n_warnings++];
	w->code = code;
	va_start(ap, fmt);
	vsnprintf(w->message, sizeof(w->message), fmt, ap);
	va_end(ap);
}

/* How many of the adapter's ports NCCL would consider. */
static size_t hca_usable_ports(const struct rp_hca *h)
{
	size_t n = 0;

	for (size_t i = 0; i < h->n_ports; i++)
		n += rp_nccl_port_usable(&h->ports[i]);
	return n;
}

/* Any whitespace in s. */
static bool has_space(const char *s)
{
	for (; *s; s++)
		if (isspace((unsigned char)*s))
			return true;
	return false;
}

/* The entry is a prefix and the device's name carries its number on ("mlx5_1" -> "mlx5_10"). */
static bool numeric_overmatch(const struct rp_nccl_spec_entry *e, const char *dev)
{
	size_t n = strlen(e->name);

	return !e->exact && n > 0 && strlen(dev) > n && strncmp(dev, e->name, n) == 0 &&
	       isdigit((unsigned char)e->name[n - 1]) && isdigit((unsigned char)dev[n]);
}

/* Warnings about one entry's text. Whitespace matters in the name (NCCL compares it literally); after
 * the port NCCL's atoi() skips it, so there only the number read counts: below 1 it matches no port
 * (":", ":x", ":0") or, for -1, every port. */
static void check_entry_text(struct eval *ev, const struct rp_nccl_spec_entry *e)
{
	bool fields = rp_nccl_rule_on(ev->env->version, RP_NCCL_R_HCA_FIELDS);

	if (has_space(e->name))
		warn_add(ev, RP_NCCL_W_WHITESPACE,
			 "entry '%s' contains whitespace: NCCL does not trim it and compares the name literally", e->name);
	if (e->name_overrun)
		warn_add(ev, RP_NCCL_W_NCCL_OVERFLOW,
			 "entry '%.20s...' has a name of 64 characters or more: this NCCL copies it past its 64-byte "
			 "buffer (undefined behaviour; 2.30.7 cuts it at 63)", e->name);
	/* 2.30.7 reads an empty port field as every port (its documented default); a number below 1
	 * is still either nothing (0) or every port (-1). */
	if (e->has_port && e->port < 1 && !(fields && (e->port_text[0] == '\0' || e->port_text[0] == ':')))
		warn_add(ev, RP_NCCL_W_BAD_PORT, "entry '%s:%s': NCCL reads port %d, %s", e->name, e->port_text, e->port,
			 e->port == -1 ? "which means every port" : "which matches no port");
}

/* Warnings about what one entry names on the node. */
static void check_entry_match(struct eval *ev, const struct rp_nccl_spec *spec, const struct rp_nccl_spec_entry *e)
{
	const struct rp_node *node = ev->node;
	size_t named = 0, with_port = 0;
	char over[256] = "";

	for (size_t d = 0; d < node->n_hcas; d++) {
		const struct rp_hca *h = &node->hcas[d];
		bool took_usable = false;

		if (!rp_nccl_entry_match(e, h->name, -1))
			continue;
		named++;
		for (size_t i = 0; i < h->n_ports; i++) {
			const struct rp_port *p = &h->ports[i];

			if (!rp_nccl_entry_match(e, h->name, p->num))
				continue;
			with_port++;
			if (rp_nccl_port_usable(p))
				took_usable = true;
			else if (!spec->exclude && e->port != -1)
				warn_add(ev, RP_NCCL_W_PORT_NOT_ACTIVE,
					 "%s port %d is %s (%s): NCCL skips it silently", h->name, p->num,
					 rp_port_state_str(p->state), rp_link_layer_str(p->link_layer));
		}
		if (!spec->exclude && e->port == -1 && h->n_ports == 0)
			warn_add(ev, RP_NCCL_W_PORT_NOT_ACTIVE, "%s has no ports%s%s%s: NCCL drops it silently", h->name,
				 h->unusable_reason[0] ? " (" : "", h->unusable_reason, h->unusable_reason[0] ? ")" : "");
		else if (!spec->exclude && e->port == -1 && hca_usable_ports(h) == 0)
			warn_add(ev, RP_NCCL_W_PORT_NOT_ACTIVE,
				 "%s has no ACTIVE InfiniBand or Ethernet port: NCCL drops it silently", h->name);
		if (took_usable && rp_nccl_hca_visible(h) && numeric_overmatch(e, h->name)) {
			size_t len = strlen(over);

			snprintf(over + len, sizeof(over) - len, "%s%s", len ? ", " : "", h->name);
		}
	}
	if (over[0])
		warn_add(ev, RP_NCCL_W_PREFIX_OVERMATCH,
			 "entry '%s' is a prefix: it also %s %s (use '=' for exact names)", e->name,
			 spec->exclude ? "excludes" : "selects", over);
	if (named == 0 || (e->port != -1 && with_port == 0)) {
		char what[160];

		if (named == 0)
			snprintf(what, sizeof(what), "matches no device name");
		else
			snprintf(what, sizeof(what), "names port %d, which no matching device has", e->port);
		warn_add(ev, spec->exclude ? RP_NCCL_W_EXCLUDE_NO_MATCH : RP_NCCL_W_NO_MATCH, "entry '%s%s%s' %s%s",
			 e->name, e->has_port ? ":" : "", e->port_text, what,
			 spec->exclude ? ": it excludes nothing" : "");
	}
}

/* Devices that the spec would keep but that ibv_get_device_list() does not list. */
static void check_not_in_verbs(struct eval *ev, const struct rp_nccl_spec *spec)
{
	for (size_t d = 0; d < ev->node->n_hcas; d++) {
		const struct rp_hca *h = &ev->node->hcas[d];

		if (rp_nccl_hca_visible(h))
			continue;
		for (size_t i = 0; i < h->n_ports; i++) {
			if (rp_nccl_port_usable(&h->ports[i]) && rp_nccl_spec_keeps(spec, h->name, h->ports[i].num)) {
				warn_add(ev, RP_NCCL_W_NOT_IN_VERBS,
					 "%s is in sysfs but ibv_get_device_list() does not list it%s%s%s: NCCL cannot use it",
					 h->name, h->unusable_reason[0] ? " (" : "", h->unusable_reason,
					 h->unusable_reason[0] ? ")" : "");
				break;
			}
		}
	}
}

/* Does any adapter NCCL can see have a port it would consider? */
static bool any_usable_visible_port(const struct rp_node *node)
{
	for (size_t d = 0; d < node->n_hcas; d++)
		if (rp_nccl_hca_visible(&node->hcas[d]) && hca_usable_ports(&node->hcas[d]) > 0)
			return true;
	return false;
}

/* The subnet prefix of an IB port: the upper 64 bits of GID 0; false when there is none. */
static bool ib_subnet(const struct rp_port *p, uint8_t prefix[8])
{
	for (size_t i = 0; i < p->n_gids; i++) {
		const struct rp_gid *g = &p->gids[i];

		if (g->index != 0)
			continue;
		for (int b = 0; b < 16; b++) {
			if (g->raw[b]) {
				memcpy(prefix, g->raw, 8);
				return true;
			}
		}
		return false;
	}
	return false;
}

/* The node's port behind a selected (device, port). */
static const struct rp_port *sel_port(const struct rp_node *node, const struct rp_nccl_sel *s)
{
	return rp_hca_find_port(&node->hcas[s->hca_idx], s->port);
}

/* Link layers and IB subnets of the selection. */
static void check_fabric(struct eval *ev)
{
	const struct rp_nccl_result *res = ev->res;
	const struct rp_nccl_sel *ib = NULL, *eth = NULL, *first_ib = NULL;
	uint8_t first[8], pfx[8];

	for (size_t i = 0; i < res->n_selected; i++) {
		const struct rp_nccl_sel *s = &res->selected[i];

		if (s->link_layer == RP_LL_INFINIBAND && !ib)
			ib = s;
		if (s->link_layer == RP_LL_ETHERNET && !eth)
			eth = s;
	}
	if (ib && eth)
		warn_add(ev, RP_NCCL_W_MIXED_LINK_LAYER,
			 "InfiniBand (%s:%d) and Ethernet/RoCE (%s:%d) ports are selected together: they cannot talk to each other",
			 ib->hca, ib->port, eth->hca, eth->port);
	for (size_t i = 0; i < res->n_selected; i++) {
		const struct rp_nccl_sel *s = &res->selected[i];
		const struct rp_port *p = sel_port(ev->node, s);

		if (s->link_layer != RP_LL_INFINIBAND || !p || !ib_subnet(p, pfx))
			continue;
		if (!first_ib) {
			first_ib = s;
			memcpy(first, pfx, 8);
		} else if (memcmp(first, pfx, 8) != 0) {
			warn_add(ev, RP_NCCL_W_IB_SUBNET_MISMATCH,
				 "%s:%d has subnet prefix %02x%02x:%02x%02x:%02x%02x:%02x%02x but %s:%d has "
				 "%02x%02x:%02x%02x:%02x%02x:%02x%02x: likely different fabrics",
				 s->hca, s->port, pfx[0], pfx[1], pfx[2], pfx[3], pfx[4], pfx[5], pfx[6], pfx[7],
				 first_ib->hca, first_ib->port, first[0], first[1], first[2], first[3], first[4], first[5],
				 first[6], first[7]);
		}
	}
}

/* The port's GID entry with this index; NULL when the table has none. */
static const struct rp_gid *find_gid(const struct rp_port *p, int index)
{
	for (size_t i = 0; i < p->n_gids; i++)
		if (p->gids[i].index == index)
			return &p->gids[i];
	return NULL;
}

/* "::ffff:10.0.0.1" for a GID. */
static void gid_addr(const struct rp_gid *g, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, g->raw, buf, (socklen_t)len))
		rp_strlcpy(buf, g->text, len);
}

/* Warnings about the GID NCCL uses on a RoCE port (s->gid_index >= 0). */
static void check_roce_gid(struct eval *ev, const struct rp_nccl_sel *s, const struct rp_port *p)
{
	const struct rp_nccl_env *env = ev->env;
	const struct rp_gid *g = find_gid(p, s->gid_index);
	char addr[INET6_ADDRSTRLEN];
	bool given = env->gid_index_set || env->gid_index >= 0;
	bool override = given || !rp_nccl_rule_on(env->version, RP_NCCL_R_GID_AUTO);

	if (!g || !rp_nccl_gid_valid(g)) {
		if (g)
			gid_addr(g, addr, sizeof(addr));
		warn_add(ev, RP_NCCL_W_GID_INVALID, "NCCL will use GID index %d on %s:%d, a %s GID%s%s%s%s", s->gid_index,
			 s->hca, s->port, !g || !g->raw[0] ? "zero" : "link-local", g ? " (" : "", g ? addr : "", g ? ")" : "",
			 override ? (given ? " (NCCL_IB_GID_INDEX)" : ": this release has no automatic GID choice and NCCL_IB_GID_INDEX defaults to 0")
				  : ": no valid GID of the wanted family and range on this port");
		return;
	}
	if (!override && !rp_nccl_gid_wanted(g, env)) {
		gid_addr(g, addr, sizeof(addr));
		warn_add(ev, RP_NCCL_W_NO_USABLE_GID, "%s:%d has no valid %s GID%s%s: NCCL uses GID %d (%s) instead", s->hca,
			 s->port, env->addr_family == AF_INET6 ? "IPv6" : "IPv4", env->addr_range ? " inside " : "",
			 env->addr_range ? env->addr_range : "", s->gid_index, addr);
		return;
	}
	if (g->type != RP_GID_TYPE_NONE && g->type != RP_GID_TYPE_UNKNOWN &&
	    (g->type == RP_GID_TYPE_ROCE_V2 ? 2 : 1) != env->roce_version)
		warn_add(ev, RP_NCCL_W_ROCE_VERSION, "%s:%d uses GID %d (%s), not RoCE v%d (NCCL_IB_ROCE_VERSION_NUM)",
			 s->hca, s->port, s->gid_index, rp_gid_type_str(g->type), env->roce_version);
}

/* ibv_query_gid() on the index NCCL took fails, and with it the port. On InfiniBand since 2.22.3
 * the index is NCCL_IB_ROUTABLE_FLID_GID_INDEX's or 0; elsewhere NCCL_IB_GID_INDEX's or the walk's. */
static void gid_query_fails(struct eval *ev, const struct rp_nccl_sel *s, const struct rp_port *p, int index)
{
	bool ib = s->link_layer != RP_LL_ETHERNET;
	bool flid = ib && rp_nccl_rule_on(ev->env->version, RP_NCCL_R_FLID_GID);
	const char *from;

	if (flid)
		from = index == ev->env->flid_gid_index ? "NCCL_IB_ROUTABLE_FLID_GID_INDEX" : "the default";
	else
		from = index == rp_nccl_env_gid_index(ev->env) ? "NCCL_IB_GID_INDEX" : "NCCL's automatic choice";
	warn_add(ev, ib ? RP_NCCL_W_PORT_FAILED : RP_NCCL_W_BAD_GID_OVERRIDE,
		 "GID index %d on %s:%d (%s): no such index (the table has %zu), ibv_query_gid() fails and NCCL "
		 "fails the port%s", index, s->hca, s->port, from, p->n_gids,
		 ib && !flid ? " (this release queries it on InfiniBand ports too)" : "");
}

/* GID index per selected port (rp_nccl_gid_choose), with its warnings. A range that crashes NCCL
 * is reported once. */
static void assign_gids(struct eval *ev)
{
	bool crashed = false;

	for (size_t i = 0; i < ev->res->n_selected; i++) {
		struct rp_nccl_sel *s = &ev->res->selected[i];
		const struct rp_port *p = sel_port(ev->node, s);
		struct rp_nccl_gid_choice c;

		if (!p)
			continue;
		rp_nccl_gid_choose(p, ev->env, &c);
		s->gid_index = c.status == RP_NCCL_GID_OK ? c.index : -1;
		switch (c.status) {
		case RP_NCCL_GID_OK:
			if (s->link_layer == RP_LL_ETHERNET)
				check_roce_gid(ev, s, p);
			break;
		case RP_NCCL_GID_QUERY_FAILS:
			gid_query_fails(ev, s, p, c.index);
			break;
		case RP_NCCL_GID_TYPES_FAIL:
			warn_add(ev, RP_NCCL_W_PORT_FAILED,
				 "%s:%d: NCCL cannot read gid_attrs/types/%d during its GID choice and fails the port", s->hca,
				 s->port, c.index);
			break;
		case RP_NCCL_GID_CRASH:
			if (!crashed)
				warn_add(ev, RP_NCCL_W_NCCL_CRASH,
					 "NCCL_IB_ADDR_RANGE='%s' has no '/': this NCCL writes through a NULL pointer when it "
					 "picks the GID of %s:%d (fixed in 2.23.4)", ev->env->addr_range, s->hca, s->port);
			crashed = true;
			break;
		}
	}
}

void rp_nccl_topo_merge(const struct rp_nccl_env *env, struct rp_topo_merge *m)
{
	m->off = rp_nccl_rule_on(env->version, RP_NCCL_R_NO_PATH_MERGE);
	m->one_digit = rp_nccl_rule_on(env->version, RP_NCCL_R_MERGE_ONE_DIGIT);
	m->vfs = env->merge_vfs;
	m->gpu_link_nvml = rp_nccl_rule_on(env->version, RP_NCCL_R_GPU_LINK_NVML);
	m->version = env->version;
}

/* Per GPU: NCCL's adapter among the selected ones and whether NCCL would use GPUDirect RDMA. */
static void choose_gpus(struct eval *ev)
{
	const struct rp_node *node = ev->node;
	struct rp_nccl_result *res = ev->res;
	struct rp_topo_merge merge;

	if (node->n_gpus == 0)
		return;
	rp_nccl_topo_merge(ev->env, &merge);
	res->gpus = calloc(node->n_gpus, sizeof(*res->gpus));
	if (!res->gpus) {
		ev->err = rp_error(-ENOMEM, "nccl rules: out of memory for GPUs");
		return;
	}
	res->n_gpus = node->n_gpus;
	for (size_t g = 0; g < node->n_gpus; g++) {
		const struct rp_gpu *gpu = &node->gpus[g];
		struct rp_nccl_gpu_choice *c = &res->gpus[g];
		const struct rp_nccl_sel *best = NULL;
		enum rp_path best_path = RP_PATH_SYS;
		float best_bw = 0;

		rp_strlcpy(c->pci, gpu->pci, sizeof(c->pci));
		for (size_t i = 0; i < res->n_selected; i++) {
			const struct rp_nccl_sel *s = &res->selected[i];
			enum rp_path path;
			float bw;

			if (best && s->hca_idx == best->hca_idx)
				continue;
			/* ncclTopoGetLocal (src/graph/topo.cc): the widest path, then the smallest type. */
			path = rp_topo_path_m(node, gpu, &node->hcas[s->hca_idx], &merge);
			bw = rp_topo_path_bw_m(node, gpu, &node->hcas[s->hca_idx], &merge);
			if (!best || bw > best_bw || (bw == best_bw && path < best_path)) {
				best = s;
				best_path = path;
				best_bw = bw;
			}
		}
		if (!best)
			continue;
		rp_strlcpy(c->hca, best->hca, sizeof(c->hca));
		c->path = best_path;
		c->gdr = best_path <= ev->env->gdr_level;
		if (!c->gdr)
			warn_add(ev, RP_NCCL_W_GDR_DISABLED,
				 "GPU %s is %s from its nearest selected adapter %s, worse than NCCL_NET_GDR_LEVEL=%s: "
				 "NCCL will not use GPUDirect RDMA for it", c->pci, rp_path_str(best_path), c->hca,
				 rp_path_str(ev->env->gdr_level));
	}
}

/* Strip leading and trailing whitespace in place. */
static void trim(char *s)
{
	size_t n, skip = 0;

	while (isspace((unsigned char)s[skip]))
		skip++;
	memmove(s, s + skip, strlen(s + skip) + 1);
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* The spec the user most likely meant: whitespace trimmed, and a prefix entry that names an existing
 * device and also takes others ("mlx5_1" with mlx5_10 present) read as that exact name. */
static void intended_spec(const struct rp_node *node, const struct rp_nccl_spec *spec, struct rp_nccl_spec *out)
{
	size_t n = 0;

	*out = *spec;
	for (size_t i = 0; i < spec->n_entries; i++) {
		struct rp_nccl_spec_entry e = spec->entries[i];
		bool exists = false, over = false;

		trim(e.name);
		if (!e.name[0])
			continue;
		if (e.has_port) {
			trim(e.port_text);
			/* 2.30.7 reads an empty port field as every port. */
			e.port = e.port_text[0] || !rp_nccl_rule_on(spec->version, RP_NCCL_R_HCA_FIELDS) ? atoi(e.port_text) : -1;
		}
		for (size_t d = 0; d < node->n_hcas; d++) {
			exists = exists || strcmp(node->hcas[d].name, e.name) == 0;
			over = over || numeric_overmatch(&e, node->hcas[d].name);
		}
		if (exists && over)
			e.exact = true;
		out->entries[n++] = e;
	}
	out->n_entries = n;
}

/* Could NCCL use a valid GID on this RoCE port? With the walk (2.21.5 on): the one it picks under
 * env. Before, the index is whatever NCCL_IB_GID_INDEX says, so: any valid GID in the table. */
static bool port_has_usable_gid(const struct rp_nccl_env *env, const struct rp_port *p)
{
	const struct rp_gid *g;
	int gi;

	if (!rp_nccl_rule_on(env->version, RP_NCCL_R_GID_AUTO)) {
		for (size_t i = 0; i < p->n_gids; i++)
			if (rp_nccl_gid_valid(&p->gids[i]))
				return true;
		return false;
	}
	gi = rp_nccl_gid_index(p, env);
	g = gi >= 0 ? find_gid(p, gi) : NULL;
	return g && rp_nccl_gid_valid(g);
}

/* "=dev:port,..." over the usable ports meant (and, on RoCE, with a GID NCCL accepts); NULL when
 * there are none. */
static int build_recommendation(struct eval *ev, const struct rp_nccl_spec *spec)
{
	struct rp_nccl_spec *want = malloc(sizeof(*want));
	struct rp_nccl_pick pick;
	size_t keep = 0, len = 2;
	char *out;
	int rc;

	if (!want)
		return rp_error(-ENOMEM, "nccl rules: out of memory for the recommendation");
	intended_spec(ev->node, spec, want);
	rc = rp_nccl_pick_ports(ev->node, ev->env, want, &pick);
	free(want);
	if (rc)
		return rc;
	/* A RoCE port without a valid GID NCCL would pick cannot connect: not recommended. */
	for (size_t i = 0; i < pick.n && keep < (size_t)rp_nccl_max_devs(ev->env->version); i++) {
		const struct rp_port *p = sel_port(ev->node, &pick.sel[i]);

		if (pick.sel[i].link_layer == RP_LL_ETHERNET && p && !port_has_usable_gid(ev->env, p))
			continue;
		pick.sel[keep++] = pick.sel[i];
		len += strlen(pick.sel[i].hca) + 16;
	}
	if (keep > 0) {
		out = malloc(len);
		if (!out) {
			free(pick.sel);
			return rp_error(-ENOMEM, "nccl rules: out of memory for the recommendation");
		}
		out[0] = '=';
		out[1] = '\0';
		for (size_t i = 0; i < keep; i++) {
			size_t at = strlen(out);

			snprintf(out + at, len - at, "%s%s:%d", i ? "," : "", pick.sel[i].hca, pick.sel[i].port);
		}
		ev->res->recommended = out;
	}
	free(pick.sel);
	return 0;
}

/* env_parsed_as for every variable the release reads that NCCL reads otherwise than it reads. */
static void check_env_text(struct eval *ev)
{
	const struct rp_nccl_env *env = ev->env;
	bool walk = rp_nccl_rule_on(env->version, RP_NCCL_R_GID_AUTO);
	char how[96];
	int64_t v;

	for (int p = 0; p < RP_NCCL_P_COUNT_; p++) {
		if ((p == RP_NCCL_P_ROCE_VERSION && !walk) ||
		    (p == RP_NCCL_P_FLID_GID_INDEX && !rp_nccl_rule_on(env->version, RP_NCCL_R_FLID_GID)) ||
		    (p == RP_NCCL_P_PCI_ORDER && !rp_nccl_rule_on(env->version, RP_NCCL_R_PCI_ORDER)))
			continue;
		if (env->text[p] && rp_nccl_param_read(env->text[p], 0, &v, how, sizeof(how)))
			warn_add(ev, RP_NCCL_W_ENV_PARSED_AS, "%s=%s is read by NCCL as %s", rp_nccl_param_name((enum rp_nccl_param)p),
				 env->text[p], how);
	}
	if (walk && env->addr_family_text && strcmp(env->addr_family_text, "AF_INET") != 0 &&
	    strcmp(env->addr_family_text, "AF_INET6") != 0)
		warn_add(ev, RP_NCCL_W_ENV_PARSED_AS, "NCCL_IB_ADDR_FAMILY=%s is not AF_INET or AF_INET6: NCCL uses AF_INET",
			 env->addr_family_text);
	if (walk && env->addr_range) {
		struct rp_nccl_addr_range r;
		enum rp_nccl_range_status st = rp_nccl_addr_range_read(env->addr_range, env->addr_family, env->version, &r);

		if (st == RP_NCCL_RANGE_IGNORED)
			warn_add(ev, RP_NCCL_W_ENV_PARSED_AS, "NCCL_IB_ADDR_RANGE=%s is not an %s address/length: NCCL ignores it",
				 env->addr_range, env->addr_family == AF_INET6 ? "AF_INET6" : "AF_INET");
		else if (st == RP_NCCL_RANGE_OK && r.prefix_len < 0)
			warn_add(ev, RP_NCCL_W_ENV_PARSED_AS, "NCCL_IB_ADDR_RANGE=%s has a negative length: it matches no GID",
				 env->addr_range);
	}
	if (env->gdr_level_text && rp_path_parse(env->gdr_level_text, &(enum rp_path){ RP_PATH_PXB }) != 0)
		warn_add(ev, RP_NCCL_W_ENV_PARSED_AS, "NCCL_NET_GDR_LEVEL=%s is read by NCCL as %s", env->gdr_level_text,
			 isdigit((unsigned char)env->gdr_level_text[0]) ? rp_path_str(env->gdr_level) : "unset (the default)");
}

/* The release, when it is not one of those read. */
static void check_version(struct eval *ev)
{
	char v[16], msg[256];

	rp_nccl_version_format(ev->env->version, v, sizeof(v));
	if (ev->env->version < RP_NCCL_VERSION_OLDEST)
		warn_add(ev, RP_NCCL_W_NCCL_VERSION, "NCCL %s is older than the oldest release modelled (2.18.1): its rules are used", v);
	else if (rp_nccl_newer_than_model(ev->env->version, msg, sizeof(msg)))
		warn_add(ev, RP_NCCL_W_NEWER_THAN_MODEL, "%s", msg);
	else if (!rp_nccl_version_is_release(ev->env->version))
		warn_add(ev, RP_NCCL_W_NCCL_VERSION, "NCCL %s is not a release tag: the rules of the releases around it are used", v);
}

static bool node_nopath(const struct eval *ev, const struct rp_nccl_sel *s)
{
	return ev->node->hcas[s->hca_idx].pci_path[0] == '\0';
}

/* Crashes, overruns and an IB transport that NCCL disables, from the port list. */
static void check_pick(struct eval *ev, const struct rp_nccl_pick *pick)
{
	const struct rp_nccl_sel *sel = pick->sel;

	if (pick->dropped)
		warn_add(ev, RP_NCCL_W_TOO_MANY_PORTS, "%zu more usable ports are kept: NCCL opens no device once %d ports are taken",
			 pick->dropped, rp_nccl_max_devs(ev->env->version));
	if (pick->overflow)
		warn_add(ev, RP_NCCL_W_NCCL_OVERFLOW,
			 "%s adds %zu port%s past NCCL's %d-entry device table (it checks the limit per device, not per "
			 "port): undefined behaviour", sel[pick->n - 1].hca, pick->overflow, pick->overflow == 1 ? "" : "s",
			 rp_nccl_max_devs(ev->env->version));
	/* Whichever NULL comparison NCCL reaches first; at one port ncclIbGetPciPath runs first. */
	if (pick->merge_crash >= 0 && (pick->crash_path < 0 || pick->merge_crash < pick->crash_path))
		warn_add(ev, RP_NCCL_W_NCCL_CRASH,
			 "%s and %s are compared by PCI path to merge NIC ports (NCCL_IB_MERGE_NICS=1) and %s has no PCI "
			 "device link: NCCL calls strcmp() on a NULL path and crashes (2.20.3 to 2.23.4)",
			 sel[pick->merge_crash].hca, sel[pick->merge_crash_with].hca,
			 node_nopath(ev, &sel[pick->merge_crash]) ? sel[pick->merge_crash].hca : sel[pick->merge_crash_with].hca);
	else if (pick->crash_nopath >= 0)
		warn_add(ev, RP_NCCL_W_NCCL_CRASH,
			 "%s has no PCI device link and comes before %s in NCCL's order: NCCL compares %s's PCI path "
			 "with a NULL one and crashes%s", sel[pick->crash_nopath].hca, sel[pick->crash_path].hca,
			 sel[pick->crash_path].hca,
			 rp_nccl_rule_on(ev->env->version, RP_NCCL_R_PCI_ORDER) ? " (NCCL_IB_DEVICE_PCI_ORDER=0)" : "");
	if (ev->env->ib_disable)
		warn_add(ev, RP_NCCL_W_IB_DISABLED, "NCCL_IB_DISABLE=%s: NCCL does not use IB at all (sockets)",
			 ev->env->text[RP_NCCL_P_IB_DISABLE]);
	else if (pick->bad_plane >= 0 && pick->too_many_planes)
		warn_add(ev, RP_NCCL_W_IB_DISABLED, "%s:%d brings a 13th distinct plane id: NCCL fails its IB initialisation "
			 "and falls back to sockets", sel[pick->bad_plane].hca, sel[pick->bad_plane].port);
	else if (pick->bad_plane >= 0)
		warn_add(ev, RP_NCCL_W_IB_DISABLED, "plane id %d on %s:%d is invalid (bit 14 set): NCCL fails its IB "
			 "initialisation and falls back to sockets", sel[pick->bad_plane].plane, sel[pick->bad_plane].hca,
			 sel[pick->bad_plane].port);
}

/* The warnings about the spec's entries and the selection. */
static void check_spec(struct eval *ev, const struct rp_nccl_spec *spec)
{
	const struct rp_nccl_result *res = ev->res;

	if (spec->n_ignored)
		warn_add(ev, RP_NCCL_W_TOO_MANY_ENTRIES,
			 "NCCL_IB_HCA has %zu entries: NCCL reads the first %d and ignores the other %zu",
			 spec->n_entries + spec->n_ignored, rp_nccl_max_devs(ev->env->version), spec->n_ignored);
	for (size_t i = 0; i < spec->n_entries; i++) {
		check_entry_text(ev, &spec->entries[i]);
		check_entry_match(ev, spec, &spec->entries[i]);
	}
	check_not_in_verbs(ev, spec);
	if (res->n_selected == 0) {
		bool usable = any_usable_visible_port(ev->node);

		if (spec->exclude && usable)
			warn_add(ev, RP_NCCL_W_ALL_EXCLUDED, "NCCL_IB_HCA='%s' excludes every usable port", ev->env->ib_hca);
		warn_add(ev, RP_NCCL_W_NOTHING_SELECTED,
			 "NCCL would select no port (\"NET/IB : No device found.\") and fall back to sockets%s",
			 usable ? "" : ": no ACTIVE InfiniBand or Ethernet port on this node");
	}
}

int rp_nccl_evaluate(const struct rp_node *node, const struct rp_nccl_env *env, struct rp_nccl_result *res)
{
	struct eval ev = { .node = node, .env = env, .res = res };
	struct rp_nccl_pick pick = { 0 };
	struct rp_nccl_spec *spec;
	int rc;

	memset(res, 0, sizeof(*res));
	res->version = env->version;
	spec = malloc(sizeof(*spec));
	if (!spec)
		return rp_error(-ENOMEM, "nccl rules: out of memory for NCCL_IB_HCA");
	rc = rp_nccl_spec_parse_v(env->ib_hca, env->version, spec);
	if (rc)
		goto out;
	if (env->ib_hca) {
		res->hca_spec = strdup(env->ib_hca);
		if (!res->hca_spec) {
			rc = rp_error(-ENOMEM, "nccl rules: out of memory for NCCL_IB_HCA");
			goto out;
		}
	}
	rc = rp_nccl_pick_ports(node, env, spec, &pick);
	if (rc)
		goto out;
	check_version(&ev);
	check_env_text(&ev);
	check_pick(&ev, &pick);
	/* IB disabled: NCCL uses no port at all. */
	if (env->ib_disable || pick.bad_plane >= 0)
		pick.n = 0;
	res->selected = pick.sel;
	res->n_selected = pick.n;
	pick.sel = NULL;
	check_spec(&ev, spec);
	check_fabric(&ev);
	assign_gids(&ev);
	choose_gpus(&ev);
	rc = ev.err;
	if (!rc)
		rc = build_recommendation(&ev, spec);
out:
	free(pick.sel);
	free(spec);
	return rc;
}

void rp_nccl_result_fini(struct rp_nccl_result *res)
{
	if (!res)
		return;
	free(res->hca_spec);
	free(res->selected);
	free(res->gpus);
	free(res->warnings);
	free(res->recommended);
	memset(res, 0, sizeof(*res));
}

bool rp_nccl_result_usable(const struct rp_nccl_result *res)
{
	if (res->n_selected == 0)
		return false;
	for (size_t i = 0; i < res->n_warnings; i++)
		if (rp_nccl_warn_fatal(res->warnings[i].code))
			return false;
	return true;
}

int rp_nccl_crash_check(const struct rp_node *node, const struct rp_nccl_env *env, char *msg, size_t len)
{
	struct rp_nccl_result res;
	int rc;

	if (len)
		msg[0] = '\0';
	rc = rp_nccl_evaluate(node, env, &res);
	for (size_t i = 0; !rc && i < res.n_warnings; i++) {
		if (res.warnings[i].code == RP_NCCL_W_NCCL_CRASH) {
			if (len)
				snprintf(msg, len, "%s", res.warnings[i].message);
			rc = 1;
		}
	}
	rp_nccl_result_fini(&res);
	return rc;
}

size_t rp_nccl_result_count(const struct rp_nccl_result *res, enum rp_nccl_warn code)
{
	size_t n = 0;

	for (size_t i = 0; i < res->n_warnings; i++)
		n += res->warnings[i].code == code;
	return n;
}
