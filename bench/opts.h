/* opts.h: one option table per command; it parses argv and prints --help.
 *
 * Every number goes through lib/base/util.h's checked parsers; a bad value is rejected with a message that
 * names the option, never rewritten. Parsing only stores; validation across options and deriving
 * values is the command's next step.
 */
#ifndef RP_OPTS_H
#define RP_OPTS_H

#include <stdbool.h>
#include <stdint.h>

enum rp_opt_kind {
	RP_OPT_FLAG,     /* bool *, set true */
	RP_OPT_STR,      /* const char **, points into argv */
	RP_OPT_INT,      /* int *, in [min, max] */
	RP_OPT_U64,      /* uint64_t *, in [min, max] */
	RP_OPT_SIZE,     /* uint64_t *, with units K/M/G, in [min, max] */
	RP_OPT_DOUBLE,   /* double *, in [min, max] */
	RP_OPT_SECONDS,  /* double * seconds, with units ms/s/m, in [min, max] */
	RP_OPT_OUTPUT,   /* const char **: an output FILE, "-" standard output; for a command without
	                  * positional arguments a bare "--json" (last, or before another --option: the
	                  * old spelling, unambiguous there) means "-" */
};

struct rp_opt {
	const char *name;        /* long name without "--" */
	char short_name;         /* 0 when none */
	enum rp_opt_kind kind;
	void *dest;
	double min, max;         /* numeric kinds */
	const char *metavar;     /* "SIZE", "N", "SPEC"; NULL for flags */
	const char *help;
	bool *seen;              /* optional: set true when given */
};

/* Parse argv[first..argc) against opts (terminated by a zero entry). Positional arguments are
 * stored in order into positional[0..max_positional) and counted in *n_positional_p.
 * "-h"/"--help" prints the help to stdout and returns 1; so do the formats for tools, "--help=man"
 * (the table as roff, for scripts/gen-man.sh) and "--help=list" ("--name<TAB>-x<TAB>METAVAR" lines, "-"
 * when empty, for scripts/gen-completion.sh), so the man page and the completion come from the table. Errors print one line to stderr naming the
 * option and return -1 (the caller exits 2). Returns 0 on success. */
int rp_opts_parse(const char *cmd, const char *usage, const struct rp_opt *opts, int argc, char **argv,
		  const char **positional, int max_positional, int *n_positional_p);
void rp_opts_help(const char *cmd, const char *usage, const struct rp_opt *opts);

#endif
