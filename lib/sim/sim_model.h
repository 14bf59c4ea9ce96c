/* sim_model.h: a fabric model for the simulated transport (matrix --transport sim), and its time model.
 *
 * The file is line-based text, one setting or override a line; '#' starts a comment, blank lines are
 * ignored, words are separated by spaces or tabs. Every value goes through the project's checked
 * parsers (durations: 25ms, 2us, 1.5s; rates in Gb/s: 390 or 390G). Settings (each at most once;
 * nodes and adapters are required and come before the first override, as does every naming setting):
 *
 *   nodes N                 nodes (1..65536)
 *   adapters K              adapters (endpoints, port 1) per node (1..64); N x K at most 1,048,576
 *   node-prefix P           node names are P followed by the node number (default "node")
 *   node-digits D           the number zero-padded to D digits (0..9; default: as many as N-1 has)
 *   device-prefix P         device names are P followed by the adapter number (default "mlx5_")
 *   rate G                  every port's link rate in Gb/s, what the verdict compares to (default 400)
 *   bandwidth G             what a healthy pair achieves in Gb/s, at most the rate (default 0.97 x rate)
 *   latency T               one-way latency (default 2us)
 *   setup T                 one direction's set-up: QPs, exchange, connect, teardown (default 25ms)
 *   round-overhead T        every round's protocol cost beyond its slowest pair (default 5ms)
 *   random-dead P SEED      every unordered pair is dead with probability P (0 <= P <= 1), decided by
 *                           a hash of (SEED, pair): the same file gives the same dead pairs
 *
 * Overrides, by endpoint name NODE/DEVICE (e.g. node0003/mlx5_1), for both directions of a link:
 *
 *   dead A B                A and B cannot reach each other
 *   lossy A B P             a fraction P (0 < P < 1) of packets is lost: goodput bandwidth x (1 - P)
 *   slow A B G              the pair runs at G Gb/s (0 < G, at most the rate)
 *   dead-endpoint A         every link of A is dead (an adapter behind a dead cable)
 *   slow-endpoint A G       every link of A runs at G Gb/s (0 < G, at most the rate), the slower end's
 *                           where both are; a link's override, a dead end and random-dead come first
 *
 * Switches (lib/sim/sim_fabric.h): "fabric LEAF_PORTS SPINES dmodk|ecmp" makes the fabric a rail-optimized
 * fat tree, "fault adapter|cable|leaf|uplink|spine NAME dead|lossy:P|flaky:P" breaks a component of it.
 *
 * A link has at most one override. Errors name the line: "line 7: lossy: loss 1.5 is not in (0, 1)".
 *
 * The time model of one direction (what the engine would take, rp_sim_dir):
 *   healthy:  setup + latency + bytes / bandwidth (bytes = msg_size x (warm-up + iters), or the
 *             warm-up plus duration_s of traffic), verified; latency mode: setup + 2 x latency x iters
 *   dead:     the engine's give-up time from its configuration: without --cm the writes are retried
 *             retry_cnt + 1 times 4.096 us x 2^qp_timeout each (retry_exceeded), or the run's
 *             no-progress window timeout_s when that is shorter (timed_out); the engine then runs its
 *             MTU probe (one one-write sequence of 64 bytes, set-up + the same give-up capped at the
 *             probe's 2 s deadline), which does not arrive, so the MTU-size write is never tried and
 *             the status stays. With --cm: the connection
 *             never completes, timed_out after timeout_s (set-up time-outs are never probed).
 * Both sides' port counters are measured and judged ok, listing the packet counters a real side
 * lists (port_xmit_packets, port_rcv_packets: data packets of the direction's MTU one way, an ACK
 * per 16 the other; a dead link's sender its retries), so that rank 0 keeps, packs and reports
 * what it would keep of a real run's results, not smaller ones.
 */
#ifndef RP_SIM_MODEL_H
#define RP_SIM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "base/result.h"

