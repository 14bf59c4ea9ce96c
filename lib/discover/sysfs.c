/* sysfs.c: sysfs parsers and root-prefixed readers; see sysfs.h. */
#include "discover/sysfs.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

/* ---- parsers ---- */

/* Split "N: NAME": the number (0..max_num) and a pointer to NAME (non-empty). */
static int parse_num_name(const char *s, int max_num, int *num_p, const char **name_p)
{
	char digits[8];
	const char *colon;
	size_t n;
	int v;

	if (!s)
		return -EINVAL;
	colon = strchr(s, ':');
	if (!colon || colon == s)
		return -EINVAL;
	n = (size_t)(colon - s);
	if (n >= sizeof(digits))
		return -ERANGE;
	memcpy(digits, s, n);
	digits[n] = '\0';
	if (digits[0] == '-')
		return -EINVAL;
	if (rp_parse_int(digits, 0, max_num, &v))
		return -EINVAL;
	if (colon[1] != ' ' || colon[2] == '\0' || isspace((unsigned char)colon[2]))
		return -EINVAL;
	for (const char *p = colon + 2; *p; p++)
		if (!isprint((unsigned char)*p))
			return -EINVAL;
	*num_p = v;
	*name_p = colon + 2;
	return 0;
}

/* "N: NAME" where a number inside the table must carry the table's name; numbers past the table
 * (a newer kernel) are accepted with any printable name. */
static int parse_enum_text(const char *s, const char *const *names, int n_names, int max_num, int *out_p)
{
	const char *name;
	int v, rc;

	rc = parse_num_name(s, max_num, &v, &name);
	if (rc)
		return rc;
	if (v < n_names && (!names[v] || strcmp(name, names[v]) != 0))
		return -EINVAL;
	*out_p = v;
	return 0;
}

static const char *const port_state_names[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};

static const char *const phys_state_names[] = {
	"<unknown>", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
	"LinkErrorRecovery", "Phy Test",
};

static const char *const node_type_names[] = {
	NULL, "CA", "switch", "router", "RNIC", "usNIC", "usNIC UDP",
};

int rp_sysfs_parse_state(const char *s, int *state_p)
{
	return parse_enum_text(s, port_state_names, (int)RP_ARRAY_SIZE(port_state_names), 255, state_p);
}

int rp_sysfs_parse_phys_state(const char *s, int *phys_p)
{
	return parse_enum_text(s, phys_state_names, (int)RP_ARRAY_SIZE(phys_state_names), 255, phys_p);
}

int rp_sysfs_parse_node_type(const char *s, int *type_p)
{
	return parse_enum_text(s, node_type_names, (int)RP_ARRAY_SIZE(node_type_names), 255, type_p);
}

/* The part in parentheses of a rate: "4X", "4X EDR", "12X QDR", "2X NDR": digits, 'X', optionally
 * a space and an uppercase/digit speed name. */
static bool rate_width_ok(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && isdigit((unsigned char)p[i]))
		i++;
	if (i == 0 || i > 2 || i >= n || p[i] != 'X')
		return false;
	i++;
	if (i == n)
		return true;
	if (p[i] != ' ' || i + 1 == n)
		return false;
	for (i++; i < n; i++)
		if (!isupper((unsigned char)p[i]) && !isdigit((unsigned char)p[i]))
			return false;
	return true;
}

int rp_sysfs_parse_rate(const char *s, double *gbps_p, char *text, size_t text_size)
{
	static const char unit[] = " Gb/sec";
	char num[24];
	const char *u, *rest;
	size_t n;
	double v;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	u = strstr(s, unit);
	if (!u)
		return -EINVAL;
	n = (size_t)(u - s);
	if (n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)num[i]) && num[i] != '.')
			return -EINVAL;
	if (rp_parse_double(num, 0, 1e6, &v))
		return -EINVAL;
	rest = u + sizeof(unit) - 1;
	if (*rest == '\0') {
		if (text_size == 0)
			return -EINVAL;
		text[0] = '\0';
		*gbps_p = v;
		return 0;
	}
	if (rest[0] != ' ' || rest[1] != '(')
		return -EINVAL;
	rest += 2;
	n = strlen(rest);
	if (n < 3 || rest[n - 1] != ')' || !rate_width_ok(rest, n - 1) || n - 1 >= text_size)
		return -EINVAL;
	memcpy(text, rest, n - 1);
	text[n - 1] = '\0';
	*gbps_p = v;
	return 0;
}

int rp_sysfs_parse_link_layer(const char *s, enum rp_link_layer *ll_p)
{
	if (!s)
		return -EINVAL;
	if (strcmp(s, "InfiniBand") == 0)
		*ll_p = RP_LL_INFINIBAND;
	else if (strcmp(s, "Ethernet") == 0)
		*ll_p = RP_LL_ETHERNET;
	else if (strcmp(s, "Unknown") == 0)
		*ll_p = RP_LL_UNKNOWN;
	else
		return -EINVAL;
	return 0;
}

