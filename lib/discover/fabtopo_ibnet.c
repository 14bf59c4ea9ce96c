/* fabtopo_ibnet.c: ibnetdiscover's topology output as the native --topology format; see fabtopo.h.
 *
 * Only the switch sections are read: each port line of a switch names what its cable reaches,
 *   [P]  "H-<guid>"[Q](<portguid>)   # "<remote NodeDescription>" lid ...   an adapter's port Q
 *   [P]  "S-<guid>"[Q]               # "<remote NodeDescription>" lid ...   another switch
 * (grouped output's "[ext N]" after either bracket is skipped). The CA sections say the same links
 * again from the other end and are skipped, as are chassis and comment lines. */
#include "discover/fabtopo_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

struct ib_switch {
	char id[40];                  /* "S-0002c90200448ec2" */
	char desc[RP_NAME_MAX];       /* its NodeDescription, spaces as '_' */
	bool has_ca;
};

struct ib_ca {
	char node[RP_NAME_MAX], dev[RP_NAME_MAX];
	unsigned port, sw, sw_port;
};

struct ibparse {
	const char *name;
	unsigned line;
	char *err;
	size_t err_len;
	struct ib_switch *sw;
	size_t n_sw, cap_sw;
	struct ib_ca *ca;
	size_t n_ca, cap_ca, unnamed;   /* unnamed: adapter ports whose description is not "HOST DEVICE" */
	struct { unsigned a, b; } *link;
	size_t n_link, cap_link;
	long cur;                     /* the switch whose section is being read, -1 none (a CA's, or before) */
};

