/* fixture_health.c: health additions to fixture trees; see fixture_health.h. */
#include "fixture_health.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int fxh_fail(int err, const char *what, const char *path)
{
	fprintf(stderr, "fixture: %s %s: %s\n", what, path, strerror(-err));
	return err;
}

int rp_fxh_link(struct rp_fx *fx, const char *bdf, const char *cur_speed, int cur_width, const char *max_speed,
		int max_width)
{
	char rel[256];
	int rc;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/current_link_speed", bdf);
	rc = rp_fx_writef(fx, rel, "%s\n", cur_speed);
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/current_link_width", bdf);
	rc = rc ? rc : rp_fx_writef(fx, rel, "%d\n", cur_width);
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/max_link_speed", bdf);
	rc = rc ? rc : rp_fx_writef(fx, rel, "%s\n", max_speed);
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/max_link_width", bdf);
	rc = rc ? rc : rp_fx_writef(fx, rel, "%d\n", max_width);
	return rc;
}

int rp_fxh_link_pair(struct rp_fx *fx, const char *parent, const char *child, const char *cur_speed, int cur_width,
		     const char *max_speed, int max_width)
{
	int rc = rp_fxh_link(fx, parent, cur_speed, cur_width, max_speed, max_width);

	return rc ? rc : rp_fxh_link(fx, child, cur_speed, cur_width, max_speed, max_width);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

int rp_fxh_config(struct rp_fx *fx, const char *bdf, int acs_ctrl, unsigned size)
{
	uint8_t cfg[4096];
	char rel[256], abs[4096];
	FILE *f;

	if (size > sizeof(cfg))
		return fxh_fail(-EINVAL, "config size of", bdf);
	memset(cfg, 0, sizeof(cfg));
	put32(cfg, 0x1021u << 16 | 0x15b3);        /* device:vendor */
	cfg[0x0e] = 0x01;                          /* header type 1: a bridge */
	cfg[0x34] = 0x40;                          /* capabilities pointer */
	/* AER (0x0001, version 2) at 0x100, next 0x148 (or none). */
	put32(cfg + 0x100, (acs_ctrl >= 0 ? 0x148u : 0u) << 20 | 2u << 16 | 0x0001);
	if (acs_ctrl >= 0) {
		put32(cfg + 0x148, 0u << 20 | 1u << 16 | 0x000d);   /* ACS, version 1, last */
		cfg[0x14c] = 0x5f;                                  /* capability: SV TB RR CR UF EC */
		cfg[0x14e] = (uint8_t)acs_ctrl;
		cfg[0x14f] = (uint8_t)(acs_ctrl >> 8);
	}
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/config", bdf);
	rp_fx_path(fx, rel, abs, sizeof(abs));
	f = fopen(abs, "wb");
	if (!f)
		return fxh_fail(-errno, "create", abs);
	if (size && fwrite(cfg, 1, size, f) != size) {
		fclose(f);
		return fxh_fail(-EIO, "write", abs);
	}
	return fclose(f) ? fxh_fail(-errno, "close", abs) : 0;
}

int rp_fxh_iommu(struct rp_fx *fx, int on, const char *type, const char *const *bdfs)
{
	char rel[256], target[4200];
	int rc = 0;

	if (!on)
		return 0;
	rc = rp_fx_mkdir(fx, "devices/virtual/iommu/dmar0");
	rc = rc ? rc : rp_fx_symlink(fx, "class/iommu/dmar0", "../../devices/virtual/iommu/dmar0");
	for (int i = 0; !rc && bdfs && bdfs[i]; i++) {
		snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/type", i + 1);
		rc = rp_fx_writef(fx, rel, "%s\n", type);
		/* bus/pci/devices/<bdf> is a link into devices/...: point iommu_group at the root's kernel/. */
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/iommu_group", bdfs[i]);
		snprintf(target, sizeof(target), "%s/kernel/iommu_groups/%d", fx->root, i + 1);
		rc = rc ? rc : rp_fx_symlink(fx, rel, target);
	}
	return rc;
}

int rp_fxh_peermem(struct rp_fx *fx)
{
	return rp_fx_write(fx, "module/nvidia_peermem/version", "1.1\n");
}

int rp_fxh_counter(struct rp_fx *fx, const char *hca, const char *dir, const char *name, uint64_t value)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "class/infiniband/%s/%s/%s", hca, dir, name);
	return rp_fx_writef(fx, rel, "%" PRIu64 "\n", value);
}

