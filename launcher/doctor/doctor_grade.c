/* doctor_grade.c - doctor's pure core: cells and their grades, the
 * comparisons across nodes, the table and the JSON (see doctor.h). */
#include "launcher/doctor/doctor.h" // defines: struct doctor_node, doctor_compare, doctor_table
#include "common/sbuf.h"     // defines: struct sbuf, xstrdup, sbuf_add_printable
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append, jsonb_text

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const check_names[DOCTOR_NCHECKS] = {
	"gpus", "nics", "binding", "compute", "network", "files", "services",
	"container",
};
static const char *const grade_names[] = { "skip", "ok", "warn", "FAIL" };

const char *doctor_check_name(enum doctor_check c)
{
	return c < DOCTOR_NCHECKS ? check_names[c] : "?";
}

const char *doctor_grade_name(enum doctor_grade g)
{
	return g <= DOCTOR_FAIL ? grade_names[g] : "?";
}

void doctor_node_init(struct doctor_node *n, const char *name)
{
	memset(n, 0, sizeof(*n));
	n->node = xstrdup(name);
	n->gemm_gflops = n->ring_gbps = -1;
	n->clock_offset_s = 0;
}

void doctor_node_release(struct doctor_node *n)
{
	if (!n)
		return;
	free(n->node);
	for (int i = 0; i < DOCTOR_NCHECKS; i++)
		free(n->cell[i].reason);
	memset(n, 0, sizeof(*n));
}

void doctor_note(struct doctor_cell *c, enum doctor_grade g, const char *fmt, ...)
{
	struct sbuf sb = SBUF_INIT;
	va_list ap;

	if (g > c->grade)
		c->grade = g;
	if (c->reason)
		sbuf_addf(&sb, "%s; ", c->reason);
	va_start(ap, fmt);
	sbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(c->reason);
	c->reason = sbuf_detach(&sb, NULL);
}

void doctor_limits_straggler(struct doctor_limits *lim, double fail)
{
	lim->straggler_fail = fail;
	if (lim->straggler_warn < fail)
		lim->straggler_warn = fail;
}

enum doctor_grade doctor_grade_space(uint64_t free_bytes, uint64_t total_bytes, double min_free_gb)
{
	double free_gb = (double)free_bytes / (1024.0 * 1024.0 * 1024.0);

	if (free_gb < min_free_gb)
		return DOCTOR_FAIL;
	if (free_gb < 2 * min_free_gb || (total_bytes && free_bytes < total_bytes / 20))
		return DOCTOR_WARN;
	return DOCTOR_OK;
}

void doctor_grade_stage_space(uint64_t needed, uint64_t free_bytes, const char *dir,
			      struct doctor_cell *out)
{
	double n = (double)needed / 1e9, f = (double)free_bytes / 1e9;

	if (needed > free_bytes)
		doctor_note(out, DOCTOR_FAIL, "needs %.2f GB for data.stage, %.2f GB free in %s", n, f,
			    dir);
	else if (!needed)
		doctor_note(out, DOCTOR_OK, "data.stage: all cached in %s", dir);
	else
		doctor_note(out, DOCTOR_OK, "data.stage needs %.2f GB of the %.2f GB free in %s", n, f,
			    dir);
}

void doctor_grade_slot(const struct doctor_slot *s, struct doctor_cell *out)
{
	struct sbuf a = SBUF_INIT, b = SBUF_INIT;

	if (out->grade < DOCTOR_OK)
		out->grade = DOCTOR_OK;
	if (s->bind_error) {
		doctor_note(out, DOCTOR_FAIL, "slot %u: %s", s->local_rank, s->bind_error);
		return;
	}
	if (s->got_cpus && !bitmap_equal(s->want_cpus, s->got_cpus)) {
		bitmap_format_list(s->want_cpus, &a);
		bitmap_format_list(s->got_cpus, &b);
		doctor_note(out, DOCTOR_FAIL, "slot %u: planned CPUs %s, the kernel gave %s",
			    s->local_rank, a.buf, b.buf);
	}
	sbuf_reset(&a);
	sbuf_reset(&b);
	if (s->want_mems && s->got_mems && !bitmap_equal(s->want_mems, s->got_mems)) {
		bitmap_format_list(s->want_mems, &a);
		bitmap_format_list(s->got_mems, &b);
		doctor_note(out, DOCTOR_FAIL, "slot %u: planned memory on NUMA %s, the policy holds %s",
			    s->local_rank, a.buf, b.buf);
	}
	sbuf_release(&a);
	sbuf_release(&b);
}

