/* testutil.h: cmocka helpers shared by the unit tests (linked into every test binary).
 *
 * - running a shell command or the built rdmaprobe ($RP_TEST_BIN) and capturing its output;
 * - discovering a fixture machine (tests/fixture.h) into a struct rp_node;
 * - a per-program temporary directory for group setup/teardown;
 * - running a check with the process's CPUs and then pinned to one.
 * The helpers fail the current test with a cmocka assertion when the test environment breaks, and
 * skip() it loudly, saying why, when something the test needs is absent.
 */
#ifndef RP_TESTS_TESTUTIL_H
#define RP_TESTS_TESTUTIL_H

#include <stddef.h>

#include <jansson.h>

#include "fixture.h"
#include "discover/node.h"

/* Run cmd with /bin/sh; what it writes to stdout goes into out (NUL-terminated, truncated to
 * out_len - 1 bytes, the rest read and dropped). Returns the exit status, or -1 when the command
 * could not be started or did not exit normally. */
int rp_test_run(const char *cmd, char *out, size_t out_len);
/* The built binary ($RP_TEST_BIN). When it is unset the current test is skipped with a message. */
const char *rp_test_bin(void);
/* Run "'$RP_TEST_BIN' ARGS" through rp_test_run(), ARGS formatted from fmt (it may hold shell
 * redirections such as "2>&1" or "2>/dev/null"). Skips the test, loudly, when RP_TEST_BIN is unset. */
int rp_test_run_bin(char *out, size_t out_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Run "devices --json EXTRA --sysfs-root ROOT" ($RP_TEST_BIN, stderr dropped) on a fixture root,
 * require exit status 0 and parse its output; a non-zero exit or output that is not JSON fails the
 * test with what went wrong. extra may be NULL or "" (e.g. "--nccl-version 2.30.7 --counters").
 * The caller owns the returned reference. */
json_t *rp_test_devices_json(const char *root, const char *extra);
/* o's member k; a missing member fails the test naming k. */
json_t *rp_test_key(json_t *o, const char *k);

/* Run check() twice: with this process's CPUs as they are, then pinned to the first of them (code
 * that splits its work on two threads where it may use two CPUs takes its one-thread path there);
 * the CPUs are as they were afterwards. On a one-CPU machine both runs take the one-thread path. */
void rp_test_on_cpus_then_one(void (*check)(void));

/* Create a fixture tree, build machine on it (NULL: leave it empty) and discover it into node;
 * any failure fails the test. Undo with rp_test_discover_done(). */
void rp_test_discover(struct rp_fx *fx, int (*machine)(struct rp_fx *), struct rp_node *node);
void rp_test_discover_done(struct rp_fx *fx, struct rp_node *node);

/* cmocka group setup/teardown: a fresh directory "/tmp/rp_<program>_XXXXXX", removed with its
 * contents by the teardown; rp_test_tmpdir() names it in between. */
int rp_test_tmpdir_setup(void **state);
int rp_test_tmpdir_teardown(void **state);
const char *rp_test_tmpdir(void);

#endif
