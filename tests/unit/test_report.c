/* test_report.c - launcher/report/report_data and chart: metrics.jsonl
 * parsing (torn lines, steps repeated after a resume, records with only
 * the required fields, a resumed run of the trainer, a stream read in
 * pieces, a line too long, figures no run could log), the slow ranks
 * named from records or rates, ticks (a range
 * beyond DBL_MAX too), the legend's
 * place, and a chart decoded with libpng to find its curve where the data
 * puts it, and a flag's line at its step. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/sbuf.h"           // defines: struct sbuf
#include "launcher/report/chart.h" // defines: struct chart, chart_write_png
#include "launcher/report/report_data.h"  // defines: report_parse
#include "common/metrics_line.h"         // defines: METRICS_FILE_MAX, metrics_line_say_capped
#include "launcher/report/report_straggler.h" // defines: report_stragglers
#include "launcher/runs/progress.h"      // defines: progress_parse, struct run_progress

#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void report__keeps_the_last_record_of_a_step_and_skips_torn_lines(void **state)
{
	static const char text[] =
		"{\"event\":\"step\",\"step\":10,\"epoch\":0,\"loss\":2.0,\"lr\":0.1,\"samples_per_s\":100}\n"
		"{\"event\":\"step\",\"step\":20,\"epoch\":0,\"loss\":1.5,\"samples_per_s\":90,"
		"\"rank_samples_per_s\":[90,45]}\n"
		"{\"event\":\"step\",\"step\":30,\"epoch\":0,\"loss\":1.4}\n"
		/* requeued: resumed from the checkpoint at step 20 */
		"{\"event\":\"step\",\"step\":30,\"epoch\":0,\"loss\":1.3,\"comm_ms\":1,\"step_ms\":4}\n"
		"{\"event\":\"epoch\",\"epoch\":1,\"steps\":30,\"test_loss\":1.2,\"test_accuracy\":0.6}\n"
		"{\"event\":\"summary\",\"steps\":30,\"test_accuracy\":0.61,\"test_loss\":1.19,"
		"\"mean_samples_per_s\":95,\"ranks\":2}\n"
		"{\"event\":\"step\",\"st";
	struct report_run r;

	(void)state;
	report_parse(text, strlen(text), &r);
	assert_int_equal(r.nsteps, 3);
	assert_true(r.steps[2].loss == 1.3);
	assert_true(isnan(r.steps[0].accuracy));
	assert_int_equal(r.steps[1].nranks, 2);
	assert_true(r.steps[1].rank_rates[1] == 45);
	assert_int_equal(report_max_ranks(&r), 2);
	assert_true(report_has_comm(&r));
	assert_int_equal(r.nepochs, 1);
	assert_int_equal(r.epochs[0].step, 30);
	assert_true(r.summary && r.test_accuracy == 0.61 && r.ranks == 2);
	assert_true(report_throughput(&r, 2) == 190);
	assert_int_equal(r.bad_lines, 1);
	report_run_release(&r);
}

static void report__a_restart_supersedes_what_the_killed_run_logged_after_its_checkpoint(void **state)
{
	/* logged every 5 steps, killed after 110; the resumed run logs
	 * every 2 from the checkpoint at 100 */
	static const char text[] =
		"{\"event\":\"step\",\"step\":100,\"loss\":1.0}\n"
		"{\"event\":\"step\",\"step\":105,\"loss\":0.9}\n"
		"{\"event\":\"step\",\"step\":110,\"loss\":0.8}\n"
		"{\"event\":\"step\",\"step\":102,\"loss\":0.95}\n"
		"{\"event\":\"step\",\"step\":104,\"loss\":0.93}\n";
	struct report_run r;

	(void)state;
	report_parse(text, strlen(text), &r);
	assert_int_equal(r.nsteps, 3);
	assert_int_equal(r.steps[0].step, 100);
	assert_int_equal(r.steps[1].step, 102);
	assert_int_equal(r.steps[2].step, 104);
	assert_true(r.steps[2].loss == 0.93);
	assert_int_equal(r.restarts, 1);
	assert_int_equal(r.superseded, 2);
	assert_int_equal(r.bad_lines, 0);
	report_run_release(&r);
}

