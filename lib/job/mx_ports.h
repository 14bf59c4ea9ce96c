/* mx_ports.h: the ports one matrix rank offers: NCCL's selection under -d / NCCL_IB_HCA for the
 * chosen release and, with --per-gpu, only the adapters nearest this rank's GPU.
 *
 * --per-gpu, which GPU: the GPUs this process can use are those the CUDA runtime lists (it honours
 * CUDA_VISIBLE_DEVICES, which srun --gpus-per-task and most launch scripts set per task):
 *   - exactly one visible: that one, whatever the local rank (one GPU per task);
 *   - as many as the node's ranks or more: the local rank's (every rank sees every GPU: rank k
 *     drives the k-th visible one);
 *   - none, or more than one but fewer than the node's ranks: an error (which GPU a rank should take
 *     cannot be told; give each task one GPU or run at most that many ranks per node).
 * Its nearest adapters are NCCL's (ncclTopoGetLocal, lib/discover/topo.h rp_topo_nearest_m) under the bus-id
 * merge of the release in use (rp_nccl_topo_merge), as `devices --json` reports them.
 */
#ifndef RP_MX_PORTS_H
#define RP_MX_PORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job/mx_table.h"
#include "discover/node.h"

struct mx_port_opts {
	const char *dev_spec;         /* -d (NCCL_IB_HCA syntax); NULL: NCCL_IB_HCA, else NCCL's default */
	const char *node_name;        /* NULL: the host name */
	uint32_t nccl_version;        /* the release whose rules select (and merge bus ids) */
	bool gid_set;                 /* -g given: gid_index for every port */
	int gid_index;
	bool per_gpu;
	int local_rank, local_size;   /* this rank among the node's ranks */
	const char *sysfs_root;       /* NULL: /sys (tests: a fixture) */
};

struct mx_ports {
	struct mx_wire_ep eps[MX_MAX_LOCAL];
	size_t n;                     /* at least 1 on success: one MX_EP_NO_PORT entry when none is usable */
	int gpu;                      /* --per-gpu: the CUDA index of this rank's GPU; else -1 */
	char gpu_pci[16];             /* its bus id; "" */
	char why[236];                /* the error, or why the entry is MX_EP_NO_PORT; "" */
};

/* This rank's ports into *out. 0 (also when none is usable: one MX_EP_NO_PORT entry named after the
 * selection, the reason in out->why), -EINVAL a usage error (a bad -d or NCCL variable), or another
 * negative errno (--per-gpu without CUDA or without a GPU to take); the reason in out->why. Logs
 * nothing of its own. */
int mx_ports_select(const struct mx_port_opts *o, struct mx_ports *out);

/* This host's identity for the endpoint table: a hash of the kernel's boot id (unique per host and
 * boot; /etc/machine-id when it cannot be read), 0 when neither can. Two ranks on one host agree. */
uint64_t mx_host_id(void);
/* The same, reading every adapter of the node (also under an exact selection) and leaving the
 * discovered node in *node for the caller's other checks (one discovery, not two); rp_node_fini(node)
 * in every case. */
int mx_ports_select_node(const struct mx_port_opts *o, struct mx_ports *out, struct rp_node *node);

/* The --per-gpu rule above: which of n_visible GPUs local rank local_rank (of local_size) takes.
 * Its position, or -ENODEV with the reason in why. */
int mx_gpu_rule(size_t n_visible, int local_rank, int local_size, char *why, size_t why_len);

#endif
