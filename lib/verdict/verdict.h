/* verdict.h: from measured pairs to pass/fail, adapters to drain, and the NCCL_IB_HCA each node should use.
 * One rule for every command (loopback, pair, matrix).
 *
 * Thresholds (applied to bandwidth pairs that measured ok; a pair that fails them becomes
 * BELOW_THRESHOLD with the reason spelled out). Every call judges afresh: a BELOW_THRESHOLD pair is
 * measured ok, so it is judged again on its (possibly new) measurement, and calling twice on the
 * same results gives the same verdict. Latency pairs (lat.measured) are not judged on bandwidth.
 *   --min-bw  "0.9" or "90%": a fraction of the pair's link rate (the slower port's rate; skipped when
 *             a rate is unknown). "180G" / "180Gbps": an absolute rate in Gb/s. "0": no threshold.
 *             Soft devices (rp_endpoint.soft: rxe, siw) report a nominal link rate, so a fraction of
 *             it means nothing: on a pair with a soft endpoint only an absolute --min-bw applies, and
 *             a fraction that was not applied sets RP_WARN_NOMINAL_RATE (counted in n_nominal).
 *   --outlier F (default 0.5, 0 disables): a pair slower than F times the larger of its row median
 *             (pairs with the same source) and its column median (same destination), among the pairs
 *             of the same message size, is an outlier: a bad adapter drags its own row down, so its
 *             peers' medians expose it.
 *   --interval-drop F (default 0.1, 0 disables): a pair whose slowest --interval ran below F times
 *             its average (gbps_min < F x gbps) gets RP_WARN_INTERVAL_DROP, a warning that does not
 *             fail it: the link stalled or flapped for a moment at gbps_min_at_s into the run.
 * --bidir pairs (rp_pair_result.reverse): the reverse direction is judged by the same rules on its own
 *   (its rate against its own source's row and destination's column medians), its warnings count
 *   as the pair's; a pair whose reverse failed takes the reverse's status (rp_pair_reverse_fold).
 * Any pair that did not measure ok fails; the run passes only when every pair is ok (a flaky pair,
 * one that passed on its retest, is ok with a warning).
 *
 * Retest (lib/verdict/retest.h): every pair is classified with rp_retest_classify(cfg.retest) after the
 * thresholds: a failure is CONFIRMED (failed every attempt, at least one of them a retest, or
 * cfg.retest is 0), UNCONFIRMED (failed once, not measured again yet) or the pair is FLAKY (failed,
 * then passed). Only CONFIRMED failures count for drains; an UNCONFIRMED failure still fails the run.
 *
 * Blame (lib/verdict/verdict_blame.c), per endpoint (node, device, port), on confirmed failures only. The
 * unit of evidence is a PEER PAIR (two endpoints, whatever directions and sizes were measured): it
 * failed when any of its results is a confirmed failure, it passed when one moved data and none
 * failed; an unconfirmed failure alone is no evidence either way.
 *   1. "Fabrics" are the groups of endpoints that moved data with each other (connected components).
 *      Peer pairs between two complete fabrics (each reaching as many nodes as the widest fabric, and
 *      that more than half of the nodes: separate rails) are expected to fail and are left out of
 *      everything below.
 *   2. An endpoint that failed with every peer it was measured with, when at least one of those
 *      peers passed with someone else ("reaches no peer that the others reach"), is drained.
 *   3. The background: each fabric's rate of failed peer pairs among endpoints not blamed (a
 *      pseudo-count keeps it above 0 on small fabrics). An endpoint is drained when its failed peers
 *      are improbable under that rate: the binomial tail P(X >= failed | peers, rate) under
 *      cfg.alpha with Holm's correction over every endpoint tested, counting only failures with
 *      peers that are not themselves under suspicion (two endpoints that fail only with each other,
 *      or two halves of a fabric that fail with each other, explain nothing: neither is drained).
 *      Repeated until nothing changes: a drained endpoint's pairs leave the background.
 *   4. Blamed together: when more than RP_VERDICT_TOGETHER endpoints of one fabric are drained at once
 *      (by 2-3, or by the localization of 6 when the topology has no routes), none of them is drained
 *      for it (a failure its own side reported, or a self pair that only failed, still drains): that many adapter faults at once are far less likely
 *      than one shared component (a dead leaf takes every adapter under it out, a dead spine under
 *      D-mod-K every destination routed through it), and draining them would take a rail of healthy
 *      adapters out of service and leave the fault in place. They are UNUSABLE instead (below), and one
 *      RP_COMP_GROUP suspect names them; --topology localizes the component.
 *      Those that passed with no peer (2's: dead, or slow with every peer) are counted apart from
 *      those that passed with some (an island: a leaf's uplinks, a spine's destinations): more
 *      than RP_VERDICT_TOGETHER of them are spared only when also improbable as independent faults
 *      at the rate such endpoints have in the other groups (the binomial tail under cfg.alpha,
 *      Bonferroni over the groups tested; no other group: the count alone). Dead adapters spread
 *      over every rail alike are drained, each; a leaf's worth on one rail is spared.
 *      Without a topology, also adapters FAILING WITH THE SAME PEERS: two adapters of one fabric that 2-3
 *      blame, whose failed peers (among the peers both were measured with) overlap more than two
 *      independent faults would make them (the hypergeometric tail under cfg.alpha, Bonferroni over
 *      the pairs tested), are linked; every adapter of a linked set is unusable, not drained, under
 *      one group suspect. The destinations routed over one bad leaf-spine link fail with that leaf's
 *      hosts, the same ones each; two faulty adapters fail with peers of their own.
 *   5. Failed peer pairs that no drained or unusable endpoint explains are PATH FAULTS (v->paths):
 *      reported (RP_VERDICT_PATH_TEXT), never a drain. n_ambiguous counts their confirmed failed results.
 *   6. With cfg.topology (lib/discover/fabtopo.h), the failures are also localized to components (adapter,
 *      cable, leaf, leaf-spine link, spine): v->suspects, ranked; only adapters are ever drained.
 *      Without it the suspects are the drained adapters, one RP_COMP_GROUP entry per fabric whose
 *      blamed endpoints were too many (4), and, when path faults exist, one RP_COMP_FABRIC entry.
 *   7. UNUSABLE: an endpoint that 2-3 blame (its failures are no background) but that is not drained,
 *      because a component around it explains them (4, or the topology's suspects in 6). It is not at
 *      fault, and it cannot be used either: a job whose NCCL_IB_HCA names it would hang on the peers
 *      it cannot reach. It is left out of its node's NCCL_IB_HCA, with why it is left out.
 *   8. The node's recommended NCCL_IB_HCA is "=dev:port,dev:port,..." of its endpoints neither drained
 *      nor unusable (exact names, explicit ports), or none. A node is to drain as a whole (Slurm) only
 *      when every adapter of it is drained (n_drain == n_eps), never for unusable ones.
 */
