/* mx_comm.h: how the matrix talks to the other ranks of its job: a small communicator interface.
 *
 * The matrix's code in lib/ (mx_table, mx_round, mx_run) reaches other ranks only through struct
 * mx_comm. A transport implements four raw operations (struct mx_comm_ops): lib/job/oob_mpi.c over MPI,
 * tests/mx_tcomm.c in one process (ranks as threads, with faults). Everything above the raw
 * operations is here, once for every transport:
 *
 * - Every message carries an envelope: the run's nonce (agreed at start-up), the round, the pair (its
 *   number in the round x 2 + direction; 0 on control messages) and, on a pair's side channel, a
 *   sequence number. mx_comm_recv() takes the next message of its tag (a matched take: no other
 *   thread can take it in between) and keeps it only when the envelope names this run and the
 *   receiver's round and pair; a side channel also drops a message whose sequence number it has seen
 *   (a duplicate). Dropped messages are freed, counted (mx_comm_dropped) and logged at debug level;
 *   they are never taken for the answer a later round or pair waits for (tags wrap).
 * - Every wait is against an absolute deadline on rp_now()'s clock.
 * - Ownership: a sent message's bytes belong to the transport from the call on, whatever it returns;
 *   a received message is the caller's (free()) only when the call returned 0. On every error path
 *   nothing stays allocated but what the transport must keep while its peer may still touch it.
 */
#ifndef RP_MX_COMM_H
#define RP_MX_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oob/oob.h"

enum mx_chan {
	MX_CHAN_CTL = 0,              /* the matrix's control messages (reports, go, plans) */
	MX_CHAN_PAIR = 1,             /* the engine's side channels, one per pair and direction */
};

struct mx_comm;

/* The raw operations of a transport. */
struct mx_comm_ops {
	/* Send msg[0..len) as one message to rank dst on (chan, tag). Takes msg (malloc'd) in every case:
	 * frees it once the transport is done with it. 0, -ETIMEDOUT (not delivered by the deadline), or
	 * another negative errno. */
	int (*send)(struct mx_comm *c, enum mx_chan chan, int dst, int tag, void *msg, size_t len, double deadline);
	/* Take the next message of (chan, tag) from src (any rank when src < 0), waiting until the
	 * deadline: 0 with *msg_p (malloc'd, the caller frees), *len_p and *src_p; -ETIMEDOUT with nothing
	 * consumed; -EMSGSIZE when the message is longer than max_len (0: no bound): it is consumed and
	 * dropped, never handed over (MPI takes it whole into a buffer freed at once: Open MPI cannot
	 * truncate a large message safely), *len_p and *src_p say how long and whose; another
	 * negative errno with nothing allocated (a message matched and then lost is gone: the transport
	 * freed it). */
	int (*take)(struct mx_comm *c, enum mx_chan chan, int src, int tag, size_t max_len, void **msg_p, size_t *len_p,
		    int *src_p, double deadline);
	/* Collective (the matrix's start-up no longer uses it: lib/job/mx_startup.h): every rank's bytes,
	 * rank r's at all[offs[r]], lens[r] long (the caller frees the three). 0, -ETIMEDOUT (a rank died or hangs: the buffers the
	 * transport may still write are kept, and the job is to end) or another negative errno. */
	int (*allgather)(struct mx_comm *c, const void *mine, size_t len, double deadline, char **all_p,
			 size_t **lens_p, size_t **offs_p);
	/* Ask the launcher to end the whole job (may return; the caller then ends this rank). */
	void (*abort)(struct mx_comm *c, int code);
};

struct mx_comm {
	const struct mx_comm_ops *ops;
	void *priv;                   /* the transport's */
	int rank, size;
	int local_rank, local_size;   /* among the ranks of this node */
	int tag_ub;                   /* the largest tag (at least 32767) */
	uint64_t run;                 /* the run's nonce (mx_comm_set_run); 0 until agreed */
	unsigned long dropped;        /* __atomic: messages dropped as stale, foreign or duplicate */
};

/* The envelope's size: a message's payload starts at this offset of what the transport carries. */
#define MX_COMM_ENVELOPE 32

/* Where a message belongs. */
struct mx_addr {
	uint32_t round;
	uint32_t pair;                /* pair number in the round x 2 + direction; 0 on control messages */
};

/* A fresh run nonce (the kernel's random source, else time and pid); never 0. */
uint64_t mx_comm_nonce_new(void);
/* The nonce every message of this rank names from now on (rank 0's, agreed at start-up). */
void mx_comm_set_run(struct mx_comm *c, uint64_t run);
/* Messages dropped so far. */
unsigned long mx_comm_dropped(const struct mx_comm *c);

/* A control message (payload buf[0..len), copied) to dst in round `round`. 0, -ETIMEDOUT, negative errno. */
int mx_comm_send(struct mx_comm *c, int dst, int tag, uint32_t round, const void *buf, size_t len, double deadline);
/* The next control message of this run and round with this tag from src (any when src < 0): *buf_p
 * (malloc'd payload), *len_p, *src_p (may be NULL). Others are dropped. -ETIMEDOUT when none came
 * by the deadline, or the transport's error. */
int mx_comm_recv(struct mx_comm *c, int src, int tag, uint32_t round, void **buf_p, size_t *len_p, int *src_p,
		 double deadline);
/* mx_comm_recv for a payload of at most max (a peer's input, bounded before anything is allocated):
 * a longer message is consumed and dropped and the call returns -EMSGSIZE with *len_p (its payload
 * length) and *src_p (whose) set. */
int mx_comm_recv_max(struct mx_comm *c, int src, int tag, uint32_t round, size_t max, void **buf_p, size_t *len_p,
		     int *src_p, double deadline);
/* Every rank's bytes (see mx_comm_ops.allgather). */
int mx_comm_allgather(struct mx_comm *c, const void *mine, size_t len, double deadline, char **all_p,
		      size_t **lens_p, size_t **offs_p);
void mx_comm_abort(struct mx_comm *c, int code);

/* The engine's side channel (lib/oob/oob.h) to rank peer for the pair at addr, on MX_CHAN_PAIR with this
 * tag (the tag only spreads traffic: the envelope decides). Keeps the oob contract: whole messages,
 * -ETIMEDOUT consumes nothing, -EMSGSIZE for another length. 0 or -ENOMEM. */
int mx_comm_oob_open(struct mx_comm *c, struct rp_oob *oob, int peer, int tag, const struct mx_addr *addr);

#endif
