/* mx_table.h: the matrix's endpoint table: every rank's ports, exchanged once at start-up (which also
 * agrees on the run's nonce and tells every rank each rank's NCCL release), sorted into (node,
 * device, port) order, one owner per endpoint. Every rank builds the same table from the same
 * exchanged bytes, or all of them fail the same way. The exchange is lib/job/mx_startup.h's: rank 0
 * gathers with a window that restarts at every arrival, then hands every rank the set.
 */
#ifndef RP_MX_TABLE_H
#define RP_MX_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job/mx_comm.h"
#include "job/mx_wire.h"
#include "nccl/nccl_version.h"
#include "base/result.h"
#include "job/mx_schedule.h"

#define MX_MAX_LOCAL 64        /* ports one rank may drive */

/* One endpoint: the description for reports, who drives it, why it has no port. */
struct mx_ep {
	struct rp_endpoint ep;
	int owner;                    /* rank that runs its side of every pair */
	char no_port[200];            /* why the owner's selection has no ACTIVE port; "" when it has one */
};

/* What one rank offers: its ports (or one MX_EP_NO_PORT entry), or why it cannot take part. */
struct mx_offer {
	const struct mx_wire_ep *eps;
	size_t n;
	int err;                      /* 0, or this rank fails the run: -EINVAL a usage error, else the environment */
	const char *why;              /* the reason (NO_PORT or err); "" none */
	uint32_t nccl_version;        /* the release whose rules selected the ports */
	double setup_s;               /* how long this rank took to select them (for rank 0's start-up line) */
	uint32_t sched_digest;        /* what makes this rank's schedule (mx_plan_digest): a rank whose digest
	                               * is not rank 0's fails the table on every rank (a usage error) */
};

struct mx_table {
	struct mx_ep *eps;            /* sorted by (node, device, port) */
	size_t n_eps;
	struct rp_nccl_rank_version *rank_ver;   /* every rank's release, by rank */
	size_t n_rank_ver;
	struct rp_drift drift;        /* rank 0: `drift` warnings across the endpoints (lib/verdict/drift.h) */
	int err;                      /* 0, or the worst rank's err (an environment error beats a usage one) */
	double setup_max_s;           /* the slowest rank's port selection */
	int setup_max_rank;
};

/* The start-up exchange (collective) and the table. window_s: rank 0 gives up after this long
 * without a new rank's ports (ceiling_s overall; 0: MX_STARTUP_CEILING_X windows), naming the ranks
 * that did not report. Rank 0's nonce becomes the run's (mx_comm_set_run on every rank). Returns 0
 * with *t filled (t->err says whether the run can go on; rank 0 logs every rank's problem, a
 * malformed message with its reason), or the exchange's negative errno (a rank died or hangs, or
 * rank 0 gave up: end the job). Free with mx_table_fini. */
int mx_table_gather(struct mx_comm *c, const struct mx_offer *mine, double window_s, double ceiling_s,
		    struct mx_table *t);
void mx_table_fini(struct mx_table *t);

/* One claim of an endpoint by a rank (the exchanged records), for mx_table_build. */
struct mx_claim {
	struct mx_wire_ep w;
	int rank;
	const char *why;              /* MX_EP_NO_PORT: the rank's reason */
};

/* Sort the claims (reordered in place) and give each endpoint one owner: among the ranks that offered
 * it, the one owning the fewest so far (ranks on one node share its adapters: nothing is measured
 * twice). *eps_p (malloc'd), *n_p. 0 or -ENOMEM. */
int mx_table_build(struct mx_claim *cl, size_t n_cl, size_t n_ranks, struct mx_ep **eps_p, size_t *n_p);

/* Hosts that report one node name (two "localhost", one --node given to ranks on two hosts: their
 * host_id differs) are kept apart: each such host's claims are renamed "<name>#r<lowest rank on that
 * host>", so that the reports, the coverage and the node grouping see two nodes. Reorders the claims.
 * say: warn naming every such host's ranks (rank 0). */
void mx_table_split_hosts(struct mx_claim *cl, size_t n_cl, bool say);

/* The schedule's view of the sorted table: node numbers and index within the node (malloc'd). */
struct rp_sched_ep *mx_sched_eps(const struct mx_ep *eps, size_t n, size_t *n_nodes_p);

#endif
