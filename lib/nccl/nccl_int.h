/* nccl_int.h: what lib/nccl/nccl_eval.c and lib/nccl/nccl_select.c share (not part of the contract). */
#ifndef RP_NCCL_INT_H
#define RP_NCCL_INT_H

#include "nccl/nccl.h"

/* NCCL's port list for a spec, as ncclIbInitDevices builds it. */
struct rp_nccl_pick {
	struct rp_nccl_sel *sel;      /* in NCCL's final order */
	size_t n;
	size_t dropped;               /* usable kept ports of devices NCCL never opened (table full) */
	size_t overflow;              /* ports written past NCCL's table (its last device had several) */
	/* NULL PCI path dereference: the port without a PCI path and the later one with a path. */
	int crash_nopath, crash_path; /* indexes into sel, -1 when no crash */
	/* 2.20.3 to 2.23.4, NCCL_IB_MERGE_NICS: the port whose ncclIbFindMatchingDev compares a NULL
	 * PCI path, and the first port of the merged NIC it is compared with; -1 when no crash. */
	int merge_crash, merge_crash_with;
	int bad_plane;                /* 2.30.7: index into sel of the port whose plane fails, -1 none */
	bool too_many_planes;         /* 2.30.7: that failure is the 13th distinct plane id */
};

/* Build the list (the caller frees pick->sel). 0 or -ENOMEM (logged). */
int rp_nccl_pick_ports(const struct rp_node *node, const struct rp_nccl_env *env, const struct rp_nccl_spec *spec,
		       struct rp_nccl_pick *pick);
/* A port NCCL considers at all: ACTIVE, with an InfiniBand or Ethernet link layer. */
bool rp_nccl_port_usable(const struct rp_port *p);
/* NCCL sees only what ibv_get_device_list() lists; with a fixture root (unknown) trust sysfs. */
bool rp_nccl_hca_visible(const struct rp_hca *h);
/* The id NCCL sorts a device by (pciPathToInt64 of its device link's last component). */
int64_t rp_nccl_pci_sort_id(const char *path);

#endif
