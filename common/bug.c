/* bug.c - BUG() and BUG_NOTE() (see bug.h). */
#include "common/bug.h"  // defines: bug_fl, bug_note_fl
#include "common/sbuf.h" // defines: struct sbuf, sbuf_addf, sbuf_vaddf

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void bug_fl(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void bug_note_fl(struct sbuf *err, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	sbuf_addf(err, "BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	sbuf_vaddf(err, fmt, ap);
	va_end(ap);
}
