/* cmd_check.c: 'rdmaprobe check': the node health check for prologs, epilogs, LBNL NHC, Kubernetes
 * probes and cron. Discovery, the static health checks (lib/health/health.h), NCCL's view under the node's
 * NCCL_IB_HCA, then a short loopback of every port NCCL would use, all at once (lib/engine/engine_concurrent.h: each
 * port writes into itself), within --budget; the problems and the verdict come from lib/verdict/check.h.
 *
 * Output: the first line is the drain reason ("rdmaprobe: mlx5_3:1 DOWN (phys Disabled)"), or
 * "rdmaprobe: healthy ..." / "rdmaprobe: could not check: ...", then one line per problem; --json FILE
 * writes everything as one object (atomically; "-" or a bare --json: on stdout instead of the text);
 * --prom FILE writes the metrics (lib/report/prom.h).
 * --slurm-drain: when unhealthy, the scontrol command that drains this node is printed (a dry run);
 * with --apply it is run. A healthy node is never resumed (an operator may have drained it).
 * Exit: 0 healthy, 1 unhealthy, 2 usage, 3 could not check (the budget ran out before the loopback
 * ended, no measurement could be set up, the sysfs root unreadable), 130/143 stopped by a signal. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "verdict/check.h"
#include "cmds.h"
#include "health/health.h"
#include "health/health_json.h"
#include "nccl/nccl.h"
#include "nccl/nccl_version.h"
#include "discover/node.h"
#include "ops_cli.h"
#include "opts.h"
#include "engine/engine_concurrent.h"
#include "report/prom.h"
#include "report/report.h"
#include "verdict/retest.h"
#include "base/sanitize.h"
#include "signals.h"
#include "base/stop.h"
#include "base/util.h"
#include "verdict/verdict.h"

static const char usage[] = "[--budget S] [--hca SPEC] [--json FILE] [--prom FILE] [--slurm-drain [--apply]] [options]\n\n"
	"Exit: 0 healthy, 1 unhealthy (the first line is the drain reason), 2 usage, 3 could not check.\n"
	"--slurm-drain prints 'scontrol update nodename=NODE state=drain reason=...' when unhealthy; --apply runs it.";

struct ck_run {
	double budget;
	const char *hca, *nccl_version, *python, *sysfs_root, *prom, *node_name;
	const char *json;             /* --json FILE; "-" standard output (then no text) */
	bool hca_seen, json_only, drain, apply, no_loopback, quiet;
	char node[RP_NAME_MAX];
	double t0;
	struct rp_node n;
	struct rp_health h;
	struct rp_nccl_result nr;
	struct rp_nccl_env env;
	struct rp_nccl_version_found ver;
	struct rp_check c;
	struct rp_pair_result *res;
	size_t n_res;
	char reason[RP_CHECK_REASON_MAX + 1];
	char drain_cmd[RP_CHECK_REASON_MAX + 2 * RP_NAME_MAX + 64];
	int drain_exit;               /* -1 not run */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Discovery, health and NCCL's view: problems, or 3 when the node cannot be read at all. */
