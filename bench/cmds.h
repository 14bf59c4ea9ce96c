/* cmds.h: the rdmaprobe subcommands. Each takes the arguments after its name and returns the exit
 * status: 0 pass, 1 a check failed (a pair, a rule), 2 usage error, 3 environment (no device, no
 * permission, no GPU, no MPI). */
#ifndef RP_CMDS_H
#define RP_CMDS_H

/* The exit statuses; RP_EXIT_GO_ON is none: a front end's step (parse, set up, choose) that found
 * nothing to stop for returns it, any other value is the status to exit with. */
enum rp_exit { RP_EXIT_GO_ON = -1, RP_EXIT_OK = 0, RP_EXIT_FAIL = 1, RP_EXIT_USAGE = 2, RP_EXIT_ENV = 3 };

int cmd_devices(int argc, char **argv);
int cmd_nccl(int argc, char **argv);
int cmd_loopback(int argc, char **argv);
int cmd_pair(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);

/* "rdmaprobe 0.1.0 (abc123) features: cuda mpi" for --version and the reports. */
const char *rp_version_string(void);

#endif