struct rp_sim_fabric;

#define RP_SIM_MAX_NODES 65536
#define RP_SIM_MAX_ADAPTERS 64
#define RP_SIM_MAX_EPS (1u << 20)
#define RP_SIM_PREFIX_MAX 32

enum rp_sim_link { RP_SIM_LINK_OK = 0, RP_SIM_LINK_DEAD, RP_SIM_LINK_LOSSY, RP_SIM_LINK_SLOW };

/* One override: the link between endpoints a < b. */
struct rp_sim_override {
	uint32_t a, b;
	enum rp_sim_link kind;
	double value;                 /* lossy: the loss fraction; slow: Gb/s */
	unsigned line;                /* where the file gave it */
};

struct rp_sim_model {
	uint32_t nodes, adapters;
	char node_prefix[RP_SIM_PREFIX_MAX], device_prefix[RP_SIM_PREFIX_MAX];
	int node_digits;
	double rate_gbps, bw_gbps, latency_s, setup_s, round_overhead_s;
	double random_dead;           /* probability; 0 none */
	uint64_t random_seed;
	struct rp_sim_override *ovr;  /* sorted by (a, b) after parsing */
	size_t n_ovr, cap_ovr;
	bool *dead_ep;                /* nodes x adapters: dead-endpoint */
	double *slow_ep;              /* nodes x adapters: slow-endpoint's Gb/s (0: not slow) */
	unsigned *slow_ep_line;       /* where each slow-endpoint was given */
	struct rp_sim_fabric *fabric; /* "fabric" (lib/sim/sim_fabric.h); NULL: a flat fabric */
};

/* Where a file went wrong: its line (0: the file as a whole) and what. */
struct rp_sim_error {
	unsigned line;
	char msg[256];
};

/* Parse the model in text[0..len) (not NUL-terminated necessarily). 0 with *m filled (free with
 * rp_sim_model_fini), -EINVAL with *err set (nothing allocated), -ENOMEM. Prints and logs nothing. */
int rp_sim_model_parse(const char *text, size_t len, struct rp_sim_model *m, struct rp_sim_error *err);
/* Read and parse a file: as rp_sim_model_parse, or a negative errno from reading it (err says). */
int rp_sim_model_load(const char *path, struct rp_sim_model *m, struct rp_sim_error *err);
void rp_sim_model_fini(struct rp_sim_model *m);

static inline uint32_t rp_sim_n_eps(const struct rp_sim_model *m)
{
	return m->nodes * m->adapters;
}
/* Endpoint e's node and device names into the buffers. */
void rp_sim_ep_names(const struct rp_sim_model *m, uint32_t e, char *node, size_t node_len, char *dev,
		     size_t dev_len);
/* The endpoint named node/dev: 0 with *e_p, or -ENOENT. */
int rp_sim_ep_find(const struct rp_sim_model *m, const char *node, const char *dev, uint32_t *e_p);
/* The link between endpoints a and b (either order): its kind and value (lossy, slow). */
enum rp_sim_link rp_sim_link_of(const struct rp_sim_model *m, uint32_t a, uint32_t b, double *value_p);

/* One direction src -> dst under cfg, as the engine would have ended it: *res filled (status, rates,
 * bytes, verified, elapsed_s, one attempt), and its duration in seconds returned. The endpoints'
 * descriptions in res are src_ep and dst_ep. */
double rp_sim_dir(const struct rp_sim_model *m, const struct rp_engine_cfg *cfg, uint32_t src, uint32_t dst,
		  const struct rp_endpoint *src_ep, const struct rp_endpoint *dst_ep, struct rp_pair_result *res);
/* How long the engine under cfg takes to give up on an unreachable peer (the dead time above). */
double rp_sim_dead_time(const struct rp_sim_model *m, const struct rp_engine_cfg *cfg, enum rp_status *status_p);

#endif
