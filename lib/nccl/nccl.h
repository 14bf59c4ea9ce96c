/* nccl.h: NCCL's rules as a given NCCL release applies them (nccl_rules.h has the per-release
 * table): which (device, port) pairs NCCL_IB_HCA selects and in which order, which GID index each
 * port uses, whether NCCL fails a port, disables IB or crashes, and whether a GPU would use
 * GPUDirect RDMA. Pure functions over struct rp_node: no I/O beyond reading the environment in
 * rp_nccl_env_load().
 *
 * Never refuses what NCCL accepts: a variable NCCL reads in a surprising way ("010" is 8) is read
 * the same way here and a warning (env_parsed_as) says so. Where NCCL's code and a person's intent
 * part ways (prefix matching, untrimmed whitespace, the entry limit), the result still says what
 * NCCL would do, and a warning with a stable code says what is likely wrong.
 */
#ifndef RP_NCCL_H
#define RP_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nccl/nccl_rules.h"
#include "discover/node.h"
#include "discover/topo.h"

/* The NCCL integer variables read with NCCL's parameter parser (src/misc/param.cc ncclLoadParam,
 * the same in every modelled release: strtoll(text, NULL, 0), an empty value is unset, an
 * out-of-range value gives the default). */
enum rp_nccl_param {
	RP_NCCL_P_GID_INDEX,          /* NCCL_IB_GID_INDEX */
	RP_NCCL_P_ROCE_VERSION,       /* NCCL_IB_ROCE_VERSION_NUM */
	RP_NCCL_P_FLID_GID_INDEX,     /* NCCL_IB_ROUTABLE_FLID_GID_INDEX (since 2.22.3) */
	RP_NCCL_P_PCI_ORDER,          /* NCCL_IB_DEVICE_PCI_ORDER (since 2.29.7) */
	RP_NCCL_P_IB_DISABLE,         /* NCCL_IB_DISABLE */
	RP_NCCL_P_MERGE_VFS,          /* NCCL_IB_MERGE_VFS */
	RP_NCCL_P_MERGE_NICS,         /* NCCL_IB_MERGE_NICS (2.20.3 to 2.23.4; read by later releases' vNIC code too) */
	RP_NCCL_P_COUNT_
};

/* The NCCL variables that change the answer, and the release whose rules apply. */
struct rp_nccl_env {
	uint32_t version;             /* NCCL release (nccl_rules.h); default RP_NCCL_VERSION_NEWEST */
	const char *ib_hca;           /* NCCL_IB_HCA; NULL when unset */
	int gid_index;                /* NCCL_IB_GID_INDEX as NCCL reads it; -1 and !gid_index_set: unset */
	bool gid_index_set;           /* set: -1 is taken as given (before 2.21.5 that fails the port) */
	int addr_family;              /* NCCL_IB_ADDR_FAMILY: AF_INET6 for exactly "AF_INET6", else AF_INET */
	const char *addr_range;       /* NCCL_IB_ADDR_RANGE as set; NULL when unset or empty */
	int roce_version;             /* NCCL_IB_ROCE_VERSION_NUM as NCCL reads it: default 2 */
	int flid_gid_index;           /* NCCL_IB_ROUTABLE_FLID_GID_INDEX: default 1 */
	bool pci_order;               /* NCCL_IB_DEVICE_PCI_ORDER != 0: default true */
	bool ib_disable;              /* NCCL_IB_DISABLE != 0 */
	bool merge_vfs;               /* NCCL_IB_MERGE_VFS != 0: default true */
	bool merge_nics;              /* NCCL_IB_MERGE_NICS != 0: default true */
	enum rp_path gdr_level;       /* NCCL_NET_GDR_LEVEL: default PXB; an unknown name is the default */
	/* The text of each variable as set (NULL: unset), for the env_parsed_as warnings. */
	const char *text[RP_NCCL_P_COUNT_];
	const char *addr_family_text;
	const char *gdr_level_text;
};

/* Defaults, as the newest release has them with no variable set. */
void rp_nccl_env_default(struct rp_nccl_env *env);
/* Defaults overridden by the process environment, read as NCCL reads it: never fails on a value
 * NCCL accepts (every value; the warnings are raised by rp_nccl_evaluate()). Returns 0, or
 * -ENAMETOOLONG for an NCCL_IB_HCA longer than RP_NCCL_SPEC_MAX (logged). The strings point into
 * the environment. env->version is the newest release: set it afterwards for another. */
int rp_nccl_env_load(struct rp_nccl_env *env);

/* NCCL's parameter parser: *value_p gets what NCCL reads from text (deflt for NULL, "" or out of
 * range). Returns true when that differs from what the text says in plain decimal ("010" is 8,
 * "0x3" is 3, "abc" is 0, "3x" is 3, an overflow is the default), and then writes why to how. */
