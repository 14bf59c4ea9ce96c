/* sim_fabric.c: the simulated fat tree, its routes and faults by component; see sim_fabric.h. */
#include "sim/sim_fabric.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_model.h"
#include "base/util.h"

static const char *const comp_names[] = { "adapter", "cable", "leaf", "uplink", "spine" };

static int fail(char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The error into msg; returns -EINVAL. */
static int fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int rp_sim_fabric_parse(struct rp_sim_model *m, char **w, char *msg, size_t len)
{
	uint64_t ports, spines;
	struct rp_sim_fabric *f;

	if (rp_parse_u64(w[1], 1, 4096, false, &ports))
		return fail(msg, len, "fabric: leaf ports '%s' is not 1 to 4096", w[1]);
	if (rp_parse_u64(w[2], 1, 1024, false, &spines))
		return fail(msg, len, "fabric: spines '%s' is not 1 to 1024", w[2]);
	if (strcmp(w[3], "dmodk") != 0 && strcmp(w[3], "ecmp") != 0)
		return fail(msg, len, "fabric: routing '%s' is not dmodk or ecmp", w[3]);
	if (!m->nodes)
		return fail(msg, len, "fabric: 'nodes' and 'adapters' must come first");
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->leaf_ports = (uint32_t)ports;
	f->spines = (uint32_t)spines;
	f->leaves_per_rail = (m->nodes + f->leaf_ports - 1) / f->leaf_ports;
	f->ecmp = strcmp(w[3], "ecmp") == 0;
	m->fabric = f;
	return 0;
}

/* "leafR-K" into its leaf id; -EINVAL when it names no leaf of the model. */
static int leaf_find(const struct rp_sim_model *m, const char *s, uint32_t *leaf_p)
{
	unsigned r, k;
	int n = 0;

	if (sscanf(s, "leaf%u-%u%n", &r, &k, &n) != 2 || s[n] != '\0' || r >= m->adapters ||
	    k >= m->fabric->leaves_per_rail)
		return -EINVAL;
	*leaf_p = r * m->fabric->leaves_per_rail + k;
	return 0;
}

static int spine_find(const struct rp_sim_model *m, const char *s, uint32_t *spine_p)
{
	unsigned sp;
	int n = 0;

	if (sscanf(s, "spine%u%n", &sp, &n) != 1 || s[n] != '\0' || sp >= m->fabric->spines)
		return -EINVAL;
	*spine_p = sp;
	return 0;
}

/* The component NAME of kind k into f. */
static int comp_resolve(const struct rp_sim_model *m, struct rp_sim_fault *f, const char *name, char *msg, size_t len)
{
	char buf[256], *colon;

	switch (f->comp) {
	case RP_SIM_C_ADAPTER:
	case RP_SIM_C_CABLE:
		rp_strlcpy(buf, name, sizeof(buf));
		colon = strchr(buf, '/');
		if (!colon)
			return fail(msg, len, "fault: '%s' is not NODE/DEVICE", name);
		*colon = '\0';
		if (rp_sim_ep_find(m, buf, colon + 1, &f->id))
			return fail(msg, len, "fault: no endpoint %s in the model", name);
		return 0;
	case RP_SIM_C_LEAF:
		return leaf_find(m, name, &f->id) ? fail(msg, len, "fault: no leaf '%s' (leafR-K)", name) : 0;
	case RP_SIM_C_UPLINK:
		rp_strlcpy(buf, name, sizeof(buf));
		colon = strchr(buf, ':');
		if (!colon)
			return fail(msg, len, "fault: uplink '%s' is not leafR-K:spineS", name);
		*colon = '\0';
		if (leaf_find(m, buf, &f->id) || spine_find(m, colon + 1, &f->spine))
			return fail(msg, len, "fault: no uplink '%s' in the fabric", name);
		return 0;
	default:
		return spine_find(m, name, &f->id) ? fail(msg, len, "fault: no spine '%s' (spineS)", name) : 0;
	}
}

int rp_sim_fault_parse(struct rp_sim_model *m, char **w, char *msg, size_t len)
{
	struct rp_sim_fabric *fb = m->fabric;
	struct rp_sim_fault f = { .comp = RP_SIM_C_SPINE };
	size_t k;
	int rc;

	if (!fb)
		return fail(msg, len, "fault: needs a 'fabric' line before it");
	for (k = 0; k < RP_ARRAY_SIZE(comp_names) && strcmp(w[1], comp_names[k]) != 0; k++)
		;
	if (k == RP_ARRAY_SIZE(comp_names))
		return fail(msg, len, "fault: '%s' is not adapter, cable, leaf, uplink or spine", w[1]);
	f.comp = (enum rp_sim_comp)k;
	rc = comp_resolve(m, &f, w[2], msg, len);
	if (rc)
		return rc;
	if (strcmp(w[3], "dead") == 0) {
		f.mode = RP_SIM_M_DEAD;
	} else if (strncmp(w[3], "lossy:", 6) == 0 || strncmp(w[3], "flaky:", 6) == 0) {
		f.mode = w[3][0] == 'l' ? RP_SIM_M_LOSSY : RP_SIM_M_FLAKY;
		if (rp_parse_double(w[3] + 6, 0, 1, &f.value) || f.value <= 0 || f.value >= 1)
			return fail(msg, len, "fault: '%s': the fraction is not in (0, 1)", w[3]);
	} else {
		return fail(msg, len, "fault: mode '%s' is not dead, lossy:P or flaky:P", w[3]);
	}
	for (size_t i = 0; i < fb->n_faults; i++)
		if (fb->faults[i].comp == f.comp && fb->faults[i].id == f.id && fb->faults[i].spine == f.spine)
			return fail(msg, len, "fault: %s %s already has a fault", w[1], w[2]);
	if (fb->n_faults == fb->cap_faults) {
		size_t cap = fb->cap_faults ? 2 * fb->cap_faults : 8;
		struct rp_sim_fault *n = realloc(fb->faults, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		fb->faults = n;
		fb->cap_faults = cap;
	}
	fb->faults[fb->n_faults++] = f;
	return 0;
}

void rp_sim_fabric_free(struct rp_sim_fabric *f)
{
	if (f)
		free(f->faults);
	free(f);
}

uint32_t rp_sim_fabric_leaf(const struct rp_sim_model *m, uint32_t e)
{
	const struct rp_sim_fabric *f = m->fabric;

	return (e % m->adapters) * f->leaves_per_rail + (e / m->adapters) / f->leaf_ports;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint32_t rp_sim_fabric_spine(const struct rp_sim_model *m, uint32_t src, uint32_t dst)
{
	const struct rp_sim_fabric *f = m->fabric;

	if (f->ecmp)
		return (uint32_t)(mix(((uint64_t)src << 32) | dst) % f->spines);
	return (dst / m->adapters) % f->spines;
}

/* Whether fault f is on the route src -> dst (leaves ls, ld; spine s when they differ). */
static bool on_route(const struct rp_sim_fault *f, uint32_t src, uint32_t dst, uint32_t ls, uint32_t ld, uint32_t s)
{
	switch (f->comp) {
	case RP_SIM_C_ADAPTER:
	case RP_SIM_C_CABLE:
		return f->id == src || f->id == dst;
	case RP_SIM_C_LEAF:
		return f->id == ls || f->id == ld;
	case RP_SIM_C_UPLINK:
		return ls != ld && f->spine == s && (f->id == ls || f->id == ld);
	default:
		return ls != ld && f->id == s;
	}
}

bool rp_sim_fabric_dir(const struct rp_sim_model *m, uint32_t src, uint32_t dst, double *loss_p)
{
	const struct rp_sim_fabric *fb = m->fabric;
	uint32_t ls, ld, s;
	double keep = 1;

	*loss_p = 0;
	if (!fb || !fb->n_faults)
		return false;
	ls = rp_sim_fabric_leaf(m, src);
	ld = rp_sim_fabric_leaf(m, dst);
	s = rp_sim_fabric_spine(m, src, dst);
	for (size_t i = 0; i < fb->n_faults; i++) {
		const struct rp_sim_fault *f = &fb->faults[i];

		if (!on_route(f, src, dst, ls, ld, s))
			continue;
		if (f->mode == RP_SIM_M_DEAD)
			return true;
		if (f->mode == RP_SIM_M_LOSSY) {
			keep *= 1 - f->value;
		} else {
			uint64_t h = mix(m->random_seed ^ mix(((uint64_t)i << 48) ^ ((uint64_t)src << 24) ^ dst));

			if ((double)(h >> 11) * 0x1.0p-53 < f->value)
				return true;
		}
	}
	*loss_p = 1 - keep;
	return false;
}

void rp_sim_fabric_leaf_name(const struct rp_sim_model *m, uint32_t leaf, char *buf, size_t len)
{
	snprintf(buf, len, "leaf%u-%u", leaf / m->fabric->leaves_per_rail, leaf % m->fabric->leaves_per_rail);
}

int rp_sim_fabric_write_topology(const struct rp_sim_model *m, FILE *f)
{
	const struct rp_sim_fabric *fb = m->fabric;
	char node[128], dev[128], leaf[64];

	fprintf(f, "# rdmaprobe topology: the simulated rail-optimized fat tree (%u leaf ports, %u spines)\n",
		fb->leaf_ports, fb->spines);
	fprintf(f, "route %s\n", fb->ecmp ? "unknown" : "dmodk");
	for (uint32_t e = 0; e < rp_sim_n_eps(m); e++) {
		rp_sim_ep_names(m, e, node, sizeof(node), dev, sizeof(dev));
		rp_sim_fabric_leaf_name(m, rp_sim_fabric_leaf(m, e), leaf, sizeof(leaf));
		fprintf(f, "adapter %s/%s:1 %s %u\n", node, dev, leaf, (e / m->adapters) % fb->leaf_ports + 1);
	}
	for (uint32_t l = 0; l < m->adapters * fb->leaves_per_rail; l++) {
		rp_sim_fabric_leaf_name(m, l, leaf, sizeof(leaf));
		for (uint32_t s = 0; s < fb->spines; s++)
			fprintf(f, "uplink %s spine%u\n", leaf, s);
	}
	return ferror(f) ? -EIO : 0;
}
