/* test_node.c: discovery of each fixture machine, broken entries, bad roots, the real /sys with
 * verbs (wrapped to inject a listed-but-unopenable device and a failing ibv_get_device_list), and the
 * 'devices' command's JSON, text and exit codes on fixtures ($RP_TEST_BIN). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <infiniband/verbs.h>
#include <jansson.h>

#include "fixture.h"
#include "base/log.h"
#include "nccl/nccl.h"
#include "discover/node.h"
#include "discover/sysfs.h"
#include "testutil.h"

/* ---- verbs, wrapped (tests/discover/test_node.wrap) ---- */

enum fake_mode { FAKE_OFF, FAKE_ONE_UNOPENABLE, FAKE_LIST_FAILS, FAKE_TWO };
static enum fake_mode fake_mode;
static struct ibv_device fake_dev, fake_dev2;
static struct ibv_device *fake_list[3];
static int fake_opens[2];         /* ibv_open_device calls on fake_dev, fake_dev2 */

struct ibv_device **__real_ibv_get_device_list(int *num_devices);
void __real_ibv_free_device_list(struct ibv_device **list);
struct ibv_context *__real_ibv_open_device(struct ibv_device *device);
struct ibv_device **__wrap_ibv_get_device_list(int *num_devices);
void __wrap_ibv_free_device_list(struct ibv_device **list);
struct ibv_context *__wrap_ibv_open_device(struct ibv_device *device);

struct ibv_device **__wrap_ibv_get_device_list(int *num_devices)
{
	switch (fake_mode) {
	case FAKE_ONE_UNOPENABLE:
		snprintf(fake_dev.name, sizeof(fake_dev.name), "mlx5_9");
		fake_list[0] = &fake_dev;
		fake_list[1] = NULL;
		if (num_devices)
			*num_devices = 1;
		return fake_list;
	case FAKE_LIST_FAILS:
		errno = ENOSYS;
		return NULL;
	case FAKE_TWO:
		snprintf(fake_dev.name, sizeof(fake_dev.name), "mlx5_8");
		snprintf(fake_dev2.name, sizeof(fake_dev2.name), "mlx5_9");
		fake_list[0] = &fake_dev;
		fake_list[1] = &fake_dev2;
		fake_list[2] = NULL;
		if (num_devices)
			*num_devices = 2;
		return fake_list;
	default:
		return __real_ibv_get_device_list(num_devices);
	}
}

void __wrap_ibv_free_device_list(struct ibv_device **list)
{
	if (list != fake_list)
		__real_ibv_free_device_list(list);
}

struct ibv_context *__wrap_ibv_open_device(struct ibv_device *device)
{
	if (device == &fake_dev || device == &fake_dev2) {
		fake_opens[device == &fake_dev2]++;
		errno = EACCES;
		return NULL;
	}
	return __real_ibv_open_device(device);
}

/* ---- helpers ---- */

static const struct rp_hca *hca(const struct rp_node *node, const char *name)
{
	const struct rp_hca *h = rp_node_find_hca(node, name);

	if (!h)
		fail_msg("adapter %s not discovered", name);
	return h;
}

static size_t valid_gids(const struct rp_port *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_gids; i++)
		n += !rp_sysfs_gid_is_zero(p->gids[i].raw);
	return n;
}

/* ---- discovery of fixture machines ---- */

