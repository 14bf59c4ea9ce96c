/* report.c: pair results as JSON, written atomically (CSV: report_csv.c); see report.h. */
#include "report/report.h"
#include "report/report_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/atomic_file.h"
#include "health/counters_json.h"
#include "verdict/result_seq.h"
#include "report/report_pair_text.h"
#include "base/log.h"
#include "base/sanitize.h"
#include "base/strbuf.h"
#include "base/util.h"

static const char utf8_replacement[] = "\xef\xbf\xbd";   /* U+FFFD */

/* Append len bytes of s to out as valid UTF-8: every byte that does not start a valid sequence becomes
 * U+FFFD, and so does a control character other than tab, CR and LF when no_ctl. Returns the bytes
 * written (out has room for 3 x len). A tiny local rule, so that the writers stand on their own
 * whatever the wire boundary let through. */
size_t rp_report_utf8_repair(const char *s, size_t len, bool no_ctl, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t n = rp_utf8_seq_len(s + i, len - i);

		if (n == 0 || (no_ctl && ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f))) {
			memcpy(out + o, utf8_replacement, 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, s + i, n);
		o += n;
		i += n;
	}
	return o;
}

/* Whether the first len bytes of s are valid UTF-8 (and free of control characters when no_ctl). */
static bool utf8_clean(const char *s, size_t len, bool no_ctl)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		size_t n = rp_utf8_seq_len(s + i, len - i);

		if (n == 0 || (no_ctl && ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)))
			return false;
		i += n;
	}
	return true;
}

/* A JSON string of at most max bytes of s (a fixed-size field may lack its NUL); invalid UTF-8 is
 * replaced, never a reason to lose the report (jansson refuses it). NULL only when out of memory. */
static json_t *jstr(const char *s, size_t max)
{
	size_t len = s ? strnlen(s, max) : 0;
	json_t *j;
	char *copy;

	if (utf8_clean(s, len, false))
		return json_stringn(len ? s : "", len);
	copy = malloc(3 * len + 1);
	if (!copy)
		return NULL;
	j = json_stringn(copy, rp_report_utf8_repair(s, len, false, copy));
	free(copy);
	return j;
}

/* A number, or null when it is not finite (NaN from a peer, a division by a zero time): JSON has no
 * NaN and jansson refuses it. */
static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Add key = value to obj; the first key that could not be added is kept in *bad (only out of memory
 * is left: every value is made valid before it gets here). */
static void set(json_t *obj, const char *key, json_t *value, const char **bad)
{
	if (!obj)
		json_decref(value);
	if (!obj || !value || json_object_set_new(obj, key, value) != 0) {
		if (!*bad)
			*bad = key;
	}
}

/* Append value to arr; like set(). */
static void push(json_t *arr, const char *what, json_t *value, const char **bad)
{
	if (!arr)
		json_decref(value);
	if (!arr || !value || json_array_append_new(arr, value) != 0) {
		if (!*bad)
			*bad = what;
	}
}

/* "src", "dst" or null. */
static json_t *jside(enum rp_side s)
{
	const char *c = rp_side_code(s);

	return c ? json_string(c) : json_null();
}

static json_t *endpoint_json(const struct rp_endpoint *e, const char **bad)
{
	json_t *o = json_object();

	set(o, "node", jstr(e->node, sizeof(e->node)), bad);
	set(o, "device", jstr(e->device, sizeof(e->device)), bad);
	set(o, "port", json_integer(e->port), bad);
	set(o, "gid_index", json_integer(e->gid_index), bad);
	set(o, "mtu", json_integer(e->mtu), bad);
	set(o, "link_gbps", jnum(e->link_gbps), bad);
	set(o, "mem", jstr(e->mem, sizeof(e->mem)), bad);
	set(o, "mem_reg", jstr(e->mem_reg, sizeof(e->mem_reg)), bad);
	set(o, "soft", json_boolean(e->soft), bad);
	return o;
}