int rp_sysfs_parse_lid(const char *s, uint32_t *lid_p)
{
	uint64_t v;
	int rc = rp_parse_u64(s, 0, UINT32_MAX, true, &v);

	if (rc)
		return rc;
	*lid_p = (uint32_t)v;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int rp_sysfs_parse_gid(const char *s, uint8_t raw[16])
{
	uint8_t out[16];
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	/* The kernel's form: exactly 8 groups of 1..4 hex digits. */
	for (int g = 0; g < 8; g++) {
		unsigned v = 0;
		int d = 0;

		while (d < 4 && hexval(*p) >= 0) {
			v = v * 16 + (unsigned)hexval(*p++);
			d++;
		}
		if (d == 0 || (g < 7 && *p != ':') || (g == 7 && *p != '\0'))
			goto other_form;
		if (g < 7)
			p++;
		out[2 * g] = (uint8_t)(v >> 8);
		out[2 * g + 1] = (uint8_t)v;
	}
	memcpy(raw, out, 16);
	return 0;
other_form:
	/* Any other IPv6 text ("fe80::1", "::ffff:10.0.0.1"); only for people typing GIDs. */
	if (strlen(s) >= INET6_ADDRSTRLEN || inet_pton(AF_INET6, s, out) != 1)
		return -EINVAL;
	memcpy(raw, out, 16);
	return 0;
}

void rp_sysfs_gid_to_text(const uint8_t raw[16], char text[RP_GID_TEXT])
{
	static const char hex[] = "0123456789abcdef";
	char *p = text;

	for (int i = 0; i < 16; i++) {
		*p++ = hex[raw[i] >> 4];
		*p++ = hex[raw[i] & 0xf];
		if (i % 2 == 1 && i < 15)
			*p++ = ':';
	}
	*p = '\0';
}

bool rp_sysfs_gid_is_zero(const uint8_t raw[16])
{
	for (int i = 0; i < 16; i++)
		if (raw[i])
			return false;
	return true;
}

int rp_sysfs_parse_gid_type(const char *s, enum rp_gid_type *type_p)
{
	if (!s)
		return -EINVAL;
	if (strcmp(s, "IB/RoCE v1") == 0)
		*type_p = RP_GID_TYPE_IB_ROCE_V1;
	else if (strcmp(s, "RoCE v2") == 0)
		*type_p = RP_GID_TYPE_ROCE_V2;
	else
		return -EINVAL;
	return 0;
}

int rp_sysfs_parse_ndev(const char *s, char *out, size_t out_size)
{
	size_t n;

	if (!s)
		return -EINVAL;
	n = strlen(s);
	/* IFNAMSIZ is 16 with the NUL. */
	if (n == 0 || n > 15 || n >= out_size || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '/' || s[i] == ':' || !isgraph((unsigned char)s[i]))
			return -EINVAL;
	memcpy(out, s, n + 1);
	return 0;
}

int rp_sysfs_parse_fw_ver(const char *s, char *out, size_t out_size)
{
	size_t n;

	if (!s)
		return -EINVAL;
	n = strlen(s);
	if (n == 0 || n >= out_size)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isprint((unsigned char)s[i]))
			return -EINVAL;
	memcpy(out, s, n + 1);
	return 0;
}

int rp_sysfs_parse_node_guid(const char *s, uint64_t *guid_p, char text[20])
{
	uint64_t v = 0;

	if (!s || strlen(s) != 19)
		return -EINVAL;
	for (int i = 0; i < 19; i++) {
		if (i % 5 == 4) {
			if (s[i] != ':')
				return -EINVAL;
			continue;
		}
		if (hexval(s[i]) < 0)
			return -EINVAL;
		v = v << 4 | (uint64_t)hexval(s[i]);
	}
	*guid_p = v;
	snprintf(text, 20, "%04x:%04x:%04x:%04x", (unsigned)(v >> 48) & 0xffff, (unsigned)(v >> 32) & 0xffff,
		 (unsigned)(v >> 16) & 0xffff, (unsigned)v & 0xffff);
	return 0;
}

int rp_sysfs_parse_numa(const char *s, int *numa_p)
{
	return rp_parse_int(s, -1, 65535, numa_p);
}

/* n hex digits (1..max_digits) at *pp followed by the byte stop; advances *pp past stop. */
static int hex_field(const char **pp, int max_digits, char stop, unsigned long *out_p)
{
	const char *p = *pp;
	unsigned long v = 0;
	int d = 0;

	while (hexval(*p) >= 0) {
		if (++d > max_digits)
			return -EINVAL;
		v = v * 16 + (unsigned long)hexval(*p++);
	}
	if (d == 0 || *p != stop)
		return -EINVAL;
	*pp = stop ? p + 1 : p;
	*out_p = v;
	return 0;
}