bool rp_nccl_param_read(const char *text, int64_t deflt, int64_t *value_p, char *how, size_t how_len);
const char *rp_nccl_param_name(enum rp_nccl_param p);

/* What NCCL does for a port's GID. */
enum rp_nccl_gid_status {
	RP_NCCL_GID_OK,               /* index is used (the GID there may still be unusable) */
	RP_NCCL_GID_QUERY_FAILS,      /* ibv_query_gid() on the index fails: NCCL fails the port */
	RP_NCCL_GID_TYPES_FAIL,       /* gid_attrs/types/<i> cannot be read: NCCL fails the port */
	RP_NCCL_GID_CRASH,            /* NCCL_IB_ADDR_RANGE without '/' (2.21.5 to 2.23.3): NCCL crashes */
};

struct rp_nccl_gid_choice {
	enum rp_nccl_gid_status status;
	int index;                    /* the index NCCL uses (RP_NCCL_GID_OK), else the one that failed */
};

/* The GID NCCL picks on this port under env (env->version decides the rules: no automatic choice
 * before 2.21.5, FLID on InfiniBand since 2.22.3; see nccl_rules.h). */
void rp_nccl_gid_choose(const struct rp_port *port, const struct rp_nccl_env *env, struct rp_nccl_gid_choice *c);
/* NCCL_IB_GID_INDEX as the release reads it: the value when set (or when not negative), else the
 * release's default (0 before 2.21.5, -1 = automatic since). */
int rp_nccl_env_gid_index(const struct rp_nccl_env *env);
/* The index NCCL uses on this port, or -1 when NCCL fails the port (or crashes). */
int rp_nccl_gid_index(const struct rp_port *port, const struct rp_nccl_env *env);
/* A GID NCCL counts as valid: not all-zero, not an unconfigured or link-local fe80::. */
bool rp_nccl_gid_valid(const struct rp_gid *gid);
/* Is the GID of the wanted family and inside NCCL_IB_ADDR_RANGE (as NCCL applies the range)? */
bool rp_nccl_gid_wanted(const struct rp_gid *gid, const struct rp_nccl_env *env);

/* --- NCCL_IB_ADDR_RANGE ------------------------------------------------------------------------ */

/* How NCCL reads NCCL_IB_ADDR_RANGE (envIbAddrRange, src/transport/net_ib.cc since 2.21.5). */
enum rp_nccl_range_status {
	RP_NCCL_RANGE_UNSET,          /* unset or empty: every GID matches */
	RP_NCCL_RANGE_OK,             /* applied (a negative length matches no GID at all) */
	RP_NCCL_RANGE_IGNORED,        /* no '/' (2.23.4 on), bad address or length too big: every GID matches */
	RP_NCCL_RANGE_CRASH,          /* no '/' in 2.21.5 to 2.23.3: NCCL writes through NULL */
};

struct rp_nccl_addr_range {
	int family;                   /* AF_INET or AF_INET6 */
	uint8_t addr[16];             /* AF_INET: the first 4 bytes */
	int prefix_len;               /* as NCCL reads it: (int)strtol(len, NULL, 10), may be negative */
};

/* Read s as release version does in the given family. */
enum rp_nccl_range_status rp_nccl_addr_range_read(const char *s, int family, uint32_t version,
						  struct rp_nccl_addr_range *range_p);
/* Strict form for callers that want a well-formed range: 0, or -EINVAL when NCCL would not apply
 * it as written (malformed, wrong family, length out of 0..32/128). Does not log. */
int rp_nccl_addr_range_parse(const char *s, int family, struct rp_nccl_addr_range *range_p);

/* --- NCCL_IB_HCA ------------------------------------------------------------------------------- */

#define RP_NCCL_SPEC_MAX 65536    /* longest NCCL_IB_HCA read (NCCL itself has no limit) */
#define RP_NCCL_MAX_ENTRIES 32    /* the most entries any release parses (MAX_IB_DEVS) */
#define RP_NCCL_MAX_PORTS 32      /* the newest releases' port table (MAX_IB_DEVS) */
#define RP_NCCL_PORT_TEXT 32      /* how much of ":port[:rail:plane]" is kept for messages */

struct rp_nccl_spec_entry {
	char name[RP_NAME_MAX];       /* as NCCL keeps it: NOT trimmed, at most 63 characters */
	bool exact;                   /* whole-name match ('=' at the head of the spec) */
	bool has_port;                /* ":..." was given */
	bool name_overrun;            /* before 2.30.7: a name of 64+ characters overran NCCL's buffer */
	char port_text[RP_NCCL_PORT_TEXT]; /* what followed ':' up to ',', as written (cut for display) */
	int port;                     /* -1: every port; else the number NCCL reads (atoi, wrapping) */
	int rail;                     /* 2.30.7: the third field (int16_t of atoi), -1 when absent or empty */
	int plane;                    /* 2.30.7: the fourth field, likewise */
};

