/* cmd_pair.c: 'rdmaprobe pair': one pair across two hosts. 'pair --listen' waits for a peer and is the
 * target (dst); 'pair HOST[:P]' connects (retrying until --wait, so the start order does not matter)
 * and is the writer (src). The writer's size, iterations and mode rule; the listener adopts them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "engine.h"
#include "engine_cli.h"
#include "log.h"
#include "oob.h"
#include "util.h"

static const char usage[] = "--listen [-p PORT] [options]  |  HOST[:PORT] [options]";

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

int cmd_pair(int argc, char **argv)
{
	struct rp_cli_engine e;
	struct rp_opt table[RP_CLI_ENGINE_OPTS + 8];
	const char *spec = NULL, *pos[1] = { NULL };
	bool listen = false, cm = false;
	int tcp_port = RP_OOB_TCP_DEFAULT_PORT, ib_port = 0, npos = 0, rc, status;
	double wait_s = 30;
	bool port_seen = false;
	char host[256] = "";
	struct rp_cli_port *ports = NULL;
	size_t n_ports = 0, k;
	struct rp_oob oob;
	struct rp_pair_result res;
	struct rp_engine_port local;
	struct rp_engine_cfg cfg;

	rp_cli_engine_init(&e);
	table[0] = (struct rp_opt){ "listen", 0, RP_OPT_FLAG, &listen, 0, 0, NULL, "wait for the peer; this side is the target (dst)", NULL };
	table[1] = (struct rp_opt){ "port", 'p', RP_OPT_INT, &tcp_port, 1, 65535, "P", "TCP port of the side channel (default 18515)", &port_seen };
	table[2] = (struct rp_opt){ "device", 'd', RP_OPT_STR, &spec, 0, 0, "SPEC", "adapter (NCCL_IB_HCA syntax; the first port it selects)", NULL };
	table[3] = (struct rp_opt){ "ib-port", 'i', RP_OPT_INT, &ib_port, 1, 255, "N", "adapter port (default: the first selected)", NULL };
	table[4] = (struct rp_opt){ "wait", 0, RP_OPT_SECONDS, &wait_s, 0.1, 86400, "S", "how long to wait for the peer (default 30s)", NULL };
	table[5] = (struct rp_opt){ "cm", 0, RP_OPT_FLAG, &cm, 0, 0, NULL, "connect with librdmacm (like perftest -R)", NULL };
	k = 6 + rp_cli_engine_opts(&e, table + 6);
	memset(&table[k], 0, sizeof(table[k]));
	rc = rp_opts_parse("pair", usage, table, argc, argv, pos, 1, &npos);
	if (rc)
		return rc > 0 ? RP_EXIT_OK : RP_EXIT_USAGE;
	if (listen == (npos == 1)) {
		fprintf(stderr, "rdmaprobe pair: give either --listen or the peer's HOST[:PORT]\n");
		return RP_EXIT_USAGE;
	}
	if (e.all) {
		fprintf(stderr, "rdmaprobe pair: -a is for loopback; run pair once per size with -s\n");
		return RP_EXIT_USAGE;
	}
	if (!listen && split_host(pos[0], host, sizeof(host), &tcp_port) != 0)
		return RP_EXIT_USAGE;
	status = rp_cli_engine_finish(&e, "pair");
	if (status)
		return status;
	status = rp_cli_check_outputs(&e, "pair");
	if (status)
		return status;
	e.cfg.cm = cm;   /* the listener follows the writer's choice; --cm there is accepted and changes nothing */
	status = rp_cli_select_ports("pair", spec, ib_port, e.gid_seen ? e.gid_index : -1, &ports, &n_ports);
	if (status)
		return status;
	local = (struct rp_engine_port){ NULL, ports[0].device, ports[0].port, ports[0].gid_index };
	rp_cli_pair_cfg(&e, listen ? NULL : &ports[0], listen ? &ports[0] : NULL, &cfg);
	rp_cli_warn_gdr(&e, &ports[0], 1, !listen, listen);
	if (listen)
		fprintf(stderr, "rdmaprobe pair: target on %s:%d, waiting for a peer on TCP port %d ...\n", local.device,
			local.port, tcp_port);
	else
		fprintf(stderr, "rdmaprobe pair: writer on %s:%d, connecting to %s port %d ...\n", local.device, local.port,
			host, tcp_port);
	if (listen)
		rc = rp_oob_tcp_accept(&oob, tcp_port, rp_now() + wait_s);
	else
		rc = rp_oob_tcp_connect(&oob, host, tcp_port, rp_now() + wait_s);
	if (rc) {
		rp_pair_result_init(&res, NULL, NULL);
		rp_strlcpy(res.src.device, listen ? "" : local.device, sizeof(res.src.device));
		rp_pair_result_fail(&res, rc == -ETIMEDOUT ? RP_ST_TIMEOUT : RP_ST_PEER_LOST, "no side channel to the peer: %s",
				    strerror(-rc));
	} else {
		rp_engine_pair_run(&cfg, listen ? RP_ROLE_TARGET : RP_ROLE_WRITER, &local, &oob, 0, &res);
		rp_cli_print_result(&res);
		rp_oob_close(&oob);
	}
	status = rp_cli_write_reports(&e, "pair", argc, argv, &res, 1);
	if (!status && res.status != RP_ST_OK)
		status = RP_EXIT_FAIL;
	if (rc)
		fprintf(stderr, "rdmaprobe pair: %s\n", res.reason);
	free(ports);
	return status;
}