static int ck_static(struct ck_run *k)
{
	struct rp_discover_opts dopts = { .sysfs_root = k->sysfs_root };
	struct rp_health_opts hopts = { .cmdline_path = k->sysfs_root ? NULL : "/proc/cmdline", .dmabuf = RP_TRI_UNKNOWN,
					.probe_host = !k->sysfs_root };
	int rc;

	if (rp_node_discover(&k->n, &dopts) != 0)
		return RP_EXIT_ENV;   /* said what failed */
	if (rp_check_from_node(&k->c, &k->n) || rp_health_check(&k->n, &hopts, &k->h) ||
	    rp_check_from_health(&k->c, &k->n, &k->h))
		return RP_EXIT_ENV;   /* out of memory, logged */
	if (rp_nccl_env_load(&k->env) != 0)
		return rp_check_add(&k->c, RP_CHECK_FAIL, RP_CHECK_SRC_NCCL, "nccl_env", "", "NCCL variables unreadable",
				    "the NCCL_* variables cannot be read as NCCL reads them (see above)") ? RP_EXIT_ENV : 0;
	k->env.version = k->ver.version;
	if (k->hca_seen)
		k->env.ib_hca = k->hca;
	rc = rp_nccl_evaluate(&k->n, &k->env, &k->nr);
	if (rc == -ENOMEM)
		return RP_EXIT_ENV;
	if (rc)
		return rp_check_add(&k->c, RP_CHECK_FAIL, RP_CHECK_SRC_NCCL, "nccl_ib_hca_invalid", "", "NCCL_IB_HCA invalid",
				    "NCCL_IB_HCA '%s' cannot be parsed (see above)", k->env.ib_hca ? k->env.ib_hca : "") ? RP_EXIT_ENV : 0;
	return rp_check_from_nccl(&k->c, &k->nr) ? RP_EXIT_ENV : 0;
}

/* The port counters around each self pair judged as every command judges them (the verdict with no
 * bandwidth rule: a flap or physical errors fail the pair as link_errors, retransmissions make it
 * lossy). */
static int ck_counters_judge(struct ck_run *k, unsigned retest)
{
	struct rp_endpoint *eps = calloc(k->n_res, sizeof(*eps));
	uint32_t *pair_eps = calloc(2 * k->n_res, sizeof(*pair_eps));
	struct rp_verdict_cfg cfg = { .min_bw = 0, .outlier = 0, .interval_drop = 0, .retest = retest };
	struct rp_verdict v = { 0 };
	int rc = -ENOMEM;

	if (eps && pair_eps) {
		for (size_t i = 0; i < k->n_res; i++) {
			/* from the selection, not the result: a pair that failed early has no names */
			rp_strlcpy(eps[i].node, k->node, sizeof(eps[i].node));
			rp_strlcpy(eps[i].device, k->nr.selected[i].hca, sizeof(eps[i].device));
			eps[i].port = k->nr.selected[i].port;
			eps[i].soft = k->res[i].src.soft;
			pair_eps[2 * i] = pair_eps[2 * i + 1] = (uint32_t)i;
		}
		rc = rp_verdict_apply(&cfg, eps, k->n_res, pair_eps, k->res, k->n_res, &v);
		rp_verdict_fini(&v);
	} else {
		fprintf(stderr, "rdmaprobe check: out of memory\n");
	}
	free(eps);
	free(pair_eps);
	return rc;
}

/* One sample is not a verdict: the self pairs that failed run once more, together, with the same
 * deadlines, when a quarter of the budget is left (else they stay unconfirmed: the check is then
 * incomplete, not a drain). Only a failure seen twice fails the node; one that passed the second
 * time is flaky, a warning. */
static int ck_retest(struct ck_run *k, struct rp_concurrent_job *jobs)
{
	struct rp_concurrent_job *again = calloc(k->n_res, sizeof(*again));
	struct rp_pair_result *res = calloc(k->n_res, sizeof(*res));
	size_t *idx = calloc(k->n_res, sizeof(*idx)), m = 0;
	int rc = -ENOMEM;

	if (!again || !res || !idx)
		goto out;
	for (size_t i = 0; i < k->n_res; i++)
		if (rp_retest_wanted(&k->res[i], 1)) {
			again[m] = jobs[i];
			idx[m++] = i;
		}
	rc = 0;
	if (m == 0)
		goto out;
	if (k->budget - (now_s() - k->t0) < k->budget / 4 || rp_stop_requested()) {
		rp_check_set_incomplete(&k->c, "a loopback failed once and the --budget left no time to measure it again");
		rc = ck_counters_judge(k, 1);   /* unconfirmed */
		goto out;
	}
	if (!k->quiet && !k->json_only)
		fprintf(stderr, "rdmaprobe check: %zu port%s failed, measured again ...\n", m, m == 1 ? "" : "s");
	rc = rp_concurrent_run(again, m, res);
	for (size_t j = 0; !rc && j < m; j++)
		if (res[j].status != RP_ST_INTERRUPTED)
			rp_retest_merge(&k->res[idx[j]], &res[j]);
	if (!rc)
		rc = ck_counters_judge(k, 1);
out:
	if (rc == -ENOMEM)
		fprintf(stderr, "rdmaprobe check: out of memory\n");
	free(idx);
	free(res);
	free(again);
	return rc;
}

