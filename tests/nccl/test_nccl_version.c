/* test_nccl_version.c: finding the NCCL release (lib/nccl/nccl_version.c) with real dlopen() calls on
 * tiny shared objects this test compiles: a fake libnccl.so.2 that exports ncclGetVersion() and
 * answers a chosen code, one without the symbol, one that returns an error. Also the version
 * parser of lib/nccl/nccl_rules.c and the binary's "nccl_version" JSON for each source. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <jansson.h>

#include "fixture.h"
#include "nccl/nccl_rules.h"
#include "nccl/nccl_version.h"
#include "testutil.h"

/* Compile a shared object at path from C source text; fails the test when the compiler fails. */
static void build_so(const char *path, const char *source)
{
	char src[4096], cmd[8192], out[4096];
	const char *cc = getenv("CC");
	FILE *f;

	snprintf(src, sizeof(src), "%s.c", path);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs(source, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -shared -fPIC -o '%s' '%s' 2>&1", cc && cc[0] ? cc : "cc", path, src);
	if (rp_test_run(cmd, out, sizeof(out)) != 0)
		fail_msg("cannot build %s: %s", path, out);
}

/* mkdir -p */
static void mkdirs(const char *path)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	}
	mkdir(buf, 0755);
}

/* A fake libnccl answering code. */
static void fake_nccl(const char *path, int code)
{
	char src[512];

	snprintf(src, sizeof(src), "int ncclGetVersion(int *version) { *version = %d; return 0; }\n", code);
	build_so(path, src);
}

static void test_version_parse(void **state)
{
	uint32_t v;
	char buf[16];

	(void)state;
	assert_int_equal(rp_nccl_version_parse("2.30.7", &v), 0);
	assert_int_equal(v, 23007);
	assert_int_equal(rp_nccl_version_parse("2.18.1-1", &v), 0);       /* NCCL's tag form */
	assert_int_equal(v, 21801);
	rp_nccl_version_format(v, buf, sizeof(buf));
	assert_string_equal(buf, "2.18.1");
	assert_int_equal(rp_nccl_version_parse("2.30", &v), -EINVAL);
	assert_int_equal(rp_nccl_version_parse("2.30.x", &v), -EINVAL);
	assert_int_equal(rp_nccl_version_parse("2.300.1", &v), -EINVAL);
	assert_int_equal(rp_nccl_version_parse("v2.30.7", &v), -EINVAL);
	assert_true(rp_nccl_version_is_release(RP_NCCL_V(2, 29, 7)));
	assert_false(rp_nccl_version_is_release(RP_NCCL_V(2, 30, 5)));
	assert_int_equal(rp_nccl_version_modelled(RP_NCCL_V(2, 31, 0)), RP_NCCL_VERSION_NEWEST);
	assert_int_equal(rp_nccl_version_modelled(RP_NCCL_V(2, 17, 1)), 0);
}

/* Real dlopen() of built objects: the answer, a missing symbol, an error, a missing file, and
 * NCCL's pre-2.9 code form (2.8.4 was 2804). */
static void test_version_probe(void **state)
{
	char good[512], old[512], nosym[512], fails[512];
	uint32_t v = 0;

	(void)state;
	snprintf(good, sizeof(good), "%s/good", rp_test_tmpdir());
	snprintf(old, sizeof(old), "%s/old", rp_test_tmpdir());
	snprintf(nosym, sizeof(nosym), "%s/nosym", rp_test_tmpdir());
	snprintf(fails, sizeof(fails), "%s/fails", rp_test_tmpdir());
	mkdirs(good);
	mkdirs(old);
	mkdirs(nosym);
	mkdirs(fails);
	strcat(good, "/libnccl.so.2");
	strcat(old, "/libnccl.so.2");
	strcat(nosym, "/libnccl.so.2");
	strcat(fails, "/libnccl.so.2");
	fake_nccl(good, 22105);
	fake_nccl(old, 2804);
	build_so(nosym, "int ncclCommCount(void) { return 0; }\n");
	build_so(fails, "int ncclGetVersion(int *v) { *v = 23007; return 2; }\n");

	assert_int_equal(rp_nccl_version_load(good, &v), 0);
	assert_int_equal(v, RP_NCCL_V(2, 21, 5));
	assert_int_equal(rp_nccl_version_load(old, &v), 0);
	assert_int_equal(v, RP_NCCL_V(2, 8, 4));
	assert_int_equal(rp_nccl_version_load(nosym, &v), -ENOSYS);
	assert_int_equal(rp_nccl_version_load(fails, &v), -EIO);
	assert_int_equal(rp_nccl_version_load("/nonexistent/libnccl.so.2", &v), -ENOENT);
}

