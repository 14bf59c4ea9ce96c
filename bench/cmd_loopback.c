/* cmd_loopback.c: 'rdmaprobe loopback': RDMA WRITE between every ordered pair of this node's selected
 * ports (self pairs too, unless --no-self), one pair at a time, so no port is ever in two measurements
 * at once; a matrix (rows source, columns destination), a verdict, and --json / --csv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "engine.h"
#include "engine_cli.h"
#include "log.h"
#include "util.h"

static const char usage[] = "[-d SPEC] [--no-self] [-s SIZE | -a] [-n N | -D S] [options]";

/* The cell of a pair in the matrix: Gb/s, latency in us, or the failure code. */
static void cell(const struct rp_pair_result *r, char *buf, size_t len)
{
	if (!r)
		snprintf(buf, len, "-");
	else if (r->status != RP_ST_OK)
		snprintf(buf, len, "%s", rp_status_code(r->status));
	else if (r->lat.measured)
		snprintf(buf, len, "%.2fus", r->lat.median_us);
	else
		snprintf(buf, len, "%.3f", r->gbps);
}

static void print_matrix(const struct rp_cli_port *ports, size_t n, const struct rp_pair_result *res,
			 const int *index, size_t size, bool latency)
{
	char name[RP_NAME_MAX + 8], c[64];

	printf("\n%s, %zu-byte writes (rows: source, columns: destination)\n",
	       latency ? "median latency, us" : "Gb/s", size);
	printf("%-14s", "");
	for (size_t j = 0; j < n; j++) {
		snprintf(name, sizeof(name), "%s:%d", ports[j].device, ports[j].port);
		printf(" %14s", name);
	}
	printf("\n");
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s:%d", ports[i].device, ports[i].port);
		printf("%-14s", name);
		for (size_t j = 0; j < n; j++) {
			int k = index[i * n + j];

			cell(k >= 0 ? &res[k] : NULL, c, sizeof(c));
			printf(" %14s", c);
		}
		printf("\n");
	}
}

/* "verdict: PASS (...)" or "verdict: FAIL (...)" with counts per failure code. */
static void print_verdict(const struct rp_pair_result *res, size_t n)
{
	size_t counts[RP_ST_COUNT_] = { 0 }, failed = 0;

	for (size_t i = 0; i < n; i++) {
		counts[res[i].status]++;
		failed += res[i].status != RP_ST_OK;
	}
	if (!failed) {
		printf("\nverdict: PASS (%zu of %zu pairs ok and verified)\n", n, n);
		return;
	}
	printf("\nverdict: FAIL (%zu of %zu pairs failed:", failed, n);
	for (int s = 1; s < RP_ST_COUNT_; s++)
		if (counts[s])
			printf(" %s %zu", rp_status_code((enum rp_status)s), counts[s]);
	printf(")\n");
}

int cmd_loopback(int argc, char **argv)
{
	struct rp_cli_engine e;
	struct rp_opt table[RP_CLI_ENGINE_OPTS + 4];
	const char *spec = NULL;
	bool no_self = false, quiet = false;
	struct rp_cli_port *ports = NULL;
	struct rp_pair_result *res = NULL;
	int *index = NULL;
	size_t n_ports = 0, n_res = 0, k = 0;
	int rc, status;

	rp_cli_engine_init(&e);
	table[0] = (struct rp_opt){ "device", 'd', RP_OPT_STR, &spec, 0, 0, "SPEC",
				    "ports in NCCL_IB_HCA syntax (default: what NCCL selects)", NULL };
	table[1] = (struct rp_opt){ "no-self", 0, RP_OPT_FLAG, &no_self, 0, 0, NULL, "skip port-to-itself pairs", NULL };
	table[2] = (struct rp_opt){ "quiet", 0, RP_OPT_FLAG, &quiet, 0, 0, NULL, "no progress on stderr", NULL };
	k = 3 + rp_cli_engine_opts(&e, table + 3);
	memset(&table[k], 0, sizeof(table[k]));
	rc = rp_opts_parse("loopback", usage, table, argc, argv, NULL, 0, NULL);
	if (rc)
		return rc > 0 ? RP_EXIT_OK : RP_EXIT_USAGE;
	status = rp_cli_engine_finish(&e, "loopback");
	if (status)
		return status;
	status = rp_cli_check_outputs(&e, "loopback");
	if (status)
		return status;
	status = rp_cli_select_ports("loopback", spec, 0, e.gid_seen ? e.gid_index : -1, &ports, &n_ports);
	if (status)
		return status;
	rp_cli_warn_gdr(&e, ports, n_ports, true, true);
	if (no_self && n_ports < 2) {
		fprintf(stderr, "rdmaprobe loopback: --no-self with %zu port leaves no pair\n", n_ports);
		free(ports);
		return RP_EXIT_USAGE;
	}
	res = calloc(n_ports * n_ports * e.n_sizes, sizeof(*res));
	index = malloc(n_ports * n_ports * sizeof(*index));
	if (!res || !index) {
		fprintf(stderr, "rdmaprobe loopback: out of memory\n");
		free(res);
		free(index);
		free(ports);
		return RP_EXIT_ENV;
	}
	size_t total = (n_ports * n_ports - (no_self ? n_ports : 0)) * e.n_sizes;

	for (size_t p = 0; p < e.n_sizes; p++) {
		for (size_t i = 0; i < n_ports; i++) {
			for (size_t j = 0; j < n_ports; j++) {
				struct rp_engine_cfg cfg;

				rp_cli_pair_cfg(&e, &ports[i], &ports[j], &cfg);
				cfg.meas.msg_size = e.sizes[p];
				struct rp_engine_port src = { NULL, ports[i].device, ports[i].port, ports[i].gid_index };
				struct rp_engine_port dst = { NULL, ports[j].device, ports[j].port, ports[j].gid_index };
				struct rp_pair_result *r = &res[n_res];

				index[i * n_ports + j] = -1;
				if (no_self && i == j)
					continue;
				if (!quiet)
					fprintf(stderr, "[%zu/%zu] %s:%d -> %s:%d, %zu bytes ...\n", n_res + 1, total,
						src.device, src.port, dst.device, dst.port, cfg.meas.msg_size);
				rp_engine_loopback_run(&cfg, &src, &dst, (unsigned)p, r);
				if (!quiet)
					/* the reason was logged where it was detected and is in the table below */
					fprintf(stderr, "[%zu/%zu] %s (%.1f s)\n", n_res + 1, total,
						rp_status_code(r->status), r->elapsed_s);
				index[i * n_ports + j] = (int)n_res++;
			}
		}
		print_matrix(ports, n_ports, res, index, e.sizes[p], e.latency);
		/* the next size's pairs are appended; the matrix index refers to this size only */
	}
	for (size_t i = 0; i < n_res; i++)
		rp_cli_print_result(&res[i]);
	print_verdict(res, n_res);
	status = rp_cli_write_reports(&e, "loopback", argc, argv, res, n_res);
	if (!status)
		for (size_t i = 0; i < n_res; i++)
			if (res[i].status != RP_ST_OK)
				status = RP_EXIT_FAIL;
	free(index);
	free(res);
	free(ports);
	return status;
}
