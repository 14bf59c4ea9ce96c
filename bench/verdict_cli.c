/* verdict_cli.c: the shared verdict options and their text; see verdict_cli.h. */
#include "verdict_cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "discover/fabtopo.h"
#include "verdict/retest.h"
#include "base/util.h"

void rp_cli_verdict_init(struct rp_cli_verdict *v)
{
	memset(v, 0, sizeof(*v));
	rp_verdict_cfg_default(&v->cfg);
	v->outlier = v->cfg.outlier;
	v->interval_drop = v->cfg.interval_drop;
	v->retest = v->cfg.retest;
}

size_t rp_cli_verdict_opts(struct rp_cli_verdict *v, struct rp_opt *t)
{
	const struct rp_opt opts[RP_CLI_VERDICT_OPTS] = {
		{ "min-bw", 0, RP_OPT_STR, &v->min_bw_s, 0, 0, "X", "fail pairs below X: 0.9 / 90% of link rate, or 180G (default 0.9; soft devices: absolute only)", NULL },
		{ "outlier", 0, RP_OPT_DOUBLE, &v->outlier, 0, 1, "F", "fail pairs below F x their row/column median (default 0.5; 0 off)", &v->outlier_seen },
		{ "interval-drop", 0, RP_OPT_DOUBLE, &v->interval_drop, 0, 1, "F", "warn when the slowest --interval is below F x the average (default 0.1; 0 off)", &v->interval_drop_seen },
		{ "topology", 0, RP_OPT_STR, &v->topology_s, 0, 0, "FILE", "the fabric's switches (native, Slurm topology.conf, ibnetdiscover output, or devices --lldp lines): localize failures to adapters, cables, leaves, uplinks, spines", NULL },
	};

	memcpy(t, opts, sizeof(opts));
	return RP_ARRAY_SIZE(opts);
}

int rp_cli_verdict_finish(struct rp_cli_verdict *v, const char *cmd, bool latency)
{
	if (v->min_bw_s && rp_verdict_min_bw_parse(v->min_bw_s, &v->cfg) != 0) {
		fprintf(stderr, "rdmaprobe %s: --min-bw %s: a fraction of the link rate (0.9 or 90%%) or Gb/s with a "
			"unit (180G); 0 for none\n", cmd, v->min_bw_s);
		return RP_EXIT_USAGE;
	}
	v->cfg.outlier = v->outlier;
	v->cfg.interval_drop = v->interval_drop;
	v->cfg.retest = (unsigned)v->retest;
	if (v->topology_s) {
		char err[512];
		int rc = rp_fabtopo_load(v->topology_s, &v->topo, err, sizeof(err));

		if (rc) {
			fprintf(stderr, "rdmaprobe %s: --topology: %s\n", cmd, err);
			return rc == -EINVAL ? RP_EXIT_USAGE : RP_EXIT_ENV;
		}
		v->cfg.topology = v->topo;
	}
	if (!latency)
		return 0;
	if (v->min_bw_s || v->outlier_seen || v->interval_drop_seen) {
		fprintf(stderr, "rdmaprobe %s: --min-bw, --outlier and --interval-drop judge bandwidth; latency mode (-l) "
			"measures none\n", cmd);
		return RP_EXIT_USAGE;
	}
	v->cfg.min_bw = 0;     /* defaults only: latency mode measures no bandwidth */
	v->cfg.outlier = 0;
	v->cfg.interval_drop = 0;
	return 0;
}

void rp_cli_verdict_fini(struct rp_cli_verdict *v)
{
	rp_fabtopo_destroy(v->topo);
	v->topo = NULL;
	v->cfg.topology = NULL;
}

void rp_cli_print_judgement(const struct rp_pair_result *r)
{
	char text[512];

	if (r->confirm != RP_CONFIRM_NONE && r->confirm != RP_CONFIRM_FLAKY)
		printf("    %s\n", rp_retest_describe(r, text, sizeof(text)));
	for (int w = 0; w < RP_WARN_COUNT_; w++)
		if ((r->warnings & (1u << w)) && w != RP_WARN_NOMINAL_RATE)   /* said once, in the verdict */
			printf("    warning: %s\n", rp_verdict_warning_text(r, (enum rp_pair_warning)w, text, sizeof(text)));
}

/* " below_threshold 2 retry_exceeded 1" into buf: the failure codes and their counts. */
static void codes_fill(const struct rp_pair_result *res, size_t n, char *buf, size_t len)
{
	size_t counts[RP_ST_COUNT_] = { 0 }, used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if ((int)res[i].status >= 0 && res[i].status < RP_ST_COUNT_)
			counts[res[i].status]++;
	for (int s = 1; s < RP_ST_COUNT_ && used < len; s++)
		if (counts[s])
			used += (size_t)snprintf(buf + used, len - used, " %s %zu", rp_status_code((enum rp_status)s), counts[s]);
}

