/* cmd_matrix.c: the 'matrix' front end (not built yet). */
#include <stdio.h>

#include "cmds.h"

int cmd_matrix(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "rdmaprobe matrix: not implemented yet\n");
	return RP_EXIT_USAGE;
}
