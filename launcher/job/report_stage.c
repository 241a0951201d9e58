/* report_stage.c - the staging part of `hpctrain report` (report_stage.h).
 * Shell: the summary is read by the caller (stage_summary_load); this
 * writes its lines, its section of report.md and its chart. */
#include "launcher/job/report_stage.h"            // defines: report_stage_*
#include "launcher/job/report_out.h"              // defines: struct report_out, report_out_emit
#include "common/sbuf.h"                 // defines: struct sbuf, sbuf_add_number, sbuf_add_printable
#include "launcher/report/chart.h"       // defines: struct chart, chart_*, CHART_MAX_TICKS
#include "launcher/report/report_data.h" // defines: struct report_run
#include "common/data_read.h"     // defines: data_read_format, data_read_json
#include "common/jsonb.h" // defines: jsonb_set

#include <math.h>
#include <stdlib.h>

void report_stage_head(const struct stage_summary *s, const struct report_run *r,
		       struct sbuf *head)
{
	if (s->n) {
		sbuf_addstr(head, "  stage: ");
		stage_summary_format(s, head);
		sbuf_addch(head, '\n');
	} else if (s->skipped) {
		sbuf_addf(head, "  stage: no readable record (%zu skipped)\n", s->skipped);
	}
	if (r->data.seen) {
		sbuf_addstr(head, "  ");
		data_read_format(&r->data, head);
		sbuf_addch(head, '\n');
	}
}

/* A node's name in a Markdown table cell: escaped, and no '|' to end
 * the cell early. */
static void add_cell(struct sbuf *md, const char *name)
{
	struct sbuf p = SBUF_INIT;

	sbuf_add_printable(&p, name);
	for (size_t i = 0; i < p.len; i++) {
		if (p.buf[i] == '|')
			sbuf_addch(md, '\\');
		sbuf_addch(md, p.buf[i]);
	}
	sbuf_release(&p);
}

static void add_table(struct sbuf *md, const struct stage_summary *s)
{
	sbuf_addstr(md, "| node | stage s | read | sent | received | hits | fetched again |\n"
			"| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	for (size_t i = 0; i < s->n; i++) {
		const struct stage_node *nd = &s->nodes[i];

		sbuf_addstr(md, "| ");
		add_cell(md, nd->node);
		sbuf_addstr(md, " | ");
		sbuf_add_number(md, nd->seconds, 2);
		sbuf_addstr(md, " | ");
		sbuf_add_bytes(md, (double)nd->bytes_read);
		sbuf_addstr(md, " | ");
		sbuf_add_bytes(md, (double)nd->bytes_sent);
		sbuf_addstr(md, " | ");
		sbuf_add_bytes(md, (double)nd->bytes_received);
		sbuf_addf(md, " | %zu/%zu | %zu |\n", nd->hits, nd->entries, nd->refetched);
	}
	sbuf_addch(md, '\n');
}

/* Stage seconds per node: named on the x axis when the names fit its
 * ticks, else numbered in the table's order.  O(nodes). */
static void add_chart(struct report_out *o, const struct stage_summary *s)
{
	double *x = xcalloc(s->n + 1, sizeof(double)), *y = xcalloc(s->n + 1, sizeof(double));
	struct sbuf *names = xcalloc(s->n + 1, sizeof(*names));
	const char **xnames = xcalloc(s->n + 1, sizeof(*xnames));
	bool named = s->n <= CHART_MAX_TICKS;
	struct chart c;

	chart_init(&c, "stage time per node (the slowest node holds every node's training back)",
		   named ? "node" : "node (its row in the table, from 0)", "seconds", o->width,
		   o->height);
	c.y_from_zero = true;
	c.x_whole = true;
	for (size_t i = 0; i < s->n; i++) {
		x[i] = (double)i;
		y[i] = s->nodes[i].seconds;
		sbuf_init(&names[i]);
		sbuf_add_printable(&names[i], s->nodes[i].node);
		xnames[i] = names[i].buf;
	}
	if (named) {
		c.xnames = xnames;
		c.nxnames = s->n;
	}
	chart_add(&c, "", x, y, s->n)->bars = true;
	report_out_emit(o, &c, "stage", "no node's record says its stage time");
	for (size_t i = 0; i < s->n; i++)
		sbuf_release(&names[i]);
	free(names);
	free(xnames);
	free(x);
	free(y);
}

void report_stage_section(struct report_out *o, const struct stage_summary *s)
{
	if (!s->n) {
		/* a run without a staging step: no section, and no stale chart */
		report_out_forget(o, "stage");
		return;
	}
	sbuf_addstr(&o->md, "## Staging\n\n");
	stage_summary_format(s, &o->md);
	sbuf_addstr(&o->md, "; median node ");
	sbuf_add_number(&o->md, s->median_s, 2);
	sbuf_addstr(&o->md, " s\n\n");
	add_table(&o->md, s);
	add_chart(o, s);
}

void report_stage_json(json_t **doc, const struct stage_summary *s, const struct report_run *r)
{
	jsonb_set(doc, "stage", s->n || s->skipped ? stage_summary_json(s) : json_null());
	jsonb_set(doc, "data_read", data_read_json(&r->data));
}
