/* cmd_loopback.c: 'rdmaprobe loopback': RDMA WRITE between every ordered pair of this node's selected
 * ports (self pairs too, unless --no-self), one pair at a time, so no port is ever in two measurements
 * at once; then the verdict every command shares (lib/verdict/verdict.h: thresholds, outliers, retest right
 * after each size's pairs), a matrix (rows source, columns destination), and --json / --csv rewritten
 * after every pair. SIGINT/SIGTERM stop it between pairs: the finished pairs are judged and written,
 * and the exit status is 128 + the signal.
 *
 * --concurrent: after each size's solo pairs, the node's disjoint pairs run at the same time, round
 * after round (lib/engine/engine_concurrent.h: every unordered pair of ports once, every port busy in every round), and
 * each is compared with the same ordered pair measured alone: concurrent_drop below
 * (1 - --concurrent-drop) x solo (default 25%). A pair that fails under load fails the run; a drop is a
 * warning. JSON: "concurrent": [{"src", "dst", "msg_size", "round", "solo_gbps", "ratio", "pair"}]. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "compare/diff.h"
#include "engine/engine.h"
#include "engine_cli.h"
#include "base/log.h"
#include "ops_cli.h"
#include "engine/engine_concurrent.h"
#include "report/report.h"
#include "matrix/pairset_sweep.h"
#include "verdict/retest.h"
#include "signals.h"
#include "base/stop.h"
#include "base/util.h"
#include "verdict_cli.h"

static const char usage[] = "[-d SPEC] [--no-self] [-s SIZE | -a] [-n N | -D S] [--concurrent] [options]\n\n"
	"Exit: 0 pass, 1 a pair failed, 2 usage, 3 environment or a report not written, 130/143 stopped by\n"
	"SIGINT/SIGTERM (the pairs finished until then are judged and written).";

struct lb_run {
	struct rp_cli_engine e;
	struct rp_cli_verdict vc;
	struct rp_cli_ops ops;        /* --prom, --baseline, --drop */
	bool *drain, *unusable;       /* one per port: the verdict, for --prom */
	const char *spec;
	bool no_self, quiet;
	char host[RP_NAME_MAX];
	struct rp_cli_port *ports;
	size_t n_ports;
	struct rp_endpoint *eps;      /* one per port: the verdict's endpoints, all on this node */
	struct rp_pair_result *res;   /* the measured pairs, one size pass after another */
	uint32_t *pair_eps;           /* 2 per result: the src and dst port numbers */
	int *index;                   /* the current pass: result of (src i, dst j), -1 none */
	size_t n_res, planned;
	struct rp_verdict v;
	int argc;
	char **argv;
	int write_status;             /* 0, or RP_EXIT_ENV once a --json/--csv write failed */
	bool concurrent;              /* --concurrent */
	const char *conc_drop_s;      /* --concurrent-drop */
	double conc_drop;
	struct rp_pair_result *conc;  /* the pairs run within their set, one size pass after another */
	struct lb_conc { uint32_t src, dst, round; int solo; double ratio; } *conc_meta;
	size_t n_conc, conc_scheduled;
	const char *sweep_s;          /* --sweep auto|off */
	enum rp_reach *reach;         /* the first pass's sweep, per (src i, dst j): what it found */
	struct rp_pair_result *found; /* its dead directions' results, its flaky ones' first failure */
};

/* A software RDMA device: its link rate is nominal. Until the engine fills rp_endpoint.soft from the
 * device itself, the verbs name tells (rdma_rxe names its devices rxe*, siw siw*). */
static bool soft_device_name(const char *dev)
{
	return strncmp(dev, "rxe", 3) == 0 || strncmp(dev, "siw", 3) == 0;
}

/* The cell of a pair in the matrix: Gb/s, latency in us, or the failure code; flaky is marked. */
static void cell(const struct rp_pair_result *r, char *buf, size_t len)
{
	const char *flaky = r && r->confirm == RP_CONFIRM_FLAKY ? " flaky" : "";
	struct rp_pair_result own;

	if (r && r->reverse.folded) {
		/* --bidir: the pair failed in its reverse direction; this cell is the forward's own */
		own = *r;
		rp_pair_reverse_unfold(&own);
		r = &own;
	}
	if (!r)
		snprintf(buf, len, "-");
	else if (r->status != RP_ST_OK)
		snprintf(buf, len, "%s", rp_status_code(r->status));
	else if (r->lat.measured)
		snprintf(buf, len, "%.2fus%s", r->lat.median_us, flaky);
	else
		snprintf(buf, len, "%.3f%s", r->gbps, flaky);
}

