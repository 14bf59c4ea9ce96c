/* fixture.c: fake sysfs trees for the tests; see fixture.h. */
#include "fixture.h"
#include "base/log.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const struct rp_fx_port rp_fx_port_ib_ndr_active = {
	"4: ACTIVE", "5: LinkUp", "400 Gb/sec (4X NDR)", "InfiniBand", "0x1", "0x1",
};
const struct rp_fx_port rp_fx_port_ib_down = {
	"1: DOWN", "3: Disabled", "10 Gb/sec (4X SDR)", "InfiniBand", "0x0", "0x0",
};
const struct rp_fx_port rp_fx_port_eth_100_active = {
	"4: ACTIVE", "5: LinkUp", "100 Gb/sec (4X EDR)", "Ethernet", "0x0", "0x0",
};

/* snprintf that reports truncation instead of letting it pass: 0 or -ENAMETOOLONG. */
static int fx_fmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fx_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int fx_fail(int err, const char *what, const char *path)
{
	fprintf(stderr, "fixture: %s %s: %s\n", what, path, strerror(-err));
	return err;
}

const char *rp_fx_path(const struct rp_fx *fx, const char *rel, char *buf, size_t size)
{
	fx_fmt(buf, size, "%s/%s", fx->root, rel);
	return buf;
}

int rp_fx_create(struct rp_fx *fx)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(fx->root, sizeof(fx->root), "%s/rp-sysfs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fx->root)) {
		int err = -errno;

		fx_fail(err, "mkdtemp", fx->root);
		fx->root[0] = '\0';
		return err;
	}
	return 0;
}

