/* mx_startup.c: the matrix's start-up exchange; see mx_startup.h. */
#include "job/mx_startup.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "job/mx_tree.h"
#include "base/util.h"

#define SET_MAGIC 0x52505355u   /* "RPSU" */
#define SET_VERSION 1
#define REASON_MAX 400          /* an abort's reason, terminated */
#define NAMED_MAX 8             /* missing ranks named in the give-up message */

enum set_kind { SET_TABLE = 1, SET_ABORT = 2 };

#define PAD8(n) (((n) + 7) & ~(size_t)7)

/* What rank 0 sends down the tree: this header, then (SET_TABLE) n_ranks uint64 lengths and the
 * bytes of every rank in rank order, each padded to 8 (every rank's message starts aligned), or
 * (SET_ABORT) the reason, terminated. */
struct set_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t kind;
	uint32_t n_ranks;
	uint32_t pad;
	uint64_t total;               /* the whole message */
};

static double ceiling_of(const struct mx_startup_cfg *cfg)
{
	return cfg->ceiling_s > 0 ? cfg->ceiling_s : MX_STARTUP_CEILING_X * cfg->window_s;
}

/* The largest set a rank may accept: the header, a length per rank, every rank at its bound. */
static size_t set_bound(const struct mx_startup_cfg *cfg, int size)
{
	size_t per = PAD8(cfg->max_len) + sizeof(uint64_t);

	if (size <= 0 || per < cfg->max_len || (size_t)size > (SIZE_MAX - sizeof(struct set_hdr) - REASON_MAX) / per)
		return SIZE_MAX;
	return sizeof(struct set_hdr) + REASON_MAX + (size_t)size * per;
}

/* --- rank 0: the gather ----------------------------------------------------------------------- */

struct gather {
	void **buf;                   /* per rank, malloc'd; NULL until it arrived (or when rejected) */
	size_t *len;
	bool *in;
	int n_in;
};

static void gather_fini(struct gather *g, int size)
{
	for (int r = 0; g->buf && r < size; r++)
		free(g->buf[r]);
	free(g->buf);
	free(g->len);
	free(g->in);
}

/* "rank 5" / "ranks 5, 7 and 9" / "ranks 5, 7, ... (and 12 more)" of those that did not arrive. */
static void missing_names(const struct gather *g, int size, char *s, size_t n)
{
	int missing = size - g->n_in, named = 0;
	size_t len = (size_t)snprintf(s, n, "%s", missing == 1 ? "rank" : "ranks");

	for (int r = 0; r < size && named < NAMED_MAX && len < n; r++) {
		if (g->in[r])
			continue;
		named++;
		len += (size_t)snprintf(s + len, n - len, "%s %d", named == 1 ? "" : named == missing ? " and" : ",", r);
	}
	if (missing > named && len < n)
		snprintf(s + len, n - len, " (and %d more)", missing - named);
}

/* Rank 0 gives up: the message, then an abort to every rank that arrived. */
static int give_up(struct mx_comm *c, const struct gather *g, const struct mx_startup_cfg *cfg, bool at_ceiling)
{
	char who[160], reason[REASON_MAX];
	struct { struct set_hdr h; char why[REASON_MAX]; } msg;
	int missing = c->size - g->n_in;

	missing_names(g, c->size, who, sizeof(who));
	if (at_ceiling)
		snprintf(reason, sizeof(reason), "%s did not report %s ports within the start-up's ceiling of %.3g s "
			 "(%d of %d arrived)", who, missing == 1 ? "its" : "their", ceiling_of(cfg), g->n_in, c->size);
	else
		snprintf(reason, sizeof(reason), "%s did not report %s ports within %.3g s of the last arrival "
			 "(%d of %d arrived)", who, missing == 1 ? "its" : "their", cfg->window_s, g->n_in, c->size);
	rp_error(-ETIMEDOUT, "matrix start-up: %s", reason);
	memset(&msg, 0, sizeof(msg));
	msg.h = (struct set_hdr){ .magic = SET_MAGIC, .version = SET_VERSION, .kind = SET_ABORT,
				  .total = sizeof(msg) };
	rp_strlcpy(msg.why, reason, sizeof(msg.why));
	for (int r = 1; r < c->size; r++)
		if (g->in[r] && mx_comm_send(c, r, MX_TAG_STARTUP_OUT, MX_STARTUP_ROUND, &msg, sizeof(msg), rp_now() + 2) != 0)
			rp_debug("matrix start-up: the abort did not reach rank %d", r);
	return -ETIMEDOUT;
}