/* Every port NCCL selects writes into itself, all at once, with deadlines that fit what is left of
 * the budget: a quarter of it per phase (at most 10 s), a run of a twentieth (at most 1 s). */
static int ck_loopback(struct ck_run *k)
{
	size_t n = k->nr.n_selected;
	double left = k->budget - (now_s() - k->t0);
	struct rp_concurrent_job *jobs;

	if (k->no_loopback || n == 0)
		return 0;
	if (k->sysfs_root) {
		rp_check_set_incomplete(&k->c, "--sysfs-root: no loopback (verbs not consulted)");
		return 0;
	}
	if (left < 1.0 || rp_stop_requested()) {
		rp_check_set_incomplete(&k->c, "the --budget was spent before the loopback");
		return 0;
	}
	jobs = calloc(n, sizeof(*jobs));
	k->res = calloc(n, sizeof(*k->res));
	if (!jobs || !k->res) {
		free(jobs);
		fprintf(stderr, "rdmaprobe check: out of memory\n");
		return RP_EXIT_ENV;
	}
	for (size_t i = 0; i < n; i++) {
		const struct rp_nccl_sel *s = &k->nr.selected[i];
		struct rp_engine_cfg *cfg = &jobs[i].cfg;

		rp_engine_cfg_default(cfg);
		cfg->meas.iters = 0;
		cfg->meas.duration_s = left / 20 < 1.0 ? left / 20 : 1.0;
		cfg->meas.interval_s = cfg->meas.duration_s / 4;
		cfg->timeout_s = left / 4 < 10.0 ? left / 4 : 10.0;
		jobs[i].src = (struct rp_engine_port){ k->node, s->hca, s->port, s->gid_index };
		jobs[i].dst = jobs[i].src;
	}
	if (!k->quiet && !k->json_only)
		fprintf(stderr, "rdmaprobe check: loopback of %zu port%s at once, %.2f s each ...\n", n, n == 1 ? "" : "s",
			jobs[0].cfg.meas.duration_s);
	if (rp_concurrent_run(jobs, n, k->res) != 0) {
		free(jobs);
		return RP_EXIT_ENV;   /* logged */
	}
	k->n_res = n;
	if (ck_counters_judge(k, 0) != 0 || ck_retest(k, jobs) != 0) {
		free(jobs);
		return RP_EXIT_ENV;   /* logged */
	}
	free(jobs);
	for (size_t i = 0; i < n; i++)
		if (k->res[i].status == RP_ST_INTERRUPTED || (rp_stop_requested() && k->res[i].status != RP_ST_OK))
			rp_check_set_incomplete(&k->c, rp_stop_signal() == SIGALRM ? "the --budget ran out during the loopback"
						: "stopped by a signal during the loopback");
	return rp_check_from_pairs(&k->c, k->res, n) ? RP_EXIT_ENV : 0;
}

