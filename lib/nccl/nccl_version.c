/* nccl_version.c: finding the NCCL release this process would load; see nccl_version.h. */
#include "nccl/nccl_version.h"

#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "nccl/nccl_rules.h"
#include "base/strbuf.h"
#include "base/util.h"

#define MAX_CANDS 16

void rp_nccl_version_describe(const struct rp_nccl_version_found *f, char *buf, size_t len)
{
	char v[16];

	char newer[40] = "";

	rp_nccl_version_format(f->version, v, sizeof(v));
	if (rp_nccl_newer_than_model(f->version, NULL, 0)) {
		char m[16];

		rp_nccl_version_format(RP_NCCL_VERSION_NEWEST, m, sizeof(m));
		snprintf(newer, sizeof(newer), "; rules of %s", m);
	}
	if (f->source == RP_NCCL_VSRC_LIBNCCL)
		snprintf(buf, len, "%s (from %s%s)", v, f->library, newer);
	else if (f->source == RP_NCCL_VSRC_OPTION)
		snprintf(buf, len, "%s (--nccl-version%s)", v, newer);
	else
		snprintf(buf, len, "%s (default: %s)", v, f->why);
}

const char *rp_nccl_version_source_str(enum rp_nccl_version_source s)
{
	switch (s) {
	case RP_NCCL_VSRC_LIBNCCL:
		return "libnccl";
	case RP_NCCL_VSRC_OPTION:
		return "option";
	default:
		return "default";
	}
}

/* NCCL's version code to ours: since 2.9 it is major*10000 + minor*100 + patch; before,
 * major*1000 + minor*100 + patch. 0 when impossible. */
static uint32_t version_from_code(int code)
{
	if (code >= 20900)
		return (uint32_t)code;
	if (code >= 1000 && code < 10000)
		return RP_NCCL_V((uint32_t)code / 1000, (uint32_t)code % 1000 / 100, (uint32_t)code % 100);
	return 0;
}

int rp_nccl_version_load(const char *lib, uint32_t *v_p)
{
	int (*get)(int *);
	void *h;
	int code = 0, rc;

	h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return -ENOENT;
	*(void **)&get = dlsym(h, "ncclGetVersion");
	if (!get) {
		dlclose(h);
		return -ENOSYS;
	}
	rc = get(&code);
	dlclose(h);
	if (rc != 0 || !(*v_p = version_from_code(code)))
		return -EIO;
	return 0;
}

void rp_nccl_version_find_among(const char *const *cands, size_t n, struct rp_nccl_version_found *out)
{
	size_t len = 0;
	char v[16];

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		uint32_t ver;
		int rc = rp_nccl_version_load(cands[i], &ver);

		if (rc == 0) {
			out->version = ver;
			out->source = RP_NCCL_VSRC_LIBNCCL;
			rp_strlcpy(out->library, cands[i], sizeof(out->library));
			return;
		}
		len += (size_t)snprintf(out->why + len, len < sizeof(out->why) ? sizeof(out->why) - len : 0, "%s%s (%s)",
					i ? ", " : "", cands[i], rc == -ENOENT ? "not loadable" : rc == -ENOSYS ?
					"no ncclGetVersion" : "bad answer");
		if (len >= sizeof(out->why))
			len = sizeof(out->why) - 1;
	}
	out->version = RP_NCCL_VERSION_NEWEST;
	out->source = RP_NCCL_VSRC_DEFAULT;
	rp_nccl_version_format(out->version, v, sizeof(v));
	if (n == 0)
		snprintf(out->why, sizeof(out->why), "no library to try");
	len = strlen(out->why);
	snprintf(out->why + len, sizeof(out->why) - len, ": using the newest modelled release %s", v);
}

/* The prefix of a Python environment: the directory itself, or two levels above its python
 * executable (<env>/bin/python3). */
static void python_prefix(const char *python, char *buf, size_t len)
{
	struct stat st;
	char *slash;

	rp_strlcpy(buf, python, len);
	if (stat(python, &st) == 0 && S_ISDIR(st.st_mode))
		return;
	for (int i = 0; i < 2; i++) {
		slash = strrchr(buf, '/');
		if (!slash) {
			rp_strlcpy(buf, ".", len);
			return;
		}
		*slash = '\0';
	}
}

