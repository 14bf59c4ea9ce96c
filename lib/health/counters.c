/* counters.c: counter snapshots, deltas, classes, limits and the judgement; see counters.h.
 *
 * Names and widths: K drivers/infiniband/core/sysfs.c (PMA attributes), ib/hw/mlx5/counters.c,
 * ib/sw/rxe/rxe_hw_counters.c, bnxt_re and irdma (doc/health-signals.md, section 1).
 *
 * Measured on the Soft-RoCE test bed (Linux 6.1, tests/e2e/19-devices-health.sh): a 300 x 4 KiB
 * loopback pair each way over a link with 5% netem loss moves completer_retry_err (10-21),
 * out_of_seq_request (10-20) and sometimes duplicate_request on both devices, all of class retrans;
 * the same run on the clean link moves only sent_pkts, rcvd_pkts and rdma_recvs (class other). That
 * rxe has no counters/ directory and no sent_bytes/rcvd_bytes, so its deltas are never
 * traffic_checked.
 */
#include "health/counters.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/sanitize.h"
#include "discover/sysfs.h"
#include "base/util.h"

/* ---- names ---- */

struct ctr_name {
	const char *name;
	enum rp_ctr_class cls;
};

static const struct ctr_name ctr_names[] = {
	/* link flap */
	{ "link_downed", RP_CC_FLAP }, { "link_error_recovery", RP_CC_FLAP },
	/* physical layer */
	{ "symbol_error", RP_CC_PHYS }, { "port_rcv_errors", RP_CC_PHYS },
	{ "local_link_integrity_errors", RP_CC_PHYS }, { "excessive_buffer_overrun_errors", RP_CC_PHYS },
	{ "port_rcv_remote_physical_errors", RP_CC_PHYS }, { "rx_icrc_encapsulated", RP_CC_PHYS },
	/* sequence gaps, the evidence of loss: the responder saw a PSN ahead of the expected one
	 * (mlx5 out_of_sequence, rxe out_of_seq_request), the requester got a sequence-error NAK
	 * (mlx5 packet_seq_err, implied_nak_seq_err; rxe rcvd_seq_err; bnxt_re seq_err_naks_rcvd) */
	{ "out_of_sequence", RP_CC_RETRANS }, { "packet_seq_err", RP_CC_RETRANS },
	{ "implied_nak_seq_err", RP_CC_RETRANS }, { "rcvd_seq_err", RP_CC_RETRANS },
	{ "out_of_seq_request", RP_CC_RETRANS }, { "seq_err_naks_rcvd", RP_CC_RETRANS },
	/* retransmissions that prove no loss: a duplicate (the responder already had it), a sender's
	 * timeout or retry (mlx5, rxe, bnxt_re): a slow or starved peer, or a lost ACK, as well as loss */
	{ "duplicate_request", RP_CC_RESEND }, { "local_ack_timeout_err", RP_CC_RESEND },
	{ "roce_adp_retrans", RP_CC_RESEND }, { "roce_adp_retrans_to", RP_CC_RESEND },
	{ "roce_slow_restart", RP_CC_RESEND }, { "roce_slow_restart_trans", RP_CC_RESEND },
	{ "req_transport_retries_exceeded", RP_CC_RESEND }, { "completer_retry_err", RP_CC_RESEND },
	{ "retry_exceeded_err", RP_CC_RESEND }, { "to_retransmits", RP_CC_RESEND },
	/* congestion */
	{ "np_ecn_marked_roce_packets", RP_CC_CONGESTION }, { "np_cnp_sent", RP_CC_CONGESTION },
	{ "rp_cnp_handled", RP_CC_CONGESTION }, { "rp_cnp_ignored", RP_CC_CONGESTION },
	{ "roce_slow_restart_cnps", RP_CC_CONGESTION }, { "port_xmit_wait", RP_CC_CONGESTION },
	{ "port_xmit_discards", RP_CC_CONGESTION }, { "tx_cnp_pkts", RP_CC_CONGESTION },
	{ "rx_cnp_pkts", RP_CC_CONGESTION }, { "rx_ecn_marked_pkts", RP_CC_CONGESTION },
	{ "cnpHandled", RP_CC_CONGESTION }, { "cnpSent", RP_CC_CONGESTION }, { "RxECNMrkd", RP_CC_CONGESTION },
	/* receiver not ready */
	{ "rnr_nak_retry_err", RP_CC_RNR }, { "req_rnr_retries_exceeded", RP_CC_RNR },
	{ "out_of_buffer", RP_CC_RNR }, { "rcvd_rnr_err", RP_CC_RNR }, { "send_rnr_err", RP_CC_RNR },
	{ "retry_rnr_exceeded_err", RP_CC_RNR }, { "rnr_naks_rcvd", RP_CC_RNR },
	/* traffic (attribution) */
	{ "port_xmit_data", RP_CC_TRAFFIC }, { "port_rcv_data", RP_CC_TRAFFIC },
	{ "sent_bytes", RP_CC_TRAFFIC }, { "rcvd_bytes", RP_CC_TRAFFIC },
};

