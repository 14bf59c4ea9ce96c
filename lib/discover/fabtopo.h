/* fabtopo.h: the fabric's switch topology (--topology FILE): which leaf switch and port each adapter's
 * cable goes to, which spines each leaf has uplinks to, and how a pair picks its spine. The verdict
 * localizes failures with it (lib/verdict/verdict.h, "Blame", step 5).
 *
 * Three formats, told apart by the first setting line:
 *
 * Native ('#' starts a comment, words separated by spaces or tabs):
 *   adapter NODE/DEVICE[:PORT] LEAF LEAF_PORT   the adapter's cable ends on LEAF, port LEAF_PORT
 *                                               (1-65535, or - when not known; without :PORT every
 *                                               port of the device). `rdmaprobe devices --lldp`
 *                                               writes these lines from LLDP (lib/discover/lldp.h)
 *   uplink LEAF SPINE                           a leaf-spine link (one line per link)
 *   route dmodk|unknown                         how a direction between two leaves picks its spine:
 *                                               dmodk, the destination's node number (nodes numbered
 *                                               from 0 in the order of their first adapter line)
 *                                               modulo the number of spines (numbered in the order
 *                                               of their first uplink line): D-mod-K routing as an
 *                                               InfiniBand subnet manager's LFTs give it; unknown
 *                                               (the default): any spine (ECMP), so no uplink or
 *                                               spine is blamed on its own.
 *
 * Slurm's topology.conf (lines "SwitchName=NAME Nodes=HOSTLIST" and "SwitchName=NAME
 * Switches=HOSTLIST"; other keys ignored): a switch with Nodes= is a leaf of those nodes; each adapter
 * of such a node is taken to be on that leaf's switch for its rail, named "SWITCH/DEVICE" (a rail-
 * optimized fabric's scalable unit shares one leaf per rail); a switch with Switches= is a spine with
 * uplinks to those leaves (to each of their rails' switches). Routes are unknown.
 *
 * ibnetdiscover's output (InfiniBand; lib/discover/fabtopo_ibnet.c): every switch port that reaches an
 * adapter port places that adapter (its NodeDescription read as "HOST DEVICE", rdma-ndd's default
 * "%h %d"; adapters described otherwise cannot be placed and stay unknown) on that switch, a leaf;
 * a switch linked to a leaf that has no adapter is a spine, and each leaf-spine link an uplink.
 * Switches are named by their NodeDescription (spaces as '_'; with their "S-<guid>" when two share
 * one). Routes are unknown (the forwarding tables are not in it).
 *
 * Errors name the line: "topology.conf line 4: Nodes=node[3-1]: the range runs backwards".
 */
#ifndef RP_FABTOPO_H
#define RP_FABTOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/result.h"

#define RP_FABTOPO_NONE UINT32_MAX

struct rp_fabtopo_adapter {
	char node[RP_NAME_MAX];
	char device[RP_NAME_MAX];     /* "*": every device of the node (Slurm) */
	int port;                     /* 0: every port */
	uint32_t leaf;                /* index into leaves (native); Slurm: the switch */
	uint32_t leaf_port;           /* 0: unknown */
	uint32_t node_idx;            /* the node's number (first appearance) */
};

struct rp_fabtopo {
	char **leaves, **spines;
	size_t n_leaves, n_spines;
	struct rp_fabtopo_adapter *adapters;
	size_t n_adapters;
	struct rp_fabtopo_uplink { uint32_t leaf, spine; } *up;   /* leaf-spine links */
	size_t n_up;
	size_t n_nodes;
	bool dmodk;
	bool slurm;                   /* read from topology.conf */
};

/* Parse text[0..len) (name: the file's, for errors). 0 with *t_p (free with rp_fabtopo_destroy),
 * -EINVAL with err set, -ENOMEM. Logs nothing. */
int rp_fabtopo_parse(const char *name, const char *text, size_t len, struct rp_fabtopo **t_p, char *err, size_t err_len);
/* Read and parse a file. */
int rp_fabtopo_load(const char *path, struct rp_fabtopo **t_p, char *err, size_t err_len);
void rp_fabtopo_destroy(struct rp_fabtopo *t);

/* The topology applied to a run's endpoints: per endpoint its leaf (RP_FABTOPO_NONE when the file
 * does not list it), the leaf's name, its port and node number; per leaf its spines. */
struct rp_fabtopo_map {
	size_t n_eps;
	uint32_t *leaf, *leaf_port, *node_idx;   /* per endpoint */
	char **leaf_names;            /* per leaf (owned) */
	size_t n_leaves;
	const char *const *spine_names;   /* the topology's */
	size_t n_spines;
	uint8_t *up;                  /* n_leaves x n_spines: 1 where the uplink exists */
	bool dmodk;
	size_t n_unknown;             /* endpoints the file does not list */
};

int rp_fabtopo_map_build(const struct rp_fabtopo *t, const struct rp_endpoint *eps, size_t n_eps,
			 struct rp_fabtopo_map *mp);
void rp_fabtopo_map_fini(struct rp_fabtopo_map *mp);
/* The spine of direction src -> dst when the route is known (dmodk and the two leaves differ), else
 * RP_FABTOPO_NONE. */
uint32_t rp_fabtopo_map_spine(const struct rp_fabtopo_map *mp, uint32_t src, uint32_t dst);

/* Expand a Slurm hostlist ("node[000-031,040],login1") calling fn for each name; 0 or -EINVAL with
 * err set. At most max names. */
int rp_hostlist_expand(const char *s, size_t max, int (*fn)(void *arg, const char *name), void *arg, char *err,
		       size_t err_len);

#endif
