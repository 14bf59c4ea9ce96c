/* pcie.c: PCIe link parsing, hop chains and ACS from config space; see pcie.h. */
#include "discover/pcie.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discover/sysfs.h"
#include "base/util.h"

/* ---- speeds ---- */

int rp_pcie_parse_speed(const char *s, double *gts_p)
{
	char *end;
	double v;

	if (!s)
		return -EINVAL;
	if (strcmp(s, "Unknown") == 0 || strcmp(s, "Unknown speed") == 0)
		return -ENODATA;
	if (!(s[0] >= '0' && s[0] <= '9'))
		return -EINVAL;
	v = strtod(s, &end);
	if (end == s || !isfinite(v) || v <= 0 || v > 1000)
		return -EINVAL;
	if (strcmp(end, " GT/s") != 0 && strcmp(end, " GT/s PCIe") != 0)
		return -EINVAL;
	*gts_p = v;
	return 0;
}

/* The generations: transfer rate and data rate per lane after encoding. */
static const struct { double gts; double lane_gbps; int gen; } pcie_gens[] = {
	{ 2.5, 2.0, 1 }, { 5.0, 4.0, 2 }, { 8.0, 8.0 * 128 / 130, 3 }, { 16.0, 16.0 * 128 / 130, 4 },
	{ 32.0, 32.0 * 128 / 130, 5 }, { 64.0, 64.0, 6 },
};

double rp_pcie_lane_gbps(double gts)
{
	for (size_t i = 0; i < RP_ARRAY_SIZE(pcie_gens); i++)
		if (fabs(pcie_gens[i].gts - gts) < 0.01)
			return pcie_gens[i].lane_gbps;
	return 0;
}

int rp_pcie_gen(double gts)
{
	for (size_t i = 0; i < RP_ARRAY_SIZE(pcie_gens); i++)
		if (fabs(pcie_gens[i].gts - gts) < 0.01)
			return pcie_gens[i].gen;
	return 0;
}

double rp_pcie_link_gbps(double gts, int width)
{
	return width > 0 ? rp_pcie_lane_gbps(gts) * width : 0;
}

void rp_pcie_link_text(double gts, int width, char *out, size_t out_size)
{
	int gen = rp_pcie_gen(gts);

	if (gts <= 0)
		snprintf(out, out_size, "unknown");
	else if (gen)
		snprintf(out, out_size, "Gen%d x%d", gen, width);
	else
		snprintf(out, out_size, "%g GT/s x%d", gts, width);
}

/* ---- links and chains ---- */

int rp_pcie_read_link(const char *root, const char *rel, struct rp_pcie_link *link)
{
	char buf[64];
	int found = 0;
	int w;

	memset(link, 0, sizeof(*link));
	if (rp_sysfs_readf(root, buf, sizeof(buf), "%s/current_link_speed", rel) == 0) {
		found++;
		if (rp_pcie_parse_speed(buf, &link->cur_gts))
			link->cur_gts = 0;
	}
	if (rp_sysfs_readf(root, buf, sizeof(buf), "%s/max_link_speed", rel) == 0) {
		found++;
		if (rp_pcie_parse_speed(buf, &link->max_gts))
			link->max_gts = 0;
	}
	if (rp_sysfs_readf(root, buf, sizeof(buf), "%s/current_link_width", rel) == 0) {
		found++;
		if (rp_parse_int(buf, 1, 64, &w) == 0)
			link->cur_width = w;
	}
	if (rp_sysfs_readf(root, buf, sizeof(buf), "%s/max_link_width", rel) == 0) {
		found++;
		if (rp_parse_int(buf, 1, 64, &w) == 0)
			link->max_width = w;
	}
	return found ? 0 : -ENOENT;
}

/* True when the function at rel has a bridge class (0x0604xx). */
static bool is_bridge(const char *root, const char *rel)
{
	char buf[32];
	uint32_t cls;

	return rp_sysfs_readf(root, buf, sizeof(buf), "%s/class", rel) == 0 && rp_sysfs_parse_hex(buf, 0xffffff, &cls) == 0 &&
	       (cls >> 8) == 0x0604;
}

/* The link of one hop; a VF's link is its PF's (K drivers/pci/iov.c: physfn). */
static void read_hop_link(const char *root, struct rp_pci_hop *h)
{
	char rel[RP_PATHBUF + 8], pf[RP_PATHBUF];
	const char *last;

	rp_strlcpy(h->link_bdf, h->bdf, sizeof(h->link_bdf));
	h->has_link = rp_pcie_read_link(root, h->rel, &h->link) == 0;
	if ((h->has_link && h->link.cur_gts > 0 && h->link.cur_width > 0) ||
	    snprintf(rel, sizeof(rel), "%s/physfn", h->rel) >= (int)sizeof(rel) ||
	    rp_sysfs_realpath_rel(root, rel, pf, sizeof(pf)))
		return;
	last = strrchr(pf, '/');
	last = last ? last + 1 : pf;
	if (rp_sysfs_parse_pci(last, h->link_bdf) || rp_pcie_read_link(root, pf, &h->link)) {
		rp_strlcpy(h->link_bdf, h->bdf, sizeof(h->link_bdf));
		h->has_link = rp_pcie_read_link(root, h->rel, &h->link) == 0;
		return;
	}
	h->has_link = true;
}