#ifndef RP_VERDICT_H
#define RP_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/result.h"

struct rp_drift;
struct rp_fabtopo;
struct rp_matrix_conc;

struct rp_verdict_cfg {
	bool min_bw_absolute;         /* min_bw is Gb/s (else a fraction of link rate) */
	double min_bw;                /* 0 = none */
	double outlier;               /* fraction of the row/column median; 0 = none */
	double interval_drop;         /* warn when gbps_min < interval_drop x gbps; 0 = none */
	unsigned retest;              /* --retest: how often a failure is measured again (0: one sample decides) */
	double alpha;                 /* the chance of a false drain per run the blame test allows (family-wise) */
	const struct rp_fabtopo *topology;   /* --topology (lib/discover/fabtopo.h); NULL: none */
};

#define RP_VERDICT_MIN_BW_DEFAULT 0.9
#define RP_VERDICT_OUTLIER_DEFAULT 0.5
/* A direction under this fraction of the other direction of the same link (both measured at one
 * message size: the pair d -> s beside s -> d, or a --bidir pair's reverse) is below_threshold:
 * both directions cross the same two adapters, cable and switch ports, so a healthy link is
 * symmetric to within the 2-3x a soft device's scheduling gives (an order of magnitude apart is a
 * fault: loss recovered by timeouts, a stalled queue). It needs no link rate, so it judges soft
 * devices without --min-bw, and no more pairs than the two. Applied with the other relative rule
 * (--outlier > 0; --outlier 0 turns both off). */
#define RP_VERDICT_REVERSE_RATIO 0.1
#define RP_VERDICT_INTERVAL_DROP_DEFAULT 0.1
#define RP_VERDICT_ALPHA_DEFAULT 1e-5
#define RP_VERDICT_PATH_TEXT "suspect the switches or routing on their paths"
/* Blamed together (rule 4): more endpoints than this of one fabric blamed at once are not drained
 * for it. Eight: more than a node's adapters (a node's adapters are on separate rails, one per
 * fabric, so a dead node is one per fabric), fewer than a leaf's ports (16-32 on one rail). */
#define RP_VERDICT_TOGETHER 8