static int fx_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static int rm_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) ? -errno : 0;
	/* Directories made unreadable by a test must become traversable again before removal. */
	chmod(path, 0755);
	return nftw(path, fx_rm_one, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

void rp_fx_destroy(struct rp_fx *fx)
{
	if (!fx || !fx->root[0])
		return;
	rm_tree(fx->root);
	fx->root[0] = '\0';
}

/* mkdir -p of an absolute path. */
static int mkdir_p(const char *abs)
{
	char buf[PATH_MAX];
	size_t n = strlen(abs);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, abs, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* mkdir -p of the directory holding abs. */
static int mkdir_parent(const char *abs)
{
	char buf[PATH_MAX];
	char *slash;

	if (strlen(abs) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, abs);
	slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return 0;
	*slash = '\0';
	return mkdir_p(buf);
}

int rp_fx_mkdir(struct rp_fx *fx, const char *rel)
{
	char abs[PATH_MAX];
	int rc = mkdir_p(rp_fx_path(fx, rel, abs, sizeof(abs)));

	return rc ? fx_fail(rc, "mkdir", abs) : 0;
}

int rp_fx_write(struct rp_fx *fx, const char *rel, const char *text)
{
	char abs[PATH_MAX];
	FILE *f;
	int rc;

	rp_fx_path(fx, rel, abs, sizeof(abs));
	rc = mkdir_parent(abs);
	if (rc)
		return fx_fail(rc, "mkdir for", abs);
	f = fopen(abs, "w");
	if (!f)
		return fx_fail(-errno, "create", abs);
	if (fputs(text, f) == EOF) {
		rc = -EIO;
		fx_fail(rc, "write", abs);
	}
	if (fclose(f) && !rc)
		rc = fx_fail(-errno, "close", abs);
	return rc;
}

int rp_fx_writef(struct rp_fx *fx, const char *rel, const char *fmt, ...)
{
	char text[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return rp_fx_write(fx, rel, text);
}

int rp_fx_symlink(struct rp_fx *fx, const char *rel, const char *target)
{
	char abs[PATH_MAX];
	int rc;

	rp_fx_path(fx, rel, abs, sizeof(abs));
	rc = mkdir_parent(abs);
	if (rc)
		return fx_fail(rc, "mkdir for", abs);
	if (symlink(target, abs) && errno != EEXIST)
		return fx_fail(-errno, "symlink", abs);
	return 0;
}

int rp_fx_remove(struct rp_fx *fx, const char *rel)
{
	char abs[PATH_MAX];
	int rc = rm_tree(rp_fx_path(fx, rel, abs, sizeof(abs)));

	return rc ? fx_fail(rc, "remove", abs) : 0;
}

int rp_fx_unreadable(struct rp_fx *fx, const char *rel)
{
	char abs[PATH_MAX];

	rp_fx_path(fx, rel, abs, sizeof(abs));
	rm_tree(abs);
	return rp_fx_mkdir(fx, rel);
}

/* True when s is a PCI address "dddd:bb:dd.f". */
static bool is_bdf(const char *s)
{
	unsigned a, b, c, d;
	int n = 0;

	return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1x%n", &a, &b, &c, &d, &n) == 4 && n == 12;
}

/* devices/<prefix>/subsystem -> ../../(...)/bus/<bus>, as the kernel links every device. */
static int fx_subsystem(struct rp_fx *fx, const char *prefix, const char *bus)
{
	char rel[PATH_MAX], target[PATH_MAX];
	size_t len = 0;

	target[0] = '\0';
	/* one "../" per component of devices/<prefix> */
	for (const char *p = prefix; p; p = strchr(p + 1, '/')) {
		if (len + 4 >= sizeof(target))
			return -ENAMETOOLONG;
		memcpy(target + len, "../", 4);
		len += 3;
	}
	if (len + 4 >= sizeof(target))
		return -ENAMETOOLONG;
	memcpy(target + len, "../", 4);
	len += 3;
	if (fx_fmt(target + len, sizeof(target) - len, "bus/%s", bus) ||
	    fx_fmt(rel, sizeof(rel), "devices/%s/subsystem", prefix))
		return -ENAMETOOLONG;
	return rp_fx_symlink(fx, rel, target);
}

/* Files of one PCI function at devices/<prefix> and its bus/pci/devices link. */
static int fx_pci_function(struct rp_fx *fx, const char *prefix, const char *bdf, unsigned vendor,
			   unsigned device, unsigned class_code, int numa)
{
	char rel[PATH_MAX], target[PATH_MAX];
	int rc = 0;

	fx_fmt(rel, sizeof(rel), "devices/%s/vendor", prefix);
	rc = rc ? rc : rp_fx_writef(fx, rel, "0x%04x\n", vendor);
	fx_fmt(rel, sizeof(rel), "devices/%s/device", prefix);
	rc = rc ? rc : rp_fx_writef(fx, rel, "0x%04x\n", device);
	fx_fmt(rel, sizeof(rel), "devices/%s/class", prefix);
	rc = rc ? rc : rp_fx_writef(fx, rel, "0x%06x\n", class_code);
	fx_fmt(rel, sizeof(rel), "devices/%s/numa_node", prefix);
	rc = rc ? rc : rp_fx_writef(fx, rel, "%d\n", numa);
	rc = rc ? rc : fx_subsystem(fx, prefix, "pci");
	fx_fmt(rel, sizeof(rel), "bus/pci/devices/%s", bdf);
	fx_fmt(target, sizeof(target), "../../../devices/%s", prefix);
	rc = rc ? rc : rp_fx_symlink(fx, rel, target);
	return rc;
}

int rp_fx_pci(struct rp_fx *fx, const char *path, unsigned vendor, unsigned device, unsigned class_code,
	      int numa)
{
	char prefix[PATH_MAX];
	char comp[PATH_MAX];
	const char *p = path;
	size_t plen = 0;
	int rc;

	prefix[0] = '\0';
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);

		if (n >= sizeof(comp) || plen + n + 2 >= sizeof(prefix))
			return fx_fail(-ENAMETOOLONG, "pci path", path);
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (plen)
			prefix[plen++] = '/';
		memcpy(prefix + plen, comp, n + 1);
		plen += n;
		if (is_bdf(comp)) {
			bool last = !slash;

			rc = last ? fx_pci_function(fx, prefix, comp, vendor, device, class_code, numa) :
				    fx_pci_function(fx, prefix, comp, 0x8086, 0x1234, 0x060400, numa);
			if (rc)
				return rc;
		} else {
			char rel[PATH_MAX];

			fx_fmt(rel, sizeof(rel), "devices/%s", prefix);
			rc = rp_fx_mkdir(fx, rel);
			if (rc)
				return rc;
		}
		p = slash ? slash + 1 : p + n;
	}
	return 0;
}

int rp_fx_gpu(struct rp_fx *fx, const char *path, int numa)
{
	return rp_fx_pci(fx, path, 0x10de, 0x2330, 0x030200, numa);
}

int rp_fx_hca(struct rp_fx *fx, const char *name, const char *pci_path, int numa, const char *fw_ver,
	      const char *node_guid)
{
	char dir[PATH_MAX], rel[PATH_MAX], target[PATH_MAX];
	int rc;

	if (pci_path) {
		const char *bdf = strrchr(pci_path, '/');

		bdf = bdf ? bdf + 1 : pci_path;
		rc = rp_fx_pci(fx, pci_path, 0x15b3, 0x1021, 0x020700, numa);
		if (rc)
			return rc;
		fx_fmt(dir, sizeof(dir), "devices/%s/infiniband/%s", pci_path, name);
		fx_fmt(rel, sizeof(rel), "%s/device", dir);
		fx_fmt(target, sizeof(target), "../../../%s", bdf);
		rc = rp_fx_symlink(fx, rel, target);
		if (rc)
			return rc;
	} else {
		fx_fmt(dir, sizeof(dir), "devices/virtual/infiniband/%s", name);
		rc = rp_fx_mkdir(fx, dir);
		if (rc)
			return rc;
	}
	fx_fmt(rel, sizeof(rel), "class/infiniband/%s", name);
	fx_fmt(target, sizeof(target), "../../%s", dir);
	rc = rp_fx_symlink(fx, rel, target);
	if (!rc && fw_ver) {
		fx_fmt(rel, sizeof(rel), "%s/fw_ver", dir);
		rc = rp_fx_writef(fx, rel, "%s\n", fw_ver);
	}
	if (!rc && node_guid) {
		fx_fmt(rel, sizeof(rel), "%s/node_guid", dir);
		rc = rp_fx_writef(fx, rel, "%s\n", node_guid);
	}
	if (!rc) {
		fx_fmt(rel, sizeof(rel), "%s/node_type", dir);
		rc = rp_fx_write(fx, rel, "1: CA\n");
	}
	return rc;
}

/* Write class/infiniband/<hca>/ports/<port>/<file> = value + "\n" unless value is NULL. */
static int fx_port_file(struct rp_fx *fx, const char *hca, int port, const char *file, const char *value)
{
	char rel[PATH_MAX];

	if (!value)
		return 0;
	fx_fmt(rel, sizeof(rel), "class/infiniband/%s/ports/%d/%s", hca, port, file);
	return value[0] ? rp_fx_writef(fx, rel, "%s\n", value) : rp_fx_write(fx, rel, "");
}

int rp_fx_port(struct rp_fx *fx, const char *hca, int port, const struct rp_fx_port *p)
{
	char rel[PATH_MAX];
	int rc;

	fx_fmt(rel, sizeof(rel), "class/infiniband/%s/ports/%d", hca, port);
	rc = rp_fx_mkdir(fx, rel);
	rc = rc ? rc : fx_port_file(fx, hca, port, "state", p->state);
	rc = rc ? rc : fx_port_file(fx, hca, port, "phys_state", p->phys_state);
	rc = rc ? rc : fx_port_file(fx, hca, port, "rate", p->rate);
	rc = rc ? rc : fx_port_file(fx, hca, port, "link_layer", p->link_layer);
	rc = rc ? rc : fx_port_file(fx, hca, port, "lid", p->lid);
	rc = rc ? rc : fx_port_file(fx, hca, port, "sm_lid", p->sm_lid);
	return rc;
}

int rp_fx_gid(struct rp_fx *fx, const char *hca, int port, int index, const char *gid, const char *type,
	      const char *ndev)
{
	char rel[PATH_MAX];
	int rc;

	fx_fmt(rel, sizeof(rel), "class/infiniband/%s/ports/%d/gids/%d", hca, port, index);
	rc = rp_fx_writef(fx, rel, "%s\n", gid);
	fx_fmt(rel, sizeof(rel), "class/infiniband/%s/ports/%d/gid_attrs/types/%d", hca, port, index);
	rc = rc ? rc : (type ? rp_fx_writef(fx, rel, "%s\n", type) : rp_fx_write(fx, rel, ""));
	fx_fmt(rel, sizeof(rel), "class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", hca, port, index);
	rc = rc ? rc : (ndev ? rp_fx_writef(fx, rel, "%s\n", ndev) : rp_fx_write(fx, rel, ""));
	return rc;
}

int rp_fx_gid_pad(struct rp_fx *fx, const char *hca, int port, int n)
{
	char rel[PATH_MAX], abs[PATH_MAX];

	for (int i = 0; i < n; i++) {
		int rc;

		fx_fmt(rel, sizeof(rel), "class/infiniband/%s/ports/%d/gids/%d", hca, port, i);
		if (access(rp_fx_path(fx, rel, abs, sizeof(abs)), F_OK) == 0)
			continue;
		rc = rp_fx_gid(fx, hca, port, i, "0000:0000:0000:0000:0000:0000:0000:0000", NULL, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- ready-made machines ---- */

/* One DGX switch: root complex rc (e.g. "pci0000:00"), root port bus rb ("00"), switch bus base
 * sb (0x01): upstream sb:00.0, downstream (sb+1):0x.0, endpoints on buses sb+2..sb+5. */
static int dgx_switch(struct rp_fx *fx, const char *rc_name, unsigned dom_bus, unsigned sb, int numa,
		      int nic0)
{
	char up[256], path[512], name[16], guid[32], lid[8];
	int rc;

	fx_fmt(up, sizeof(up), "%s/0000:%02x:01.0/0000:%02x:00.0", rc_name, dom_bus, sb);
	for (int i = 0; i < 4; i++) {
		fx_fmt(path, sizeof(path), "%s/0000:%02x:%02x.0/0000:%02x:00.0", up, sb + 1, i, sb + 2 + i);
		if (i < 2) {
			rc = rp_fx_gpu(fx, path, numa);
		} else {
			int n = nic0 + i - 2;

			fx_fmt(name, sizeof(name), "mlx5_%d", n);
			fx_fmt(guid, sizeof(guid), "b8ce:f603:00a1:%04x", 0x10 + n);
			rc = rp_fx_hca(fx, name, path, numa, "28.39.1002", guid);
			if (!rc) {
				struct rp_fx_port p = rp_fx_port_ib_ndr_active;
				char gid[64];

				fx_fmt(lid, sizeof(lid), "0x%x", n + 1);
				p.lid = lid;
				rc = rp_fx_port(fx, name, 1, &p);
				fx_fmt(gid, sizeof(gid), "fe80:0000:0000:0000:b8ce:f603:00a1:%04x", 0x10 + n);
				rc = rc ? rc : rp_fx_gid(fx, name, 1, 0, gid, "IB/RoCE v1", NULL);
				rc = rc ? rc : rp_fx_gid_pad(fx, name, 1, 8);
			}
		}
		if (rc)
			return rc;
	}
	return 0;
}

int rp_fx_machine_dgx_h100(struct rp_fx *fx)
{
	int rc = 0;

	rc = rc ? rc : dgx_switch(fx, "pci0000:00", 0x00, 0x01, 0, 0);
	rc = rc ? rc : dgx_switch(fx, "pci0000:20", 0x20, 0x21, 0, 2);
	rc = rc ? rc : dgx_switch(fx, "pci0000:80", 0x80, 0x81, 1, 4);
	rc = rc ? rc : dgx_switch(fx, "pci0000:a0", 0xa0, 0xa1, 1, 6);
	/* An NVSwitch: NVIDIA's vendor id but a bridge class (0x0680), not a GPU. */
	rc = rc ? rc : rp_fx_pci(fx, "pci0000:00/0000:00:05.0/0000:0a:00.0", 0x10de, 0x22a3, 0x068000, 0);
	return rc;
}

int rp_fx_machine_dual_socket(struct rp_fx *fx)
{
	static const char *sw = "pci0000:00/0000:00:03.0/0000:30:00.0/0000:31:00.0/0000:32:00.0/0000:33:00.0";
	struct rp_fx_port hdr = rp_fx_port_ib_ndr_active;
	char path[512];
	int rc = 0;

	hdr.rate = "200 Gb/sec (4X HDR)";
	hdr.lid = "0x2a";
	rc = rc ? rc : rp_fx_gpu(fx, "pci0000:00/0000:00:02.0/0000:17:00.0", 0);
	fx_fmt(path, sizeof(path), "%s/0000:34:00.0", sw);
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_0", path, 0, "20.31.1014", "0c42:a103:0012:3450");
	rc = rc ? rc : rp_fx_port(fx, "mlx5_0", 1, &hdr);
	rc = rc ? rc : rp_fx_gid(fx, "mlx5_0", 1, 0, "fe80:0000:0000:0000:0c42:a103:0012:3450", "IB/RoCE v1", NULL);
	fx_fmt(path, sizeof(path), "%s/0000:34:00.1", sw);
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_1", path, 0, "20.31.1014", "0c42:a103:0012:3451");
	rc = rc ? rc : rp_fx_port(fx, "mlx5_1", 1, &rp_fx_port_ib_down);
	rc = rc ? rc : rp_fx_gid(fx, "mlx5_1", 1, 0, "fe80:0000:0000:0000:0c42:a103:0012:3451", "IB/RoCE v1", NULL);
	rc = rc ? rc : rp_fx_gpu(fx, "pci0000:00/0000:00:03.0/0000:30:00.0/0000:31:01.0/0000:35:00.0", 0);
	rc = rc ? rc : rp_fx_gpu(fx, "pci0000:80/0000:80:02.0/0000:b1:00.0", 1);
	return rc;
}

int rp_fx_machine_roce(struct rp_fx *fx)
{
	static const char *ll = "fe80:0000:0000:0000:bace:f6ff:fe00:0001";
	static const char *v4 = "0000:0000:0000:0000:0000:ffff:0a4d:0001";
	struct rp_fx_port down = rp_fx_port_eth_100_active;
	int rc = 0;

	down.state = "1: DOWN";
	down.phys_state = "3: Disabled";
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_0", "pci0000:3a/0000:3a:00.0/0000:3b:00.0", 0, "16.35.2000",
				 "b8ce:f603:0000:0001");
	rc = rc ? rc : rp_fx_port(fx, "mlx5_0", 1, &rp_fx_port_eth_100_active);
	rc = rc ? rc : rp_fx_gid(fx, "mlx5_0", 1, 0, ll, "IB/RoCE v1", "ens1f0");
	rc = rc ? rc : rp_fx_gid(fx, "mlx5_0", 1, 1, ll, "RoCE v2", "ens1f0");
	rc = rc ? rc : rp_fx_gid(fx, "mlx5_0", 1, 2, v4, "IB/RoCE v1", "ens1f0");
	rc = rc ? rc : rp_fx_gid(fx, "mlx5_0", 1, 3, v4, "RoCE v2", "ens1f0");
	rc = rc ? rc : rp_fx_gid_pad(fx, "mlx5_0", 1, 16);
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_1", "pci0000:3a/0000:3a:00.0/0000:3b:00.1", 0, "16.35.2000",
				 "b8ce:f603:0000:0002");
	rc = rc ? rc : rp_fx_port(fx, "mlx5_1", 1, &down);
	rc = rc ? rc : rp_fx_gid(fx, "mlx5_1", 1, 0, "fe80:0000:0000:0000:bace:f6ff:fe00:0002", "IB/RoCE v1",
				 "ens1f1");
	rc = rc ? rc : rp_fx_gid(fx, "mlx5_1", 1, 1, "fe80:0000:0000:0000:bace:f6ff:fe00:0002", "RoCE v2",
				 "ens1f1");
	rc = rc ? rc : rp_fx_gid_pad(fx, "mlx5_1", 1, 16);
	rc = rc ? rc : rp_fx_gpu(fx, "pci0000:3a/0000:3a:02.0/0000:3c:00.0", 0);
	return rc;
}

int rp_fx_machine_rxe(struct rp_fx *fx)
{
	struct rp_fx_port p = rp_fx_port_eth_100_active;
	int rc = 0;

	p.rate = "10 Gb/sec (1X QDR)";
	rc = rc ? rc : rp_fx_hca(fx, "rxe0", NULL, -1, "", "5254:00ff:fe12:3456");
	rc = rc ? rc : rp_fx_port(fx, "rxe0", 1, &p);
	rc = rc ? rc : rp_fx_gid(fx, "rxe0", 1, 0, "fe80:0000:0000:0000:5054:00ff:fe12:3456", "RoCE v2", "eth0");
	rc = rc ? rc : rp_fx_gid(fx, "rxe0", 1, 1, "0000:0000:0000:0000:0000:ffff:c0a8:7a0a", "RoCE v2", "eth0");
	rc = rc ? rc : rp_fx_gid_pad(fx, "rxe0", 1, 4);
	rc = rc ? rc : rp_fx_pci(fx, "pci0000:00/0000:00:03.0", 0x1af4, 0x1000, 0x020000, -1);
	/* rxe1 over the virtio NIC, as older kernels draw it: device -> the virtio device, not PCI. */
	rc = rc ? rc : rp_fx_mkdir(fx, "devices/pci0000:00/0000:00:03.0/virtio0/infiniband/rxe1");
	rc = rc ? rc : fx_subsystem(fx, "pci0000:00/0000:00:03.0/virtio0", "virtio");
	rc = rc ? rc : rp_fx_symlink(fx, "devices/pci0000:00/0000:00:03.0/virtio0/infiniband/rxe1/device",
				     "../../../virtio0");
	rc = rc ? rc : rp_fx_symlink(fx, "class/infiniband/rxe1",
				     "../../devices/pci0000:00/0000:00:03.0/virtio0/infiniband/rxe1");
	rc = rc ? rc : rp_fx_write(fx, "class/infiniband/rxe1/node_type", "1: CA\n");
	rc = rc ? rc : rp_fx_write(fx, "class/infiniband/rxe1/node_guid", "5254:00ff:fe12:3457\n");
	rc = rc ? rc : rp_fx_port(fx, "rxe1", 1, &p);
	rc = rc ? rc : rp_fx_gid(fx, "rxe1", 1, 0, "fe80:0000:0000:0000:5054:00ff:fe12:3457", "RoCE v2", "eth1");
	rc = rc ? rc : rp_fx_gid(fx, "rxe1", 1, 1, "0000:0000:0000:0000:0000:ffff:c0a8:7a0b", "RoCE v2", "eth1");
	rc = rc ? rc : rp_fx_gpu(fx, "pci0000:00/0000:00:05.0", -1);
	return rc;
}

int rp_fx_machine_broken(struct rp_fx *fx)
{
	static const struct rp_fx_port bad = { "garbage", "", "fast", "InfiniBand", "zz", "0x1" };
	int rc = 0;

	rc = rc ? rc : rp_fx_hca(fx, "mlx5_0", "pci0000:00/0000:00:01.0/0000:3b:00.0", 0, "20.31.1014",
				 "0c42:a103:0000:0001");
	rc = rc ? rc : rp_fx_port(fx, "mlx5_0", 1, &rp_fx_port_ib_ndr_active);
	rc = rc ? rc : rp_fx_gid(fx, "mlx5_0", 1, 0, "fe80:0000:0000:0000:0c42:a103:0000:0001", "IB/RoCE v1", NULL);
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_1", "pci0000:00/0000:00:01.0/0000:3b:00.1", 0, "20.31.1014",
				 "0c42:a103:0000:0002");
	rc = rc ? rc : rp_fx_port(fx, "mlx5_1", 1, &bad);
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_2", "pci0000:00/0000:00:02.0/0000:5e:00.0", 0, "20.31.1014",
				 "0c42:a103:0000:0003");
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_3", "pci0000:00/0000:00:02.0/0000:5e:00.1", 0, "20.31.1014", "");
	rc = rc ? rc : rp_fx_port(fx, "mlx5_3", 1, &rp_fx_port_ib_ndr_active);
	rc = rc ? rc : rp_fx_unreadable(fx, "class/infiniband/mlx5_3/ports/1/state");
	rc = rc ? rc : rp_fx_unreadable(fx, "class/infiniband/mlx5_3/fw_ver");
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_4", "pci0000:00/0000:00:03.0/0000:af:00.0", 0, "20.31.1014",
				 "0c42:a103:0000:0005");
	rc = rc ? rc : rp_fx_port(fx, "mlx5_4", 1, &rp_fx_port_ib_ndr_active);
	rc = rc ? rc : rp_fx_remove(fx, "devices/pci0000:00/0000:00:03.0/0000:af:00.0/vendor");
	rc = rc ? rc : rp_fx_remove(fx, "devices/pci0000:00/0000:00:03.0/0000:af:00.0/infiniband/mlx5_4/device");
	rc = rc ? rc : rp_fx_symlink(fx, "devices/pci0000:00/0000:00:03.0/0000:af:00.0/infiniband/mlx5_4/device",
				     "../../../0000:af:00.7");
	return rc;
}

int quiet(void **state)
{
	(void)state;
	rp_log_set_level(RP_LOG_ERROR);
	return 0;
}
