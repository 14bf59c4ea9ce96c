/* diff.h: compare two rdmaprobe JSON reports (loopback, pair or matrix; report.h's shape) run to run.
 *
 * Load: rp_diff_report_load() reads a file and validates every field the rules read (types, ranges,
 * status codes, that the summary counts the pairs); the first problem is logged once, naming the file
 * and the field ("old.json: pairs[3].src.port: expected an integer 0 to 255"), and -EINVAL returned.
 * Fields the rules do not know are kept: an endpoint's extra scalar fields (a writer may add firmware
 * or PCIe fields) are compared like the known ones.
 *
 * Pairs are matched by (src node, device, port, dst node, device, port, msg size); in matrix reports
 * (one size a run) by the direction alone, so a direction the sweep's probe found dead (4 KiB) and the
 * same direction failed at the bandwidth size are one pair. A pair that failed
 * before it was measured has msg_size 0 in the file; it is matched at the run's config.msg_size, and
 * when a size sweep leaves several such failures of one (src, dst) at that size, the first stands for
 * them (a warning says so). A pair whose status is "interrupted" was not measured and counts as absent
 * from its report. The rules:
 *   new_failure    failed in NEW, ok or absent in OLD                        regression
 *   not_measured   ok in OLD, absent or interrupted in NEW (coverage lost)   regression
 *   drop           ok in both, NEW Gb/s below OLD x (1 - drop)               regression
 *   endpoint_drop  an endpoint's Gb/s summed over its pairs ok in both fell
 *                  below OLD x (1 - drop)                                    regression
 *   changed        an endpoint field differs (link_gbps, mtu, mem, gid_index, any field the writer
 *                  adds); a lower link_gbps or mtu is a regression, the rest is information
 *   recovered      failed in OLD, ok in NEW
 *   still_failing  failed in both (the status may have changed)
 *   added          ok in NEW, absent in OLD
 *   gone           failed in OLD, absent in NEW
 *   endpoint_gone / endpoint_new: an endpoint only one report has
 * A notable report (diff.h's load) does not list its plain passes: a pair it lacks between two of its
 * endpoints is ok there without a rate (old_unlisted / cur_unlisted), so a listed failure against it
 * is new_failure or recovered, a listed pass is matched without a rate to compare; an endpoint's
 * fields are compared only where both reports have them.
 * Everything is computed in lib/; the front end prints rp_diff_json() or its own text.
 */
#ifndef RP_DIFF_H
#define RP_DIFF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "discover/node.h"
#include "base/result.h"

/* An endpoint's identity in a report. */
struct rp_diff_ep {
	char node[RP_NAME_MAX];
	char device[RP_NAME_MAX];
	int port;
};

struct rp_diff_pair {
	struct rp_diff_ep src, dst;
	uint64_t msg_size;
	enum rp_status status;
	double gbps, gbps_min;
	const char *reason;           /* borrowed from the report's JSON */
	json_t *src_obj, *dst_obj;    /* the endpoint objects, borrowed from the report's JSON */
	size_t index;                 /* position in the file's "pairs" */
	bool size_inferred;           /* the pair failed before its size was recorded (msg_size 0 in the
	                               * file): msg_size is the run's config.msg_size */
	uint64_t key_size;            /* the size in its key: msg_size; 0 in a matrix report (one size) */
	bool unlisted;                /* a plain pass a notable report counts but does not list (no rate) */
};

struct rp_diff_report {
	char name[256];               /* the file name, for messages */
	char command[32];             /* "loopback", "pair", "matrix" */
	char started[32];
	json_t *root;                 /* owned; a streamed load leaves "pairs" out of it */
	struct rp_diff_pair *pairs;   /* sorted by key; owned */
	size_t n;
	bool matrix;                  /* a matrix report: pairs keyed by direction alone */
	bool notable;                 /* lists only its notable pairs (matrix.pairs_listed.which) */
	size_t n_unlisted;            /* the plain passes it counts without listing them */
	struct rp_diff_ep *eps;       /* notable: matrix.endpoints, sorted; owned */
	size_t n_eps;
	json_t *kept;                 /* streamed: the pairs' endpoint objects, one per distinct object */
	char **blocks;                /* streamed: the pairs' reasons */
	size_t n_blocks, block_used;
};

