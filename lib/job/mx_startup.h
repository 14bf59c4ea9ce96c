/* mx_startup.h: the matrix's start-up exchange: every rank's bytes (its ports message) to rank 0,
 * then the whole set to every rank, over mx_comm's point-to-point messages; a deadline that follows
 * progress, and a clear end when a rank never reports.
 *
 * - Gather: every rank sends its bytes to rank 0 (tag MX_TAG_STARTUP_IN). Rank 0 waits for them
 *   with a window that starts again at every new rank's arrival (window_s of silence ends the wait),
 *   and with an overall ceiling (ceiling_s from rank 0's start) so that a trickle cannot hold the
 *   job forever. A rank whose message is over max_len is rejected on arrival (consumed and freed,
 *   never kept: its slot stays empty, lens[r] = 0, and the log says why); a second
 *   message from a rank that already arrived, or one from outside the job's envelope, is dropped.
 * - Give-up: rank 0 names the ranks that did not report ("rank 5 did not report within 60 s of the
 *   last arrival (31 of 32 arrived)"), sends every rank that did arrive an abort (so that none waits
 *   out a timer) and returns -ETIMEDOUT; the caller ends the job (mx_comm_abort).
 * - Fan-out: rank 0 sends the set (one message: every rank's length, then the bytes) down the
 *   binomial tree of lib/job/mx_tree.h over rank numbers (every rank is alive at start-up); every rank
 *   forwards what it got before it reads it. Rank 0 sends log2(ranks) messages,
 *   not ranks - 1. A rank waits for the set (or rank 0's abort, which comes from rank 0 directly)
 *   until ceiling_s + window_s after its own start; rank 0 gone for good is the launcher's to end.
 * - Input from a peer is bounded before it is kept: max_len per rank, and the set at most
 *   ranks x (max_len + 8) plus its header; a set that does not add up is -EPROTO on that rank.
 * Messages travel in the envelope of the start-up (run 0, round MX_STARTUP_ROUND): nothing of a
 * later round or another run's can be taken for them.
 */
#ifndef RP_MX_STARTUP_H
#define RP_MX_STARTUP_H

#include <stddef.h>
#include <stdint.h>

#include "job/mx_comm.h"

#define MX_TAG_STARTUP_IN 14       /* a rank's bytes to rank 0 */
#define MX_TAG_STARTUP_OUT 15      /* the set (or rank 0's abort) down the tree */
#define MX_STARTUP_ROUND 0xfffffff0u
#define MX_STARTUP_WINDOW_S 60.0   /* default: silence that ends the wait */
#define MX_STARTUP_CEILING_X 10    /* default ceiling: this many windows */

struct mx_startup_cfg {
	double window_s;              /* > 0 */
	double ceiling_s;             /* > 0; 0: MX_STARTUP_CEILING_X windows */
	size_t max_len;               /* the most bytes a rank may send (> 0) */
};

/* Collective, every rank once: rank r's bytes at all[offs[r]], lens[r] long (the caller frees the
 * three). 0; -ETIMEDOUT (rank 0: a rank did not report; the others: nothing came from rank 0 in
 * time); -ECANCELED (rank 0 gave up and said so); -EPROTO (a set that does not add up); -EINVAL
 * (mine longer than max_len); -ENOMEM or the transport's error. Logged once, where detected. */
int mx_startup_exchange(struct mx_comm *c, const void *mine, size_t len, const struct mx_startup_cfg *cfg,
			char **all_p, size_t **lens_p, size_t **offs_p);

#endif
