/* mx_table.c: the matrix's endpoint table; see mx_table.h. */
#include "job/mx_table.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "job/mx_startup.h"
#include "base/sanitize.h"
#include "base/util.h"

static int host_cmp(const struct mx_claim *a, const struct mx_claim *b)
{
	return a->w.host_id < b->w.host_id ? -1 : a->w.host_id > b->w.host_id;
}

static int claim_cmp(const void *x, const void *y)
{
	const struct mx_claim *a = x, *b = y;
	int c = strcmp(a->w.node, b->w.node);

	if (!c)
		c = host_cmp(a, b);
	if (!c)
		c = strcmp(a->w.device, b->w.device);
	if (!c)
		c = a->w.port - b->w.port;
	if (!c)
		c = a->rank - b->rank;
	return c;
}

static bool same_ep(const struct mx_wire_ep *a, const struct mx_wire_ep *b)
{
	return strcmp(a->node, b->node) == 0 && a->host_id == b->host_id && strcmp(a->device, b->device) == 0 &&
	       a->port == b->port;
}

/* By (node, host, rank): the hosts of one name next to each other, each host's ranks in order. */
static int host_rank_cmp(const void *x, const void *y)
{
	const struct mx_claim *a = x, *b = y;
	int c = strcmp(a->w.node, b->w.node);

	if (!c)
		c = host_cmp(a, b);
	return c ? c : a->rank - b->rank;
}

/* Rank 0's warning for one name that several hosts report: each host's ranks (the claims
 * cl[i..j) sorted by host_rank_cmp) and the name each host's endpoints now carry. */
static void dup_warn(const struct mx_claim *cl, size_t i, size_t j, const char *name)
{
	char list[600];
	size_t len = 0;

	list[0] = '\0';
	for (size_t k = i; k < j && len < sizeof(list) - 64; k++) {
		bool new_host = k == i || host_cmp(&cl[k], &cl[k - 1]) != 0;

		if (k > i && !new_host && cl[k].rank == cl[k - 1].rank)
			continue;   /* one rank's other endpoints */
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", k == i ? "ranks " : new_host ?
					"; ranks " : ",", cl[k].rank);
		if (k + 1 == j || host_cmp(&cl[k + 1], &cl[k]) != 0)
			len += (size_t)snprintf(list + len, sizeof(list) - len, " as %s", cl[k].w.node);
	}
	rp_warn("matrix: hosts with different boot ids report the same node name '%s' (%s): their adapters are "
		"measured apart under those names; give each host its own name (--node, the hostname)", name, list);
}

void mx_table_split_hosts(struct mx_claim *cl, size_t n_cl, bool say)
{
	qsort(cl, n_cl, sizeof(*cl), host_rank_cmp);
	for (size_t i = 0; i < n_cl;) {
		size_t j = i + 1;
		bool dup = false;
		char name[RP_NAME_MAX];

		for (; j < n_cl && strcmp(cl[j].w.node, cl[i].w.node) == 0; j++)
			dup |= host_cmp(&cl[j], &cl[i]) != 0;
		if (!dup) {
			i = j;
			continue;
		}
		rp_strlcpy(name, cl[i].w.node, sizeof(name));
		for (size_t k = i, first = i; k < j; k++) {
			char renamed[RP_NAME_MAX];

			if (host_cmp(&cl[k], &cl[first]) != 0)
				first = k;   /* a new host: its lowest rank names it */
			snprintf(renamed, sizeof(renamed), "%.*s#r%d", RP_NAME_MAX - 16, name, cl[first].rank);
			rp_strlcpy(cl[k].w.node, renamed, sizeof(cl[k].w.node));
			rp_strlcpy(cl[k].w.drift.node, renamed, sizeof(cl[k].w.drift.node));
		}
		if (say)
			dup_warn(cl, i, j, name);
		i = j;
	}
}

