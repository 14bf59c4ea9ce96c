/* report_csv.c: pair results as CSV, one row a direction, written atomically; see report.h. */
#include "report/report.h"
#include "report/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "verdict/result_seq.h"

/* A CSV field of at most max bytes of s, then ',' or '\n': quoted (quotes doubled) when it has a comma,
 * quote or line break; invalid UTF-8 and control characters replaced (U+FFFD). */
static void csv_str(struct rp_sb *sb, const char *s, size_t max, bool last)
{
	size_t len = strnlen(s, max);
	bool quote = memchr(s, ',', len) || memchr(s, '"', len) || memchr(s, '\r', len) || memchr(s, '\n', len);
	char stack[3 * 256 + 1];   /* every field of a result fits: no allocation per string */
	char *clean = 3 * len + 1 <= sizeof(stack) ? stack : malloc(3 * len + 1);
	size_t n;

	if (!clean) {
		sb->oom = true;   /* rp_sb_write_atomic() reports it */
		return;
	}
	n = rp_report_utf8_repair(s, len, true, clean);
	clean[n] = '\0';
	if (quote) {
		rp_sb_puts(sb, "\"");
		for (char *p = clean, *q; *p; p = q + 1) {
			q = strchr(p, '"');
			if (!q) {
				rp_sb_puts(sb, p);
				break;
			}
			*q = '\0';
			rp_sb_printf(sb, "%s\"\"", p);
		}
		rp_sb_puts(sb, "\"");
	} else {
		rp_sb_puts(sb, clean);
	}
	if (clean != stack)
		free(clean);
	rp_sb_puts(sb, last ? "\n" : ",");
}

/* A number with prec decimals and ',' after it; empty when it is not finite. */
static void csv_num(struct rp_sb *sb, int prec, double v)
{
	if (isfinite(v))
		rp_sb_printf(sb, "%.*f", prec, v);
	rp_sb_puts(sb, ",");
}

static void csv_endpoint(struct rp_sb *sb, const struct rp_endpoint *e)
{
	csv_str(sb, e->node, sizeof(e->node), false);
	csv_str(sb, e->device, sizeof(e->device), false);
	rp_sb_printf(sb, "%d,%d,%d,", e->port, e->gid_index, e->mtu);
	csv_num(sb, 3, e->link_gbps);
	csv_str(sb, e->mem, sizeof(e->mem), false);
	csv_str(sb, e->mem_reg, sizeof(e->mem_reg), false);
}

static const char csv_header[] =
	"src_node,src_device,src_port,src_gid_index,src_mtu,src_link_gbps,src_mem,src_mem_reg,"
	"dst_node,dst_device,dst_port,dst_gid_index,dst_mtu,dst_link_gbps,dst_mem,dst_mem_reg,"
	"status,gbps,gbps_min,bytes,iters,msg_size,verified,bad_offset,"
	"lat_min_us,lat_median_us,lat_p99_us,lat_max_us,lat_samples,elapsed_s,reason,"
	"src_soft,dst_soft,cause_side,secondary_status,secondary_reason,gbps_min_at_s,warnings,confirm,"
	"attempts,attempt_statuses,attempt_sides,attempt_qp_timeouts,attempt_gbps,"
	"bidir,forward_status,rev_status,rev_gbps,rev_gbps_min,rev_bytes,rev_verified,rev_bad_offset,rev_warnings,"
	"gbps_sum,rev_reason\n";

/* The columns after reason: the verdict's view of the pair, each attempt's fields ';'-separated. */
static void csv_outcome(struct rp_sb *sb, const struct rp_pair_result *r)
{
	char warn[128];
	const char *side = rp_side_code(r->cause_side);
	unsigned n = rp_report_n_attempts(r);

	rp_sb_printf(sb, "%s,%s,%s,%s,", r->src.soft ? "true" : "false", r->dst.soft ? "true" : "false",
		     side ? side : "", rp_status_code(r->secondary.status));
	csv_str(sb, r->secondary.reason, sizeof(r->secondary.reason), false);
	csv_num(sb, 3, r->gbps_min_at_s);
	rp_sb_printf(sb, "%s,%s,%u,", rp_report_warnings(r->warnings, warn, sizeof(warn)), rp_confirm_code(r->confirm), n);
	for (unsigned i = 0; i < n; i++)
		rp_sb_printf(sb, "%s%s", i ? ";" : "", rp_status_code(r->attempts[i].status));
	rp_sb_puts(sb, ",");
	for (unsigned i = 0; i < n; i++) {
		side = rp_side_code(r->attempts[i].side);
		rp_sb_printf(sb, "%s%s", i ? ";" : "", side ? side : "");
	}
	rp_sb_puts(sb, ",");
	for (unsigned i = 0; i < n; i++)
		rp_sb_printf(sb, "%s%d", i ? ";" : "", r->attempts[i].qp_timeout);
	rp_sb_puts(sb, ",");
	for (unsigned i = 0; i < n; i++) {
		rp_sb_puts(sb, i ? ";" : "");
		if (isfinite(r->attempts[i].gbps))
			rp_sb_printf(sb, "%.6f", r->attempts[i].gbps);
	}
	rp_sb_puts(sb, ",");
}