const char *rp_ctr_class_name(enum rp_ctr_class c)
{
	static const char *const names[] = { "other", "link_flap", "phys", "retrans", "congestion", "rnr", "traffic",
					     "resend" };

	return (unsigned)c < RP_ARRAY_SIZE(names) ? names[c] : "other";
}

enum rp_ctr_class rp_ctr_classify_name(const char *name)
{
	for (size_t i = 0; name && i < RP_ARRAY_SIZE(ctr_names); i++)
		if (strcmp(ctr_names[i].name, name) == 0)
			return ctr_names[i].cls;
	return RP_CC_OTHER;
}

int rp_ctr_pma_bits(const char *name, bool ext_width)
{
	static const struct { const char *name; int bits; } widths[] = {
		{ "symbol_error", 16 }, { "port_rcv_errors", 16 }, { "port_rcv_remote_physical_errors", 16 },
		{ "port_rcv_switch_relay_errors", 16 }, { "port_xmit_discards", 16 }, { "VL15_dropped", 16 },
		{ "link_error_recovery", 8 }, { "link_downed", 8 }, { "port_xmit_constraint_errors", 8 },
		{ "port_rcv_constraint_errors", 8 }, { "local_link_integrity_errors", 4 },
		{ "excessive_buffer_overrun_errors", 4 }, { "port_xmit_wait", 32 },
	};
	static const char *const data[] = { "port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets" };

	for (size_t i = 0; i < RP_ARRAY_SIZE(widths); i++)
		if (strcmp(widths[i].name, name) == 0)
			return widths[i].bits;
	for (size_t i = 0; i < RP_ARRAY_SIZE(data); i++)
		if (strcmp(data[i], name) == 0)
			return ext_width ? 64 : 32;
	return 64;
}

const char *rp_ctr_verdict_name(enum rp_ctr_verdict v)
{
	return v == RP_CV_FAIL ? "fail" : v == RP_CV_LOSSY ? "lossy" : "ok";
}

/* ---- snapshots ---- */