static void ep_fill(struct mx_ep *e, const struct mx_claim *cl, int owner)
{
	rp_strlcpy(e->ep.node, cl->w.node, sizeof(e->ep.node));
	rp_strlcpy(e->ep.device, cl->w.device, sizeof(e->ep.device));
	e->ep.port = cl->w.port;
	e->ep.gid_index = cl->w.gid_index;
	e->ep.mtu = cl->w.mtu;
	e->ep.link_gbps = cl->w.link_gbps;
	e->owner = owner;
	if (cl->w.flags & MX_EP_NO_PORT)
		snprintf(e->no_port, sizeof(e->no_port), "%s", cl->why && cl->why[0] ? cl->why : "no port");
}

int mx_table_build(struct mx_claim *cl, size_t n_cl, size_t n_ranks, struct mx_ep **eps_p, size_t *n_p)
{
	struct mx_ep *eps = calloc(n_cl ? n_cl : 1, sizeof(*eps));
	size_t *owned = calloc(n_ranks ? n_ranks : 1, sizeof(*owned)), n = 0;

	if (!eps || !owned) {
		free(eps);
		free(owned);
		return -ENOMEM;
	}
	qsort(cl, n_cl, sizeof(*cl), claim_cmp);
	for (size_t i = 0; i < n_cl;) {
		size_t j = i;
		int best = cl[i].rank;

		for (; j < n_cl && same_ep(&cl[i].w, &cl[j].w); j++)
			if (owned[cl[j].rank] < owned[best])
				best = cl[j].rank;
		owned[best]++;
		ep_fill(&eps[n++], &cl[i], best);
		i = j;
	}
	free(owned);
	*eps_p = eps;
	*n_p = n;
	return 0;
}

struct rp_sched_ep *mx_sched_eps(const struct mx_ep *eps, size_t n, size_t *n_nodes_p)
{
	struct rp_sched_ep *s = calloc(n ? n : 1, sizeof(*s));
	size_t node = 0;

	if (!s)
		return NULL;
	for (size_t e = 0; e < n; e++) {
		bool new_node = e > 0 && strcmp(eps[e].ep.node, eps[e - 1].ep.node) != 0;

		node += new_node;
		s[e].node = (uint32_t)node;
		s[e].rail = e == 0 || new_node ? 0 : s[e - 1].rail + 1;
	}
	*n_nodes_p = n ? node + 1 : 0;
	return s;
}

/* An environment error outranks a usage error (exit 3 over 2), as the front end maps them. */
static int err_worse(int a, int b)
{
	if (!a || (a == -EINVAL && b && b != -EINVAL))
		return b;
	return a;
}

/* What is wrong with rank r's ports message, or NULL. */
static const char *offer_bad(const void *buf, size_t len, int r, char *why, size_t n)
{
	const struct mx_hdr *h = buf;

	if (len < sizeof(*h))
		snprintf(why, n, "%zu bytes, too short for a ports message (%zu)", len, sizeof(*h));
	else if (h->magic != MX_MAGIC)
		snprintf(why, n, "not an rdmaprobe ports message (magic %08x)", h->magic);
	else if (h->version != MX_VERSION || h->kind != MX_KIND_EPS)
		snprintf(why, n, "protocol version %u kind %u, this rdmaprobe speaks %u (another rdmaprobe version?)",
			 h->version, h->kind, MX_VERSION);
	else if (h->rank != r)
		snprintf(why, n, "a message that claims to be rank %d's", h->rank);
	else if (h->n > MX_MAX_LOCAL || !mx_msg_ok(h, len, MX_KIND_EPS, sizeof(struct mx_wire_ep)))
		snprintf(why, n, "%zu bytes for %u endpoints (at most %d), or an unterminated reason", len, h->n,
			 MX_MAX_LOCAL);
	else
		return NULL;
	return why;
}

/* Check every rank's header: counts the claims, gathers the worst error. Rank 0 logs the problems
 * (a rank whose message the exchange rejected, lens[r] == 0, was logged there). */
static size_t offers_check(const struct mx_comm *c, const char *all, const size_t *lens, const size_t *offs,
			   struct mx_table *t)
{
	size_t n_cl = 0;
	int *err_p = &t->err;
	char why[160];

	uint32_t digest0 = 0;
	bool have0 = false;

