/* cmd_loopback.c: the 'loopback' front end (not built yet). */
#include <stdio.h>

#include "cmds.h"

int cmd_loopback(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "rdmaprobe loopback: not implemented yet\n");
	return RP_EXIT_USAGE;
}
