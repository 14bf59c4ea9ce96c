/* cmd_nccl.c: the 'nccl' front end (not built yet). */
#include <stdio.h>

#include "cmds.h"

int cmd_nccl(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "rdmaprobe nccl: not implemented yet\n");
	return RP_EXIT_USAGE;
}
