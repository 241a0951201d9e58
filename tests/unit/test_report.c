/* test_report.c - launcher/report_data and report_chart: metrics.jsonl
 * parsing (torn lines, steps repeated after a resume), nice ticks, and a
 * chart decoded with libpng to find its curve where the data puts it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/sbuf.h"           // defines: struct sbuf
#include "launcher/report_chart.h" // defines: struct chart, chart_write_png
#include "launcher/report_data.h"  // defines: report_parse

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report__keeps_the_last_record_of_a_step_and_skips_torn_lines),
		cmocka_unit_test(report__ticks_are_round_and_cover_the_data),
		cmocka_unit_test(report__draws_the_curve_where_the_data_says),
		cmocka_unit_test(report__says_why_a_file_cannot_be_written),
	};

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	/* cairo's and fontconfig's caches live until exit: free them, so
	 * that the sanitized build's leak check sees only ours */
	cairo_debug_reset_static_data();
	FcFini();
	return failed;
}
