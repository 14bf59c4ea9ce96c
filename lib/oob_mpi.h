/* oob_mpi.h: MPI as the matrix's only side channel: the engine's oob ops between two ranks, plus
 * the few control operations the matrix driver needs. Every wait is a non-blocking MPI call polled
 * against an absolute deadline (rp_now() clock), so a dead or hung peer never hangs a rank.
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
 * give up with -ETIMEDOUT instead of hanging): every rank's bytes. *all_p holds them back to back, rank r's at
 * (*offs_p)[r], (*lens_p)[r] long; the caller frees the three. 0 or negative errno (logged). */
int rp_mpi_allgather(const void *mine, size_t len, double deadline, char **all_p, size_t **lens_p, size_t **offs_p);
/* Control messages (their own communicator). send: 0, -ETIMEDOUT, negative errno. */
int rp_mpi_ctl_send(int dst, int tag, const void *buf, size_t len, double deadline);
/* Receive one control message with this tag from any rank (src < 0) or from src; *buf_p malloc'd.
 * -ETIMEDOUT when none arrived by the deadline (nothing consumed). */
int rp_mpi_ctl_recv(int src, int tag, void **buf_p, size_t *len_p, int *src_p, double deadline);
/* The engine's side channel to rank peer on the pair communicator, with this tag (each pair and
 * direction its own tag: see rp_mpi_tag_ub()). */
int rp_oob_mpi_open(struct rp_oob *oob, int peer, int tag);
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

static inline int rp_mpi_ctl_send(int dst, int tag, const void *buf, size_t len, double deadline)
{
	(void)dst;
	(void)tag;
	(void)buf;
	(void)len;
	(void)deadline;
	return -ENOSYS;
}

static inline int rp_mpi_ctl_recv(int src, int tag, void **buf_p, size_t *len_p, int *src_p, double deadline)
{
	(void)src;
	(void)tag;
	(void)buf_p;
	(void)len_p;
	(void)src_p;
	(void)deadline;
	return -ENOSYS;
}

static inline int rp_oob_mpi_open(struct rp_oob *oob, int peer, int tag)
{
	(void)oob;
	(void)peer;
	(void)tag;
	return -ENOSYS;
}

static inline int rp_mpi_tag_ub(void)
{
	return 32767;
}
#endif

#endif