struct rp_nccl_spec {
	bool set;                     /* false: NCCL_IB_HCA unset */
	bool exclude;                 /* leading '^' */
	bool exact;                   /* '=' (after the optional '^'; "=^x" is an exact match on "^x") */
	uint32_t version;             /* the release whose parser read it */
	struct rp_nccl_spec_entry entries[RP_NCCL_MAX_ENTRIES];
	size_t n_entries;             /* empty entries are skipped, as NCCL does */
	size_t n_ignored;             /* non-empty entries past the release's limit, which NCCL ignores */
};

/* Parse a NCCL_IB_HCA value exactly as release version does (src/misc/utils.cc parseStringList;
 * NULL = unset). Never refuses what NCCL accepts; -ENAMETOOLONG (logged) only for a spec longer
 * than RP_NCCL_SPEC_MAX. */
int rp_nccl_spec_parse_v(const char *text, uint32_t version, struct rp_nccl_spec *spec);
/* The same for the newest release. */
int rp_nccl_spec_parse(const char *text, struct rp_nccl_spec *spec);
/* Does one entry name this device and port (ignoring '^')? */
bool rp_nccl_entry_match(const struct rp_nccl_spec_entry *e, const char *dev, int port);
/* NCCL's decision for an ACTIVE IB/Ethernet port: kept under the spec? (Unset or no entries: every
 * port is kept, or none with '^'.) The entry that kept it (-1: none, or '^') goes to *entry_p when
 * entry_p is not NULL. */
bool rp_nccl_spec_keeps_at(const struct rp_nccl_spec *spec, const char *dev, int port, int *entry_p);
bool rp_nccl_spec_keeps(const struct rp_nccl_spec *spec, const char *dev, int port);

/* --- What NCCL would do on a node ---------------------------------------------------------------- */

/* Stable warning codes ("prefix_overmatch", ...). Fatal ones mean NCCL would misbehave: it would
 * use other adapters or ports than the ones meant, fall back to sockets, or fail to connect. */
enum rp_nccl_warn {
	RP_NCCL_W_PREFIX_OVERMATCH,   /* fatal: "mlx5_1" also takes mlx5_10 */
	RP_NCCL_W_NO_MATCH,           /* fatal: an include entry matches no device or no port */
	RP_NCCL_W_EXCLUDE_NO_MATCH,   /* not fatal: an exclude entry excludes nothing */
	RP_NCCL_W_WHITESPACE,         /* fatal: whitespace in a name; NCCL does not trim " mlx5_0" */
	RP_NCCL_W_BAD_PORT,           /* fatal: NCCL reads a port below 1: ":x", ":" or ":0" match no port, ":-1" every port */
	RP_NCCL_W_TOO_MANY_ENTRIES,   /* fatal: entries past the 32nd are ignored by NCCL */
	RP_NCCL_W_ALL_EXCLUDED,       /* fatal: '^' excludes every usable port */
	RP_NCCL_W_PORT_NOT_ACTIVE,    /* fatal: a named port, or every port of a named device, is not usable */
	RP_NCCL_W_NOT_IN_VERBS,       /* fatal: sysfs shows the device, ibv_get_device_list() does not */
	RP_NCCL_W_NOTHING_SELECTED,   /* fatal: NCCL finds no device and falls back to sockets */
	RP_NCCL_W_TOO_MANY_PORTS,     /* fatal: ports past the 32nd are not used */
	RP_NCCL_W_MIXED_LINK_LAYER,   /* fatal: InfiniBand and Ethernet ports selected together */
	RP_NCCL_W_IB_SUBNET_MISMATCH, /* fatal: selected IB ports with different subnet prefixes */
	RP_NCCL_W_NO_USABLE_GID,      /* fatal: a RoCE port without a GID NCCL's rule accepts */
	RP_NCCL_W_BAD_GID_OVERRIDE,   /* fatal: NCCL_IB_GID_INDEX names a missing or invalid GID */
	RP_NCCL_W_ROCE_VERSION,       /* not fatal: the GID used is not of NCCL_IB_ROCE_VERSION_NUM */
	RP_NCCL_W_GDR_DISABLED,       /* not fatal: a GPU's path is worse than NCCL_NET_GDR_LEVEL */
	RP_NCCL_W_ENV_PARSED_AS,      /* not fatal: NCCL reads a variable otherwise than it reads ("010" is 8) */
	RP_NCCL_W_GID_INVALID,        /* fatal: NCCL uses a zero or link-local GID on a port */
	RP_NCCL_W_PORT_FAILED,        /* fatal: NCCL fails a port (its GID index is null) */
	RP_NCCL_W_IB_DISABLED,        /* fatal: NCCL disables the IB transport (sockets, silently) */
	RP_NCCL_W_NCCL_CRASH,         /* fatal: NCCL dereferences NULL here */
	RP_NCCL_W_NCCL_OVERFLOW,      /* fatal: NCCL writes past one of its own arrays (undefined) */
	RP_NCCL_W_NCCL_VERSION,       /* not fatal: the version is older than the releases read, or between two */
	RP_NCCL_W_NEWER_THAN_MODEL,   /* not fatal: newer than the newest release read: its rules, not exact */
	RP_NCCL_W_COUNT_
};

