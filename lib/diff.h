/* diff.h: compare two rdmaprobe JSON reports (loopback, pair or matrix; report.h's shape) run to run.
 *
 * Load: rp_diff_report_load() reads a file and validates every field the rules read (types, ranges,
 * status codes, that the summary counts the pairs); the first problem is logged once, naming the file
 * and the field ("old.json: pairs[3].src.port: expected an integer 0 to 255"), and -EINVAL returned.
 * Fields the rules do not know are kept: an endpoint's extra scalar fields (a writer may add firmware
 * or PCIe fields) are compared like the known ones.
 *
 * Pairs are matched by (src node, device, port, dst node, device, port, msg size). A pair that failed
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
 * Everything is computed in lib/; the front end prints rp_diff_json() or its own text.
 */
#ifndef RP_DIFF_H
#define RP_DIFF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node.h"
#include "result.h"

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
};

struct rp_diff_report {
	char name[256];               /* the file name, for messages */
	char command[32];             /* "loopback", "pair", "matrix" */
	char started[32];
	json_t *root;                 /* owned */
	struct rp_diff_pair *pairs;   /* sorted by key; owned */
	size_t n;
};

/* Read and validate path into *r (caller storage). 0, or -EINVAL / -ENOENT / -ENOMEM (logged, naming
 * the file and the field). *r is safe to rp_diff_report_fini() either way. */
int rp_diff_report_load(struct rp_diff_report *r, const char *path);
/* The same from a parsed document (steals the reference to root, also on failure); name is for
 * messages. */
int rp_diff_report_from_json(struct rp_diff_report *r, json_t *root, const char *name);
void rp_diff_report_fini(struct rp_diff_report *r);

/* Order pairs by their matching key (src, dst, msg size): <0, 0, >0. */
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

/* "node/device:port". */
const char *rp_diff_ep_name(const struct rp_diff_ep *ep, char *buf, size_t len);

/* The comparison as JSON (new reference): {"old", "new", "drop", "regression", "matched", "counts",
 * "items": [{"kind", "regression", "src", "dst", "msg_size", "old", "new", ...}]}; NULL on out of
 * memory (logged). */
json_t *rp_diff_json(const struct rp_diff *d, const struct rp_diff_report *old, const struct rp_diff_report *cur);

#endif