static void test_dgx(void **state)
{
	struct rp_node node;
	struct rp_fx fx;
	const struct rp_hca *h;
	const struct rp_port *p;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_dgx_h100, &node);
	assert_false(node.verbs_consulted);
	assert_string_equal(node.no_device_reason, "");
	assert_string_equal(node.gpu_source, "pci-scan");
	assert_int_equal(node.n_hcas, 8);
	assert_int_equal(node.n_gpus, 8);
	for (size_t i = 0; i < node.n_hcas; i++) {
		char name[32];

		snprintf(name, sizeof(name), "mlx5_%u", (unsigned)i);
		assert_string_equal(node.hcas[i].name, name);
		assert_int_equal(node.hcas[i].in_verbs, RP_TRI_UNKNOWN);
		assert_string_equal(node.hcas[i].unusable_reason, "");
	}
	h = hca(&node, "mlx5_5");
	assert_string_equal(h->pci, "0000:86:00.0");
	assert_string_equal(h->pci_path, "devices/pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:03.0/0000:86:00.0");
	assert_int_equal(h->numa_node, 1);
	assert_string_equal(h->fw_ver, "28.39.1002");
	assert_string_equal(h->node_guid, "b8ce:f603:00a1:0015");
	assert_int_equal(h->node_type, 1);
	assert_int_equal(h->n_ports, 1);
	p = rp_hca_find_port(h, 1);
	assert_non_null(p);
	assert_null(rp_hca_find_port(h, 2));
	assert_int_equal(p->state, RP_PORT_ACTIVE);
	assert_int_equal(p->phys_state, 5);
	assert_true(p->rate_gbps == 400.0);
	assert_string_equal(p->rate_text, "4X NDR");
	assert_int_equal(p->link_layer, RP_LL_INFINIBAND);
	assert_int_equal(p->lid, 6);
	assert_int_equal(p->sm_lid, 1);
	assert_int_equal(p->active_mtu, 0);           /* verbs not consulted */
	assert_int_equal(p->n_gids, 8);
	assert_int_equal(valid_gids(p), 1);
	assert_string_equal(p->gids[0].text, "fe80:0000:0000:0000:b8ce:f603:00a1:0015");
	for (size_t i = 0; i < p->n_gids; i++)
		assert_int_equal(p->gids[i].index, (int)i);
	/* GPUs from the PCI scan: no CUDA index, PCI order, NUMA from sysfs. */
	assert_int_equal(node.gpus[0].index, -1);
	assert_string_equal(node.gpus[0].pci, "0000:03:00.0");
	assert_int_equal(node.gpus[7].numa_node, 1);
	assert_string_equal(node.gpus[7].pci_path, "devices/pci0000:a0/0000:a0:01.0/0000:a1:00.0/0000:a2:01.0/0000:a4:00.0");
	rp_test_discover_done(&fx, &node);
}

static void test_roce_gid_table(void **state)
{
	struct rp_nccl_env env;
	struct rp_node node;
	struct rp_fx fx;
	const struct rp_port *p;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_roce, &node);
	p = rp_hca_find_port(hca(&node, "mlx5_0"), 1);
	assert_non_null(p);
	assert_int_equal(p->link_layer, RP_LL_ETHERNET);
	assert_int_equal(p->n_gids, 16);
	assert_int_equal(valid_gids(p), 4);
	assert_int_equal(p->gids[0].type, RP_GID_TYPE_IB_ROCE_V1);
	assert_int_equal(p->gids[1].type, RP_GID_TYPE_ROCE_V2);
	assert_int_equal(p->gids[2].type, RP_GID_TYPE_IB_ROCE_V1);
	assert_int_equal(p->gids[3].type, RP_GID_TYPE_ROCE_V2);
	assert_string_equal(p->gids[3].ndev, "ens1f0");
	assert_string_equal(p->gids[3].text, "0000:0000:0000:0000:0000:ffff:0a4d:0001");
	/* Empty entries (the kernel answers EINVAL for their attributes): no type, no netdev. */
	assert_int_equal(p->gids[4].type, RP_GID_TYPE_NONE);
	assert_string_equal(p->gids[4].ndev, "");
	rp_nccl_env_default(&env);
	assert_int_equal(rp_nccl_gid_index(p, &env), 3);
	/* The second function of the same NIC. */
	assert_string_equal(hca(&node, "mlx5_1")->pci, "0000:3b:00.1");
	assert_int_equal(rp_hca_find_port(hca(&node, "mlx5_1"), 1)->state, RP_PORT_DOWN);
	rp_test_discover_done(&fx, &node);
}

static void test_rxe(void **state)
{
	struct rp_node node;
	struct rp_fx fx;
	const struct rp_hca *h;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_rxe, &node);
	assert_int_equal(node.n_hcas, 2);
	h = hca(&node, "rxe0");
	assert_string_equal(h->pci, "");
	assert_string_equal(h->pci_path, "");
	assert_int_equal(h->numa_node, -1);
	assert_string_equal(h->fw_ver, "");
	assert_string_equal(h->unusable_reason, "");
	assert_string_equal(rp_hca_find_port(h, 1)->gids[1].ndev, "eth0");
	h = hca(&node, "rxe1");
	assert_string_equal(h->pci, "");
	assert_string_equal(h->pci_path, "devices/pci0000:00/0000:00:03.0/virtio0");
	assert_int_equal(node.n_gpus, 1);
	assert_int_equal(node.gpus[0].numa_node, -1);
	rp_test_discover_done(&fx, &node);
}

