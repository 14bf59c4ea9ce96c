/* report.h: pair results as JSON (jansson) and CSV, written atomically.
 *
 * Build, then write: rp_report_json() returns a json_t the caller may extend (the matrix front end
 * adds "nodes"; HTML/JUnit writers read it) before rp_report_write_json() puts it on disk. Files are
 * written through lib/base/atomic_file.h (an exclusive temporary beside the file, fsync, rename, directory
 * fsync), so a file on disk is always complete and valid; "-" is standard output; anything but a
 * regular file (a directory, device, FIFO, socket, symlink) is refused. Front ends call
 * rp_report_path_check() on every output option when they parse it, so that a bad path is a usage
 * error before anything is measured.
 *
 * What a peer sent is written whatever it holds: a string with invalid UTF-8 is written with U+FFFD
 * in place of the bad bytes (JSON, CSV; '?' in HTML and XML), a fixed-size field without its NUL is
 * cut at its size, a number that is not finite (NaN, inf) is null in JSON and empty in CSV, a count of
 * attempts is capped at RP_MAX_ATTEMPTS. Only out of memory makes a report fail to build, and the
 * error says so and names the field.
 *
 * JSON shape (schema RP_REPORT_SCHEMA; keys are only ever added):
 *   { "schema": 1, "tool": "rdmaprobe", "version": "...", "command_line": "...", "command": "loopback",
 *     "started": "2026-11-30T04:00:00Z", "config": {...},
 *     "summary": {"pairs", "ok", "failed", "flaky", "confirmed", "unconfirmed", "confirmed_by_endpoint",
 *                 "with_warnings"},
 *     "pairs": [ { "src": {"node","device","port","gid_index","mtu","link_gbps","mem","mem_reg","soft"},
 *                  "dst": {...}, "status": "ok" | failure code, "reason", "gbps", "gbps_min",
 *                  "bytes", "iters", "msg_size", "verified", "bad_offset",
 *                  "latency": {"measured","min_us","median_us","p99_us","max_us","samples"},
 *                  "elapsed_s", "gbps_min_at_s",
 *                  "cause_side": "src" | "dst" | null,        which side saw the first cause
 *                  "secondary": {"status", "reason"},         the other side's view ("ok" if none)
 *                  "warnings": ["flaky", "interval_drop", "nominal_link_rate"],
 *                  "confirm": "flaky" | "confirmed" | "unconfirmed" | "confirmed_by_endpoint" | null,
 *                  "attempts": [ {"status","side","reason","gbps","gbps_min","qp_timeout","elapsed_s"} ]
 *                } ] }
 * CSV: one header line, one line per pair; the columns of the first version, then src_soft, dst_soft,
 * cause_side, secondary_status, secondary_reason, gbps_min_at_s, warnings (';'-separated codes),
 * confirm, attempts (a count) and attempt_statuses / _sides / _qp_timeouts / _gbps (';'-separated).
 */
#ifndef RP_REPORT_H
#define RP_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "base/result.h"
#include "base/strbuf.h"

#define RP_REPORT_SCHEMA 1

struct rp_report_info {
	const char *command;         /* "loopback", "pair", "matrix" */
	const char *version;         /* rp_version_string() */
	int argc;                    /* the command line, recorded as one string */
	char **argv;
	double started;              /* time(NULL)-style wall clock seconds; 0 = now */
	const struct rp_engine_cfg *cfg;  /* recorded under "config"; may be NULL */
};

/* 0 when path may be written ("-", a regular file, an absent name in a writable directory); else a
 * negative errno, logged with what is wrong with it ("output file /dev/full: is a character device;
 * ..."). Call it for every output option at parse time. */
int rp_report_path_check(const char *path);
/* The warning codes of a pair's warnings bits, ';'-separated, into buf ("" when none); returns buf. */
const char *rp_report_warnings(uint32_t warnings, char *buf, size_t len);
/* How a pair's failure held up on retest, for a person: "flaky: failed, then passed on a retest",
 * "confirmed: ...", "not confirmed: ..."; "" when there is nothing to say. */
const char *rp_report_confirm_text(enum rp_confirm c);
/* "attempt 1: timed_out on src (qp_timeout 14, 0.000 Gb/s): <reason>; attempt 2: ..." escaped for
 * XML/HTML into sb; nothing when the pair has no recorded attempt. */
void rp_report_attempts_xml(struct rp_sb *sb, const struct rp_pair_result *r);
/* A JSON string of s (NULL: ""), its bytes that are not clean UTF-8 written as '?' (lib/base/sanitize.h):
 * a --node name, a path or a reason that is not UTF-8 never loses a report (jansson refuses invalid
 * UTF-8). NULL only when out of memory. */
json_t *rp_json_string_safe(const char *s);
/* One pair as a JSON object (new reference), or NULL when out of memory (logged). */
json_t *rp_report_pair_json(const struct rp_pair_result *r);
/* The engine configuration as a JSON object (new reference). */
json_t *rp_report_cfg_json(const struct rp_engine_cfg *cfg);
/* The whole report (new reference): run info, config, summary and pairs. NULL when out of memory. */
json_t *rp_report_json(const struct rp_report_info *info, const struct rp_pair_result *pairs, size_t n);
/* The same report without "pairs" (run info, config, the summary of pairs[0..n)): for a caller with
 * many pairs, who extends it and writes it with rp_report_write_json_pairs(). NULL when out of memory. */
json_t *rp_report_json_head(const struct rp_report_info *info, const struct rp_pair_result *pairs, size_t n);
/* Write root to path atomically (indent 2, sorted keys off, trailing newline). 0 or negative errno
 * (logged once with the real cause: the path refused, the write's errno, or jansson's refusal). */
int rp_report_write_json(const json_t *root, const char *path);
/* Write root with "pairs": [pairs[0..n)] added as its last member, each pair encoded on its own (one
 * compact line each) while it is written, so the document never exists in memory as a whole: memory
 * is root's and one pair's, whatever n. The file parses to what rp_report_write_json() writes for the
 * same root with the pairs in it (a member order aside). Same file rules and errors; -EINVAL (logged)
 * when root is not an object or already has "pairs". */
int rp_report_write_json_pairs(const json_t *root, const struct rp_pair_result *pairs, size_t n, const char *path);
/* Write pairs as CSV (one header line, one line per pair; fields quoted when needed) atomically, streamed
 * (memory: one chunk of lines, whatever n). */
int rp_report_write_csv(const struct rp_pair_result *pairs, size_t n, const char *path);
/* rp_report_json_head, rp_report_write_json_pairs and rp_report_write_csv over pairs that need not
 * be one array (lib/verdict/result_seq.h: rank 0's matrix results), one pair built at a time. */
struct rp_result_seq;
json_t *rp_report_json_head_of(const struct rp_report_info *info, const struct rp_result_seq *ps);
int rp_report_write_json_of(const json_t *root, const struct rp_result_seq *ps, const char *path);
int rp_report_write_csv_of(const struct rp_result_seq *ps, const char *path);
/* The same for a simulated run (simulated: its model file; NULL a real run): a first column
 * "simulated" whose every row says SIMULATED, so that no row read alone passes for a measurement. */
int rp_report_write_csv_sim(const struct rp_result_seq *ps, const char *simulated, const char *path);
/* Write text produced by the caller to path atomically (for HTML/JUnit writers). */
int rp_report_write_text(const char *text, size_t len, const char *path);

#endif