/* Compute: each node's one-core GEMM against the fastest node's. */
static void compare_compute(struct doctor_node *nodes, size_t n, const struct doctor_limits *lim)
{
	size_t best = n;

	for (size_t i = 0; i < n; i++)
		if (nodes[i].gemm_gflops > 0 && (best == n || nodes[i].gemm_gflops > nodes[best].gemm_gflops))
			best = i;
	for (size_t i = 0; i < n && best < n; i++) {
		struct doctor_cell *c = &nodes[i].cell[DOCTOR_COMPUTE];
		double r = nodes[i].gemm_gflops / nodes[best].gemm_gflops;

		if (nodes[i].gemm_gflops <= 0)
			continue;
		if (n == 1)
			doctor_note(c, DOCTOR_OK, "%.1f GFLOP/s fp32 GEMM on one core",
				    nodes[i].gemm_gflops);
		else
			doctor_note(c, r < lim->straggler_fail ? DOCTOR_FAIL
				       : r < lim->straggler_warn ? DOCTOR_WARN : DOCTOR_OK,
				    "%.1f GFLOP/s fp32 GEMM on one core, %.2f of the fastest node (%s)%s",
				    nodes[i].gemm_gflops, r, nodes[best].node,
				    r < lim->straggler_warn ? ": a straggler" : "");
	}
}

static enum doctor_grade link_grade(double gbps, double best, const struct doctor_limits *lim)
{
	double r = gbps / best;

	if (gbps <= 0)
		return DOCTOR_FAIL;
	return r < lim->link_fail ? DOCTOR_FAIL : r < lim->link_warn ? DOCTOR_WARN : DOCTOR_OK;
}

/* Network: link i is nodes[i] -> nodes[i+1] of the ring.  A slow link
 * does not say which end is at fault: a node fails when both its links
 * do, and is warned when one does. */
static void compare_network(struct doctor_node *nodes, size_t n, const struct doctor_limits *lim)
{
	double best = 0;

	if (n < 2) {
		if (n && nodes[0].cell[DOCTOR_NETWORK].grade == DOCTOR_SKIP && !nodes[0].cell[DOCTOR_NETWORK].reason)
			doctor_note(&nodes[0].cell[DOCTOR_NETWORK], DOCTOR_SKIP, "one node: no link to test");
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (nodes[i].ring_gbps > best)
			best = nodes[i].ring_gbps;
	for (size_t i = 0; i < n; i++) {
		size_t prev = (i + n - 1) % n;
		const struct doctor_node *in = &nodes[prev], *out = &nodes[i];
		enum doctor_grade gin = link_grade(in->ring_gbps, best, lim);
		enum doctor_grade gout = link_grade(out->ring_gbps, best, lim);
		struct doctor_cell *c = &nodes[i].cell[DOCTOR_NETWORK];
		enum doctor_grade g = gin < gout ? gin : gout; /* the better of its two links */

		if (gin == DOCTOR_OK && gout == DOCTOR_OK) {
			doctor_note(c, DOCTOR_OK, "ring: %.2f GB/s in from %s, %.2f GB/s out to %s",
				    in->ring_gbps, in->node, out->ring_gbps, nodes[(i + 1) % n].node);
			continue;
		}
		if (g == DOCTOR_OK)
			g = DOCTOR_WARN;
		if (gin != DOCTOR_OK)
			doctor_note(c, g, "link %s -> %s: %.2f GB/s, %.2f of the fastest link", in->node,
				    nodes[i].node, in->ring_gbps > 0 ? in->ring_gbps : 0,
				    in->ring_gbps > 0 ? in->ring_gbps / best : 0);
		if (gout != DOCTOR_OK)
			doctor_note(c, g, "link %s -> %s: %.2f GB/s, %.2f of the fastest link", nodes[i].node,
				    nodes[(i + 1) % n].node, out->ring_gbps > 0 ? out->ring_gbps : 0,
				    out->ring_gbps > 0 ? out->ring_gbps / best : 0);
	}
}

static void compare_clocks(struct doctor_node *nodes, size_t n, const struct doctor_limits *lim)
{
	for (size_t i = 1; i < n; i++) {
		double off = fabs(nodes[i].clock_offset_s);

		if (off >= lim->skew_fail_s || off >= lim->skew_warn_s)
			doctor_note(&nodes[i].cell[DOCTOR_SERVICES],
				    off >= lim->skew_fail_s ? DOCTOR_FAIL : DOCTOR_WARN,
				    "clock %+.3f s off %s's", nodes[i].clock_offset_s, nodes[0].node);
	}
}

void doctor_compare(struct doctor_node *nodes, size_t n, const struct doctor_limits *lim)
{
	compare_compute(nodes, n, lim);
	compare_network(nodes, n, lim);
	compare_clocks(nodes, n, lim);
}

bool doctor_node_failed(const struct doctor_node *n)
{
	for (int i = 0; i < DOCTOR_NCHECKS; i++)
		if (n->cell[i].grade == DOCTOR_FAIL)
			return true;
	return false;
}

/* Ends a row: no trailing blanks. */
static void end_row(struct sbuf *out)
{
	while (out->len && out->buf[out->len - 1] == ' ')
		out->buf[--out->len] = '\0';
	sbuf_addch(out, '\n');
}

/* Node names come from every node's environment, reasons quote paths,
 * interface names and variables: escaped (sbuf_add_printable) before
 * they reach a terminal. */
static char *printable(const char *s)
{
	struct sbuf sb = SBUF_INIT;

	sbuf_add_printable(&sb, s);
	return sbuf_detach(&sb, NULL);
}

/* The lines under the table: each cell's reason, warnings and failures
 * only unless verbose. */
static void add_reasons(const struct doctor_node *nodes, char *const *names, size_t n, int w,
			bool verbose, struct sbuf *out)
{
	bool first = true;

	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < DOCTOR_NCHECKS; c++) {
			const struct doctor_cell *cell = &nodes[i].cell[c];

			if (!cell->reason || (!verbose && cell->grade < DOCTOR_WARN))
				continue;
			sbuf_addf(out, "%s%-*s  %-8s  %-4s  ", first ? "\n" : "", w, names[i],
				  doctor_check_name(c), doctor_grade_name(cell->grade));
			sbuf_add_printable(out, cell->reason);
			sbuf_addch(out, '\n');
			first = false;
		}
}

