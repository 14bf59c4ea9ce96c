/* counters.h: RDMA port error counters around a measurement (doc/health-signals.md, section 1).
 *
 * A snapshot reads, in one pass each, a port's PMA counters (class/infiniband/<dev>/ports/<p>/
 * counters/), its driver counters (ports/<p>/hw_counters/) and the device-level driver counters
 * (<dev>/hw_counters/, switchdev mlx5), with the node GUID and the monotonic time. Two snapshots of
 * the same port give a delta; a delta, the bytes the pair moved and per-class thresholds give a
 * judgement (fail, lossy or ok) naming the counters that moved. Snapshot reads sysfs (a fixture root
 * in the tests); delta, judgement and the threshold parser are pure functions.
 *
 * Delta rules, per counter:
 * - missing in one snapshot, or unreadable (read failed, "N/A (no PMA)", not a number): UNKNOWN,
 *   never 0;
 * - a PMA counter of w bits (16-bit symbol_error, 8-bit link_downed, 4-bit local_link_integrity...,
 *   see counters.c) saturates at 2^w-1: saturated BEFORE means UNKNOWN (it cannot count any more);
 *   saturated AFTER means AT_LEAST after-before;
 * - after < before: the counter was reset (a PerfMgr cleared it, the driver re-registered, or a
 *   32-bit mlx5 Q counter wrapped): AT_LEAST after;
 * - otherwise EXACT after-before. Driver counters (hw_counters) are treated as 64-bit.
 *
 * A delta is UNATTRIBUTABLE, which means its transport counters may belong to someone else, when
 * - the node GUID or the list of counters changed between the snapshots (the device re-registered:
 *   no counter is compared at all), or
 * - a counter was reset during the interval, or
 * - the port's byte counters (PMA port_xmit_data + port_rcv_data x 4, or rxe's sent_bytes +
 *   rcvd_bytes) grew by more than max(4 x the bytes the pair was expected to put on the port,
 *   those bytes + 64 MiB): another process used the port. The margin covers headers, ACKs and
 *   go-back-N retransmissions on a lossy link. Without byte counters (older rxe) or with
 *   expected_bytes 0 this cannot be checked: traffic_checked is false and nothing is flagged.
 * Link flaps and physical-layer errors belong to the link, not to a process: they are judged even
 * when the delta is unattributable. Retransmissions are not (they are only reported).
 *
 * Memory: snapshots and deltas are fixed-size structs in caller storage; nothing is allocated.
 */
#ifndef RP_COUNTERS_H
#define RP_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "discover/node.h"
#include "base/result.h"

#define RP_CTR_NAME_MAX 48
#define RP_CTR_MAX 192         /* counters per snapshot; mlx5 has about 70 in all */

/* Where a counter lives. */
enum rp_ctr_source { RP_CTR_PMA = 0, RP_CTR_HW_PORT, RP_CTR_HW_DEV };

/* What a counter says when it moves. */
enum rp_ctr_class {
	RP_CC_OTHER = 0,       /* reported, never judged (work requests, packets, ...) */
	RP_CC_FLAP,            /* the link went down or retrained: fails the pair */
	RP_CC_PHYS,            /* physical-layer errors: fail above the threshold */
	RP_CC_RETRANS,         /* sequence gaps (out_of_sequence, out_of_seq_request, rcvd_seq_err, ...): a
	                        * packet never arrived, the link lost it; with them, the side's
	                        * retransmissions are loss: lossy above the per-GB rate ("retrans") */
	RP_CC_CONGESTION,      /* CNP/ECN, credit waits, discards: reported */
	RP_CC_RNR,             /* receiver not ready: reported */
	RP_CC_TRAFFIC,         /* byte counters, for attribution: never listed as moved */
	RP_CC_RESEND,          /* retransmissions without a gap (duplicate_request: what had arrived came
	                        * again; completer_retry_err, local_ack_timeout_err: the sender timed
	                        * out): a slow peer or a lost ACK; on soft devices (rxe) host CPU
	                        * starvation alone produces them. Reported; judged only under a
	                        * "resend" limit (default off) */
	RP_CC_COUNT_
};

/* "other", "link_flap", "phys", "retrans", "congestion", "rnr", "traffic", "resend". */
const char *rp_ctr_class_name(enum rp_ctr_class c);
/* The class of a counter name (exact names from mlx5, rxe, bnxt_re, irdma and the PMA). */
enum rp_ctr_class rp_ctr_classify_name(const char *name);
/* The width of a PMA counter in bits (16, 8, 4, 32), 64 for one the PMA does not narrow.
 * ext_width: the port has the 64-bit extended data counters (unicast_xmit_packets exists). */
int rp_ctr_pma_bits(const char *name, bool ext_width);

struct rp_ctr_value {
	char name[RP_CTR_NAME_MAX];
	enum rp_ctr_source source;
	int bits;                     /* 64, or the PMA width that saturates */
	int err;                      /* 0, or why the value is unknown (-errno; -EINVAL unparsable) */
	uint64_t value;
};

struct rp_ctr_snapshot {
	char device[RP_NAME_MAX];
	int port;
	char node_guid[32];           /* as read; "" when unreadable */
	double t;                     /* rp_now() after the reads */
	bool truncated;               /* more than RP_CTR_MAX counters: the rest were not read */
	size_t n;
	struct rp_ctr_value v[RP_CTR_MAX];
};

/* Read the counters of device:port under sysfs_root. Returns 0 also when some (or all) counters
 * are missing or unreadable (they are recorded so); -ENOENT when the device or port does not exist,
 * -EINVAL on a bad argument. Does not log (the caller decides whether a missing port matters). */
