/* check.c: the node health check's problems, verdict and drain reason; see check.h. */
#include "verdict/check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/util.h"
#include "verdict/verdict.h"

const char *rp_check_src_str(enum rp_check_src s)
{
	static const char *const names[RP_CHECK_SRC_COUNT_] = { "discovery", "health", "loopback", "nccl", "check" };

	return (int)s >= 0 && s < RP_CHECK_SRC_COUNT_ ? names[s] : "";
}

const char *rp_check_status_str(enum rp_check_status s)
{
	return s == RP_CHECK_HEALTHY ? "healthy" : s == RP_CHECK_UNHEALTHY ? "unhealthy" : "unknown";
}

int rp_check_add(struct rp_check *c, enum rp_check_sev sev, enum rp_check_src src, const char *code,
		 const char *device, const char *summary, const char *fmt, ...)
{
	struct rp_check_problem *p;
	va_list ap;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct rp_check_problem *items = realloc(c->items, cap * sizeof(*items));

		if (!items)
			return rp_error(-ENOMEM, "check: out of memory for %zu problems", cap);
		c->items = items;
		c->cap = cap;
	}
	p = &c->items[c->n++];
	memset(p, 0, sizeof(*p));
	p->sev = sev;
	p->src = src;
	rp_strlcpy(p->code, code, sizeof(p->code));
	rp_strlcpy(p->device, device ? device : "", sizeof(p->device));
	if (summary)
		rp_strlcpy(p->summary, summary, sizeof(p->summary));
	else
		snprintf(p->summary, sizeof(p->summary), "%s%s%s", p->device, p->device[0] ? " " : "", code);
	va_start(ap, fmt);
	vsnprintf(p->message, sizeof(p->message), fmt, ap);
	va_end(ap);
	return 0;
}

void rp_check_set_incomplete(struct rp_check *c, const char *why)
{
	if (!c->incomplete)
		rp_strlcpy(c->incomplete_why, why, sizeof(c->incomplete_why));
	c->incomplete = true;
}

int rp_check_from_node(struct rp_check *c, const struct rp_node *node)
{
	int rc = 0;

	if (node->n_hcas == 0)
		return rp_check_add(c, RP_CHECK_FAIL, RP_CHECK_SRC_DISCOVERY, "no_device", "", "no RDMA adapter", "%s",
				    node->no_device_reason[0] ? node->no_device_reason : "no RDMA adapter found");
	for (size_t i = 0; !rc && i < node->n_hcas; i++) {
		const struct rp_hca *h = &node->hcas[i];
		char sum[112];

		if (!h->unusable_reason[0])
			continue;
		snprintf(sum, sizeof(sum), "%s unusable", h->name);
		rc = rp_check_add(c, RP_CHECK_FAIL, RP_CHECK_SRC_DISCOVERY, "adapter_unusable", h->name, sum, "%s: %s",
				  h->name, h->unusable_reason);
	}
	return rc;
}

/* The port of "mlx5_3:1" on node, or NULL. */
static const struct rp_port *port_of(const struct rp_node *node, const char *dev_port)
{
	char name[RP_NAME_MAX];
	const char *colon = strrchr(dev_port, ':');
	const struct rp_hca *h;
	int port;

	if (!colon || (size_t)(colon - dev_port) >= sizeof(name) || rp_parse_int(colon + 1, 1, 255, &port) != 0)
		return NULL;
	snprintf(name, sizeof(name), "%.*s", (int)(colon - dev_port), dev_port);
	h = rp_node_find_hca(node, name);
	return h ? rp_hca_find_port(h, port) : NULL;
}

/* The short form of a health item: the port states for port_down/port_no_sm, else device and code. */
static void health_summary(const struct rp_node *node, const struct rp_health_item *it, char *buf, size_t len)
{
	const struct rp_port *p = port_of(node, it->device);

	if (p && (it->code == RP_HC_PORT_DOWN || it->code == RP_HC_PORT_NO_SM))
		snprintf(buf, len, "%s %s (phys %s)", it->device, p->state >= 0 ? rp_port_state_str(p->state) : "UNKNOWN",
			 p->phys_state >= 0 ? rp_phys_state_str(p->phys_state) : "UNKNOWN");
	else
		snprintf(buf, len, "%s%s%s", it->device, it->device[0] ? " " : "", rp_health_code_str(it->code));
}

int rp_check_from_health(struct rp_check *c, const struct rp_node *node, const struct rp_health *h)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < h->n_items; i++) {
		const struct rp_health_item *it = &h->items[i];
		bool fail = it->code == RP_HC_PORT_DOWN || it->code == RP_HC_PORT_NO_SM || it->code == RP_HC_LINK_DEGRADED ||
			    it->code == RP_HC_PCIE_DEGRADED;
		char sum[112];

		if (rp_health_code_is_note(it->code))
			continue;
		health_summary(node, it, sum, sizeof(sum));
		rc = rp_check_add(c, fail ? RP_CHECK_FAIL : RP_CHECK_WARN, RP_CHECK_SRC_HEALTH, rp_health_code_str(it->code),
				  it->device, sum, "%s", it->message);
	}
	return rc;
}