static const struct rp_endpoint *ep_of_array(const void *arg, size_t e)
{
	return &((const struct rp_endpoint *)arg)[e];
}

#define RP_CLI_SUSPECTS_MAX 12   /* suspects listed on stdout; the JSON has every one */

void rp_cli_print_suspects(const struct rp_verdict *v, const struct rp_endpoint *(*ep_of)(const void *arg, size_t e),
			   const void *arg, size_t max_paths)
{
	bool listed = v->n_suspects > 1 || (v->n_suspects == 1 && v->suspects[0].kind != RP_COMP_FABRIC);

	if (v->topo_unknown)
		printf("note: --topology does not list %zu of the %zu endpoints: they are judged without it\n",
		       v->topo_unknown, v->n_eps);

	for (size_t k = 0; listed && k < v->n_suspects; k++) {
		const struct rp_verdict_suspect *s = &v->suspects[k];

		if (k == RP_CLI_SUSPECTS_MAX) {
			printf("  ... and %zu more (the JSON's verdict.suspects)\n", v->n_suspects - k);
			break;
		}
		if (k == 0)
			printf("suspects (most likely first):\n");
		printf("  %zu. %s %s: %u of %u peer pairs through it failed, confidence %.3f%s: %s\n", k + 1,
		       rp_component_str(s->kind), s->name, s->failed, s->measured, s->confidence,
		       s->drain ? ", drained" : "", s->why);
	}
	if (!v->n_paths)
		return;
	printf("path faults: %zu peer pair%s failed that no %s explains (%zu results; background %.3g%%): %s\n",
	       v->n_paths, v->n_paths == 1 ? "" : "s", v->localized ? "suspect" : "adapter", v->n_ambiguous,
	       100 * v->background, RP_VERDICT_PATH_TEXT);
	for (size_t i = 0; i < v->n_paths && i < max_paths; i++) {
		const struct rp_endpoint *a = ep_of(arg, v->paths[i].a), *b = ep_of(arg, v->paths[i].b);

		printf("  %s/%s:%d <-> %s/%s:%d (%u failed)\n", a->node, a->device, a->port, b->node, b->device, b->port,
		       v->paths[i].failed);
	}
	if (v->n_paths > max_paths)
		printf("  ... and %zu more (see the reports)\n", v->n_paths - max_paths);
}

void rp_cli_print_verdict(const struct rp_cli_verdict *vc, const struct rp_verdict *v, const struct rp_endpoint *eps,
			  const struct rp_pair_result *res, size_t n, size_t planned, int stop_sig)
{
	char codes[512], name[RP_NAME_MAX + 16], extra[160];

	codes_fill(res, n, codes, sizeof(codes));
	snprintf(extra, sizeof(extra), "%zu flaky, %zu with interval_drop, %zu lossy, %zu with mtu_mismatch", v->n_flaky,
		 v->n_interval_drop, v->n_lossy, v->n_mtu_mismatch);
	if (stop_sig)
		printf("\nverdict: INTERRUPTED by %s after %zu of %zu pairs (%zu ok, %zu failed:%s; %zu confirmed, "
		       "%zu unconfirmed; %s)\n", stop_sig == SIGINT ? "SIGINT" : stop_sig == SIGTERM ? "SIGTERM" : "a signal",
		       n, planned, v->n_ok, v->n_failed, codes[0] ? codes : " none", v->n_confirmed, v->n_unconfirmed,
		       extra);
	else if (v->n_failed == 0)
		printf("\nverdict: PASS (%zu of %zu pairs ok and verified; %s)\n", n, n, extra);
	else
		printf("\nverdict: FAIL (%zu of %zu pairs failed:%s; %zu confirmed, %zu unconfirmed; %s)\n", v->n_failed, n,
		       codes, v->n_confirmed, v->n_unconfirmed, extra);
	if (v->n_nominal)
		printf("note: %zu pair%s on soft devices (rxe, siw) whose link rate is nominal: --min-bw %.2f x link rate "
		       "was not applied to them, only --outlier (give an absolute --min-bw such as 1G to judge them)\n",
		       v->n_nominal, v->n_nominal == 1 ? "" : "s", vc->cfg.min_bw);
	for (size_t e = 0; e < v->n_eps; e++)
		if (v->eps[e].drain)
			printf("drain: %s on %s (%s)\n", rp_verdict_ep_name(&eps[e], name, sizeof(name)), eps[e].node,
			       v->eps[e].why);
		else if (v->eps[e].unusable)
			printf("unusable, not drained: %s on %s (%s)\n", rp_verdict_ep_name(&eps[e], name, sizeof(name)),
			       eps[e].node, v->eps[e].why);
	rp_cli_print_suspects(v, ep_of_array, eps, 10);
	if (v->n_unconfirmed)
		printf("note: %zu failure%s not confirmed by a retest%s: reported, never a reason to drain\n",
		       v->n_unconfirmed, v->n_unconfirmed == 1 ? " was" : "s were", stop_sig ? " (interrupted)" : "");
}
