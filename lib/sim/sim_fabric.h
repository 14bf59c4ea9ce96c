/* sim_fabric.h: the simulated fabric's switches (lib/sim/sim_model.h): a rail-optimized fat tree, the route
 * of every direction through it, and faults by component.
 *
 * Model lines (in the fabric model file, after nodes and adapters):
 *
 *   fabric LEAF_PORTS SPINES ROUTING
 *       Rail r (adapter r of every node) has its own leaves: node n's adapter r is on leaf "leafR-K"
 *       (K = n / LEAF_PORTS), port n % LEAF_PORTS + 1. Every leaf has one uplink to every spine
 *       "spineS" (S < SPINES), the spines shared by the rails. ROUTING picks a direction's spine:
 *       dmodk, the destination's node number modulo SPINES (an InfiniBand LFT of D-mod-K routing),
 *       or ecmp, a hash of the ordered pair (a RoCE fabric's ECMP). LEAF_PORTS 1..4096, SPINES 1..1024.
 *   fault KIND NAME MODE
 *       KIND adapter or cable (NAME = NODE/DEVICE), leaf (leafR-K), uplink (leafR-K:spineS), spine
 *       (spineS). MODE: dead; lossy:P (0 < P < 1: every direction through it moves (1 - P) of the
 *       bandwidth); flaky:P (each direction through it is dead with probability P, decided by a hash
 *       of the random-dead seed, the fault and the direction: the same file gives the same pairs).
 *       A component has at most one fault.
 *
 * A direction src -> dst goes src's adapter, its cable, its leaf; when dst's leaf is another: the
 * leaf's uplink to the route's spine, the spine, the spine's link down to dst's leaf; then dst's
 * leaf, cable and adapter. Its state is the worst of its components' (dead over lossy; losses
 * multiply), on top of the model's per-link overrides and random-dead.
 */
#ifndef RP_SIM_FABRIC_H
#define RP_SIM_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rp_sim_model;

enum rp_sim_comp { RP_SIM_C_ADAPTER = 0, RP_SIM_C_CABLE, RP_SIM_C_LEAF, RP_SIM_C_UPLINK, RP_SIM_C_SPINE };
enum rp_sim_mode { RP_SIM_M_DEAD = 0, RP_SIM_M_LOSSY, RP_SIM_M_FLAKY };

struct rp_sim_fault {
	enum rp_sim_comp comp;
	uint32_t id;                  /* adapter/cable: endpoint; leaf, uplink: leaf id; spine: spine */
	uint32_t spine;               /* uplink: the spine */
	enum rp_sim_mode mode;
	double value;                 /* lossy, flaky: P */
	unsigned line;
};

struct rp_sim_fabric {
	uint32_t leaf_ports, spines, leaves_per_rail;
	bool ecmp;                    /* else dmodk */
	struct rp_sim_fault *faults;
	size_t n_faults, cap_faults;
};

/* Parse "fabric" (w[1..3]) into m->fabric (allocated) or "fault" (w[1..3]) onto it. 0, -ENOMEM, or
 * -EINVAL with msg set (without the line number). */
int rp_sim_fabric_parse(struct rp_sim_model *m, char **w, char *msg, size_t len);
int rp_sim_fault_parse(struct rp_sim_model *m, char **w, char *msg, size_t len);
void rp_sim_fabric_free(struct rp_sim_fabric *f);

/* Leaf of endpoint e (rail x leaves_per_rail + node / leaf_ports) and the spine of direction src -> dst. */
uint32_t rp_sim_fabric_leaf(const struct rp_sim_model *m, uint32_t e);
uint32_t rp_sim_fabric_spine(const struct rp_sim_model *m, uint32_t src, uint32_t dst);
/* The direction through the fabric's faults: dead, or the fraction of bandwidth it loses (0 none). */
bool rp_sim_fabric_dir(const struct rp_sim_model *m, uint32_t src, uint32_t dst, double *loss_p);
/* "leafR-K", "spineS" */
void rp_sim_fabric_leaf_name(const struct rp_sim_model *m, uint32_t leaf, char *buf, size_t len);

/* The model's fabric as a native topology file (lib/discover/fabtopo.h) on f. 0 or -EIO. */
int rp_sim_fabric_write_topology(const struct rp_sim_model *m, FILE *f);

#endif