/* The last columns: --bidir's reverse direction (empty but bidir=false for a one-way pair). */
static void csv_reverse(struct rp_sb *sb, const struct rp_pair_result *r)
{
	const struct rp_pair_reverse *v = &r->reverse;
	char warn[128];

	if (!v->measured) {
		rp_sb_puts(sb, "false,,,,,,,,,,\n");
		return;
	}
	rp_sb_printf(sb, "true,%s,%s,", rp_status_code(v->folded ? RP_ST_OK : r->status), rp_status_code(v->status));
	csv_num(sb, 6, v->gbps);
	csv_num(sb, 6, v->gbps_min);
	rp_sb_printf(sb, "%llu,%s,%lld,%s,", (unsigned long long)v->bytes, v->verified ? "true" : "false",
		     (long long)v->bad_offset, rp_report_warnings(v->warnings, warn, sizeof(warn)));
	csv_num(sb, 6, rp_pair_gbps_sum(r));
	csv_str(sb, v->reason, sizeof(v->reason), true);
}

static void csv_pair(struct rp_sb *sb, const struct rp_pair_result *r)
{
	csv_endpoint(sb, &r->src);
	csv_endpoint(sb, &r->dst);
	rp_sb_printf(sb, "%s,", rp_status_code(r->status));
	csv_num(sb, 6, r->gbps);
	csv_num(sb, 6, r->gbps_min);
	rp_sb_printf(sb, "%llu,%llu,%zu,%s,%lld,", (unsigned long long)r->bytes, (unsigned long long)r->iters, r->msg_size,
		     r->verified ? "true" : "false", (long long)r->bad_offset);
	if (r->lat.measured) {
		csv_num(sb, 3, r->lat.min_us);
		csv_num(sb, 3, r->lat.median_us);
		csv_num(sb, 3, r->lat.p99_us);
		csv_num(sb, 3, r->lat.max_us);
		rp_sb_printf(sb, "%llu,", (unsigned long long)r->lat.samples);
	} else {
		rp_sb_puts(sb, ",,,,,");
	}
	csv_num(sb, 3, r->elapsed_s);
	csv_str(sb, r->reason, sizeof(r->reason), false);
	csv_outcome(sb, r);
	csv_reverse(sb, r);
}

#define RP_REPORT_CHUNK 65536   /* a streaming writer moves its text into the file this often */

int rp_report_write_csv(const struct rp_pair_result *pairs, size_t n, const char *path)
{
	struct rp_result_seq ps = rp_result_seq_const(pairs, n);

	return rp_report_write_csv_of(&ps, path);
}

int rp_report_write_csv_of(const struct rp_result_seq *ps, const char *path)
{
	return rp_report_write_csv_sim(ps, NULL, path);
}

int rp_report_write_csv_sim(const struct rp_result_seq *ps, const char *simulated, const char *path)
{
	struct rp_pair_result tmp;
	size_t n = ps->n;
	struct rp_atomic_file af;
	struct rp_sb sb;
	int rc = rp_atomic_file_open(&af, path);

	if (rc)
		return rc;
	rp_sb_init(&sb);
	if (simulated)
		rp_sb_puts(&sb, "simulated,");
	rp_sb_puts(&sb, csv_header);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (simulated)
			rp_sb_puts(&sb, "SIMULATED,");
		csv_pair(&sb, rp_result_seq_get(ps, i, &tmp));
		if (sb.len >= RP_REPORT_CHUNK || i + 1 == n)
			rc = rp_sb_drain(&sb, &af);
	}
	if (rc == 0)
		rc = rp_sb_drain(&sb, &af);
	rp_sb_fini(&sb);
	if (rc) {
		rp_atomic_file_abort(&af);
		return rp_error(rc, "write %s: out of memory while building it", path);
	}
	return rp_atomic_file_commit(&af);
}
