/* report.h: pair results as JSON (jansson) and CSV, written atomically.
 *
 * Build, then write: rp_report_json() returns a json_t the caller may extend (the matrix front end
 * adds "nodes"; HTML/JUnit writers read it) before rp_report_write_json() puts it on disk. Files are
 * written to "<path>.tmp.<pid>" and renamed, so a file on disk is always complete and valid.
 *
 * JSON shape (schema RP_REPORT_SCHEMA):
 *   { "schema": 1, "tool": "rdmaprobe", "version": "...", "command_line": "...", "command": "loopback",
 *     "started": "2026-11-30T04:00:00Z", "config": {...}, "summary": {"pairs", "ok", "failed"},
 *     "pairs": [ { "src": {"node","device","port","gid_index","mtu","link_gbps","mem","mem_reg"},
 *                  "dst": {...}, "status": "ok" | failure code, "reason", "gbps", "gbps_min",
 *                  "bytes", "iters", "msg_size", "verified", "bad_offset",
 *                  "latency": {"measured","min_us","median_us","p99_us","max_us","samples"},
 *                  "elapsed_s" } ] }
 */
#ifndef RP_REPORT_H
#define RP_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "engine.h"
#include "result.h"

#define RP_REPORT_SCHEMA 1

struct rp_report_info {
	const char *command;         /* "loopback", "pair", "matrix" */
	const char *version;         /* rp_version_string() */
	int argc;                    /* the command line, recorded as one string */
	char **argv;
	double started;              /* time(NULL)-style wall clock seconds; 0 = now */
	const struct rp_engine_cfg *cfg;  /* recorded under "config"; may be NULL */
};

/* One pair as a JSON object (new reference), or NULL when out of memory (logged). */
json_t *rp_report_pair_json(const struct rp_pair_result *r);
/* The engine configuration as a JSON object (new reference). */
json_t *rp_report_cfg_json(const struct rp_engine_cfg *cfg);
/* The whole report (new reference): run info, config, summary and pairs. NULL when out of memory. */
json_t *rp_report_json(const struct rp_report_info *info, const struct rp_pair_result *pairs, size_t n);
/* Write root to path atomically (indent 2, sorted keys off, trailing newline). 0 or negative errno (logged). */
int rp_report_write_json(const json_t *root, const char *path);
/* Write pairs as CSV (one header line, one line per pair; fields quoted when needed) atomically. */
int rp_report_write_csv(const struct rp_pair_result *pairs, size_t n, const char *path);
/* Write text produced by the caller to path atomically (for HTML/JUnit writers). */
int rp_report_write_text(const char *text, size_t len, const char *path);

#endif
