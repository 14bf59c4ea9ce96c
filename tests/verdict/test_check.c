/* test_check.c: the node health check (lib/verdict/check.h and 'rdmaprobe check'): which findings fail a
 * node and which warn, the order that makes a port down the drain reason, the reason's form (printable
 * ASCII, no quotes, bounded, "+N more"), the verdict with an incomplete check; and the front end on
 * fixture trees: exit status, the first line, the dry-run command, --apply running scontrol with
 * the exact arguments (a recording stand-in first in PATH), --json, and --prom through the real
 * Prometheus parser. */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "verdict/check.h"
#include "health/health.h"
#include "testutil.h"
#include "base/util.h"

static void item(struct rp_health *h, struct rp_health_item *it, enum rp_health_code code, const char *dev)
{
	memset(it, 0, sizeof(*it));
	it->code = code;
	rp_strlcpy(it->device, dev, sizeof(it->device));
	snprintf(it->message, sizeof(it->message), "%s: %s", dev, rp_health_code_str(code));
	h->items = it;
	h->n_items = 1;
}

/* A port DOWN on a fixture (dual socket: mlx5_1 port 1 DOWN, Disabled) is the drain reason, in the
 * form Slurm's reason field takes; the node is unhealthy. */
static void test_port_down_reason(void **state)
{
	struct rp_fx fx;
	struct rp_node node;
	struct rp_health h = { 0 };
	struct rp_health_opts ho = { .dmabuf = RP_TRI_FALSE };
	struct rp_check c = { 0 };
	char reason[RP_CHECK_REASON_MAX + 1];

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_dual_socket, &node);
	assert_int_equal(rp_health_check(&node, &ho, &h), 0);
	assert_int_equal(rp_check_from_node(&c, &node), 0);
	/* a WARN from another source first: the order must still put the FAIL first */
	assert_int_equal(rp_check_add(&c, RP_CHECK_WARN, RP_CHECK_SRC_NCCL, "gdr_disabled", "", NULL, "x"), 0);
	assert_int_equal(rp_check_from_health(&c, &node, &h), 0);
	rp_check_sort(&c);
	assert_int_equal(rp_check_status(&c), RP_CHECK_UNHEALTHY);
	assert_int_equal(c.items[0].sev, RP_CHECK_FAIL);
	assert_string_equal(c.items[0].code, "port_down");
	assert_string_equal(rp_check_drain_reason(&c, reason, sizeof(reason)), "rdmaprobe: mlx5_1:1 DOWN (phys Disabled)");
	rp_check_fini(&c);
	rp_check_fini(&c);   /* safe twice */
	rp_health_fini(&h);
	rp_test_discover_done(&fx, &node);
}

/* Which health codes fail the node and which only warn; notes are left out. */
static void test_health_classes(void **state)
{
	static const struct { enum rp_health_code code; int sev; } cases[] = {
		{ RP_HC_PORT_DOWN, RP_CHECK_FAIL }, { RP_HC_PORT_NO_SM, RP_CHECK_FAIL },
		{ RP_HC_LINK_DEGRADED, RP_CHECK_FAIL }, { RP_HC_PCIE_DEGRADED, RP_CHECK_FAIL },
		{ RP_HC_PCIE_BOTTLENECK, RP_CHECK_WARN }, { RP_HC_ACS_REDIRECT, RP_CHECK_WARN },
		{ RP_HC_IOMMU_TRANSLATED, RP_CHECK_WARN }, { RP_HC_GPUDIRECT_UNAVAILABLE, RP_CHECK_WARN },
		{ RP_HC_ACS_UNREADABLE, -1 }, { RP_HC_GPU_LINK_IDLE, -1 }, { RP_HC_GPUDIRECT_UNKNOWN, -1 },
	};
	struct rp_node node = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rp_health h = { 0 };
		struct rp_health_item it;
		struct rp_check c = { 0 };

		item(&h, &it, cases[i].code, "mlx5_0:1");
		assert_int_equal(rp_check_from_health(&c, &node, &h), 0);
		if (cases[i].sev < 0) {
			assert_int_equal(c.n, 0);
			assert_int_equal(rp_check_status(&c), RP_CHECK_HEALTHY);
		} else {
			assert_int_equal(c.n, 1);
			assert_int_equal(c.items[0].sev, cases[i].sev);
			assert_int_equal(rp_check_status(&c), cases[i].sev == RP_CHECK_FAIL ? RP_CHECK_UNHEALTHY : RP_CHECK_HEALTHY);
		}
		rp_check_fini(&c);
	}
}