static void report__keeps_a_record_glued_to_a_torn_line(void **state)
{
	/* killed mid-write, then resumed: the new run appends right after
	 * the torn bytes */
	static const char text[] =
		"{\"event\":\"step\",\"step\":10,\"loss\":2.0}\n"
		"{\"event\":\"step\",\"step\":20,\"lo"
		"{\"event\":\"step\",\"step\":20,\"loss\":1.5}\n"
		"\n"
		"not json\n";
	struct report_run r;

	(void)state;
	report_parse(text, strlen(text), &r);
	assert_int_equal(r.nsteps, 2);
	assert_true(r.steps[1].loss == 1.5);
	assert_int_equal(r.bad_lines, 2);
	report_run_release(&r);
}

static void report__and_status_read_the_same_records_of_one_file(void **state)
{
	/* one reader of metrics.jsonl (common/metrics_line.c): a record
	 * with a key twice counts for neither, a record glued to a torn
	 * line counts for both */
	static const char text[] =
		"{\"event\":\"step\",\"step\":10,\"loss\":2.0,\"samples_per_s\":5}\n"
		"{\"event\":\"step\",\"step\":30,\"step\":40,\"loss\":1.0}\n"
		"{\"event\":\"step\",\"step\":20,\"lo"
		"{\"event\":\"step\",\"step\":20,\"loss\":1.5,\"samples_per_s\":7}\n";
	struct run_progress p;
	struct report_run r;

	(void)state;
	report_parse(text, strlen(text), &r);
	progress_parse(text, strlen(text), &p);
	assert_int_equal(r.nsteps, 2);
	assert_int_equal(r.steps[1].step, 20);
	assert_int_equal(r.bad_lines, 2);
	assert_true(p.step_seen);
	assert_int_equal(p.step, 20);
	assert_true(p.samples_per_s == 7);
	report_run_release(&r);
}

/* A figure no run logs makes the record a bad line for report, plan and
 * status alike: each bound, just inside and just outside. */
static void report__and_status_skip_a_record_of_implausible_figures(void **state)
{
	static const char *const bad[] = {
		"\"step_ms\":1e308", "\"step_ms\":1e-300", "\"step_ms\":0", "\"step_ms\":-5",
		"\"step_ms\":1.00001e7", "\"samples_per_s\":0", "\"samples_per_s\":1e308",
		"\"comm_ms\":-1", "\"global_batch\":-64", "\"world_size\":-2",
		"\"attempt\":-1", "\"epoch\":-1", "\"rank_samples_per_s\":[5,1e300]",
	};
	static const char good[] = "\"step_ms\":1e7,\"samples_per_s\":1e12,\"comm_ms\":0,"
				   "\"rank_samples_per_s\":[5,null,0],\"epoch\":0";
	char line[256];
	struct run_progress p;
	struct report_run r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "{\"event\":\"step\",\"step\":3,%s}\n", bad[i]);
		report_parse(line, strlen(line), &r);
		progress_parse(line, strlen(line), &p);
		if (r.nsteps || r.bad_lines != 1 || p.step_seen)
			fail_msg("%s: %zu steps, %zu bad, seen %d", bad[i], r.nsteps, r.bad_lines,
				 p.step_seen);
		report_run_release(&r);
	}
	snprintf(line, sizeof(line), "{\"event\":\"step\",\"step\":-3}\n"
		 "{\"event\":\"summary\",\"mean_samples_per_s\":1.7e308,\"ranks\":1}\n"
		 "{\"event\":\"step\",\"step\":3,%s}\n", good);
	report_parse(line, strlen(line), &r);
	progress_parse(line, strlen(line), &p);
	assert_int_equal(r.nsteps, 1);
	assert_int_equal(r.bad_lines, 2);
	assert_false(r.summary);
	assert_true(r.steps[0].step_ms == 1e7);
	assert_true(p.step_seen && !p.summary_seen);
	report_run_release(&r);
}

