/* health.h: static health checks of a node: what can be read before anything is measured
 * (doc/health-signals.md). Ports against their siblings, PCIe links against what both
 * ends can do, the expected rate of each adapter port, ACS on the GPU-adapter paths, and GPUDirect
 * readiness (IOMMU, nvidia-peermem, dma-buf) without a GPU driver call.
 *
 * Each finding is an item with a stable code. Warnings are faults an operator should act on;
 * notes are facts that limit what could be checked (no root for config space) or that are not
 * faults (a GPU link idling at a lower speed). A machine without faults, read with enough
 * privilege, gives no item at all.
 *
 * Warning codes (stable, used in JSON and by the reports):
 *   link_degraded     an ACTIVE port below the best ACTIVE port of the same adapter model and link
 *                     layer on the node ("mlx5_3:1 at 4X HDR 200 Gb/s, the other 7 ports at 4X NDR
 *                     400 Gb/s")
 *   port_down         physical state not LinkUp, with the likely cause of that state
 *   port_no_sm        physical LinkUp but logical INIT or ARMED: no subnet manager configured it
 *   pcie_degraded     a PCIe link of an adapter, a GPU or a bridge between them trained below what
 *                     both of its ends can do, naming the function at which it degrades
 *   pcie_bottleneck   an adapter's PCIe path carries less than its port rate
 *   acs_redirect      a bridge between a GPU and its nearest adapter (below their common switch)
 *                     redirects P2P (ACS RR, CR or EC): GPUDirect goes through the root complex
 *   iommu_translated  GPUs and adapters behind an IOMMU in DMA translation mode (not passthrough)
 *   gpudirect_unavailable  GPUs present, nvidia-peermem not loaded and dma-buf not possible
 *   mtu_mismatch      an ACTIVE port whose active MTU differs from the one most ACTIVE ports of its
 *                     link layer on the node run (a tie: the larger MTU is taken as meant, since a
 *                     pair runs at the smaller end's MTU and the smaller one is what costs
 *                     bandwidth): "rxe1:1 at active MTU 1024, the other port at 4096"
 * Note codes:
 *   acs_unreadable    config space past byte 64 needs root: ACS of these bridges is unknown
 *   gpu_link_idle     a GPU link below its maximum speed at full width: GPUs lower the link speed
 *                     when idle, so speed is not judged on a GPU's own link (width is)
 *   gpudirect_unknown nvidia-peermem not loaded and dma-buf support not known (fixture root)
 *
 * Memory: rp_health_check() fills caller storage and allocates the item list; rp_health_fini()
 * frees it (safe twice). The node is only read.
 */
#ifndef RP_HEALTH_H
#define RP_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

#include "discover/node.h"
#include "discover/topo.h"

enum rp_health_code {
	RP_HC_LINK_DEGRADED = 0,
	RP_HC_PORT_DOWN,
	RP_HC_PORT_NO_SM,
	RP_HC_PCIE_DEGRADED,
	RP_HC_PCIE_BOTTLENECK,
	RP_HC_ACS_REDIRECT,
	RP_HC_IOMMU_TRANSLATED,
	RP_HC_GPUDIRECT_UNAVAILABLE,
	RP_HC_MTU_MISMATCH,
	RP_HC_NOTE_FIRST_,
	RP_HC_ACS_UNREADABLE = RP_HC_NOTE_FIRST_,
	RP_HC_GPU_LINK_IDLE,
	RP_HC_GPUDIRECT_UNKNOWN,
	RP_HC_COUNT_
};

/* The stable code text ("link_degraded"); "" for an out-of-range value. */
const char *rp_health_code_str(enum rp_health_code c);
/* True for the note codes. */
bool rp_health_code_is_note(enum rp_health_code c);

struct rp_health_item {
	enum rp_health_code code;
	char device[RP_NAME_MAX];     /* "mlx5_3:1", "0000:02:00.0", "" for the node as a whole */
	char message[384];
};

/* What an adapter port can deliver: min(port rate, the narrowest current PCIe link on its path to
 * the root port, i.e. to host memory; encoding counted as pcie.h says). A P2P path to a GPU under
 * the same switch skips the uplink, so for GPU buffers this may be pessimistic when the uplink is
 * the narrowest link. */
enum rp_rate_limit { RP_LIMIT_PORT = 0, RP_LIMIT_PCIE, RP_LIMIT_UNKNOWN };

