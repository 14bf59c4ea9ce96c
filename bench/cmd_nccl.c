/* cmd_nccl.c: 'rdmaprobe nccl': what NCCL would do on this node under NCCL_IB_HCA and the other NCCL
 * variables, and what is likely wrong with it.
 *
 * The rules are those of one NCCL release (--nccl-version, else the libnccl.so.2 this process would
 * load, else the newest modelled); NCCL_* variables are read as that NCCL reads them, never refused.
 *
 * The static health checks (lib/health/health.h) of the selected ports follow: link, PCIe and MTU faults of
 * the ports NCCL would use, and node-wide GPUDirect faults. They are warnings for the operator and do
 * not change the exit status (NCCL itself runs on a degraded link, slower).
 *
 * Exit status: 0 the selection is usable; 1 nothing would be selected or a fatal warning (one where
 * NCCL would misbehave, crash or disable IB, see rp_nccl_warn_fatal()); 2 usage error (a bad
 * option, --nccl-version older than 2.18.1); 3 environment (the sysfs root cannot be read, out of
 * memory).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmds.h"
#include "health/health.h"
#include "health/health_json.h"
#include "ops_cli.h"
#include "report/report.h"
#include "nccl/nccl.h"
#include "nccl/nccl_version.h"
#include "discover/node.h"
#include "opts.h"
#include "discover/topo_cpu.h"
#include "base/util.h"

struct nccl_opts {
	const char *hca;
	bool hca_seen;
	int gid_index;
	bool gid_seen;
	const char *sysfs_root;
	const char *nccl_version;
	const char *python;
	const char *json;             /* --json FILE; "-" standard output (then no text) */
};

static const char *const usage_line =
	"[--hca SPEC] [--gid-index N] [--nccl-version X.Y.Z] [--python ENV] [--sysfs-root DIR] [--json FILE]";

/* The health checks of the node, cut to the ports NCCL would select (health_fini() it in every case);
 * the ACS check's nearest adapters as env's release merges bus ids. */
static int selected_health(const struct rp_node *node, const struct rp_nccl_result *res,
			   const struct rp_nccl_env *env, const char *root, struct rp_health *out)
{
	struct rp_topo_merge merge;
	struct rp_health_opts hopts = { .cmdline_path = root ? NULL : "/proc/cmdline", .dmabuf = RP_TRI_UNKNOWN,
					.probe_host = !root, .merge = &merge };
	struct rp_health_port_ref *refs = calloc(res->n_selected + 1, sizeof(*refs));
	struct rp_health all;
	int rc;

	memset(out, 0, sizeof(*out));
	rp_nccl_topo_merge(env, &merge);
	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < res->n_selected; i++)
		refs[i] = (struct rp_health_port_ref){ res->selected[i].hca, res->selected[i].port };
	rc = rp_health_check(node, &hopts, &all);
	rc = rc ? rc : rp_health_for_ports(node, &all, refs, res->n_selected, out);
	rp_health_fini(&all);
	free(refs);
	return rc;
}

static void print_health(const struct rp_health *h)
{
	size_t warnings = 0;

	for (size_t i = 0; i < h->n_items; i++)
		warnings += !rp_health_code_is_note(h->items[i].code);
	printf("\nhealth of the selected ports:%s\n", warnings ? "" : " no warning");
	for (int notes = 0; notes < 2; notes++)
		for (size_t i = 0; i < h->n_items; i++)
			if (rp_health_code_is_note(h->items[i].code) == (notes == 1))
				printf("  %-7s %-18s %s\n", notes ? "note" : "WARNING", rp_health_code_str(h->items[i].code),
				       h->items[i].message);
	for (size_t i = 0; i < h->n_rates; i++)
		printf("  rate    %s:%d %s\n", h->rates[i].device, h->rates[i].port, h->rates[i].message);
}

