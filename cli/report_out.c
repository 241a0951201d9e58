/* report_out.c - the files and output of `hpctrain report` (report_out.h).
 * Shell: writes the charts (chart.c draws them), report.md and the
 * --json document. */
#include "cli/report_out.h"        // defines: struct report_out, report_out_*
#include "cli/json_print.h"        // defines: json_print
#include "common/exitcode.h"       // defines: enum hpt_exit
#include "common/fileio.h"         // defines: fileio_mkdirs, fileio_write_atomic
#include "launcher/report/chart.h" // defines: struct chart, chart_write_png
#include "launcher/report/report_data.h"  // defines: struct report_run, report_read

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

json_t *report_out_num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

void report_out_skip(struct report_out *o, const char *name, const char *title,
		     const char *why)
{
	char *path = xasprintf("%s/%s.png", o->dir, name);

	unlink(path); /* an earlier report's, which report.md no longer shows */
	free(path);
	if (o->json)
		json_array_append_new(o->charts, json_pack("{s:s, s:n, s:s, s:s}", "name", name,
							   "file", "title", title, "not_drawn", why));
	else
		printf("  %s.png: not drawn: %s\n", name, why);
	sbuf_addf(&o->md, "- %s: not drawn (%s)\n\n", title, why);
}

void report_out_emit(struct report_out *o, struct chart *c, const char *name,
		     const char *why_none)
{
	struct sbuf err = SBUF_INIT;
	char *path = xasprintf("%s/%s.png", o->dir, name);

	if (!chart_has_data(c)) {
		report_out_skip(o, name, c->title, why_none);
	} else if (chart_write_png(c, path, &err)) {
		fprintf(stderr, "hpctrain report: %s\n", err.buf);
		o->status = HPT_EXIT_IO;
	} else {
		if (o->json)
			json_array_append_new(o->charts, json_pack("{s:s, s:s, s:s}", "name", name,
								   "file", path, "title", c->title));
		else
			printf("  %s\n", path);
		sbuf_addf(&o->md, "![%s](%s.png)\n\n", c->title, name);
	}
	chart_release(c);
	free(path);
	sbuf_release(&err);
}

/* A line at a time (report_read): no limit on the file's size, only on
 * a line's (REPORT_LINE_MAX). */
int report_out_load_run(const char *dir, struct report_run *r)
{
	char *path = xasprintf("%s/metrics.jsonl", dir);
	/* O_NONBLOCK: a FIFO in its place must not hang the report */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	const char *why = NULL;
	struct stat st;
	FILE *fp = NULL;

	report_run_init(r);
	if (fd < 0 || fstat(fd, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (!(fp = fdopen(fd, "r")) || report_read(fp, r))
		why = strerror(errno);
	if (why)
		fprintf(stderr, "hpctrain report: cannot %s %s: %s\n", fd < 0 ? "open" : "read", path,
			why);
	if (fp)
		fclose(fp);
	else if (fd >= 0)
		close(fd);
	free(path);
	return why ? HPT_EXIT_NO_INPUT : 0;
}

void report_out_step_series(const struct report_run *r, struct chart *c, const char *label,
			    size_t field)
{
	double *x = xcalloc(r->nsteps + 1, sizeof(double)), *y = xcalloc(r->nsteps + 1, sizeof(double));

	for (size_t i = 0; i < r->nsteps; i++) {
		x[i] = (double)r->steps[i].step;
		y[i] = *(const double *)((const char *)&r->steps[i] + field);
	}
	chart_add(c, label, x, y, r->nsteps);
	free(x);
	free(y);
}

int report_out_make_dir(const struct report_out *o)
{
	struct sbuf err = SBUF_INIT;
	int rc = fileio_mkdirs(o->dir, 0700, &err);

	if (rc)
		fprintf(stderr, "hpctrain report: cannot create %s: %s\n", o->dir, err.buf);
	sbuf_release(&err);
	return rc ? HPT_EXIT_IO : 0;
}

int report_out_write_md(struct report_out *o, const char *head)
{
	struct sbuf err = SBUF_INIT, doc = SBUF_INIT;
	char *path = xasprintf("%s/report.md", o->dir);
	int rc;

	sbuf_addf(&doc, "# hpctrain report\n\n```\n%s```\n\n%s", head, o->md.buf);
	rc = fileio_write_atomic(path, doc.buf, doc.len, 0600, 0, &err);
	o->md_written = !rc;
	if (rc)
		fprintf(stderr, "hpctrain report: %s\n", err.buf);
	else if (!o->json)
		printf("  %s\n", path);
	free(path);
	sbuf_release(&err);
	sbuf_release(&doc);
	return rc ? HPT_EXIT_IO : 0;
}

int report_out_print_json(struct report_out *o, json_t *doc)
{
	char *md = xasprintf("%s/report.md", o->dir);

	json_object_set_new(doc, "output", json_string(o->dir));
	json_object_set_new(doc, "report_md", o->md_written ? json_string(md) : json_null());
	json_object_set(doc, "charts", o->charts);
	free(md);
	return json_print(doc);
}
