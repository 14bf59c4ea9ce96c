/* fixture.h: fake sysfs trees for the tests (rdmaprobe ... --sysfs-root DIR).
 *
 * A fixture is a temporary directory (mkdtemp under $TMPDIR or /tmp) laid out like /sys: the
 * adapters under class/infiniband/<dev> (relative symlinks into devices/...), the PCI functions
 * under devices/pci0000:00/..., and bus/pci/devices/<bdf> symlinks, exactly as the kernel draws
 * them, so code that works on a fixture works on /sys.
 *
 * Memory and ownership: struct rp_fx lives in caller storage; rp_fx_create() fills it and
 * rp_fx_destroy() removes the whole tree from disk (safe to call twice, or after a failed create).
 * Every path argument is relative to the fixture root; string arguments are copied, never kept.
 * Every function returns 0 or a negative errno and prints one line to stderr on failure (this is
 * test support code, not the library).
 *
 * The ready-made machines (rp_fx_machine_*) are documented at their declarations with the names
 * they create, so a test can assert on them; they are a stable API shared by test_node, test_topo
 * and the NCCL rules tests.
 */
#ifndef RP_TESTS_FIXTURE_H
#define RP_TESTS_FIXTURE_H

#include <limits.h>
#include <stddef.h>
#include <stdbool.h>

struct rp_fx {
	char root[PATH_MAX];          /* absolute; "" when not created */
};

/* Create an empty tree. */
int rp_fx_create(struct rp_fx *fx);
/* Remove the tree and everything in it; leaves fx->root "". */
void rp_fx_destroy(struct rp_fx *fx);