static void test_broken_entries(void **state)
{
	struct rp_node node;
	struct rp_fx fx;
	const struct rp_hca *h;
	const struct rp_port *p;

	(void)state;
	rp_test_discover(&fx, rp_fx_machine_broken, &node);
	assert_int_equal(node.n_hcas, 5);
	/* The good adapter is unaffected by its neighbours. */
	p = rp_hca_find_port(hca(&node, "mlx5_0"), 1);
	assert_int_equal(p->state, RP_PORT_ACTIVE);
	assert_int_equal(valid_gids(p), 1);
	/* Garbage state, empty phys_state, bad rate and lid: unknown, not invented. */
	p = rp_hca_find_port(hca(&node, "mlx5_1"), 1);
	assert_non_null(p);
	assert_int_equal(p->state, -1);
	assert_int_equal(p->phys_state, -1);
	assert_true(p->rate_gbps == 0);
	assert_string_equal(p->rate_text, "");
	assert_int_equal(p->lid, 0);
	assert_int_equal(p->sm_lid, 1);
	assert_int_equal(p->n_gids, 0);
	/* No ports directory: kept, with the reason. */
	h = hca(&node, "mlx5_2");
	assert_int_equal(h->n_ports, 0);
	assert_non_null(strstr(h->unusable_reason, "no ports"));
	/* Unreadable state and firmware, empty GUID. */
	h = hca(&node, "mlx5_3");
	assert_string_equal(h->fw_ver, "");
	assert_string_equal(h->node_guid, "");
	assert_int_equal(rp_hca_find_port(h, 1)->state, -1);
	assert_int_equal(rp_hca_find_port(h, 1)->phys_state, 5);
	/* A dangling device link: not on PCI. */
	h = hca(&node, "mlx5_4");
	assert_string_equal(h->pci, "");
	assert_int_equal(h->numa_node, -1);
	rp_test_discover_done(&fx, &node);
}

/* Entry names that do not fit, GID and port entries that are not numbers, natural order. */
static void test_odd_names(void **state)
{
	char longname[200];
	struct rp_node node;
	struct rp_fx fx;

	(void)state;
	assert_int_equal(rp_fx_create(&fx), 0);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(rp_fx_hca(&fx, longname, NULL, -1, "1", NULL), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_10", "pci0000:00/0000:00:01.0/0000:10:00.0", 0, "1", NULL), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_2", "pci0000:00/0000:00:01.0/0000:02:00.0", 0, "1", NULL), 0);
	assert_int_equal(rp_fx_hca(&fx, "mlx5_1", "pci0000:00/0000:00:01.0/0000:01:00.0", 0, "1", NULL), 0);
	assert_int_equal(rp_fx_port(&fx, "mlx5_1", 1, &rp_fx_port_ib_ndr_active), 0);
	assert_int_equal(rp_fx_gid(&fx, "mlx5_1", 1, 0, "fe80:0000:0000:0000:0000:0000:0000:0001", "IB/RoCE v1", NULL), 0);
	assert_int_equal(rp_fx_write(&fx, "class/infiniband/mlx5_1/ports/1/gids/abc", "x\n"), 0);
	assert_int_equal(rp_fx_write(&fx, "class/infiniband/mlx5_1/ports/1/gids/999999", "x\n"), 0);
	assert_int_equal(rp_fx_write(&fx, "class/infiniband/mlx5_1/ports/1/gids/2", "not a gid\n"), 0);
	assert_int_equal(rp_fx_mkdir(&fx, "class/infiniband/mlx5_1/ports/zero"), 0);
	assert_int_equal(rp_fx_mkdir(&fx, "class/infiniband/mlx5_1/ports/0"), 0);
	{
		struct rp_discover_opts opts = { .sysfs_root = fx.root };

		assert_int_equal(rp_node_discover(&node, &opts), 0);
	}
	assert_int_equal(node.n_hcas, 3);
	assert_string_equal(node.hcas[0].name, "mlx5_1");
	assert_string_equal(node.hcas[1].name, "mlx5_2");
	assert_string_equal(node.hcas[2].name, "mlx5_10");
	assert_int_equal(node.hcas[0].n_ports, 1);
	assert_int_equal(node.hcas[0].ports[0].n_gids, 3);     /* 0, 1 (missing: empty), 2 (malformed: empty) */
	assert_int_equal(valid_gids(&node.hcas[0].ports[0]), 1);
	rp_test_discover_done(&fx, &node);
}

