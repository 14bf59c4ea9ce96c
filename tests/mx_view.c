/* mx_view.c: the report tests' matrix; see mx_view.h. */
#include "mx_view.h"

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
	r[0].warnings = 1u << RP_PW_FLAKY;
	r[1].gbps = NAN;
	r[1].gbps_min = NAN;
	r[1].elapsed_s = NAN;
	r[1].warnings = 1u << RP_PW_INTERVAL_DROP;
	r[1].gbps_min_at_s = 2.5;
	rp_pair_result_record_attempt(&r[2], 14);
	rp_pair_result_record_attempt(&r[2], 20);
	r[2].confirm = RP_CONFIRM_CONFIRMED;
	r[9].confirm = RP_CONFIRM_UNCONFIRMED;
}
