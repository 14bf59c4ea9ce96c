/* fuzz_nccl_spec.c: libFuzzer target for the NCCL_IB_HCA parser, matcher and the whole evaluation
 * on a small node built in memory (prefix-overlapping names, a down port, RoCE and IB).
 *
 * Besides memory safety it checks what must hold for any input: at most 32 entries, no empty name,
 * no ',' or ':' inside a name, '^' alone excluding everything, and a recommendation that parses
 * back and selects exactly the ports it names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "nccl/nccl.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = { "mlx5_0", "mlx5_1", "mlx5_10", "mlx5_11", "rxe0", "^x", " mlx5_0" };

static struct rp_gid roce_gids[4];
static struct rp_port ports[7][2];
static struct rp_hca hcas[7];
static struct rp_node node;

static void quiet(enum rp_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

static void build_node(void)
{
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, [12] = 10, [15] = 1 };

	for (int i = 0; i < 4; i++) {
		roce_gids[i].index = i;
		if (i >= 2) {
			memcpy(roce_gids[i].raw, v4, 16);
		} else {
			roce_gids[i].raw[0] = 0xfe;
			roce_gids[i].raw[1] = 0x80;
			roce_gids[i].raw[15] = 1;
		}
		roce_gids[i].type = i % 2 ? RP_GID_TYPE_ROCE_V2 : RP_GID_TYPE_IB_ROCE_V1;
	}
	for (size_t d = 0; d < RP_ARRAY_SIZE(names); d++) {
		rp_strlcpy(hcas[d].name, names[d], sizeof(hcas[d].name));
		hcas[d].in_verbs = d == 3 ? RP_TRI_FALSE : RP_TRI_UNKNOWN;
		hcas[d].ports = ports[d];
		hcas[d].n_ports = d == 1 ? 2 : 1;
		for (int p = 0; p < 2; p++) {
			ports[d][p].num = p + 1;
			ports[d][p].state = d == 1 && p == 1 ? RP_PORT_DOWN : RP_PORT_ACTIVE;
			ports[d][p].link_layer = d == 4 ? RP_LL_ETHERNET : RP_LL_INFINIBAND;
			ports[d][p].gids = roce_gids;
			ports[d][p].n_gids = 4;
		}
	}
	node.hcas = hcas;
	node.n_hcas = RP_ARRAY_SIZE(names);
	rp_log_set_sink(quiet, NULL);
}

static void check_spec(const struct rp_nccl_spec *s)
{
	if (s->n_entries > RP_NCCL_MAX_ENTRIES)
		abort();
	for (size_t i = 0; i < s->n_entries; i++) {
		const char *n = s->entries[i].name;

		if (!n[0] || strlen(n) >= RP_NAME_MAX || strchr(n, ',') || strchr(n, ':'))
			abort();
	}
	if (s->exclude && s->n_entries == 0)
		for (size_t d = 0; d < RP_ARRAY_SIZE(names); d++)
			if (rp_nccl_spec_keeps(s, names[d], 1))
				abort();
}

/* The recommendation parses back and selects exactly the ports it names. */
static void check_recommendation(const char *rec, const struct rp_nccl_env *env0)
{
	struct rp_nccl_env env = *env0;
	struct rp_nccl_result r;
	struct rp_nccl_spec s;

	if (rec[0] != '=' || rp_nccl_spec_parse(rec, &s) != 0 || s.n_ignored)
		abort();
	env.ib_hca = rec;
	if (rp_nccl_evaluate(&node, &env, &r) != 0 || r.n_selected != s.n_entries)
		abort();
	for (size_t i = 0; i < r.n_selected; i++)
		if (strcmp(r.selected[i].hca, s.entries[i].name) != 0 || r.selected[i].port != s.entries[i].port)
			abort();
	rp_nccl_result_fini(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_nccl_result res;
	struct rp_nccl_spec spec;
	struct rp_nccl_env env;
	char *text;

	if (!node.hcas)
		build_node();
	if (size > RP_NCCL_SPEC_MAX + 16)
		size = RP_NCCL_SPEC_MAX + 16;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	if (rp_nccl_spec_parse(text, &spec) == 0) {
		check_spec(&spec);
		for (size_t d = 0; d < RP_ARRAY_SIZE(names); d++)
			for (int p = -1; p <= 2; p++)
				(void)rp_nccl_spec_keeps(&spec, names[d], p);
	}
	rp_nccl_env_default(&env);
	env.ib_hca = text;
	if (rp_nccl_evaluate(&node, &env, &res) == 0 && res.recommended)
		check_recommendation(res.recommended, &env);
	rp_nccl_result_fini(&res);
	free(text);
	return 0;
}