static int write_json(const char *path, const struct rp_nccl_result *res, const struct rp_nccl_env *env,
		      const struct rp_node *node, const struct rp_nccl_version_found *ver, const struct rp_health *h)
{
	json_t *root = rp_nccl_result_json(res, env);
	json_t *jv = rp_nccl_version_json(ver);
	json_t *jh = rp_health_to_json(h);
	int rc;

	if (!root || !jv || !jh) {
		json_decref(root);
		json_decref(jv);
		json_decref(jh);
		rp_cli_write_failed("nccl", path, 0, "report");
		return -ENOMEM;
	}
	rc = json_object_set_new(root, "nccl_version", jv);
	rc = rc ? rc : json_object_set_new(root, "health", jh);
	rc = rc ? rc : json_object_set_new(root, "sysfs_root", json_string(node->sysfs_root));
	rc = rc ? rc : json_object_set_new(root, "verbs_consulted", json_boolean(node->verbs_consulted));
	if (!rc) {
		/* The CPU whose inter-socket figure caps SYS paths in the per-GPU choice, and its source. */
		struct rp_topo_cpu cpu;

		rp_topo_cpu_read(node->sysfs_root, env->version, &cpu);
		rc = json_object_set_new(root, "topology_cpu", rp_topo_cpu_json(&cpu));
	}
	if (!rc && node->no_device_reason[0])
		rc = json_object_set_new(root, "no_device_reason", json_string(node->no_device_reason));
	if (rc) {
		json_decref(root);
		rp_cli_write_failed("nccl", path, 0, "report");
		return -ENOMEM;
	}
	rc = rp_report_write_json(root, path);
	json_decref(root);
	if (rc)
		rp_cli_write_failed("nccl", path, rc, NULL);
	return rc;
}

/* "::ffff:10.0.0.1 (RoCE v2)" for the GID a selected RoCE port uses, "" when unknown. */
static void gid_note(const struct rp_node *node, const struct rp_nccl_sel *s, char *buf, size_t len)
{
	const struct rp_port *p = rp_hca_find_port(&node->hcas[s->hca_idx], s->port);

	buf[0] = '\0';
	for (size_t i = 0; p && i < p->n_gids; i++) {
		const struct rp_gid *g = &p->gids[i];

		if (g->index == s->gid_index) {
			char addr[INET6_ADDRSTRLEN];

			if (!inet_ntop(AF_INET6, g->raw, addr, sizeof(addr)))
				rp_strlcpy(addr, g->text, sizeof(addr));
			snprintf(buf, len, "%s (%s)", addr, rp_gid_type_str(g->type));
			return;
		}
	}
}

/* The text report's head: the release, the variables, where the ports were read. */
static void print_head(const struct rp_nccl_result *res, const struct rp_nccl_env *env, const struct rp_node *node,
		       const char *spec_source, const struct rp_nccl_version_found *ver)
{
	char v[16];

	rp_nccl_version_format(ver->version, v, sizeof(v));
	printf("NCCL             %s (%s%s%s)\n", v, ver->source == RP_NCCL_VSRC_LIBNCCL ? "from " :
	       ver->source == RP_NCCL_VSRC_OPTION ? "--nccl-version" : "default: ",
	       ver->source == RP_NCCL_VSRC_LIBNCCL ? ver->library : "",
	       ver->source == RP_NCCL_VSRC_DEFAULT ? ver->why : "");

	if (res->hca_spec)
		printf("NCCL_IB_HCA      '%s' (%s)\n", res->hca_spec, spec_source);
	else
		printf("NCCL_IB_HCA      unset: NCCL considers every device\n");
	printf("other variables  NCCL_IB_GID_INDEX=%d%s NCCL_IB_ADDR_FAMILY=%s NCCL_IB_ROCE_VERSION_NUM=%d "
	       "NCCL_NET_GDR_LEVEL=%s%s%s\n", rp_nccl_env_gid_index(env), rp_nccl_env_gid_index(env) < 0 ? " (automatic)" : "",
	       env->addr_family == AF_INET6 ? "AF_INET6" : "AF_INET", env->roce_version, rp_path_str(env->gdr_level),
	       env->addr_range ? " NCCL_IB_ADDR_RANGE=" : "", env->addr_range ? env->addr_range : "");
	if (!node->verbs_consulted)
		printf("source           sysfs under %s (verbs not consulted)\n", node->sysfs_root);
	if (node->n_hcas == 0 && node->no_device_reason[0])
		printf("adapters         none: %s\n", node->no_device_reason);

}

