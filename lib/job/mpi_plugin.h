/* mpi_plugin.h: finding and opening the MPI plugin (lib/job/oob_mpi.h) when `matrix` runs.
 *
 * Where, in this order: $RDMAPROBE_MPI_PLUGIN (a path; a name without '/' is handed to dlopen, which
 * looks for it in the library path, and its answer is the error), then rdmaprobe-mpi.so next to the running
 * binary (/proc/self/exe's directory: a build tree, or a relocated install), then the directory it
 * was installed to (RP_PLUGINDIR, $(PREFIX)/lib/rdmaprobe). The first that exists is opened
 * (RTLD_NOW | RTLD_GLOBAL: Open MPI opens components of its own that need libmpi's symbols); a
 * plugin that exists but cannot be opened (its libmpi is missing) or is of another ABI is the error,
 * not a reason to try the next place.
 */
#ifndef RP_MPI_PLUGIN_H
#define RP_MPI_PLUGIN_H

#include <stddef.h>

#include "job/oob_mpi.h"

/* 0 with *plugin_p (kept open for the process's life), or -ENOENT (none found), -ELIBBAD (found but
 * not loadable or another ABI) with what was tried and why in why. Logs nothing. */
int rp_mpi_plugin_load(const struct rp_mpi_plugin **plugin_p, char *why, size_t why_len);

#endif
