/* cmd_devices.c: the 'devices' front end (not built yet). */
#include <stdio.h>

#include "cmds.h"

int cmd_devices(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "rdmaprobe devices: not implemented yet\n");
	return RP_EXIT_USAGE;
}
