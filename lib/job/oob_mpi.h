/* oob_mpi.h: MPI as the matrix's transport: the raw operations of struct mx_comm (lib/job/mx_comm.h)
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
 * A plugin: lib/job/oob_mpi.c is built into its own shared object (rdmaprobe-mpi.so, linked against the
 * MPI found at build time) that exports struct rp_mpi_plugin as RP_MPI_PLUGIN_SYMBOL; the binary
 * never links libmpi and opens the plugin only when `matrix` runs (lib/job/mpi_plugin.h), so every other
 * command runs on a node without MPI. The plugin calls back into the binary for lib/base/log.h and
 * rp_now() (the binary exports its symbols: -rdynamic).
 */
#ifndef RP_OOB_MPI_H
#define RP_OOB_MPI_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "job/mx_comm.h"

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

#define RP_MPI_PLUGIN_FILE "rdmaprobe-mpi.so"
#define RP_MPI_PLUGIN_SYMBOL "rp_mpi_plugin"
#define RP_MPI_PLUGIN_ABI 1           /* bump when struct mx_comm or this struct changes */

/* What the plugin exports. */
struct rp_mpi_plugin {
	uint32_t abi;                 /* RP_MPI_PLUGIN_ABI */
	uint32_t comm_size;           /* sizeof(struct mx_comm) it was built with */
	int (*init)(int *argc, char ***argv, struct mx_comm *comm);
	void (*finalize)(void);
};

#ifdef HAVE_MPI
/* Built with the plugin (the binary may still fail to load it: lib/job/mpi_plugin.h). */
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
#endif

#endif