/* Low-level builders. */
int rp_fx_mkdir(struct rp_fx *fx, const char *rel);                     /* mkdir -p */
int rp_fx_write(struct rp_fx *fx, const char *rel, const char *text);   /* parents created; text as is */
int rp_fx_writef(struct rp_fx *fx, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Symlink rel -> target, target written verbatim (relative, like sysfs). Parents created. */
int rp_fx_symlink(struct rp_fx *fx, const char *rel, const char *target);
/* Make rel unreadable even for root: it is replaced by a directory (read() fails with EISDIR). */
int rp_fx_unreadable(struct rp_fx *fx, const char *rel);
/* Remove one file or directory tree inside the fixture. */
int rp_fx_remove(struct rp_fx *fx, const char *rel);
/* The absolute path of rel inside the fixture, into buf. */
const char *rp_fx_path(const struct rp_fx *fx, const char *rel, char *buf, size_t size);

/* A PCI function at devices/<path>, e.g. "pci0000:00/0000:00:01.0/0000:3b:00.0": every component
 * that is a BDF gets vendor/device/class/numa_node files (bridges get class 0x060400), a
 * subsystem -> .../bus/pci link, and bus/pci/devices/<bdf> -> ../../../devices/<path> for each.
 * numa -1 is written as "-1". */
int rp_fx_pci(struct rp_fx *fx, const char *path, unsigned vendor, unsigned device, unsigned class_code,
	      int numa);

/* An adapter. pci_path NULL: a virtual device (rxe/siw): class/infiniband/<name> ->
 * ../../devices/virtual/infiniband/<name> with no "device" link. Otherwise the PCI function is
 * created (Mellanox vendor 0x15b3, class 0x020700) and class/infiniband/<name> ->
 * ../../devices/<pci_path>/infiniband/<name>, with device -> ../../../<bdf>.
 * Writes fw_ver, node_guid, node_type ("1: CA"). */
int rp_fx_hca(struct rp_fx *fx, const char *name, const char *pci_path, int numa, const char *fw_ver,
	      const char *node_guid);

struct rp_fx_port {
	const char *state;            /* "4: ACTIVE" */
	const char *phys_state;       /* "5: LinkUp" */
	const char *rate;             /* "400 Gb/sec (4X NDR)" */
	const char *link_layer;       /* "InfiniBand" | "Ethernet" */
	const char *lid;              /* "0x1a"; NULL: not written */
	const char *sm_lid;           /* "0x1"; NULL: not written */
};
/* ports/<port>/{state,phys_state,rate,link_layer,lid,sm_lid}; a NULL member is not written. */
int rp_fx_port(struct rp_fx *fx, const char *hca, int port, const struct rp_fx_port *p);
/* ports/<port>/gids/<index> = gid; gid_attrs/types/<index> = type and gid_attrs/ndevs/<index> = ndev
 * (NULL type/ndev: the attribute file is created EMPTY, as the kernel's EINVAL read is modelled). */
int rp_fx_gid(struct rp_fx *fx, const char *hca, int port, int index, const char *gid, const char *type,
	      const char *ndev);
/* Pad the GID table of a port with all-zero entries up to n (empty type/ndev files), like mlx5. */
int rp_fx_gid_pad(struct rp_fx *fx, const char *hca, int port, int n);
/* An NVIDIA GPU (vendor 0x10de, class 0x030200: 3D controller) at devices/<path>. */
int rp_fx_gpu(struct rp_fx *fx, const char *path, int numa);

/* Common port contents. */
extern const struct rp_fx_port rp_fx_port_ib_ndr_active;   /* 4: ACTIVE, 5: LinkUp, 400 NDR, IB */
extern const struct rp_fx_port rp_fx_port_ib_down;         /* 1: DOWN, 3: Disabled, 10 Gb/sec (4X SDR) */
extern const struct rp_fx_port rp_fx_port_eth_100_active;  /* 4: ACTIVE, 5: LinkUp, 100 Gb/sec (4X EDR), Ethernet */

/* --- Ready-made machines --------------------------------------------------------------------
 *
 * DGX-H100-like: 2 sockets (numa 0, 1), 4 PCIe switches, each with two GPUs and two NICs:
 *   socket 0: pci0000:00 root port 0000:00:01.0, switch upstream 0000:01:00.0, downstream ports
 *             0000:02:00.0 .. 0000:02:03.0 -> GPU 0000:03:00.0, GPU 0000:04:00.0,
 *             NIC mlx5_0 0000:05:00.0, NIC mlx5_1 0000:06:00.0   (switch A)
 *             pci0000:20 root port 0000:20:01.0, upstream 0000:21:00.0, downstream 0000:22:0x.0 ->
 *             GPU 0000:23:00.0, GPU 0000:24:00.0, mlx5_2 0000:25:00.0, mlx5_3 0000:26:00.0 (switch B)
 *   socket 1: pci0000:80 ... GPU 0000:83:00.0, 0000:84:00.0, mlx5_4 0000:85:00.0, mlx5_5 0000:86:00.0
 *             pci0000:a0 ... GPU 0000:a3:00.0, 0000:a4:00.0, mlx5_6 0000:a5:00.0, mlx5_7 0000:a6:00.0
 *   Every NIC: ConnectX-7, port 1 ACTIVE LinkUp 400 Gb/sec (4X NDR) InfiniBand, lid 0x1..0x8,
 *   sm_lid 0x1, GID 0 = fe80::<guid>. GPUs are found by PCI scan (index -1). One NVSwitch
 *   0000:0a:00.0 (vendor 0x10de, class 0x068000) that must not count as a GPU.
 *   Expected: GPU 0000:03:00.0 - mlx5_0, mlx5_1 PIX; - mlx5_2, mlx5_3 PHB; - mlx5_4..7 SYS. */
int rp_fx_machine_dgx_h100(struct rp_fx *fx);

/* Dual socket, NICs on one socket only:
 *   socket 0 (pci0000:00, numa 0): GPU 0000:17:00.0 under root port 0000:00:02.0 (directly);
 *     a PCIe switch 0000:30:00.0 (root port 0000:00:03.0) whose downstream port 0000:31:00.0 holds
 *     a second switch 0000:32:00.0 -> downstream 0000:33:00.0 -> NIC mlx5_0 0000:34:00.0 (2 ports,
 *     functions .0 and .1: mlx5_0 and mlx5_1 on 0000:34:00.0 / 0000:34:00.1) and downstream
 *     0000:31:01.0 -> GPU 0000:35:00.0.
 *   socket 1 (pci0000:80, numa 1): GPU 0000:b1:00.0 under root port 0000:80:02.0.
 *   NICs: mlx5_0 port 1 ACTIVE IB 200 Gb/sec (4X HDR); mlx5_1 port 1 DOWN.
 *   Expected: GPU 0000:35:00.0 - mlx5_0 PXB (two switches); GPU 0000:17:00.0 - mlx5_0 PHB;
 *   GPU 0000:b1:00.0 - mlx5_0 SYS. */
int rp_fx_machine_dual_socket(struct rp_fx *fx);

/* RoCE: one socket (numa 0), NIC mlx5_0 0000:3b:00.0 under root port 0000:3a:00.0 on pci0000:3a,
 * port 1 ACTIVE Ethernet 100 Gb/sec (4X EDR), lid 0x0, netdev "ens1f0", the usual mlx5 table:
 *   0 fe80::...:b8ce:f6ff:fe00:0001 "IB/RoCE v1", 1 same "RoCE v2",
 *   2 ::ffff:10.77.0.1 "IB/RoCE v1", 3 ::ffff:10.77.0.1 "RoCE v2", then empty entries up to 16.
 * And mlx5_1 0000:3b:00.1 (same NIC, second function), port 1 DOWN Ethernet, GIDs 0/1 only.
 * One GPU 0000:3c:00.0 under the same root port via its own port 0000:3a:02.0 (PHB). */
int rp_fx_machine_roce(struct rp_fx *fx);

/* Soft-RoCE: rxe0 (virtual, no device link, as on a veth) over netdev "eth0", port 1 ACTIVE
 * Ethernet "10 Gb/sec (1X QDR)", GID 0 fe80::5054:ff:fe12:3456 "RoCE v2" and GID 1
 * ::ffff:192.168.122.10 "RoCE v2", empty entries up to 4; no fw_ver.
 * rxe1 over "eth1" as older kernels draw it on a virtio NIC: device -> devices/pci0000:00/
 * 0000:00:03.0/virtio0 whose subsystem is virtio, not pci (so NCCL treats it as not on PCI);
 * GIDs fe80::5054:ff:fe12:3457 and ::ffff:192.168.122.11, both "RoCE v2".
 * The virtio NIC 0000:00:03.0 and one GPU 0000:00:05.0 sit on the root bus, numa -1. */
int rp_fx_machine_rxe(struct rp_fx *fx);

/* Broken entries next to one good adapter:
 *   good:   mlx5_0 0000:3b:00.0, port 1 ACTIVE IB, GID 0 valid.
 *   mlx5_1: ports/1/state "garbage", phys_state "" (empty), rate "fast", lid "zz".
 *   mlx5_2: no ports directory at all.
 *   mlx5_3: ports/1/state unreadable (a directory), node_guid empty, fw_ver unreadable.
 *   mlx5_4: device link dangling (points at a PCI function that does not exist). */
int rp_fx_machine_broken(struct rp_fx *fx);

/* A cmocka group set-up: the library logs errors only (a fixture's broken entries are warnings),
 * so the test output stays readable. */
int quiet(void **state);

#endif