static char last_error[1024];

static void capture(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == RP_LOG_ERROR)
		snprintf(last_error, sizeof(last_error), "%s", msg);
}

/* Bad roots fail with the errno and one clear message naming the root. */
static void test_bad_roots(void **state)
{
	struct rp_discover_opts opts = { 0 };
	char longroot[RP_PATHBUF + 10];
	struct rp_node node;
	struct rp_fx fx;
	char file[PATH_MAX];

	(void)state;
	rp_log_set_sink(capture, NULL);
	opts.sysfs_root = "/nonexistent/rdmaprobe-root";
	assert_int_equal(rp_node_discover(&node, &opts), -ENOENT);
	assert_string_equal(last_error, "sysfs root /nonexistent/rdmaprobe-root: No such file or directory");
	rp_node_fini(&node);
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_write(&fx, "plain", "x"), 0);
	opts.sysfs_root = rp_fx_path(&fx, "plain", file, sizeof(file));
	assert_int_equal(rp_node_discover(&node, &opts), -ENOTDIR);
	assert_non_null(strstr(last_error, "not a directory"));
	rp_node_fini(&node);
	opts.sysfs_root = "";
	assert_int_equal(rp_node_discover(&node, &opts), -EINVAL);
	rp_node_fini(&node);
	memset(longroot, 'r', sizeof(longroot) - 1);
	longroot[0] = '/';
	longroot[sizeof(longroot) - 1] = '\0';
	opts.sysfs_root = longroot;
	assert_int_equal(rp_node_discover(&node, &opts), -ENAMETOOLONG);
	assert_non_null(strstr(last_error, "path too long"));
	rp_log_set_sink(NULL, NULL);
	rp_node_fini(&node);
	rp_node_fini(&node);   /* safe twice */

	/* An empty tree is not an error: no adapter, and the reason names class/infiniband. */
	opts.sysfs_root = fx.root;
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	assert_int_equal(node.n_hcas, 0);
	assert_non_null(strstr(node.no_device_reason, "class/infiniband missing"));
	rp_node_fini(&node);
	rp_fx_destroy(&fx);
}

/* ---- the real /sys and verbs ---- */

static void test_real_sys(void **state)
{
	struct rp_node node;

	(void)state;
	fake_mode = FAKE_OFF;
	assert_int_equal(rp_node_discover(&node, NULL), 0);
	assert_true(node.verbs_consulted);
	assert_string_equal(node.sysfs_root, "/sys");
	if (node.n_hcas == 0) {
		/* This machine: no RDMA device. The reason must say why. */
		assert_true(strlen(node.no_device_reason) > 20);
		assert_non_null(strstr(node.no_device_reason, "class/infiniband"));
	} else {
		for (size_t i = 0; i < node.n_hcas; i++) {
			assert_int_not_equal(node.hcas[i].in_verbs, RP_TRI_UNKNOWN);
			if (node.hcas[i].in_verbs == RP_TRI_FALSE)
				assert_true(node.hcas[i].unusable_reason[0] != '\0');
		}
	}
	rp_node_fini(&node);
}

static void test_verbs_lists_unopenable(void **state)
{
	struct rp_discover_opts opts = { .skip_gpus = true };
	const struct rp_hca *h;
	struct rp_node node;

	(void)state;
	fake_mode = FAKE_ONE_UNOPENABLE;
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	fake_mode = FAKE_OFF;
	h = hca(&node, "mlx5_9");
	assert_int_equal(h->in_verbs, RP_TRI_TRUE);
	assert_non_null(strstr(h->unusable_reason, "ibv_open_device"));
	assert_non_null(strstr(h->unusable_reason, "Permission denied"));
	assert_string_equal(node.no_device_reason, "");
	assert_int_equal(node.hcas[0].in_verbs, RP_TRI_TRUE);   /* verbs' devices come first */
	rp_node_fini(&node);
}

/* Only the named adapters are read: verbs lists mlx5_8 and mlx5_9, the caller wants mlx5_9: mlx5_8
 * is never opened and not in the node (a matrix rank with -d =mlx5_9 reads nothing else). */
