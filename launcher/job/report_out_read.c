/* report_out_read.c - a run's metrics.jsonl read for report and status
 * (report_out.h: report_out_read, report_out_load_run).  Shell.  Apart
 * from report_out.c so that status, which draws nothing, reads a run
 * without linking the charts (cairo). */
#include "launcher/job/report_out.h"     // defines: report_out_read, report_out_load_run
#include "common/exitcode.h"             // defines: enum hpt_exit
#include "common/fileio.h"               // defines: fileio_open_regular
#include "common/metrics_line.h"         // defines: metrics_line_say_capped
#include "common/runfile.h"              // defines: RUNFILE_*
#include "common/say.h"                  // defines: say
#include "common/sbuf.h"                 // defines: struct sbuf, xasprintf
#include "launcher/report/report_data.h" // defines: struct report_run, report_read_more

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A line at a time (report_read_more): a line's size is bounded
 * (REPORT_LINE_MAX), and the file's (METRICS_FILE_MAX: the rest is left
 * out, with a warning naming the file).  A regular file only: a FIFO in
 * its place must not hang the report. */
int report_out_read(const char *dir, struct report_run *r, struct sbuf *err)
{
	char *path = xasprintf("%s/" RUNFILE_METRICS, dir);
	size_t len = err->len;
	int fd = fileio_open_regular(path, 0, err);
	FILE *fp = NULL;

	if (fd >= 0 && (!(fp = fdopen(fd, "r")) || report_read_more(fp, r)))
		sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
	else if (fp && r->capped) {
		struct sbuf warn = SBUF_INIT;

		metrics_line_say_capped(path, &warn);
		say("warning: %s", warn.buf);
		sbuf_release(&warn);
	}
	if (fp)
		fclose(fp);
	else if (fd >= 0)
		close(fd);
	free(path);
	return err->len > len ? -1 : 0;
}

int report_out_load_run(const char *dir, struct report_run *r)
{
	struct sbuf err = SBUF_INIT;
	int status = 0;

	report_run_init(r);
	if (report_out_read(dir, r, &err)) {
		say("%s", err.buf);
		status = HPT_EXIT_NO_INPUT;
	}
	sbuf_release(&err);
	return status;
}