/* Take one arrival into g: 1 when a new rank arrived (or was rejected), 0 for a message dropped,
 * negative errno to stop. */
static int gather_one(struct mx_comm *c, struct gather *g, const struct mx_startup_cfg *cfg, double deadline)
{
	void *b = NULL;
	size_t l = 0;
	int src = -1, rc = mx_comm_recv_max(c, -1, MX_TAG_STARTUP_IN, MX_STARTUP_ROUND, cfg->max_len, &b, &l, &src,
					    deadline);

	if (rc && rc != -EMSGSIZE)
		return rc == -ETIMEDOUT ? rc : rp_error(rc, "matrix start-up: receive the ranks' ports: %s", strerror(-rc));
	if (src <= 0 || src >= c->size || g->in[src]) {
		rp_debug("matrix start-up: dropped a second or stray message from rank %d", src);
		free(b);
		return 0;
	}
	if (rc == -EMSGSIZE)
		rp_warn("matrix start-up: rank %d sent %zu bytes, more than the %zu a rank may send: rejected", src, l,
			cfg->max_len);
	g->buf[src] = b;
	g->len[src] = rc ? 0 : l;
	g->in[src] = true;
	g->n_in++;
	return 1;
}

/* Every rank's bytes into g, the window starting again at every arrival. */
static int gather_all(struct mx_comm *c, struct gather *g, const void *mine, size_t len,
		      const struct mx_startup_cfg *cfg, double t0)
{
	double last = t0, ceiling = t0 + ceiling_of(cfg);

	g->buf = calloc((size_t)c->size, sizeof(*g->buf));
	g->len = calloc((size_t)c->size, sizeof(*g->len));
	g->in = calloc((size_t)c->size, sizeof(*g->in));
	if (!g->buf || !g->len || !g->in || !(g->buf[0] = malloc(len ? len : 1)))
		return rp_error(-ENOMEM, "matrix start-up: allocate for %d ranks", c->size);
	memcpy(g->buf[0], mine, len);
	g->len[0] = len;
	g->in[0] = true;
	g->n_in = 1;
	while (g->n_in < c->size) {
		double deadline = last + cfg->window_s < ceiling ? last + cfg->window_s : ceiling;
		int rc = gather_one(c, g, cfg, deadline);

		if (rc == -ETIMEDOUT)
			return give_up(c, g, cfg, deadline >= ceiling);
		if (rc < 0)
			return rc;
		if (rc)
			last = rp_now();
	}
	return 0;
}

/* The set message from g (malloc'd, *len_p long). */
static int set_build(const struct mx_comm *c, const struct gather *g, char **msg_p, size_t *len_p)
{
	size_t total = sizeof(struct set_hdr) + (size_t)c->size * sizeof(uint64_t), off;
	struct set_hdr h = { .magic = SET_MAGIC, .version = SET_VERSION, .kind = SET_TABLE,
			     .n_ranks = (uint32_t)c->size };
	char *msg;

	for (int r = 0; r < c->size; r++)
		total += PAD8(g->len[r]);
	msg = calloc(1, total);
	if (!msg)
		return rp_error(-ENOMEM, "matrix start-up: allocate the table of %zu bytes", total);
	h.total = total;
	memcpy(msg, &h, sizeof(h));
	off = sizeof(h) + (size_t)c->size * sizeof(uint64_t);
	for (int r = 0; r < c->size; r++) {
		uint64_t l = g->len[r];

		memcpy(msg + sizeof(h) + (size_t)r * sizeof(l), &l, sizeof(l));
		if (l)
			memcpy(msg + off, g->buf[r], l);
		off += PAD8(l);
	}
	*msg_p = msg;
	*len_p = total;
	return 0;
}