/* Read every file of one counter directory into snap; a missing directory adds nothing. */
static int snap_dir(const char *root, const char *rel, enum rp_ctr_source source, struct rp_ctr_snapshot *snap)
{
	char **names = NULL, buf[64];
	bool ext = false;
	size_t n = 0;
	int rc;

	rc = rp_sysfs_list_dir(root, rel, &names, &n);
	if (rc)
		return rc == -ENOENT || rc == -ENOTDIR ? 0 : rc;
	for (size_t i = 0; i < n; i++)
		ext = ext || strcmp(names[i], "unicast_xmit_packets") == 0;
	for (size_t i = 0; i < n; i++) {
		struct rp_ctr_value *v;
		char file[PATH_MAX];

		/* lifespan is the cache time of hw_counters (ms), not a counter. */
		if (strcmp(names[i], "lifespan") == 0 || strlen(names[i]) >= RP_CTR_NAME_MAX)
			continue;
		if (snap->n == RP_CTR_MAX) {
			snap->truncated = true;
			break;
		}
		v = &snap->v[snap->n++];
		memset(v, 0, sizeof(*v));
		rp_strlcpy(v->name, names[i], sizeof(v->name));
		v->source = source;
		v->bits = source == RP_CTR_PMA ? rp_ctr_pma_bits(names[i], ext) : 64;
		if (snprintf(file, sizeof(file), "%s/%s", rel, names[i]) >= (int)sizeof(file)) {
			v->err = -ENAMETOOLONG;
			continue;
		}
		v->err = rp_sysfs_read(root, file, buf, sizeof(buf));
		if (!v->err && rp_parse_u64(buf, 0, UINT64_MAX, false, &v->value))
			v->err = -EINVAL;   /* "N/A (no PMA)" on old kernels, or garbage */
	}
	rp_sysfs_free_names(names);
	return 0;
}

int rp_ctr_snapshot(const char *sysfs_root, const char *device, int port, struct rp_ctr_snapshot *snap)
{
	char rel[PATH_MAX], buf[64];
	char **names = NULL;
	size_t n = 0;
	int rc;

	if (!sysfs_root || !device || !device[0] || port < 1 || !snap)
		return -EINVAL;
	memset(snap, 0, sizeof(*snap));
	rp_strlcpy(snap->device, device, sizeof(snap->device));
	snap->port = port;
	if (snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%d", device, port) >= (int)sizeof(rel))
		return -ENAMETOOLONG;
	rc = rp_sysfs_list_dir(sysfs_root, rel, &names, &n);
	rp_sysfs_free_names(names);
	if (rc)
		return rc == -ENOMEM ? rc : -ENOENT;
	if (rp_sysfs_readf(sysfs_root, buf, sizeof(buf), "class/infiniband/%s/node_guid", device) == 0)
		rp_strlcpy(snap->node_guid, buf, sizeof(snap->node_guid));
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%d/counters", device, port);
	rc = snap_dir(sysfs_root, rel, RP_CTR_PMA, snap);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%d/hw_counters", device, port);
	rc = rc ? rc : snap_dir(sysfs_root, rel, RP_CTR_HW_PORT, snap);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/hw_counters", device);
	rc = rc ? rc : snap_dir(sysfs_root, rel, RP_CTR_HW_DEV, snap);
	snap->t = rp_now();
	return rc;
}

const struct rp_ctr_value *rp_ctr_find(const struct rp_ctr_snapshot *snap, enum rp_ctr_source source,
				       const char *name)
{
	for (size_t i = 0; snap && i < snap->n; i++)
		if (snap->v[i].source == source && strcmp(snap->v[i].name, name) == 0)
			return &snap->v[i];
	return NULL;
}

/* ---- deltas ---- */

static uint64_t bits_max(int bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* The change of one counter between a and b (b NULL: missing after). */
static void change_of(const struct rp_ctr_value *a, const struct rp_ctr_value *b, struct rp_ctr_change *c,
		      bool *reset_p)
{
	uint64_t max = bits_max(a->bits);

	memset(c, 0, sizeof(*c));
	rp_strlcpy(c->name, a->name, sizeof(c->name));
	c->source = a->source;
	c->cls = rp_ctr_classify_name(a->name);
	c->kind = RP_CK_UNKNOWN;
	if (!b) {
		rp_strlcpy(c->why, "missing after", sizeof(c->why));
	} else if (a->err || b->err) {
		snprintf(c->why, sizeof(c->why), "unreadable %s: %s", a->err ? "before" : "after",
			 strerror(-(a->err ? a->err : b->err)));
	} else if (a->bits < 64 && a->value >= max) {
		snprintf(c->why, sizeof(c->why), "saturated at %" PRIu64 " before", max);
	} else if (b->value < a->value) {
		c->kind = RP_CK_AT_LEAST;
		c->delta = b->value;
		rp_strlcpy(c->why, "reset during the interval", sizeof(c->why));
		*reset_p = true;
	} else if (a->bits < 64 && b->value >= max) {
		c->kind = RP_CK_AT_LEAST;
		c->delta = b->value - a->value;
		snprintf(c->why, sizeof(c->why), "saturated at %" PRIu64, max);
	} else {
		c->kind = RP_CK_EXACT;
		c->delta = b->value - a->value;
	}
}

/* True when both snapshots list the same counters in the same order. */
static bool same_list(const struct rp_ctr_snapshot *a, const struct rp_ctr_snapshot *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].source != b->v[i].source || strcmp(a->v[i].name, b->v[i].name) != 0)
			return false;
	return true;
}

