/* nccl.h: NCCL's rules, exactly (../shared/notes/nccl-semantics.md): which (device, port) pairs
 * NCCL_IB_HCA selects, which GID index a RoCE port uses, and whether a GPU would use GPUDirect RDMA.
 * Pure functions over struct rp_node: no I/O beyond reading the environment in rp_nccl_env_load().
 *
 * Where NCCL's own code and a person's intent part ways (prefix matching, untrimmed whitespace, the
 * 32-entry limit), the result still says what NCCL would do, and a warning with a stable code says
 * what is likely wrong.
 */
#ifndef RP_NCCL_H
#define RP_NCCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "node.h"
#include "topo.h"

/* The NCCL variables that change the answer. */
struct rp_nccl_env {
	const char *ib_hca;           /* NCCL_IB_HCA; NULL when unset */
	int gid_index;                /* NCCL_IB_GID_INDEX; -1 = automatic (NCCL >= 2.21 default) */
	int addr_family;              /* NCCL_IB_ADDR_FAMILY: AF_INET (default) or AF_INET6 */
	const char *addr_range;       /* NCCL_IB_ADDR_RANGE "addr/len"; NULL when unset */
	int roce_version;             /* NCCL_IB_ROCE_VERSION_NUM: 2 (default) or 1 */
	enum rp_path gdr_level;       /* NCCL_NET_GDR_LEVEL: default PXB */
};

/* Defaults, as NCCL has them with no variable set. */
void rp_nccl_env_default(struct rp_nccl_env *env);
/* Defaults overridden by the process environment. A malformed value is an error (-EINVAL, or
 * -ENAMETOOLONG for an over-long NCCL_IB_HCA; logged naming the variable), not silently ignored. An empty value counts as unset (as in NCCL), except
 * NCCL_IB_HCA="" which is kept (it selects every device, like unset). The strings point into the
 * environment. */
int rp_nccl_env_load(struct rp_nccl_env *env);

/* The GID index NCCL uses on this port: the override or the automatic rule on Ethernet (RoCE);
 * 0 on InfiniBand; -1 when the automatic rule finds no usable GID (NCCL then falls back to index 0,
 * whose GID is not valid / not of the wanted family / outside NCCL_IB_ADDR_RANGE). */
int rp_nccl_gid_index(const struct rp_port *port, const struct rp_nccl_env *env);
/* A GID NCCL counts as valid: not all-zero, not an unconfigured or link-local fe80::. */
bool rp_nccl_gid_valid(const struct rp_gid *gid);

/* --- NCCL_IB_ADDR_RANGE ------------------------------------------------------------------------ */

struct rp_nccl_addr_range {
	int family;                   /* AF_INET or AF_INET6 */
	uint8_t addr[16];             /* AF_INET: the first 4 bytes */
	int prefix_len;               /* 0..32 or 0..128 */
};

/* Parse "addr/len" in the given family. -EINVAL (not logged: the caller names the variable) when the
 * text is malformed, the address is not of that family or len is out of range. */
int rp_nccl_addr_range_parse(const char *s, int family, struct rp_nccl_addr_range *range_p);

/* --- NCCL_IB_HCA ------------------------------------------------------------------------------- */

#define RP_NCCL_SPEC_MAX 4096     /* longest NCCL_IB_HCA accepted (NCCL itself has no limit) */
#define RP_NCCL_MAX_ENTRIES 32    /* NCCL parses at most this many entries and ignores the rest */
#define RP_NCCL_MAX_PORTS 32      /* NCCL uses at most this many (device, port) pairs (MAX_IB_DEVS) */
#define RP_NCCL_PORT_TEXT 32      /* longest ":port[:rail:plane]" part accepted, and its NUL */

struct rp_nccl_spec_entry {
	char name[RP_NAME_MAX];       /* as written: NOT trimmed; NCCL keeps at most 63 characters */
	bool exact;                   /* whole-name match ('=' at the head of the spec) */
	bool has_port;                /* ":..." was given */
	char port_text[RP_NCCL_PORT_TEXT]; /* what followed ':' up to ',', as written */
	int port;                     /* -1: every port; else the number NCCL reads (atoi of port_text) */
};

struct rp_nccl_spec {
	bool set;                     /* false: NCCL_IB_HCA unset */
	bool exclude;                 /* leading '^' */
	bool exact;                   /* '=' (after the optional '^'; "=^x" is an exact match on "^x") */
	struct rp_nccl_spec_entry entries[RP_NCCL_MAX_ENTRIES];
	size_t n_entries;             /* empty entries are skipped, as NCCL does */
	size_t n_ignored;             /* non-empty entries past the 32nd, which NCCL ignores */
};

/* Parse a NCCL_IB_HCA value exactly as NCCL does (NULL = unset). Errors (logged, naming
 * NCCL_IB_HCA): -ENAMETOOLONG when the spec is longer than RP_NCCL_SPEC_MAX, an entry's name is
 * longer than 63 characters or its port part longer than RP_NCCL_PORT_TEXT - 1. */
int rp_nccl_spec_parse(const char *text, struct rp_nccl_spec *spec);
/* Does one entry name this device and port (ignoring '^')? */
bool rp_nccl_entry_match(const struct rp_nccl_spec_entry *e, const char *dev, int port);
/* NCCL's decision for an ACTIVE IB/Ethernet port: kept under the spec? (Unset or no entries: every
 * port is kept, or none with '^'.) */
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
	RP_NCCL_W_COUNT_
};

const char *rp_nccl_warn_code(enum rp_nccl_warn w);
bool rp_nccl_warn_fatal(enum rp_nccl_warn w);

struct rp_nccl_warning {
	enum rp_nccl_warn code;
	char message[320];            /* for a person, lowercase, no final period */
};

/* One (device, port) NCCL would use, in NCCL's order (verbs device order, then port number). */
struct rp_nccl_sel {
	char hca[RP_NAME_MAX];
	int port;
	enum rp_link_layer link_layer;
	int gid_index;                /* RoCE: rp_nccl_gid_index(); InfiniBand: 0 */
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
	/* "=mlx5_0:1,mlx5_3:1": exactly the usable ports meant, pinned with '=' and ':port'; NULL when
	 * no port would be usable. */
	char *recommended;
};

/* Evaluate env (env->ib_hca is the spec) on node into *res (caller storage). Returns 0, -EINVAL /
 * -ENAMETOOLONG for a malformed spec (logged), -ENOMEM. Call rp_nccl_result_fini() in every case.
 * Devices are taken in node order, which discovery keeps in ibv_get_device_list() order. */
int rp_nccl_evaluate(const struct rp_node *node, const struct rp_nccl_env *env, struct rp_nccl_result *res);
void rp_nccl_result_fini(struct rp_nccl_result *res);
/* Something is selected and no warning is fatal. */
bool rp_nccl_result_usable(const struct rp_nccl_result *res);
/* How many warnings with this code. */
size_t rp_nccl_result_count(const struct rp_nccl_result *res, enum rp_nccl_warn code);

/* JSON (jansson): {"hca_spec", "selected", "ports", "gid_index", "gpus", "warnings",
 * "recommended_nccl_ib_hca", "usable"}. NULL when memory runs out. The caller owns the reference. */
struct json_t;
struct json_t *rp_nccl_result_json(const struct rp_nccl_result *res, const struct rp_nccl_env *env);

#endif
