/* engine_concurrent.h: a set of disjoint pairs of this node's ports measured at the same time.
 *
 * What a training step does to a node (every adapter busy at once) is not what a one-pair-at-a-time
 * loopback measures: PCIe switches, NUMA links and the host's memory are shared. A pair set runs its
 * pairs together, one thread per pair over rp_engine_loopback_run(), so each pair keeps its own
 * deadlines (the engine's per-phase and no-progress windows) and a slow or dead pair never holds up
 * the others past them. A stop (lib/base/stop.h) ends every pair's waits at once (RP_ST_INTERRUPTED).
 * The pair threads never take SIGINT/SIGTERM/SIGALRM: the caller's thread does, and the threads see
 * the flag.
 *
 * Disjoint: no port is in two pairs of one set (a self pair uses one port), so a pair set never puts
 * one port into two measurements at once.
 *
 * rp_concurrent_round() gives the node's disjoint pairs as rounds (the circle method): over
 * rp_concurrent_rounds(n) rounds every unordered pair of n ports is in exactly one round, and in each
 * round every port but at most one (n odd) is busy. The pair (a, b) of a round is written a -> b
 * with a < b.
 *
 * Warning code set here: concurrent_drop (RP_WARN_CONCURRENT_DROP): a pair that passed both alone and
 * within its set ran below (1 - max_drop) x its solo bandwidth while the others were busy.
 */
#ifndef RP_ENGINE_CONCURRENT_H
#define RP_ENGINE_CONCURRENT_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "base/result.h"

#define RP_CONCURRENT_DROP_DEFAULT 0.25   /* concurrent_drop: below 75% of the solo bandwidth */

struct rp_concurrent_job {
	struct rp_engine_cfg cfg;       /* this pair's own settings and deadlines */
	struct rp_engine_port src, dst; /* src == dst (same device and port): a self pair */
	unsigned pass;
};

/* 0 when no port is in two jobs; -EINVAL with the port named in why (not logged). */
int rp_concurrent_check(const struct rp_concurrent_job *jobs, size_t n, char *why, size_t why_len);

/* Run every job at once; res[i] is job i's result (writer's view, attempts recorded). Returns 0 (the
 * results say how each pair ended), -EINVAL when the jobs are not disjoint (logged; nothing run).
 * A job whose thread cannot be created runs in the caller's thread once the others have started. */
int rp_concurrent_run(const struct rp_concurrent_job *jobs, size_t n, struct rp_pair_result *res);

/* Rounds of the node's disjoint pairs over n ports: n - 1 for n even, n for n odd, 0 for n < 2. */
size_t rp_concurrent_rounds(size_t n);
/* Round r's pairs as port indexes, 2 per pair (a < b), into pairs (room for 2 x (n / 2)); returns
 * how many pairs (n / 2), 0 when r is out of range. */
size_t rp_concurrent_round(size_t n, size_t r, uint32_t *pairs);

/* Compare conc (the pair within its set) with solo (the same ordered pair alone): when both passed
 * with a measured bandwidth, returns conc->gbps / solo->gbps and sets RP_WARN_CONCURRENT_DROP on conc
 * when that ratio is below 1 - max_drop (cleared otherwise); returns 0 (and clears the bit) when
 * either has no bandwidth to compare. */
double rp_concurrent_compare(const struct rp_pair_result *solo, struct rp_pair_result *conc, double max_drop);

#endif