/* Bytes through the port by its byte counters; false when it has none that changed exactly. */
static bool traffic_bytes(const struct rp_ctr_delta *d, const struct rp_ctr_snapshot *a,
			  const struct rp_ctr_snapshot *b, uint64_t *bytes_p)
{
	static const struct { enum rp_ctr_source src; const char *name; unsigned mult; } ctrs[] = {
		{ RP_CTR_PMA, "port_xmit_data", 4 }, { RP_CTR_PMA, "port_rcv_data", 4 },
		{ RP_CTR_HW_PORT, "sent_bytes", 1 }, { RP_CTR_HW_PORT, "rcvd_bytes", 1 },
	};
	uint64_t total = 0;
	bool found = false;

	(void)d;
	for (size_t i = 0; i < RP_ARRAY_SIZE(ctrs); i++) {
		const struct rp_ctr_value *x = rp_ctr_find(a, ctrs[i].src, ctrs[i].name);
		const struct rp_ctr_value *y = rp_ctr_find(b, ctrs[i].src, ctrs[i].name);

		if (!x || !y || x->err || y->err || y->value < x->value || (x->bits < 64 && y->value >= bits_max(x->bits)))
			continue;
		total += (y->value - x->value) * ctrs[i].mult;
		found = true;
	}
	*bytes_p = total;
	return found;
}

/* The traffic test of counters.h: another process used the port. */
static void check_traffic(struct rp_ctr_delta *d, const struct rp_ctr_snapshot *a, const struct rp_ctr_snapshot *b,
			  uint64_t expected)
{
	const uint64_t slack = UINT64_C(64) << 20;
	uint64_t limit;

	if (!expected || !traffic_bytes(d, a, b, &d->traffic_bytes))
		return;
	d->traffic_checked = true;
	limit = expected > UINT64_MAX / 4 ? UINT64_MAX : expected * 4;
	if (limit < expected + slack)
		limit = expected + slack;
	if (d->traffic_bytes > limit && !d->unattributable) {
		d->unattributable = true;
		snprintf(d->unattributable_why, sizeof(d->unattributable_why),
			 "the port moved %" PRIu64 " bytes, the measurement %" PRIu64 ": another process used it",
			 d->traffic_bytes, expected);
	}
}