const char *rp_nccl_warn_code(enum rp_nccl_warn w);
bool rp_nccl_warn_fatal(enum rp_nccl_warn w);

struct rp_nccl_warning {
	enum rp_nccl_warn code;
	char message[320];            /* for a person, lowercase, no final period */
};

/* One (device, port) NCCL would use, in NCCL's order: verbs device order, then port number; since
 * 2.29.7 sorted by PCI address (devices not on PCI last). */
struct rp_nccl_sel {
	char hca[RP_NAME_MAX];
	int port;
	enum rp_link_layer link_layer;
	int gid_index;                /* rp_nccl_gid_index(): -1 when NCCL fails the port */
	int rail;                     /* 2.30.7: from the NCCL_IB_HCA entry; -1 undefined */
	int plane;                    /* likewise */
	size_t hca_idx;               /* index into node->hcas */
};

/* Per GPU: the nearest selected adapter (first in NCCL's order on a tie). */
struct rp_nccl_gpu_choice {
	char pci[RP_PCI_MAX];
	char hca[RP_NAME_MAX];        /* "" when nothing is selected */
	enum rp_path path;            /* meaningful when hca[0] */
	bool gdr;                     /* path <= NCCL_NET_GDR_LEVEL */
};

struct rp_nccl_result {
	char *hca_spec;               /* the NCCL_IB_HCA evaluated; NULL when unset */
	struct rp_nccl_sel *selected;
	size_t n_selected;
	struct rp_nccl_gpu_choice *gpus;
	size_t n_gpus;
	struct rp_nccl_warning *warnings;
	size_t n_warnings;
	uint32_t version;             /* the release whose rules were applied */
	/* "=mlx5_0:1,mlx5_3:1": exactly the usable ports meant, pinned with '=' and ':port'; NULL when
	 * no port would be usable. */
	char *recommended;
};

/* The NIC bus-id merge of env's release and NCCL_IB_MERGE_VFS, for rp_topo_path_m(). */
void rp_nccl_topo_merge(const struct rp_nccl_env *env, struct rp_topo_merge *m);

/* Evaluate env (env->ib_hca is the spec) on node into *res (caller storage). Returns 0, -EINVAL /
 * -ENAMETOOLONG for a malformed spec (logged), -ENOMEM. Call rp_nccl_result_fini() in every case.
 * Devices are taken in node order, which discovery keeps in ibv_get_device_list() order. */
int rp_nccl_evaluate(const struct rp_node *node, const struct rp_nccl_env *env, struct rp_nccl_result *res);
void rp_nccl_result_fini(struct rp_nccl_result *res);
/* Something is selected and no warning is fatal. */
bool rp_nccl_result_usable(const struct rp_nccl_result *res);
/* How many warnings with this code. */
size_t rp_nccl_result_count(const struct rp_nccl_result *res, enum rp_nccl_warn code);

/* Would NCCL release env->version crash on node under env (env->ib_hca: the job's NCCL_IB_HCA)?
 * The crashes are those rp_nccl_evaluate() reports as nccl_crash: a port without a PCI device link
 * before one with a link (the NULL path compared, every release before 2.29.7 and
 * NCCL_IB_DEVICE_PCI_ORDER=0 after), NCCL_IB_ADDR_RANGE without '/' (2.21.5 to 2.23.3). For the
 * commands that measure (loopback, pair, each matrix rank on its own node), whose verdict does not
 * otherwise look at NCCL. Returns 1 with the first such warning's message in msg, 0 (msg "") when
 * NCCL would not crash, or rp_nccl_evaluate()'s negative errno (logged). */
int rp_nccl_crash_check(const struct rp_node *node, const struct rp_nccl_env *env, char *msg, size_t len);

/* JSON (jansson): {"hca_spec", "selected", "ports", "gid_index", "gpus", "warnings",
 * "recommended_nccl_ib_hca", "usable", "rules_version" (the release whose rules were applied),
 * "rules" (the names of the per-release rules in force)}. NULL when memory runs out. The caller owns the reference. */
struct json_t;
struct json_t *rp_nccl_result_json(const struct rp_nccl_result *res, const struct rp_nccl_env *env);

#endif
