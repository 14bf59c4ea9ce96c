/* verdict.h: from measured pairs to pass/fail, adapters to drain, and the NCCL_IB_HCA each node should use.
 *
 * Thresholds (applied to pairs that measured ok; a pair that fails them becomes BELOW_THRESHOLD with
 * the reason spelled out):
 *   --min-bw  "0.9" or "90%": a fraction of the pair's link rate (the slower port's rate; skipped when
 *             a rate is unknown). "180G" / "180Gbps": an absolute rate in Gb/s. "0": no threshold.
 *   --outlier F (default 0.5, 0 disables): a pair slower than F times the larger of its row median
 *             (pairs with the same source) and its column median (same destination) is an outlier:
 *             a bad adapter drags its own row down, so its peers' medians expose it.
 * Any pair that did not measure ok fails; the run passes only when every pair is ok.
 *
 * Drain, per endpoint (node, device, port):
 *   1. "Fabrics" are the groups of endpoints that moved data with each other (connected components).
 *      An endpoint whose pairs all failed moved data with nobody: drain it.
 *   2. Failed pairs between two complete fabrics (each reaching as many nodes as the widest fabric:
 *      separate rails) are expected and blame nobody. Every other failed pair blames one of its
 *      endpoints: the one with more such failures (a greedy vertex cover), ties to the later endpoint.
 *   3. What is left passed against every measured peer on its fabric: the node's recommended
 *      NCCL_IB_HCA is "=dev:port,dev:port,..." of those (exact names, explicit ports), or none.
 */
#ifndef RP_VERDICT_H
#define RP_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "result.h"

struct rp_verdict_cfg {
	bool min_bw_absolute;         /* min_bw is Gb/s (else a fraction of link rate) */
	double min_bw;                /* 0 = none */
	double outlier;               /* fraction of the row/column median; 0 = none */
};

#define RP_VERDICT_MIN_BW_DEFAULT 0.9
#define RP_VERDICT_OUTLIER_DEFAULT 0.5

void rp_verdict_cfg_default(struct rp_verdict_cfg *cfg);
/* Parse a --min-bw value (see above) into cfg. 0 or -EINVAL / -ERANGE; does not log. */
int rp_verdict_min_bw_parse(const char *s, struct rp_verdict_cfg *cfg);

struct rp_verdict_ep {
	uint32_t pairs, failed;       /* directed pairs involving it, and how many failed */
	bool measured;                /* took part in at least one pair */
	bool worked;                  /* moved data with at least one peer */
	bool drain;
	char why[160];                /* why it is drained, "" otherwise */
	uint32_t fabric;              /* component id (the smallest endpoint number in it) */
};

struct rp_verdict_node {
	size_t first_ep, n_eps;       /* its endpoints: eps[first_ep .. first_ep + n_eps) */
	size_t n_drain;
	char *recommended;            /* "=rxe0:1,rxe1:1"; NULL when no adapter is left */
};

struct rp_verdict {
	size_t n_pairs, n_ok, n_failed, n_below;
	bool pass;
	struct rp_verdict_ep *eps;    /* n_eps entries, same order as the endpoints given */
	size_t n_eps;
	struct rp_verdict_node *nodes;
	size_t n_nodes;
};

/* Apply cfg to res[0..n) (statuses of ok pairs may become BELOW_THRESHOLD) and fill *v (caller
 * storage). eps[0..n_eps) are the endpoints, grouped by node (equal node names contiguous);
 * pair_eps[2*i] and pair_eps[2*i+1] are the src and dst endpoint numbers of res[i].
 * 0, -EINVAL (an endpoint number out of range; logged) or -ENOMEM. Call rp_verdict_fini() always. */
int rp_verdict_apply(const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps, size_t n_eps,
		     const uint32_t *pair_eps, struct rp_pair_result *res, size_t n, struct rp_verdict *v);
void rp_verdict_fini(struct rp_verdict *v);

/* Everything the report writers (HTML, JUnit, the "nodes" JSON, text) read: the matrix so far. */
struct rp_matrix_view {
	const char *title;            /* the command line, for a person */
	const char *version;          /* rp_version_string() */
	const char *pattern;          /* "full", "sample:4" */
	const struct rp_endpoint *eps;
	size_t n_eps;
	const uint32_t *pair_eps;     /* 2 per result: src, dst endpoint numbers */
	const struct rp_pair_result *res;
	size_t n;
	const struct rp_verdict *verdict;  /* NULL when none (yet) */
	size_t rounds_done, n_rounds;
	double elapsed_s;
};

/* "dev:port" of an endpoint into buf (for the "drain" lists). */
const char *rp_verdict_ep_name(const struct rp_endpoint *ep, char *buf, size_t len);

#endif