int rp_ctr_delta(const struct rp_ctr_snapshot *before, const struct rp_ctr_snapshot *after,
		 uint64_t expected_bytes, struct rp_ctr_delta *d)
{
	if (!before || !after || !d || before->port != after->port || strcmp(before->device, after->device) != 0)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	rp_strlcpy(d->device, before->device, sizeof(d->device));
	d->port = before->port;
	d->seconds = after->t - before->t;
	if (strcmp(before->node_guid, after->node_guid) != 0 || !same_list(before, after)) {
		d->reregistered = d->unattributable = true;
		rp_strlcpy(d->unattributable_why, strcmp(before->node_guid, after->node_guid) != 0 ?
			   "the device re-registered (node GUID changed)" :
			   "the device re-registered (its counter list changed)", sizeof(d->unattributable_why));
		return 0;
	}
	for (size_t i = 0; i < before->n; i++) {
		struct rp_ctr_change c;

		change_of(&before->v[i], &after->v[i], &c, &d->reset_seen);
		if (c.cls == RP_CC_TRAFFIC && c.kind != RP_CK_UNKNOWN)
			continue;
		if (c.kind == RP_CK_UNKNOWN || c.delta > 0)
			d->changes[d->n++] = c;
	}
	if (d->reset_seen) {
		d->unattributable = true;
		rp_strlcpy(d->unattributable_why, "a counter was reset during the interval (a PerfMgr or the driver)",
			   sizeof(d->unattributable_why));
	}
	check_traffic(d, before, after, expected_bytes);
	return 0;
}

/* ---- limits ---- */

void rp_ctr_limits_default(struct rp_ctr_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->cls[RP_CC_FLAP] = (struct rp_ctr_limit){ true, false, 0 };
	lim->cls[RP_CC_PHYS] = (struct rp_ctr_limit){ true, false, 0 };
	lim->cls[RP_CC_RETRANS] = (struct rp_ctr_limit){ true, true, 10 };
}

/* The class a --max-errors item names, or -1. */
static int limit_class(const char *name, size_t len)
{
	static const struct { const char *name; enum rp_ctr_class cls; } names[] = {
		{ "link_flap", RP_CC_FLAP }, { "flap", RP_CC_FLAP }, { "phys", RP_CC_PHYS },
		{ "retrans", RP_CC_RETRANS }, { "congestion", RP_CC_CONGESTION }, { "rnr", RP_CC_RNR },
		{ "resend", RP_CC_RESEND },
	};

	for (size_t i = 0; i < RP_ARRAY_SIZE(names); i++)
		if (strlen(names[i].name) == len && strncmp(names[i].name, name, len) == 0)
			return (int)names[i].cls;
	return -1;
}

/* One LIMIT: "off", "N", "N/GB". */
static int limit_value(const char *s, struct rp_ctr_limit *l)
{
	char num[32];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	double v;

	if (strcmp(s, "off") == 0) {
		*l = (struct rp_ctr_limit){ false, false, 0 };
		return 0;
	}
	if (n == 0 || n >= sizeof(num) || (slash && strcmp(slash, "/GB") != 0))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	if (rp_parse_double(num, 0, 1e12, &v))
		return -EINVAL;
	*l = (struct rp_ctr_limit){ true, slash != NULL, v };
	return 0;
}

int rp_ctr_limits_parse(const char *s, struct rp_ctr_limits *lim, char *err, size_t err_size)
{
	struct rp_ctr_limits out = *lim;
	const char *p = s;

	if (!s || !*s) {
		snprintf(err, err_size, "empty value: expected CLASS=LIMIT[,...], e.g. phys=0,retrans=10/GB");
		return -EINVAL;
	}
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		char value[48];
		size_t vlen;
		int cls;

		if (!eq) {
			snprintf(err, err_size, "'%.*s': expected CLASS=LIMIT", (int)(len > 40 ? 40 : len), p);
			return -EINVAL;
		}
		cls = limit_class(p, (size_t)(eq - p));
		if (cls < 0) {
			snprintf(err, err_size, "'%.*s': unknown class (link_flap, phys, retrans, resend, congestion, rnr)",
				 (int)(eq - p > 40 ? 40 : eq - p), p);
			return -EINVAL;
		}
		vlen = len - (size_t)(eq - p) - 1;
		if (vlen < sizeof(value)) {
			memcpy(value, eq + 1, vlen);
			value[vlen] = '\0';
		}
		if (vlen >= sizeof(value) || limit_value(value, &out.cls[cls])) {
			snprintf(err, err_size, "'%.*s': LIMIT must be a count (0, 5), a rate per GB (10/GB) or off",
				 (int)(len > 40 ? 40 : len), p);
			return -EINVAL;
		}
		if (!comma)
			break;
		p = comma + 1;
		if (!*p) {
			snprintf(err, err_size, "trailing ',': expected another CLASS=LIMIT");
			return -EINVAL;
		}
	}
	*lim = out;
	return 0;
}

