/* fixture_health.h: what the health tests add to a fixture tree (tests/fixture.h): PCIe link files,
 * config-space bytes with an ACS capability, IOMMU state, nvidia-peermem and RDMA counters, and a
 * clean machine that must give no health item at all.
 *
 * Same conventions as fixture.h: paths are relative to the fixture root, every function returns 0
 * or a negative errno and prints one line to stderr on failure.
 */
#ifndef RP_TESTS_FIXTURE_HEALTH_H
#define RP_TESTS_FIXTURE_HEALTH_H

#include <stdint.h>

#include "fixture.h"

/* {current,max}_link_{speed,width} of the PCI function at bus/pci/devices/<bdf>; speeds as the
 * kernel writes them ("16.0 GT/s PCIe"). */
int rp_fxh_link(struct rp_fx *fx, const char *bdf, const char *cur_speed, int cur_width, const char *max_speed,
		int max_width);
/* The same link on a downstream port and the function below it (both ends, as the kernel shows). */
int rp_fxh_link_pair(struct rp_fx *fx, const char *parent, const char *child, const char *cur_speed, int cur_width,
		     const char *max_speed, int max_width);

/* bus/pci/devices/<bdf>/config: a PCIe config space of size bytes (64: what a reader without
 * CAP_SYS_ADMIN gets; 256: no extended space; 4096: full) with, when acs_ctrl >= 0, an AER
 * capability at 0x100 followed by an ACS capability at 0x148 whose control register is acs_ctrl;
 * acs_ctrl < 0: AER only. Written byte for byte. */
int rp_fxh_config(struct rp_fx *fx, const char *bdf, int acs_ctrl, unsigned size);

/* An IOMMU (class/iommu/dmar0) with every function in bdfs (NULL-terminated) in group 1..n of type
 * type ("identity", "DMA"); on false: no class/iommu at all. */
int rp_fxh_iommu(struct rp_fx *fx, int on, const char *type, const char *const *bdfs);
/* module/nvidia_peermem/version. */
int rp_fxh_peermem(struct rp_fx *fx);

/* class/infiniband/<hca>/<dir>/<name> = value, dir "ports/1/counters", "ports/1/hw_counters" or
 * "hw_counters". */
int rp_fxh_counter(struct rp_fx *fx, const char *hca, const char *dir, const char *name, uint64_t value);
/* rxe's port hw_counters (rxe_hw_counters.c names, all 0, and lifespan 10) on hca port 1. */
int rp_fxh_rxe_counters(struct rp_fx *fx, const char *hca);
/* mlx5's PMA counters on hca port 1 (extended width: unicast_* present), all 0. */
int rp_fxh_pma_counters(struct rp_fx *fx, const char *hca);

/* The DGX-H100 machine of fixture.h made clean: every adapter, GPU and bridge on Gen5 x16 at its
 * maximum, every bridge's config space readable (4096 bytes) with ACS present and control 0, no
 * IOMMU, nvidia-peermem loaded. */
int rp_fxh_machine_clean(struct rp_fx *fx);
/* A GPU at 0000:04:00.0 behind switch 0000:01:00.0, a VF mlx5_vf at 0000:03:1e.0 on the same switch
 * (its own downstream port 0000:02:01.0) and a PF mlx5_pf at 0000:05:00.0 (port 0000:02:02.0), NDR
 * ports, every bridge's config space readable without ACS. NCCL's bus-id merge decides the nearest
 * adapter: 2.24.3 to 2.26.6 keep the VF's real bus id (PIX to the GPU, nearest); 2.27.3 on zero its
 * device and function digits (0000:03:00.0, which does not exist: not on PCI) and only the PF is. */
int rp_fxh_machine_vf(struct rp_fx *fx);

/* BDFs of that machine (switch A, socket 0): */
#define FXH_RP_A  "0000:00:01.0"   /* root port */
#define FXH_UP_A  "0000:01:00.0"   /* switch upstream port */
#define FXH_DN_GPU0 "0000:02:00.0" /* downstream port above GPU 0000:03:00.0 */
#define FXH_DN_NIC0 "0000:02:02.0" /* downstream port above mlx5_0 0000:05:00.0 */
#define FXH_GPU0  "0000:03:00.0"
#define FXH_NIC0  "0000:05:00.0"

#endif