/* --- every rank: the set ---------------------------------------------------------------------- */

/* Check the set and point the outputs into it: *lens_p and *offs_p malloc'd. */
static int set_parse(const struct mx_comm *c, const char *msg, size_t len, const struct mx_startup_cfg *cfg,
		     size_t **lens_p, size_t **offs_p)
{
	struct set_hdr h;
	size_t off, *lens, *offs;

	if (len < sizeof(h))
		return rp_error(-EPROTO, "matrix start-up: rank %d: a table of %zu bytes from rank 0 is too short", c->rank,
				len);
	memcpy(&h, msg, sizeof(h));
	if (h.magic != SET_MAGIC || h.version != SET_VERSION || h.total != len)
		return rp_error(-EPROTO, "matrix start-up: rank %d: the table from rank 0 is not this rdmaprobe's "
				"(another version?)", c->rank);
	if (h.kind == SET_ABORT) {
		char why[REASON_MAX] = "";

		if (len == sizeof(h) + REASON_MAX)
			snprintf(why, sizeof(why), "%.*s", REASON_MAX - 1, msg + sizeof(h));
		rp_error(-ECANCELED, "matrix start-up: rank %d: rank 0 gave up: %s", c->rank, why[0] ? why : "no reason given");
		return -ECANCELED;
	}
	off = sizeof(h) + (size_t)c->size * sizeof(uint64_t);
	if (h.kind != SET_TABLE || h.n_ranks != (uint32_t)c->size || len < off)
		return rp_error(-EPROTO, "matrix start-up: rank %d: the table from rank 0 names %u ranks, the job has %d",
				c->rank, h.n_ranks, c->size);
	lens = calloc((size_t)c->size, sizeof(*lens));
	offs = calloc((size_t)c->size, sizeof(*offs));
	if (!lens || !offs) {
		free(lens);
		free(offs);
		return rp_error(-ENOMEM, "matrix start-up: allocate for %d ranks", c->size);
	}
	for (int r = 0; r < c->size; r++) {
		uint64_t l;

		memcpy(&l, msg + sizeof(h) + (size_t)r * sizeof(l), sizeof(l));
		if (l > cfg->max_len || PAD8(l) > len - off) {
			free(lens);
			free(offs);
			return rp_error(-EPROTO, "matrix start-up: rank %d: the table from rank 0 does not add up (rank %d's "
					"%llu bytes)", c->rank, r, (unsigned long long)l);
		}
		lens[r] = (size_t)l;
		offs[r] = off;
		off += PAD8(l);
	}
	if (off != len) {
		free(lens);
		free(offs);
		return rp_error(-EPROTO, "matrix start-up: rank %d: the table from rank 0 has %zu bytes too many", c->rank,
				len - off);
	}
	*lens_p = lens;
	*offs_p = offs;
	return 0;
}

static bool is_table(const char *msg, size_t len)
{
	struct set_hdr h;

	if (len < sizeof(h))
		return false;
	memcpy(&h, msg, sizeof(h));
	return h.magic == SET_MAGIC && h.kind == SET_TABLE;
}

/* Send the set to this rank's children (each its own copy: mx_comm_send copies). */
static void set_forward(struct mx_comm *c, const char *msg, size_t len, const struct mx_startup_cfg *cfg)
{
	int kids[MX_TREE_MAX_KIDS];
	size_t n = mx_tree_children(c->rank, c->size, kids, RP_ARRAY_SIZE(kids));

	for (size_t i = 0; i < n; i++) {
		int rc = mx_comm_send(c, kids[i], MX_TAG_STARTUP_OUT, MX_STARTUP_ROUND, msg, len,
				      rp_now() + cfg->window_s);

		if (rc)
			rp_warn("matrix start-up: rank %d: the table did not reach rank %d: %s", c->rank, kids[i],
				strerror(-rc));
	}
}