/* --slurm-drain: the command, printed (dry run) or run (--apply) without a shell. */
static void ck_drain(struct ck_run *k)
{
	char nodearg[RP_NAME_MAX + 16], reasonarg[RP_CHECK_REASON_MAX + 16];
	char *argv[] = { "scontrol", "update", nodearg, "state=drain", reasonarg, NULL };
	int st;
	pid_t pid;

	k->drain_exit = -1;
	if (!k->drain || !k->reason[0])
		return;
	snprintf(nodearg, sizeof(nodearg), "nodename=%s", k->node);
	snprintf(reasonarg, sizeof(reasonarg), "reason=%s", k->reason);
	snprintf(k->drain_cmd, sizeof(k->drain_cmd), "scontrol update nodename=%s state=drain reason=\"%s\"", k->node,
		 k->reason);
	if (!k->apply) {
		if (!k->json_only)
			printf("dry run (--apply runs it): %s\n", k->drain_cmd);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "rdmaprobe check: cannot run scontrol: %s\n", strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		fprintf(stderr, "rdmaprobe check: cannot run scontrol: %s\n", strerror(errno));
		k->drain_exit = 127;
		return;
	}
	k->drain_exit = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (k->drain_exit)
		fprintf(stderr, "rdmaprobe check: '%s' exited %d: the node is NOT drained\n", k->drain_cmd, k->drain_exit);
	else if (!k->json_only)
		printf("drained: %s\n", k->drain_cmd);
}

static void ck_print_text(const struct ck_run *k, enum rp_check_status st)
{
	if (st == RP_CHECK_UNHEALTHY)
		printf("%s\n", k->reason);
	else if (st == RP_CHECK_UNKNOWN)
		printf("rdmaprobe: could not check: %s\n", k->c.incomplete_why);
	else
		printf("rdmaprobe: healthy: %zu adapter%s, %zu port%s looped back\n", k->n.n_hcas, k->n.n_hcas == 1 ? "" : "s",
		       k->n_res, k->n_res == 1 ? "" : "s");
	for (size_t i = 0; i < k->c.n; i++) {
		const struct rp_check_problem *p = &k->c.items[i];

		printf("%s %s %s%s%s: %s\n", p->sev == RP_CHECK_FAIL ? "FAIL" : "warn", rp_check_src_str(p->src), p->code,
		       p->device[0] ? " " : "", p->device, p->message);
	}
	if (st == RP_CHECK_UNHEALTHY && k->c.incomplete)
		printf("warn check incomplete: %s\n", k->c.incomplete_why);
}

/* Everything as one JSON object into --json FILE (atomic; "-" stdout). 0 or 3 (said why). */
static int ck_write_json(const struct ck_run *k)
{
	json_t *o = rp_check_json(&k->c), *lb = json_array(), *drain = NULL;
	int rc = !o || !lb;

	for (size_t i = 0; !rc && i < k->n_res; i++)
		rc = json_array_append_new(lb, rp_report_pair_json(&k->res[i]));
	if (!rc && k->drain && k->reason[0])
		drain = json_pack("{s:s, s:b, s:o}", "command", k->drain_cmd, "applied", k->apply, "exit",
				  k->drain_exit >= 0 ? json_integer(k->drain_exit) : json_null());
	rc = rc || json_object_set_new(o, "command", json_string("check")) ||
	     json_object_set_new(o, "version", json_string(rp_version_string())) ||
	     json_object_set_new(o, "node", json_string(k->node)) ||
	     json_object_set_new(o, "budget_s", json_real(k->budget)) ||
	     json_object_set_new(o, "elapsed_s", json_real(now_s() - k->t0)) ||
	     json_object_set_new(o, "nccl_version", rp_nccl_version_json(&k->ver)) ||
	     json_object_set_new(o, "nccl", rp_nccl_result_json(&k->nr, &k->env)) ||
	     json_object_set_new(o, "health", rp_health_to_json(&k->h)) ||
	     json_object_set(o, "loopback", lb) ||
	     json_object_set_new(o, "drain", drain ? drain : json_null());
	if (rc) {
		rp_cli_write_failed("check", k->json, 0, "check report");
	} else if ((rc = rp_report_write_json(o, k->json)) != 0) {
		rp_cli_write_failed("check", k->json, rc, NULL);
	}
	json_decref(lb);
	json_decref(o);
	return rc ? RP_EXIT_ENV : 0;
}