static int ierr(struct ibparse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int ierr(struct ibparse *p, const char *fmt, ...)
{
	char where[600];
	va_list ap;

	snprintf(where, sizeof(where), "%s (ibnetdiscover)", p->name);
	va_start(ap, fmt);
	rp_fabtopo_verr(p->err, p->err_len, where, p->line, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The quoted string at s ('"' first) into out (len); returns the character after its closing quote,
 * NULL when there is none or it does not fit. */
static const char *quoted(const char *s, char *out, size_t len)
{
	const char *end = *s == '"' ? strchr(s + 1, '"') : NULL;

	if (!end || (size_t)(end - s - 1) >= len)
		return NULL;
	memcpy(out, s + 1, (size_t)(end - s - 1));
	out[end - s - 1] = '\0';
	return end + 1;
}

/* Spaces and tabs as '_' (the native format splits on them); empty as "-". */
static void wordify(char *s)
{
	for (char *c = s; *c; c++)
		if (isspace((unsigned char)*c))
			*c = '_';
	if (!*s)
		strcpy(s, "-");
}

/* The switch with this id, added when new; its index. */
static int switch_of(struct ibparse *p, const char *id, unsigned *idx)
{
	for (size_t i = p->n_sw; i-- > 0;)
		if (strcmp(p->sw[i].id, id) == 0) {
			*idx = (unsigned)i;
			return 0;
		}
	if (rp_fabtopo_grow((void **)&p->sw, &p->cap_sw, p->n_sw, sizeof(*p->sw)))
		return -ENOMEM;
	memset(&p->sw[p->n_sw], 0, sizeof(*p->sw));
	rp_strlcpy(p->sw[p->n_sw].id, id, sizeof(p->sw[0].id));
	*idx = (unsigned)p->n_sw++;
	return 0;
}

/* "Switch <ports> "S-<guid>" # "<desc>" ...": a switch's section starts. */
static int switch_header(struct ibparse *p, const char *s)
{
	char id[40], desc[RP_NAME_MAX] = "";
	const char *q = strchr(s, '"'), *h;
	unsigned idx;

	if (!q || !(q = quoted(q, id, sizeof(id))) || strncmp(id, "S-", 2) != 0)
		return ierr(p, "a Switch line without its \"S-<guid>\"");
	h = strchr(q, '#');
	if (h && (h = strchr(h, '"')) && !quoted(h, desc, sizeof(desc)))
		return ierr(p, "the switch's description is not one quoted string of at most %d characters", RP_NAME_MAX - 1);
	if (switch_of(p, id, &idx))
		return -ENOMEM;
	wordify(desc);
	if (strcmp(desc, "-") != 0)
		rp_strlcpy(p->sw[idx].desc, desc, sizeof(p->sw[idx].desc));
	p->cur = idx;
	return 0;
}

/* "[P]..." after the brackets' optional "[ext N]": the port number. */
static const char *port_num(struct ibparse *p, const char *s, unsigned *port)
{
	char *end;
	unsigned long v;

	if (*s != '[')
		return NULL;
	v = strtoul(s + 1, &end, 10);
	if (end == s + 1 || *end != ']' || v == 0 || v > 65535)
		return NULL;
	*port = (unsigned)v;
	s = end + 1;
	if (strncmp(s, "[ext ", 5) == 0 && (s = strchr(s, ']')) != NULL)
		s++;
	(void)p;
	return s;
}

/* A CA port at the other end of a switch port: "HOST DEVICE" from its description. */
static int ca_add(struct ibparse *p, const char *desc, unsigned port, unsigned sw, unsigned sw_port)
{
	char host[RP_NAME_MAX], dev[RP_NAME_MAX], extra[8];
	struct ib_ca *c;

	if (sscanf(desc, "%63s %63s %7s", host, dev, extra) != 2) {
		p->unnamed++;         /* not rdma-ndd's "%h %d": no adapter name to place */
		return 0;
	}
	if (rp_fabtopo_grow((void **)&p->ca, &p->cap_ca, p->n_ca, sizeof(*p->ca)))
		return -ENOMEM;
	c = &p->ca[p->n_ca++];
	rp_strlcpy(c->node, host, sizeof(c->node));
	rp_strlcpy(c->dev, dev, sizeof(c->dev));
	c->port = port;
	c->sw = sw;
	c->sw_port = sw_port;
	p->sw[sw].has_ca = true;
	return 0;
}

/* A port line of the current switch. */
static int switch_port(struct ibparse *p, const char *s)
{
	char id[40], desc[RP_NAME_MAX] = "";
	unsigned port, rport, other;
	const char *q = port_num(p, s, &port), *h;

	if (!q)
		return ierr(p, "a port line that does not start with [PORT]");
	while (*q == ' ' || *q == '\t')
		q++;
	if (!(q = quoted(q, id, sizeof(id))) || !(q = port_num(p, q, &rport)))
		return ierr(p, "a port line without its remote \"<id>\"[PORT]");
	h = strchr(q, '#');
	if (h && (h = strchr(h, '"')) && !quoted(h, desc, sizeof(desc)))
		return ierr(p, "the remote description is not one quoted string of at most %d characters", RP_NAME_MAX - 1);
	if (strncmp(id, "H-", 2) == 0)
		return ca_add(p, desc, rport, (unsigned)p->cur, port);
	if (strncmp(id, "S-", 2) != 0)
		return 0;             /* a router: nothing to place */
	if (switch_of(p, id, &other) || rp_fabtopo_grow((void **)&p->link, &p->cap_link, p->n_link, sizeof(*p->link)))
		return -ENOMEM;
	p->link[p->n_link].a = (unsigned)p->cur;
	p->link[p->n_link++].b = other;
	return 0;
}

static int ib_line(struct ibparse *p, const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, "Switch", 6) == 0 && isspace((unsigned char)s[6]))
		return switch_header(p, s);
	if ((strncmp(s, "Ca", 2) == 0 || strncmp(s, "Rt", 2) == 0) && isspace((unsigned char)s[2])) {
		p->cur = -1;          /* a CA's or router's section: the same links again */
		return 0;
	}
	if (*s == '[' && p->cur >= 0)
		return switch_port(p, s);
	if (*s == '[' && p->n_sw == 0)
		return ierr(p, "a port line before any Switch line");
	return 0;                     /* ids, chassis, comments, a CA's ports */
}

/* A switch's name: its description, unless another switch has the same one (or it has none): then
 * its id too. */
static void switch_name(const struct ibparse *p, unsigned i, char *out, size_t len)
{
	bool dup = !p->sw[i].desc[0];

	for (size_t j = 0; j < p->n_sw && !dup; j++)
		dup = j != i && strcmp(p->sw[j].desc, p->sw[i].desc) == 0;
	if (!p->sw[i].desc[0])
		snprintf(out, len, "%s", p->sw[i].id);
	else if (dup)
		snprintf(out, len, "%s(%s)", p->sw[i].desc, p->sw[i].id);
	else
		snprintf(out, len, "%s", p->sw[i].desc);
}

/* The native text: every adapter port on its leaf (a switch with an adapter), every leaf-spine link
 * (a switch without adapters linked to a leaf is a spine). */
static int native_write(const struct ibparse *p, char **out, size_t *out_len)
{
	char a[2 * RP_NAME_MAX + 48], b[2 * RP_NAME_MAX + 48];
	size_t len;
	FILE *f = open_memstream(out, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "# from ibnetdiscover: %zu adapter ports, %zu switches\nroute unknown\n", p->n_ca, p->n_sw);
	for (size_t i = 0; i < p->n_ca; i++) {
		switch_name(p, p->ca[i].sw, a, sizeof(a));
		fprintf(f, "adapter %s/%s:%u %s %u\n", p->ca[i].node, p->ca[i].dev, p->ca[i].port, a, p->ca[i].sw_port);
	}
	for (size_t i = 0; i < p->n_link; i++) {
		unsigned x = p->link[i].a, y = p->link[i].b;

		if (p->sw[x].has_ca == p->sw[y].has_ca)
			continue;     /* leaf-leaf or spine-core: not a leaf's uplink */
		switch_name(p, p->sw[x].has_ca ? x : y, a, sizeof(a));
		switch_name(p, p->sw[x].has_ca ? y : x, b, sizeof(b));
		fprintf(f, "uplink %s %s\n", a, b);
	}
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	*out_len = len;
	return 0;
}

bool rp_fabtopo_is_ibnet(const char *text, size_t len)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		const char *s = text + pos;

		while (n && (*s == ' ' || *s == '\t' || *s == '\r')) {
			s++;
			n--;
		}
		if (n && *s != '#')
			return (n >= 7 && strncmp(s, "vendid=", 7) == 0) || (n >= 11 && strncmp(s, "switchguid=", 11) == 0) ||
			       (n >= 7 && strncmp(s, "Switch", 6) == 0 && isspace((unsigned char)s[6]));
		pos += n + (size_t)(s - (text + pos)) + 1;
	}
	return false;
}

int rp_fabtopo_ibnet_native(const char *name, const char *text, size_t len, char **out, size_t *out_len, char *err,
			    size_t err_len)
{
	struct ibparse p = { .name = name, .err = err, .err_len = err_len, .cur = -1 };
	char line[4096];
	size_t pos = 0;
	int rc = 0;

	*out = NULL;
	while (pos < len && rc == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		p.line++;
		if (n >= sizeof(line))
			rc = ierr(&p, "longer than %zu characters", sizeof(line) - 1);
		else if (memchr(text + pos, '\0', n))
			rc = ierr(&p, "a NUL byte (not a text file?)");
		if (rc == 0) {
			memcpy(line, text + pos, n);
			line[n] = '\0';
			rc = ib_line(&p, line);
		}
		pos += n + 1;
	}
	if (rc == 0 && p.n_ca == 0) {
		snprintf(err, err_len, "%s (ibnetdiscover): no adapter port named \"HOST DEVICE\" (%zu adapter ports with "
			 "another NodeDescription: rdma-ndd sets \"%%h %%d\")", name, p.unnamed);
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = native_write(&p, out, out_len);
	free(p.sw);
	free(p.ca);
	free(p.link);
	return rc;
}
