/* testutil.c: cmocka helpers shared by the unit tests; see testutil.h. */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char tmpdir[PATH_MAX];

int rp_test_run(const char *cmd, char *out, size_t out_len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int st;

	out[0] = '\0';
	if (!p)
		return -1;
	while (n + 1 < out_len) {
		size_t got = fread(out + n, 1, out_len - 1 - n, p);

		if (got == 0)
			break;
		n += got;
	}
	out[n] = '\0';
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

const char *rp_test_bin(void)
{
	const char *bin = getenv("RP_TEST_BIN");

	if (!bin || !*bin) {
		print_message("SKIPPED: RP_TEST_BIN is not set (run through 'make check')\n");
		skip();
	}
	return bin;
}

int rp_test_run_bin(char *out, size_t out_len, const char *fmt, ...)
{
	const char *bin = rp_test_bin();
	char *args = NULL, *cmd = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&args, fmt, ap);
	va_end(ap);
	assert_true(rc >= 0);
	assert_true(asprintf(&cmd, "'%s' %s", bin, args) >= 0);
	rc = rp_test_run(cmd, out, out_len);
	free(cmd);
	free(args);
	return rc;
}

json_t *rp_test_devices_json(const char *root, const char *extra)
{
	static char out[1 << 20];   /* a large fixture's JSON; not on the stack */
	json_error_t err;
	json_t *j;
	int rc;

	rc = rp_test_run_bin(out, sizeof(out), "devices --json %s --sysfs-root '%s' 2>/dev/null", extra ? extra : "",
			     root);
	if (rc != 0)
		fail_msg("devices --json %s --sysfs-root %s exited with %d", extra ? extra : "", root, rc);
	j = json_loads(out, 0, &err);
	if (!j)
		fail_msg("devices --json is not JSON: %s (line %d)", err.text, err.line);
	return j;
}

json_t *rp_test_key(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!v)
		fail_msg("JSON key '%s' missing", k);
	return v;
}

void rp_test_discover(struct rp_fx *fx, int (*machine)(struct rp_fx *), struct rp_node *node)
{
	struct rp_discover_opts opts = { 0 };

	assert_int_equal(rp_fx_create(fx), 0);
	if (machine)
		assert_int_equal(machine(fx), 0);
	opts.sysfs_root = fx->root;
	assert_int_equal(rp_node_discover(node, &opts), 0);
}

void rp_test_discover_done(struct rp_fx *fx, struct rp_node *node)
{
	rp_node_fini(node);
	rp_fx_destroy(fx);
}

int rp_test_tmpdir_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/rp_%s_XXXXXX", program_invocation_short_name);
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "mkdtemp %s: %s\n", tmpdir, strerror(errno));
		tmpdir[0] = '\0';
		return -1;
	}
	return 0;
}

int rp_test_tmpdir_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	if (!tmpdir[0])
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	tmpdir[0] = '\0';
	return system(cmd) == 0 ? 0 : -1;
}

const char *rp_test_tmpdir(void)
{
	return tmpdir;
}

void rp_test_on_cpus_then_one(void (*check)(void))
{
	cpu_set_t all, one;

	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	check();
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);
			break;
		}
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	check();
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
}