void rp_nccl_version_find(const char *python, struct rp_nccl_version_found *out)
{
	static const char *const layouts[] = {
		"lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
		"lib64/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
		"local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2",
		"lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2",
	};
	const char *cands[MAX_CANDS];
	char prefix[RP_PATHBUF], pattern[RP_PATHBUF + 96];
	glob_t g[RP_ARRAY_SIZE(layouts)];
	size_t n = 0, ng = 0;

	if (python) {
		python_prefix(python, prefix, sizeof(prefix));
		for (size_t i = 0; i < RP_ARRAY_SIZE(layouts); i++) {
			snprintf(pattern, sizeof(pattern), "%s/%s", prefix, layouts[i]);
			if (glob(pattern, 0, NULL, &g[ng]) != 0) {
				globfree(&g[ng]);
				continue;
			}
			for (size_t k = 0; k < g[ng].gl_pathc && n < MAX_CANDS - 1; k++)
				cands[n++] = g[ng].gl_pathv[k];
			ng++;
		}
	}
	cands[n++] = "libnccl.so.2";
	rp_nccl_version_find_among(cands, n, out);
	for (size_t i = 0; i < ng; i++)
		globfree(&g[i]);
}

int rp_nccl_version_from_option(const char *text, struct rp_nccl_version_found *out)
{
	uint32_t v;

	memset(out, 0, sizeof(*out));
	if (rp_nccl_version_parse(text, &v))
		return rp_error(-EINVAL, "--nccl-version %s: not a version X.Y.Z", text);
	if (v < RP_NCCL_VERSION_OLDEST)
		return rp_error(-EINVAL, "--nccl-version %s: older than the oldest release modelled (2.18.1)", text);
	out->version = v;
	out->source = RP_NCCL_VSRC_OPTION;
	return 0;
}

struct json_t *rp_nccl_version_json(const struct rp_nccl_version_found *f)
{
	json_t *o = json_object();
	char v[16], r[16], msg[256];
	bool ok = o != NULL;

	rp_nccl_version_format(f->version, v, sizeof(v));
	rp_nccl_version_format(rp_nccl_version_modelled(f->version), r, sizeof(r));
	ok = ok && json_object_set_new(o, "version", json_string(v)) == 0;
	ok = ok && json_object_set_new(o, "source", json_string(rp_nccl_version_source_str(f->source))) == 0;
	ok = ok && json_object_set_new(o, "rules", json_string(r)) == 0;
	if (ok && f->source == RP_NCCL_VSRC_LIBNCCL)
		ok = json_object_set_new(o, "library", json_string(f->library)) == 0;
	if (ok && f->source == RP_NCCL_VSRC_DEFAULT && f->why[0])
		ok = json_object_set_new(o, "why", json_string(f->why)) == 0;
	/* exact: the rules applied are that release's own (a release read, not a newer one). */
	ok = ok && json_object_set_new(o, "exact", json_boolean(rp_nccl_version_is_release(f->version))) == 0;
	if (ok && rp_nccl_newer_than_model(f->version, msg, sizeof(msg))) {
		json_t *w = json_object();

		ok = w && json_object_set_new(w, "code", json_string("nccl_newer_than_model")) == 0 &&
		     json_object_set_new(w, "message", json_string(msg)) == 0;
		ok = json_object_set_new(o, "warning", w) == 0 && ok;
	}
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Whether node appears in v[0..upto) with release version. */
static bool node_seen(const struct rp_nccl_rank_version *v, size_t upto, const char *node, uint32_t version)
{
	for (size_t i = 0; i < upto; i++)
		if (v[i].version == version && strcmp(v[i].node, node) == 0)
			return true;
	return false;
}

/* Whether release version appears in v[0..upto). */
static bool version_seen(const struct rp_nccl_rank_version *v, size_t upto, uint32_t version)
{
	for (size_t i = 0; i < upto; i++)
		if (v[i].version == version)
			return true;
	return false;
}

bool rp_nccl_versions_differ(const struct rp_nccl_rank_version *v, size_t n, char *msg, size_t len)
{
	struct rp_sb sb;
	bool differ = false;

	for (size_t i = 1; i < n && !differ; i++)
		differ = v[i].version != v[0].version;
	if (len)
		msg[0] = '\0';
	if (!differ || !len)
		return differ;
	rp_sb_init(&sb);
	for (size_t i = 0; i < n; i++) {
		char ver[16];
		bool first = true;

		if (version_seen(v, i, v[i].version))
			continue;
		rp_nccl_version_format(v[i].version, ver, sizeof(ver));
		rp_sb_printf(&sb, "%s%s on ", sb.len ? "; " : "", ver);
		for (size_t j = i; j < n; j++) {
			if (v[j].version != v[i].version || node_seen(v, j, v[j].node, v[j].version))
				continue;
			rp_sb_printf(&sb, "%s%s", first ? "" : ", ", v[j].node);
			first = false;
		}
	}
	if (rp_sb_failed(&sb) || !sb.buf)
		snprintf(msg, len, "the nodes run different NCCL releases");
	else if (sb.len < len)
		memcpy(msg, sb.buf, sb.len + 1);
	else
		snprintf(msg, len, "%.*s...", (int)(len > 4 ? len - 4 : 0), sb.buf);
	rp_sb_fini(&sb);
	return true;
}