static void report__keeps_the_last_data_record_of_a_resumed_run(void **state)
{
	/* each start reads its data set again: the latest read is the one
	 * the run goes on with; a data record is no bad line */
	static const char text[] =
		"{\"event\":\"data\",\"path\":\"/shared/ds\",\"staged\":false,\"bytes\":100,\"seconds\":2}\n"
		"{\"event\":\"step\",\"step\":10,\"loss\":2.0}\n"
		"{\"event\":\"data\",\"path\":\"/tmp/c/ab\",\"staged\":true,\"bytes\":100,\"seconds\":0.5}\n";
	struct report_run r;

	(void)state;
	report_parse(text, strlen(text), &r);
	assert_true(r.data.seen && r.data.staged);
	assert_string_equal(r.data.path, "/tmp/c/ab");
	assert_float_equal(data_read_rate(&r.data), 200, 1e-9);
	assert_int_equal(r.bad_lines, 0);
	report_run_release(&r);
}

static void report__reads_records_with_only_the_required_fields(void **state)
{
	/* what a user's own loop may write: no epoch, accuracy, rates */
	static const char text[] =
		"{\"event\":\"step\",\"step\":1,\"loss\":0.7}\n"
		"{\"event\":\"step\",\"step\":2}\n"
		"{\"event\":\"epoch\",\"epoch\":1,\"test_accuracy\":0.5}\n"
		"{\"event\":\"step\",\"loss\":0.1}\n"
		"{\"event\":\"checkpoint\",\"step\":2}\n"
		"{\"event\":\"summary\"}\n";
	struct report_run r;

	(void)state;
	report_parse(text, strlen(text), &r);
	assert_int_equal(r.nsteps, 2);
	assert_true(r.steps[0].loss == 0.7);
	assert_true(isnan(r.steps[0].accuracy) && isnan(r.steps[0].lr) &&
		    isnan(r.steps[0].samples_per_s) && isnan(r.steps[0].comm_ms));
	assert_true(isnan(r.steps[1].loss));
	assert_null(r.steps[0].rank_rates);
	assert_false(report_has_comm(&r));
	assert_int_equal(report_max_ranks(&r), 0);
	/* an epoch without "steps" ended at the last step logged */
	assert_int_equal(r.nepochs, 1);
	assert_int_equal(r.epochs[0].step, 2);
	assert_true(isnan(r.epochs[0].test_loss));
	/* a step without its number is bad; an unknown event is not */
	assert_int_equal(r.bad_lines, 1);
	assert_true(r.summary && isnan(r.test_accuracy) && r.ranks == 0);
	assert_true(isnan(report_throughput(&r, 1)));
	report_run_release(&r);
}

/* A run the trainer logged every 4 steps, killed at step 132 and resumed
 * from its checkpoint at step 100 (tests/fixtures/PROVENANCE). */
static void report__reads_a_resumed_run_of_the_trainer(void **state)
{
	const char *dir = getenv("HPT_FIXTURES");
	char *path = xasprintf("%s/metrics/resumed/metrics.jsonl", dir && *dir ? dir : "tests/fixtures");
	struct sbuf text = SBUF_INIT;
	struct report_run r;
	char buf[4096];
	size_t n;
	FILE *fp = fopen(path, "r");

	(void)state;
	assert_non_null(fp);
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
		sbuf_add(&text, buf, n);
	fclose(fp);
	report_parse(text.buf, text.len, &r);
	assert_int_equal(r.nsteps, 60);
	for (size_t i = 0; i < r.nsteps; i++)
		assert_int_equal(r.steps[i].step, 4 * (int64_t)(i + 1));
	assert_int_equal(r.restarts, 1);
	assert_int_equal(r.superseded, 8); /* 104 to 132 */
	assert_int_equal(r.nepochs, 2);
	assert_int_equal(r.epochs[0].step, 120);
	assert_int_equal(r.epochs[1].step, 240);
	assert_true(r.summary && r.ranks == 1);
	assert_true(fabs(r.test_accuracy - 0.8458) < 1e-9);
	assert_int_equal(r.bad_lines, 0);
	report_run_release(&r);
	sbuf_release(&text);
	free(path);
}

/* report_read takes the file in 64 KiB reads: a record of 40,000 ranks'
 * rates spans several of them, others straddle a boundary, the last has no
 * newline; it reads what report_parse reads of the whole text. */
