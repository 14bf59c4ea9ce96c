/* verdict_int.h: what the verdict's parts share (not a contract for the rest of the project). */
#ifndef RP_VERDICT_INT_H
#define RP_VERDICT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verdict/result_seq.h"
#include "verdict/verdict.h"

/* A peeked pair the bandwidth rules judge: measured ok (or judged below a threshold before), not
 * latency. */
static inline bool rp_pk_bw_judged(const struct rp_result_peek *pk)
{
	return (pk->status == RP_ST_OK || pk->status == RP_ST_BELOW_THRESHOLD) && !pk->lat_measured;
}

/* What the bandwidth rules compare one message size's pairs against (verdict_rates.c): per endpoint
 * the medians of the rates it sends (row) and receives (col), per pair its other direction's rate.
 * Both are built by a count over every pair, then a pass that places the rates; the count can ride
 * on a pass the verdict makes anyway (its reset), so that only the placing is a pass of its own. */
struct rp_rate_count {
	size_t msg_size, n_eps;
	size_t *med;                  /* [e + 1]: pairs e sends judged for bandwidth; [n_eps + 1 + e + 1]: it receives */
	size_t *rev;                  /* [lo + 1]: pairs of msg_size whose lower endpoint is lo (no self pairs) */
};

int rp_rate_count_init(struct rp_rate_count *k, size_t n_eps, size_t msg_size);
/* Pair i (as peeked now) into the counts; call it for every pair of the sequence, in order. */
void rp_rate_count_pair(struct rp_rate_count *k, const uint32_t *pair_eps, size_t i, const struct rp_result_peek *pk);
void rp_rate_count_fini(struct rp_rate_count *k);

/* A pair's other direction's rate, where the reverse-direction rule could fail it (verdict.c: its own
 * rate under RP_VERDICT_REVERSE_RATIO of it, or its own rate not a positive judged one). Only those are
 * kept, in pair order: a few among millions, where a rate per pair was 64 MiB at 1,024 x 8. */
struct rp_rev_note {
	size_t idx;
	double rev;
};

struct rp_rev_notes {
	struct rp_rev_note *v;
	size_t n, cap;
	size_t at;                    /* rp_rev_of's cursor */
};

/* Pair i's other direction's rate as the rule reads it, i not below the last pair asked for: the
 * note's, or -1 (none, or one the rule cannot fail i on). */
static inline double rp_rev_of(struct rp_rev_notes *rn, size_t i)
{
	while (rn->at < rn->n && rn->v[rn->at].idx < i)
		rn->at++;
	return rn->at < rn->n && rn->v[rn->at].idx == i ? rn->v[rn->at].rev : -1;
}

void rp_rev_notes_fini(struct rp_rev_notes *rn);

/* row[e], col[e] (n_eps each) and *rev (the notes above) of the pairs of msg_size. counted:
 * rp_rate_count of every pair as they are now, used when it counted msg_size (else, or NULL, they are
 * counted here). The work is done in parts by endpoint, two at a time: each side's medians, one side
 * after the other, then the notes by the pairs' lower endpoint, each in as many parts as keep a part's
 * scratch within RP_RATES_PART_BYTES (two at least; an endpoint's own pairs are never split, so one
 * endpoint with more pairs than that makes a part as large as its pairs). The two run on two threads
 * where the process may use two CPUs and the sequence is an array or peeks (every rank waits for rank
 * 0's verdict: its idle CPUs are the run's); the outcome is the same either way. Each part reads the
 * pairs' endpoints and peeks only its own pairs, so more parts cost a read of pair_eps each, not of the
 * results. The scratch at any time: two parts, 32 MiB, whatever the number of pairs (at 1,024 x 8,
 * 64 MiB before, in halves and quarters). 0, -EOVERFLOW or -ENOMEM. */
#define RP_RATES_PART_BYTES ((size_t)16 << 20)
/* Whether a verdict's parts may run two at a time on two threads over ps: its reads may run at once
 * (an array, or peeks: they only read) and this process may use two CPUs. */
bool rp_verdict_two_threads(const struct rp_result_seq *ps);
int rp_rates_build(const uint32_t *pair_eps, const struct rp_result_seq *ps, size_t n_eps, size_t msg_size,
		   const struct rp_rate_count *counted, double *row, double *col, struct rp_rev_notes *rev);