void doctor_table(const struct doctor_node *nodes, size_t n, bool verbose, struct sbuf *out)
{
	char **names = xcalloc(n + 1, sizeof(*names));
	int w = 4;

	for (size_t i = 0; i < n; i++) {
		names[i] = printable(nodes[i].node);
		if ((int)strlen(names[i]) > w)
			w = (int)strlen(names[i]);
	}
	sbuf_addf(out, "%-*s", w, "node");
	for (int c = 0; c < DOCTOR_NCHECKS; c++)
		sbuf_addf(out, "  %-8s", doctor_check_name(c));
	end_row(out);
	for (size_t i = 0; i < n; i++) {
		sbuf_addf(out, "%-*s", w, names[i]);
		for (int c = 0; c < DOCTOR_NCHECKS; c++)
			sbuf_addf(out, "  %-8s", doctor_grade_name(nodes[i].cell[c].grade));
		end_row(out);
	}
	add_reasons(nodes, names, n, w, verbose, out);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

json_t *doctor_node_json(const struct doctor_node *n)
{
	json_t *checks = json_object();

	/* a reason may quote a path or a device's answer: bytes, carried
	 * escaped, so a node's verdict never loses a check */
	for (int c = 0; c < DOCTOR_NCHECKS; c++)
		jsonb_set(&checks, doctor_check_name(c),
			  json_pack("{s:s, s:o*}", "grade", grade_names[n->cell[c].grade], "reason",
				    n->cell[c].reason ? jsonb_text(n->cell[c].reason) : NULL));
	return json_pack("{s:o, s:b, s:o, s:f, s:f, s:f, s:f}", "node", jsonb_text(n->node), "failed",
			 doctor_node_failed(n), "checks", checks, "gemm_gflops", n->gemm_gflops,
			 "ring_gbps", n->ring_gbps, "clock_offset_s", n->clock_offset_s, "checks_s",
			 n->checks_s);
}

static int grade_of(const char *s)
{
	for (int g = 0; g <= DOCTOR_FAIL; g++)
		if (!strcmp(s, grade_names[g]))
			return g;
	return -1;
}

int doctor_node_from_json(const json_t *j, struct doctor_node *out)
{
	const char *name = NULL;
	json_t *checks = NULL;

	if (json_unpack((json_t *)j, "{s:s, s:o, s:F, s:F, s:F, s?F}", "node", &name, "checks",
			&checks, "gemm_gflops", &out->gemm_gflops, "ring_gbps", &out->ring_gbps,
			"clock_offset_s", &out->clock_offset_s, "checks_s", &out->checks_s))
		return -1;
	out->node = xstrdup(name);
	for (int c = 0; c < DOCTOR_NCHECKS; c++) {
		const char *grade = NULL, *reason = NULL;
		int g;

		if (json_unpack(json_object_get(checks, doctor_check_name(c)), "{s:s, s?s}", "grade",
				&grade, "reason", &reason) || (g = grade_of(grade)) < 0)
			return -1;
		out->cell[c].grade = (enum doctor_grade)g;
		out->cell[c].reason = reason ? xstrdup(reason) : NULL;
	}
	return 0;
}

json_t *doctor_json(const struct doctor_node *nodes, size_t n, const char *exclude)
{
	json_t *arr = json_array(), *failed = json_array();

	for (size_t i = 0; i < n; i++) {
		jsonb_append(&arr, doctor_node_json(&nodes[i]));
		if (doctor_node_failed(&nodes[i]))
			jsonb_append(&failed, jsonb_text(nodes[i].node));
	}
	return json_pack("{s:o, s:o, s:o, s:b}", "nodes", arr, "failed", failed, "exclude",
			 jsonb_text(exclude ? exclude : ""), "ok", json_array_size(failed) == 0);
}