void rp_ctr_limits_format(const struct rp_ctr_limits *lim, char *out, size_t out_size)
{
	static const enum rp_ctr_class order[] = { RP_CC_FLAP, RP_CC_PHYS, RP_CC_RETRANS, RP_CC_RESEND, RP_CC_CONGESTION,
						   RP_CC_RNR };
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < RP_ARRAY_SIZE(order) && len < out_size; i++) {
		const struct rp_ctr_limit *l = &lim->cls[order[i]];
		int n;

		if (l->enabled)
			n = snprintf(out + len, out_size - len, "%s%s=%g%s", len ? "," : "", rp_ctr_class_name(order[i]),
				     l->value, l->per_gb ? "/GB" : "");
		else
			n = snprintf(out + len, out_size - len, "%s%s=off", len ? "," : "", rp_ctr_class_name(order[i]));
		if (n < 0)
			return;
		len += (size_t)n;
	}
}

/* ---- judgement ---- */

void rp_ctr_change_key(const struct rp_ctr_delta *d, size_t i, char *out, size_t size)
{
	const struct rp_ctr_change *c = &d->changes[i];
	bool clash = false;

	for (size_t k = 0; k < d->n && !clash; k++)
		clash = k != i && d->changes[k].source != c->source && strcmp(d->changes[k].name, c->name) == 0;
	if (!clash || c->source == RP_CTR_PMA)
		snprintf(out, size, "%s", c->name);
	else
		snprintf(out, size, "%s%s", c->source == RP_CTR_HW_DEV ? "device/hw_counters/" : "hw_counters/", c->name);
}

/* Append "name +N" (or "name >=+N") for each change of class cls to reason. */
static void list_moved(const struct rp_ctr_delta *d, enum rp_ctr_class cls, char *r, size_t size)
{
	size_t len = strlen(r), shown = 0;

	for (size_t i = 0; i < d->n && len < size; i++) {
		const struct rp_ctr_change *c = &d->changes[i];
		int n;

		char key[RP_CTR_NAME_MAX + 24];

		if (c->cls != cls || c->kind == RP_CK_UNKNOWN)
			continue;
		rp_ctr_change_key(d, i, key, sizeof(key));
		n = snprintf(r + len, size - len, "%s%s %s%" PRIu64, shown ? ", " : "", key,
			     c->kind == RP_CK_AT_LEAST ? ">= +" : "+", c->delta);
		if (n < 0)
			return;
		len += (size_t)n;
		shown++;
	}
}

/* Sum of the known changes of class cls. */
static uint64_t class_sum(const struct rp_ctr_delta *d, enum rp_ctr_class cls)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < d->n; i++)
		if (d->changes[i].cls == cls && d->changes[i].kind != RP_CK_UNKNOWN)
			sum = d->changes[i].delta > UINT64_MAX - sum ? UINT64_MAX : sum + d->changes[i].delta;
	return sum;
}

/* True when sum is above the limit for a pair that moved bytes. */
static bool over_limit(const struct rp_ctr_limit *l, uint64_t sum, uint64_t bytes, double *rate_p)
{
	double gb = (double)bytes / 1e9;

	if (gb < 1)
		gb = 1;
	*rate_p = (double)sum / gb;
	if (!l->enabled)
		return false;
	return l->per_gb ? (double)sum > l->value * gb : (double)sum > l->value;
}

/* j->reason: "<what> <rate>/GB above <limit>/GB: " (or counts for a count limit). */
static void over_text(const struct rp_ctr_limit *l, const char *what, uint64_t sum, double rate, char *r, size_t size)
{
	if (l->per_gb)
		snprintf(r, size, "%s %.*f/GB above %g/GB: ", what, rate < 10 ? 2 : 0, rate, l->value);
	else
		snprintf(r, size, "%s %" PRIu64 " above %g: ", what, sum, l->value);
}