static void print_matrix(const struct lb_run *lb, size_t size)
{
	char name[RP_NAME_MAX + 8], c[64];
	size_t n = lb->n_ports;

	printf("\n%s, %zu-byte writes (rows: source, columns: destination)\n",
	       lb->e.latency ? "median latency, us" : "Gb/s", size);
	printf("%-14s", "");
	for (size_t j = 0; j < n; j++) {
		snprintf(name, sizeof(name), "%s:%d", lb->ports[j].device, lb->ports[j].port);
		printf(" %17s", name);
	}
	printf("\n");
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s:%d", lb->ports[i].device, lb->ports[i].port);
		printf("%-14s", name);
		for (size_t j = 0; j < n; j++) {
			int k = lb->index[i * n + j], kr = lb->index[j * n + i];
			struct rp_pair_result rev;

			if (k < 0 && kr >= 0 && lb->res[kr].reverse.measured) {
				/* --bidir: j -> i ran as the reverse direction of i <- j */
				rp_pair_reverse_view(&lb->res[kr], &rev);
				cell(&rev, c, sizeof(c));
			} else if (k >= 0 && i == j && lb->res[k].reverse.measured) {
				char f[32], b[32];

				rp_pair_reverse_view(&lb->res[k], &rev);
				cell(&lb->res[k], f, sizeof(f));
				cell(&rev, b, sizeof(b));
				snprintf(c, sizeof(c), "%s|%s", f, b);
			} else {
				cell(k >= 0 ? &lb->res[k] : NULL, c, sizeof(c));
			}
			printf(" %17s", c);
		}
		printf("\n");
	}
}