/* The set this rank ends with: parsed into lens_p and offs_p and kept as all_p, or freed. 0 or
 * set_parse's error. */
static int set_keep(struct mx_comm *c, char *set, size_t len, const struct mx_startup_cfg *cfg, char **all_p,
		    size_t **lens_p, size_t **offs_p)
{
	int rc = set_parse(c, set, len, cfg, lens_p, offs_p);

	if (rc) {
		free(set);
		return rc;
	}
	*all_p = set;
	return 0;
}

/* A rank other than 0: its bytes to rank 0, then the set from its parent (or rank 0's abort). */
static int exchange_leaf(struct mx_comm *c, const void *mine, size_t len, const struct mx_startup_cfg *cfg,
			 double t0, char **all_p, size_t **lens_p, size_t **offs_p)
{
	double until = t0 + ceiling_of(cfg) + cfg->window_s;
	size_t bound = set_bound(cfg, c->size);
	int parent = mx_tree_parent(c->rank);
	void *msg = NULL;
	size_t got = 0;
	int src = -1, rc = mx_comm_send(c, 0, MX_TAG_STARTUP_IN, MX_STARTUP_ROUND, mine, len, t0 + ceiling_of(cfg));

	if (rc)
		return rp_error(rc, "matrix start-up: rank %d: its ports did not reach rank 0: %s", c->rank, strerror(-rc));
	for (;;) {
		rc = mx_comm_recv_max(c, -1, MX_TAG_STARTUP_OUT, MX_STARTUP_ROUND, bound, &msg, &got, &src, until);
		if (rc == -ETIMEDOUT)
			return rp_error(rc, "matrix start-up: rank %d: no table from rank %d within %.0f s", c->rank, parent,
					until - t0);
		if (rc == -EMSGSIZE)
			return rp_error(-EPROTO, "matrix start-up: rank %d: rank %d sent a table of %zu bytes, more than "
					"%zu ranks can fill", c->rank, src, got, (size_t)c->size);
		if (rc)
			return rp_error(rc, "matrix start-up: rank %d: receive the table: %s", c->rank, strerror(-rc));
		if (src == parent || src == 0)
			break;
		rp_debug("matrix start-up: rank %d: dropped a table from rank %d (not its parent)", c->rank, src);
		free(msg);
	}
	if (src == parent && is_table(msg, got))
		set_forward(c, msg, got, cfg);
	return set_keep(c, msg, got, cfg, all_p, lens_p, offs_p);
}

int mx_startup_exchange(struct mx_comm *c, const void *mine, size_t len, const struct mx_startup_cfg *cfg,
			char **all_p, size_t **lens_p, size_t **offs_p)
{
	double t0 = rp_now();
	struct gather g = { 0 };
	char *set = NULL;
	size_t set_len = 0;
	int rc;

	*all_p = NULL;
	*lens_p = *offs_p = NULL;
	if (len > cfg->max_len || cfg->window_s <= 0)
		return rp_error(-EINVAL, "matrix start-up: %zu bytes to send, at most %zu", len, cfg->max_len);
	if (c->rank != 0)
		return exchange_leaf(c, mine, len, cfg, t0, all_p, lens_p, offs_p);
	rc = gather_all(c, &g, mine, len, cfg, t0);
	if (!rc)
		rc = set_build(c, &g, &set, &set_len);
	gather_fini(&g, c->size);
	if (rc)
		return rc;
	set_forward(c, set, set_len, cfg);
	return set_keep(c, set, set_len, cfg, all_p, lens_p, offs_p);
}
