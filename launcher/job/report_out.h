/* report_out.h - what `hpctrain report` writes, for a run and a sweep
 * alike: the charts (or why one is not drawn), report.md and, with
 * --json, the document it prints instead of the text. */
#ifndef HPT_REPORT_OUT_H
#define HPT_REPORT_OUT_H

#include "common/sbuf.h" // defines: struct sbuf
#include "launcher/report/report_manifest.h" // defines: struct report_manifest

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct chart;
struct report_run;

struct report_out {
	const char *dir;    /* where the files go */
	int width, height;  /* of each chart */
	bool json;          /* --json: no text on stdout, one document */
	struct sbuf md;     /* report.md, after its summary */
	json_t *charts;     /* --json: each chart, drawn or not */
	int status;         /* HPT_EXIT_IO once a file could not be written */
	bool md_written;    /* report.md is there */
	struct report_manifest manifest; /* the charts report wrote in dir */
};

/* Draws c into DIR/NAME.png and releases it; when c has no data, says
 * why_none instead (on stdout, in report.md and in charts).  Every file
 * is written to a fresh temporary file and renamed (chart_write_png). */
void report_out_emit(struct report_out *o, struct chart *c, const char *name,
		     const char *why_none);
/* A chart not drawn: title and why.  An earlier report's NAME.png is
 * removed only when the manifest says report wrote it and it is
 * unchanged since: a user's own file of that name stays. */
void report_out_skip(struct report_out *o, const char *name, const char *title,
		     const char *why);

/* A chart that has no place in this report at all (a run without a
 * staging step has no stage.png): an earlier report's NAME.png is
 * removed as report_out_skip does, and nothing is said. */
void report_out_forget(struct report_out *o, const char *name);

/* Reads DIR/metrics.jsonl onto what r holds (report_read_more).  0, or
 * -1 with err ("cannot open DIR/metrics.jsonl: ..."). */
int report_out_read(const char *dir, struct report_run *r, struct sbuf *err);
/* Reads DIR/metrics.jsonl into r.  0, or HPT_EXIT_NO_INPUT after saying
 * which file could not be read. */
int report_out_load_run(const char *dir, struct report_run *r);
/* Adds the series field (an offsetof in struct report_step) of r's steps. */
void report_out_step_series(const struct report_run *r, struct chart *c, const char *label,
			    size_t field);

/* Makes o->dir (0700 when it is made; an existing one is used whoever
 * owns it, as nothing is written through a link or removed unless the
 * manifest names it) and reads its manifest; 0, or HPT_EXIT_IO after
 * saying why. */
int report_out_make_dir(struct report_out *o);
/* Writes DIR/report.md (0600): the summary text head, then the charts;
 * then the manifest (a failure there is a warning).  0 or HPT_EXIT_IO. */
int report_out_write_md(struct report_out *o, const char *head);
/* Prints the --json document (steals doc), adding "output" and "charts".
 * Returns the exit status. */
int report_out_print_json(struct report_out *o, json_t *doc);

/* Frees what o holds (the report text, the charts, the manifest). */
void report_out_release(struct report_out *o);

/* A number for the --json document: null for NAN. */
json_t *report_out_num(double v);

#endif