int rp_sysfs_parse_pci(const char *s, char out[RP_PCI_MAX])
{
	unsigned long dom = 0, bus, dev, fn;
	const char *p = s;
	int colons = 0;

	if (!s)
		return -EINVAL;
	for (const char *q = s; *q; q++)
		colons += *q == ':';
	if (colons == 2 && hex_field(&p, 8, ':', &dom))
		return -EINVAL;
	if (colons != 1 && colons != 2)
		return -EINVAL;
	if (hex_field(&p, 2, ':', &bus) || hex_field(&p, 2, '.', &dev) || hex_field(&p, 1, '\0', &fn))
		return -EINVAL;
	if (dom > 0xffffffUL || dev > 0x1f || fn > 7)
		return -ERANGE;
	snprintf(out, RP_PCI_MAX, "%04lx:%02lx:%02lx.%lx", dom, bus, dev, fn);
	return 0;
}

bool rp_sysfs_is_bdf(const char *s)
{
	if (!s || strlen(s) != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.')
		return false;
	for (int i = 0; i < 12; i++)
		if (i != 4 && i != 7 && i != 10 && hexval(s[i]) < 0)
			return false;
	return true;
}

int rp_sysfs_parse_hex(const char *s, uint32_t max, uint32_t *out_p)
{
	uint64_t v;
	int rc;

	if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -EINVAL;
	rc = rp_parse_u64(s, 0, max, true, &v);
	if (rc)
		return rc;
	*out_p = (uint32_t)v;
	return 0;
}

/* ---- readers ---- */

int rp_sysfs_join(const char *root, const char *rel, char *out, size_t out_size)
{
	int n;

	if (!rel || !*rel)
		n = snprintf(out, out_size, "%s", root);
	else
		n = snprintf(out, out_size, "%s/%s", root, rel);
	if (n < 0 || (size_t)n >= out_size)
		return -ENAMETOOLONG;
	return 0;
}

int rp_sysfs_read(const char *root, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t got;
	size_t total = 0;
	int fd, rc;

	if (size < 2)
		return -EINVAL;
	rc = rp_sysfs_join(root, rel, path, sizeof(path));
	if (rc)
		return rc;
	/* O_NONBLOCK: a FIFO planted in a fixture must not hang discovery. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		got = read(fd, buf + total, size - 1 - total);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (got == 0)
			break;
		total += (size_t)got;
		if (total == size - 1) {
			char extra;

			got = read(fd, &extra, 1);
			if (got > 0)
				rc = -EOVERFLOW;
			break;
		}
	}
	close(fd);
	if (rc)
		return rc;
	buf[total] = '\0';
	if (strlen(buf) != total)
		return -EINVAL;  /* a NUL inside a text file: not sysfs text */
	rp_rstrip(buf);
	return 0;
}

int rp_sysfs_readf(const char *root, char *buf, size_t size, const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	return rp_sysfs_read(root, rel, buf, size);
}

int rp_sysfs_realpath_rel(const char *root, const char *rel, char *out, size_t out_size)
{
	char path[PATH_MAX], real_root[PATH_MAX], real[PATH_MAX];
	size_t rn;
	int rc;

	rc = rp_sysfs_join(root, rel, path, sizeof(path));
	if (rc)
		return rc;
	if (!realpath(root, real_root))
		return -errno;
	if (!realpath(path, real))
		return -errno;
	rn = strlen(real_root);
	if (strcmp(real_root, "/") == 0)
		rn = 0;
	if (strncmp(real, real_root, rn) != 0 || (real[rn] != '/' && real[rn] != '\0'))
		return -EXDEV;
	return rp_strlcpy(out, real[rn] == '/' ? real + rn + 1 : real + rn, out_size);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Names by strcmp. */
static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Numbers by value: gids/10 after gids/9 (no leading zeros in sysfs, so length first). */
static int number_cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t lx = strlen(x), ly = strlen(y);

	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

void rp_sysfs_free_names(char **names)
{
	if (!names)
		return;
	for (char **p = names; *p; p++)
		free(*p);
	free(names);
}

int rp_sysfs_list_dir(const char *root, const char *rel, char ***names_p, size_t *n_p)
{
	char path[PATH_MAX];
	char **names = NULL;
	size_t n = 0, cap = 0;
	bool numeric = true;
	struct dirent *de;
	DIR *dir;
	int rc;

	rc = rp_sysfs_join(root, rel, path, sizeof(path));
	if (rc)
		return rc;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n + 1 >= cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nn = realloc(names, ncap * sizeof(*names));

			if (!nn) {
				rc = -ENOMEM;
				break;
			}
			names = nn;
			cap = ncap;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			rc = -ENOMEM;
			break;
		}
		numeric = numeric && all_digits(names[n]) && strlen(names[n]) < 10;
		names[++n] = NULL;
	}
	closedir(dir);
	if (!names && !rc) {
		names = calloc(1, sizeof(*names));
		if (!names)
			rc = -ENOMEM;
	}
	if (rc) {
		if (names)
			names[n] = NULL;
		rp_sysfs_free_names(names);
		return rc;
	}
	qsort(names, n, sizeof(*names), numeric ? number_cmp : name_cmp);
	*names_p = names;
	*n_p = n;
	return 0;
}
