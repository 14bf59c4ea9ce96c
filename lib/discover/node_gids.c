/* node_gids.c: a port's GID table from ibv_query_gid_table's entries; see node_gids.h. */
#include "discover/node_gids.h"

#include <errno.h>
#include <net/if.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "discover/sysfs.h"
#include "base/util.h"

#define GID_TABLE_MAX 4096   /* as the sysfs reader: more than any driver has */

static enum rp_gid_type type_from_verbs(uint32_t t)
{
	switch (t) {
	case IBV_GID_TYPE_IB:
	case IBV_GID_TYPE_ROCE_V1:
		return RP_GID_TYPE_IB_ROCE_V1;
	case IBV_GID_TYPE_ROCE_V2:
		return RP_GID_TYPE_ROCE_V2;
	default:
		return RP_GID_TYPE_UNKNOWN;
	}
}

static bool types_dir(const char *root, const char *hca, int port)
{
	char rel[160], path[4096];
	struct stat st;

	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%d/gid_attrs/types", hca, port);
	return rp_sysfs_join(root, rel, path, sizeof(path)) == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

enum rp_gid_type_read rp_gid_read_type(const char *root, const char *hca, int port, int index,
				       enum rp_gid_type *type_p)
{
	char rel[160], buf[128];
	int rc;

	*type_p = RP_GID_TYPE_UNKNOWN;
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%d/gid_attrs/types/%d", hca, port, index);
	rc = rp_sysfs_read(root, rel, buf, sizeof(buf));
	if (rc == 0) {
		if (rp_sysfs_parse_gid_type(buf, type_p))
			*type_p = RP_GID_TYPE_UNKNOWN;
		return RP_GID_TREAD_KERNEL;
	}
	if (rc == -EINVAL || (rc == -ENOENT && types_dir(root, hca, port)))
		return RP_GID_TREAD_EINVAL;
	return RP_GID_TREAD_FAILS;
}

enum rp_gid_type_read rp_gid_empty_type_read(const char *root, const char *hca, int port)
{
	return types_dir(root, hca, port) ? RP_GID_TREAD_KERNEL : RP_GID_TREAD_FAILS;
}

/* Compare one valid entry with sysfs gids/<i> and gid_attrs/types/<i>; warn where they differ. */
static void cross_check(const char *root, const char *hca, int port, struct rp_gid *g)
{
	char rel[160], buf[128];
	uint8_t raw[16];
	enum rp_gid_type t;

	/* NCCL reads the type from sysfs whatever verbs says: how that read goes is kept. */
	g->type_read = rp_gid_read_type(root, hca, port, g->index, &t);
	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%d/gids/%d", hca, port, g->index);
	if (rp_sysfs_read(root, rel, buf, sizeof(buf)) != 0 || rp_sysfs_parse_gid(buf, raw) != 0) {
		rp_warn("%s port %d: GID %d is %s in verbs but %s/%s cannot be read", hca, port, g->index, g->text,
			root, rel);
		return;
	}
	if (memcmp(raw, g->raw, sizeof(raw)) != 0) {
		char text[RP_GID_TEXT];

		rp_sysfs_gid_to_text(raw, text);
		rp_warn("%s port %d: GID %d is %s in verbs but %s in sysfs; verbs is used", hca, port, g->index,
			g->text, text);
		return;
	}
	if (g->type_read == RP_GID_TREAD_KERNEL && t != RP_GID_TYPE_UNKNOWN && t != g->type)
		rp_warn("%s port %d: GID %d is %s in verbs but %s in sysfs; verbs is used", hca, port, g->index,
			rp_gid_type_str(g->type), rp_gid_type_str(t));
}

/* The entry's netdev as sysfs names it (gid_attrs/ndevs/<i>), as the sysfs reader does. */
static void read_ndev(const char *root, const char *hca, int port, struct rp_gid *g)
{
	char rel[160], buf[128];

	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", hca, port, g->index);
	if (rp_sysfs_read(root, rel, buf, sizeof(buf)) == 0 && buf[0] &&
	    rp_sysfs_parse_ndev(buf, g->ndev, sizeof(g->ndev)))
		g->ndev[0] = '\0';
}

int rp_port_gids_from_verbs(struct rp_port *port, size_t tbl_len, const struct ibv_gid_entry *entries,
			    size_t n, const char *root, const char *hca)
{
	size_t len = tbl_len;
	enum rp_gid_type_read empty_read;

	for (size_t i = 0; i < n; i++)
		if ((int)entries[i].port_num == port->num && entries[i].gid_index < GID_TABLE_MAX &&
		    entries[i].gid_index >= len)
			len = entries[i].gid_index + 1;
	if (len > GID_TABLE_MAX)
		len = GID_TABLE_MAX;
	port->n_gids = 0;
	if (len == 0)
		return 0;
	port->gids = calloc(len, sizeof(*port->gids));
	if (!port->gids)
		return rp_error(-ENOMEM, "allocate the GID table of %s port %d: out of memory", hca, port->num);
	port->n_gids = len;
	empty_read = root ? rp_gid_empty_type_read(root, hca, port->num) : RP_GID_TREAD_KERNEL;
	for (size_t i = 0; i < len; i++) {
		port->gids[i].index = (int)i;
		port->gids[i].type = RP_GID_TYPE_NONE;
		port->gids[i].type_read = empty_read;
		rp_sysfs_gid_to_text(port->gids[i].raw, port->gids[i].text);
	}
	for (size_t i = 0; i < n; i++) {
		const struct ibv_gid_entry *e = &entries[i];
		struct rp_gid *g;
		char name[IF_NAMESIZE];

		if ((int)e->port_num != port->num || e->gid_index >= len)
			continue;
		g = &port->gids[e->gid_index];
		memcpy(g->raw, e->gid.raw, sizeof(g->raw));
		rp_sysfs_gid_to_text(g->raw, g->text);
		if (rp_sysfs_gid_is_zero(g->raw))
			continue;
		g->type = type_from_verbs(e->gid_type);
		g->type_read = RP_GID_TREAD_KERNEL;
		if (root) {
			cross_check(root, hca, port->num, g);
			read_ndev(root, hca, port->num, g);
		}
		/* No name from sysfs: the index's name here (the netdev may live in another namespace,
		 * hence sysfs first). */
		if (!g->ndev[0] && e->ndev_ifindex && if_indextoname(e->ndev_ifindex, name))
			rp_strlcpy(g->ndev, name, sizeof(g->ndev));
	}
	return 0;
}
