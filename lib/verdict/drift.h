/* drift.h: configuration drift across a cluster: given every endpoint's description (one per
 * measured port, gathered by the matrix's rank 0), find the odd ones out.
 *
 * Endpoints are grouped by adapter model (rp_health_hca_model(): "pci 0x15b3:0x1021", "rxe"):
 * two models are expected to differ in firmware and rate, so they are never compared. Within a
 * group each field is compared on its own; an empty value is unknown and takes no part. A field
 * with more than one value gets one `drift` warning per minority value, naming the nodes (and
 * ports) that have it and the value the majority has.
 *
 * Counting: port fields (firmware, rate, MTU, link layer, GID index, PCIe link) count endpoints;
 * node fields (driver, rdma-core, NCCL) count each node once per group, so a node with 8 ports
 * does not outvote a node with 1.
 *
 * Ties: when the most common value is shared by two or more values, there is no majority and no
 * side is called wrong: one warning per value says the group is split ("no majority") and names
 * every side. Picking a side (the larger MTU, the newer firmware) would guess at what the operator
 * meant and send them to fix the wrong half of the cluster half of the time.
 *
 * Memory: rp_drift_find() allocates the warning list; rp_drift_fini() frees it (safe twice).
 * lib/ only: nothing is printed.
 */
#ifndef RP_DRIFT_H
#define RP_DRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "discover/node.h"

enum rp_drift_field {
	RP_DF_FIRMWARE = 0,
	RP_DF_RATE,                   /* "4X NDR 400 Gb/s": width, speed and rate as the port trained */
	RP_DF_MTU,                    /* active MTU, "4096" */
	RP_DF_LINK_LAYER,             /* "InfiniBand", "Ethernet" */
	RP_DF_GID_INDEX,              /* the GID index NCCL's rule picks, "3" ("-1": none) */
	RP_DF_PCIE,                   /* the narrowest current PCIe link to the root port, "Gen5 x16" */
	RP_DF_NODE_FIRST_,
	RP_DF_DRIVER = RP_DF_NODE_FIRST_,   /* the adapter's kernel driver and its version */
	RP_DF_RDMA_CORE,              /* the rdma-core release of libibverbs, "50.0" */
	RP_DF_NCCL,                   /* the NCCL release whose rules selected the ports, "2.28.9" */
	RP_DF_COUNT_
};

#define RP_DRIFT_VALUE 64

/* One endpoint as the matrix knows it. Strings "" = unknown. */
struct rp_drift_ep {
	char node[RP_NAME_MAX];
	char device[RP_NAME_MAX];
	int port;
	char model[RP_DRIFT_VALUE];
	char value[RP_DF_COUNT_][RP_DRIFT_VALUE];
};

struct rp_drift_warning {
	enum rp_drift_field field;
	char model[RP_DRIFT_VALUE];
	char value[RP_DRIFT_VALUE];   /* the odd value */
	char majority[RP_DRIFT_VALUE];/* the value most have; "" when the group is split (a tie) */
	size_t n_odd;                 /* endpoints (port fields) or nodes (node fields) with value */
	size_t n_majority;            /* ... with the majority value (split: with the most common values) */
	size_t n_known;               /* ... with any known value in the group */
	char nodes[512];              /* "node3 (mlx5_0:1, mlx5_1:1), node7 (mlx5_2:1)"; node fields: "node3, node7" */
	char message[1024];
};

struct rp_drift {
	struct rp_drift_warning *warnings;
	size_t n_warnings;
};

/* The stable warning code ("drift") and the field names ("firmware", "rate", "mtu", "link_layer",
 * "gid_index", "pcie", "driver", "rdma_core", "nccl"; "" out of range). */
const char *rp_drift_code(void);
const char *rp_drift_field_str(enum rp_drift_field f);

/* Describe one local endpoint for the comparison: model, firmware, rate, MTU, link layer and PCIe
 * link from node (sysfs of node->sysfs_root), the driver from device/driver and
 * module/<driver>/version (else the kernel release of uname, when probe_host), the rdma-core
 * release from the libibverbs this process loaded (when probe_host), gid_index as given (the
 * caller's NCCL rule) and nccl as given ("" unknown). */
void rp_drift_describe(const struct rp_node *node, const struct rp_hca *hca, const struct rp_port *port,
		       const char *node_name, int gid_index, const char *nccl, bool probe_host,
		       struct rp_drift_ep *ep);

/* Compare eps[0..n) into *d (caller storage). 0, or -ENOMEM (logged). Call rp_drift_fini() in
 * every case. */
int rp_drift_find(const struct rp_drift_ep *eps, size_t n, struct rp_drift *d);
void rp_drift_fini(struct rp_drift *d);

/* JSON: [{"code": "drift", "field", "model", "value", "majority" (null on a split), "nodes",
 * "n_odd", "n_majority", "n_known", "message"}]; NULL when memory runs out. */
struct json_t;
struct json_t *rp_drift_to_json(const struct rp_drift *d);

#endif