/* The "concurrent" section: each pair within its set against the same pair alone. */
static json_t *conc_json(const struct lb_run *lb)
{
	json_t *a = json_array();

	for (size_t k = 0; a && k < lb->n_conc; k++) {
		const struct lb_conc *m = &lb->conc_meta[k];
		const struct rp_pair_result *solo = m->solo >= 0 ? &lb->res[m->solo] : NULL;
		json_t *o = json_pack("{s:s, s:i, s:s, s:i, s:I, s:I, s:o, s:o, s:o}", "src", lb->ports[m->src].device,
				      "src_port", lb->ports[m->src].port, "dst", lb->ports[m->dst].device, "dst_port",
				      lb->ports[m->dst].port, "msg_size", (json_int_t)lb->conc[k].msg_size, "round",
				      (json_int_t)m->round, "solo_gbps",
				      solo && solo->status == RP_ST_OK ? json_real(solo->gbps) : json_null(), "ratio",
				      m->ratio > 0 ? json_real(m->ratio) : json_null(), "pair", rp_report_pair_json(&lb->conc[k]));

		if (!o || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* Judge what is measured so far (the verdict is idempotent) and rewrite --json/--csv. A write that
 * failed once is not retried until the end, so the error is printed once per file. */
static int lb_checkpoint(struct lb_run *lb, bool final)
{
	int rc;

	rp_verdict_fini(&lb->v);
	rc = rp_verdict_apply(&lb->vc.cfg, lb->eps, lb->n_ports, lb->pair_eps, lb->res, lb->n_res, &lb->v);
	if (rc)
		return RP_EXIT_ENV;   /* logged */
	if (final && rp_cli_ops_baseline_judge(&lb->ops, "loopback", &lb->e.cfg, lb->res, lb->n_res) != 0)
		lb->write_status = RP_EXIT_ENV;
	if ((lb->e.json || lb->e.csv) && (final || !lb->write_status)) {
		json_t *extra = json_object(), *bl = final ? rp_cli_ops_baseline_json(&lb->ops) : NULL;
		int sig = rp_stop_requested() ? rp_stop_signal() : 0;

		/* whether the file is the whole run: an interrupted one read as finished before (issue 26 item
		 * 17); "complete" only in the final write of a run that measured every planned pair */
		if (extra && (json_object_set_new(extra, "interrupted", json_boolean(sig != 0)) != 0 ||
			      json_object_set_new(extra, "signal", sig ? json_integer(sig) : json_null()) != 0 ||
			      json_object_set_new(extra, "pairs_planned", json_integer((json_int_t)lb->planned)) != 0 ||
			      json_object_set_new(extra, "complete", json_boolean(final && !sig && lb->n_res == lb->planned)) != 0)) {
			json_decref(extra);
			extra = NULL;
		}
		if (!extra || (bl && json_object_set_new(extra, "baseline", bl) != 0) ||
		    (lb->concurrent && json_object_set_new(extra, "concurrent", conc_json(lb)) != 0)) {
			fprintf(stderr, "rdmaprobe loopback: out of memory\n");
			json_decref(extra);
			return RP_EXIT_ENV;
		}
		rc = rp_cli_write_reports_with(&lb->e, "loopback", lb->argc, lb->argv, lb->res, lb->n_res, NULL, extra);
		lb->write_status = lb->write_status ? lb->write_status : rc;
		json_decref(extra);
	}
	for (size_t i = 0; i < lb->n_ports; i++) {
		lb->drain[i] = lb->v.eps[i].drain;
		lb->unusable[i] = lb->v.eps[i].unusable;
	}
	rc = rp_cli_ops_prom(&lb->ops, &(struct rp_prom_run){ .command = "loopback", .version = rp_version_string(),
				.eps = lb->eps, .n_eps = lb->n_ports, .drain = lb->drain,
				.unusable = lb->unusable }, lb->res, lb->n_res, final);
	lb->write_status = lb->write_status ? lb->write_status : rc;
	return 0;
}

/* Measure i -> j with cfg into *r. False when the run was stopped and r is not a finished
 * measurement (interrupted, or failed while the signal tore into its waits). */
static bool lb_measure(struct lb_run *lb, const struct rp_engine_cfg *cfg, size_t i, size_t j, unsigned pass,
		       struct rp_pair_result *r)
{
	struct rp_engine_port src = { lb->host, lb->ports[i].device, lb->ports[i].port, lb->ports[i].gid_index };
	struct rp_engine_port dst = { lb->host, lb->ports[j].device, lb->ports[j].port, lb->ports[j].gid_index };

	rp_engine_loopback_run(cfg, &src, &dst, pass, r);
	if (r->n_attempts == 0)   /* until the engine records its attempts itself (lib/verdict/retest.h, step 1) */
		rp_pair_result_record_attempt(r, cfg->qp.qp_timeout);
	r->src.soft |= soft_device_name(lb->ports[i].device);
	r->dst.soft |= soft_device_name(lb->ports[j].device);
	if (r->status == RP_ST_INTERRUPTED || (rp_stop_requested() && r->status != RP_ST_OK))
		return false;
	lb->eps[i].link_gbps = r->src.link_gbps > 0 ? r->src.link_gbps : lb->eps[i].link_gbps;
	lb->eps[j].link_gbps = r->dst.link_gbps > 0 ? r->dst.link_gbps : lb->eps[j].link_gbps;
	return true;
}

/* Before the first pass: every direction probed at once, what failed probed again at once
 * (lib/matrix/pairset_sweep.h): a dead adapter costs a screen and a confirmation, not a deadline per
 * direction (with --retest 0 one probe at the full settings decides, as the matrix's sweep). Not with
 * --bidir, --sweep off or a single direction.
 * RP_EXIT_GO_ON to go on (lb->reach NULL: no sweep), or an exit status. */
static int lb_sweep(struct lb_run *lb)
{
	size_t n = lb->n_ports, m = 0;
	struct rp_concurrent_job *jobs;
	enum rp_reach *reach;
	struct rp_pair_result *found;
	uint32_t *at;
	unsigned rounds = 0;
	size_t dead = 0, flaky = 0;
	double t0 = rp_now();
	int rc;

	if (strcmp(lb->sweep_s, "off") == 0 || lb->e.bidir || (lb->no_self ? n * (n - 1) : n * n) < 2)
		return RP_EXIT_GO_ON;
	jobs = calloc(n * n, sizeof(*jobs));
	reach = calloc(n * n, sizeof(*reach));
	found = calloc(n * n, sizeof(*found));
	at = calloc(n * n, sizeof(*at));
	lb->reach = calloc(n * n, sizeof(*lb->reach));
	lb->found = calloc(n * n, sizeof(*lb->found));
	rc = jobs && reach && found && at && lb->reach && lb->found ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++)
		for (size_t j = 0; j < n; j++) {
			struct rp_cli_port *s = &lb->ports[i], *d = &lb->ports[j];

			if (lb->no_self && i == j)
				continue;
			rp_cli_pair_cfg(&lb->e, s, d, &jobs[m].cfg);
			jobs[m].cfg.meas.msg_size = lb->e.sizes[0];
			jobs[m].src = (struct rp_engine_port){ lb->host, s->device, s->port, s->gid_index };
			jobs[m].dst = (struct rp_engine_port){ lb->host, d->device, d->port, d->gid_index };
			at[m++] = (uint32_t)(i * n + j);
		}
	if (!rc && !lb->quiet)
		fprintf(stderr, "[sweep] %zu directions probed at once ...\n", m);
	if (!rc)
		rc = rp_pairset_reach(jobs, m, lb->vc.cfg.retest, rp_engine_loopback_run, reach, found, &rounds);
	for (size_t k = 0; !rc && k < m; k++) {
		lb->reach[at[k]] = reach[k];
		lb->found[at[k]] = found[k];
		dead += reach[k] == RP_REACH_DEAD;
		flaky += reach[k] == RP_REACH_FLAKY;
	}
	if (!rc && !lb->quiet)
		fprintf(stderr, "[sweep] %zu dead (%s, not measured again), %zu failed once then passed, in %u round%s, "
			"%.1f s\n", dead, lb->vc.cfg.retest ? "confirmed" : "--retest 0: one probe at the full --timeout decided",
			flaky, rounds, rounds == 1 ? "" : "s", rp_now() - t0);
	free(jobs);
	free(reach);
	free(found);
	free(at);
	if (!rc)
		return RP_EXIT_GO_ON;
	fprintf(stderr, "rdmaprobe loopback: out of memory for the reachability sweep\n");
	return RP_EXIT_ENV;
}

/* Every pair of the pass that failed or fell below the threshold/outlier rule, measured again
 * (each up to --retest times), each new measurement folded in and the verdict applied again, until
 * a round over the pairs finds none to measure (lib/verdict/retest.h). */
static int lb_retest(struct lb_run *lb, size_t first, unsigned pass)
{
	unsigned max = lb->vc.cfg.retest;
	bool more = max > 0;

	while (more && !rp_stop_requested()) {
		more = false;
		for (size_t k = first; k < lb->n_res && !rp_stop_requested(); k++) {
			struct rp_pair_result *r = &lb->res[k], again;
			struct rp_engine_cfg base, cfg;
			size_t i = lb->pair_eps[2 * k], j = lb->pair_eps[2 * k + 1];
			int rc;

			if (!rp_retest_wanted(r, max))
				continue;
			rp_cli_pair_cfg(&lb->e, &lb->ports[i], &lb->ports[j], &base);
			base.meas.msg_size = lb->e.sizes[pass];
			rp_retest_cfg(&base, r, &cfg);
			if (!lb->quiet)
				fprintf(stderr, "[retest, attempt %u] %s:%d -> %s:%d (%s), --qp-timeout %d ...\n", r->n_attempts + 1,
					lb->ports[i].device, lb->ports[i].port, lb->ports[j].device, lb->ports[j].port,
					rp_status_code(r->status), cfg.qp.qp_timeout);
			if (!lb_measure(lb, &cfg, i, j, pass, &again))
				return 0;   /* stopped: what was measured is kept */
			if (!lb->quiet)
				fprintf(stderr, "[retest, attempt %u] %s (%.1f s)\n", r->n_attempts + 1, rp_status_code(again.status),
					again.elapsed_s);
			rp_retest_merge(r, &again);
			more = true;   /* each pair at most max times (rp_retest_wanted): the rounds end */
			rc = lb_checkpoint(lb, false);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* --concurrent, after a size pass: the node's disjoint pairs round after round, each round's pairs at
 * the same time, each compared with its solo measurement of this pass. */
static int lb_concurrent(struct lb_run *lb, unsigned pass)
{
	size_t n = lb->n_ports, rounds = rp_concurrent_rounds(n);
	struct rp_concurrent_job *jobs = calloc(n, sizeof(*jobs));
	uint32_t *pairs = calloc(n + 1, sizeof(*pairs));
	int rc = 0;

	if (!jobs || !pairs) {
		fprintf(stderr, "rdmaprobe loopback: out of memory\n");
		rc = RP_EXIT_ENV;
	}
	for (size_t r = 0; !rc && r < rounds && !rp_stop_requested(); r++) {
		size_t np = rp_concurrent_round(n, r, pairs), first = lb->n_conc;

		for (size_t k = 0; k < np; k++) {
			struct rp_cli_port *s = &lb->ports[pairs[2 * k]], *d = &lb->ports[pairs[2 * k + 1]];

			rp_cli_pair_cfg(&lb->e, s, d, &jobs[k].cfg);
			jobs[k].cfg.meas.msg_size = lb->e.sizes[pass];
			jobs[k].src = (struct rp_engine_port){ lb->host, s->device, s->port, s->gid_index };
			jobs[k].dst = (struct rp_engine_port){ lb->host, d->device, d->port, d->gid_index };
			jobs[k].pass = pass;
		}
		if (!lb->quiet)
			fprintf(stderr, "[concurrent %zu/%zu] %zu pairs at once, %zu bytes ...\n", r + 1, rounds, np,
				lb->e.sizes[pass]);
		if (rp_concurrent_run(jobs, np, &lb->conc[first]) != 0) {
			rc = RP_EXIT_ENV;   /* logged */
			break;
		}
		for (size_t k = 0; k < np; k++) {
			struct lb_conc *m = &lb->conc_meta[first + k];
			struct rp_pair_result *c = &lb->conc[first + k];

			c->src.soft |= soft_device_name(c->src.device);
			c->dst.soft |= soft_device_name(c->dst.device);
			*m = (struct lb_conc){ pairs[2 * k], pairs[2 * k + 1], (uint32_t)r, lb->index[pairs[2 * k] * n + pairs[2 * k + 1]], 0 };
			if (m->solo >= 0)
				m->ratio = rp_concurrent_compare(&lb->res[m->solo], c, lb->conc_drop);
		}
		lb->n_conc += np;
		rc = lb_checkpoint(lb, false);
	}
	free(pairs);
	free(jobs);
	return rc;
}

/* The concurrent pairs against their solo figures, one line each; true when one failed. */
static bool print_concurrent(const struct lb_run *lb)
{
	bool failed = false;

	if (!lb->concurrent)
		return false;
	printf("\nconcurrent (each round's pairs at the same time) against solo, concurrent_drop below %.0f%%:\n",
	       100.0 * (1.0 - lb->conc_drop));
	for (size_t k = 0; k < lb->n_conc; k++) {
		const struct lb_conc *m = &lb->conc_meta[k];
		const struct rp_pair_result *c = &lb->conc[k], *solo = m->solo >= 0 ? &lb->res[m->solo] : NULL;
		char name[2 * RP_NAME_MAX + 32];

		snprintf(name, sizeof(name), "%s:%d -> %s:%d", lb->ports[m->src].device, lb->ports[m->src].port,
			 lb->ports[m->dst].device, lb->ports[m->dst].port);
		if (c->status != RP_ST_OK) {
			failed = true;
			printf("  round %u  %-32s FAILED under load: %s: %s\n", m->round + 1, name, rp_status_code(c->status),
			       c->reason);
		} else if (m->ratio > 0) {
			printf("  round %u  %-32s %9.3f Gb/s, solo %9.3f Gb/s (%5.1f%%)%s\n", m->round + 1, name, c->gbps,
			       solo->gbps, 100.0 * m->ratio,
			       c->warnings & (1u << RP_WARN_CONCURRENT_DROP) ? "  warning: concurrent_drop" : "");
		} else {
			printf("  round %u  %-32s %9.3f Gb/s, no solo figure to compare\n", m->round + 1, name, c->gbps);
		}
	}
	return failed;
}

/* One size pass: every ordered pair once, the files rewritten after each; then the retests. */
static int lb_pass(struct lb_run *lb, unsigned pass)
{
	size_t n = lb->n_ports, first = lb->n_res;
	int rc;

	for (size_t k = 0; k < n * n; k++)
		lb->index[k] = -1;
	if (pass == 0 && (rc = lb_sweep(lb)) != RP_EXIT_GO_ON)
		return rc;
	for (size_t i = 0; i < n && !rp_stop_requested(); i++) {
		for (size_t j = 0; j < n && !rp_stop_requested(); j++) {
			struct rp_pair_result *r = &lb->res[lb->n_res];
			enum rp_reach reach = pass == 0 && lb->reach ? lb->reach[i * n + j] : RP_REACH_OK;
			struct rp_engine_cfg cfg;

			if ((lb->no_self && i == j) || (lb->e.bidir && j < i))
				continue;   /* --bidir: i -> j runs j -> i at the same time */
			rp_cli_pair_cfg(&lb->e, &lb->ports[i], &lb->ports[j], &cfg);
			cfg.meas.msg_size = lb->e.sizes[pass];
			if (reach == RP_REACH_FLAKY && cfg.qp.qp_timeout < RP_RETEST_NCCL_QP_TIMEOUT)
				cfg.qp.qp_timeout = RP_RETEST_NCCL_QP_TIMEOUT;
			if (!lb->quiet)
				fprintf(stderr, "[%zu/%zu] %s:%d -> %s:%d, %zu bytes ...\n", lb->n_res + 1, lb->planned,
					lb->ports[i].device, lb->ports[i].port, lb->ports[j].device, lb->ports[j].port,
					cfg.meas.msg_size);
			if (reach == RP_REACH_DEAD) {
				*r = lb->found[i * n + j];   /* both probes failed: no bandwidth run */
				r->src.soft |= soft_device_name(lb->ports[i].device);
				r->dst.soft |= soft_device_name(lb->ports[j].device);
			} else if (!lb_measure(lb, &cfg, i, j, pass, r)) {
				break;
			} else if (reach == RP_REACH_FLAKY) {
				struct rp_pair_result probe = lb->found[i * n + j];

				rp_retest_merge(&probe, r);   /* its probe's failure first: never a plain pass */
				*r = probe;
			}
			if (!lb->quiet)
				/* the reason was logged where it was detected and is in the table below */
				fprintf(stderr, "[%zu/%zu] %s (%.1f s)\n", lb->n_res + 1, lb->planned, rp_status_code(r->status),
					r->elapsed_s);
			lb->pair_eps[2 * lb->n_res] = (uint32_t)i;
			lb->pair_eps[2 * lb->n_res + 1] = (uint32_t)j;
			lb->index[i * n + j] = (int)lb->n_res++;
			rc = lb_checkpoint(lb, false);
			if (rc)
				return rc;
		}
	}
	rc = lb_retest(lb, first, pass);
	if (!rc)
		rc = lb_checkpoint(lb, false);
	if (!rc)
		print_matrix(lb, lb->e.sizes[pass]);
	if (!rc && lb->concurrent && !rp_stop_requested())
		rc = lb_concurrent(lb, pass);
	return rc;
}

/* The options, parsed and checked, and the ports selected. RP_EXIT_GO_ON, or an exit status (said why). */
static int lb_options(struct lb_run *lb, int argc, char **argv)
{
	struct rp_opt table[RP_CLI_ENGINE_OPTS + RP_CLI_VERDICT_OPTS + RP_CLI_OPS_OPTS + 7];
	struct rp_node node = { 0 };
	size_t k;
	int rc, status;

	rp_cli_engine_init(&lb->e);
	rp_cli_verdict_init(&lb->vc);
	rp_cli_ops_init(&lb->ops);
	lb->conc_drop_s = "25%";
	table[0] = (struct rp_opt){ "device", 'd', RP_OPT_STR, &lb->spec, 0, 0, "SPEC",
				    "ports in NCCL_IB_HCA syntax (default: what NCCL selects)", NULL };
	table[1] = (struct rp_opt){ "no-self", 0, RP_OPT_FLAG, &lb->no_self, 0, 0, NULL, "skip port-to-itself pairs", NULL };
	table[2] = (struct rp_opt){ "quiet", 0, RP_OPT_FLAG, &lb->quiet, 0, 0, NULL, "no progress on stderr", NULL };
	table[3] = (struct rp_opt){ "concurrent", 0, RP_OPT_FLAG, &lb->concurrent, 0, 0, NULL,
				    "then the node's disjoint pairs at the same time, each against its solo figure", NULL };
	table[4] = (struct rp_opt){ "concurrent-drop", 0, RP_OPT_STR, &lb->conc_drop_s, 0, 0, "X",
				    "--concurrent: below solo x (1 - X) is concurrent_drop: 25% or 0.25 (default 25%)", NULL };
	lb->sweep_s = "auto";
	table[5] = (struct rp_opt){ "sweep", 0, RP_OPT_STR, &lb->sweep_s, 0, 0, "auto|off",
				    "probe every direction at once before any bandwidth run; a direction that fails twice (once "
				    "with --retest 0) is not measured (default auto: not with --bidir)", NULL };
	k = 6 + rp_cli_engine_opts(&lb->e, table + 6);
	k += rp_cli_verdict_opts(&lb->vc, table + k);
	k += rp_cli_ops_opts(&lb->ops, table + k);
	memset(&table[k], 0, sizeof(table[k]));
	rc = rp_opts_parse("loopback", usage, table, argc, argv, NULL, 0, NULL);
	if (rc)
		return rc > 0 ? RP_EXIT_OK : RP_EXIT_USAGE;
	status = rp_cli_engine_finish(&lb->e, "loopback");
	if (!status)
		status = rp_cli_check_outputs(&lb->e, "loopback");
	if (!status)
		status = rp_cli_ops_finish(&lb->ops, "loopback");
	lb->vc.retest = lb->e.retest;   /* --retest is in the engine's shared table */
	if (!status)
		status = rp_cli_verdict_finish(&lb->vc, "loopback", lb->e.latency);
	if (!status)
		status = rp_cli_select_ports("loopback", lb->spec, 0, lb->e.gid_seen ? lb->e.gid_index : -1,
					     lb->e.ver.version, &lb->ports,
					     &lb->n_ports, &node);
	if (!status) {   /* fails the run at the end (exit 1), as 'nccl' does */
		rp_cli_nccl_crash(&lb->e, "loopback", &node);
		rp_cli_named_unusable(&lb->e, "loopback", lb->spec, &node);
	}
	rp_node_fini(&node);
	if (!status && rp_diff_drop_parse(lb->conc_drop_s, &lb->conc_drop) != 0) {
		fprintf(stderr, "rdmaprobe loopback: --concurrent-drop %s: a percentage (25%%) or a fraction (0.25) below 1\n",
			lb->conc_drop_s);
		status = RP_EXIT_USAGE;
	}
	if (!status && strcmp(lb->sweep_s, "auto") != 0 && strcmp(lb->sweep_s, "off") != 0) {
		fprintf(stderr, "rdmaprobe loopback: --sweep takes auto or off, not '%s'\n", lb->sweep_s);
		status = RP_EXIT_USAGE;
	}
	return status ? status : RP_EXIT_GO_ON;
}

/* The run's arrays for n ports and their endpoints. RP_EXIT_GO_ON, or RP_EXIT_ENV (out of memory). */
static int lb_alloc(struct lb_run *lb, size_t n)
{
	size_t per_pass;

	per_pass = (lb->e.bidir ? n * (n + 1) / 2 : n * n) - (lb->no_self ? n : 0);
	lb->planned = per_pass * lb->e.n_sizes;
	lb->res = calloc(lb->planned, sizeof(*lb->res));
	lb->pair_eps = calloc(2 * lb->planned, sizeof(*lb->pair_eps));
	lb->index = calloc(n * n, sizeof(*lb->index));
	lb->eps = calloc(n, sizeof(*lb->eps));
	lb->drain = calloc(n, sizeof(*lb->drain));
	lb->unusable = calloc(n, sizeof(*lb->unusable));
	lb->conc_scheduled = lb->concurrent ? (n / 2) * rp_concurrent_rounds(n) * lb->e.n_sizes : 0;
	lb->conc = calloc(lb->conc_scheduled + 1, sizeof(*lb->conc));
	lb->conc_meta = calloc(lb->conc_scheduled + 1, sizeof(*lb->conc_meta));
	if (!lb->res || !lb->pair_eps || !lb->index || !lb->eps || !lb->drain || !lb->unusable || !lb->conc || !lb->conc_meta) {
		fprintf(stderr, "rdmaprobe loopback: out of memory\n");
		return RP_EXIT_ENV;
	}
	for (size_t i = 0; i < n; i++) {
		rp_strlcpy(lb->eps[i].node, lb->host, sizeof(lb->eps[i].node));
		rp_strlcpy(lb->eps[i].device, lb->ports[i].device, sizeof(lb->eps[i].device));
		lb->eps[i].port = lb->ports[i].port;
		lb->eps[i].gid_index = lb->ports[i].gid_index;
		lb->eps[i].soft = soft_device_name(lb->ports[i].device);
	}
	return RP_EXIT_GO_ON;
}

/* Options, ports, endpoints and storage. Returns RP_EXIT_GO_ON to go on, or an exit status. */
static int lb_setup(struct lb_run *lb, int argc, char **argv)
{
	int rc = lb_options(lb, argc, argv);
	size_t n;

	if (rc != RP_EXIT_GO_ON)
		return rc;
	if (lb->concurrent && lb->n_ports < 2) {
		fprintf(stderr, "rdmaprobe loopback: --concurrent needs two ports or more (%zu selected)\n", lb->n_ports);
		return RP_EXIT_USAGE;
	}
	rp_cli_warn_gdr(&lb->e, lb->ports, lb->n_ports, true, true);
	n = lb->n_ports;
	if (lb->no_self && n < 2) {
		fprintf(stderr, "rdmaprobe loopback: --no-self with %zu port leaves no pair%s\n", n,
			lb->e.unusable[0] ? " (see port_not_active)" : "");
		/* a named adapter that is not usable is the finding (exit 1), not a usage error */
		return lb->e.unusable[0] ? rp_cli_nccl_crash_status(&lb->e, RP_EXIT_OK) : RP_EXIT_USAGE;
	}
	if (gethostname(lb->host, sizeof(lb->host) - 1) != 0)
		rp_strlcpy(lb->host, "localhost", sizeof(lb->host));
	rc = lb_alloc(lb, n);
	if (rc != RP_EXIT_GO_ON)
		return rc;
	rc = rp_signals_install();
	if (!rc)   /* a pair in flight ends at the stop; whatever hangs after it, one --timeout ends the process */
		rc = rp_signals_watchdog(lb->e.timeout, true);
	if (rc)
		fprintf(stderr, "rdmaprobe loopback: cannot install SIGINT/SIGTERM handlers: %s\n", strerror(-rc));
	return RP_EXIT_GO_ON;
}

int cmd_loopback(int argc, char **argv)
{
	struct lb_run lb;
	bool regressed, conc_failed;
	int status;

	memset(&lb, 0, sizeof(lb));
	lb.argc = argc;
	lb.argv = argv;
	status = lb_setup(&lb, argc, argv);
	if (status != RP_EXIT_GO_ON)
		goto out;
	for (unsigned p = 0; p < lb.e.n_sizes && !rp_stop_requested(); p++) {
		status = lb_pass(&lb, p);
		if (status)
			goto out;
	}
	status = lb_checkpoint(&lb, true);
	if (status)
		goto out;
	for (size_t i = 0; i < lb.n_res; i++) {
		rp_cli_print_result(&lb.res[i]);
		rp_cli_print_judgement(&lb.res[i]);
	}
	rp_cli_print_verdict(&lb.vc, &lb.v, lb.eps, lb.res, lb.n_res, lb.planned, rp_stop_signal());
	regressed = rp_cli_ops_baseline_print(&lb.ops);
	conc_failed = print_concurrent(&lb);
	status = rp_stop_requested() ? rp_stop_exit_status()
		 : lb.write_status ? lb.write_status
		 : lb.v.pass && !regressed && !conc_failed ? RP_EXIT_OK : RP_EXIT_FAIL;
	status = rp_cli_nccl_crash_status(&lb.e, status);
out:
	rp_verdict_fini(&lb.v);
	rp_cli_verdict_fini(&lb.vc);
	rp_cli_ops_fini(&lb.ops);
	free(lb.conc_meta);
	free(lb.conc);
	free(lb.drain);
	free(lb.unusable);
	free(lb.eps);
	free(lb.index);
	free(lb.pair_eps);
	free(lb.res);
	free(lb.reach);
	free(lb.found);
	free(lb.ports);
	return status;
}
