/* mpi_plugin.c: finding and opening the MPI plugin; see mpi_plugin.h. */
#include "job/mpi_plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RP_PLUGINDIR
#define RP_PLUGINDIR "/usr/local/lib/rdmaprobe"
#endif

/* rdmaprobe-mpi.so in the running binary's directory, into buf; false when it cannot be told. */
static bool next_to_binary(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return snprintf(buf, len, "%s/%s", exe, RP_MPI_PLUGIN_FILE) < (int)len;
}

static int plugin_open(const char *path, const struct rp_mpi_plugin **plugin_p, char *why, size_t why_len)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	const struct rp_mpi_plugin *p;

	if (!h) {
		snprintf(why, why_len, "%s cannot be loaded: %s", path, dlerror());
		return -ELIBBAD;
	}
	p = dlsym(h, RP_MPI_PLUGIN_SYMBOL);
	if (!p || p->abi != RP_MPI_PLUGIN_ABI || p->comm_size != sizeof(struct mx_comm) || !p->init || !p->finalize) {
		snprintf(why, why_len, "%s is not this rdmaprobe's MPI plugin (another version?)", path);
		dlclose(h);
		return -ELIBBAD;
	}
	*plugin_p = p;
	return 0;
}

/* $RDMAPROBE_MPI_PLUGIN without a '/': dlopen looks for such a name in the library path
 * (LD_LIBRARY_PATH, the binary's RUNPATH, /etc/ld.so.cache, /lib, /usr/lib), never in the working
 * directory, so no existence check here can stand for it: dlopen is asked, and what it said is the
 * error, with a hint when the name is a file in the working directory. */
static int bare_name_open(const char *name, const struct rp_mpi_plugin **plugin_p, char *why, size_t why_len)
{
	int rc = plugin_open(name, plugin_p, why, why_len);
	bool here = access(name, F_OK) == 0;
	size_t len = strlen(why);

	if (rc != 0)
		snprintf(why + len, why_len - len, " (RDMAPROBE_MPI_PLUGIN=%s has no '/': dlopen looks for it in the "
			 "library path, LD_LIBRARY_PATH and /etc/ld.so.cache, not in the working directory%s%s)", name,
			 here ? "; for the file here, give ./" : "", here ? name : "");
	return rc;
}

int rp_mpi_plugin_load(const struct rp_mpi_plugin **plugin_p, char *why, size_t why_len)
{
	char here[PATH_MAX + 32] = "";
	const char *env = getenv("RDMAPROBE_MPI_PLUGIN");
	const char *tried[3];
	size_t n = 0;

	*plugin_p = NULL;
	if (env && env[0] && !strchr(env, '/'))
		return bare_name_open(env, plugin_p, why, why_len);
	if (env && env[0])
		tried[n++] = env;
	else {
		if (next_to_binary(here, sizeof(here)))
			tried[n++] = here;
		tried[n++] = RP_PLUGINDIR "/" RP_MPI_PLUGIN_FILE;
	}
	for (size_t i = 0; i < n; i++)
		if (access(tried[i], F_OK) == 0)
			return plugin_open(tried[i], plugin_p, why, why_len);
	snprintf(why, why_len, "%s%s%s does not exist", tried[0], n > 1 ? " nor " : "", n > 1 ? tried[n - 1] : "");
	return -ENOENT;
}