/* The same with a part's scratch at most part_bytes (where an endpoint's pairs allow): what
 * rp_rates_build does with RP_RATES_PART_BYTES. */
int rp_rates_build_parts(const uint32_t *pair_eps, const struct rp_result_seq *ps, size_t n_eps, size_t msg_size,
			 const struct rp_rate_count *counted, double *row, double *col, struct rp_rev_notes *rev,
			 size_t part_bytes);

/* A peer pair's class, as the blame reads it (verdict.h, "Blame"). */
enum rp_peer_class { RP_PEER_UNKNOWN = 0, RP_PEER_OK = 1, RP_PEER_FAILED = 2 };

/* The class of one result: ok, a confirmed failure, or no evidence. */
static inline enum rp_peer_class rp_result_class(const struct rp_result_peek *pk)
{
	if (pk->status == RP_ST_OK)
		return RP_PEER_OK;
	return rp_confirm_held(pk->confirm) ? RP_PEER_FAILED : RP_PEER_UNKNOWN;
}

/* The peer pairs of every endpoint, each once, from the judged and classified pairs: for endpoint e,
 * ent[start[e] .. start[e + 1]) hold (peer << 2 | class), one entry per distinct peer, self pairs and
 * the pairs expected to fail (between two complete fabrics) left out. */
struct rp_peer_index {
	size_t n_eps;
	size_t *start;                /* n_eps + 1 */
	uint32_t *ent;
};

struct rp_fabtopo_map;

/* Which pairs are expected to fail: between two complete fabrics (separate rails), unless a topology
 * connects their leaves (both ends listed, on one leaf or leaves sharing a spine). */
struct rp_expect {
	const struct rp_verdict *v;
	const size_t *cov;
	size_t max_cov;
	const struct rp_fabtopo_map *map;   /* NULL: no topology */
	uint8_t *conn;                /* map's leaves x leaves: 1 connected (allocated by rp_expect_init) */
};

int rp_expect_init(struct rp_expect *x, const struct rp_verdict *v, const size_t *cov, size_t max_cov,
		   const struct rp_fabtopo_map *map);
void rp_expect_fini(struct rp_expect *x);
bool rp_expect_pair(const struct rp_expect *x, uint32_t a, uint32_t b);

/* Built in parts by endpoint, two at a time (on two threads where rp_verdict_two_threads() says
 * so): a part's entries come in as the pairs give them, both directions of a pair (twice what the
 * index keeps), into at most RP_PEER_PART_BYTES after what the parts before it kept (one endpoint at
 * least, whatever its pairs), and are reduced to one per peer in place. The peak is what the index
 * keeps plus two parts, not twice what it keeps (at 1,024 x 8 rail: 48 MiB, not 64). Each part reads
 * every pair's endpoints and peeks only its own pairs (so a pair at most twice): parts of 4 MiB,
 * twice as many reads of the endpoints, took 0.1 s more of rank 0's verdict at 1,024 x 8.
 * 0, -EINVAL (2^30 endpoints or more) or -ENOMEM (pi empty). */
#define RP_PEER_PART_BYTES ((size_t)8 << 20)
int rp_peer_index_build(struct rp_peer_index *pi, size_t n_eps, const uint32_t *pair_eps, const struct rp_result_seq *ps,
			const struct rp_expect *x);
/* The same with parts of at most part_bytes (what rp_peer_index_build does with RP_PEER_PART_BYTES). */
int rp_peer_index_build_parts(struct rp_peer_index *pi, size_t n_eps, const uint32_t *pair_eps,
			      const struct rp_result_seq *ps, const struct rp_expect *x, size_t part_bytes);
void rp_peer_index_fini(struct rp_peer_index *pi);

static inline uint32_t rp_peer_of(uint32_t ent)
{
	return ent >> 2;
}

static inline enum rp_peer_class rp_peer_class_of(uint32_t ent)
{
	return (enum rp_peer_class)(ent & 3u);
}

/* log P(X >= k) for X ~ Binomial(n, p): 0 when k <= n p (the tail is then at least about 1/2, which
 * never blames anyone), -INFINITY when p is 0 and k > 0. */
