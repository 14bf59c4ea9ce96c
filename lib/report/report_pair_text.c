/* report_pair_text.c: one pair as compact JSON text, as lib/report/report.c's jansson tree dumps it; see
 * report_pair_text.h. The keys, their order and each value's rule follow pair_json() there. */
#include "report/report_pair_text.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "health/counters.h"
#include "base/util.h"

static const char hex[] = "0123456789ABCDEF";

/* The bytes of s[0, len) as a JSON string's content: quote, backslash and control characters
 * escaped (the short forms where JSON has them, else \u00XX); the bytes are valid UTF-8 here. */
static void esc(struct rp_sb *sb, const char *s, size_t len)
{
	size_t from = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char e[6] = { '\\', 0, '0', '0', 0, 0 };
		size_t n = 2;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		rp_sb_putn(sb, s + from, i - from);
		from = i + 1;
		switch (c) {
		case '"': e[1] = '"'; break;
		case '\\': e[1] = '\\'; break;
		case '\b': e[1] = 'b'; break;
		case '\f': e[1] = 'f'; break;
		case '\n': e[1] = 'n'; break;
		case '\r': e[1] = 'r'; break;
		case '\t': e[1] = 't'; break;
		default:
			e[1] = 'u';
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			n = 6;
		}
		rp_sb_putn(sb, e, n);
	}
	rp_sb_putn(sb, s + from, len - from);
}

/* A string of at most max bytes of s, every byte that starts no valid UTF-8 sequence as U+FFFD (as
 * lib/report/report.c's jstr()). */
static void str(struct rp_sb *sb, const char *s, size_t max)
{
	size_t len = s ? strnlen(s, max) : 0, from = 0;

	rp_sb_putn(sb, "\"", 1);
	for (size_t i = 0; i < len;) {
		size_t n = rp_utf8_seq_len(s + i, len - i);

		if (n) {
			i += n;
			continue;
		}
		esc(sb, s + from, i - from);
		rp_sb_putn(sb, "\xef\xbf\xbd", 3);
		from = ++i;
	}
	esc(sb, s + from, len - from);
	rp_sb_putn(sb, "\"", 1);
}

/* A constant code ("ok", "src"), or null. */
static void code(struct rp_sb *sb, const char *c)
{
	if (!c) {
		rp_sb_putn(sb, "null", 4);
		return;
	}
	str(sb, c, SIZE_MAX);
}

static void key(struct rp_sb *sb, const char *k, bool first)
{
	if (!first)
		rp_sb_putn(sb, ",", 1);
	rp_sb_putn(sb, "\"", 1);
	rp_sb_puts(sb, k);
	rp_sb_putn(sb, "\":", 2);
}

static void integer(struct rp_sb *sb, long long v)
{
	char b[24];
	int n = snprintf(b, sizeof(b), "%lld", v);

	rp_sb_putn(sb, b, (size_t)n);
}

/* A real as jansson prints it with precision 6: "%.6g", ".0" added when that has neither a point
 * nor an exponent, the exponent without its '+' and leading zeros; null when not finite. */
static void num(struct rp_sb *sb, double v)
{
	char b[48], *e;
	size_t n;

	if (!isfinite(v)) {
		rp_sb_putn(sb, "null", 4);
		return;
	}
	n = (size_t)snprintf(b, sizeof(b) - 3, "%.6g", v);
	e = strchr(b, 'e');
	if (!e && !strchr(b, '.')) {
		memcpy(b + n, ".0", 3);
		n += 2;
	}
	if (e) {
		char *d = e + 1, *p;

		if (*d == '-')
			d++;
		p = *d == '+' ? d + 1 : d;
		while (*p == '0' && p[1])
			p++;
		memmove(d, p, strlen(p) + 1);
		n = strlen(b);
	}
	rp_sb_putn(sb, b, n);
}

static void boolean(struct rp_sb *sb, bool v)
{
	rp_sb_puts(sb, v ? "true" : "false");
}

static void endpoint(struct rp_sb *sb, const struct rp_endpoint *e)
{
	key(sb, "node", true), str(sb, e->node, sizeof(e->node));
	key(sb, "device", false), str(sb, e->device, sizeof(e->device));
	key(sb, "port", false), integer(sb, e->port);
	key(sb, "gid_index", false), integer(sb, e->gid_index);
	key(sb, "mtu", false), integer(sb, e->mtu);
	key(sb, "link_gbps", false), num(sb, e->link_gbps);
	key(sb, "mem", false), str(sb, e->mem, sizeof(e->mem));
	key(sb, "mem_reg", false), str(sb, e->mem_reg, sizeof(e->mem_reg));
	key(sb, "soft", false), boolean(sb, e->soft);
}

