/* stage_summary_load.c - reads an attempt's staging records into a
 * summary (see stage_summary.h).  Shell: the files, through fileio. */
#include "launcher/runs/stage_summary.h" // defines: struct stage_summary, stage_summary_*
#include "common/fileio.h"               // defines: fileio_read_flags, FILEIO_NOFOLLOW
#include "common/sbuf.h"                 // defines: struct sbuf, xasprintf

#include <glob.h>
#include <stdlib.h>

void stage_summary_load(const char *dir, struct stage_summary *s)
{
	char *pattern = xasprintf("%s/stage/*.json", dir);
	glob_t g;

	stage_summary_init(s);
	if (!glob(pattern, 0, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			struct sbuf text = SBUF_INIT, err = SBUF_INIT;

			/* a link, a FIFO, another user's file, one too large:
			 * not a record stage wrote, and never read through */
			if (i >= STAGE_SUMMARY_NODES_MAX ||
			    fileio_read_flags(g.gl_pathv[i], STAGE_SUMMARY_RECORD_MAX,
					      FILEIO_NOFOLLOW | FILEIO_OWNED, &text, &err) ||
			    text.len > STAGE_SUMMARY_RECORD_MAX)
				s->skipped++;
			else
				stage_summary_add(s, text.buf, text.len);
			sbuf_release(&text);
			sbuf_release(&err);
		}
		globfree(&g);
	}
	free(pattern);
	stage_summary_finish(s);
}