struct rp_health_rate {
	char device[RP_NAME_MAX];
	int port;
	double port_gbps;             /* 0 unknown */
	double pcie_gbps;             /* 0: not on PCI or links unknown */
	double expected_gbps;         /* the smaller known one; 0 when neither is known */
	enum rp_rate_limit limit;
	char pcie_text[32];           /* "Gen4 x8" of the limiting link, "" when none */
	char pcie_at[RP_PCI_MAX];     /* the function whose link limits, "" when none */
	char message[160];            /* "expected 126 Gb/s: PCIe Gen4 x8 limits the 200 Gb/s port" */
};

struct rp_gdr_state {
	enum rp_tri iommu;            /* an IOMMU registered in class/iommu (TRUE), none (FALSE) */
	char iommu_mode[24];          /* the group type of the GPUs and adapters: "identity", "DMA",
	                               * "DMA-FQ", "mixed", "" unknown */
	char cmdline_hints[160];      /* iommu=, intel_iommu=, amd_iommu=, iommu.passthrough=,
	                               * pci=...acs... words of the kernel command line; "" none/unread */
	bool cmdline_read;
	enum rp_tri peermem;          /* nvidia_peermem (or the old nv_peer_mem) loaded */
	enum rp_tri dmabuf;           /* ibv_reg_dmabuf_mr in libibverbs and a kernel >= 5.12 */
	char dmabuf_why[160];
	size_t acs_checked, acs_unreadable;   /* bridges on GPU-adapter paths */
};

struct rp_health {
	struct rp_health_item *items;
	size_t n_items;
	struct rp_health_rate *rates; /* one per ACTIVE adapter port */
	size_t n_rates;
	struct rp_gdr_state gdr;
};

struct rp_health_opts {
	/* The kernel command line to read ("/proc/cmdline"); NULL: not read. */
	const char *cmdline_path;
	/* dma-buf support: UNKNOWN probes this host (dlsym of ibv_reg_dmabuf_mr, uname) when
	 * probe_host, else stays unknown; TRUE/FALSE is taken as given (tests). */
	enum rp_tri dmabuf;
	bool probe_host;
	/* How NCCL merges a NIC's bus id (rp_nccl_topo_merge() of the release in use), which decides the
	 * nearest adapters whose bridges the ACS check reads; NULL: the newest release's
	 * (rp_topo_merge_newest). */
	const struct rp_topo_merge *merge;
};

/* Run every static check on node (its sysfs_root is read again for PCIe links, classes, config
 * space and IOMMU groups). Returns 0, or -ENOMEM (logged). Call rp_health_fini() in every case. */
int rp_health_check(const struct rp_node *node, const struct rp_health_opts *opts, struct rp_health *h);
void rp_health_fini(struct rp_health *h);

/* The part of all that concerns the ports ports[0..n) ("mlx5_0" with port 1, ...): items on one of
 * those ports, on the PCI function of their adapter or a bridge on its path to the root port
 * (pcie_degraded), and the node-wide GPUDirect items: IOMMU, GPUDirect, and every acs_redirect
 * (a bridge above a GPU redirects traffic to each of the GPU's nearest adapters, whichever is
 * selected; the health checks name each bridge once); the expected
 * rates of those ports; the GPUDirect state. 'nccl' shows this for the ports NCCL would select.
 * out is caller storage (rp_health_fini() it in every case). 0, or -ENOMEM (logged). */
struct rp_health_port_ref {
	const char *hca;
	int port;
};
int rp_health_for_ports(const struct rp_node *node, const struct rp_health *all, const struct rp_health_port_ref *ports,
			size_t n, struct rp_health *out);

/* Number of items of code c (tests, reports). */
size_t rp_health_count(const struct rp_health *h, enum rp_health_code c);
/* True when h has no warning (notes allowed). */
bool rp_health_clean(const struct rp_health *h);

/* The adapter model the checks group by: "pci 0x15b3:0x1021" (PCI vendor:device), or the name
 * prefix of a virtual device ("rxe"). */
void rp_health_hca_model(const struct rp_node *node, const struct rp_hca *hca, char *out, size_t size);

/* The expected rate of one adapter port (sysfs of node->sysfs_root). */
void rp_health_expected_rate(const struct rp_node *node, const struct rp_hca *hca, const struct rp_port *port,
			     struct rp_health_rate *r);

#endif