/* The first candidate that answers wins; none: the newest release, saying what was tried. */
static void test_version_find_among(void **state)
{
	char good[512];
	const char *cands[2];
	struct rp_nccl_version_found f;

	(void)state;
	snprintf(good, sizeof(good), "%s/among", rp_test_tmpdir());
	mkdirs(good);
	strcat(good, "/libnccl.so.2");
	fake_nccl(good, 21806);
	cands[0] = "/nonexistent/libnccl.so.2";
	cands[1] = good;
	rp_nccl_version_find_among(cands, 2, &f);
	assert_int_equal(f.source, RP_NCCL_VSRC_LIBNCCL);
	assert_int_equal(f.version, RP_NCCL_V(2, 18, 6));
	assert_string_equal(f.library, good);
	rp_nccl_version_find_among(cands, 1, &f);
	assert_int_equal(f.source, RP_NCCL_VSRC_DEFAULT);
	assert_int_equal(f.version, RP_NCCL_VERSION_NEWEST);
	assert_non_null(strstr(f.why, "/nonexistent/libnccl.so.2"));
	assert_string_equal(rp_nccl_version_source_str(f.source), "default");
}

/* The nvidia-nccl-cu12 wheel's place in a virtual environment, given as the directory or as its
 * python executable, is tried before the system's libnccl.so.2. */
static void test_version_find_python_wheel(void **state)
{
	char venv[512], lib[640], py[640];
	struct rp_nccl_version_found f;
	FILE *fp;

	(void)state;
	snprintf(venv, sizeof(venv), "%s/venv", rp_test_tmpdir());
	snprintf(lib, sizeof(lib), "%s/lib/python3.11/site-packages/nvidia/nccl/lib", venv);
	mkdirs(lib);
	strcat(lib, "/libnccl.so.2");
	fake_nccl(lib, 22304);
	rp_nccl_version_find(venv, &f);
	assert_int_equal(f.source, RP_NCCL_VSRC_LIBNCCL);
	assert_int_equal(f.version, RP_NCCL_V(2, 23, 4));
	assert_string_equal(f.library, lib);
	snprintf(py, sizeof(py), "%s/bin", venv);
	mkdirs(py);
	strcat(py, "/python3");
	fp = fopen(py, "w");
	assert_non_null(fp);
	fclose(fp);
	rp_nccl_version_find(py, &f);
	assert_int_equal(f.version, RP_NCCL_V(2, 23, 4));
}

static void test_version_option(void **state)
{
	struct rp_nccl_version_found f;
	json_t *j;

	(void)state;
	assert_int_equal(rp_nccl_version_from_option("2.18.1", &f), 0);
	assert_int_equal(f.source, RP_NCCL_VSRC_OPTION);
	assert_int_equal(rp_nccl_version_from_option("2.17.1", &f), -EINVAL);
	assert_int_equal(rp_nccl_version_from_option("latest", &f), -EINVAL);
	assert_int_equal(rp_nccl_version_from_option("2.31.2", &f), 0);          /* newer: newest rules */
	j = rp_nccl_version_json(&f);
	assert_string_equal(json_string_value(json_object_get(j, "version")), "2.31.2");
	assert_string_equal(json_string_value(json_object_get(j, "source")), "option");
	assert_string_equal(json_string_value(json_object_get(j, "rules")), "2.30.7");
	json_decref(j);
}