int rp_ctr_snapshot(const char *sysfs_root, const char *device, int port, struct rp_ctr_snapshot *snap);
/* The entry named name from source, or NULL. */
const struct rp_ctr_value *rp_ctr_find(const struct rp_ctr_snapshot *snap, enum rp_ctr_source source,
				       const char *name);

enum rp_ctr_kind { RP_CK_EXACT = 0, RP_CK_AT_LEAST, RP_CK_UNKNOWN };

struct rp_ctr_change {
	char name[RP_CTR_NAME_MAX];
	enum rp_ctr_source source;
	enum rp_ctr_class cls;
	enum rp_ctr_kind kind;
	uint64_t delta;               /* EXACT: the change; AT_LEAST: a lower bound; UNKNOWN: 0 */
	char why[64];                 /* AT_LEAST / UNKNOWN: "saturated at 65535", "reset", "missing after" */
};

struct rp_ctr_delta {
	char device[RP_NAME_MAX];
	int port;
	double seconds;
	bool reregistered;            /* GUID or counter list changed: changes[] is empty */
	bool reset_seen;
	bool traffic_checked;         /* byte counters existed and expected_bytes was given */
	uint64_t traffic_bytes;       /* what the byte counters say went through the port */
	bool unattributable;
	char unattributable_why[160];
	/* Every counter that moved (EXACT or AT_LEAST > 0, TRAFFIC excluded) and every UNKNOWN one. */
	size_t n;
	struct rp_ctr_change changes[RP_CTR_MAX];
};

/* The name of change i for reports: its name, or "hw_counters/<name>" ("device/hw_counters/<name>")
 * for a driver counter when a PMA counter of the same name is in the delta too (rxe, 2026). */
void rp_ctr_change_key(const struct rp_ctr_delta *d, size_t i, char *out, size_t size);

/* Compare two snapshots of one port. expected_bytes: payload the measurement put on this port in
 * both directions, counting both ends when source and target share the port (0: unknown, the
 * traffic check is skipped). Returns 0, or -EINVAL when the snapshots are of different ports. */
int rp_ctr_delta(const struct rp_ctr_snapshot *before, const struct rp_ctr_snapshot *after,
		 uint64_t expected_bytes, struct rp_ctr_delta *delta);

/* Per-class limits. A class with a limit is judged; limit is a count (per_gb false) or a rate per
 * 10^9 bytes moved (per_gb true). A pair moving under 1 GB is judged as if it moved 1 GB, so one
 * retransmission in a short run is never "lossy". */
struct rp_ctr_limit {
	bool enabled;
	bool per_gb;
	double value;
};

struct rp_ctr_limits {
	struct rp_ctr_limit cls[RP_CC_COUNT_];
};

/* Defaults: link_flap=0 (any flap fails), phys=0 (any error fails), retrans=10/GB (lossy), the
 * others off (reported only). retrans judges a side whose sequence-gap counters moved, by its gaps
 * and retransmissions together; a side with retransmissions but no gap is not lossy (see
 * RP_CC_RESEND) unless resend has a limit. */
void rp_ctr_limits_default(struct rp_ctr_limits *lim);
/* Parse a --max-errors value into lim (which starts from whatever the caller put there, normally
 * the defaults): comma-separated CLASS=LIMIT items, CLASS one of link_flap (or flap), phys,
 * retrans, resend, congestion, rnr; LIMIT a count ("0", "5"), a rate per GB ("10/GB", "0.5/GB") or "off".
 * Returns 0, or -EINVAL with err (size err_size) saying which item is wrong and why; lim is left
 * untouched on error. */
int rp_ctr_limits_parse(const char *s, struct rp_ctr_limits *lim, char *err, size_t err_size);
/* The limits as text in the syntax above ("link_flap=0,phys=0,retrans=10/GB"), for reports. */
void rp_ctr_limits_format(const struct rp_ctr_limits *lim, char *out, size_t out_size);

enum rp_ctr_verdict { RP_CV_OK = 0, RP_CV_LOSSY, RP_CV_FAIL };

struct rp_ctr_judgement {
	enum rp_ctr_verdict verdict;
	enum rp_ctr_class cls;        /* the class that decided (FAIL/LOSSY), RP_CC_OTHER when OK */
	uint32_t moved;               /* bit (1u << class) for each class with a counter that moved */
	uint32_t unknown;             /* bit per class with an UNKNOWN counter (could not be judged) */
	char reason[320];             /* "" when OK (or "resent, no loss: ..."): "link flapped: link_downed +1", "retransmissions
	                               * 1234/GB above 10/GB: rcvd_seq_err +800, duplicate_request +434" */
};

/* Judge a delta against lim; bytes is the payload the pair moved (its rate basis). AT_LEAST changes
 * count with their lower bound. FAIL wins over LOSSY; link_flap is checked before phys. */
void rp_ctr_judge(const struct rp_ctr_delta *delta, uint64_t bytes, const struct rp_ctr_limits *lim,
		  struct rp_ctr_judgement *j);

/* "verdict" text: "ok", "lossy", "fail". */
const char *rp_ctr_verdict_name(enum rp_ctr_verdict v);

/* The compact form of a delta and its judgement for a pair's result (struct rp_pair_ctr_side in
 * result.h): the moved counters of the judged classes first (flap, phys, retrans), then the others,
 * larger deltas first within a class, at most RP_PAIR_CTR_MAX; n_moved says how many moved in all. */
void rp_ctr_side_fill(const struct rp_ctr_delta *d, const struct rp_ctr_judgement *j, struct rp_pair_ctr_side *out);
/* Check a compact side a peer sent (ranges, NUL-terminated names and reason) and sanitise its strings.
 * 0, or -EBADMSG with why. */
int rp_ctr_side_validate(struct rp_pair_ctr_side *s, char *why, size_t why_len);

#endif