/* Loss against retransmission, each judged on its own. Sequence gaps (a packet that never arrived)
 * are loss: lossy above "retrans", the resends listed after them as what the loss cost.
 * Retransmissions without a gap (duplicates, a sender's timeouts) say the data arrived and was
 * resent: a slow or CPU-starved peer or a lost ACK: named in the reason, not lossy, unless "resend"
 * has a limit of its own. On the soft-device test bed under host contention a healthy link shows
 * up to 214 resends and 0-7 gaps per 13 MB; 5% netem loss 19-57 gaps per 2-4 MB (e2e 12, 26, 72). */
static void judge_transport(const struct rp_ctr_delta *d, uint64_t bytes, const struct rp_ctr_limits *lim,
			    struct rp_ctr_judgement *j)
{
	uint64_t gaps = class_sum(d, RP_CC_RETRANS), resent = class_sum(d, RP_CC_RESEND);
	double rate;

	if (gaps && over_limit(&lim->cls[RP_CC_RETRANS], gaps, bytes, &rate)) {
		j->verdict = RP_CV_LOSSY;
		j->cls = RP_CC_RETRANS;
		over_text(&lim->cls[RP_CC_RETRANS], "packet loss: sequence gaps", gaps, rate, j->reason, sizeof(j->reason));
		list_moved(d, RP_CC_RETRANS, j->reason, sizeof(j->reason));
		if (resent)
			strncat(j->reason, "; resent: ", sizeof(j->reason) - strlen(j->reason) - 1);
		list_moved(d, RP_CC_RESEND, j->reason, sizeof(j->reason));
		return;
	}
	if (resent && over_limit(&lim->cls[RP_CC_RESEND], resent, bytes, &rate)) {
		j->verdict = RP_CV_LOSSY;
		j->cls = RP_CC_RESEND;
		over_text(&lim->cls[RP_CC_RESEND], "retransmissions without a sequence gap", resent, rate, j->reason,
			  sizeof(j->reason));
		list_moved(d, RP_CC_RESEND, j->reason, sizeof(j->reason));
		return;
	}
	if (!resent || gaps)
		return;
	snprintf(j->reason, sizeof(j->reason), "resent, no loss: ");
	list_moved(d, RP_CC_RESEND, j->reason, sizeof(j->reason));
	strncat(j->reason, " (no sequence gap: the data arrived; a slow peer or a lost ACK; on a soft device, host "
		"CPU starvation)", sizeof(j->reason) - strlen(j->reason) - 1);
}

void rp_ctr_judge(const struct rp_ctr_delta *d, uint64_t bytes, const struct rp_ctr_limits *lim,
		  struct rp_ctr_judgement *j)
{
	static const enum rp_ctr_class fails[] = { RP_CC_FLAP, RP_CC_PHYS };
	double rate;

	memset(j, 0, sizeof(*j));
	for (size_t i = 0; i < d->n; i++) {
		if (d->changes[i].kind == RP_CK_UNKNOWN)
			j->unknown |= 1u << d->changes[i].cls;
		else
			j->moved |= 1u << d->changes[i].cls;
	}
	for (size_t i = 0; i < RP_ARRAY_SIZE(fails); i++) {
		uint64_t sum = class_sum(d, fails[i]);

		if (!over_limit(&lim->cls[fails[i]], sum, bytes, &rate))
			continue;
		j->verdict = RP_CV_FAIL;
		j->cls = fails[i];
		snprintf(j->reason, sizeof(j->reason), "%s: ", fails[i] == RP_CC_FLAP ? "link flapped" :
			 "physical-layer errors");
		list_moved(d, fails[i], j->reason, sizeof(j->reason));
		return;
	}
	/* Transport counters are shared by every QP on the port: judged only when they are ours. */
	if (d->unattributable)
		return;
	judge_transport(d, bytes, lim, j);
}