int rp_fxh_rxe_counters(struct rp_fx *fx, const char *hca)
{
	static const char *const names[] = {
		"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err", "send_rnr_err",
		"rcvd_seq_err", "ack_deferred", "retry_exceeded_err", "retry_rnr_exceeded_err", "completer_retry_err",
		"send_err", "link_downed", "rdma_sends", "rdma_recvs",
	};
	int rc = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !rc; i++)
		rc = rp_fxh_counter(fx, hca, "ports/1/hw_counters", names[i], 0);
	return rc ? rc : rp_fxh_counter(fx, hca, "ports/1/hw_counters", "lifespan", 10);
}

int rp_fxh_pma_counters(struct rp_fx *fx, const char *hca)
{
	static const char *const names[] = {
		"symbol_error", "port_rcv_errors", "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
		"port_xmit_discards", "VL15_dropped", "link_error_recovery", "link_downed",
		"port_xmit_constraint_errors", "port_rcv_constraint_errors", "local_link_integrity_errors",
		"excessive_buffer_overrun_errors", "port_xmit_wait", "port_xmit_data", "port_rcv_data",
		"port_xmit_packets", "port_rcv_packets", "unicast_xmit_packets", "unicast_rcv_packets",
		"multicast_xmit_packets", "multicast_rcv_packets",
	};
	int rc = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !rc; i++)
		rc = rp_fxh_counter(fx, hca, "ports/1/counters", names[i], 0);
	return rc;
}

/* True when bus/pci/devices/<bdf>/class says bridge. */
static int is_bridge(struct rp_fx *fx, const char *bdf)
{
	char rel[512], abs[4096], buf[32] = "";
	FILE *f;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/class", bdf);
	f = fopen(rp_fx_path(fx, rel, abs, sizeof(abs)), "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strncmp(buf, "0x0604", 6) == 0;
}

int rp_fxh_machine_clean(struct rp_fx *fx)
{
	char abs[4096];
	struct dirent *de;
	DIR *d;
	int rc = rp_fx_machine_dgx_h100(fx);

	if (rc)
		return rc;
	d = opendir(rp_fx_path(fx, "bus/pci/devices", abs, sizeof(abs)));
	if (!d)
		return fxh_fail(-errno, "opendir", abs);
	while (!rc && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		rc = rp_fxh_link(fx, de->d_name, "32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16);
		if (!rc && is_bridge(fx, de->d_name))
			rc = rp_fxh_config(fx, de->d_name, 0, 4096);
	}
	closedir(d);
	return rc ? rc : rp_fxh_peermem(fx);
}

int rp_fxh_machine_vf(struct rp_fx *fx)
{
	static const char *const bridges[] = { "0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:02:01.0",
					       "0000:02:02.0" };
	int rc = rp_fx_gpu(fx, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:04:00.0", 0);

	rc = rc ? rc : rp_fx_hca(fx, "mlx5_vf", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:03:1e.0", 0,
				 "1.0", NULL);
	rc = rc ? rc : rp_fx_port(fx, "mlx5_vf", 1, &rp_fx_port_ib_ndr_active);
	rc = rc ? rc : rp_fx_hca(fx, "mlx5_pf", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0/0000:05:00.0", 0,
				 "1.0", NULL);
	rc = rc ? rc : rp_fx_port(fx, "mlx5_pf", 1, &rp_fx_port_ib_ndr_active);
	for (size_t i = 0; i < sizeof(bridges) / sizeof(bridges[0]) && !rc; i++)
		rc = rp_fxh_config(fx, bridges[i], 0, 4096);
	return rc;
}
