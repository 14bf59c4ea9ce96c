/* opts.c: the option table parser; see opts.h. */
#include "opts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

void rp_opts_help(const char *cmd, const char *usage, const struct rp_opt *opts)
{
	printf("usage: rdmaprobe %s %s\n\noptions:\n", cmd, usage);
	for (const struct rp_opt *o = opts; o->name; o++) {
		char left[64];

		snprintf(left, sizeof(left), "%s%c%s--%s%s%s", o->short_name ? "-" : "   ",
			 o->short_name ? o->short_name : ' ', o->short_name ? ", " : "", o->name,
			 o->metavar ? " " : "", o->metavar ? o->metavar : "");
		printf("  %-30s %s\n", left, o->help);
	}
	printf("  %-30s %s\n", "-h, --help", "show this help");
}

static const struct rp_opt *opt_find(const struct rp_opt *opts, const char *arg, const char **inline_val_p)
{
	*inline_val_p = NULL;
	if (arg[1] != '-') {
		for (const struct rp_opt *o = opts; o->name; o++)
			if (o->short_name && o->short_name == arg[1] && arg[2] == '\0')
				return o;
		return NULL;
	}
	const char *name = arg + 2;
	const char *eq = strchr(name, '=');
	size_t n = eq ? (size_t)(eq - name) : strlen(name);

	for (const struct rp_opt *o = opts; o->name; o++) {
		if (strlen(o->name) == n && strncmp(o->name, name, n) == 0) {
			if (eq)
				*inline_val_p = eq + 1;
			return o;
		}
	}
	return NULL;
}

/* Store val into o->dest after a checked parse; prints the error. */
static int opt_store(const struct rp_opt *o, const char *val)
{
	uint64_t u;
	double d;
	int i, rc = 0;

	switch (o->kind) {
	case RP_OPT_FLAG:
		*(bool *)o->dest = true;
		return 0;
	case RP_OPT_STR:
		*(const char **)o->dest = val;
		return 0;
	case RP_OPT_INT:
		rc = rp_parse_int(val, (int)o->min, (int)o->max, &i);
		if (!rc)
			*(int *)o->dest = i;
		break;
	case RP_OPT_U64:
		rc = rp_parse_u64(val, (uint64_t)o->min, (uint64_t)o->max, false, &u);
		if (!rc)
			*(uint64_t *)o->dest = u;
		break;
	case RP_OPT_SIZE:
		rc = rp_parse_size(val, (uint64_t)o->min, (uint64_t)o->max, &u);
		if (!rc)
			*(uint64_t *)o->dest = u;
		break;
	case RP_OPT_DOUBLE:
		rc = rp_parse_double(val, o->min, o->max, &d);
		if (!rc)
			*(double *)o->dest = d;
		break;
	case RP_OPT_SECONDS:
		rc = rp_parse_seconds(val, o->min, o->max, &d);
		if (!rc)
			*(double *)o->dest = d;
		break;
	}
	if (rc == -ERANGE)
		fprintf(stderr, "rdmaprobe: --%s %s: out of range (%g to %g)\n", o->name, val, o->min, o->max);
	else if (rc)
		fprintf(stderr, "rdmaprobe: --%s %s: not a valid %s\n", o->name, val,
			o->kind == RP_OPT_SIZE ? "size (e.g. 4096, 64K, 1M)" :
			o->kind == RP_OPT_SECONDS ? "duration (e.g. 10, 500ms, 2m)" : "number");
	return rc ? -1 : 0;
}

int rp_opts_parse(const char *cmd, const char *usage, const struct rp_opt *opts, int argc, char **argv,
		  const char **positional, int max_positional, int *n_positional_p)
{
	int npos = 0;
	bool only_positional = false;

	for (int a = 0; a < argc; a++) {
		const char *arg = argv[a];
		const char *val;
		const struct rp_opt *o;

		if (only_positional || arg[0] != '-' || arg[1] == '\0') {
			if (npos >= max_positional) {
				fprintf(stderr, "rdmaprobe %s: unexpected argument '%s'\n", cmd, arg);
				return -1;
			}
			positional[npos++] = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			only_positional = true;
			continue;
		}
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			rp_opts_help(cmd, usage, opts);
			return 1;
		}
		o = opt_find(opts, arg, &val);
		if (!o) {
			fprintf(stderr, "rdmaprobe %s: unknown option '%s' (see rdmaprobe %s --help)\n", cmd, arg, cmd);
			return -1;
		}
		if (o->kind == RP_OPT_FLAG && val) {
			fprintf(stderr, "rdmaprobe %s: --%s takes no value\n", cmd, o->name);
			return -1;
		}
		if (o->kind != RP_OPT_FLAG && !val) {
			if (a + 1 >= argc) {
				fprintf(stderr, "rdmaprobe %s: --%s needs a value (%s)\n", cmd, o->name, o->metavar);
				return -1;
			}
			val = argv[++a];
		}
		if (opt_store(o, val))
			return -1;
		if (o->seen)
			*o->seen = true;
	}
	if (n_positional_p)
		*n_positional_p = npos;
	return 0;
}