void rp_verdict_cfg_default(struct rp_verdict_cfg *cfg);
/* Parse a --min-bw value (see above) into cfg. 0 or -EINVAL / -ERANGE; does not log. */
int rp_verdict_min_bw_parse(const char *s, struct rp_verdict_cfg *cfg);

struct rp_verdict_ep {
	uint32_t pairs, failed;       /* directed pairs involving it, and how many failed */
	uint32_t confirmed;           /* how many of those failures are confirmed (the only ones that drain) */
	bool measured;                /* took part in at least one pair */
	bool worked;                  /* moved data with at least one peer */
	bool drain;
	bool unusable;                /* not drained but left out of NCCL_IB_HCA (rule 7) */
	char why[192];                /* why it is drained or unusable, "" otherwise */
	uint32_t ambiguous;           /* its confirmed failed results that no drain explains (path faults) */
	uint32_t peers, peers_failed; /* peer pairs (other endpoints) measured, and how many failed (confirmed) */
	uint32_t fabric;              /* component id (the smallest endpoint number in it) */
};

/* A path fault: a failed peer pair that no drained endpoint explains. */
struct rp_verdict_path {
	uint32_t a, b;                /* endpoint numbers, a <= b */
	uint32_t failed;              /* its confirmed failed results (directions, sizes) */
};

enum rp_component {
	RP_COMP_ADAPTER = 0,       /* the adapter itself (drained) */
	RP_COMP_CABLE,             /* the adapter's cable / leaf port (topology known) */
	RP_COMP_LEAF,              /* a leaf switch */
	RP_COMP_UPLINK,            /* a leaf-spine link */
	RP_COMP_SPINE,             /* a spine switch */
	RP_COMP_FABRIC,            /* no topology: the path faults as a whole (RP_VERDICT_PATH_TEXT) */
	RP_COMP_GROUP,             /* no topology: endpoints of one fabric blamed together (rule 4) */
};

/* A component that explains failed peer pairs, most likely first in v->suspects. */
struct rp_verdict_suspect {
	enum rp_component kind;
	char name[128];               /* "node0003/mlx5_1:1", "leaf1-3", "leaf1-3 - spine5", "switches or routing" */
	uint32_t ep;                  /* ADAPTER, CABLE: the endpoint; UINT32_MAX otherwise */
	uint32_t failed, measured;    /* peer pairs through it: failed (confirmed), measured */
	double confidence;            /* 0..1: how sure the blame is */
	bool drain;                   /* ADAPTER/CABLE: the endpoint is drained for it */
	char why[200];
};

const char *rp_component_str(enum rp_component k);   /* "adapter", "cable", "leaf", ... */

struct rp_verdict_node {
	size_t first_ep, n_eps;       /* its endpoints: eps[first_ep .. first_ep + n_eps) */
	size_t n_drain;
	size_t n_unusable;            /* its endpoints left out of NCCL_IB_HCA without a drain (rule 7) */
	char *recommended;            /* "=rxe0:1,rxe1:1"; NULL when no adapter is left */
};

struct rp_verdict {
	size_t n_pairs, n_ok, n_failed, n_below;
	size_t n_confirmed, n_unconfirmed;   /* failed pairs by how they held up on retest */
	size_t n_flaky;               /* ok pairs that failed an earlier attempt */
	size_t n_nominal;             /* pairs where a fractional --min-bw was not applied (soft device) */
	size_t n_interval_drop;       /* pairs with RP_WARN_INTERVAL_DROP */
	size_t n_lossy;               /* pairs with RP_WARN_LOSSY (port counters: retransmissions) */
	size_t n_mtu_mismatch;        /* pairs with RP_WARN_MTU_MISMATCH */
	size_t n_ambiguous;           /* confirmed failed results blamed on neither end (path faults) */
	size_t n_unusable;            /* endpoints unusable without a drain (rule 7) */
	double background;            /* estimated background rate of failed peer pairs (widest fabric) */
	struct rp_verdict_path *paths;   /* path faults, by (a, b) */
	size_t n_paths;
	struct rp_verdict_suspect *suspects;   /* ranked, most likely first */
	size_t n_suspects;
	bool localized;               /* the suspects come from a topology (cfg.topology) */
	size_t topo_unknown;          /* endpoints the topology does not list (judged without it) */
	bool pass;
	struct rp_verdict_ep *eps;    /* n_eps entries, same order as the endpoints given */
	size_t n_eps;
	struct rp_verdict_node *nodes;
	size_t n_nodes;
};