double rp_verdict_log_binom_tail(uint32_t k, uint32_t n, double p);

/* log P(X >= k) for X ~ Hypergeometric(N, K, m) (the overlap of two random subsets of sizes K and m of
 * N): 0 when k <= K m / N, -INFINITY when k cannot happen. */
double rp_verdict_log_hyper_tail(uint32_t k, uint32_t N, uint32_t K, uint32_t m);

/* Rule 4, failing with the same peers (lib/verdict/verdict_shared.c): over the endpoints d[0..n) of one
 * background group, each pair's failed peers (among the peers both were measured with, skip[] left
 * out) tested for an overlap no two independent faults give: the hypergeometric tail under
 * log_alpha with Bonferroni's correction over the n (n - 1) / 2 pairs. link[i] gets the smallest index
 * of i's linked set (i itself when none), lp[i] the smallest log p-value of i's links (0: none).
 * 0 or -ENOMEM. */
int rp_verdict_shared_peers(const struct rp_peer_index *pi, const bool *skip, const uint32_t *d, size_t n,
			    double log_alpha, uint32_t *link, double *lp);

/* The blame's working state (one per call). */
struct rp_blame {
	const struct rp_peer_index *pi;
	struct rp_verdict *v;
	size_t n_eps;
	double log_alpha;
	bool *out;                    /* drained */
	bool *cand;                   /* under suspicion in this round */
	uint32_t *group;              /* per endpoint: its background group (groups_compute), an endpoint number */
	double *p0;                   /* per group: the background rate */
	double *lp;                   /* per endpoint: log p-value of this round */
	uint32_t *ok;                 /* per endpoint: peers it passed with (all of them) */
	uint8_t *self;                /* per endpoint: its self pairs' classes, or'ed (RP_PEER_OK | _FAILED) */
	uint32_t *local;              /* per endpoint: confirmed failures its own side reported as local */
	uint32_t *order;              /* scratch: endpoints sorted by lp */
	uint32_t *together;           /* per group: how many of its endpoints rule 4 spared (0: none) */
	size_t m, j;                  /* endpoints tested; drained by the test so far (Holm) */
};

/* Whether e's own side failed: a self pair that only failed, or a failure its side reported as local
 * (no usable port, set-up, port down). Evidence about the adapter, whatever the fabric around it. */
static inline bool rp_blame_own_failure(const struct rp_blame *B, uint32_t e)
{
	return B->self[e] == RP_PEER_FAILED || B->local[e];
}

/* Rule 4, failing with the same peers, over B (lib/verdict/verdict_shared.c; verdict.h). 0 or -ENOMEM. */
int rp_blame_shared_spare(struct rp_blame *B);

/* Steps 2-4 of the blame (verdict.h): drains (v->eps[].drain, why), peers, background, path faults
 * and the suspects without topology. v->eps[].fabric is set. 0 or -ENOMEM. */
int rp_verdict_blame(const struct rp_verdict_cfg *cfg, const struct rp_endpoint *eps, size_t n_eps,
		     const uint32_t *pair_eps, const struct rp_result_seq *ps, const size_t *cov, size_t max_cov,
		     struct rp_verdict *v);

/* Step 5 (lib/verdict/verdict_localize.c): localize the failed peer pairs to components with cfg->topology.
 * rp_localize_run decides the drains of the endpoints the topology places (an adapter is drained
 * only when its own component is chosen); rp_localize_explains says whether a chosen component
 * lies on a pair's path; rp_localize_suspects writes v->suspects (chosen first, then alternatives,
 * then the unexplained failures as one fabric entry). */
struct rp_localize;
int rp_localize_run(struct rp_localize **L_p, const struct rp_verdict_cfg *cfg, const struct rp_fabtopo_map *map,
		    const struct rp_endpoint *eps, size_t n_eps, const struct rp_peer_index *pi, struct rp_verdict *v);
bool rp_localize_explains(const struct rp_localize *L, uint32_t a, uint32_t b);
int rp_localize_suspects(const struct rp_localize *L, const struct rp_endpoint *eps, struct rp_verdict *v);
void rp_localize_destroy(struct rp_localize *L);

#endif
