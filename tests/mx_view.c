/* mx_view.c: the report tests' matrix; see mx_view.h. */
#include "mx_view.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOSTILE_NODE "<script>alert(\"x\")</script>&'\x01\xff"
#define HOSTILE_DEV "]]></failure><x a='"

void mx_view_build(struct mx_view *mx, bool hostile)
{
	struct rp_verdict_cfg cfg = { .min_bw = 0, .outlier = 0 };
	size_t n = 0;

	memset(mx, 0, sizeof(*mx));
	for (int i = 0; i < 4; i++) {
		struct rp_endpoint *e = &mx->eps[i];

		snprintf(e->node, sizeof(e->node), "node%d", i);
		snprintf(e->device, sizeof(e->device), "rxe%d", i);
		e->port = 1;
		e->link_gbps = 10;
	}
	if (hostile) {
		snprintf(mx->eps[0].node, sizeof(mx->eps[0].node), "%s", HOSTILE_NODE);
		snprintf(mx->eps[1].device, sizeof(mx->eps[1].device), "%s", HOSTILE_DEV);
	}
	for (uint32_t a = 0; a < 4; a++) {
		for (uint32_t b = 0; b < 4; b++) {
			struct rp_pair_result *r = &mx->res[n];

			if (a == b)
				continue;
			rp_pair_result_init(r, &mx->eps[a], &mx->eps[b]);
			if (a == 3 || b == 3) {
				rp_pair_result_fail(r, RP_ST_RTR, "modify qp to RTR on %s port 1: <Connection timed out> & \"%s\"",
						    mx->eps[a].device, mx->eps[b].node);
			} else {
				r->status = RP_ST_OK;
				r->gbps = 0.2 + 0.01 * n;
				r->verified = true;
			}
			mx->pair_eps[2 * n] = a;
			mx->pair_eps[2 * n + 1] = b;
			n++;
		}
	}
	rp_verdict_apply(&cfg, mx->eps, 4, mx->pair_eps, mx->res, n, &mx->verdict);
	mx->view = (struct rp_matrix_view){
		.title = "rdmaprobe matrix --node <n> -d rxe0", .version = "rdmaprobe test", .pattern = "full",
		.eps = mx->eps, .n_eps = 4, .pair_eps = mx->pair_eps, .res = mx->res, .n = n,
		.verdict = &mx->verdict, .rounds_done = 3, .n_rounds = 3, .elapsed_s = 1.5,
	};
}

void mx_view_fini(struct mx_view *mx)
{
	rp_verdict_fini(&mx->verdict);
}

size_t mx_count(const char *hay, const char *needle)
{
	size_t c = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		c++;
	return c;
}

char *mx_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)len + 1);
	if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[len] = '\0';
	fclose(f);
	return buf;
}

/* Mark the test matrix up as the verdict would: pair 0 flaky (timed out, then passed on a retest),
 * pair 1 ok with an interval-drop warning and a NaN rate from its peer, pair 2 (0 -> 3) a confirmed
 * failure, pair 9 (3 -> 0) a failure that could not be measured again. */