int rp_check_from_nccl(struct rp_check *c, const struct rp_nccl_result *res)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < res->n_warnings; i++) {
		const struct rp_nccl_warning *w = &res->warnings[i];
		char sum[112];

		snprintf(sum, sizeof(sum), "NCCL %s", rp_nccl_warn_code(w->code));
		rc = rp_check_add(c, rp_nccl_warn_fatal(w->code) ? RP_CHECK_FAIL : RP_CHECK_WARN, RP_CHECK_SRC_NCCL,
				  rp_nccl_warn_code(w->code), "", sum, "%s", w->message);
	}
	return rc;
}

int rp_check_from_pairs(struct rp_check *c, const struct rp_pair_result *res, size_t n)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++) {
		const struct rp_pair_result *r = &res[i];
		char dev[RP_NAME_MAX + 8], sum[112];

		snprintf(dev, sizeof(dev), "%s:%d", r->src.device, r->src.port);
		if (r->status == RP_ST_INTERRUPTED)
			continue;   /* not measured: the caller says why the check is incomplete */
		if (r->status != RP_ST_OK && r->confirm == RP_CONFIRM_UNCONFIRMED)
			continue;   /* failed once, never measured again: the caller says the check is incomplete */
		if (r->status != RP_ST_OK) {
			snprintf(sum, sizeof(sum), "%s loopback %s", dev, rp_status_code(r->status));
			rc = rp_check_add(c, RP_CHECK_FAIL, RP_CHECK_SRC_LOOPBACK, rp_status_code(r->status), dev, sum,
					  "%s could not RDMA WRITE into itself: %s", dev, r->reason);
			continue;
		}
		for (int w = 0; !rc && w < RP_WARN_COUNT_; w++) {
			char text[320];

			if ((r->warnings & (1u << w)) && w != RP_WARN_NOMINAL_RATE)
				rc = rp_check_add(c, RP_CHECK_WARN, RP_CHECK_SRC_LOOPBACK,
						  rp_pair_warning_code((enum rp_pair_warning)w), dev, NULL, "%s loopback: %s", dev,
						  rp_verdict_warning_text(r, (enum rp_pair_warning)w, text, sizeof(text)));
		}
	}
	return rc;
}

static int problem_cmp(const void *a, const void *b)
{
	const struct rp_check_problem *x = a, *y = b;

	if (x->sev != y->sev)
		return x->sev < y->sev ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return 0;
}

/* Insertion sort: stable, and the lists are short. */
void rp_check_sort(struct rp_check *c)
{
	for (size_t i = 1; i < c->n; i++) {
		struct rp_check_problem t = c->items[i];
		size_t j = i;

		for (; j > 0 && problem_cmp(&c->items[j - 1], &t) > 0; j--)
			c->items[j] = c->items[j - 1];
		c->items[j] = t;
	}
}

size_t rp_check_count(const struct rp_check *c, enum rp_check_sev sev)
{
	size_t k = 0;

	for (size_t i = 0; i < c->n; i++)
		k += c->items[i].sev == sev;
	return k;
}

enum rp_check_status rp_check_status(const struct rp_check *c)
{
	if (rp_check_count(c, RP_CHECK_FAIL))
		return RP_CHECK_UNHEALTHY;
	return c->incomplete ? RP_CHECK_UNKNOWN : RP_CHECK_HEALTHY;
}

/* Printable ASCII without quotes, backslashes or '=' ... kept; the rest becomes '_'. */
static void reason_clean(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '"' || *s == '\'' || *s == '\\' || *s == '`' || *s == '$')
			*s = '_';
}

const char *rp_check_drain_reason(const struct rp_check *c, char *buf, size_t len)
{
	size_t fails = rp_check_count(c, RP_CHECK_FAIL), max = len - 1 < RP_CHECK_REASON_MAX ? len - 1 : RP_CHECK_REASON_MAX;
	char more[32] = "";

	buf[0] = '\0';
	if (!fails || len < 2)
		return buf;
	if (fails > 1)
		snprintf(more, sizeof(more), " (+%zu more)", fails - 1);
	/* the summary is cut so that the count of the others always fits */
	snprintf(buf, max + 1, "rdmaprobe: %.*s%s", (int)(max - 11 - strlen(more)), c->items[0].summary, more);
	reason_clean(buf);
	return buf;
}

json_t *rp_check_json(const struct rp_check *c)
{
	char reason[RP_CHECK_REASON_MAX + 1];
	json_t *o = json_object(), *a = json_array();

	if (!o || !a || json_object_set_new(o, "status", json_string(rp_check_status_str(rp_check_status(c)))) ||
	    json_object_set(o, "problems", a))
		goto fail;
	for (size_t i = 0; i < c->n; i++) {
		const struct rp_check_problem *p = &c->items[i];

		if (json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "severity",
						       p->sev == RP_CHECK_FAIL ? "fail" : "warn", "source",
						       rp_check_src_str(p->src), "code", p->code, "device", p->device,
						       "summary", p->summary, "message", p->message)))
			goto fail;
	}
	rp_check_drain_reason(c, reason, sizeof(reason));
	if (json_object_set_new(o, "incomplete", c->incomplete ? json_string(c->incomplete_why) : json_null()) ||
	    json_object_set_new(o, "drain_reason", reason[0] ? json_string(reason) : json_null()))
		goto fail;
	json_decref(a);
	return o;
fail:
	json_decref(a);
	json_decref(o);
	rp_log(RP_LOG_ERROR, "check: out of memory building the JSON report");
	return NULL;
}

void rp_check_fini(struct rp_check *c)
{
	free(c->items);
	c->items = NULL;
	c->n = c->cap = 0;
}