/* Unhealthy beats incomplete (a known fault is drained even when the budget ran out); incomplete
 * alone is unknown (exit 3); warnings alone are healthy. */
static void test_status(void **state)
{
	struct rp_check c = { 0 };

	(void)state;
	assert_int_equal(rp_check_status(&c), RP_CHECK_HEALTHY);
	assert_int_equal(rp_check_add(&c, RP_CHECK_WARN, RP_CHECK_SRC_LOOPBACK, "lossy", "rxe0:1", NULL, "m"), 0);
	assert_int_equal(rp_check_status(&c), RP_CHECK_HEALTHY);
	rp_check_set_incomplete(&c, "the --budget ran out");
	rp_check_set_incomplete(&c, "second");
	assert_string_equal(c.incomplete_why, "the --budget ran out");
	assert_int_equal(rp_check_status(&c), RP_CHECK_UNKNOWN);
	assert_int_equal(rp_check_add(&c, RP_CHECK_FAIL, RP_CHECK_SRC_NCCL, "no_match", "", NULL, "m"), 0);
	assert_int_equal(rp_check_status(&c), RP_CHECK_UNHEALTHY);
	rp_check_fini(&c);
}

/* Loopback results: a failed self pair fails with its status code, an interrupted or unconfirmed
 * one is not a finding, a lossy one warns. */
static void test_pairs(void **state)
{
	struct rp_pair_result r[3];
	struct rp_check c = { 0 };
	char reason[RP_CHECK_REASON_MAX + 1];

	(void)state;
	for (int i = 0; i < 3; i++) {
		rp_pair_result_init(&r[i], NULL, NULL);
		snprintf(r[i].src.device, sizeof(r[i].src.device), "mlx5_%d", i);
		r[i].src.port = 1;
		r[i].dst = r[i].src;
	}
	rp_pair_result_fail(&r[0], RP_ST_RETRY_EXCEEDED, "transport retry counter exceeded");
	r[1].status = RP_ST_INTERRUPTED;
	r[2].status = RP_ST_OK;
	r[2].warnings = (1u << RP_WARN_LOSSY) | (1u << RP_WARN_NOMINAL_RATE);
	assert_int_equal(rp_check_from_pairs(&c, r, 3), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.items[0].sev, RP_CHECK_FAIL);
	assert_string_equal(c.items[0].code, "retry_exceeded");
	assert_int_equal(c.items[1].sev, RP_CHECK_WARN);
	assert_string_equal(c.items[1].code, "lossy");
	rp_check_sort(&c);
	assert_string_equal(rp_check_drain_reason(&c, reason, sizeof(reason)), "rdmaprobe: mlx5_0:1 loopback retry_exceeded");
	rp_check_fini(&c);
	/* failed once and never measured again: no finding (never a drain on one sample) */
	r[0].confirm = RP_CONFIRM_UNCONFIRMED;
	assert_int_equal(rp_check_from_pairs(&c, r, 1), 0);
	assert_int_equal(c.n, 0);
	r[0].confirm = RP_CONFIRM_CONFIRMED;
	assert_int_equal(rp_check_from_pairs(&c, r, 1), 0);
	assert_int_equal(rp_check_status(&c), RP_CHECK_UNHEALTHY);
	rp_check_fini(&c);
}

/* The reason is printable ASCII with no quote, backslash, backtick or '$', at most
 * RP_CHECK_REASON_MAX bytes, and always says how many more failures there are. */