/* The binary: a fake libnccl.so.2 found through LD_LIBRARY_PATH (dlopen's own search) gives
 * source "libnccl"; --nccl-version gives "option"; a --python wheel comes first. */
static void test_cmd_nccl_version_json(void **state)
{
	static char out[1 << 16];
	char dir[512], lib[640], cmd[3 * PATH_MAX];
	struct rp_fx fx;
	json_t *j;

	(void)state;
	rp_test_bin();
	snprintf(dir, sizeof(dir), "%s/ldpath", rp_test_tmpdir());
	mkdirs(dir);
	snprintf(lib, sizeof(lib), "%s/libnccl.so.2", dir);
	fake_nccl(lib, 21805);
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_roce(&fx), 0);
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH='%s' '%s' nccl --json --sysfs-root '%s' 2>/dev/null", dir,
		 rp_test_bin(), fx.root);
	rp_test_run(cmd, out, sizeof(out));
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "nccl_version"), "source")), "libnccl");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "nccl_version"), "version")), "2.18.5");
	assert_string_equal(json_string_value(json_object_get(j, "rules_version")), "2.18.5");
	/* 2.18.5 has no automatic GID choice: index 0, the link-local v1 entry. */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "gid_index"), "mlx5_0:1")), 0);
	json_decref(j);
	rp_test_run_bin(out, sizeof(out), "nccl --json --nccl-version 2.30.7 --sysfs-root '%s' 2>/dev/null", fx.root);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "nccl_version"), "source")), "option");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "gid_index"), "mlx5_0:1")), 3);
	json_decref(j);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "nccl --nccl-version 2.17.1 --sysfs-root '%s' 2>&1", fx.root), 2);
	assert_non_null(strstr(out, "--nccl-version"));
	/* devices: the NCCL GID column follows the release (2.18.6: 0, no walk; 2.30.7: 3). */
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --json --nccl-version 2.18.6 --sysfs-root '%s' 2>/dev/null",
					 fx.root), 0);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "nccl_version"), "version")), "2.18.6");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(json_array_get(
		json_object_get(j, "devices"), 0), "ports"), 0), "nccl_gid_index")), 0);
	json_decref(j);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --json --nccl-version 2.30.7 --sysfs-root '%s' 2>/dev/null",
					 fx.root), 0);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(json_array_get(
		json_object_get(j, "devices"), 0), "ports"), 0), "nccl_gid_index")), 3);
	json_decref(j);
	rp_fx_destroy(&fx);
}

/* A libnccl newer than the newest modelled release (2.30.7; NCCL's docs describe 2.31 and 2.32,
 * whose tags are not read): nccl_version says where it came from (source libnccl), that the rules
 * are 2.30.7's and not exact, and both the JSON and the nccl warnings carry nccl_newer_than_model
 * naming both versions; devices says so too. Failed before: a generic nccl_version warning, no
 * "exact", nothing in devices. */