/* Apply cfg to res[0..n) (statuses of ok pairs may become BELOW_THRESHOLD, BELOW_THRESHOLD ones are
 * judged again, warnings and confirm are set) and fill *v (caller
 * storage). eps[0..n_eps) are the endpoints, grouped by node (equal node names contiguous);
 * pair_eps[2*i] and pair_eps[2*i+1] are the src and dst endpoint numbers of res[i].
 * 0, -EINVAL (an endpoint number out of range; logged) or -ENOMEM. Call rp_verdict_fini() always. */
int rp_verdict_apply(const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps, size_t n_eps,
		     const uint32_t *pair_eps, struct rp_pair_result *res, size_t n, struct rp_verdict *v);
/* The same over pairs that need not be one array (lib/verdict/result_seq.h): every pair the verdict changes is
 * stored back with rp_result_seq_put (a failed put is the call's -ENOMEM). rp_verdict_apply is this over
 * res[0..n). */
struct rp_result_seq;
int rp_verdict_judge(const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps, size_t n_eps,
		     const uint32_t *pair_eps, const struct rp_result_seq *ps, struct rp_verdict *v);
void rp_verdict_fini(struct rp_verdict *v);

/* Everything the report writers (HTML, JUnit, the "nodes" JSON, text) read: the matrix so far. */
struct rp_matrix_view {
	const char *title;            /* the command line, for a person */
	const char *version;          /* rp_version_string() */
	const char *pattern;          /* "full", "sample:4" */
	const struct rp_endpoint *eps;
	size_t n_eps;
	const uint32_t *pair_eps;     /* 2 per result: src, dst endpoint numbers */
	const struct rp_pair_result *res;   /* the n results as one array; NULL when only pairs has them */
	const struct rp_result_seq *pairs; /* the same, one at a time (lib/verdict/result_seq.h); NULL: res. JUnit reads
	                               * rp_matrix_view_pair(); the HTML page reads res */
	size_t n;
	const struct rp_verdict *verdict;  /* NULL when none (yet) */
	size_t rounds_done, n_rounds;
	double elapsed_s;
	const struct rp_drift *drift; /* `drift` warnings across the endpoints (lib/verdict/drift.h); NULL none */
	const struct rp_matrix_conc *conc;   /* matrix --concurrent-rails; NULL none */
	size_t n_unlisted;            /* plain passes measured but not among the n (lib/report/report_list.h): the
	                               * writers count them; 0 when every pair is listed */
	const char *unlisted_in;      /* where each of them is (the --jsonl file); NULL nowhere */
	const struct rp_result_seq *every; /* every pair, listed or not (conc's solo indexes it); NULL: the n above */
	const uint32_t *every_pair_eps;   /* 2 per pair of every: its ends (the HTML counts the plain passes
	                                   * it does not list); NULL: not given */
	const uint32_t *leaf;         /* --topology: per endpoint its leaf (UINT32_MAX: not listed); NULL none.
	                               * The HTML orders the nodes by leaf, so a bad switch shows as a block */
	char *const *leaf_names;      /* the leaves' names, indexed by leaf[] */
};

/* Pair i (< mv->n) of a view: from mv->pairs when set, else mv->res; built in tmp when it must be. */
const struct rp_pair_result *rp_matrix_view_pair(const struct rp_matrix_view *mv, size_t i, struct rp_pair_result *tmp);
/* Pair i (< rp_matrix_view_every_n) of every pair, listed or not: mv->every when set, else as above. */
const struct rp_pair_result *rp_matrix_view_every(const struct rp_matrix_view *mv, size_t i, struct rp_pair_result *tmp);
size_t rp_matrix_view_every_n(const struct rp_matrix_view *mv);

/* matrix --concurrent-rails (lib/matrix/mx_conc.h) as the reports see it: each pair measured with every
 * rail busy, judged (concurrent_drop set by rp_concurrent_compare), beside its solo result. */
struct rp_matrix_conc {
	const struct rp_pair_result *res;
	const int64_t *solo;          /* per pair: its solo result in the view's res, -1 none */
	const double *ratio;          /* per pair: its rate over the solo one, 0 nothing to compare */
	const uint32_t *round;        /* per pair: the schedule round, from 0 */
	size_t n;
	double max_drop;              /* concurrent_drop below (1 - max_drop) x solo */
};

/* One line on warning w of r, for a person: what was seen and what it means. Returns buf. */
const char *rp_verdict_warning_text(const struct rp_pair_result *r, enum rp_pair_warning w, char *buf, size_t len);

/* "dev:port" of an endpoint into buf (for the "drain" lists). */
const char *rp_verdict_ep_name(const struct rp_endpoint *ep, char *buf, size_t len);

#endif