static void test_reason_form(void **state)
{
	struct rp_check c = { 0 };
	char reason[RP_CHECK_REASON_MAX + 1], big[200];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(rp_check_add(&c, RP_CHECK_FAIL, RP_CHECK_SRC_HEALTH, "c", "d", "a\"b'c\\d`e$f\ng\xc3\xa9h", "m"), 0);
	assert_string_equal(rp_check_drain_reason(&c, reason, sizeof(reason)), "rdmaprobe: a_b_c_d_e_f_g__h");
	assert_int_equal(rp_check_add(&c, RP_CHECK_FAIL, RP_CHECK_SRC_HEALTH, "c", "d", big, "m"), 0);
	assert_int_equal(rp_check_add(&c, RP_CHECK_FAIL, RP_CHECK_SRC_HEALTH, "c", "d", NULL, "m"), 0);
	assert_string_equal(c.items[2].summary, "d c");
	c.items[0] = c.items[1];   /* the long one first */
	rp_check_drain_reason(&c, reason, sizeof(reason));
	assert_true(strlen(reason) <= RP_CHECK_REASON_MAX);
	assert_non_null(strstr(reason, " (+2 more)"));
	assert_int_equal(strncmp(reason, "rdmaprobe: xxx", 14), 0);
	/* a small buffer is never overrun */
	rp_check_drain_reason(&c, reason, 20);
	assert_true(strlen(reason) <= 19);
	rp_check_fini(&c);
}

/* The JSON: status, problems with every field, drain_reason and incomplete. */
static void test_json(void **state)
{
	struct rp_check c = { 0 };
	json_t *o;

	(void)state;
	assert_int_equal(rp_check_add(&c, RP_CHECK_FAIL, RP_CHECK_SRC_HEALTH, "port_down", "mlx5_3:1",
				      "mlx5_3:1 DOWN (phys Disabled)", "long text"), 0);
	rp_check_set_incomplete(&c, "why");
	o = rp_check_json(&c);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "status")), "unhealthy");
	assert_string_equal(json_string_value(json_object_get(o, "drain_reason")), "rdmaprobe: mlx5_3:1 DOWN (phys Disabled)");
	assert_string_equal(json_string_value(json_object_get(o, "incomplete")), "why");
	json_t *p = json_array_get(json_object_get(o, "problems"), 0);
	assert_string_equal(json_string_value(json_object_get(p, "severity")), "fail");
	assert_string_equal(json_string_value(json_object_get(p, "source")), "health");
	assert_string_equal(json_string_value(json_object_get(p, "device")), "mlx5_3:1");
	assert_string_equal(json_string_value(json_object_get(p, "message")), "long text");
	json_decref(o);
	rp_check_fini(&c);
}

/* The front end on the dual-socket fixture: exit 1, the drain reason as the first line, then the
 * dry-run command; --apply runs scontrol (a stand-in first in PATH that records its arguments) with
 * exactly nodename=, state=drain and reason=; --apply without --slurm-drain is a usage error. */