static void test_only_named_adapters(void **state)
{
	const char *only[] = { "mlx5_9" };
	struct rp_discover_opts opts = { .skip_gpus = true, .only = only, .n_only = 1 };
	struct rp_node node;

	(void)state;
	fake_mode = FAKE_TWO;
	memset(fake_opens, 0, sizeof(fake_opens));
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	fake_mode = FAKE_OFF;
	assert_int_equal(fake_opens[0], 0);
	assert_int_equal(fake_opens[1], 1);
	assert_null(rp_node_find_hca(&node, "mlx5_8"));
	hca(&node, "mlx5_9");
	rp_node_fini(&node);
	/* without the list both are read */
	fake_mode = FAKE_TWO;
	memset(fake_opens, 0, sizeof(fake_opens));
	opts.only = NULL;
	opts.n_only = 0;
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	fake_mode = FAKE_OFF;
	assert_int_equal(fake_opens[0], 1);
	assert_int_equal(fake_opens[1], 1);
	rp_node_fini(&node);
}

static void test_verbs_list_fails(void **state)
{
	struct rp_discover_opts opts = { .skip_gpus = true };
	struct rp_node node;

	(void)state;
	fake_mode = FAKE_LIST_FAILS;
	assert_int_equal(rp_node_discover(&node, &opts), 0);
	fake_mode = FAKE_OFF;
	if (node.n_hcas == 0) {
		assert_non_null(strstr(node.no_device_reason, "no kernel support"));
	} else {
		/* sysfs shows adapters verbs cannot list: each says why. */
		for (size_t i = 0; i < node.n_hcas; i++) {
			assert_int_equal(node.hcas[i].in_verbs, RP_TRI_FALSE);
			assert_non_null(strstr(node.hcas[i].unusable_reason, "not listed by ibv_get_device_list"));
		}
	}
	rp_node_fini(&node);
}

/* ---- the devices command ---- */

static void test_cmd_json_dgx(void **state)
{
	struct rp_fx fx;
	json_t *j, *d0, *p0, *near;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_dgx_h100(&fx), 0);
	j = rp_test_devices_json(fx.root, NULL);
	assert_true(json_is_false(rp_test_key(j, "verbs_consulted")));
	assert_string_equal(json_string_value(rp_test_key(j, "sysfs_root")), fx.root);
	assert_true(json_is_null(rp_test_key(j, "no_device_reason")));
	assert_int_equal(json_array_size(rp_test_key(j, "devices")), 8);
	d0 = json_array_get(rp_test_key(j, "devices"), 0);
	assert_string_equal(json_string_value(rp_test_key(d0, "name")), "mlx5_0");
	assert_true(json_is_null(rp_test_key(d0, "in_verbs")));
	assert_string_equal(json_string_value(rp_test_key(d0, "pci")), "0000:05:00.0");
	assert_int_equal(json_integer_value(rp_test_key(d0, "numa_node")), 0);
	assert_string_equal(json_string_value(rp_test_key(d0, "fw_ver")), "28.39.1002");
	assert_string_equal(json_string_value(rp_test_key(d0, "node_guid")), "b8ce:f603:00a1:0010");
	p0 = json_array_get(rp_test_key(d0, "ports"), 0);
	assert_int_equal(json_integer_value(rp_test_key(p0, "port")), 1);
	assert_string_equal(json_string_value(rp_test_key(p0, "state")), "ACTIVE");
	assert_string_equal(json_string_value(rp_test_key(p0, "phys_state")), "LinkUp");
	assert_true(json_number_value(rp_test_key(p0, "rate_gbps")) == 400.0);
	assert_string_equal(json_string_value(rp_test_key(p0, "link_layer")), "InfiniBand");
	assert_int_equal(json_integer_value(rp_test_key(p0, "lid")), 1);
	assert_int_equal(json_integer_value(rp_test_key(p0, "sm_lid")), 1);
	assert_int_equal(json_array_size(rp_test_key(p0, "gids")), 1);   /* only valid GIDs */
	assert_int_equal(json_integer_value(rp_test_key(p0, "nccl_gid_index")), 0);
	assert_int_equal(json_array_size(rp_test_key(j, "gpus")), 8);
	assert_true(json_is_null(rp_test_key(json_array_get(rp_test_key(j, "gpus"), 0), "index")));
	assert_int_equal(json_array_size(rp_test_key(j, "affinity")), 64);
	assert_string_equal(json_string_value(rp_test_key(json_array_get(rp_test_key(j, "affinity"), 0), "path")), "PIX");
	assert_string_equal(json_string_value(rp_test_key(json_array_get(rp_test_key(j, "affinity"), 7), "path")), "SYS");
	near = rp_test_key(rp_test_key(j, "nearest"), "0000:83:00.0");
	assert_int_equal(json_array_size(near), 2);
	assert_string_equal(json_string_value(json_array_get(near, 0)), "mlx5_4");
	assert_string_equal(json_string_value(json_array_get(near, 1)), "mlx5_5");
	json_decref(j);
	rp_fx_destroy(&fx);
}

