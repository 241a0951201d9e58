/* diag.h - diagnostics that carry where they happened.
 *
 * Cores never print: they append to a caller-owned struct diag_list and
 * return nonzero; the shell decides what to show and which status to exit
 * with.  One entry renders as
 *
 *     job.yaml:7:18: resources.gpus_per_node: expected an integer 0..64, got "four"
 *
 * where "where" is a file name (line/col 1-based, 0 when unknown) or, for
 * input that came from the command line, the flag itself
 * ("--set resources.nodes=x").  key path may be empty.
 */
#ifndef HPT_DIAG_H
#define HPT_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum diag_severity { DIAG_ERROR, DIAG_WARNING };

struct diag {
	enum diag_severity severity;
	char *where;   /* file name or flag; never NULL */
	int line, col; /* 1-based; 0 = not known */
	char *path;    /* key path such as "resources.nodes"; never NULL */
	char *msg;     /* lowercase, no full stop */
};

struct diag_list {
	struct diag *v;
	size_t n, alloc;
	size_t max; /* stop recording after this many (0 = 100) */
	size_t dropped;
};

#define DIAG_LIST_INIT { NULL, 0, 0, 0, 0 }

void diag_list_init(struct diag_list *dl);
void diag_list_release(struct diag_list *dl);

__attribute__((format(printf, 7, 8)))
void diag_add(struct diag_list *dl, enum diag_severity sev, const char *where,
	      int line, int col, const char *path, const char *fmt, ...);
void diag_vadd(struct diag_list *dl, enum diag_severity sev, const char *where,
	       int line, int col, const char *path, const char *fmt, va_list ap);

size_t diag_count(const struct diag_list *dl, enum diag_severity sev);
bool diag_has_errors(const struct diag_list *dl);
/* Appends src's entries that dst does not hold yet: the points of a
 * sweep share most of their spec, and one mistake is reported once. */
void diag_merge(struct diag_list *dst, const struct diag_list *src);
/* Drops the warnings: a rerun re-resolves a spec whose warnings were
 * said when it was submitted (and about keys resolved.yaml always
 * writes, such as train of a command job). */
void diag_drop_warnings(struct diag_list *dl);
/* Orders entries by (where, line, col), keeping insertion order for ties,
 * so a file's errors read top to bottom whatever pass found them. */
void diag_sort(struct diag_list *dl);

/* Formats one entry without a trailing newline. */
struct sbuf;
void diag_format(const struct diag *d, struct sbuf *out);
/* Prints every entry, one per line, then a note if some were dropped.
 * A spec's diagnostics print as a compiler's do (job.yaml:7:18: ...,
 * hpctrain-validate(1)); anything else a command says starts with
 * "hpctrain COMMAND: ", which diag_report_as puts before each line. */
void diag_report(FILE *fp, const struct diag_list *dl);
void diag_report_as(FILE *fp, const char *prefix, const struct diag_list *dl);

#endif
