/* engine_cli.h: the options loopback and pair share (perftest-like where they mean the same), their
 * validation into a struct rp_engine_cfg, port selection through NCCL's rules, and the reports. */
#ifndef RP_ENGINE_CLI_H
#define RP_ENGINE_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "nccl/nccl_version.h"
#include "discover/node.h"
#include "opts.h"

#define RP_CLI_ENGINE_OPTS 32   /* at most this many shared options */

struct rp_cli_engine {
	/* raw option values */
	uint64_t size, iters, warmup, tx_depth, qps, cq_mod;
	uint64_t retest;              /* --retest N: retests of a failed pair (lib/verdict/retest.h) */
	double duration, timeout, interval;
	int qp_timeout, retry_cnt, gid_index, tclass;
	bool all, latency, no_verify, hugepages;
	bool bidir;                   /* --bidir: both directions of each pair at once (lib/engine/engine.h) */
	bool size_seen, iters_seen, duration_seen, gid_seen, cq_mod_seen, retest_seen;
	const char *mem, *src_mem, *dst_mem, *gpu, *gpu_reg;
	const char *json, *csv;
	const char *nccl_version, *python;   /* --nccl-version X.Y.Z, --python ENV */
	const char *max_errors;       /* --max-errors CLASS=LIMIT,... (lib/health/counters.h) */
	/* derived */
	struct rp_nccl_version_found ver;    /* the NCCL release whose rules select the ports */
	bool gpu_nearest;             /* --gpu nearest: each side's GPU is the one nearest its adapter */
	char nccl_crash[320];         /* rp_cli_nccl_crash(): why NCCL e->ver would crash here; "" when not */
	char unusable[400];           /* rp_cli_nccl_crash(): the adapters -d (or NCCL_IB_HCA) names that are not
	                               * usable (port_not_active), "; "-separated; "" when none */
	struct rp_engine_cfg cfg;
	size_t sizes[32];             /* one pass per size (-a sweeps) */
	size_t n_sizes;
};

/* Defaults into *e. */
void rp_cli_engine_init(struct rp_cli_engine *e);
/* Append the shared options to table (room for RP_CLI_ENGINE_OPTS); returns how many. */
size_t rp_cli_engine_opts(struct rp_cli_engine *e, struct rp_opt *table);
/* Validate and derive e->cfg; prints one specific message and returns an exit status (0 ok, 2 usage,
 * 3 environment: memory backend or GPU missing). */
int rp_cli_engine_finish(struct rp_cli_engine *e, const char *cmd);

#define RP_CLI_MAX_GPUS 16
#define RP_CLI_PATH_UNKNOWN (-2)  /* not an enum rp_path value (LOC is -1) */

/* One selected local port, with its distance to this node's GPUs (CUDA index i). */
struct rp_cli_port {
	char device[RP_NAME_MAX];
	int port;
	int gid_index;
	int gpu_nearest;                          /* CUDA index of the nearest GPU (lowest on a tie), -1 none */
	signed char gpu_path[RP_CLI_MAX_GPUS];    /* enum rp_path from GPU i, or RP_CLI_PATH_UNKNOWN */
};

/* The ports NCCL release nccl_version (e->ver.version) would select under spec (NULL: NCCL_IB_HCA
 * from the environment). Prints the reason and returns 2 (bad spec, nothing matches a given spec)
 * or 3 (no device at all); 0 with *ports_p (malloc'd) and *n_p set. gid_override >= 0 replaces the
 * GID rule. keep (may be NULL) receives the node as discovered, for rp_cli_nccl_crash() to use
 * rather than discover it again; the caller calls rp_node_fini() on it whatever the return. */
int rp_cli_select_ports(const char *cmd, const char *spec, int only_port, int gid_override, uint32_t nccl_version,
			struct rp_cli_port **ports_p, size_t *n_p, struct rp_node *keep);

/* Whether NCCL release e->ver would crash on this node under this process's NCCL variables (the
 * job's NCCL_IB_HCA, not -d, which only picks what rdmaprobe measures): rp_nccl_crash_check(). When
 * it would, e->nccl_crash gets the reason, stderr a warning, and the JSON report a top-level
 * warning "nccl_crash" (rp_cli_write_reports). A node or environment that cannot be read is left
 * to rp_cli_select_ports() to report: false. node: the node as rp_cli_select_ports() kept it, or
 * NULL to discover it here. */
bool rp_cli_nccl_crash(struct rp_cli_engine *e, const char *cmd, const struct rp_node *node);
/* The exit status once e->nccl_crash is known: a crash turns a pass (0) into 1, as 'rdmaprobe nccl'
 * exits 1, and prints a line on stdout after the verdict saying why no adapter is drained for it;
 * any other status is kept (a stop, a report not written, a failed pair). */
int rp_cli_nccl_crash_status(const struct rp_cli_engine *e, int status);
/* The explicitly named adapters that are not usable (a DOWN port, no ACTIVE port): a finding, never
 * dropped in silence: e->unusable gets NCCL's port_not_active reasons, stderr a warning; the final
 * status (rp_cli_nccl_crash_status) prints it and turns a pass into 1; the JSON report gets a
 * top-level warning "port_not_active". spec: -d (NULL: NCCL_IB_HCA). */
void rp_cli_named_unusable(struct rp_cli_engine *e, const char *cmd, const char *spec, const struct rp_node *node);

/* The configuration for one pair from src to dst: e->cfg, with --gpu nearest resolved to the GPU
 * nearest each side's adapter. src or dst may be NULL (pair mode knows only its own side). */
void rp_cli_pair_cfg(const struct rp_cli_engine *e, const struct rp_cli_port *src, const struct rp_cli_port *dst,
		     struct rp_engine_cfg *cfg);
/* Warn, once per (GPU, port), where NCCL would not use GPUDirect RDMA: the GPU that holds a buffer for
 * that port is farther from its adapter than NCCL_NET_GDR_LEVEL. as_src / as_dst: which buffers
 * the ports hold (the writer's, the target's). With --gpu nearest, first says on stderr which GPU
 * each port gets and under which NCCL release's topology (e->ver). Returns how many warnings were given. */
size_t rp_cli_warn_gdr(const struct rp_cli_engine *e, const struct rp_cli_port *ports, size_t n, bool as_src,
		       bool as_dst);
/* Check --json / --csv where this process will write them (rp_report_path_check()): a directory, a
 * device, a FIFO, a socket or a symlink, or a missing or unwritable directory, is refused before
 * anything is measured. 0, or 2 with the reason printed (naming the option and the path). */
int rp_cli_check_outputs(const struct rp_cli_engine *e, const char *cmd);
/* Write --json / --csv if asked; the JSON carries "nccl_version" (e->ver). 0 or 3 (cannot write:
 * printed). */
int rp_cli_write_reports(const struct rp_cli_engine *e, const char *cmd, int argc, char **argv,
			 const struct rp_pair_result *pairs, size_t n);
/* The same, with section (borrowed; NULL none) added to the JSON report under key; with key NULL,
 * every key of the object section is added. */
int rp_cli_write_reports_with(const struct rp_cli_engine *e, const char *cmd, int argc, char **argv,
			      const struct rp_pair_result *pairs, size_t n, const char *key, json_t *section);

/* One line for a result, for stdout. */
void rp_cli_print_result(const struct rp_pair_result *r);

#endif