static void warnings(struct rp_sb *sb, uint32_t w)
{
	bool first = true;

	rp_sb_putn(sb, "[", 1);
	for (int k = 0; k < RP_WARN_COUNT_; k++) {
		if (!(w & (1u << k)))
			continue;
		if (!first)
			rp_sb_putn(sb, ",", 1);
		first = false;
		code(sb, rp_pair_warning_code((enum rp_pair_warning)k));
	}
	rp_sb_putn(sb, "]", 1);
}

/* Whether s is NUL-terminated within max bytes and valid UTF-8 (what jansson takes as a key or a
 * json_string() without refusing it). */
static bool jansson_takes(const char *s, size_t max)
{
	size_t len = strnlen(s, max);

	if (len == max)
		return false;
	for (size_t i = 0; i < len;) {
		size_t n = rp_utf8_seq_len(s + i, len - i);

		if (!n)
			return false;
		i += n;
	}
	return true;
}

/* Whether lib/health/counters_json.c's object for s is one this file writes the same. */
static bool side_simple(const struct rp_pair_ctr_side *s)
{
	uint32_t n = s->n < RP_PAIR_CTR_MAX ? s->n : RP_PAIR_CTR_MAX;

	if (!s->measured)
		return true;
	if (s->reason[0] && !jansson_takes(s->reason, sizeof(s->reason)))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (!jansson_takes(s->c[i].name, sizeof(s->c[i].name)))
			return false;
		for (uint32_t k = 0; k < i; k++)
			if (strcmp(s->c[i].name, s->c[k].name) == 0)
				return false;   /* jansson keeps one of the two */
	}
	return true;
}

/* The moved (at_least 0) or at_least (1) counters as an object of name: delta. */
static void ctr_list(struct rp_sb *sb, const struct rp_pair_ctr_side *s, uint32_t at_least)
{
	uint32_t n = s->n < RP_PAIR_CTR_MAX ? s->n : RP_PAIR_CTR_MAX;
	bool first = true;

	rp_sb_putn(sb, "{", 1);
	for (uint32_t i = 0; i < n; i++) {
		if ((s->c[i].at_least != 0) != (at_least != 0))
			continue;
		if (!first)
			rp_sb_putn(sb, ",", 1);
		first = false;
		str(sb, s->c[i].name, sizeof(s->c[i].name));
		rp_sb_putn(sb, ":", 1);
		integer(sb, (long long)(s->c[i].delta > INT64_MAX ? INT64_MAX : s->c[i].delta));
	}
	rp_sb_putn(sb, "}", 1);
}

static void ctr_side(struct rp_sb *sb, const struct rp_pair_ctr_side *s)
{
	if (!s->measured) {
		rp_sb_putn(sb, "null", 4);
		return;
	}
	rp_sb_putn(sb, "{", 1);
	key(sb, "moved", true), ctr_list(sb, s, 0);
	key(sb, "at_least", false), ctr_list(sb, s, 1);
	key(sb, "n_moved", false), integer(sb, s->n_moved);
	key(sb, "n_unknown", false), integer(sb, s->n_unknown);
	key(sb, "unattributable", false), boolean(sb, s->unattributable != 0);
	key(sb, "verdict", false);
	code(sb, rp_ctr_verdict_name(s->verdict <= RP_CV_FAIL ? (enum rp_ctr_verdict)s->verdict : RP_CV_OK));
	key(sb, "reason", false);
	if (s->reason[0])
		str(sb, s->reason, sizeof(s->reason));
	else
		rp_sb_putn(sb, "null", 4);
	if (s->brief)
		key(sb, "listed", false), boolean(sb, false);
	rp_sb_putn(sb, "}", 1);
}

static void attempts(struct rp_sb *sb, const struct rp_pair_result *r)
{
	unsigned n = r->n_attempts < RP_MAX_ATTEMPTS ? r->n_attempts : RP_MAX_ATTEMPTS;

	rp_sb_putn(sb, "[", 1);
	for (unsigned i = 0; i < n; i++) {
		const struct rp_attempt *a = &r->attempts[i];

		rp_sb_puts(sb, i ? ",{" : "{");
		key(sb, "status", true), code(sb, rp_status_code(a->status));
		key(sb, "side", false), code(sb, rp_side_code(a->side));
		key(sb, "reason", false), str(sb, a->reason, sizeof(a->reason));
		key(sb, "gbps", false), num(sb, a->gbps);
		key(sb, "gbps_min", false), num(sb, a->gbps_min);
		key(sb, "qp_timeout", false), integer(sb, a->qp_timeout);
		key(sb, "elapsed_s", false), num(sb, a->elapsed_s);
		rp_sb_putn(sb, "}", 1);
	}
	rp_sb_putn(sb, "]", 1);
}

