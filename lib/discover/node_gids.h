/* node_gids.h: a port's GID table from verbs' one-call answer (ibv_query_gid_table), checked
 * against sysfs for the entries in use.
 *
 * Reading the table from sysfs costs three system calls per entry, valid or not: 1,024 entries per
 * rxe port, 255 per mlx5 port, for every adapter at every start. Verbs returns only the valid
 * entries, with their type and netdev, in one call per device; this module turns that answer into
 * the same struct rp_gid table the sysfs reader builds (every index below the table length, empty
 * ones all zero with type NONE) and reads sysfs only for the valid entries, to cross-check: where
 * the two disagree verbs is the authority (it is what the engine and NCCL use) and a warning names
 * the entry and both values.
 */
#ifndef RP_NODE_GIDS_H
#define RP_NODE_GIDS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "discover/node.h"

/* Fill port->gids (replacing none: port->gids must be NULL) from the n entries of a device's
 * table; only those with entry.port_num == port->num are taken. tbl_len is the port's table length
 * (ibv_port_attr.gid_tbl_len); an entry at or past it lengthens the table (up to max_index + 1).
 * root/hca name the sysfs tree for the cross-check and the netdev names (gid_attrs/ndevs/<i>; root
 * NULL: none, names from the entries' ifindex here). 0 or -ENOMEM. */
int rp_port_gids_from_verbs(struct rp_port *port, size_t tbl_len, const struct ibv_gid_entry *entries,
			    size_t n, const char *root, const char *hca);

/* Read gid_attrs/types/<index> of hca's port under root as NCCL does: *type_p gets the type (UNKNOWN
 * when the read fails or the text is not a known type) and the return says how the read went. The
 * kernel lists the attribute for every index and fails the read of an empty one with EINVAL: in a
 * tree, a missing file whose directory exists stands for that (EINVAL); a missing directory is a
 * failed open, as on kernels without gid_attrs. */
enum rp_gid_type_read rp_gid_read_type(const char *root, const char *hca, int port, int index,
				       enum rp_gid_type *type_p);
/* How the read of an empty entry's type goes: EINVAL (KERNEL) when the port has a gid_attrs/types
 * directory, else FAILS. */
enum rp_gid_type_read rp_gid_empty_type_read(const char *root, const char *hca, int port);

#endif
