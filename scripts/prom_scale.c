/* prom_scale.c: a matrix-shaped --prom page at 1,024 x 8 (results/reports-scale.md): every endpoint with the verdict's counts, no pair series,
 * findings as in the 1% dead-link simulation (4,413 adapters, 3,980 links): its size and series. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/prom.h"
#include "base/util.h"

int main(int argc, char **argv)
{
	size_t n = 8192, na = argc > 2 ? strtoul(argv[2], NULL, 10) : 4413, nl = argc > 3 ? strtoul(argv[3], NULL, 10) : 3980;
	struct rp_endpoint *eps = calloc(n, sizeof(*eps));
	bool *drain = calloc(n, sizeof(*drain)), pass = false;
	uint32_t *pairs = calloc(n, sizeof(*pairs)), *failed = calloc(n, sizeof(*failed));
	struct rp_prom_finding *fd = calloc(na + nl, sizeof(*fd));

	for (size_t e = 0; e < n; e++) {
		snprintf(eps[e].node, sizeof(eps[e].node), "node%04zu", e / 8);
		snprintf(eps[e].device, sizeof(eps[e].device), "mlx5_%zu", e % 8);
		eps[e].port = 1;
		eps[e].link_gbps = 400;
		eps[e].mtu = 4096;
		pairs[e] = 2046;
		failed[e] = 20;
		drain[e] = e < na;
	}
	for (size_t k = 0; k < na; k++)
		fd[k] = (struct rp_prom_finding){ .kind = "adapter", .a = &eps[k], .failed = 18 };
	for (size_t k = 0; k < nl; k++)
		fd[na + k] = (struct rp_prom_finding){ .kind = "link", .a = &eps[(k * 7) % n], .b = &eps[(k * 13 + 8) % n], .failed = 2 };
	return rp_prom_write(argv[1], &(struct rp_prom_run){ .command = "matrix", .version = "rdmaprobe test", .timestamp = 1.7e9,
			     .eps = eps, .n_eps = n, .drain = drain, .pass = &pass, .totals = true, .total_pairs = 8380416,
			     .total_failed = 83352, .ep_pairs = pairs, .ep_failed = failed, .pairs_partial = true, .no_pairs = true,
			     .findings = fd, .n_findings = na + nl }, NULL, 0) ? 1 : 0;
}
