/* cmd_pair.c: the 'pair' front end (not built yet). */
#include <stdio.h>

#include "cmds.h"

int cmd_pair(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "rdmaprobe pair: not implemented yet\n");
	return RP_EXIT_USAGE;
}
