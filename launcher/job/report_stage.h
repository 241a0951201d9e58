/* report_stage.h - the staging part of `hpctrain report` for one run:
 * the nodes' stage records summed (launcher/runs/stage_summary) and the
 * trainer's data read (common/data_read), as summary lines, a
 * "Staging" section of report.md with a table of nodes and a chart of
 * stage time per node (stage.png), and the --json fields. */
#ifndef HPT_REPORT_STAGE_H
#define HPT_REPORT_STAGE_H

#include "launcher/runs/stage_summary.h" // defines: struct stage_summary

#include <jansson.h>

struct report_out;
struct report_run;
struct sbuf;

/* The summary lines for run r ("  stage: 3 nodes, ...", "  data read at
 * ..."), appended to head; nothing for what the run did not do. */
void report_stage_head(const struct stage_summary *s, const struct report_run *r,
		       struct sbuf *head);

/* The Staging section into o->md and stage.png into o->dir, when s has
 * records; otherwise an earlier report's stage.png is removed (as
 * report_out_skip does) and nothing is said. */
void report_stage_section(struct report_out *o, const struct stage_summary *s);

/* Adds "stage" (stage_summary_json, or null) and "data_read" to *doc, or
 * drops *doc when one cannot be built (jsonb_set). */
void report_stage_json(json_t **doc, const struct stage_summary *s, const struct report_run *r);

#endif
