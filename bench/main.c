/* main.c: rdmaprobe's entry point: picks the subcommand and hands it the rest of argv. */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "base/util.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "devices", cmd_devices, "adapters, ports, GIDs, GPUs and GPU-adapter affinity on this node" },
	{ "nccl", cmd_nccl, "what NCCL would select under NCCL_IB_HCA and what is likely wrong" },
	{ "loopback", cmd_loopback, "RDMA WRITE between every pair of this node's adapters" },
	{ "pair", cmd_pair, "one pair across two hosts (--listen on one, HOST on the other)" },
	{ "matrix", cmd_matrix, "every (node, adapter) pair under mpirun/srun, with a verdict" },
	{ "check", cmd_check, "node health check for prologs, NHC and probes: exit 0 healthy, 1 unhealthy, 3 unknown" },
	{ "diff", cmd_diff, "what got worse (and better) between two runs' JSON reports" },
};

const char *rp_version_string(void)
{
	return "rdmaprobe " RP_VERSION " (" RP_GITREV ") features: verbs rdmacm"
#ifdef HAVE_CUDA
	       " cuda"
#endif
#ifdef HAVE_MPI
	       " mpi"
#endif
		;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmaprobe COMMAND [options]   (rdmaprobe COMMAND --help for its options)\n\ncommands:\n");
	for (size_t i = 0; i < RP_ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n  --version  print the version and the features compiled in\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return RP_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("%s\n", rp_version_string());
		return RP_EXIT_OK;
	}
	/* For scripts/gen-man.sh and gen-completion.sh: "name<TAB>summary" per command. */
	if (strcmp(argv[1], "--commands") == 0) {
		for (size_t i = 0; i < RP_ARRAY_SIZE(commands); i++)
			printf("%s\t%s\n", commands[i].name, commands[i].summary);
		return RP_EXIT_OK;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return RP_EXIT_OK;
	}
	for (size_t i = 0; i < RP_ARRAY_SIZE(commands); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 2, argv + 2);
	fprintf(stderr, "rdmaprobe: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return RP_EXIT_USAGE;
}