static void outcome(struct rp_sb *sb, const struct rp_pair_result *r)
{
	const char *confirm = rp_confirm_code(r->confirm);

	key(sb, "gbps_min_at_s", false), num(sb, r->gbps_min_at_s);
	key(sb, "cause_side", false), code(sb, rp_side_code(r->cause_side));
	key(sb, "secondary", false);
	rp_sb_putn(sb, "{", 1);
	key(sb, "status", true), code(sb, rp_status_code(r->secondary.status));
	key(sb, "reason", false), str(sb, r->secondary.reason, sizeof(r->secondary.reason));
	rp_sb_putn(sb, "}", 1);
	key(sb, "warnings", false), warnings(sb, r->warnings);
	key(sb, "counters", false);
	rp_sb_putn(sb, "{", 1);
	key(sb, "src", true), ctr_side(sb, &r->counters.src);
	key(sb, "dst", false), ctr_side(sb, &r->counters.dst);
	rp_sb_putn(sb, "}", 1);
	key(sb, "confirm", false), code(sb, confirm[0] ? confirm : NULL);
	key(sb, "attempts", false), attempts(sb, r);
}

static void reverse(struct rp_sb *sb, const struct rp_pair_result *r)
{
	const struct rp_pair_reverse *v = &r->reverse;

	if (!v->measured)
		return;
	key(sb, "bidir", false), boolean(sb, true);
	key(sb, "forward_status", false), code(sb, rp_status_code(v->folded ? RP_ST_OK : r->status));
	key(sb, "gbps_sum", false), num(sb, rp_pair_gbps_sum(r));
	key(sb, "reverse", false);
	rp_sb_putn(sb, "{", 1);
	key(sb, "status", true), code(sb, rp_status_code(v->status));
	key(sb, "reason", false), str(sb, v->reason, sizeof(v->reason));
	key(sb, "cause_side", false), code(sb, rp_side_code(v->cause_side));
	key(sb, "gbps", false), num(sb, v->gbps);
	key(sb, "gbps_min", false), num(sb, v->gbps_min);
	key(sb, "gbps_min_at_s", false), num(sb, v->gbps_min_at_s);
	key(sb, "bytes", false), integer(sb, (long long)v->bytes);
	key(sb, "iters", false), integer(sb, (long long)v->iters);
	key(sb, "verified", false), boolean(sb, v->verified);
	key(sb, "bad_offset", false), integer(sb, (long long)v->bad_offset);
	key(sb, "warnings", false), warnings(sb, v->warnings);
	rp_sb_putn(sb, "}", 1);
}

int rp_report_pair_text(const struct rp_pair_result *r, struct rp_sb *sb)
{
	if (!side_simple(&r->counters.src) || !side_simple(&r->counters.dst))
		return 1;
	rp_sb_putn(sb, "{", 1);
	key(sb, "src", true);
	rp_sb_putn(sb, "{", 1), endpoint(sb, &r->src), rp_sb_putn(sb, "}", 1);
	key(sb, "dst", false);
	rp_sb_putn(sb, "{", 1), endpoint(sb, &r->dst), rp_sb_putn(sb, "}", 1);
	key(sb, "status", false), code(sb, rp_status_code(r->status));
	key(sb, "reason", false), str(sb, r->reason, sizeof(r->reason));
	key(sb, "gbps", false), num(sb, r->gbps);
	key(sb, "gbps_min", false), num(sb, r->gbps_min);
	key(sb, "bytes", false), integer(sb, (long long)r->bytes);
	key(sb, "iters", false), integer(sb, (long long)r->iters);
	key(sb, "msg_size", false), integer(sb, (long long)r->msg_size);
	key(sb, "verified", false), boolean(sb, r->verified);
	key(sb, "bad_offset", false), integer(sb, (long long)r->bad_offset);
	key(sb, "latency", false);
	rp_sb_putn(sb, "{", 1);
	key(sb, "measured", true), boolean(sb, r->lat.measured);
	key(sb, "min_us", false), num(sb, r->lat.min_us);
	key(sb, "median_us", false), num(sb, r->lat.median_us);
	key(sb, "p99_us", false), num(sb, r->lat.p99_us);
	key(sb, "max_us", false), num(sb, r->lat.max_us);
	key(sb, "samples", false), integer(sb, (long long)r->lat.samples);
	rp_sb_putn(sb, "}", 1);
	key(sb, "elapsed_s", false), num(sb, r->elapsed_s);
	outcome(sb, r);
	reverse(sb, r);
	rp_sb_putn(sb, "}", 1);
	return 0;
}
