/* pcie.h: PCIe link speed and width, the PCI path of a device hop by hop, and ACS from config space
 * (doc/health-signals.md, sections 2 and 3).
 *
 * Link bandwidth. A lane's data rate is its transfer rate less the line encoding, as the kernel
 * counts it (drivers/pci/pci.h PCIE_SPEED2MBS_ENC): 2.5 and 5 GT/s use 8b/10b (x 0.8: 2 and 4
 * Gb/s), 8, 16 and 32 GT/s use 128b/130b (x 128/130: 7.877, 15.754, 31.508 Gb/s), 64 GT/s (Gen6,
 * FLIT mode) is counted 1:1 (64 Gb/s). A link carries width x that. TLP and DLLP overhead (headers,
 * ACKs, flow control: typically 5-15% at 256-byte payloads) is not subtracted: the figure is the
 * ceiling the link cannot exceed, and the --min-bw fractions absorb the rest. So Gen4 x8 is 126 Gb/s,
 * Gen4 x16 252, Gen5 x16 504.
 *
 * Hops. A PCI path "devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:05:00.0" is a
 * chain of functions below a root complex. Which side of a link a function is on is not in sysfs
 * (it is in the PCIe capability, root only), so it is derived from the standard topology: a bridge
 * right below the root complex is a root port (downstream facing); a bridge below a downstream
 * facing port is a switch upstream port; a bridge below an upstream port is a downstream port; an
 * endpoint is upstream facing. Each upstream facing function below a downstream facing port is one
 * physical link, seen from both ends; the link between a switch's upstream and downstream ports is
 * internal and not a link.
 *
 * Memory: everything is caller storage; nothing is allocated. Readers return 0 or a negative errno
 * and do not log.
 */
#ifndef RP_PCIE_H
#define RP_PCIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "discover/node.h"

#define RP_PCIE_MAX_HOPS 16

/* "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> GT/s. "Unknown", "Unknown speed": -ENODATA; anything
 * else -EINVAL. */
int rp_pcie_parse_speed(const char *s, double *gts_p);
/* Data rate of one lane in Gb/s after encoding; 0 for a rate that is not a PCIe generation. */
double rp_pcie_lane_gbps(double gts);
/* 1..6 for 2.5..64 GT/s, 0 otherwise. */
int rp_pcie_gen(double gts);
/* width x lane rate; 0 when either is unknown. */
double rp_pcie_link_gbps(double gts, int width);
/* "Gen4 x8" (or "16 GT/s x8" for a rate that is not a generation); "unknown" when gts is 0. */
void rp_pcie_link_text(double gts, int width, char *out, size_t out_size);

/* The link files of one function; 0 = unknown. */
struct rp_pcie_link {
	double cur_gts, max_gts;
	int cur_width, max_width;
};
/* Read {current,max}_link_{speed,width} of the function at rel (a path below the root). 0 when at
 * least one of them was read, -ENOENT when the function has none (not PCIe, virtual, an RCiEP). */
int rp_pcie_read_link(const char *root, const char *rel, struct rp_pcie_link *link);

struct rp_pci_hop {
	char bdf[RP_PCI_MAX];
	char rel[RP_PATHBUF];         /* "devices/pci0000:00/.../<bdf>" */
	bool bridge;                  /* class 0x0604 */
	bool downstream_facing;       /* a root port or a switch downstream port (see above) */
	bool has_link;
	struct rp_pcie_link link;
	/* The function whose link files were read: bdf itself, or for an SR-IOV virtual function
	 * (whose Link Status is reserved and reads as unknown) its physical function (physfn). */
	char link_bdf[RP_PCI_MAX];
};
/* The functions of a PCI path from the root complex down to the device itself (the last hop); a
 * virtual function's link is its physical function's.
 * Components that are not BDFs (pci0000:00, a virtio node) end the chain or are skipped at the top.
 * Returns 0 with *n_p hops (0 when path is not PCI), -ENAMETOOLONG / -E2BIG for a path too long. */
int rp_pcie_chain(const char *root, const char *pci_path, struct rp_pci_hop *hops, size_t max, size_t *n_p);

/* One physical link of a chain: the upstream facing hop up and its downstream facing parent
 * (NULL when up sits right below the root complex). */
struct rp_pcie_hop_link {
	const struct rp_pci_hop *parent;
	const struct rp_pci_hop *child;
	double cur_gts, exp_gts;      /* current, and what both ends can do: min of their maxima */
	int cur_width, exp_width;
};
/* The link that ends at chain hop i, when hop i is upstream facing and has link files; false
 * otherwise. */
bool rp_pcie_hop_link(const struct rp_pci_hop *hops, size_t n, size_t i, struct rp_pcie_hop_link *l);

/* ---- config space ---- */

/* Offset of the extended capability id in a config space image of len bytes, or -ENOENT when
 * there is none (walk as the kernel does: from 0x100, next pointer masked 0xffc, at most 480
 * steps, stop at next < 0x100 or a header 0 / all ones), -ENODATA when the image ends before 0x104. */
int rp_pcie_find_ext_cap(const uint8_t *cfg, size_t len, uint16_t id);

#define RP_ACS_SV 0x01   /* source validation */
#define RP_ACS_TB 0x02   /* translation blocking */
#define RP_ACS_RR 0x04   /* P2P request redirect */
#define RP_ACS_CR 0x08   /* P2P completion redirect */
#define RP_ACS_UF 0x10   /* upstream forwarding */
#define RP_ACS_EC 0x20   /* P2P egress control */
#define RP_ACS_DT 0x40   /* direct translated P2P */
/* The bits the kernel counts as redirecting P2P (drivers/pci/p2pdma.c). */
#define RP_ACS_REDIRECT (RP_ACS_RR | RP_ACS_CR | RP_ACS_EC)

/* The ACS control register of the function at rel, from its config file. 0 with *ctrl_p; -ENXIO
 * when it has no ACS capability (or no extended config space: a 256-byte file); -EPERM when the
 * file ends at byte 64 (the kernel's answer without CAP_SYS_ADMIN); the open's errno when it cannot
 * be opened (-ENOENT: no config file). */
int rp_pcie_read_acs(const char *root, const char *rel, uint16_t *ctrl_p);
/* "SV RR CR UF" for the set bits, "none" for 0. */
void rp_pcie_acs_text(uint16_t ctrl, char *out, size_t out_size);

#endif
