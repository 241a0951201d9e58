/* opt.h - one table per subcommand drives getopt_long and --help.
 *
 * Each cmd_<name>.c describes its options once, as an array of struct opt
 * ending in OPT_END, plus a NULL-terminated synopsis.  opt_next() feeds
 * the table to getopt_long(), and on a bad flag prints what was wrong,
 * a "did you mean" and the usage to stderr; opt_usage() prints --help.
 * The first four fields are struct option's, so the table converts
 * without copying names around (Slurm's slurm_cli_opt_t does the same).
 */
#ifndef HPT_OPT_H
#define HPT_OPT_H

#include <getopt.h>
#include <stdio.h>

struct opt {
	const char *name; /* long name, without "--" */
	int has_arg;      /* no_argument or required_argument */
	int *flag;        /* always NULL: values come back from opt_next() */
	int val;          /* short letter, or an OPT_* value >= 256 */
	const char *argname; /* e.g. "FILE"; NULL for flags */
	const char *help;    /* one line */
};

#define OPT_END { NULL, 0, NULL, 0, NULL, NULL }
#define OPT_HELP { "help", no_argument, NULL, 'h', NULL, "show this help and exit" }

struct opt_cmd {
	const char *name;               /* "validate", or "" for hpctrain itself */
	const char *const *usage;       /* synopsis lines, NULL-terminated */
	const char *summary;            /* one sentence */
	const struct opt *opts;
	int stop_at_operand; /* options end at the first operand (launch -- prog) */
};

/* Returns the next option's val, -1 when options end (optind then points
 * at the first operand), or -2 after printing a usage error.  An empty
 * value (--run '', --run=) is one: every value names or sets something,
 * and "" would otherwise reach a lookup as a name that does not exist. */
int opt_next(const struct opt_cmd *cmd, int argc, char **argv);

/* Operands argv[from..argc) name runs, specs, files or templates: an
 * empty one is a usage error, not a name that is not there (status 4).
 * Returns 0, or HPT_EXIT_USAGE after printing the error. */
int opt_check_operands(const struct opt_cmd *cmd, int argc, char **argv, int from);

/* Resets getopt's global state; call before parsing a new argv. */
void opt_reset(void);

void opt_usage(FILE *fp, const struct opt_cmd *cmd);

/* Prints "hpctrain CMD: MSG" and "see 'hpctrain CMD --help'" to stderr
 * and returns HPT_EXIT_USAGE, so a caller can `return opt_error(...)`. */
__attribute__((format(printf, 2, 3)))
int opt_error(const struct opt_cmd *cmd, const char *fmt, ...);

/* The number s, given to --flag, into *out when it lies in lo..hi;
 * else opt_error ("--flag: expected a number LO..HI, got 'S'"). */
int opt_number(const struct opt_cmd *cmd, const char *flag, const char *s, double lo, double hi,
	       double *out);

#endif