static json_t *latency_json(const struct rp_latency *l, const char **bad)
{
	json_t *o = json_object();

	set(o, "measured", json_boolean(l->measured), bad);
	set(o, "min_us", jnum(l->min_us), bad);
	set(o, "median_us", jnum(l->median_us), bad);
	set(o, "p99_us", jnum(l->p99_us), bad);
	set(o, "max_us", jnum(l->max_us), bad);
	set(o, "samples", json_integer((json_int_t)l->samples), bad);
	return o;
}

static json_t *attempts_json(const struct rp_pair_result *r, const char **bad)
{
	json_t *arr = json_array();

	for (unsigned i = 0; i < rp_report_n_attempts(r); i++) {
		const struct rp_attempt *a = &r->attempts[i];
		json_t *o = json_object();

		set(o, "status", json_string(rp_status_code(a->status)), bad);
		set(o, "side", jside(a->side), bad);
		set(o, "reason", jstr(a->reason, sizeof(a->reason)), bad);
		set(o, "gbps", jnum(a->gbps), bad);
		set(o, "gbps_min", jnum(a->gbps_min), bad);
		set(o, "qp_timeout", json_integer(a->qp_timeout), bad);
		set(o, "elapsed_s", jnum(a->elapsed_s), bad);
		push(arr, "attempts", o, bad);
	}
	return arr;
}

static json_t *warnings_json(uint32_t warnings, const char **bad)
{
	json_t *arr = json_array();

	for (int w = 0; w < RP_WARN_COUNT_; w++)
		if (warnings & (1u << w))
			push(arr, "warnings", json_string(rp_pair_warning_code((enum rp_pair_warning)w)), bad);
	return arr;
}

/* Both ends' port counters around the pair (lib/health/counters_json.h). */
static json_t *counters_json(const struct rp_pair_result *r, const char **bad)
{
	json_t *o = json_object();

	set(o, "src", rp_ctr_side_to_json(&r->counters.src), bad);
	set(o, "dst", rp_ctr_side_to_json(&r->counters.dst), bad);
	return o;
}

/* The verdict's view of a pair: first cause, the other side's view, warnings, retests. */
static void outcome_json(json_t *o, const struct rp_pair_result *r, const char **bad)
{
	json_t *sec = json_object();
	const char *confirm = rp_confirm_code(r->confirm);

	set(o, "gbps_min_at_s", jnum(r->gbps_min_at_s), bad);
	set(o, "cause_side", jside(r->cause_side), bad);
	set(sec, "status", json_string(rp_status_code(r->secondary.status)), bad);
	set(sec, "reason", jstr(r->secondary.reason, sizeof(r->secondary.reason)), bad);
	set(o, "secondary", sec, bad);
	set(o, "warnings", warnings_json(r->warnings, bad), bad);
	set(o, "counters", counters_json(r, bad), bad);
	set(o, "confirm", confirm[0] ? json_string(confirm) : json_null(), bad);
	set(o, "attempts", attempts_json(r, bad), bad);
}

/* --bidir: the reverse direction (dst writes into src) on its own, and the forward's own status. */
static void reverse_json(json_t *o, const struct rp_pair_result *r, const char **bad)
{
	const struct rp_pair_reverse *v = &r->reverse;
	json_t *rv;

	if (!v->measured)
		return;
	rv = json_object();
	set(o, "bidir", json_true(), bad);
	set(o, "forward_status", json_string(rp_status_code(v->folded ? RP_ST_OK : r->status)), bad);
	set(o, "gbps_sum", jnum(rp_pair_gbps_sum(r)), bad);
	set(rv, "status", json_string(rp_status_code(v->status)), bad);
	set(rv, "reason", jstr(v->reason, sizeof(v->reason)), bad);
	set(rv, "cause_side", jside(v->cause_side), bad);
	set(rv, "gbps", jnum(v->gbps), bad);
	set(rv, "gbps_min", jnum(v->gbps_min), bad);
	set(rv, "gbps_min_at_s", jnum(v->gbps_min_at_s), bad);
	set(rv, "bytes", json_integer((json_int_t)v->bytes), bad);
	set(rv, "iters", json_integer((json_int_t)v->iters), bad);
	set(rv, "verified", json_boolean(v->verified), bad);
	set(rv, "bad_offset", json_integer(v->bad_offset), bad);
	set(rv, "warnings", warnings_json(v->warnings, bad), bad);
	set(o, "reverse", rv, bad);
}

