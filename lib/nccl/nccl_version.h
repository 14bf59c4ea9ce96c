/* nccl_version.h: which NCCL release this process would load, so that rdmaprobe applies that
 * release's rules (nccl_rules.h).
 *
 * Found the way the job finds it: dlopen("libnccl.so.2") (LD_LIBRARY_PATH, the ld.so cache, the
 * default directories; NCCL documents no variable of its own for its library's location), and,
 * when a Python environment is given, first the nvidia-nccl-cu* wheel that PyTorch loads from it
 * (site-packages/nvidia/nccl/lib/libnccl.so.2 under the environment's lib/python3.X). The library is asked with
 * ncclGetVersion(), which needs no GPU. Nothing is kept loaded.
 */
#ifndef RP_NCCL_VERSION_H
#define RP_NCCL_VERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "discover/node.h"

enum rp_nccl_version_source {
	RP_NCCL_VSRC_DEFAULT,         /* no libnccl found: the newest modelled release */
	RP_NCCL_VSRC_LIBNCCL,         /* ncclGetVersion() of the library found */
	RP_NCCL_VSRC_OPTION,          /* given by the user (--nccl-version) */
};

struct rp_nccl_version_found {
	uint32_t version;             /* NCCL's code, 2.30.7 = 23007 */
	enum rp_nccl_version_source source;
	char library[RP_PATHBUF];     /* the library asked (RP_NCCL_VSRC_LIBNCCL), else "" */
	char why[256];                /* RP_NCCL_VSRC_DEFAULT: what was tried, for a person */
};

const char *rp_nccl_version_source_str(enum rp_nccl_version_source s);   /* "default", "libnccl", "option" */
/* For a person: "2.30.7 (from /usr/lib/libnccl.so.2)", "2.18.6 (--nccl-version)" or
 * "2.30.7 (default: <why>)", cut to len. */
void rp_nccl_version_describe(const struct rp_nccl_version_found *f, char *buf, size_t len);

/* dlopen(lib) and ncclGetVersion(). 0, -ENOENT (cannot be loaded), -ENOSYS (no ncclGetVersion),
 * -EIO (it returned an error or an impossible code). Does not log: a missing library is normal. */
int rp_nccl_version_load(const char *lib, uint32_t *v_p);
/* The first of n candidates (paths or sonames) that answers; else the newest modelled release,
 * with why saying what was tried. Always fills *out. */
void rp_nccl_version_find_among(const char *const *cands, size_t n, struct rp_nccl_version_found *out);
/* The candidates for python (a virtual environment or prefix directory, or its python
 * executable; NULL: none) then "libnccl.so.2", through rp_nccl_version_find_among(). */
void rp_nccl_version_find(const char *python, struct rp_nccl_version_found *out);
/* An explicit "X.Y.Z": 0, or -EINVAL (logged, naming --nccl-version) when malformed or older
 * than the oldest modelled release (2.18.1). */
int rp_nccl_version_from_option(const char *text, struct rp_nccl_version_found *out);

/* One rank's release, for comparing a job's nodes (the matrix). */
struct rp_nccl_rank_version {
	int rank;
	char node[RP_NAME_MAX];
	uint32_t version;
};

/* Whether v[0..n) name more than one release. When they do, msg gets, release by release in the
 * order first seen, the release and its nodes, each node once: "2.30.7 on node0, node2; 2.18.6 on
 * node1" (cut with "..." where len is too small). msg is "" when they agree. Does not log. */
bool rp_nccl_versions_differ(const struct rp_nccl_rank_version *v, size_t n, char *msg, size_t len);

/* {"version": "2.30.7", "source": ..., "library": ... (libnccl only), "rules": the release whose
 * rules apply, "exact": whether those are the release's own rules (false for a version newer than
 * the newest modelled, or between releases), "warning": {"code": "nccl_newer_than_model",
 * "message"} only for a newer one} (jansson); NULL when memory runs out. */
struct json_t;
struct json_t *rp_nccl_version_json(const struct rp_nccl_version_found *f);

#endif