static void report__reads_a_stream_whose_lines_cross_its_reads(void **state)
{
	struct sbuf text = SBUF_INIT;
	struct report_run whole, streamed;
	FILE *fp = tmpfile();

	(void)state;
	assert_non_null(fp);
	for (int step = 1; step <= 400; step++) {
		sbuf_addf(&text, "{\"event\":\"step\",\"step\":%d,\"loss\":%d.5", step, step);
		if (step == 200) {
			sbuf_addstr(&text, ",\"rank_samples_per_s\":[0");
			for (int r = 1; r < 40000; r++)
				sbuf_addf(&text, ",%d", r);
			sbuf_addch(&text, ']');
		}
		sbuf_addstr(&text, "}\n");
	}
	sbuf_addstr(&text, "{\"event\":\"summary\",\"test_accuracy\":0.5,\"ranks\":20000}");
	assert_true(text.len > 3 * 65536);
	assert_int_equal(fwrite(text.buf, 1, text.len, fp), text.len);
	rewind(fp);
	assert_int_equal(report_read(fp, &streamed), 0);
	report_parse(text.buf, text.len, &whole);
	assert_int_equal(streamed.nsteps, 400);
	assert_int_equal(streamed.nsteps, whole.nsteps);
	for (size_t i = 0; i < streamed.nsteps; i++)
		assert_true(streamed.steps[i].loss == whole.steps[i].loss);
	assert_int_equal(streamed.steps[199].nranks, 40000);
	assert_true(streamed.steps[199].rank_rates[39999] == 39999);
	assert_true(streamed.summary && streamed.test_accuracy == 0.5 && streamed.ranks == 20000);
	assert_int_equal(streamed.bad_lines, 0);
	report_run_release(&streamed);
	report_run_release(&whole);
	fclose(fp);
	sbuf_release(&text);
}

/* A line beyond REPORT_LINE_MAX is dropped unread, and counted. */
static void report__drops_a_line_too_long_to_be_a_record(void **state)
{
	static const char rec[] = "{\"event\":\"step\",\"step\":1,\"loss\":2}\n";
	size_t big = REPORT_LINE_MAX + 10;
	char *junk = malloc(big);
	struct report_run r;
	FILE *fp = tmpfile();

	(void)state;
	assert_non_null(fp);
	assert_non_null(junk);
	memset(junk, 'x', big);
	assert_int_equal(fwrite(rec, 1, sizeof(rec) - 1, fp), sizeof(rec) - 1);
	assert_int_equal(fwrite(junk, 1, big, fp), big);
	fputs("\n{\"event\":\"step\",\"step\":2,\"loss\":1}\n", fp);
	rewind(fp);
	assert_int_equal(report_read(fp, &r), 0);
	assert_int_equal(r.nsteps, 2);
	assert_int_equal(r.bad_lines, 1);
	report_run_release(&r);
	fclose(fp);
	free(junk);
}

/* A file past METRICS_FILE_MAX (a sparse one: no disk, ~1 s of reading
 * zeros) is read up to the cap and no further: the record after it is
 * not taken, and capped says so for the caller's warning. */
static void report__stops_at_the_cap_of_a_metrics_file(void **state)
{
	static const char rec[] = "{\"event\":\"step\",\"step\":1,\"loss\":2}\n";
	struct report_run r;
	struct sbuf warn = SBUF_INIT;
	FILE *fp = tmpfile();

	(void)state;
	assert_non_null(fp);
	assert_int_equal(fwrite(rec, 1, sizeof(rec) - 1, fp), sizeof(rec) - 1);
	assert_int_equal(fseeko(fp, (off_t)METRICS_FILE_MAX + 100, SEEK_SET), 0);
	fputs("\n{\"event\":\"step\",\"step\":2,\"loss\":1}\n", fp);
	rewind(fp);
	assert_int_equal(report_read(fp, &r), 0);
	assert_true(r.capped);
	assert_int_equal(r.nsteps, 1);
	report_run_release(&r);
	rewind(fp); /* a file within the cap is not */
	assert_int_equal(ftruncate(fileno(fp), (off_t)sizeof(rec) - 1), 0);
	assert_int_equal(report_read(fp, &r), 0);
	assert_false(r.capped);
	report_run_release(&r);
	fclose(fp);
	metrics_line_say_capped("RUN/metrics.jsonl", &warn);
	assert_string_equal(warn.buf, "RUN/metrics.jsonl is larger than 1 GiB: only its first "
			    "1 GiB was read");
	sbuf_release(&warn);
}