void mx_view_mark_verdict(struct mx_view *mx)
{
	struct rp_pair_result *r = mx->res;

	/* the view's verdict (retest 0) judged every failure confirmed; these marks are set by hand */
	for (size_t i = 0; i < mx->view.n; i++)
		r[i].confirm = RP_CONFIRM_NONE;
	r[0].status = RP_ST_TIMEOUT;
	r[0].cause_side = RP_SIDE_SRC;
	snprintf(r[0].reason, sizeof(r[0].reason), "no completion for 4.0 s");
	rp_pair_result_record_attempt(&r[0], 14);
	r[0].status = RP_ST_OK;
	r[0].cause_side = RP_SIDE_NONE;
	r[0].reason[0] = '\0';
	rp_pair_result_record_attempt(&r[0], 20);
	r[0].confirm = RP_CONFIRM_FLAKY;
	r[0].warnings = 1u << RP_WARN_FLAKY;
	r[1].gbps = NAN;
	r[1].gbps_min = NAN;
	r[1].elapsed_s = NAN;
	r[1].warnings = 1u << RP_WARN_INTERVAL_DROP;
	r[1].gbps_min_at_s = 2.5;
	rp_pair_result_record_attempt(&r[2], 14);
	rp_pair_result_record_attempt(&r[2], 20);
	r[2].confirm = RP_CONFIRM_CONFIRMED;
	r[9].confirm = RP_CONFIRM_UNCONFIRMED;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A fixed pseudo-random value in [0, 1) for pair i (no state: the same run every time). */
static double jitter(uint64_t i)
{
	i = (i + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
	i ^= i >> 31;
	return (double)(i % 1000) / 1000.0;
}

/* Endpoints in plain string order of the node names (node1, node10, node100, node2, ...). */
static int synth_eps(struct mx_synth *s, size_t nodes, size_t adapters)
{
	char (*names)[32] = calloc(nodes, sizeof(*names));
	char **sorted = calloc(nodes, sizeof(*sorted));

	s->n_eps = nodes * adapters;
	s->eps = calloc(s->n_eps, sizeof(*s->eps));
	if (!names || !sorted || !s->eps) {
		free(names);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t k = 0; k < nodes; k++) {
		snprintf(names[k], sizeof(names[k]), "node%zu", k + 1);
		sorted[k] = names[k];
	}
	qsort(sorted, nodes, sizeof(*sorted), str_cmp);
	for (size_t k = 0; k < nodes; k++)
		for (size_t a = 0; a < adapters; a++) {
			struct rp_endpoint *e = &s->eps[k * adapters + a];

			snprintf(e->node, sizeof(e->node), "%s", sorted[k]);
			snprintf(e->device, sizeof(e->device), "mlx5_%zu", a);
			e->port = 1;
			e->gid_index = 3;
			e->mtu = 4096;
			e->link_gbps = 400;
			snprintf(e->mem, sizeof(e->mem), "host");
			snprintf(e->mem_reg, sizeof(e->mem_reg), "host");
		}
	free(names);
	free(sorted);
	return 0;
}

/* The node number (1-based, as in its name) of endpoint e. */
static size_t synth_node(const struct mx_synth *s, size_t e)
{
	return (size_t)strtoul(s->eps[e].node + 4, NULL, 10);
}

static void synth_pair(struct mx_synth *s, size_t a, size_t b, size_t bad_node, size_t slow_node)
{
	struct rp_pair_result *r = &s->res[s->n];
	size_t na = synth_node(s, a), nb = synth_node(s, b);
	bool bad = (na == bad_node && strcmp(s->eps[a].device, "mlx5_3") == 0) ||
		   (nb == bad_node && strcmp(s->eps[b].device, "mlx5_3") == 0);
	bool slow = (na == slow_node && strcmp(s->eps[a].device, "mlx5_5") == 0) ||
		    (nb == slow_node && strcmp(s->eps[b].device, "mlx5_5") == 0);

	rp_pair_result_init(r, &s->eps[a], &s->eps[b]);
	if (bad) {
		rp_pair_result_fail(r, RP_ST_RETRY_EXCEEDED, "send completion: transport retry counter exceeded (synthetic)");
		r->cause_side = RP_SIDE_SRC;
		r->gbps = 0;
		r->gbps_min = 0;
		rp_pair_result_record_attempt(r, 14);
		rp_pair_result_record_attempt(r, 20);
		r->confirm = RP_CONFIRM_CONFIRMED;
	} else {
		r->status = RP_ST_OK;
		r->verified = true;
		r->gbps = (slow ? 220 : 385) + 11 * jitter(s->n);
		r->gbps_min = r->gbps * 0.97;
		r->bytes = (uint64_t)(r->gbps * 1e9 / 8 * 2);
		r->msg_size = 1 << 20;
		r->iters = r->bytes / r->msg_size;
		r->elapsed_s = 2.1;
	}
	s->pair_eps[2 * s->n] = (uint32_t)a;
	s->pair_eps[2 * s->n + 1] = (uint32_t)b;
	s->n++;
}

int mx_synth_build(struct mx_synth *s, size_t nodes, size_t adapters, size_t full_max, bool faults)
{
	struct rp_verdict_cfg cfg;
	size_t full, cap, bad_node = 0, slow_node = 0;

	memset(s, 0, sizeof(*s));
	if (synth_eps(s, nodes, adapters) != 0)
		return -ENOMEM;
	full = s->n_eps * (s->n_eps - adapters);
	cap = full <= full_max ? full : nodes * (nodes - 1);
	s->res = malloc((cap ? cap : 1) * sizeof(*s->res));
	s->pair_eps = malloc(2 * (cap ? cap : 1) * sizeof(*s->pair_eps));
	if (!s->res || !s->pair_eps)
		return -ENOMEM;
	if (faults && nodes >= 3) {
		bad_node = (7 * nodes + 4) / 9 + 1;
		slow_node = nodes / 3 + 1;
	}
	for (size_t a = 0; a < s->n_eps; a++)
		for (size_t b = 0; b < s->n_eps; b++) {
			size_t ka = a / adapters, kb = b / adapters;

			if (ka == kb)
				continue;
			if (full > full_max && (a % adapters != (ka + kb) % adapters || b % adapters != (ka + 2 * kb + 1) % adapters))
				continue;
			synth_pair(s, a, b, bad_node, slow_node);
		}
	if (faults && s->n > 2) {
		struct rp_pair_result *r = &s->res[1];

		r->status = RP_ST_TIMEOUT;
		snprintf(r->reason, sizeof(r->reason), "no completion for 4.0 s (synthetic)");
		rp_pair_result_record_attempt(r, 14);
		r->status = RP_ST_OK;
		r->reason[0] = '\0';
		rp_pair_result_record_attempt(r, 20);
		r->confirm = RP_CONFIRM_FLAKY;
		r->warnings = 1u << RP_WARN_FLAKY;
		s->res[2].warnings = 1u << RP_WARN_INTERVAL_DROP;
		s->res[2].gbps_min = s->res[2].gbps * 0.3;
		s->res[2].gbps_min_at_s = 1.2;
	}
	rp_verdict_cfg_default(&cfg);
	cfg.retest = 0;   /* synthetic: one sample decides, so the failures are confirmed and drain */
	if (rp_verdict_apply(&cfg, s->eps, s->n_eps, s->pair_eps, s->res, s->n, &s->verdict) != 0)
		return -ENOMEM;
	snprintf(s->title, sizeof(s->title), "synthetic: %zu nodes x %zu adapters (tests/mx_view.c mx_synth_build)", nodes,
		 adapters);
	snprintf(s->pattern, sizeof(s->pattern), "%s", full <= full_max ? "full (synthetic)" : "one adapter pair per node pair (synthetic)");
	s->view = (struct rp_matrix_view){
		.title = s->title, .version = "synthetic data", .pattern = s->pattern, .eps = s->eps, .n_eps = s->n_eps,
		.pair_eps = s->pair_eps, .res = s->res, .n = s->n, .verdict = &s->verdict, .rounds_done = 1,
		.n_rounds = 1, .elapsed_s = 0,
	};
	return 0;
}

void mx_synth_fini(struct mx_synth *s)
{
	rp_verdict_fini(&s->verdict);
	free(s->eps);
	free(s->res);
	free(s->pair_eps);
	memset(s, 0, sizeof(*s));
}