/* The ports NCCL would use, in its order. */
static void print_selected(const struct rp_nccl_result *res, const struct rp_node *node)
{
	char note[128];

	printf("\nNCCL would use %zu port%s, in its order:\n", res->n_selected, res->n_selected == 1 ? "" : "s");
	for (size_t i = 0; i < res->n_selected; i++) {
		const struct rp_nccl_sel *s = &res->selected[i];

		printf("  [%zu] %s:%d  %-10s", i, s->hca, s->port, rp_link_layer_str(s->link_layer));
		if (s->link_layer == RP_LL_ETHERNET && s->gid_index >= 0) {
			gid_note(node, s, note, sizeof(note));
			printf("  GID index %d  %s", s->gid_index, note);
		} else if (s->gid_index < 0) {
			printf("  NCCL fails this port (see the warnings)");
		} else if (s->gid_index > 0) {
			printf("  GID index %d (routable FLID)", s->gid_index);
		}
		if (s->rail != -1 || s->plane != -1)
			printf("  rail %d plane %d", s->rail, s->plane);
		putchar('\n');
	}

}

/* Each GPU's adapter, path and GPUDirect RDMA. */
static void print_gpus(const struct rp_nccl_result *res)
{
	printf("\n");
	if (res->n_gpus == 0)
		printf("GPUs: none found\n");
	else
		printf("%-14s %-12s %-5s %s\n", "GPU", "adapter", "path", "GPUDirect RDMA");
	for (size_t i = 0; i < res->n_gpus; i++) {
		const struct rp_nccl_gpu_choice *g = &res->gpus[i];

		if (g->hca[0])
			printf("%-14s %-12s %-5s %s\n", g->pci, g->hca, rp_path_str(g->path), g->gdr ? "yes" : "no");
		else
			printf("%-14s %-12s %-5s %s\n", g->pci, "-", "-", "no (no adapter selected)");
	}

}

/* The warnings; how many are fatal. */
static size_t print_warnings(const struct rp_nccl_result *res)
{
	size_t fatal = 0;

	if (res->n_warnings)
		printf("\nwarnings:\n");
	for (size_t i = 0; i < res->n_warnings; i++) {
		const struct rp_nccl_warning *w = &res->warnings[i];
		bool f = rp_nccl_warn_fatal(w->code);

		fatal += f;
		printf("  %-5s %-18s %s\n", f ? "FATAL" : "note", rp_nccl_warn_code(w->code), w->message);
	}

	return fatal;
}

/* The recommendation and the verdict. */
static void print_end(const struct rp_nccl_result *res, size_t fatal)
{
	printf("\n");
	if (res->recommended)
		printf("recommended      NCCL_IB_HCA='%s'\n", res->recommended);
	else
		printf("recommended      none: no usable port on this node\n");
	if (rp_nccl_result_usable(res))
		printf("verdict          usable\n");
	else if (res->n_selected == 0)
		printf("verdict          NCCL finds no device and falls back to sockets\n");
	else
		printf("verdict          NCCL would misbehave (%zu fatal warning%s)\n", fatal, fatal == 1 ? "" : "s");
	if (access("/etc/nccl.conf", F_OK) == 0 || getenv("NCCL_CONF_FILE"))
		printf("note             NCCL also reads variables from /etc/nccl.conf or NCCL_CONF_FILE; this report "
		       "uses the environment only\n");
}

static void print_text(const struct rp_nccl_result *res, const struct rp_nccl_env *env, const struct rp_node *node,
		       const char *spec_source, const struct rp_nccl_version_found *ver, const struct rp_health *h)
{
	size_t fatal;

	print_head(res, env, node, spec_source, ver);
	print_selected(res, node);
	print_gpus(res);
	fatal = print_warnings(res);
	print_health(h);
	print_end(res, fatal);
}

/* The release whose rules apply and the NCCL_* settings, --hca and --gid-index over the
 * environment's; *source_p says where the spec came from. RP_EXIT_GO_ON, or the exit status. */