/* Read and validate path into *r (caller storage), streamed: the file is mapped and its "pairs" read
 * one element at a time (each parsed, validated, kept as a struct rp_diff_pair, and freed), so memory
 * is O(listed pairs + endpoints), not the whole document's tree. A notable report (matrix
 * --list-pairs notable, the default above 100,000 directions) is read: its summary counts every pair
 * and it lists the failed, flaky and warned ones; a pair it does not list between two of its
 * endpoints is a plain pass (compared as such: no rate). 0, or -EINVAL / -ENOENT / -ENOMEM (logged,
 * naming the file and the field). *r is safe to rp_diff_report_fini() either way. */
int rp_diff_report_load(struct rp_diff_report *r, const char *path);
/* The same from a parsed document (steals the reference to root, also on failure); name is for
 * messages. */
int rp_diff_report_from_json(struct rp_diff_report *r, json_t *root, const char *name);
void rp_diff_report_fini(struct rp_diff_report *r);

/* Order pairs by their matching key (src, dst, key_size): <0, 0, >0. */
int rp_diff_pair_key_cmp(const struct rp_diff_pair *a, const struct rp_diff_pair *b);

/* "10%", "10.5%" or a fraction "0.1", in [0, 1). 0 or -EINVAL; not logged (the caller names it). */
int rp_diff_drop_parse(const char *s, double *frac_p);

enum rp_diff_kind {
	RP_DIFF_NEW_FAILURE = 0,
	RP_DIFF_NOT_MEASURED,
	RP_DIFF_DROP,
	RP_DIFF_ENDPOINT_DROP,
	RP_DIFF_CHANGED,
	RP_DIFF_RECOVERED,
	RP_DIFF_STILL_FAILING,
	RP_DIFF_ADDED,
	RP_DIFF_GONE,
	RP_DIFF_ENDPOINT_GONE,
	RP_DIFF_ENDPOINT_NEW,
	RP_DIFF_KIND_COUNT_
};
/* "new_failure", "not_measured", "drop", ...; "unknown" out of range. */
const char *rp_diff_kind_code(enum rp_diff_kind k);

struct rp_diff_item {
	enum rp_diff_kind kind;
	bool regression;
	const struct rp_diff_pair *old, *cur;  /* pair items; either may be NULL; borrowed from the reports */
	bool old_unlisted, cur_unlisted;       /* that side NULL: a plain pass its notable report counts but
	                                        * does not list (ok, no rate), not an absent pair */
	struct rp_diff_ep ep;                  /* endpoint items */
	double old_gbps, cur_gbps;             /* drop, endpoint_drop (endpoint: sums over n_pairs) */
	size_t n_pairs;                        /* endpoint_drop: pairs ok in both that the endpoint is in */
	char field[64];                        /* changed: the field and its values (JSON, ", " between */
	char old_val[128], cur_val[128];       /* several values one report holds; "" when absent) */
};

struct rp_diff {
	struct rp_diff_item *items;   /* grouped by kind (enum order), then by key */
	size_t n;
	size_t count[RP_DIFF_KIND_COUNT_];
	size_t matched;               /* pairs measured in both */
	double drop;                  /* the threshold the comparison used */
	bool regression;              /* any item with regression set */
};

/* Compare old with cur under threshold drop (a fraction, rp_diff_drop_parse()). 0 or -ENOMEM
 * (logged); *d (caller storage) is safe to rp_diff_fini() either way. */
int rp_diff_compare(const struct rp_diff_report *old, const struct rp_diff_report *cur, double drop,
		    struct rp_diff *d);
void rp_diff_fini(struct rp_diff *d);

/* Order endpoints by node, device, port (qsort/bsearch over struct rp_diff_ep). */
int rp_diff_ep_cmp(const void *a, const void *b);
/* Whether the report is of a simulated run (its top-level "simulated": true). */
bool rp_diff_report_simulated(const struct rp_diff_report *r);
/* Whether a notable report names the endpoint (matrix.endpoints). */
bool rp_diff_report_has_ep(const struct rp_diff_report *r, const struct rp_diff_ep *ep);

/* "node/device:port". */
const char *rp_diff_ep_name(const struct rp_diff_ep *ep, char *buf, size_t len);

/* The comparison as JSON (new reference): {"old", "new", "drop", "regression", "matched", "counts",
 * "items": [{"kind", "regression", "src", "dst", "msg_size", "old", "new", ...}]}; NULL on out of
 * memory (logged). */
json_t *rp_diff_json(const struct rp_diff *d, const struct rp_diff_report *old, const struct rp_diff_report *cur);

#endif