/* One pair; on failure *bad names the first field that could not be added and the object is freed. */
static json_t *pair_json(const struct rp_pair_result *r, const char **bad)
{
	json_t *o = json_object();

	set(o, "src", endpoint_json(&r->src, bad), bad);
	set(o, "dst", endpoint_json(&r->dst, bad), bad);
	set(o, "status", json_string(rp_status_code(r->status)), bad);
	set(o, "reason", jstr(r->reason, sizeof(r->reason)), bad);
	set(o, "gbps", jnum(r->gbps), bad);
	set(o, "gbps_min", jnum(r->gbps_min), bad);
	set(o, "bytes", json_integer((json_int_t)r->bytes), bad);
	set(o, "iters", json_integer((json_int_t)r->iters), bad);
	set(o, "msg_size", json_integer((json_int_t)r->msg_size), bad);
	set(o, "verified", json_boolean(r->verified), bad);
	set(o, "bad_offset", json_integer(r->bad_offset), bad);
	set(o, "latency", latency_json(&r->lat, bad), bad);
	set(o, "elapsed_s", jnum(r->elapsed_s), bad);
	outcome_json(o, r, bad);
	reverse_json(o, r, bad);
	if (*bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *rp_report_pair_json(const struct rp_pair_result *r)
{
	const char *bad = NULL;
	json_t *o = pair_json(r, &bad);

	if (!o)
		rp_error(-ENOMEM, "report: out of memory adding \"%s\" to a pair", bad);
	return o;
}

static json_t *mem_json(const struct rp_mem_spec *m, const char **bad)
{
	json_t *o = json_object();
	static const char *const regs[] = { "auto", "dmabuf", "peermem" };

	set(o, "kind", jstr(m->kind ? m->kind : "", 64), bad);
	set(o, "device", json_integer(m->device), bad);
	set(o, "hugepages", json_boolean(m->hugepages), bad);
	set(o, "gpu_reg", json_string((unsigned)m->gpu_reg < 3 ? regs[m->gpu_reg] : "?"), bad);
	return o;
}

static json_t *cfg_json(const struct rp_engine_cfg *c, const char **bad)
{
	json_t *o = json_object();

	set(o, "mode", json_string(c->meas.mode == RP_MODE_LAT ? "latency" : "bandwidth"), bad);
	set(o, "msg_size", json_integer((json_int_t)c->meas.msg_size), bad);
	set(o, "iters", json_integer((json_int_t)c->meas.iters), bad);
	set(o, "duration_s", jnum(c->meas.duration_s), bad);
	set(o, "warmup_iters", json_integer((json_int_t)c->meas.warmup_iters), bad);
	set(o, "tx_depth", json_integer(c->meas.tx_depth), bad);
	set(o, "qps", json_integer(c->meas.n_qps), bad);
	set(o, "cq_mod", json_integer(c->meas.cq_mod), bad);
	set(o, "interval_s", jnum(c->meas.interval_s), bad);
	set(o, "verify", json_boolean(c->meas.verify), bad);
	set(o, "qp_timeout", json_integer(c->qp.qp_timeout), bad);
	set(o, "retry_cnt", json_integer(c->qp.retry_cnt), bad);
	set(o, "rnr_retry", json_integer(c->qp.rnr_retry), bad);
	set(o, "traffic_class", json_integer(c->qp.traffic_class), bad);
	set(o, "sl", json_integer(c->qp.sl), bad);
	set(o, "timeout_s", jnum(c->timeout_s), bad);
	set(o, "src_mem", mem_json(&c->src_mem, bad), bad);
	set(o, "dst_mem", mem_json(&c->dst_mem, bad), bad);
	return o;
}

json_t *rp_report_cfg_json(const struct rp_engine_cfg *c)
{
	const char *bad = NULL;
	json_t *o = cfg_json(c, &bad);

	if (bad) {
		json_decref(o);
		rp_error(-ENOMEM, "report: out of memory adding \"%s\" to the configuration", bad);
		return NULL;
	}
	return o;
}

/* The command line as one string, arguments with spaces or quotes in single quotes. */
static char *join_argv(int argc, char **argv)
{
	size_t len = 1;
	char *s, *p;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) * 4 + 3;
	s = malloc(len);
	if (!s)
		return NULL;
	p = s;
	for (int i = 0; i < argc; i++) {
		bool quote = argv[i][0] == '\0' || strpbrk(argv[i], " \t'\"\\$") != NULL;

		if (i)
			*p++ = ' ';
		if (quote)
			*p++ = '\'';
		for (const char *a = argv[i]; *a; a++) {
			if (*a == '\'' && quote) {
				memcpy(p, "'\\''", 4);
				p += 4;
			} else {
				*p++ = *a;
			}
		}
		if (quote)
			*p++ = '\'';
	}
	*p = '\0';
	return s;
}

/* "pairs", "ok", "failed" (as before), and how the failures held up on retest. */
static json_t *summary_json(const struct rp_result_seq *ps, const char **bad)
{
	size_t ok = 0, counts[RP_CONFIRM_COUNT_] = { 0 }, warned = 0, n = ps->n;
	json_t *o = json_object();
	struct rp_result_peek pk;

	for (size_t i = 0; i < n; i++) {
		rp_result_seq_peek(ps, i, &pk);   /* a store's record answers without building the pair */
		ok += pk.status == RP_ST_OK;
		if ((unsigned)pk.confirm < RP_CONFIRM_COUNT_)
			counts[pk.confirm]++;
		warned += pk.warnings != 0;
	}
	set(o, "pairs", json_integer((json_int_t)n), bad);
	set(o, "ok", json_integer((json_int_t)ok), bad);
	set(o, "failed", json_integer((json_int_t)(n - ok)), bad);
	set(o, "flaky", json_integer((json_int_t)counts[RP_CONFIRM_FLAKY]), bad);
	set(o, "confirmed", json_integer((json_int_t)counts[RP_CONFIRM_CONFIRMED]), bad);
	set(o, "unconfirmed", json_integer((json_int_t)counts[RP_CONFIRM_UNCONFIRMED]), bad);
	set(o, "confirmed_by_endpoint", json_integer((json_int_t)counts[RP_CONFIRM_BY_ENDPOINT]), bad);
	set(o, "with_warnings", json_integer((json_int_t)warned), bad);
	return o;
}

json_t *rp_report_json_head(const struct rp_report_info *info, const struct rp_pair_result *pairs, size_t n)
{
	struct rp_result_seq ps = rp_result_seq_const(pairs, n);

	return rp_report_json_head_of(info, &ps);
}

json_t *rp_report_json_head_of(const struct rp_report_info *info, const struct rp_result_seq *ps)
{
	json_t *root = json_object();
	time_t t = info->started > 0 ? (time_t)info->started : time(NULL);
	char when[32], *cmdline = join_argv(info->argc, info->argv);
	const char *bad = cmdline && root ? NULL : "command_line";
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	set(root, "schema", json_integer(RP_REPORT_SCHEMA), &bad);
	set(root, "tool", json_string("rdmaprobe"), &bad);
	set(root, "version", jstr(info->version ? info->version : "", 256), &bad);
	set(root, "command", jstr(info->command ? info->command : "", 64), &bad);
	set(root, "command_line", jstr(cmdline, SIZE_MAX), &bad);
	set(root, "started", json_string(when), &bad);
	if (info->cfg)
		set(root, "config", cfg_json(info->cfg, &bad), &bad);
	set(root, "summary", summary_json(ps, &bad), &bad);
	free(cmdline);
	if (bad) {
		json_decref(root);
		rp_error(-ENOMEM, "report: out of memory adding \"%s\"", bad);
		return NULL;
	}
	return root;
}

json_t *rp_report_json(const struct rp_report_info *info, const struct rp_pair_result *pairs, size_t n)
{
	json_t *root = rp_report_json_head(info, pairs, n), *arr = root ? json_array() : NULL;
	const char *bad = arr ? NULL : "pairs";

	if (!root)
		return NULL;          /* logged */

	for (size_t i = 0; i < n && !bad; i++)
		push(arr, "pairs", pair_json(&pairs[i], &bad), &bad);
	set(root, "pairs", arr, &bad);
	if (bad) {
		json_decref(root);
		rp_error(-ENOMEM, "report: out of memory adding \"%s\"", bad);
		return NULL;
	}
	return root;
}

int rp_report_path_check(const char *path)
{
	return rp_atomic_file_check(path);
}

/* json_dump_callback() sink: into the atomic file; -1 stops the dump at the first write error. */
static int dump_to_file(const char *buf, size_t size, void *data)
{
	struct rp_atomic_file *af = data;

	rp_atomic_file_write(af, buf, size);
	return af->err ? -1 : 0;
}

#define RP_REPORT_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6))

int rp_report_write_json(const json_t *root, const char *path)
{
	struct rp_atomic_file af;
	int rc = rp_atomic_file_open(&af, path);

	if (rc)
		return rc;
	if (json_dump_callback(root, dump_to_file, &af, RP_REPORT_JSON_FLAGS) != 0 && !af.err) {
		/* not a write error: jansson would not encode the document (out of memory, a foreign value) */
		rp_atomic_file_abort(&af);
		return rp_error(-ENOMEM, "write %s: jansson could not encode the report (out of memory?)", path);
	}
	rp_atomic_file_write(&af, "\n", 1);
	return rp_atomic_file_commit(&af);
}

/* Pair r as compact JSON appended to sb: written directly (lib/report/report_pair_text.h, the same bytes),
 * or through jansson when that declines. 0 or -ENOMEM. */
static int pair_text(const struct rp_pair_result *r, struct rp_sb *sb)
{
	const char *bad = NULL;
	json_t *p;
	char *text;

	if (rp_report_pair_text(r, sb) == 0)
		return rp_sb_failed(sb) ? -ENOMEM : 0;
	p = pair_json(r, &bad);
	text = p && !bad ? json_dumps(p, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
	json_decref(p);
	if (!text)
		return -ENOMEM;
	rp_sb_puts(sb, text);
	free(text);
	return rp_sb_failed(sb) ? -ENOMEM : 0;
}

/* Each pair encoded alone (one line, compact) into af, "," between them. 0 or -ENOMEM. */
static int pairs_stream(struct rp_atomic_file *af, const struct rp_result_seq *ps)
{
	struct rp_pair_result tmp;
	struct rp_sb sb;
	int rc = 0;

	rp_sb_init(&sb);
	for (size_t i = 0; i < ps->n && !af->err && !rc; i++) {
		rp_sb_puts(&sb, i ? ",\n    " : "\n    ");
		rc = pair_text(rp_result_seq_get(ps, i, &tmp), &sb);
		if (!rc && sb.len >= 1 << 16)
			rc = rp_sb_drain(&sb, af);
	}
	if (!rc)
		rc = rp_sb_drain(&sb, af);
	rp_sb_fini(&sb);
	return rc;
}

int rp_report_write_json_pairs(const json_t *root, const struct rp_pair_result *pairs, size_t n, const char *path)
{
	struct rp_result_seq ps = rp_result_seq_const(pairs, n);

	return rp_report_write_json_of(root, &ps, path);
}

int rp_report_write_json_of(const json_t *root, const struct rp_result_seq *ps, const char *path)
{
	struct rp_atomic_file af;
	char *head;
	size_t len;
	int rc;

	if (!json_is_object(root) || json_object_get(root, "pairs"))
		return rp_error(-EINVAL, "write %s: the report to stream its pairs into must be an object without them", path);
	head = json_dumps(root, RP_REPORT_JSON_FLAGS);
	if (!head)
		return rp_error(-ENOMEM, "write %s: jansson could not encode the report (out of memory?)", path);
	rc = rp_atomic_file_open(&af, path);
	if (rc) {
		free(head);
		return rc;
	}
	/* head is "{...}": all of it but the closing brace, then "pairs" as the last member */
	len = strlen(head);
	while (len > 1 && head[len - 1] != '}')
		len--;
	len--;
	while (len > 1 && (head[len - 1] == '\n' || head[len - 1] == ' '))
		len--;
	rp_atomic_file_write(&af, head, len);
	free(head);
	if (json_object_size(root))
		rp_atomic_file_write(&af, ",", 1);
	rp_atomic_file_write(&af, "\n  \"pairs\": [", 13);
	if (pairs_stream(&af, ps) != 0) {
		rp_atomic_file_abort(&af);
		return rp_error(-ENOMEM, "write %s: out of memory encoding a pair", path);
	}
	if (ps->n)
		rp_atomic_file_write(&af, "\n  ", 3);
	rp_atomic_file_write(&af, "]\n}\n", 4);
	return rp_atomic_file_commit(&af);
}

int rp_report_write_text(const char *text, size_t len, const char *path)
{
	return rp_atomic_write(path, text, len);
}

const char *rp_report_warnings(uint32_t warnings, char *buf, size_t len)
{
	size_t o = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (int w = 0; w < RP_WARN_COUNT_; w++) {
		int n;

		if (!(warnings & (1u << w)))
			continue;
		n = snprintf(buf + o, len - o, "%s%s", o ? ";" : "", rp_pair_warning_code((enum rp_pair_warning)w));
		if (n < 0 || (size_t)n >= len - o)
			break;
		o += (size_t)n;
	}
	return buf;
}

const char *rp_report_confirm_text(enum rp_confirm c)
{
	switch (c) {
	case RP_CONFIRM_FLAKY: return "flaky: failed, then passed on a retest";
	case RP_CONFIRM_CONFIRMED: return "confirmed: failed on every attempt";
	case RP_CONFIRM_UNCONFIRMED: return "not confirmed: failed once and could not be measured again";
	case RP_CONFIRM_BY_ENDPOINT: return "confirmed by its endpoint: not measured again itself; a sample of "
					    "its endpoint's failed pairs was, and every one failed again";
	case RP_CONFIRM_NONE:
	case RP_CONFIRM_COUNT_: break;
	}
	return "";
}

void rp_report_attempts_xml(struct rp_sb *sb, const struct rp_pair_result *r)
{
	for (unsigned i = 0; i < rp_report_n_attempts(r); i++) {
		const struct rp_attempt *a = &r->attempts[i];
		const char *side = rp_side_code(a->side);

		rp_sb_printf(sb, "%sattempt %u: %s", i ? "; " : "", i + 1, rp_status_code(a->status));
		if (side)
			rp_sb_printf(sb, " on %s", side);
		rp_sb_printf(sb, " (qp_timeout %d", a->qp_timeout);
		if (isfinite(a->gbps))
			rp_sb_printf(sb, ", %.3f Gb/s", a->gbps);
		rp_sb_puts(sb, ")");
		if (strnlen(a->reason, sizeof(a->reason))) {
			rp_sb_puts(sb, ": ");
			rp_sb_xmln(sb, a->reason, sizeof(a->reason));
		}
	}
}

json_t *rp_json_string_safe(const char *s)
{
	char *copy;
	json_t *j;

	if (!s || rp_str_is_clean(s))
		return json_string(s ? s : "");
	copy = strdup(s);
	if (!copy)
		return NULL;
	rp_str_sanitize(copy);
	j = json_string(copy);
	free(copy);
	return j;
}