static void report__ticks_are_round_and_cover_the_data(void **state)
{
	double t[CHART_MAX_TICKS], a, b;
	size_t n;

	(void)state;
	n = chart_nice_ticks(0.013, 0.97, 7, t, &a, &b);
	assert_true(a <= 0.013 && b >= 0.97 && n >= 3 && n <= 7);
	assert_true(fabs(t[1] - t[0] - 0.2) < 1e-12 || fabs(t[1] - t[0] - 0.1) < 1e-12 ||
		    fabs(t[1] - t[0] - 0.5) < 1e-12);
	n = chart_nice_ticks(5, 5, 7, t, &a, &b); /* one value: a range around it */
	assert_true(a < 5 && b > 5 && n >= 2);
}

/* The decoded image, RGB. */
struct image {
	png_image png;
	unsigned char *px;
};

static void decode(const char *path, struct image *im)
{
	memset(im, 0, sizeof(*im));
	im->png.version = PNG_IMAGE_VERSION;
	assert_true(png_image_begin_read_from_file(&im->png, path));
	im->png.format = PNG_FORMAT_RGB;
	im->px = malloc(PNG_IMAGE_SIZE(im->png));
	assert_non_null(im->px);
	assert_true(png_image_finish_read(&im->png, NULL, im->px, 0, NULL));
}

static bool near(const unsigned char *p, const unsigned char rgb[3])
{
	return abs(p[0] - rgb[0]) + abs(p[1] - rgb[1]) + abs(p[2] - rgb[2]) < 60;
}

/* Whether series 0's colour is in column x between rows y0 and y1. */
static bool curve_in(const struct image *im, int x, int y0, int y1)
{
	unsigned char rgb[3];

	chart_color(0, rgb);
	for (int y = y0 < 0 ? 0 : y0; y <= y1 && y < (int)im->png.height; y++)
		if (near(im->px + 3 * ((size_t)y * im->png.width + (size_t)x), rgb))
			return true;
	return false;
}

static void report__draws_the_curve_where_the_data_says(void **state)
{
	char dir[] = "/tmp/test_report.XXXXXX", path[64];
	double x[100], y[100];
	struct sbuf err = SBUF_INIT;
	struct chart c;
	struct image im;
	int col, row;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/loss.png", dir);
	/* 2.0 until step 49, then 0.5: the curve drops at step 50 */
	for (int i = 0; i < 100; i++) {
		x[i] = i;
		y[i] = i < 50 ? 2.0 : 0.5;
	}
	chart_init(&c, "loss", "step", "loss", 640, 360);
	chart_add(&c, "training", x, y, 100);
	assert_int_equal(chart_write_png(&c, path, &err), 0);
	decode(path, &im);
	assert_int_equal(im.png.width, 640);
	assert_int_equal(im.png.height, 360);
	/* at step 25 the curve is at 2.0, and not at 0.5 */
	col = (int)lround(chart_map_x(&c, 25));
	row = (int)lround(chart_map_y(&c, 2.0));
	assert_true(curve_in(&im, col, row - 2, row + 2));
	row = (int)lround(chart_map_y(&c, 0.5));
	assert_false(curve_in(&im, col, row - 2, row + 2));
	/* at step 75 it is at 0.5, and not at 2.0 */
	col = (int)lround(chart_map_x(&c, 75));
	assert_true(curve_in(&im, col, row - 2, row + 2));
	row = (int)lround(chart_map_y(&c, 2.0));
	assert_false(curve_in(&im, col, row - 2, row + 2));
	/* nowhere else in that column: only the frame, grid and curve */
	assert_false(curve_in(&im, col, (int)lround(chart_map_y(&c, 1.25)) - 5,
			      (int)lround(chart_map_y(&c, 1.25)) + 5));
	free(im.px);
	chart_release(&c);
	unlink(path);
	rmdir(dir);
	sbuf_release(&err);
}

/* A flag (a run's requeue, say): a solid red line down the whole plot
 * at its x, and nothing of its red beside it. */
