/* nodebuild.c: nodes built in memory for the NCCL tests; see nodebuild.h. */
#include "nodebuild.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "base/util.h"

struct rp_hca *rp_test_hca(struct rp_node *n, const char *name, const char *pci_path)
{
	struct rp_hca *h;

	n->hcas = realloc(n->hcas, (n->n_hcas + 1) * sizeof(*n->hcas));
	assert_non_null(n->hcas);
	h = &n->hcas[n->n_hcas++];
	memset(h, 0, sizeof(*h));
	rp_strlcpy(h->name, name, sizeof(h->name));
	h->in_verbs = RP_TRI_UNKNOWN;
	h->numa_node = -1;
	h->node_type = 1;
	if (pci_path) {
		const char *last = strrchr(pci_path, '/');

		rp_strlcpy(h->pci_path, pci_path, sizeof(h->pci_path));
		rp_strlcpy(h->pci, last ? last + 1 : pci_path, sizeof(h->pci));
	}
	return h;
}

struct rp_port *rp_test_port(struct rp_hca *h, int num, int state, enum rp_link_layer ll)
{
	struct rp_port *p;

	h->ports = realloc(h->ports, (h->n_ports + 1) * sizeof(*h->ports));
	assert_non_null(h->ports);
	p = &h->ports[h->n_ports++];
	memset(p, 0, sizeof(*p));
	p->num = num;
	p->state = state;
	p->phys_state = state == RP_PORT_ACTIVE ? 5 : 3;
	p->link_layer = ll;
	return p;
}

void rp_test_gid(struct rp_port *p, const char *text, enum rp_gid_type type)
{
	struct rp_gid *g;

	p->gids = realloc(p->gids, (p->n_gids + 1) * sizeof(*p->gids));
	assert_non_null(p->gids);
	g = &p->gids[p->n_gids];
	memset(g, 0, sizeof(*g));
	g->index = (int)p->n_gids++;
	if (text)
		assert_int_equal(inet_pton(AF_INET6, text, g->raw), 1);
	g->type = text ? type : RP_GID_TYPE_NONE;
}

void rp_test_gid_table(struct rp_port *p, const char *addr)
{
	rp_test_gid(p, "fe80::ba59:9fff:fe00:1", RP_GID_TYPE_IB_ROCE_V1);
	rp_test_gid(p, "fe80::ba59:9fff:fe00:1", RP_GID_TYPE_ROCE_V2);
	rp_test_gid(p, addr, RP_GID_TYPE_IB_ROCE_V1);
	rp_test_gid(p, addr, RP_GID_TYPE_ROCE_V2);
	rp_test_gid(p, NULL, RP_GID_TYPE_NONE);
	rp_test_gid(p, NULL, RP_GID_TYPE_NONE);
}

struct rp_port *rp_test_ib_port(struct rp_hca *h, int num, int state, const char *gid0)
{
	struct rp_port *p = rp_test_port(h, num, state, RP_LL_INFINIBAND);

	rp_test_gid(p, gid0, RP_GID_TYPE_IB_ROCE_V1);
	return p;
}

void rp_test_ib_node(struct rp_node *n, int count)
{
	char name[16];

	memset(n, 0, sizeof(*n));
	for (int i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "mlx5_%d", i);
		rp_test_ib_port(rp_test_hca(n, name, NULL), 1, RP_PORT_ACTIVE, "fe80::1");
	}
}

void rp_test_node_free(struct rp_node *n)
{
	for (size_t d = 0; d < n->n_hcas; d++) {
		for (size_t i = 0; i < n->hcas[d].n_ports; i++)
			free(n->hcas[d].ports[i].gids);
		free(n->hcas[d].ports);
	}
	free(n->hcas);
	free(n->gpus);
	memset(n, 0, sizeof(*n));
}
