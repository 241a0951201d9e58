/* ticker.c - the --wait line of hpctrain status (ticker.h).
 * Shell: prints to stdout and reads the clock. */
#include "launcher/job/ticker.h"     // defines: struct ticker, ticker_*
#include "common/sbuf.h"    // defines: struct sbuf

#include <stdio.h>
#include <string.h>
#include <time.h>

/* On a pipe, an unchanged count of states is said again this often. */
#define PIPE_REPEAT_S 30

void ticker_init(struct ticker *t, int live)
{
	memset(t, 0, sizeof(*t));
	t->live = live;
	sbuf_init(&t->last);
	sbuf_init(&t->last_key);
}

void ticker_show(struct ticker *t, const char *line, const char *key)
{
	time_t now = time(NULL);

	if (t->live > 0) {
		printf("\r%s\033[K", line);
	} else if (strcmp(key, t->last_key.buf) ||
		   (strcmp(line, t->last.buf) && now - t->said >= PIPE_REPEAT_S)) {
		printf("%s\n", line);
		t->said = now;
		sbuf_reset(&t->last);
		sbuf_addstr(&t->last, line);
		sbuf_reset(&t->last_key);
		sbuf_addstr(&t->last_key, key);
	}
	fflush(stdout);
}

void ticker_end(struct ticker *t)
{
	if (t->live > 0)
		printf("\r\033[K");
	fflush(stdout);
	sbuf_release(&t->last);
	sbuf_release(&t->last_key);
}
