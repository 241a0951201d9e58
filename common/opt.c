/* opt.c - option parsing and help from one table per subcommand.
 * Shell: prints usage errors and help text. */
#include "common/opt.h"      // defines: struct opt, opt_next, opt_usage, opt_error, opt_number
#include "common/exitcode.h" // defines: HPT_EXIT_USAGE
#include "common/sbuf.h"     // defines: struct sbuf, xmalloc, sbuf_clip
#include "common/suggest.h"  // defines: suggest_best

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static size_t opt_count(const struct opt *opts)
{
	size_t n = 0;

	while (opts[n].name)
		n++;
	return n;
}

static void opt_shortstring(const struct opt_cmd *cmd, struct sbuf *out)
{
	const struct opt *opts = cmd->opts;

	/* '+' stops at the first operand, so a launched program's own flags
	 * stay its own; ':' makes getopt report a missing argument as ':'. */
	if (cmd->stop_at_operand)
		sbuf_addch(out, '+');
	sbuf_addch(out, ':');
	for (const struct opt *o = opts; o->name; o++) {
		if (o->val <= 0 || o->val >= 128)
			continue;
		sbuf_addch(out, o->val);
		if (o->has_arg == required_argument)
			sbuf_addch(out, ':');
	}
}

/* The option whose val is c, or NULL. */
static const struct opt *option_of(const struct opt_cmd *cmd, int c)
{
	for (const struct opt *o = cmd->opts; o->name; o++)
		if (o->val == c)
			return o;
	return NULL;
}

static void report_unknown(const struct opt_cmd *cmd, const char *arg)
{
	size_t n = opt_count(cmd->opts);
	const char **names = xmalloc((n + 1) * sizeof(*names));
	struct sbuf word = SBUF_INIT, shown = SBUF_INIT;
	char clip[SBUF_CLIP_SIZE];
	const char *best;

	for (size_t i = 0; i < n; i++)
		names[i] = cmd->opts[i].name;
	sbuf_add(&shown, arg, strcspn(arg, "="));
	sbuf_addstr(&word, shown.buf + strspn(shown.buf, "-"));
	best = arg[1] == '-' ? suggest_best(word.buf, names, n) : NULL;
	if (best)
		opt_error(cmd, "unknown option '%s'; did you mean '--%s'?", sbuf_clip(shown.buf, clip),
			  best);
	else
		opt_error(cmd, "unknown option '%s'", sbuf_clip(shown.buf, clip));
	sbuf_release(&word);
	sbuf_release(&shown);
	free(names);
}

int opt_next(const struct opt_cmd *cmd, int argc, char **argv)
{
	size_t n = opt_count(cmd->opts);
	struct option *longs = xcalloc(n + 1, sizeof(*longs));
	struct sbuf shorts = SBUF_INIT;
	const struct opt *o;
	char clip[SBUF_CLIP_SIZE];
	int c;

	for (size_t i = 0; i < n; i++) {
		longs[i].name = cmd->opts[i].name;
		longs[i].has_arg = cmd->opts[i].has_arg;
		longs[i].val = cmd->opts[i].val;
	}
	opt_shortstring(cmd, &shorts);
	opterr = 0;
	c = getopt_long(argc, argv, shorts.buf, longs, NULL);
	sbuf_release(&shorts);
	free(longs);
	if (c == '?') {
		if (optopt)
			opt_error(cmd, "unknown option '-%c'", optopt);
		else
			report_unknown(cmd, argv[optind - 1]);
		return -2;
	}
	if (c == ':') {
		opt_error(cmd, "option '%s' needs a value", sbuf_clip(argv[optind - 1], clip));
		return -2;
	}
	o = c > 0 ? option_of(cmd, c) : NULL;
	if (o && o->has_arg == required_argument && optarg && !*optarg) {
		opt_error(cmd, "option '--%s' needs a value, not an empty one", o->name);
		return -2;
	}
	return c;
}

int opt_check_operands(const struct opt_cmd *cmd, int argc, char **argv, int from)
{
	for (int i = from; i < argc; i++)
		if (!*argv[i])
			return opt_error(cmd, "an empty argument names nothing");
	return 0;
}

void opt_reset(void)
{
	optind = 0; /* 0 also resets glibc's internal state */
}

static void print_opt(FILE *fp, const struct opt *o)
{
	struct sbuf left = SBUF_INIT;

	if (o->val > 0 && o->val < 128)
		sbuf_addf(&left, "-%c, ", o->val);
	else
		sbuf_addstr(&left, "    ");
	sbuf_addf(&left, "--%s", o->name);
	if (o->argname)
		sbuf_addf(&left, " %s", o->argname);
	if (left.len < 28)
		fprintf(fp, "  %-28s%s\n", left.buf, o->help);
	else
		fprintf(fp, "  %s\n  %-28s%s\n", left.buf, "", o->help);
	sbuf_release(&left);
}

void opt_usage(FILE *fp, const struct opt_cmd *cmd)
{
	for (size_t i = 0; cmd->usage[i]; i++)
		fprintf(fp, "%s %s\n", !i ? "usage:" : cmd->usage[i][0] == ' ' ? "      " : "   or:",
			cmd->usage[i]);
	if (cmd->summary)
		fprintf(fp, "\n%s\n", cmd->summary);
	if (cmd->opts && cmd->opts[0].name) {
		fputs("\noptions:\n", fp);
		for (const struct opt *o = cmd->opts; o->name; o++)
			print_opt(fp, o);
	}
}

int opt_error(const struct opt_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hpctrain%s%s: ", *cmd->name ? " " : "", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	for (size_t i = 0; cmd->usage && cmd->usage[i]; i++)
		fprintf(stderr, "%s %s\n", !i ? "usage:" : cmd->usage[i][0] == ' ' ? "      " : "   or:",
			cmd->usage[i]);
	fprintf(stderr, "see 'hpctrain%s%s --help'\n", *cmd->name ? " " : "", cmd->name);
	return HPT_EXIT_USAGE;
}

int opt_number(const struct opt_cmd *cmd, const char *flag, const char *s, double lo, double hi,
	       double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out >= lo) || *out > hi)
		return opt_error(cmd, "--%s: expected a number %g..%g, got '%s'", flag, lo, hi,
				 SBUF_CLIP(s));
	return 0;
}
