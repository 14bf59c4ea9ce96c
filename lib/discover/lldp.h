/* lldp.h: the leaf switch and port of each RoCE adapter, from LLDP (lldpd's `lldpctl -f json`), as the
 * native --topology lines (lib/discover/fabtopo.h) that `rdmaprobe devices --lldp FILE` prints.
 *
 * An Ethernet host's LLDP daemon hears, on each of its interfaces, the switch and port at the other
 * end of the cable. Only the host knows which verbs device and port an interface is (the netdev of
 * the port's GID table), so each node turns its own neighbours into lines, and the operator joins the
 * nodes' lines into one file (`srun ... rdmaprobe devices --lldp - | sort -u > topo.txt`, with
 * `uplink` lines added by hand when the spines are known). Without uplinks the localization still
 * names an adapter, its cable or its leaf.
 *
 * lldpctl -f json: {"lldp": {"interface": I}} where I is {"eth0": NB} for one neighbour and
 * [{"eth0": NB}, {"eth1": NB}] for several; NB's "chassis" is {"<system name>": {...}} (or {"id":
 * {"type": ..., "value": ...}} when the switch sends no name) and its "port" is {"id": {"type",
 * "value"}, "descr": ...}. The port is its id when that is an interface name, else its description.
 */
#ifndef RP_LLDP_H
#define RP_LLDP_H

#include <stddef.h>

#include "base/util.h"

struct rp_node;

struct rp_lldp_neighbor {
	char ifname[RP_NAME_MAX];     /* the host's interface ("ens1f0np0") */
	char chassis[RP_NAME_MAX];    /* the switch ("leaf01"), spaces as '_' */
	char port[RP_NAME_MAX];       /* its port ("swp12", "Ethernet1/12") */
};

/* Parse lldpctl's JSON. 0 with *nb (free()) and *n set (0 neighbours is not an error), -EINVAL with
 * err saying what is wrong ("not lldpctl -f json: no lldp.interface"), -ENOMEM. */
int rp_lldp_parse(const char *text, size_t len, struct rp_lldp_neighbor **nb, size_t *n, char *err, size_t err_len);

/* The switch port's number: the last run of digits in its name ("swp12" 12, "Ethernet1/12" 12,
 * "eth-1/1/3" 3); 0 when it has none or it is not 1-65535. */
unsigned rp_lldp_port_number(const char *port);

/* The native lines of node's ports whose netdev (any GID entry's) heard a neighbour:
 * "adapter HOST/DEV:PORT SWITCH SWPORT" ('-' for a port without a number), one per line, into a
 * malloc'ed *out. Returns the number of lines (>= 0) or -ENOMEM. */
int rp_lldp_topology(const struct rp_node *node, const char *host, const struct rp_lldp_neighbor *nb, size_t n,
		     char **out);

#endif