static void report__draws_a_flag_as_a_red_line_at_its_step(void **state)
{
	static const unsigned char red[3] = { 179, 26, 26 };
	char dir[] = "/tmp/test_report.XXXXXX", path[64];
	double x[] = { 0, 100 }, y[] = { 1, 1 };
	struct sbuf err = SBUF_INIT;
	struct chart c;
	struct image im;
	double l, t, r, b;
	int col, hits = 0, beside = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/loss.png", dir);
	chart_init(&c, "loss", "step", "loss", 640, 360);
	chart_add(&c, "training", x, y, 2);
	chart_flag(&c, 30, "requeue");
	assert_int_equal(chart_write_png(&c, path, &err), 0);
	decode(path, &im);
	chart_area(&c, &l, &t, &r, &b);
	col = (int)lround(chart_map_x(&c, 30));
	/* below the labels, down to the axis (the curve crosses at y = 1) */
	for (int row = (int)t + 50; row < (int)b - 2; row++) {
		hits += near(im.px + 3 * ((size_t)row * im.png.width + (size_t)col), red) ||
			near(im.px + 3 * ((size_t)row * im.png.width + (size_t)col - 1), red);
		beside += near(im.px + 3 * ((size_t)row * im.png.width + (size_t)col - 20), red);
	}
	assert_true(hits > (int)(b - t) - 60);
	assert_int_equal(beside, 0);
	free(im.px);
	chart_release(&c);
	unlink(path);
	rmdir(dir);
	sbuf_release(&err);
}

/* Bars (a node's stage time each): filled from 0 to the value at each
 * named x, nothing between two nodes, nothing above a bar. */
static void report__draws_a_bar_per_named_node_up_to_its_value(void **state)
{
	char dir[] = "/tmp/test_report.XXXXXX", path[64];
	static const char *const names[] = { "n0", "n1", "n2" };
	double x[] = { 0, 1, 2 }, y[] = { 1.0, 4.0, NAN };
	struct sbuf err = SBUF_INIT;
	struct chart c;
	struct image im;
	int col, top;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/stage.png", dir);
	chart_init(&c, "stage time per node", "node", "seconds", 640, 360);
	c.y_from_zero = true;
	c.xnames = names;
	c.nxnames = 3;
	chart_add(&c, "", x, y, 3)->bars = true;
	assert_int_equal(chart_write_png(&c, path, &err), 0);
	decode(path, &im);
	/* n1's bar: from 0 to 4, not above */
	col = (int)lround(chart_map_x(&c, 1));
	top = (int)lround(chart_map_y(&c, 4.0));
	assert_true(curve_in(&im, col, top + 3, top + 3));
	assert_true(curve_in(&im, col, (int)lround(chart_map_y(&c, 0.5)),
			     (int)lround(chart_map_y(&c, 0.5))));
	assert_false(curve_in(&im, col, top - 8, top - 3));
	/* n0's stops at 1; between n0 and n1, and at n2 (no time said), no bar */
	col = (int)lround(chart_map_x(&c, 0));
	assert_true(curve_in(&im, col, (int)lround(chart_map_y(&c, 0.5)),
			     (int)lround(chart_map_y(&c, 0.5))));
	assert_false(curve_in(&im, col, (int)lround(chart_map_y(&c, 2.0)) - 3,
			      (int)lround(chart_map_y(&c, 2.0)) + 3));
	for (double v = 0.5; v < 4; v += 1.0) {
		int row = (int)lround(chart_map_y(&c, v));

		assert_false(curve_in(&im, (int)lround(chart_map_x(&c, 0.5)), row, row));
		assert_false(curve_in(&im, (int)lround(chart_map_x(&c, 2)), row, row));
	}
	free(im.px);
	chart_release(&c);
	unlink(path);
	rmdir(dir);
	sbuf_release(&err);
}

/* -1e308 to 1e308 spans more than the largest double: the range, the
 * ticks and the pixels stay finite, NaN and inf points are skipped, and
 * the curve is drawn where the data says (the chart came out blank). */