int rp_pcie_chain(const char *root, const char *pci_path, struct rp_pci_hop *hops, size_t max, size_t *n_p)
{
	char rel[RP_PATHBUF];
	const char *p = pci_path;
	size_t n = 0, len = 0;

	*n_p = 0;
	if (!pci_path || !pci_path[0])
		return 0;
	rel[0] = '\0';
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t clen = slash ? (size_t)(slash - p) : strlen(p);
		char comp[64];

		if (len + clen + 2 > sizeof(rel) || clen >= sizeof(comp))
			return -ENAMETOOLONG;
		memcpy(comp, p, clen);
		comp[clen] = '\0';
		if (len)
			rel[len++] = '/';
		memcpy(rel + len, comp, clen + 1);
		len += clen;
		if (rp_sysfs_is_bdf(comp)) {
			struct rp_pci_hop *h;

			if (n == max)
				return -E2BIG;
			h = &hops[n];
			memset(h, 0, sizeof(*h));
			if (rp_sysfs_parse_pci(comp, h->bdf))
				return -EINVAL;
			rp_strlcpy(h->rel, rel, sizeof(h->rel));
			h->bridge = is_bridge(root, rel);
			h->downstream_facing = h->bridge && (n == 0 || !hops[n - 1].downstream_facing);
			read_hop_link(root, h);
			n++;
		} else if (n) {
			break;   /* below the last PCI function: a virtio node, infiniband/<dev>, net/... */
		}
		p = slash ? slash + 1 : p + clen;
	}
	*n_p = n;
	return 0;
}

static double min_known_d(double a, double b)
{
	return a <= 0 ? b : b <= 0 ? a : a < b ? a : b;
}

static int min_known_i(int a, int b)
{
	return a <= 0 ? b : b <= 0 ? a : a < b ? a : b;
}

bool rp_pcie_hop_link(const struct rp_pci_hop *hops, size_t n, size_t i, struct rp_pcie_hop_link *l)
{
	const struct rp_pci_hop *c, *par;

	if (i >= n || hops[i].downstream_facing || !hops[i].has_link)
		return false;
	c = &hops[i];
	par = i > 0 && hops[i - 1].downstream_facing ? &hops[i - 1] : NULL;
	memset(l, 0, sizeof(*l));
	l->child = c;
	l->parent = par;
	l->cur_gts = c->link.cur_gts > 0 ? c->link.cur_gts : par && par->has_link ? par->link.cur_gts : 0;
	l->cur_width = c->link.cur_width > 0 ? c->link.cur_width : par && par->has_link ? par->link.cur_width : 0;
	l->exp_gts = c->link.max_gts;
	l->exp_width = c->link.max_width;
	if (par && par->has_link) {
		l->exp_gts = min_known_d(l->exp_gts, par->link.max_gts);
		l->exp_width = min_known_i(l->exp_width, par->link.max_width);
	}
	return true;
}

/* ---- config space ---- */

int rp_pcie_find_ext_cap(const uint8_t *cfg, size_t len, uint16_t id)
{
	size_t pos = 0x100;

	if (len < 0x104)
		return -ENODATA;
	for (int ttl = 480; ttl > 0; ttl--) {
		uint32_t h;

		if (pos + 4 > len)
			return -ENOENT;
		h = (uint32_t)cfg[pos] | (uint32_t)cfg[pos + 1] << 8 | (uint32_t)cfg[pos + 2] << 16 |
		    (uint32_t)cfg[pos + 3] << 24;
		if (h == 0 || h == 0xffffffffu)
			return -ENOENT;
		if ((h & 0xffff) == id)
			return (int)pos;
		pos = (h >> 20) & 0xffc;
		if (pos < 0x100)
			return -ENOENT;
	}
	return -ENOENT;
}

int rp_pcie_read_acs(const char *root, const char *rel, uint16_t *ctrl_p)
{
	char path[PATH_MAX];
	uint8_t cfg[4096];
	size_t len = 0;
	int fd, pos;

	if (snprintf(path, sizeof(path), "%s/%s/config", root, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < sizeof(cfg)) {
		ssize_t got = pread(fd, cfg + len, sizeof(cfg) - len, (off_t)len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	/* Without CAP_SYS_ADMIN the kernel ends every config read at byte 64. */
	if (len <= 64)
		return -EPERM;
	pos = rp_pcie_find_ext_cap(cfg, len, 0x000d);
	if (pos < 0 || (size_t)pos + 8 > len)
		return -ENXIO;
	*ctrl_p = (uint16_t)(cfg[pos + 6] | cfg[pos + 7] << 8);
	return 0;
}

void rp_pcie_acs_text(uint16_t ctrl, char *out, size_t out_size)
{
	static const char *const names[] = { "SV", "TB", "RR", "CR", "UF", "EC", "DT" };
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < RP_ARRAY_SIZE(names); i++) {
		int n;

		if (!(ctrl & (1u << i)))
			continue;
		n = snprintf(out + len, out_size > len ? out_size - len : 0, "%s%s", len ? " " : "", names[i]);
		if (n < 0 || (size_t)n >= out_size - len)
			return;
		len += (size_t)n;
	}
	if (!len)
		snprintf(out, out_size, "none");
}
