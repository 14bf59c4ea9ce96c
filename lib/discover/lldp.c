/* lldp.c: lldpctl's JSON into the native --topology lines of this node's adapters; see lldp.h. */
#include "discover/lldp.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover/node.h"

static const char *str_of(json_t *o, const char *key)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Copy s into out (len), spaces and tabs as '_' (the native format splits on them), "" as "-". */
static void word_copy(char *out, size_t len, const char *s)
{
	snprintf(out, len, "%s", s && *s ? s : "-");
	for (char *c = out; *c; c++)
		if (isspace((unsigned char)*c))
			*c = '_';
}

/* The switch's name: the chassis object's one key (its system name), or its id when it sent none. */
static const char *chassis_name(json_t *ch)
{
	const char *key;
	json_t *val;

	if (!json_is_object(ch))
		return NULL;
	if (json_is_object(json_object_get(ch, "id")) && str_of(json_object_get(ch, "id"), "value"))
		return str_of(json_object_get(ch, "id"), "value");
	json_object_foreach(ch, key, val)
		return key;
	return NULL;
}

/* The switch port: its id when that is an interface name, else its description, else its id. */
static const char *port_name(json_t *port)
{
	json_t *id = json_is_object(port) ? json_object_get(port, "id") : NULL;
	const char *type = str_of(id, "type"), *value = str_of(id, "value"), *descr = str_of(port, "descr");

	if (value && type && strcmp(type, "ifname") == 0)
		return value;
	return descr && *descr ? descr : value;
}

/* One interface's neighbour into nb; -EINVAL when it names no switch or port. */
static int neighbor_of(const char *ifname, json_t *o, struct rp_lldp_neighbor *nb, char *err, size_t err_len)
{
	const char *ch = chassis_name(json_object_get(o, "chassis")), *port = port_name(json_object_get(o, "port"));

	if (!ch || !port) {
		snprintf(err, err_len, "interface %.64s: its neighbour has no %s", ifname, ch ? "port" : "chassis");
		return -EINVAL;
	}
	if (strlen(ifname) >= sizeof(nb->ifname)) {
		snprintf(err, err_len, "interface name '%.64s...' is longer than %zu characters", ifname, sizeof(nb->ifname) - 1);
		return -EINVAL;
	}
	snprintf(nb->ifname, sizeof(nb->ifname), "%s", ifname);
	word_copy(nb->chassis, sizeof(nb->chassis), ch);
	word_copy(nb->port, sizeof(nb->port), port);
	return 0;
}

/* Every {"ifname": NB} of obj appended to *nb. */
static int object_add(json_t *obj, struct rp_lldp_neighbor **nb, size_t *n, char *err, size_t err_len)
{
	const char *key;
	json_t *val;

	json_object_foreach(obj, key, val) {
		struct rp_lldp_neighbor *x = realloc(*nb, (*n + 1) * sizeof(**nb));
		int rc;

		if (!x)
			return -ENOMEM;
		*nb = x;
		rc = neighbor_of(key, val, &x[*n], err, err_len);
		if (rc)
			return rc;
		(*n)++;
	}
	return 0;
}

int rp_lldp_parse(const char *text, size_t len, struct rp_lldp_neighbor **nb, size_t *n, char *err, size_t err_len)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, 0, &je), *lldp, *itf;
	int rc = 0;

	*nb = NULL;
	*n = 0;
	if (!root) {
		snprintf(err, err_len, "not JSON (line %d: %s)", je.line, je.text);
		return -EINVAL;
	}
	lldp = json_object_get(root, "lldp");
	itf = json_is_object(lldp) ? json_object_get(lldp, "interface") : NULL;
	if (json_is_object(lldp) && !itf) {
		json_decref(root);
		return 0;             /* lldpd heard nobody */
	}
	if (!json_is_object(itf) && !json_is_array(itf)) {
		snprintf(err, err_len, "not lldpctl -f json: no lldp.interface object or array");
		rc = -EINVAL;
	} else if (json_is_object(itf)) {
		rc = object_add(itf, nb, n, err, err_len);
	} else {
		size_t i;
		json_t *el;

		json_array_foreach(itf, i, el) {
			if (!json_is_object(el)) {
				snprintf(err, err_len, "lldp.interface[%zu] is not an object", i);
				rc = -EINVAL;
			}
			if (!rc)
				rc = object_add(el, nb, n, err, err_len);
			if (rc)
				break;
		}
	}
	json_decref(root);
	if (rc) {
		free(*nb);
		*nb = NULL;
		*n = 0;
	}
	return rc;
}

unsigned rp_lldp_port_number(const char *port)
{
	const char *end = port + strlen(port), *p = end;
	unsigned long v;

	while (p > port && !isdigit((unsigned char)p[-1]))
		p--;
	end = p;
	while (p > port && isdigit((unsigned char)p[-1]))
		p--;
	if (p == end || end - p > 5)
		return 0;
	v = strtoul(p, NULL, 10);
	return v >= 1 && v <= 65535 ? (unsigned)v : 0;
}

/* The neighbour heard on one of the port's netdevs, NULL none. */
static const struct rp_lldp_neighbor *port_neighbor(const struct rp_port *pt, const struct rp_lldp_neighbor *nb, size_t n)
{
	for (size_t g = 0; g < pt->n_gids; g++) {
		if (!pt->gids[g].ndev[0])
			continue;
		for (size_t i = 0; i < n; i++)
			if (strcmp(nb[i].ifname, pt->gids[g].ndev) == 0)
				return &nb[i];
	}
	return NULL;
}

int rp_lldp_topology(const struct rp_node *node, const char *host, const struct rp_lldp_neighbor *nb, size_t n,
		     char **out)
{
	size_t len;
	int lines = 0;
	FILE *f = open_memstream(out, &len);

	if (!f)
		return -ENOMEM;
	for (size_t h = 0; h < node->n_hcas; h++)
		for (size_t p = 0; p < node->hcas[h].n_ports; p++) {
			const struct rp_port *pt = &node->hcas[h].ports[p];
			const struct rp_lldp_neighbor *x = port_neighbor(pt, nb, n);
			unsigned num;

			if (!x)
				continue;
			num = rp_lldp_port_number(x->port);
			fprintf(f, "adapter %s/%s:%d %s ", host, node->hcas[h].name, pt->num, x->chassis);
			if (num)
				fprintf(f, "%u", num);
			else
				fputc('-', f);
			fprintf(f, "   # %s, switch port %s\n", x->ifname, x->port);
			lines++;
		}
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return lines;
}
