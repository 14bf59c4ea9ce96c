/* health_int.h: what health.c and health_pci.c share (private to lib/). */
#ifndef RP_HEALTH_INT_H
#define RP_HEALTH_INT_H

#include "health/health.h"

/* Append an item; 0 or -ENOMEM (logged). */
int rp_health_add(struct rp_health *h, enum rp_health_code code, const char *device, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The checks of health_pci.c; each returns 0 or -ENOMEM. */
int rp_health_check_pcie(const struct rp_node *node, struct rp_health *h);
/* m: NCCL's bus-id merge, for the nearest adapters (rp_topo_nearest_m). */
int rp_health_check_acs(const struct rp_node *node, const struct rp_topo_merge *m, struct rp_health *h);
int rp_health_check_gdr(const struct rp_node *node, const struct rp_health_opts *opts, struct rp_health *h);

#endif
