/* node.h: what this node has, as verbs and sysfs describe it: adapters (HCAs), their ports and GID
 * tables, and GPUs. Filled by rp_node_discover(); read by the NCCL rules, the topology, the engine
 * and the reports. Plain data: every string is a fixed array, every list is owned by the node.
 *
 * Sources: ibv_get_device_list() is the authority on which adapters are usable. sysfs (under a root
 * that tests replace with a fixture tree) gives everything else. With a fixture root verbs is not
 * consulted at all and in_verbs is RP_TRI_UNKNOWN.
 */
#ifndef RP_NODE_H
#define RP_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"   /* RP_NAME_MAX */

#define RP_PCI_MAX 16    /* "dddd:bb:dd.f" and its NUL */
#define RP_PATHBUF 512   /* a sysfs path */
#define RP_GID_TEXT 40   /* "fe80:0000:...:0001" and its NUL */

enum rp_tri { RP_TRI_UNKNOWN = -1, RP_TRI_FALSE = 0, RP_TRI_TRUE = 1 };

enum rp_link_layer { RP_LL_UNKNOWN = 0, RP_LL_INFINIBAND, RP_LL_ETHERNET };

/* The RoCE type of a GID entry, from gid_attrs/types/<i>. */
enum rp_gid_type { RP_GID_TYPE_NONE = 0, RP_GID_TYPE_IB_ROCE_V1, RP_GID_TYPE_ROCE_V2, RP_GID_TYPE_UNKNOWN };

/* Port state and physical state use the kernel's numbers (IBV_PORT_ACTIVE = 4, LinkUp = 5). */
enum rp_port_state {
	RP_PORT_NOP = 0, RP_PORT_DOWN = 1, RP_PORT_INIT = 2, RP_PORT_ARMED = 3,
	RP_PORT_ACTIVE = 4, RP_PORT_ACTIVE_DEFER = 5,
};

/* What reading gid_attrs/types/<i> gives, as NCCL's GID choice reads it (open, then read). */
enum rp_gid_type_read {
	RP_GID_TREAD_KERNEL = 0,      /* as the kernel has it: a valid entry reads, an empty one fails with EINVAL */
	RP_GID_TREAD_EINVAL,          /* the read fails with EINVAL although the entry is valid (a container's
	                               * sysfs; in a --sysfs-root tree: the file is missing, its directory is not) */
	RP_GID_TREAD_FAILS,           /* the file cannot be opened (no gid_attrs directory) or read (other errno) */
};

struct rp_gid {
	int index;
	uint8_t raw[16];
	char text[RP_GID_TEXT];       /* as sysfs writes it: 8 groups of 4 hex digits */
	enum rp_gid_type type;        /* NONE for an empty (all-zero) entry */
	enum rp_gid_type_read type_read;
	char ndev[RP_NAME_MAX];       /* "" when none */
};

struct rp_port {
	int num;                      /* 1-based */
	int state;                    /* enum rp_port_state; -1 unknown */
	int phys_state;               /* 1..7; -1 unknown */
	double rate_gbps;             /* 0 unknown; fractional allowed (2.5) */
	char rate_text[32];           /* width/speed, e.g. "4X NDR"; "" unknown */
	enum rp_link_layer link_layer;
	uint32_t lid, sm_lid;
	int active_mtu;               /* bytes (256..4096) from verbs; without verbs a RoCE port's is derived
	                               * from its netdev's MTU (class/net/<nd>/mtu); 0 unknown */
	struct rp_gid *gids;          /* valid (non-empty) and empty entries alike, by index */
	size_t n_gids;
};

struct rp_hca {
	char name[RP_NAME_MAX];       /* the verbs device name: mlx5_0, rxe0 */
	enum rp_tri in_verbs;         /* listed by ibv_get_device_list(); UNKNOWN with a fixture root */
	char unusable_reason[160];    /* why it is not usable, "" when it is */
	char pci[RP_PCI_MAX];         /* "0000:3b:00.0", "" when not on PCI (rxe, siw) */
	char pci_path[RP_PATHBUF];    /* realpath of class/infiniband/<dev>/device below the root, "" if none */
	int numa_node;                /* -1 unknown */
	char fw_ver[64];
	char node_guid[20];           /* "xxxx:xxxx:xxxx:xxxx" */
	int node_type;                /* 1 CA, 2 switch, 3 router, 4 RNIC; -1 unknown */
	struct rp_port *ports;
	size_t n_ports;
};

struct rp_gpu {
	int index;                    /* CUDA index; -1 when found by a PCI scan only */
	char pci[RP_PCI_MAX];
	char pci_path[RP_PATHBUF];    /* realpath of bus/pci/devices/<pci> below the root */
	int numa_node;
	char name[96];                /* "" when unknown */
};

struct rp_node {
	char sysfs_root[RP_PATHBUF];  /* "/sys" or a fixture */
	bool verbs_consulted;
	/* When no adapter was found: why, for a person ("libibverbs found no devices; the kernel module
	 * ib_uverbs is not loaded"). "" otherwise. */
	char no_device_reason[256];
	/* Adapters listed by verbs in ibv_get_device_list() order, then the others (sysfs only, or all
	 * of them with a fixture root) in natural name order: mlx5_2 before mlx5_10. */
	struct rp_hca *hcas;
	size_t n_hcas;
	struct rp_gpu *gpus;
	size_t n_gpus;
	/* How GPUs were found: "cuda", "pci-scan" or "none". */
	char gpu_source[16];
};

struct rp_discover_opts {
	const char *sysfs_root;       /* NULL: the real /sys, and verbs is consulted */
	bool skip_gpus;
	/* Non-NULL: read only the adapters of these n_only names; the others are neither opened nor
	 * listed (a matrix rank whose -d names its adapters exactly reads nothing else). */
	const char *const *only;
	size_t n_only;
};

/* Fill *node (caller storage) from verbs and sysfs. Returns 0, also when no adapter exists (then
 * no_device_reason says why); a negative errno only when the root itself cannot be read or memory
 * runs out. Call rp_node_fini() in every case. */
int rp_node_discover(struct rp_node *node, const struct rp_discover_opts *opts);
void rp_node_fini(struct rp_node *node);

/* Lookups; NULL when absent. */
const struct rp_hca *rp_node_find_hca(const struct rp_node *node, const char *name);
const struct rp_port *rp_hca_find_port(const struct rp_hca *hca, int port_num);

/* Names for the reports: "ACTIVE", "LinkUp", "InfiniBand"/"Ethernet", "RoCE v2"/"IB/RoCE v1". */
/* The data rate in Gb/s of a port with verbs' active_width and active_speed codes (the project's one
 * rate table: 4X EDR = 100), 0 when unknown; text (may be NULL) gets "4X EDR" or "". */
double rp_port_data_rate(int width_code, int speed_code, char *text, size_t text_len);

const char *rp_port_state_str(int state);
const char *rp_phys_state_str(int phys_state);
const char *rp_link_layer_str(enum rp_link_layer ll);
const char *rp_gid_type_str(enum rp_gid_type t);

#endif