static void report__a_range_beyond_the_largest_double_is_still_drawn(void **state)
{
	char dir[] = "/tmp/test_report.XXXXXX", path[64];
	double x[6] = { 0, 1, 2, 3, 4, 5 }, y[6] = { -1e308, NAN, 1e308, INFINITY, 1e308, 1e308 };
	struct sbuf err = SBUF_INIT;
	struct chart c;
	struct image im;
	double l, t, r, b;
	int col, row;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/loss.png", dir);
	chart_init(&c, "loss", "step", "loss", 640, 360);
	chart_add(&c, "training", x, y, 6);
	chart_fit(&c);
	assert_true(isfinite(c.y0) && isfinite(c.y1) && c.y0 <= -1e308 && c.y1 >= 1e308);
	assert_true(c.nyt >= 2);
	for (size_t i = 0; i < c.nyt; i++)
		assert_true(isfinite(c.yt[i]));
	chart_area(&c, &l, &t, &r, &b);
	assert_true(chart_map_y(&c, -1e308) <= b && chart_map_y(&c, -1e308) > (t + b) / 2);
	assert_true(chart_map_y(&c, 1e308) >= t && chart_map_y(&c, 1e308) < (t + b) / 2);
	assert_int_equal(chart_write_png(&c, path, &err), 0);
	decode(path, &im);
	/* from step 4 to 5 the curve runs along 1e308 */
	col = (int)lround(chart_map_x(&c, 4.5));
	row = (int)lround(chart_map_y(&c, 1e308));
	assert_true(curve_in(&im, col, row - 2, row + 2));
	/* and nothing comes of the NaN and inf points: no line from step 0 to 2 */
	col = (int)lround(chart_map_x(&c, 1));
	assert_false(curve_in(&im, col, (int)t, (int)b));
	free(im.px);
	chart_release(&c);
	unlink(path);
	rmdir(dir);
	sbuf_release(&err);
	/* huge on one side only, and a single huge value */
	chart_nice_ticks(0, 1.7e308, 7, (double[CHART_MAX_TICKS]){ 0 }, &l, &r);
	assert_true(isfinite(l) && isfinite(r) && r >= 1.7e308);
	assert_true(chart_nice_ticks(1.7e308, 1.7e308, 7, (double[CHART_MAX_TICKS]){ 0 }, &l, &r) >= 1);
	assert_true(isfinite(l) && isfinite(r) && l < r);
}

static void report__ranks_get_whole_ticks(void **state)
{
	double x[] = { 1, 2 }, y[] = { 100, 180 };
	struct chart c;

	(void)state;
	chart_init(&c, "scaling", "ranks", "samples/s", 640, 360);
	c.x_whole = true;
	chart_add(&c, "", x, y, 2)->points = true;
	chart_fit(&c);
	assert_int_equal(c.nxt, 2);
	assert_true(c.xt[0] == 1 && c.xt[1] == 2);
	assert_true(c.x0 < 1 && c.x1 > 2);
	chart_release(&c);
}

static void report__the_legend_goes_where_the_curves_are_not(void **state)
{
	double x[50], y[50], lx, ly, l, t, r, b;
	struct chart c;

	(void)state;
	/* accuracy climbing into the top right corner */
	for (int i = 0; i < 50; i++) {
		x[i] = i;
		y[i] = 0.5 + 0.01 * i;
	}
	chart_init(&c, "accuracy", "step", "accuracy", 640, 360);
	chart_add(&c, "training", x, y, 50);
	chart_fit(&c);
	chart_area(&c, &l, &t, &r, &b);
	chart_legend_place(&c, 120, 44, &lx, &ly);
	assert_true(lx < (l + r) / 2 && ly < (t + b) / 2); /* top left */
	chart_release(&c);
	/* falling from the top left: top right is free */
	for (int i = 0; i < 50; i++)
		y[i] = 1.0 - 0.01 * i;
	chart_init(&c, "loss", "step", "loss", 640, 360);
	chart_add(&c, "training", x, y, 50);
	chart_fit(&c);
	chart_legend_place(&c, 120, 44, &lx, &ly);
	assert_true(lx > (l + r) / 2 && ly < (t + b) / 2);
	chart_release(&c);
}

static void report__says_why_a_file_cannot_be_written(void **state)
{
	double x = 1, y = 1;
	struct sbuf err = SBUF_INIT;
	struct chart c;

	(void)state;
	chart_init(&c, "t", "x", "y", 300, 200);
	chart_add(&c, "", &x, &y, 1);
	assert_int_equal(chart_write_png(&c, "/nonexistent/dir/x.png", &err), -1);
	assert_non_null(strstr(err.buf, "cannot write /nonexistent/dir/x.png"));
	chart_release(&c);
	sbuf_release(&err);
}

/* steps 1..n of 2 ranks (a resize to 3 at step resize), rank 1 at half
 * the rate from step slow_from on */