static int ck_prom(const struct ck_run *k)
{
	struct rp_endpoint *eps = calloc(k->nr.n_selected + 1, sizeof(*eps));
	bool *drain = calloc(k->nr.n_selected + 1, sizeof(*drain));
	int rc = -ENOMEM;

	if (eps && drain) {
		for (size_t i = 0; i < k->nr.n_selected; i++) {
			char dev[RP_NAME_MAX + 8];

			rp_strlcpy(eps[i].node, k->node, sizeof(eps[i].node));
			rp_strlcpy(eps[i].device, k->nr.selected[i].hca, sizeof(eps[i].device));
			eps[i].port = k->nr.selected[i].port;
			snprintf(dev, sizeof(dev), "%s:%d", eps[i].device, eps[i].port);
			for (size_t p = 0; p < k->c.n; p++)
				drain[i] |= k->c.items[p].sev == RP_CHECK_FAIL && strcmp(k->c.items[p].device, dev) == 0;
		}
		rc = rp_prom_write(k->prom, &(struct rp_prom_run){ .command = "check", .version = rp_version_string(),
				   .eps = eps, .n_eps = k->nr.n_selected, .drain = drain, .check = &k->c }, k->res, k->n_res);
	}
	free(eps);
	free(drain);
	if (rc)
		rp_cli_write_failed("check", k->prom, rc, NULL);
	return rc ? RP_EXIT_ENV : 0;
}

/* The exit status: the health verdict decides it; a report that could not be written (output_rc
 * RP_EXIT_ENV, said on stderr) can only make it worse: a healthy node becomes "could not check", an
 * unhealthy one stays unhealthy (NHC drains on 1, and passes 3 by default). */
static int ck_exit_status(enum rp_check_status st, int output_rc)
{
	if (st == RP_CHECK_UNHEALTHY)
		return RP_EXIT_FAIL;
	return output_rc ? output_rc : (int)st;
}

