/* test_install.c: what `make install` puts on a node: the binary, rdmaprobe(1) and the bash
 * completion. The man page and the completion must list every option --help lists (they are
 * generated from the same tables; this catches a page written or edited by hand), the page must
 * render, and `make install DESTDIR=...` must install exactly those files. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <cmocka.h>

#include "testutil.h"
#include "base/util.h"

#define BIG 262144

static char page[BIG];

/* The directory the binary under test was built in (build/, build-clang/...). */
static const char *build_dir(void)
{
	static char dir[PATH_MAX];

	rp_strlcpy(dir, rp_test_bin(), sizeof(dir));
	return dirname(dir);
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		fail_msg("cannot open %s (built by 'make doc', a prerequisite of 'make check')", path);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void load_page(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/rdmaprobe.1", build_dir());
	read_file(path, page, sizeof(page));
}

/* The commands the binary knows (rdmaprobe --commands). */
static size_t commands(char names[][32], size_t max)
{
	char out[4096], *save = NULL;
	size_t n = 0;

	assert_int_equal(rp_test_run_bin(out, sizeof(out), "--commands | cut -f1"), 0);
	for (char *c = strtok_r(out, "\n", &save); c && n < max; c = strtok_r(NULL, "\n", &save))
		rp_strlcpy(names[n++], c, sizeof(names[0]));
	assert_true(n >= 6);
	return n;
}

/* Each "--name" that `rdmaprobe CMD --help` lists, as "name\n" lines (the text help, not a format
 * made for this test). */
static size_t help_options(const char *cmd, char *out, size_t len)
{
	char help[32768];
	size_t n = 0, used = 0;

	assert_int_equal(rp_test_run_bin(help, sizeof(help), "%s --help", cmd), 0);
	out[0] = '\0';
	char *save = NULL;

	for (char *line = strtok_r(help, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *dd = strstr(line, "--");
		size_t k;

		/* option lines are indented and start with the option: "  -j, --json", "      --sysfs-root DIR" */
		if (strncmp(line, "  -", 3) != 0 && strncmp(line, "      --", 8) != 0)
			continue;
		if (!dd)
			continue;
		k = strspn(dd + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
		used += (size_t)snprintf(out + used, len - used, "%.*s\n", (int)k, dd + 2);
		n++;
	}
	return n;
}

/* The first option of any command that text lacks in its man form (\fB\-\-name\fR), or NULL. */
static const char *man_missing(const char *text, char *name_out, size_t len)
{
	char names[32][32], opts[8192], want[256];
	size_t n = commands(names, 32);

	for (size_t i = 0; i < n; i++) {
		char *save = NULL;

		snprintf(want, sizeof(want), ".SS %s\n", names[i]);
		if (!strstr(text, want)) {
			snprintf(name_out, len, "section %s", names[i]);
			return name_out;
		}
		assert_true(help_options(names[i], opts, sizeof(opts)) >= 2);
		for (char *o = strtok_r(opts, "\n", &save); o; o = strtok_r(NULL, "\n", &save)) {
			size_t w = (size_t)snprintf(want, sizeof(want), "\\fB\\-\\-");

			for (const char *p = o; *p; p++)
				w += (size_t)snprintf(want + w, sizeof(want) - w, *p == '-' ? "\\-" : "%c", *p);
			snprintf(want + w, sizeof(want) - w, "\\fR");
			if (!strstr(text, want)) {
				snprintf(name_out, len, "%s --%s", names[i], o);
				return name_out;
			}
		}
	}
	return NULL;
}

static void test_man_lists_every_option(void **state)
{
	char missing[128], *line;
	static char edited[BIG];

	(void)state;
	load_page();
	if (man_missing(page, missing, sizeof(missing)))
		fail_msg("rdmaprobe(1) lacks %s, which --help lists", missing);
	/* the check can fail: the page without loopback's --no-self is caught (an option only one command
	 * has: the lookup is over the whole page, and --drop is now on loopback and matrix too) */
	rp_strlcpy(edited, page, sizeof(edited));
	line = strstr(edited, "\\fB\\-\\-no\\-self\\fR");
	assert_non_null(line);
	memcpy(line, "\\fB\\-\\-no\\-slef\\fR", 18);
	assert_non_null(man_missing(edited, missing, sizeof(missing)));
	assert_string_equal(missing, "loopback --no-self");
}

/* The page renders (man when installed, else groff) without a warning, showing the generated parts. */
static void test_man_renders(void **state)
{
	static char out[BIG];
	char path[PATH_MAX], cmd[PATH_MAX + 128];

	(void)state;
	load_page();
	/* structure, whatever renderer there is: a title, the sections, one subsection per command */
	assert_non_null(strstr(page, "\n.TH RDMAPROBE 1 "));
	assert_non_null(strstr(page, "\n.SH NAME\nrdmaprobe \\- "));
	assert_non_null(strstr(page, "\n.SH COMMANDS\n.SS devices\n"));
	assert_non_null(strstr(page, "\n.SH EXIT STATUS\n"));
	/* every status a command exits with, the signals' included (issue 26 item 15) */
	assert_non_null(strstr(strstr(page, "\n.SH EXIT STATUS\n"), "\n.B 130\n"));
	assert_non_null(strstr(strstr(page, "\n.SH EXIT STATUS\n"), "\n.B 143\n"));
	assert_null(strstr(page, "@COMMANDS@"));
	assert_null(strstr(page, "@VERSION@"));
	snprintf(path, sizeof(path), "%s/rdmaprobe.1", build_dir());
	if (system("command -v groff >/dev/null 2>&1") == 0) {
		snprintf(cmd, sizeof(cmd), "groff -man -Tascii -ww -z '%s' 2>&1", path);
		assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
		if (out[0])
			fail_msg("groff warns about rdmaprobe(1):\n%s", out);
	}
	if (system("command -v man >/dev/null 2>&1") == 0)
		snprintf(cmd, sizeof(cmd), "LC_ALL=C MANWIDTH=120 man -l '%s' 2>&1", path);
	else if (system("command -v groff >/dev/null 2>&1") == 0)
		snprintf(cmd, sizeof(cmd), "LC_ALL=C groff -man -Tascii -P-cbou '%s' 2>&1", path);
	else {
		print_message("SKIPPED rendering: neither man nor groff is installed (the structure was checked)\n");
		return;
	}
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "RDMAPROBE(1)"));
	assert_non_null(strstr(out, "rdmaprobe diff [--drop X] [--json FILE] [--all] OLD.json NEW.json"));
	assert_non_null(strstr(out, "--drop X"));
	assert_non_null(strstr(out, "-d, --device SPEC"));
	assert_non_null(strstr(out, "EXIT STATUS"));
}

/* Complete the words (the last one being completed) with the generated script in a real bash. */
static void complete(const char *words, char *out, size_t len)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && bash -c 'source \"%s/rdmaprobe.bash\"; COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
		 "_rdmaprobe; printf \"%%s\\n\" \"${COMPREPLY[@]}\"' 2>&1", rp_test_tmpdir(), build_dir(), words);
	assert_int_equal(rp_test_run(cmd, out, len), 0);
}

