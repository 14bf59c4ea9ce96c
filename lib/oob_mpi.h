/* oob_mpi.h: MPI as the matrix's transport: the raw operations of struct mx_comm (lib/mx_comm.h)
 * over MPI. The envelope, the stale/duplicate checks and the engine's side channel are mx_comm's.
 *
 * Every wait is a non-blocking MPI call polled against an absolute deadline (rp_now() clock), so a
 * dead or hung peer never hangs a rank. A receive takes the next message of its tag with a matched
 * probe (MPI_Improbe + MPI_Mrecv, so no other thread can take it in between). Control messages and
 * side channels have communicators of their own. MPI calls from several threads are serialised by
 * one lock (MPI_THREAD_SERIALIZED is enough).
 *
 * Requests and copies: a send's copy is freed when MPI completes it; one that timed out is kept with
 * its request until MPI is done with it (at the latest in rp_mpi_finalize()); a failed Isend or
 * Mrecv frees its copy or buffer at once.
 *
 * Built only with MPI (lib/oob_mpi.c); without it rp_mpi_init() returns -ENOSYS, so callers need no
 * #ifdef.
 */
#ifndef RP_OOB_MPI_H
#define RP_OOB_MPI_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "mx_comm.h"

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

/* MPI_Init_thread (serialized) and the communicators; fills *comm (rank, size, local rank and size
 * from a shared-memory split, tag_ub) with the MPI operations. 0 or negative errno (logged). */
int rp_mpi_init(int *argc, char ***argv, struct mx_comm *comm);
/* Release what is still pending and MPI_Finalize (synchronises with every rank: skip it when one died). */
void rp_mpi_finalize(void);
#else
static inline bool rp_mpi_compiled(void)
{
	return false;
}

static inline int rp_mpi_init(int *argc, char ***argv, struct mx_comm *comm)
{
	(void)argc;
	(void)argv;
	(void)comm;
	return -ENOSYS;
}

static inline void rp_mpi_finalize(void)
{
}
#endif

#endif
