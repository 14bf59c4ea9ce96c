/* oob_mpi.h: MPI as the matrix's only side channel: the engine's oob ops between two ranks, plus
 * the few control operations the matrix driver needs. Every wait is a non-blocking MPI call polled
 * against an absolute deadline (rp_now() clock), so a dead or hung peer never hangs a rank.
 *
 * Every message names where it belongs (struct rp_mpi_addr: the run's nonce, the round, the pair
 * and direction) in a small envelope. A receive takes the next message of its tag with a matched
 * probe (MPI_Improbe + MPI_Mrecv, so no other thread can take it in between) and keeps it only when
 * the envelope names this run and the receiver's round and pair: a late message of a pair that timed
 * out earlier, another run's message, or one cut short is dropped with a debug log, never taken for
 * the answer a later pair waits for (tags wrap: one tag serves many pairs over a run).
 *
 * Built only with MPI (lib/oob_mpi.c); without it the functions below are stubs that return
 * -ENOSYS, so callers need no #ifdef. MPI calls from several threads are serialised by one lock
 * (MPI_THREAD_SERIALIZED is enough).
 */
#ifndef RP_OOB_MPI_H
#define RP_OOB_MPI_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "oob.h"

struct rp_mpi_info {
	int rank, size;
	int local_rank, local_size;   /* among the ranks of this node (MPI shared-memory split) */
};

/* Was this process started by a launcher (mpirun, srun, PMIx)? Reads the environment only. */
static inline bool rp_mpi_launched(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
					    "MPI_LOCALNRANKS", "SLURM_PROCID" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]))
			return true;
	return false;
}

/* Where a message belongs. */
struct rp_mpi_addr {
	uint64_t run;                 /* the run's nonce: rp_mpi_set_run() on every rank */
	uint32_t round;
	uint32_t pair;                /* the pair's number in its round x 2 + direction; 0 on control messages */
};

#ifdef HAVE_MPI
static inline bool rp_mpi_compiled(void)
{
	return true;
}

int rp_mpi_init(int *argc, char ***argv, struct rp_mpi_info *info);
void rp_mpi_finalize(void);
/* Ask the launcher to end the job (a rank that must not go on). MPI_Abort normally does not return;
 * if it does, the caller exits with code itself (lib/ never exits). */
void rp_mpi_abort(int code);
/* Start-up only (collective, polled until deadline: a rank that died before it makes every rank
 * give up with -ETIMEDOUT instead of hanging; the buffers MPI may still write are then kept, and
 * the job is to end): every rank's bytes. *all_p holds them back to back, rank r's at
 * (*offs_p)[r], (*lens_p)[r] long; the caller frees the three. 0 or negative errno (logged). */
int rp_mpi_allgather(const void *mine, size_t len, double deadline, char **all_p, size_t **lens_p, size_t **offs_p);
/* A fresh run nonce (from the kernel's random source, else time and pid); never 0. */
uint64_t rp_mpi_nonce_new(void);
/* The nonce every message of this process names from now on (agreed at start-up: rank 0's). */
void rp_mpi_set_run(uint64_t run);
/* Control messages (their own communicator), in round `round` of this run. send: 0, -ETIMEDOUT,
 * negative errno. A send that times out leaves its request and copy to be released once MPI is done
 * with them (at the latest in rp_mpi_finalize()). */
int rp_mpi_ctl_send(int dst, int tag, uint32_t round, const void *buf, size_t len, double deadline);
/* Receive one control message of this run and round with this tag from any rank (src < 0) or from
 * src; *buf_p malloc'd. Messages of other rounds or runs are dropped (debug log). -ETIMEDOUT when
 * none arrived by the deadline. */
int rp_mpi_ctl_recv(int src, int tag, uint32_t round, void **buf_p, size_t *len_p, int *src_p, double deadline);
/* The engine's side channel to rank peer on the pair communicator, with this tag and address (the
 * run is the one set by rp_mpi_set_run(); addr->run is ignored). The tag only spreads traffic: the
 * address decides what is accepted. */
int rp_oob_mpi_open(struct rp_oob *oob, int peer, int tag, const struct rp_mpi_addr *addr);
/* Messages dropped so far as stale or foreign (for tests and the debug log). */
unsigned long rp_mpi_dropped(void);
/* The largest tag (MPI_TAG_UB, at least 32767). */
int rp_mpi_tag_ub(void);
#else
static inline bool rp_mpi_compiled(void)
{
	return false;
}

static inline int rp_mpi_init(int *argc, char ***argv, struct rp_mpi_info *info)
{
	(void)argc;
	(void)argv;
	(void)info;
	return -ENOSYS;
}

static inline void rp_mpi_finalize(void)
{
}

static inline void rp_mpi_abort(int code)
{
	(void)code;
}

static inline int rp_mpi_allgather(const void *mine, size_t len, double deadline, char **all_p, size_t **lens_p,
				   size_t **offs_p)
{
	(void)mine;
	(void)len;
	(void)deadline;
	(void)all_p;
	(void)lens_p;
	(void)offs_p;
	return -ENOSYS;
}

static inline uint64_t rp_mpi_nonce_new(void)
{
	return 1;
}

static inline void rp_mpi_set_run(uint64_t run)
{
	(void)run;
}

static inline unsigned long rp_mpi_dropped(void)
{
	return 0;
}

static inline int rp_mpi_ctl_send(int dst, int tag, uint32_t round, const void *buf, size_t len, double deadline)
{
	(void)dst;
	(void)tag;
	(void)round;
	(void)buf;
	(void)len;
	(void)deadline;
	return -ENOSYS;
}

static inline int rp_mpi_ctl_recv(int src, int tag, uint32_t round, void **buf_p, size_t *len_p, int *src_p,
				  double deadline)
{
	(void)src;
	(void)tag;
	(void)round;
	(void)buf_p;
	(void)len_p;
	(void)src_p;
	(void)deadline;
	return -ENOSYS;
}

static inline int rp_oob_mpi_open(struct rp_oob *oob, int peer, int tag, const struct rp_mpi_addr *addr)
{
	(void)oob;
	(void)peer;
	(void)tag;
	(void)addr;
	return -ENOSYS;
}

static inline int rp_mpi_tag_ub(void)
{
	return 32767;
}
#endif

#endif