	for (int r = 0; r < c->size; r++) {
		const struct mx_hdr *h = (const void *)(all + offs[r]);

		if (offer_bad(all + offs[r], lens[r], r, why, sizeof(why))) {
			if (c->rank == 0 && lens[r])
				rp_warn("matrix: rank %d sent %s: rejected", r, why);
			*err_p = err_worse(*err_p, -EPROTO);
			continue;
		}
		if (!have0) {
			digest0 = h->sched_digest;      /* rank 0's, or the first sound offer when rank 0's is not */
			have0 = true;
		} else if (h->sched_digest != digest0) {
			/* its rounds would not be rank 0's: pairs would wait for peers that never come */
			if (c->rank == 0)
				rp_warn("matrix: rank %d was started with other schedule settings than rank 0 (--pattern, "
					"--seed, -s/-n/-w/-D, --bidir, --sweep, --concurrent-rails, --budget or the "
					"--calibrate-from file differ): every rank must be given the same", r);
			*err_p = err_worse(*err_p, -EINVAL);
		}
		if (h->setup_ms / 1e3 >= t->setup_max_s) {
			t->setup_max_s = h->setup_ms / 1e3;
			t->setup_max_rank = r;
		}
		if (h->status) {
			if (c->rank == 0)
				rp_warn("matrix: rank %d: %s", r, h->error);
			*err_p = err_worse(*err_p, h->status < 0 ? h->status : -EINVAL);
		}
		n_cl += h->n;
	}
	return n_cl;
}

/* A received endpoint record is a peer's: every string terminated and made safe to log, print and
 * put in JSON (lib/base/sanitize.h) before anything uses it. */
static void ep_clean(struct mx_wire_ep *w)
{
	struct rp_drift_ep *d = &w->drift;
	char *str[] = { w->node, w->device, d->node, d->device, d->model };
	size_t len[] = { sizeof(w->node), sizeof(w->device), sizeof(d->node), sizeof(d->device), sizeof(d->model) };

	for (size_t i = 0; i < sizeof(str) / sizeof(str[0]); i++) {
		str[i][len[i] - 1] = '\0';
		rp_str_sanitize(str[i]);
	}
	for (size_t f = 0; f < RP_DF_COUNT_; f++) {
		d->value[f][RP_DRIFT_VALUE - 1] = '\0';
		rp_str_sanitize(d->value[f]);
	}
}

/* Every rank's claims and release, from checked headers (only called when every one passed). */
static void claims_fill(const struct mx_comm *c, const char *all, const size_t *offs, struct mx_claim *cl,
			struct mx_table *t)
{
	for (int r = 0, k = 0; r < c->size; r++) {
		const struct mx_hdr *h = (const void *)(all + offs[r]);
		const struct mx_wire_ep *w = (const void *)(h + 1);

		t->rank_ver[r].rank = r;
		t->rank_ver[r].version = h->nccl_version;
		snprintf(t->rank_ver[r].node, sizeof(t->rank_ver[r].node), "%.*s", RP_NAME_MAX - 1, h->n ? w[0].node : "?");
		rp_str_sanitize(t->rank_ver[r].node);   /* a peer's name, as ep_clean makes the claims' */
		t->n_rank_ver = (size_t)r + 1;
		for (uint32_t i = 0; i < h->n; i++, k++) {
			cl[k].w = w[i];
			ep_clean(&cl[k].w);
			cl[k].rank = r;
			cl[k].why = h->error;
			if ((w[i].flags & MX_EP_NO_PORT) && c->rank == 0)
				rp_warn("matrix: rank %d (%s): %s: its endpoint is reported as %s and not measured", r,
					cl[k].w.node, h->error, rp_status_code(RP_ST_NO_PORT));
		}
	}
}

/* Rank 0: the odd ones out across the fabric, once per endpoint (the claims are sorted: ranks that
 * share a node's adapters offer each one more than once) and never for a port-less entry. Out of
 * memory leaves no warning and is logged by rp_drift_find: the measurement goes on. */
