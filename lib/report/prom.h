/* prom.h: pair results as Prometheus text exposition (format 0.0.4), for the node exporter's textfile
 * collector.
 *
 * rp_prom_write() builds the whole page, then writes it through lib/atomic_file ("<path>.tmp.<pid>",
 * fsync, rename), so the collector, which reads only "*.prom", never sees half a file. Every sample is
 * a gauge without a timestamp (the collector rejects timestamps). Units are Prometheus base units:
 * bytes per second (10^9 / 8 x the reports' Gb/s), seconds, bytes (`promtool check metrics` accepts
 * the page). Every series carries a "command" label, so loopback's and matrix's files can sit side by
 * side in one collector directory.
 *
 *   rdmaprobe_run_info{command,version} 1
 *   rdmaprobe_run_timestamp_seconds{command}          when the run was measured
 *   rdmaprobe_run_pass{command}                       1 when the run passed: run->pass (the verdict)
 *                                                     when given, else every pair passed; with a
 *                                                     check, only when the check is healthy too
 *   rdmaprobe_run_pairs{command}, rdmaprobe_run_failed_pairs{command} (run->total_* with run->totals)
 *   rdmaprobe_endpoint_*{command,node,device,port}:
 *     pass (1 when every pair the endpoint was in passed: a failure may be the peer's; _drain is the
 *     verdict when one was given), drain, unusable (not drained, but out of NCCL_IB_HCA: a shared
 *     component explains its failures), pairs, failed_pairs (run->ep_pairs/ep_failed when given: the
 *     verdict's counts over every pair, listed or not), link_rate_bytes_per_second, mtu_bytes,
 *     min_bandwidth_bytes_per_second (its slowest measured pair; left out when run->pairs_partial),
 *     warnings{code} (pairs with the warning; only codes some pair carries)
 *   rdmaprobe_finding_failed_directions{command,kind,node,device,port,peer_node,peer_device,peer_port}:
 *     run->findings, one series each (an adapter: peer labels empty; a link: both ends)
 *   rdmaprobe_pair_*{command,src_node,src_device,src_port,dst_node,dst_device,dst_port,msg_size}
 *     (left out with run->no_pairs: a matrix's page is bounded by its endpoints and findings):
 *     pass, status{status} 1, bandwidth_bytes_per_second and min_interval_bandwidth_bytes_per_second
 *     (measured pairs only), latency_seconds{stat=min|median|p99|max} (latency mode only),
 *     warning{code} 1 (set warnings only)
 *   rdmaprobe_check_status{command}                   with a check (rdmaprobe check): 0 healthy, 1
 *                                                     unhealthy, 3 could not check (its exit status)
 *   rdmaprobe_check_problems{command,severity,source,code}  problems found, by kind (lib/verdict/check.h)
 * Label values are escaped (\ " newline) and bytes that are not UTF-8 become '?'.
 */
#ifndef RP_PROM_H
#define RP_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verdict/check.h"
#include "base/result.h"
#include "base/strbuf.h"

struct rp_prom_run {
	const char *command;              /* required: "loopback", "matrix", "check" */
	const char *version;              /* rp_version_string(); NULL leaves out rdmaprobe_run_info */
	double timestamp;                 /* wall clock seconds of the run (time()); 0 = now */
	const struct rp_endpoint *eps;    /* optional: endpoints beyond those the pairs name (none measured) */
	size_t n_eps;
	const bool *drain;                /* optional, one per eps[]: the verdict; NULL leaves out _drain */
	const bool *unusable;             /* optional, one per eps[]: the verdict's unusable (not drained,
	                                   * out of NCCL_IB_HCA); NULL leaves out _unusable */
	const struct rp_check *check;     /* optional: the node check's verdict and problems */
	const bool *pass;                 /* optional: the run's verdict; NULL: every pair passed */
	const uint32_t *ep_pairs, *ep_failed;   /* optional, one per eps[]: the verdict's counts */
	bool pairs_partial;               /* the pairs given are not all (a notable listing) */
	bool totals;                      /* run_pairs and run_failed_pairs are these (the verdict's): */
	size_t total_pairs, total_failed;
	bool no_pairs;                    /* leave out the rdmaprobe_pair_* families */
	const struct rp_prom_finding *findings;   /* optional: the verdict's suspects */
	size_t n_findings;
};

struct rp_prom_finding {
	const char *kind;                 /* "adapter", "link" (lib/verdict/verdict_groups.h) */
	const struct rp_endpoint *a, *b;  /* the suspect: a; a link: a and b (b NULL for an adapter) */
	size_t failed;                    /* its failed directions */
};

/* Append the exposition page to sb (check rp_sb_failed()). Pairs with the same key (src, dst,
 * msg size) after the first are left out with a warning, so the page never repeats a series.
 * 0, or -EINVAL when run->command is missing (logged). */
int rp_prom_format(struct rp_sb *sb, const struct rp_prom_run *run, const struct rp_pair_result *pairs, size_t n);
/* Format and write atomically to path. 0 or a negative errno (logged, naming the file). */
int rp_prom_write(const char *path, const struct rp_prom_run *run, const struct rp_pair_result *pairs, size_t n);

#endif
