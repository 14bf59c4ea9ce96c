/* node_gpus.c: the node's GPUs, from the CUDA runtime or else a PCI scan of sysfs, each with its PCI
 * path and NUMA node from sysfs; see gpu.h. */
#include "discover/gpu.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover/sysfs.h"
#include "base/log.h"
#include "base/util.h"

/* The sysfs side of a GPU: realpath of bus/pci/devices/<pci> and its NUMA node. */
static void gpu_read_sysfs(const char *root, struct rp_gpu *gpu)
{
	char rel[64], buf[32];

	gpu->numa_node = -1;
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s", gpu->pci);
	if (!gpu->pci[0] || rp_sysfs_realpath_rel(root, rel, gpu->pci_path, sizeof(gpu->pci_path)))
		gpu->pci_path[0] = '\0';
	if (gpu->pci[0] && rp_sysfs_readf(root, buf, sizeof(buf), "%s/numa_node", rel) == 0 &&
	    rp_sysfs_parse_numa(buf, &gpu->numa_node))
		gpu->numa_node = -1;
}

/* NVIDIA display/3D controllers in bus/pci/devices (vendor 0x10de, class 0x03xxxx). */
static int gpu_pci_scan(struct rp_node *node)
{
	char **names = NULL, buf[32];
	size_t n = 0;
	int rc;

	rc = rp_sysfs_list_dir(node->sysfs_root, "bus/pci/devices", &names, &n);
	if (rc)
		return rc == -ENOMEM ? rp_error(rc, "list %s/bus/pci/devices: out of memory", node->sysfs_root) : 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t vendor, class_code;
		char pci[RP_PCI_MAX];
		struct rp_gpu *ng;

		if (rp_sysfs_parse_pci(names[i], pci) ||
		    rp_sysfs_readf(node->sysfs_root, buf, sizeof(buf), "bus/pci/devices/%s/vendor", names[i]) ||
		    rp_sysfs_parse_hex(buf, 0xffff, &vendor) || vendor != 0x10de ||
		    rp_sysfs_readf(node->sysfs_root, buf, sizeof(buf), "bus/pci/devices/%s/class", names[i]) ||
		    rp_sysfs_parse_hex(buf, 0xffffff, &class_code) || (class_code >> 16) != 0x03)
			continue;
		ng = realloc(node->gpus, (node->n_gpus + 1) * sizeof(*ng));
		if (!ng) {
			rp_sysfs_free_names(names);
			return rp_error(-ENOMEM, "allocate a GPU entry: out of memory");
		}
		node->gpus = ng;
		memset(&ng[node->n_gpus], 0, sizeof(*ng));
		ng[node->n_gpus].index = -1;
		memcpy(ng[node->n_gpus].pci, pci, sizeof(pci));
		gpu_read_sysfs(node->sysfs_root, &ng[node->n_gpus]);
		node->n_gpus++;
	}
	rp_sysfs_free_names(names);
	rp_strlcpy(node->gpu_source, node->n_gpus ? "pci-scan" : "none", sizeof(node->gpu_source));
	return 0;
}

int rp_node_find_gpus(struct rp_node *node, bool fixture)
{
	struct rp_gpu *gpus = NULL;
	size_t n = 0;

	if (!fixture && rp_gpu_cuda_list(&gpus, &n) == 0) {
		node->gpus = gpus;
		node->n_gpus = n;
		for (size_t i = 0; i < n; i++)
			gpu_read_sysfs(node->sysfs_root, &gpus[i]);
		rp_strlcpy(node->gpu_source, "cuda", sizeof(node->gpu_source));
		return 0;
	}
	return gpu_pci_scan(node);
}
