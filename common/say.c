/* say.c - the command's messages on stderr (see say.h).  Shell. */
#include "common/say.h"  // defines: say, say_lines, say_set_prefix, say_prefix
#include "common/sbuf.h" // defines: struct sbuf, sbuf_vaddf

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *prefix = "hpctrain";

void say_set_prefix(const char *who)
{
	prefix = who && *who ? who : "hpctrain";
}

const char *say_prefix(void)
{
	return prefix;
}

void say(const char *fmt, ...)
{
	struct sbuf line = SBUF_INIT;
	va_list ap;

	sbuf_addf(&line, "%s: ", prefix);
	va_start(ap, fmt);
	sbuf_vaddf(&line, fmt, ap);
	va_end(ap);
	sbuf_addch(&line, '\n');
	/* one write: ranks of a job print into one log at once */
	fwrite(line.buf, 1, line.len, stderr);
	sbuf_release(&line);
}

void say_lines(const char *text)
{
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		int len = nl ? (int)(nl - text) : (int)strlen(text);

		if (len)
			say("%.*s", len, text);
		text += len + !!nl;
	}
}
