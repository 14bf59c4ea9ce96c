/* node_json.h: the 'devices' report as JSON (jansson): what discovery found, the GID index NCCL
 * would choose on each port, and the GPU x adapter path types with each GPU's nearest adapters.
 *
 * Keys: {"sysfs_root", "verbs_consulted", "no_device_reason" (null when there are adapters),
 * "gpu_source", "devices": [{"name", "in_verbs" (true|false|null), "unusable_reason" (null when
 * usable), "pci" (lowercase "dddd:bb:dd.f" or null), "pci_path", "numa_node", "fw_ver", "node_guid",
 * "node_type", "ports": [{"port", "state", "phys_state", "rate_gbps", "rate_text", "link_layer",
 * "lid", "sm_lid", "active_mtu", "gids": [{"index", "gid", "type", "ndev"}], "nccl_gid_index"}]}],
 * "gpus": [{"index", "pci", "numa_node", "name"}], "affinity": [{"gpu", "hca", "path"}],
 * "nearest": {"<gpu pci>": ["<hca>", ...]}}. Unknown values are null; only valid (non-zero) GIDs
 * are listed.
 *
 * Memory: the caller owns the returned reference (json_decref); the node and env are only read.
 * NULL when memory runs out (logged).
 */
#ifndef RP_NODE_JSON_H
#define RP_NODE_JSON_H

#include <jansson.h>

#include "nccl/nccl.h"
#include "discover/node.h"

/* env NULL: NCCL's defaults (rp_nccl_env_default). env->version (and merge_vfs) also decide the
 * NIC bus-id merge behind "affinity" and "nearest" (rp_nccl_topo_merge). */
json_t *rp_node_to_json(const struct rp_node *node, const struct rp_nccl_env *env);

#endif