static void drift_find(const struct mx_claim *cl, size_t n_cl, struct rp_drift *d)
{
	struct rp_drift_ep *eps = calloc(n_cl ? n_cl : 1, sizeof(*eps));
	size_t n = 0;

	if (!eps) {
		rp_warn("matrix: no memory to compare the endpoints for drift");
		return;
	}
	for (size_t i = 0; i < n_cl; i++) {
		const struct mx_wire_ep *w = &cl[i].w;

		if ((w->flags & MX_EP_NO_PORT) || !w->drift.model[0])
			continue;
		if (i > 0 && !strcmp(w->node, cl[i - 1].w.node) && !strcmp(w->device, cl[i - 1].w.device) &&
		    w->port == cl[i - 1].w.port)
			continue;
		eps[n++] = w->drift;
	}
	if (rp_drift_find(eps, n, d) != 0)
		rp_drift_fini(d);
	free(eps);
}

int mx_table_gather(struct mx_comm *c, const struct mx_offer *mine, double window_s, double ceiling_s,
		    struct mx_table *t)
{
	const struct mx_startup_cfg cfg = { .window_s = window_s, .ceiling_s = ceiling_s,
					    .max_len = sizeof(struct mx_hdr) + MX_MAX_LOCAL * sizeof(struct mx_wire_ep) };
	struct { struct mx_hdr h; struct mx_wire_ep e[MX_MAX_LOCAL]; } msg;
	size_t *lens = NULL, *offs = NULL, n_cl, n = mine->err ? 0 : mine->n;
	char *all = NULL;
	struct mx_claim *cl = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	if (n > MX_MAX_LOCAL)
		n = MX_MAX_LOCAL;
	mx_hdr_init(&msg.h, MX_KIND_EPS, c->rank, 0, n, sizeof(struct mx_wire_ep));
	memcpy(msg.e, mine->eps, n * sizeof(msg.e[0]));
	msg.h.status = mine->err;
	msg.h.run = mx_comm_nonce_new();
	msg.h.nccl_version = mine->nccl_version;
	msg.h.sched_digest = mine->sched_digest;
	msg.h.setup_ms = mine->setup_s > 0 ? (uint32_t)(mine->setup_s * 1e3 < 4e9 ? mine->setup_s * 1e3 : 4e9) : 0;
	rp_strlcpy(msg.h.error, mine->why ? mine->why : "", sizeof(msg.h.error));
	rc = mx_startup_exchange(c, &msg, msg.h.length, &cfg, &all, &lens, &offs);
	if (rc)
		return rc;
	if (c->size > 0 && lens[0] >= sizeof(struct mx_hdr)) {
		struct mx_hdr h0;

		memcpy(&h0, all + offs[0], sizeof(h0));
		mx_comm_set_run(c, h0.run);   /* rank 0's names the run */
	}
	n_cl = offers_check(c, all, lens, offs, t);
	cl = calloc(n_cl ? n_cl : 1, sizeof(*cl));
	t->rank_ver = calloc(c->size > 0 ? (size_t)c->size : 1, sizeof(*t->rank_ver));
	if (!t->err && (!cl || !t->rank_ver))
		t->err = -ENOMEM;
	if (!t->err) {
		claims_fill(c, all, offs, cl, t);
		mx_table_split_hosts(cl, n_cl, c->rank == 0);
		for (size_t i = 0; i < n_cl; i++)   /* each rank's node as the table names it */
			rp_strlcpy(t->rank_ver[cl[i].rank].node, cl[i].w.node, sizeof(t->rank_ver[cl[i].rank].node));
	}
	if (!t->err && mx_table_build(cl, n_cl, (size_t)(c->size > 0 ? c->size : 1), &t->eps, &t->n_eps) != 0)
		t->err = -ENOMEM;
	if (!t->err && c->rank == 0)
		drift_find(cl, n_cl, &t->drift);
	free(cl);
	free(all);
	free(lens);
	free(offs);
	return 0;
}

void mx_table_fini(struct mx_table *t)
{
	free(t->eps);
	free(t->rank_ver);
	rp_drift_fini(&t->drift);
	memset(t, 0, sizeof(*t));
}