static int ck_parse(struct ck_run *k, int argc, char **argv)
{
	const struct rp_opt table[] = {
		{ "budget", 0, RP_OPT_SECONDS, &k->budget, 1, 3600, "S", "the whole check within S (default 20s)", NULL },
		{ "hca", 0, RP_OPT_STR, &k->hca, 0, 0, "SPEC", "NCCL_IB_HCA to check under (default: $NCCL_IB_HCA)", &k->hca_seen },
		{ "nccl-version", 0, RP_OPT_STR, &k->nccl_version, 0, 0, "X.Y.Z",
		  "apply this NCCL release's rules (default: the libnccl.so.2 this process loads)", NULL },
		{ "python", 0, RP_OPT_STR, &k->python, 0, 0, "ENV", "look first for the nvidia-nccl-cu* wheel's libnccl here", NULL },
		{ "sysfs-root", 0, RP_OPT_STR, &k->sysfs_root, 0, 0, "DIR", "read DIR instead of /sys (no loopback: exit 3 at best)", NULL },
		{ "no-loopback", 0, RP_OPT_FLAG, &k->no_loopback, 0, 0, NULL, "static checks only", NULL },
		{ "json", 0, RP_OPT_OUTPUT, &k->json, 0, 0, "FILE", "write everything as JSON to FILE (- or a bare --json: stdout, instead of the text)", NULL },
		{ "prom", 0, RP_OPT_STR, &k->prom, 0, 0, "FILE", "write Prometheus text exposition (node exporter textfile; atomic)", NULL },
		{ "slurm-drain", 0, RP_OPT_FLAG, &k->drain, 0, 0, NULL,
		  "when unhealthy, print the scontrol command that drains this node (dry run)", NULL },
		{ "apply", 0, RP_OPT_FLAG, &k->apply, 0, 0, NULL, "--slurm-drain: run the command", NULL },
		{ "node", 0, RP_OPT_STR, &k->node_name, 0, 0, "NAME", "the Slurm node name (default: hostname -s)", NULL },
		{ "quiet", 0, RP_OPT_FLAG, &k->quiet, 0, 0, NULL, "no progress on stderr", NULL },
		{ 0 },
	};
	int rc = rp_opts_parse("check", usage, table, argc, argv, NULL, 0, NULL);

	if (rc)
		return rc > 0 ? RP_EXIT_OK : RP_EXIT_USAGE;
	if (k->apply && !k->drain) {
		fprintf(stderr, "rdmaprobe check: --apply goes with --slurm-drain\n");
		return RP_EXIT_USAGE;
	}
	if (k->prom && rp_report_path_check(k->prom) != 0) {
		fprintf(stderr, "rdmaprobe check: --prom %s: cannot write the metrics there\n", k->prom);
		return RP_EXIT_USAGE;
	}
	if (k->json && rp_report_path_check(k->json) != 0) {
		fprintf(stderr, "rdmaprobe check: --json %s: cannot write the report there\n", k->json);
		return RP_EXIT_USAGE;
	}
	k->json_only = k->json && strcmp(k->json, "-") == 0;
	if (k->hca_seen && strnlen(k->hca, RP_NCCL_SPEC_MAX + 1) > RP_NCCL_SPEC_MAX) {
		fprintf(stderr, "rdmaprobe check: --hca is longer than %d characters (NCCL_IB_HCA)\n", RP_NCCL_SPEC_MAX);
		return RP_EXIT_USAGE;
	}
	if (k->hca_seen)
		unsetenv("NCCL_IB_HCA");   /* --hca replaces it: a malformed value there must not stop the check */
	if (k->nccl_version) {
		if (rp_nccl_version_from_option(k->nccl_version, &k->ver))
			return RP_EXIT_USAGE;
	} else {
		rp_nccl_version_find(k->python, &k->ver);
	}
	if (k->node_name) {
		rp_str_sanitize_copy(k->node, sizeof(k->node), k->node_name);   /* safe to print and in JSON */
	} else {
		if (gethostname(k->node, sizeof(k->node) - 1) != 0)
			rp_strlcpy(k->node, "localhost", sizeof(k->node));
		k->node[strcspn(k->node, ".")] = '\0';   /* hostname -s */
	}
	return RP_EXIT_GO_ON;
}

int cmd_check(int argc, char **argv)
{
	struct ck_run k;
	enum rp_check_status st;
	int status;

	memset(&k, 0, sizeof(k));
	k.budget = 20;
	k.drain_exit = -1;
	status = ck_parse(&k, argc, argv);
	if (status != RP_EXIT_GO_ON)
		return status;
	k.t0 = now_s();
	/* a stop ends the loopback at once; a teardown that hangs is cut 10 s (the loopback's longest
	 * deadline) after the signal */
	if (rp_signals_install() != 0 || rp_signals_alarm(k.budget) != 0 || rp_signals_watchdog(10, true) != 0)
		fprintf(stderr, "rdmaprobe check: cannot install the signal handlers or the budget timer: %s\n", strerror(errno));
	status = ck_static(&k);
	if (!status)
		status = ck_loopback(&k);
	rp_signals_alarm(0);
	if (status)
		goto out;
	if (rp_stop_requested() && rp_stop_signal() != SIGALRM) {
		status = rp_stop_exit_status();
		goto out;
	}
	rp_check_sort(&k.c);
	rp_check_drain_reason(&k.c, k.reason, sizeof(k.reason));
	st = rp_check_status(&k.c);
	if (!k.json_only)
		ck_print_text(&k, st);   /* the drain reason first, then the command */
	ck_drain(&k);
	if (k.json)
		status = ck_write_json(&k);
	if (k.prom && ck_prom(&k))
		status = RP_EXIT_ENV;
	status = ck_exit_status(st, status);
out:
	free(k.res);
	rp_check_fini(&k.c);
	rp_nccl_result_fini(&k.nr);
	rp_health_fini(&k.h);
	rp_node_fini(&k.n);
	return status;
}