static void test_completion(void **state)
{
	char out[16384], names[32][32], opts[8192], words[128];
	size_t n;
	FILE *f;

	(void)state;
	if (system("command -v bash >/dev/null 2>&1") != 0) {
		print_message("SKIPPED: bash is not installed\n");
		skip();
	}
	complete("rdmaprobe lo", out, sizeof(out));
	assert_string_equal(out, "loopback\n");
	complete("rdmaprobe diff --d", out, sizeof(out));
	assert_string_equal(out, "--drop\n");
	complete("rdmaprobe loopback -s \"\"", out, sizeof(out));     /* a size: nothing to complete */
	assert_string_equal(out, "\n");
	snprintf(out, sizeof(out), "%s/report-a.json", rp_test_tmpdir());
	f = fopen(out, "w");
	assert_non_null(f);
	fclose(f);
	complete("rdmaprobe matrix --html rep", out, sizeof(out));  /* a FILE: file names */
	assert_string_equal(out, "report-a.json\n");
	complete("rdmaprobe diff rep", out, sizeof(out));           /* diff's reports */
	assert_string_equal(out, "report-a.json\n");
	/* every option of every command completes */
	n = commands(names, 32);
	for (size_t i = 0; i < n; i++) {
		char *save = NULL;

		help_options(names[i], opts, sizeof(opts));
		snprintf(words, sizeof(words), "rdmaprobe %s --", names[i]);
		complete(words, out, sizeof(out));
		for (char *o = strtok_r(opts, "\n", &save); o; o = strtok_r(NULL, "\n", &save)) {
			char want[96];

			snprintf(want, sizeof(want), "--%s\n", o);
			if (!strstr(out, want))
				fail_msg("'rdmaprobe %s --<TAB>' does not offer --%s; it offers:\n%s", names[i], o, out);
		}
	}
}