static void test_cli_drain(void **state)
{
	struct rp_fx fx;
	struct rp_node node;
	char out[16384], cmd[8192], dir[256];
	int rc;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_dual_socket, &node);
	rc = rp_test_run_bin(out, sizeof(out), "check --sysfs-root '%s' --nccl-version 2.28.9 --slurm-drain --node n1",
			     fx.root);
	assert_int_equal(rc, 1);
	assert_int_equal(strncmp(out, "rdmaprobe: mlx5_1:1 DOWN (phys Disabled)\n", 41), 0);
	assert_non_null(strstr(out, "\ndry run (--apply runs it): scontrol update nodename=n1 state=drain "
				    "reason=\"rdmaprobe: mlx5_1:1 DOWN (phys Disabled)\"\n"));
	rc = rp_test_run_bin(out, sizeof(out), "check --sysfs-root '%s' --apply 2>&1", fx.root);
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "--apply goes with --slurm-drain"));

	snprintf(dir, sizeof(dir), "%s/bin", rp_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && printf '#!/bin/sh\\nfor a; do echo \"[$a]\"; done >\"%s/args\"\\n' "
		 ">'%s/scontrol' && chmod +x '%s/scontrol'", dir, dir, dir, dir);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	/* the stand-in first in the child's PATH */
	snprintf(cmd, sizeof(cmd), "PATH='%s':\"$PATH\" '%s' check --sysfs-root '%s' --slurm-drain --apply --node n1 "
		 "--json >'%s/out.json'; echo \"rc=$?\"; cat '%s/args'", dir, rp_test_bin(), fx.root, dir, dir);
	assert_int_equal(rp_test_run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "rc=1\n[update]\n[nodename=n1]\n[state=drain]\n[reason=rdmaprobe: mlx5_1:1 DOWN (phys Disabled)]\n");
	snprintf(cmd, sizeof(cmd), "%s/out.json", dir);
	json_t *j = json_load_file(cmd, 0, NULL);
	assert_non_null(j);
	json_t *d = json_object_get(j, "drain");
	assert_true(json_is_true(json_object_get(d, "applied")));
	assert_int_equal(json_integer_value(json_object_get(d, "exit")), 0);
	assert_string_equal(json_string_value(json_object_get(j, "status")), "unhealthy");
	assert_non_null(json_object_get(j, "nccl"));
	assert_non_null(json_object_get(j, "health"));
	json_decref(j);
	rp_test_discover_done(&fx, &node);
}

/* Issue 26 item 3: the health verdict decides the exit status; a --prom file that cannot be
 * written (RLIMIT_FSIZE 0, SIGXFSZ ignored: every write fails with EFBIG after the path check
 * passed) is said on stderr and can only make it worse: unhealthy stays 1, healthy becomes 3. */
static void test_cli_prom_unwritable_keeps_verdict(void **state)
{
	struct rp_fx fx;
	struct rp_node node;
	char out[16384], cmd[8192];
	int rc;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_dual_socket, &node);
	rc = rp_test_run_bin(out, sizeof(out), "check --sysfs-root '%s' --nccl-version 2.28.9 --no-loopback --prom "
			     "'%s/u.prom' 2>&1", fx.root, rp_test_tmpdir());
	assert_int_equal(rc, 1);   /* written: the baseline */
	snprintf(cmd, sizeof(cmd), "trap '' XFSZ; ulimit -f 0; exec '%s' check --sysfs-root '%s' --nccl-version 2.28.9 "
		 "--no-loopback --prom '%s/u2.prom' 2>&1", rp_test_bin(), fx.root, rp_test_tmpdir());
	rc = rp_test_run(cmd, out, sizeof(out));
	if (!strstr(out, "could not write ") || !strstr(out, "u2.prom"))
		fail_msg("no word of the failed --prom (exit %d):\n%s", rc, out);
	assert_int_equal(rc, 1);
	rp_test_discover_done(&fx, &node);

	rp_test_discover(&fx, rp_fx_machine_dgx_h100, &node);
	snprintf(cmd, sizeof(cmd), "trap '' XFSZ; ulimit -f 0; exec '%s' check --sysfs-root '%s' --nccl-version 2.28.9 "
		 "--no-loopback --prom '%s/u3.prom' 2>&1", rp_test_bin(), fx.root, rp_test_tmpdir());
	rc = rp_test_run(cmd, out, sizeof(out));
	assert_non_null(strstr(out, "could not write "));
	assert_non_null(strstr(out, "u3.prom"));
	assert_int_equal(rc, 3);
	rp_test_discover_done(&fx, &node);
}

/* Healthy (dgx fixture, static checks only): exit 0 and "healthy"; without --no-loopback a fixture
 * cannot be looped back: exit 3, "could not check"; --prom carries the status through the real
 * parser. */