static void test_cmd_json_roce(void **state)
{
	struct rp_fx fx;
	json_t *j, *p0, *gids;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_roce(&fx), 0);
	j = rp_test_devices_json(fx.root, "--nccl-version 2.30.7");
	p0 = json_array_get(rp_test_key(json_array_get(rp_test_key(j, "devices"), 0), "ports"), 0);
	gids = rp_test_key(p0, "gids");
	assert_int_equal(json_array_size(gids), 4);
	assert_string_equal(json_string_value(rp_test_key(json_array_get(gids, 3), "type")), "RoCE v2");
	assert_string_equal(json_string_value(rp_test_key(json_array_get(gids, 3), "ndev")), "ens1f0");
	assert_string_equal(json_string_value(rp_test_key(json_array_get(gids, 2), "gid")),
			    "0000:0000:0000:0000:0000:ffff:0a4d:0001");
	/* NCCL 2.30.7 picks the RoCE v2 IPv4 GID (ncclIbGetGidIndex, src/transport/net_ib.cc); the
	 * version is given so the answer does not depend on the libnccl of the test machine */
	assert_int_equal(json_integer_value(rp_test_key(p0, "nccl_gid_index")), 3);
	json_decref(j);
	rp_fx_destroy(&fx);
}

static void test_cmd_text_and_exit_codes(void **state)
{
	static char out[1 << 18];
	char args[PATH_MAX + 64];
	struct rp_fx fx;

	(void)state;
	rp_test_bin();
	assert_int_equal(rp_fx_create(&fx), 0);
	/* No devices: said plainly, exit 0. */
	snprintf(args, sizeof(args), "devices --sysfs-root '%s'", fx.root);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "%s 2>/dev/null", args), 0);
	assert_non_null(strstr(out, "No RDMA adapter found"));
	/* A readable table for a machine. */
	assert_int_equal(rp_fx_machine_dual_socket(&fx), 0);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "%s 2>/dev/null", args), 0);
	assert_non_null(strstr(out, "mlx5_0"));
	assert_non_null(strstr(out, "200 Gb/s (4X HDR)"));
	assert_non_null(strstr(out, "PXB"));
	assert_non_null(strstr(out, "Nearest"));
	/* Unreadable root: exit 3; usage errors: exit 2. */
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --sysfs-root /nonexistent/rdmaprobe-root 2>/dev/null"), 3);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --bogus 2>/dev/null"), 2);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices extra 2>/dev/null"), 2);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --sysfs-root 2>/dev/null"), 2);
	assert_int_equal(rp_test_run_bin(out, sizeof(out), "devices --help 2>/dev/null"), 0);
	assert_non_null(strstr(out, "--sysfs-root"));
	/* Broken entries: still a report, no crash. */
	rp_fx_destroy(&fx);
	assert_int_equal(rp_fx_create(&fx), 0);
	assert_int_equal(rp_fx_machine_broken(&fx), 0);
	{
		json_t *j = rp_test_devices_json(fx.root, NULL);

		assert_int_equal(json_array_size(rp_test_key(j, "devices")), 5);
		json_decref(j);
	}
	rp_fx_destroy(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dgx),
		cmocka_unit_test(test_roce_gid_table),
		cmocka_unit_test(test_rxe),
		cmocka_unit_test(test_broken_entries),
		cmocka_unit_test(test_odd_names),
		cmocka_unit_test(test_bad_roots),
		cmocka_unit_test(test_real_sys),
		cmocka_unit_test(test_verbs_lists_unopenable),
		cmocka_unit_test(test_verbs_list_fails),
		cmocka_unit_test(test_only_named_adapters),
		cmocka_unit_test(test_cmd_json_dgx),
		cmocka_unit_test(test_cmd_json_roce),
		cmocka_unit_test(test_cmd_text_and_exit_codes),
	};

	return cmocka_run_group_tests_name("node", tests, quiet, NULL);
}