static int nccl_env_setup(const struct nccl_opts *o, struct rp_nccl_version_found *ver, struct rp_nccl_env *env,
			  const char **source_p)
{
	/* --hca replaces $NCCL_IB_HCA: a malformed value there must not stop the evaluation of SPEC. */
	if (o->hca_seen)
		unsetenv("NCCL_IB_HCA");
	if (o->nccl_version) {
		if (rp_nccl_version_from_option(o->nccl_version, ver))
			return RP_EXIT_USAGE;
	} else {
		rp_nccl_version_find(o->python, ver);
	}
	if (rp_nccl_env_load(env))
		return RP_EXIT_USAGE;
	env->version = ver->version;
	if (o->hca_seen) {
		if (strnlen(o->hca, RP_NCCL_SPEC_MAX + 1) > RP_NCCL_SPEC_MAX) {
			fprintf(stderr, "rdmaprobe nccl: --hca is longer than %d characters (NCCL_IB_HCA)\n", RP_NCCL_SPEC_MAX);
			return RP_EXIT_USAGE;
		}
		env->ib_hca = o->hca;
		*source_p = "from --hca";
	}
	if (o->gid_seen) {
		env->gid_index = o->gid_index;
		env->gid_index_set = true;
	}
	return RP_EXIT_GO_ON;
}

int cmd_nccl(int argc, char **argv)
{
	struct nccl_opts o = { .gid_index = -1 };
	const struct rp_opt table[] = {
		{ "hca", 0, RP_OPT_STR, &o.hca, 0, 0, "SPEC", "NCCL_IB_HCA value to evaluate (default: $NCCL_IB_HCA)", &o.hca_seen },
		{ "gid-index", 0, RP_OPT_INT, &o.gid_index, -1, 65535, "N",
		  "NCCL_IB_GID_INDEX to evaluate (-1 automatic; default: $NCCL_IB_GID_INDEX)", &o.gid_seen },
		{ "nccl-version", 0, RP_OPT_STR, &o.nccl_version, 0, 0, "X.Y.Z",
		  "apply this NCCL release's rules (default: ncclGetVersion() of the libnccl.so.2 this process loads)", NULL },
		{ "python", 0, RP_OPT_STR, &o.python, 0, 0, "ENV",
		  "look first for the nvidia-nccl-cu* wheel's libnccl in this Python environment (or its python)", NULL },
		{ "sysfs-root", 0, RP_OPT_STR, &o.sysfs_root, 0, 0, "DIR", "read DIR instead of /sys (verbs not consulted)", NULL },
		{ "json", 0, RP_OPT_OUTPUT, &o.json, 0, 0, "FILE", "write JSON to FILE (- or a bare --json: stdout, instead of the text)", NULL },
		{ 0 },
	};
	struct rp_discover_opts dopts = { 0 };
	struct rp_nccl_result res = { 0 };
	struct rp_health health = { 0 };
	struct rp_node node = { 0 };
	struct rp_nccl_version_found ver;
	struct rp_nccl_env env;
	const char *source = "from $NCCL_IB_HCA";
	int rc, status;

	rc = rp_opts_parse("nccl", usage_line, table, argc, argv, NULL, 0, NULL);
	if (rc)
		return rc > 0 ? RP_EXIT_OK : RP_EXIT_USAGE;
	if (o.json && rp_report_path_check(o.json) != 0) {
		fprintf(stderr, "rdmaprobe nccl: --json %s: cannot write the report there\n", o.json);
		return RP_EXIT_USAGE;
	}
	rc = nccl_env_setup(&o, &ver, &env, &source);
	if (rc != RP_EXIT_GO_ON)
		return rc;

	dopts.sysfs_root = o.sysfs_root;
	rc = rp_node_discover(&node, &dopts);
	if (rc) {
		status = RP_EXIT_ENV;
		goto out;
	}
	rc = rp_nccl_evaluate(&node, &env, &res);
	if (rc) {
		status = rc == -ENOMEM ? RP_EXIT_ENV : RP_EXIT_USAGE;
		goto out;
	}
	if (selected_health(&node, &res, &env, o.sysfs_root, &health)) {
		fprintf(stderr, "rdmaprobe nccl: out of memory in the health checks\n");
		status = RP_EXIT_ENV;
		goto out;
	}
	if (!o.json || strcmp(o.json, "-") != 0)
		print_text(&res, &env, &node, source, &ver, &health);
	if (o.json && write_json(o.json, &res, &env, &node, &ver, &health)) {
		status = RP_EXIT_ENV;
		goto out;
	}
	status = rp_nccl_result_usable(&res) ? RP_EXIT_OK : RP_EXIT_FAIL;
out:
	rp_health_fini(&health);
	rp_nccl_result_fini(&res);
	rp_node_fini(&node);
	return status;
}