static void test_cli_healthy_unknown_prom(void **state)
{
	struct rp_fx fx;
	struct rp_node node;
	char out[16384], cmd[2048];

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_dgx_h100, &node);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "check --sysfs-root '%s' --nccl-version 2.28.9 --no-loopback "
					 "--slurm-drain", fx.root), 0);
	assert_int_equal(strncmp(out, "rdmaprobe: healthy: 8 adapters", 30), 0);
	assert_null(strstr(out, "scontrol"));
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "check --sysfs-root '%s' --nccl-version 2.28.9 --prom '%s/c.prom'",
					 fx.root, rp_test_tmpdir()), 3);
	assert_int_equal(strncmp(out, "rdmaprobe: could not check: ", 28), 0);
	snprintf(cmd, sizeof(cmd),
		 "for py in python3 /usr/bin/python3; do if \"$py\" -c 'import prometheus_client' 2>/dev/null; then "
		 "exec \"$py\" tests/prom_check.py '%s/c.prom' 2>&1; fi; done; exit 3", rp_test_tmpdir());
	int rc = rp_test_run(cmd, out, sizeof(out));
	if (rc == 3) {
		print_message("SKIPPED: no python3 with prometheus_client\n");
	} else {
		assert_int_equal(rc, 0);
		assert_non_null(strstr(out, "rdmaprobe_check_status{command=\"check\"} 3.0\n"));
		/* the run did not pass: an alert on run_pass == 0 sees it (before: 1, no pair had failed) */
		assert_non_null(strstr(out, "rdmaprobe_run_pass{command=\"check\"} 0.0\n"));
	}
	rp_test_discover_done(&fx, &node);
}

/* Issue 26 items 14 and 8: --json FILE as every command takes it, beside --prom (it was a flag:
 * "--prom x --json check.json" failed, "unexpected argument"); "-" (or the old bare --json) is stdout
 * instead of the text; a path that cannot be written is refused before the check; a --node that is
 * not UTF-8 no longer loses the JSON. */
static void test_cli_json_file(void **state)
{
	struct rp_fx fx;
	struct rp_node node;
	char out[65536], path[512], prom[512];
	json_t *j;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_dgx_h100, &node);
	snprintf(path, sizeof(path), "%s/check.json", rp_test_tmpdir());
	snprintf(prom, sizeof(prom), "%s/check.prom", rp_test_tmpdir());
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "check --sysfs-root '%s' --nccl-version 2.28.9 --no-loopback "
					 "--prom '%s' --json '%s'", fx.root, prom, path), 0);
	assert_int_equal(strncmp(out, "rdmaprobe: healthy: 8 adapters", 30), 0);   /* the text as well */
	j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "status")), "healthy");
	json_decref(j);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "check --sysfs-root '%s' --nccl-version 2.28.9 --no-loopback "
					 "--json - --prom '%s'", fx.root, prom), 0);
	j = json_loads(out, 0, NULL);   /* stdout is the JSON alone */
	assert_non_null(j);
	json_decref(j);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "check --sysfs-root '%s' --no-loopback --json /dev/full 2>&1",
					 fx.root), 2);
	assert_non_null(strstr(out, "--json /dev/full: cannot write the report there"));
	rp_test_discover_done(&fx, &node);

	rp_test_discover(&fx, rp_fx_machine_dual_socket, &node);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "check --sysfs-root '%s' --nccl-version 2.28.9 --slurm-drain "
					 "--node \"$(printf 'bad\\377name')\" --json '%s' 2>&1", fx.root, path), 1);
	assert_null(strstr(out, "could not write"));
	j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "node")), "bad?name");
	json_decref(j);
	rp_test_discover_done(&fx, &node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_port_down_reason),
		cmocka_unit_test(test_health_classes),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_pairs),
		cmocka_unit_test(test_reason_form),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_cli_drain),
		cmocka_unit_test(test_cli_healthy_unknown_prom),
		cmocka_unit_test(test_cli_prom_unwritable_keeps_verdict),
		cmocka_unit_test(test_cli_json_file),
	};

	return cmocka_run_group_tests(tests, rp_test_tmpdir_setup, rp_test_tmpdir_teardown);
}