/* ---- the compact form for a pair's result ---- */

/* Rank of a class in the compact form: the judged ones first. */
static int class_rank(enum rp_ctr_class c)
{
	switch (c) {
	case RP_CC_FLAP: return 0;
	case RP_CC_PHYS: return 1;
	case RP_CC_RETRANS: return 2;
	case RP_CC_RESEND: return 3;
	case RP_CC_CONGESTION: return 4;
	case RP_CC_RNR: return 5;
	default: return 6;
	}
}

/* Does change a go before change b in the compact form? */
static bool change_before(const struct rp_ctr_change *a, const struct rp_ctr_change *b)
{
	if (class_rank(a->cls) != class_rank(b->cls))
		return class_rank(a->cls) < class_rank(b->cls);
	return a->delta > b->delta;
}

void rp_ctr_side_fill(const struct rp_ctr_delta *d, const struct rp_ctr_judgement *j, struct rp_pair_ctr_side *out)
{
	bool taken[RP_CTR_MAX] = { false };

	memset(out, 0, sizeof(*out));
	out->measured = 1;
	out->verdict = (uint32_t)j->verdict;
	out->cls = (uint32_t)j->cls;
	out->unattributable = d->unattributable || d->reregistered;
	rp_strlcpy(out->reason, j->reason, sizeof(out->reason));
	for (size_t i = 0; i < d->n; i++) {
		if (d->changes[i].kind == RP_CK_UNKNOWN)
			out->n_unknown++;
		else
			out->n_moved++;
	}
	/* selection: n is at most RP_PAIR_CTR_MAX, d->n at most RP_CTR_MAX */
	while (out->n < RP_PAIR_CTR_MAX) {
		size_t best = SIZE_MAX;

		for (size_t i = 0; i < d->n; i++)
			if (!taken[i] && d->changes[i].kind != RP_CK_UNKNOWN &&
			    (best == SIZE_MAX || change_before(&d->changes[i], &d->changes[best])))
				best = i;
		if (best == SIZE_MAX)
			break;
		taken[best] = true;
		struct rp_pair_ctr *c = &out->c[out->n++];
		char key[RP_CTR_NAME_MAX + 24];

		rp_ctr_change_key(d, best, key, sizeof(key));
		rp_strlcpy(c->name, key, sizeof(c->name));
		c->cls = (uint32_t)d->changes[best].cls;
		c->at_least = d->changes[best].kind == RP_CK_AT_LEAST;
		c->delta = d->changes[best].delta;
	}
}

static bool terminated(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

int rp_ctr_side_validate(struct rp_pair_ctr_side *s, char *why, size_t why_len)
{
	/* brief is rank 0's own mark (lib/matrix/mx_results.h), never a peer's */
	if (s->measured > 1 || s->brief != 0 || s->verdict > RP_CV_FAIL || s->cls >= RP_CC_COUNT_ || s->unattributable > 1 ||
	    s->n > RP_PAIR_CTR_MAX || s->n > s->n_moved || s->n_moved > RP_CTR_MAX || s->n_unknown > RP_CTR_MAX ||
	    !terminated(s->reason, sizeof(s->reason)) || (!s->measured && (s->n || s->verdict))) {
		snprintf(why, why_len, "port counters out of range (%u kept of %u, verdict %u, class %u)", s->n,
			 s->n_moved, s->verdict, s->cls);
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		if (!terminated(s->c[i].name, sizeof(s->c[i].name)) || s->c[i].cls >= RP_CC_COUNT_ ||
		    s->c[i].at_least > 1) {
			snprintf(why, why_len, "port counter %u: unterminated name or class out of range", i);
			return -EBADMSG;
		}
		rp_str_sanitize(s->c[i].name);
	}
	rp_str_sanitize(s->reason);
	return 0;
}