/* A make run from this test inherits the outer make's variables (CC, BUILD, ...) through MAKEFLAGS,
 * so nothing is rebuilt with other flags; its jobserver, which this process cannot reach, is dropped. */
#define SUBMAKE "MAKEFLAGS=$(printf '%%s' \"$MAKEFLAGS\" | sed -e 's/--jobserver-[a-z]*=[^ ]*//g' " \
		"-e 's/\\(^\\| \\)-j[0-9]*//g') make -s --no-print-directory"

static void test_make_install(void **state)
{
	char out[8192], cmd[2 * PATH_MAX + 256], root[PATH_MAX];

	(void)state;
	snprintf(root, sizeof(root), "%s/root", rp_test_tmpdir());
	snprintf(cmd, sizeof(cmd), SUBMAKE " install BUILD='%s' DESTDIR='%s' PREFIX=/usr 2>&1", build_dir(), root);
	if (rp_test_run(cmd, out, sizeof(out)) != 0)
		fail_msg("make install failed:\n%s", out);
	snprintf(cmd, sizeof(cmd), "cd '%s' && find . ! -type d -printf '%%m %%p\\n' | sort", root);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	{
		char so[PATH_MAX + 32], want[512];

		snprintf(so, sizeof(so), "%s/rdmaprobe-mpi.so", build_dir());
		snprintf(want, sizeof(want), "%s644 ./usr/share/bash-completion/completions/rdmaprobe\n"
			 "644 ./usr/share/man/man1/rdmaprobe.1\n"
			 "644 ./usr/share/rdmaprobe/fabric-models/ndr-rail-example.model\n"
			 "644 ./usr/share/rdmaprobe/rdmaprobe.nhc\n755 ./usr/bin/rdmaprobe\n",			 access(so, F_OK) == 0 ? "644 ./usr/lib/rdmaprobe/rdmaprobe-mpi.so\n" : "");
		assert_string_equal(out, want);   /* the MPI plugin where the binary looks for it */
	}
	snprintf(cmd, sizeof(cmd), "'%s/usr/bin/rdmaprobe' --version", root);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "rdmaprobe "));
	snprintf(cmd, sizeof(cmd), "cmp '%s/usr/share/man/man1/rdmaprobe.1' '%s/rdmaprobe.1'", root, build_dir());
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	/* the NHC check the README documents, where the RPM puts it too (issue 26 item 15) */
	snprintf(cmd, sizeof(cmd), "cmp '%s/usr/share/rdmaprobe/rdmaprobe.nhc' scripts/nhc/rdmaprobe.nhc", root);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	snprintf(cmd, sizeof(cmd), SUBMAKE " uninstall BUILD='%s' DESTDIR='%s' PREFIX=/usr 2>&1", build_dir(), root);
	if (rp_test_run(cmd, out, sizeof(out)) != 0)
		fail_msg("make uninstall failed:\n%s", out);
	snprintf(cmd, sizeof(cmd), "cd '%s' && find . ! -type d", root);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_man_lists_every_option),
		cmocka_unit_test(test_man_renders),
		cmocka_unit_test(test_completion),
		cmocka_unit_test(test_make_install),
	};

	return cmocka_run_group_tests_name("install", tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
