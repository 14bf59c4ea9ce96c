/* opts.c: the option table parser; see opts.h. */
#include "opts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

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

/* Text for roff: backslashes as \e, '-' as \- (so man renders options as typed), and a leading '.'
 * or '\'' made literal, so a help text cannot become a request. */
static void roff_text(const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", stdout);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", stdout);
		else if (*s == '-')
			fputs("\\-", stdout);
		else
			putchar(*s);
	}
}

/* The option table as the body of a man page section (--help=man): the usage line, the text after
 * it, then every option as a tagged paragraph. scripts/gen-man.sh puts the sections together. */
static void opts_man(const char *cmd, const char *usage, const struct rp_opt *opts)
{
	const char *nl = strchr(usage, '\n');
	char line[512];

	printf(".PP\n\\fBrdmaprobe %s\\fR ", cmd);
	snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - usage) : (int)strlen(usage), usage);
	roff_text(line);
	putchar('\n');
	while (nl) {
		const char *start = nl + 1;

		nl = strchr(start, '\n');
		snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - start) : (int)strlen(start), start);
		/* an empty line starts a paragraph, an indented one a line of its own; the rest flows */
		if (!line[0]) {
			fputs(".PP\n", stdout);
			continue;
		}
		if (line[0] == ' ')
			fputs(".br\n", stdout);
		roff_text(line + strspn(line, " "));
		putchar('\n');
	}
	for (const struct rp_opt *o = opts; o->name; o++) {
		fputs(".TP\n", stdout);
		if (o->short_name)
			printf("\\fB\\-%c\\fR, ", o->short_name);
		fputs("\\fB\\-\\-", stdout);
		roff_text(o->name);
		fputs("\\fR", stdout);
		if (o->metavar) {
			fputs(" \\fI", stdout);
			roff_text(o->metavar);
			fputs("\\fR", stdout);
		}
		putchar('\n');
		roff_text(o->help);
		putchar('\n');
	}
	fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow this help\n", stdout);
}

/* The option table for scripts (--help=list): "--name<TAB>-x<TAB>METAVAR", "-" for an empty field. */
static void opts_list(const struct rp_opt *opts)
{
	for (const struct rp_opt *o = opts; o->name; o++) {
		printf("--%s\t", o->name);
		if (o->short_name)
			printf("-%c\t", o->short_name);
		else
			fputs("-\t", stdout);
		printf("%s\n", o->metavar ? o->metavar : "-");
	}
	printf("--help\t-h\t-\n");
}

/* "--help=man" or "--help=list": the table for the man page and the completion generators. */
static int opts_help_format(const char *cmd, const char *usage, const struct rp_opt *opts, const char *format)
{
	if (strcmp(format, "man") == 0)
		opts_man(cmd, usage, opts);
	else if (strcmp(format, "list") == 0)
		opts_list(opts);
	else {
		fprintf(stderr, "rdmaprobe %s: --help=%s: the formats are man and list\n", cmd, format);
		return -1;
	}
	return fflush(stdout) == 0 ? 1 : -1;
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

/* A bound of a size option with its binary unit: "1 B", "64 KiB", "4 GiB", else the bytes and about
 * how many of the largest unit ("1073741823 B (about 1.0 GiB)"). */
static void fmt_size(double v, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	uint64_t b = v >= 1.8e19 ? UINT64_MAX : (uint64_t)v;
	int k = 0;

	while (k < 6 && b >> (10 * (k + 1)) != 0)
		k++;
	if (k == 0 || b % (1ULL << (10 * k)) == 0)
		snprintf(buf, len, "%llu %s", (unsigned long long)(b >> (10 * k)), unit[k]);
	else
		snprintf(buf, len, "%llu B (about %.1f %s)", (unsigned long long)b, (double)b / (double)(1ULL << (10 * k)),
			 unit[k]);
}

/* A bound of a duration option in the unit that reads best (one the parser takes): "10 ms", "60 s",
 * "1 h", "24 h". */
static void fmt_seconds(double v, char *buf, size_t len)
{
	if (v > 0 && v < 1)
		snprintf(buf, len, "%g ms", v * 1e3);
	else if (v >= 3600 && v == 3600 * (double)(uint64_t)(v / 3600))
		snprintf(buf, len, "%g h", v / 3600);
	else
		snprintf(buf, len, "%g s", v);
}

/* A bound as the option's kind reads it: sizes and durations with their unit, counts in full. */
static void fmt_bound(const struct rp_opt *o, double v, char *buf, size_t len)
{
	if (o->kind == RP_OPT_SIZE)
		fmt_size(v, buf, len);
	else if (o->kind == RP_OPT_SECONDS)
		fmt_seconds(v, buf, len);
	else if (o->kind == RP_OPT_U64 || o->kind == RP_OPT_INT)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%g", v);
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
	case RP_OPT_OUTPUT:
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
	if (rc == -ERANGE) {
		char lo[64], hi[64];

		fmt_bound(o, o->min, lo, sizeof(lo));
		fmt_bound(o, o->max, hi, sizeof(hi));
		fprintf(stderr, "rdmaprobe: --%s %s: out of range (%s to %s)\n", o->name, val, lo, hi);
	} else if (rc)
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
		if (strncmp(arg, "--help=", 7) == 0)
			return opts_help_format(cmd, usage, opts, arg + 7);
		o = opt_find(opts, arg, &val);
		if (!o) {
			fprintf(stderr, "rdmaprobe %s: unknown option '%s' (see rdmaprobe %s --help)\n", cmd, arg, cmd);
			return -1;
		}
		if (o->kind == RP_OPT_FLAG && val) {
			fprintf(stderr, "rdmaprobe %s: --%s takes no value\n", cmd, o->name);
			return -1;
		}
		/* the old bare "--json" where no positional argument can follow: standard output */
		if (o->kind == RP_OPT_OUTPUT && !val && max_positional == 0 &&
		    (a + 1 >= argc || (argv[a + 1][0] == '-' && argv[a + 1][1] != '\0')))
			val = "-";
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
