/* cmd_pair.c: 'rdmaprobe pair': one pair across two hosts. 'pair --listen' waits for a peer and is the
 * target (dst); 'pair HOST[:P]' connects (retrying until --wait, so the start order does not matter)
 * and is the writer (src). The writer's size, iterations, mode, verdict and retests rule; the
 * listener adopts them. The listener lets a writer in only through lib/session/session_gate.h's gate (--allow,
 * --token, a valid hello within --timeout), before it allocates anything. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "engine/engine.h"
#include "engine_cli.h"
#include "base/log.h"
#include "base/netacl.h"
#include "oob/oob.h"
#include "session/session_run.h"
#include "session/session_gate.h"
#include "session/session_wire.h"
#include "signals.h"
#include "base/stop.h"
#include "base/util.h"
#include "verdict/verdict.h"
#include "verdict_cli.h"

#define SERVE_KEEP 1000   /* --serve: the reports hold the latest this many pairs */

static const char usage[] =
	"--listen [-p PORT] [--bind ADDR] [--allow CIDR,...] [--token T] [--once | --serve] [options]\n"
	"       rdmaprobe pair HOST[:PORT] [--token T] [options]";

struct pair_opts {
	struct rp_cli_engine e;
	const char *spec, *bind, *allow_s, *token, *min_bw_s;
	bool listen, cm, once, serve, port_seen, outlier_seen, interval_drop_seen, wait_seen;
	int tcp_port, ib_port;
	double wait_s, outlier, interval_drop;
	char host[256];
	struct rp_acl allow;
	struct rp_verdict_cfg vcfg;
	uint8_t token_field[RP_TOKEN_MAX];
};