static void test_cmd_newer_than_model(void **state)
{
	static char out[1 << 16];
	char dir[512], lib[640], cmd[3 * PATH_MAX];
	json_t *j, *w, *nv;
	struct rp_fx fx;
	bool seen = false;
	size_t i;

	(void)state;
	rp_test_bin();
	snprintf(dir, sizeof(dir), "%s/ldnew", rp_test_tmpdir());
	mkdirs(dir);
	snprintf(lib, sizeof(lib), "%s/libnccl.so.2", dir);
	fake_nccl(lib, 23102);
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_roce(&fx), 0);
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH='%s' '%s' nccl --json --sysfs-root '%s' 2>/dev/null", dir,
		 rp_test_bin(), fx.root);
	rp_test_run(cmd, out, sizeof(out));
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	nv = json_object_get(j, "nccl_version");
	assert_string_equal(json_string_value(json_object_get(nv, "source")), "libnccl");
	assert_string_equal(json_string_value(json_object_get(nv, "version")), "2.31.2");
	assert_string_equal(json_string_value(json_object_get(nv, "rules")), "2.30.7");
	assert_true(json_is_false(json_object_get(nv, "exact")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(nv, "warning"), "code")),
			    "nccl_newer_than_model");
	assert_string_equal(json_string_value(json_object_get(j, "rules_version")), "2.30.7");
	json_array_foreach(json_object_get(j, "warnings"), i, w) {
		const char *m = json_string_value(json_object_get(w, "message"));

		if (strcmp(json_string_value(json_object_get(w, "code")), "nccl_newer_than_model") != 0)
			continue;
		assert_non_null(strstr(m, "2.31.2"));
		assert_non_null(strstr(m, "2.30.7"));
		seen = true;
	}
	assert_true(seen);
	json_decref(j);
	/* devices: the same in its JSON and its text */
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH='%s' '%s' devices --json --sysfs-root '%s' 2>/dev/null", dir,
		 rp_test_bin(), fx.root);
	rp_test_run(cmd, out, sizeof(out));
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_true(json_is_false(json_object_get(json_object_get(j, "nccl_version"), "exact")));
	json_decref(j);
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH='%s' '%s' devices --sysfs-root '%s' 2>/dev/null", dir,
		 rp_test_bin(), fx.root);
	rp_test_run(cmd, out, sizeof(out));
	assert_non_null(strstr(out, "warning nccl_newer_than_model: NCCL 2.31.2 is newer"));
	/* a modelled release is exact */
	rp_test_run_bin(out, sizeof(out), "nccl --json --nccl-version 2.30.7 --sysfs-root '%s' 2>/dev/null", fx.root);
	j = json_loads(out, 0, NULL);
	assert_non_null(j);
	assert_true(json_is_true(json_object_get(json_object_get(j, "nccl_version"), "exact")));
	assert_null(json_object_get(json_object_get(j, "nccl_version"), "warning"));
	json_decref(j);
	rp_fx_destroy(&fx);
}

/* The matrix's comparison: one release everywhere is no warning; two are, each node named once
 * under its release, releases in the order first seen; a short buffer is cut with "...". Failed
 * before rp_nccl_versions_differ existed (the matrix compared nothing). */
static void test_versions_differ(void **state)
{
	struct rp_nccl_rank_version same[] = {
		{ 0, "node0", RP_NCCL_V(2, 30, 7) }, { 1, "node1", RP_NCCL_V(2, 30, 7) },
	};
	struct rp_nccl_rank_version mixed[] = {
		{ 0, "node0", RP_NCCL_V(2, 30, 7) }, { 1, "node0", RP_NCCL_V(2, 30, 7) },
		{ 2, "node1", RP_NCCL_V(2, 18, 6) }, { 3, "node2", RP_NCCL_V(2, 30, 7) },
		{ 4, "node1", RP_NCCL_V(2, 18, 6) }, { 5, "node0", RP_NCCL_V(2, 21, 5) },
	};
	char msg[128], small[12];

	(void)state;
	assert_false(rp_nccl_versions_differ(same, 2, msg, sizeof(msg)));
	assert_string_equal(msg, "");
	assert_false(rp_nccl_versions_differ(mixed, 1, msg, sizeof(msg)));
	assert_true(rp_nccl_versions_differ(mixed, 6, msg, sizeof(msg)));
	assert_string_equal(msg, "2.30.7 on node0, node2; 2.18.6 on node1; 2.21.5 on node0");
	assert_true(rp_nccl_versions_differ(mixed, 3, msg, sizeof(msg)));
	assert_string_equal(msg, "2.30.7 on node0; 2.18.6 on node1");
	assert_true(rp_nccl_versions_differ(mixed, 6, small, sizeof(small)));
	assert_string_equal(small, "2.30.7 o...");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_parse),
		cmocka_unit_test(test_version_probe),
		cmocka_unit_test(test_version_find_among),
		cmocka_unit_test(test_version_find_python_wheel),
		cmocka_unit_test(test_version_option),
		cmocka_unit_test(test_cmd_nccl_version_json),
		cmocka_unit_test(test_cmd_newer_than_model),
		cmocka_unit_test(test_versions_differ),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