static void rates_text(struct sbuf *t, int n, int slow_from, int resize)
{
	for (int s = 1; s <= n; s++)
		sbuf_addf(t, "{\"event\":\"step\",\"step\":%d,\"rank_samples_per_s\":[100,%d%s]}\n", s,
			  s >= slow_from ? 50 : 100, s >= resize ? ",100" : "");
}

static void report__names_a_slow_rank_from_rates_unless_the_trainer_recorded_its_own(void **state)
{
	struct sbuf t = SBUF_INIT, lines = SBUF_INIT;
	struct report_run r;
	json_t *a;

	(void)state;
	rates_text(&t, 30, 6, 1000);
	report_parse(t.buf, t.len, &r);
	a = report_stragglers(&r, 1.2, 10);
	assert_int_equal(json_array_size(a), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 0), "rank")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 0), "step")), 15);
	report_stragglers_format(a, "  ", &lines);
	assert_string_equal(lines.buf, "  slow rank: rank 1 is 2.00x slower than the median over "
				       "steps 6-15: its rate (20 ms a sample against 10 ms)\n");
	json_decref(a);
	/* a threshold not above 1 (no spec): records only */
	a = report_stragglers(&r, 0, 10);
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
	report_run_release(&r);
	/* the trainer's record wins over the rates */
	sbuf_addstr(&t, "{\"event\":\"straggler\",\"step\":20,\"rank\":0,\"node\":\"n1\","
			"\"from_step\":11,\"slower\":1.5,\"cause\":\"communication\",\"compute_ms\":1,"
			"\"median_compute_ms\":1,\"comm_ms\":3,\"median_comm_ms\":1}\n");
	report_parse(t.buf, t.len, &r);
	a = report_stragglers(&r, 1.2, 10);
	sbuf_reset(&lines);
	report_stragglers_format(a, "", &lines);
	assert_string_equal(lines.buf, "slow rank: rank 0 on n1 is 1.50x slower than the median over "
				       "steps 11-20: its own communication (3 ms a step against 1 ms)\n");
	json_decref(a);
	report_run_release(&r);
	/* a resize to 3 ranks at step 12 starts the streak over */
	sbuf_reset(&t);
	rates_text(&t, 20, 6, 12);
	report_parse(t.buf, t.len, &r);
	a = report_stragglers(&r, 1.2, 10);
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
	report_run_release(&r);
	sbuf_release(&t);
	sbuf_release(&lines);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report__keeps_the_last_record_of_a_step_and_skips_torn_lines),
		cmocka_unit_test(report__a_restart_supersedes_what_the_killed_run_logged_after_its_checkpoint),
		cmocka_unit_test(report__keeps_a_record_glued_to_a_torn_line),
		cmocka_unit_test(report__and_status_read_the_same_records_of_one_file),
		cmocka_unit_test(report__and_status_skip_a_record_of_implausible_figures),
		cmocka_unit_test(report__keeps_the_last_data_record_of_a_resumed_run),
		cmocka_unit_test(report__reads_records_with_only_the_required_fields),
		cmocka_unit_test(report__reads_a_resumed_run_of_the_trainer),
		cmocka_unit_test(report__reads_a_stream_whose_lines_cross_its_reads),
		cmocka_unit_test(report__drops_a_line_too_long_to_be_a_record),
		cmocka_unit_test(report__stops_at_the_cap_of_a_metrics_file),
		cmocka_unit_test(report__names_a_slow_rank_from_rates_unless_the_trainer_recorded_its_own),
		cmocka_unit_test(report__ticks_are_round_and_cover_the_data),
		cmocka_unit_test(report__ranks_get_whole_ticks),
		cmocka_unit_test(report__the_legend_goes_where_the_curves_are_not),
		cmocka_unit_test(report__draws_the_curve_where_the_data_says),
		cmocka_unit_test(report__draws_a_flag_as_a_red_line_at_its_step),
		cmocka_unit_test(report__draws_a_bar_per_named_node_up_to_its_value),
		cmocka_unit_test(report__a_range_beyond_the_largest_double_is_still_drawn),
		cmocka_unit_test(report__says_why_a_file_cannot_be_written),
	};

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	/* cairo's and fontconfig's caches live until exit: free them, so
	 * that the sanitized build's leak check sees only ours */
	cairo_debug_reset_static_data();
	FcFini();
	return failed;
}