/* Split "host", "host:port", "[v6]:port" into host (copied) and *port. 0 or -1 (printed). */
static int split_host(const char *arg, char *host, size_t host_len, int *port)
{
	const char *colon;
	size_t n;

	if (arg[0] == '[') {
		const char *end = strchr(arg, ']');

		if (!end || (end[1] != '\0' && end[1] != ':'))
			goto bad;
		n = (size_t)(end - arg - 1);
		colon = end[1] == ':' ? end + 1 : NULL;
		arg++;
	} else {
		colon = strchr(arg, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL;   /* a bare IPv6 address */
		n = colon ? (size_t)(colon - arg) : strlen(arg);
	}
	if (n == 0 || n >= host_len)
		goto bad;
	memcpy(host, arg, n);
	host[n] = '\0';
	if (colon && rp_parse_int(colon + 1, 1, 65535, port) != 0) {
		fprintf(stderr, "rdmaprobe pair: '%s': the port must be a number 1 to 65535\n", colon + 1);
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "rdmaprobe pair: '%s': expected HOST, HOST:PORT or [IPv6]:PORT\n", arg);
	return -1;
}

/* The options that only one side takes: a usage error on the other, never silently ignored. */
static int check_sides(const struct pair_opts *o)
{
	const char *only_listener = o->bind ? "--bind" : o->allow_s ? "--allow" : o->once ? "--once" :
				    o->serve ? "--serve" : NULL;
	const char *only_writer = o->min_bw_s ? "--min-bw" : o->outlier_seen ? "--outlier" :
				  o->interval_drop_seen ? "--interval-drop" : o->e.retest_seen ? "--retest" :
				  o->e.bidir ? "--bidir" : NULL;

	if (!o->listen && only_listener) {
		fprintf(stderr, "rdmaprobe pair: %s is for the listener (pair --listen)\n", only_listener);
		return RP_EXIT_USAGE;
	}
	if (o->listen && only_writer) {
		fprintf(stderr, "rdmaprobe pair: %s is for the writer: the listener follows the writer's settings "
			"(--bidir too), applies its verdict and serves the retests it asks for\n", only_writer);
		return RP_EXIT_USAGE;
	}
	if (o->once && o->serve) {
		fprintf(stderr, "rdmaprobe pair: give either --once or --serve, not both\n");
		return RP_EXIT_USAGE;
	}
	if (o->serve && o->wait_seen) {
		fprintf(stderr, "rdmaprobe pair: --serve waits for writers until stopped; --wait is for --once\n");
		return RP_EXIT_USAGE;
	}
	return 0;
}

/* --bind, --allow, --token / RDMAPROBE_TOKEN, --min-bw / --outlier / --interval-drop into their parsed forms. */
static int parse_trust(struct pair_opts *o)
{
	const char *token = o->token ? o->token : getenv("RDMAPROBE_TOKEN");
	char why[160];

	if (o->bind) {
		struct rp_cidr one;

		if (rp_cidr_parse(o->bind, &one, why, sizeof(why)) != 0 || strchr(o->bind, '/')) {
			fprintf(stderr, "rdmaprobe pair: --bind %s: not a numeric IPv4 or IPv6 address\n", o->bind);
			return RP_EXIT_USAGE;
		}
	}
	if (o->allow_s && rp_acl_parse(o->allow_s, &o->allow, why, sizeof(why)) != 0) {
		fprintf(stderr, "rdmaprobe pair: --allow: %s\n", why);
		return RP_EXIT_USAGE;
	}
	if (token && token[0] && rp_token_check(token, why, sizeof(why)) != 0) {
		fprintf(stderr, "rdmaprobe pair: %s: %s\n", o->token ? "--token" : "RDMAPROBE_TOKEN", why);
		return RP_EXIT_USAGE;
	}
	rp_token_field(token, o->token_field);
	if (o->token) {
		/* --token points into argv: blank it there, so it is neither in the reports' command line
		 * nor in /proc/PID/cmdline from now on */
		memset((char *)(uintptr_t)o->token, '*', strlen(o->token));
	}
	if (o->min_bw_s && rp_verdict_min_bw_parse(o->min_bw_s, &o->vcfg) != 0) {
		fprintf(stderr, "rdmaprobe pair: --min-bw %s: a fraction of the link rate (0.9 or 90%%) or Gb/s with a "
			"unit (180G)\n", o->min_bw_s);
		return RP_EXIT_USAGE;
	}
	o->vcfg.outlier = o->outlier;
	o->vcfg.interval_drop = o->interval_drop;
	if (o->e.latency && (o->min_bw_s || o->outlier_seen || o->interval_drop_seen)) {
		/* as loopback and matrix (bench/verdict_cli.c): a bandwidth rule in latency mode is an error */
		fprintf(stderr, "rdmaprobe pair: --min-bw, --outlier and --interval-drop judge bandwidth; latency mode "
			"(-l) measures none\n");
		return RP_EXIT_USAGE;
	}
	if (o->e.latency) {
		o->vcfg.min_bw = 0;    /* defaults only: latency mode measures no bandwidth */
		o->vcfg.outlier = 0;
		o->vcfg.interval_drop = 0;
	}
	return 0;
}

static int parse_opts(struct pair_opts *o, int argc, char **argv)
{
	struct rp_opt t[RP_CLI_ENGINE_OPTS + 16];
	const char *pos[1] = { NULL };
	int npos = 0, rc;
	size_t k = 0;

	memset(o, 0, sizeof(*o));
	rp_cli_engine_init(&o->e);
	rp_verdict_cfg_default(&o->vcfg);
	o->tcp_port = RP_OOB_TCP_DEFAULT_PORT;
	o->wait_s = 30;
	o->outlier = o->vcfg.outlier;
	o->interval_drop = o->vcfg.interval_drop;
	t[k++] = (struct rp_opt){ "listen", 0, RP_OPT_FLAG, &o->listen, 0, 0, NULL, "wait for the peer; this side is the target (dst)", NULL };
	t[k++] = (struct rp_opt){ "port", 'p', RP_OPT_INT, &o->tcp_port, 1, 65535, "P", "TCP port of the side channel (default 18515)", &o->port_seen };
	t[k++] = (struct rp_opt){ "bind", 0, RP_OPT_STR, &o->bind, 0, 0, "ADDR", "listen on this address only (default: every address)", NULL };
	t[k++] = (struct rp_opt){ "allow", 0, RP_OPT_STR, &o->allow_s, 0, 0, "CIDR,...", "let only writers from these IPv4/IPv6 prefixes in", NULL };
	t[k++] = (struct rp_opt){ "token", 0, RP_OPT_STR, &o->token, 0, 0, "T", "shared secret both sides must give (better: RDMAPROBE_TOKEN; argv is public)", NULL };
	t[k++] = (struct rp_opt){ "once", 0, RP_OPT_FLAG, &o->once, 0, 0, NULL, "serve one writer's pair (with its retests) and exit (default)", NULL };
	t[k++] = (struct rp_opt){ "serve", 0, RP_OPT_FLAG, &o->serve, 0, 0, NULL, "serve writers one after another until stopped (SIGINT/SIGTERM)", NULL };
	t[k++] = (struct rp_opt){ "device", 'd', RP_OPT_STR, &o->spec, 0, 0, "SPEC", "adapter (NCCL_IB_HCA syntax; the first port it selects)", NULL };
	t[k++] = (struct rp_opt){ "ib-port", 'i', RP_OPT_INT, &o->ib_port, 1, 255, "N", "adapter port (default: the first selected)", NULL };
	t[k++] = (struct rp_opt){ "wait", 0, RP_OPT_SECONDS, &o->wait_s, 0.1, 86400, "S", "how long to wait for the peer (default 30s; not with --serve)", &o->wait_seen };
	t[k++] = (struct rp_opt){ "cm", 0, RP_OPT_FLAG, &o->cm, 0, 0, NULL, "connect with librdmacm (like perftest -R)", NULL };
	t[k++] = (struct rp_opt){ "min-bw", 0, RP_OPT_STR, &o->min_bw_s, 0, 0, "X", "writer: fail below X: 0.9 / 90% of link rate, or 180G (default 0.9)", NULL };
	t[k++] = (struct rp_opt){ "outlier", 0, RP_OPT_DOUBLE, &o->outlier, 0, 1, "F", "writer: the verdict's outlier fraction (default 0.5; 0 off)", &o->outlier_seen };
	t[k++] = (struct rp_opt){ "interval-drop", 0, RP_OPT_DOUBLE, &o->interval_drop, 0, 1, "F", "writer: warn when the slowest --interval is below F x the average (default 0.1; 0 off)", &o->interval_drop_seen };
	k += rp_cli_engine_opts(&o->e, t + k);
	memset(&t[k], 0, sizeof(t[k]));
	rc = rp_opts_parse("pair", usage, t, argc, argv, pos, 1, &npos);
	if (rc)
		return rc > 0 ? -1 : RP_EXIT_USAGE;
	if (o->listen == (npos == 1)) {
		fprintf(stderr, "rdmaprobe pair: give either --listen or the peer's HOST[:PORT]\n");
		return RP_EXIT_USAGE;
	}
	if (o->e.all) {
		fprintf(stderr, "rdmaprobe pair: -a is for loopback; run pair once per size with -s\n");
		return RP_EXIT_USAGE;
	}
	if (!o->listen && split_host(pos[0], o->host, sizeof(o->host), &o->tcp_port) != 0)
		return RP_EXIT_USAGE;
	rc = check_sides(o);
	if (!rc)
		rc = parse_trust(o);
	if (!rc)
		rc = rp_cli_engine_finish(&o->e, "pair");
	o->e.cfg.cm = o->cm;   /* the listener follows the writer's choice; --cm there is accepted and changes nothing */
	return rc;
}

/* A pair that never ran: status and reason, this side's endpoint filled. */
static void no_pair(struct rp_pair_result *res, const struct pair_opts *o, const struct rp_engine_port *local,
		    int rc, const char *why)
{
	enum rp_status st = rc == -EINTR ? RP_ST_INTERRUPTED : rc == -ETIMEDOUT ? RP_ST_TIMEOUT :
			    rc == -EACCES || rc == -EPROTONOSUPPORT || rc == -EBADMSG ? RP_ST_SETUP : RP_ST_PEER_LOST;
	struct rp_endpoint *me;

	rp_pair_result_init(res, NULL, NULL);
	me = o->listen ? &res->dst : &res->src;
	rp_strlcpy(me->device, local->device, sizeof(me->device));
	me->port = local->port;
	if (rc == -EINTR)
		rp_pair_result_fail(res, st, "interrupted by signal %d before a peer was let in", rp_stop_signal());
	else if (st == RP_ST_SETUP)
		rp_pair_result_fail(res, st, "the listener refused this writer: %s",
				    rc == -EACCES ? "wrong token" : rc == -EPROTONOSUPPORT ? "another protocol version" :
				    "invalid hello");
	else if (why)
		rp_pair_result_fail(res, st, "%s", why);
	else
		rp_pair_result_fail(res, st, "no side channel to the peer: %s", strerror(-rc));
	fprintf(stderr, "rdmaprobe pair: %s\n", res->reason);
}

/* One line per attempt when the pair was measured more than once, and how it held up. */
static void print_attempts(const struct rp_pair_result *r)
{
	if (r->n_attempts < 2)
		return;
	for (unsigned i = 0; i < r->n_attempts; i++) {
		const struct rp_attempt *a = &r->attempts[i];

		fprintf(stderr, "rdmaprobe pair: attempt %u of %u (ACK timeout %d): %s%s%s\n", i + 1, r->n_attempts,
			a->qp_timeout, rp_status_code(a->status), a->reason[0] ? ": " : "", a->reason);
	}
	fprintf(stderr, "rdmaprobe pair: %s after %u attempts\n",
		r->confirm == RP_CONFIRM_NONE ? "ok" : rp_confirm_code(r->confirm), r->n_attempts);
}

/* The exit status of a finished command: a stop wins, then a failed report, then the pair. */
static int final_status(int report_status, bool failed)
{
	if (rp_stop_requested())
		return rp_stop_exit_status();
	if (report_status)
		return report_status;
	return failed ? RP_EXIT_FAIL : RP_EXIT_OK;
}

static int run_writer(struct pair_opts *o, const struct rp_engine_port *local, const struct rp_engine_cfg *cfg,
		      int argc, char **argv)
{
	double deadline = rp_now() + o->wait_s;
	struct rp_sw_hello hello;
	struct rp_pair_result res;
	struct rp_oob oob;
	int rc, status;

	memset(&hello, 0, sizeof(hello));
	hello.retest = (uint32_t)o->e.retest;
	hello.min_bw_absolute = o->vcfg.min_bw_absolute;
	hello.min_bw = o->vcfg.min_bw;
	hello.outlier = o->vcfg.outlier;
	hello.interval_drop = o->vcfg.interval_drop;
	memcpy(hello.token, o->token_field, sizeof(hello.token));
	fprintf(stderr, "rdmaprobe pair: writer on %s:%d, connecting to %s port %d ...\n", local->device, local->port,
		o->host, o->tcp_port);
	rc = rp_oob_tcp_connect(&oob, o->host, o->tcp_port, deadline);
	if (!rc) {
		/* at least one --timeout for the answer, even when the connect used up most of --wait */
		rc = rp_session_hello(&oob, &hello, fmax(deadline, rp_now() + o->e.timeout));
		if (rc)
			rp_oob_close(&oob);
	}
	memset(hello.token, 0, sizeof(hello.token));
	if (rc) {
		no_pair(&res, o, local, rc, NULL);
	} else {
		rp_session_writer(cfg, &o->vcfg, (unsigned)o->e.retest, local, &oob, &res);
		rp_oob_close(&oob);
		rp_cli_print_result(&res);
		rp_cli_print_judgement(&res);
		print_attempts(&res);
	}
	status = rp_cli_write_reports(&o->e, "pair", argc, argv, &res, 1);
	if (rc == -EACCES || rc == -EPROTONOSUPPORT)
		return rp_stop_requested() ? rp_stop_exit_status() : RP_EXIT_USAGE;
	return final_status(status, res.status != RP_ST_OK);
}

/* Keep res in the list of served pairs (the latest SERVE_KEEP). 0 or -ENOMEM. */
static int keep_result(struct rp_pair_result **list, size_t *n, size_t *cap, const struct rp_pair_result *res)
{
	if (*n == SERVE_KEEP) {
		memmove(*list, *list + 1, (SERVE_KEEP - 1) * sizeof(**list));
		(*n)--;
	}
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct rp_pair_result *p = realloc(*list, ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*list = p;
		*cap = ncap;
	}
	(*list)[(*n)++] = *res;
	return 0;
}

static int run_listener(struct pair_opts *o, const struct rp_engine_port *local, const struct rp_engine_cfg *cfg,
			int argc, char **argv)
{
	struct rp_session_auth auth = { .allow = &o->allow, .timeout_s = o->e.timeout };
	double deadline = o->serve ? INFINITY : rp_now() + o->wait_s;
	struct rp_pair_result *served = NULL, res;
	size_t n = 0, cap = 0;
	bool failed = false;
	int lfd, rc, status = 0;

	memcpy(auth.token, o->token_field, sizeof(auth.token));
	rc = rp_oob_tcp_listen(o->bind, o->tcp_port, &lfd);
	if (rc)
		return rc == -EINVAL ? RP_EXIT_USAGE : RP_EXIT_ENV;   /* logged: not an address, not ours, in use */
	fprintf(stderr, "rdmaprobe pair: target on %s:%d, waiting for %s on TCP %s%sport %d ...\n", local->device,
		local->port, o->serve ? "writers" : "a writer", o->bind ? o->bind : "", o->bind ? " " : "", o->tcp_port);
	for (;;) {
		struct rp_sw_hello hello;
		struct rp_oob oob;
		struct rp_pair_refusals ref = { 0 };
		double t0 = rp_now();

		rc = rp_session_accept(lfd, &auth, deadline, &oob, &hello, &ref);
		if (rc == -EINTR && o->serve)
			break;   /* stopped while idle: the served pairs are already in the files */
		if (rc == -ETIMEDOUT) {
			char why[300];

			/* how long it waited and whom it turned away, not a bare "Connection timed out" */
			rp_pairsrv_wait_reason(rp_now() - t0, o->wait_s, &ref, why, sizeof(why));
			no_pair(&res, o, local, rc, why);
			res.elapsed_s = rp_now() - t0;
		} else if (rc) {
			no_pair(&res, o, local, rc, NULL);
		} else {
			rp_session_target(cfg, &hello, local, &oob, &res);
			rp_oob_close(&oob);
			rp_cli_print_result(&res);
			rp_cli_print_judgement(&res);
			print_attempts(&res);
			fflush(stdout);
		}
		failed |= res.status != RP_ST_OK;
		if (keep_result(&served, &n, &cap, &res) != 0) {
			fprintf(stderr, "rdmaprobe pair: out of memory\n");
			status = RP_EXIT_ENV;
			break;
		}
		status = rp_cli_write_reports(&o->e, "pair", argc, argv, served, n);
		if (!o->serve || rp_stop_requested() || (rc && rc != -ETIMEDOUT))
			break;
	}
	close(lfd);
	free(served);
	return final_status(status, failed);
}

int cmd_pair(int argc, char **argv)
{
	struct pair_opts o;
	struct rp_cli_port *ports = NULL;
	size_t n_ports = 0;
	struct rp_engine_port local;
	struct rp_engine_cfg cfg;
	struct rp_node node;
	int status;

	status = parse_opts(&o, argc, argv);
	if (status)
		return status < 0 ? RP_EXIT_OK : status;
	status = rp_signals_install();
	if (!status)   /* a listener waiting for a client, a pair in flight: out within one --timeout */
		status = rp_signals_watchdog(o.e.timeout, true);
	if (status) {
		fprintf(stderr, "rdmaprobe pair: cannot install the signal handlers: %s\n", strerror(-status));
		return RP_EXIT_ENV;
	}
	status = rp_cli_check_outputs(&o.e, "pair");
	if (status)
		return status;
	status = rp_cli_select_ports("pair", o.spec, o.ib_port, o.e.gid_seen ? o.e.gid_index : -1, o.e.ver.version,
				     &ports, &n_ports, &node);
	if (!status) {   /* fails the run at the end (exit 1), as 'nccl' does */
		rp_cli_nccl_crash(&o.e, "pair", &node);
		rp_cli_named_unusable(&o.e, "pair", o.spec, &node);
	}
	rp_node_fini(&node);
	if (status)
		return status;
	local = (struct rp_engine_port){ NULL, ports[0].device, ports[0].port, ports[0].gid_index };
	rp_cli_pair_cfg(&o.e, o.listen ? NULL : &ports[0], o.listen ? &ports[0] : NULL, &cfg);
	rp_cli_warn_gdr(&o.e, &ports[0], 1, !o.listen, o.listen);
	if (o.listen)
		status = run_listener(&o, &local, &cfg, argc, argv);
	else
		status = run_writer(&o, &local, &cfg, argc, argv);
	memset(o.token_field, 0, sizeof(o.token_field));
	free(ports);
	return rp_cli_nccl_crash_status(&o.e, status);
}
