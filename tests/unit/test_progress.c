/* test_progress.c - launcher/runs/progress: the tail of metrics.jsonl as a
 * progress line, and a sweep array's ETA under its parallelism cap. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/sbuf.h"
#include "launcher/runs/progress.h"

static void parse(struct run_progress *p, const char *text)
{
	memset(p, 0, sizeof(*p));
	progress_parse(text, strlen(text), p);
}

static void progress__reads_the_last_records_from_a_torn_tail(void **state)
{
	struct run_progress p;
	struct sbuf line = SBUF_INIT;

	(void)state;
	/* a tail starts mid-line; a line that is not an object is skipped */
	parse(&p, "s\":10,\"total_steps\":99}\n"
		  "{\"event\":\"step\",\"step\":120,\"total_steps\":400,\"samples_per_s\":1116.4,\"step_ms\":50}\n"
		  "not json\n"
		  "{\"event\":\"epoch\",\"epoch\":1,\"test_accuracy\":0.81,\"test_loss\":0.52}\n");
	assert_true(p.step_seen);
	assert_int_equal(p.step, 120);
	assert_int_equal(p.total_steps, 400);
	assert_true(p.epoch_seen && !p.summary_seen);
	assert_float_equal(progress_eta_s(&p), 14.0, 1e-9);
	progress_format("RUNNING", &p, &line);
	assert_string_equal(line.buf, "RUNNING  step 120/400 (30%)  1116 samples/s per rank  ETA 14s");
	sbuf_release(&line);
}

static void progress__a_finished_run_has_no_eta(void **state)
{
	struct run_progress p;
	struct sbuf line = SBUF_INIT;
	double acc, loss;

	(void)state;
	parse(&p, "{\"event\":\"step\",\"step\":400,\"total_steps\":400,\"samples_per_s\":900,\"step_ms\":50}\n"
		  "{\"event\":\"summary\",\"test_accuracy\":0.85,\"test_loss\":0.41}\n");
	assert_true(progress_final(&p, &acc, &loss));
	assert_float_equal(acc, 0.85, 1e-12);
	progress_format("COMPLETED", &p, &line);
	assert_string_equal(line.buf, "COMPLETED  step 400/400 (100%)  900 samples/s per rank");
	sbuf_release(&line);
	/* no records at all: the state alone, and no pace */
	parse(&p, "");
	assert_true(progress_eta_s(&p) < 0);
}

/* Figures a program wrote into metrics.jsonl may be anything: no
 * 309-digit rate, no overflowing percentage, no ETA cast past long long.
 * A record of such figures is skipped (metrics_line_plausible); the
 * formatter holds whatever reaches it all the same. */
static void progress__huge_figures_print_short(void **state)
{
	struct run_progress p;
	struct sbuf line = SBUF_INIT;

	(void)state;
	parse(&p, "{\"event\":\"step\",\"step\":4611686018427387904,"
		  "\"total_steps\":4611686018427387905,\"samples_per_s\":1e308,\"step_ms\":1e308}\n");
	assert_false(p.step_seen);
	p.step_seen = true;
	p.step = 4611686018427387904;
	p.total_steps = 4611686018427387905;
	p.samples_per_s = 1e308;
	p.step_ms = 1e308;
	progress_format("RUNNING", &p, &line);
	assert_string_equal(line.buf, "RUNNING  step 4611686018427387904/4611686018427387905 (100%)  "
			    "1e+308 samples/s per rank  ETA 2.78e+301h");
	sbuf_reset(&line);
	parse(&p, "{\"event\":\"step\",\"step\":9223372036854775807,\"total_steps\":1,"
		  "\"samples_per_s\":-1e300}\n");
	assert_false(p.step_seen);
	p.step_seen = true;
	p.step = 9223372036854775807;
	p.total_steps = 1;
	p.samples_per_s = -1e300;
	p.step_ms = 0;
	progress_format("RUNNING", &p, &line);
	assert_string_equal(line.buf, "RUNNING  step 9223372036854775807/1 (9.223e+20%)  -1e+300 samples/s per rank");
	sbuf_reset(&line);
	progress_add_duration(&line, -1);
	sbuf_addch(&line, ' ');
	progress_add_duration(&line, 0.0 / 0.0);
	assert_string_equal(line.buf, "- -");
	sbuf_release(&line);
}

static void progress__durations_read_as_hours_minutes_seconds(void **state)
{
	struct sbuf out = SBUF_INIT;

	(void)state;
	progress_add_duration(&out, 59.4);
	sbuf_addch(&out, ' ');
	progress_add_duration(&out, 72);
	sbuf_addch(&out, ' ');
	progress_add_duration(&out, 3 * 3600 + 5 * 60 + 7);
	assert_string_equal(out.buf, "59s 1m12s 3h05m");
	sbuf_release(&out);
}

/* Runs of 100 steps at 100 ms: 10 s each, and p at its step. */
static void paced(struct run_progress *p, int64_t step)
{
	memset(p, 0, sizeof(*p));
	p->step_seen = true;
	p->step = step;
	p->total_steps = 100;
	p->step_ms = 100;
}

static void progress__a_sweep_queue_runs_cap_points_at_once(void **state)
{
	struct run_progress p[6], none = { 0 };
	struct queued_point q[6];

	(void)state;
	/* 6 points, 2 at a time: two half-way (5 s left), four waiting (10 s
	 * each, two by two): 5 + 10 + 10 */
	for (int i = 0; i < 6; i++) {
		paced(&p[i], i < 2 ? 50 : 0);
		q[i] = (struct queued_point){ &p[i], false, i < 2 };
	}
	for (int i = 2; i < 6; i++)
		q[i].prog = &none; /* not started: no metrics yet */
	assert_float_equal(progress_queue_eta_s(q, 6, 2), 25.0, 1e-9);
	/* no cap: the four start now */
	assert_float_equal(progress_queue_eta_s(q, 6, 0), 10.0, 1e-9);
	/* a cap of 3: slots end at 5, 5, 10 (one queued point starts at once),
	 * then the other three go to the slots that free first */
	assert_float_equal(progress_queue_eta_s(q, 6, 3), 20.0, 1e-9);
	/* the first done: its slot takes the queue's head now, the second's
	 * 5 s later, so the last starts at 15 */
	q[0].done = true;
	assert_float_equal(progress_queue_eta_s(q, 6, 2), 25.0, 1e-9);
	/* both done: the four waiting take two rounds */
	q[1].done = true;
	assert_float_equal(progress_queue_eta_s(q, 6, 2), 20.0, 1e-9);
	/* everything done: nothing left */
	for (int i = 0; i < 6; i++)
		q[i].done = true;
	assert_float_equal(progress_queue_eta_s(q, 6, 2), 0.0, 1e-9);
}

static void progress__a_sweep_without_a_pace_has_no_eta(void **state)
{
	struct run_progress none = { 0 };
	struct queued_point q[3] = { { &none, false, true }, { &none, false, false },
				     { &none, false, false } };

	(void)state;
	assert_true(progress_queue_eta_s(q, 3, 1) < 0);
	assert_true(progress_queue_eta_s(q, 0, 1) < 0);
}

static void progress__more_running_than_the_cap_keeps_their_slots(void **state)
{
	struct run_progress p[3];
	struct queued_point q[3];

	(void)state;
	/* a cap lowered after the start: 3 run at once under a cap of 1 */
	for (int i = 0; i < 3; i++) {
		paced(&p[i], 90);
		q[i] = (struct queued_point){ &p[i], false, true };
	}
	assert_float_equal(progress_queue_eta_s(q, 3, 1), 1.0, 1e-9);
}

/* A long run's tail no longer holds the data record its start wrote:
 * progress_load finds it at the head. */
static void progress__finds_the_data_record_at_the_head_of_a_long_file(void **state)
{
	char dir[] = "/tmp/test_progress.XXXXXX", *path;
	struct run_progress p;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/metrics.jsonl", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"event\":\"data\",\"path\":\"/tmp/c/ab\",\"staged\":true,\"bytes\":8000000,"
	      "\"seconds\":0.01}\n", f);
	for (int i = 1; i <= 2000; i++)
		fprintf(f, "{\"event\":\"step\",\"step\":%d,\"total_steps\":2000,"
			"\"samples_per_s\":1000,\"step_ms\":5}\n", i);
	assert_int_equal(fclose(f), 0);
	progress_load(dir, &p);
	assert_int_equal(p.step, 2000);
	assert_true(p.data.seen && p.data.staged);
	assert_string_equal(p.data.path, "/tmp/c/ab");
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(progress__reads_the_last_records_from_a_torn_tail),
		cmocka_unit_test(progress__a_finished_run_has_no_eta),
		cmocka_unit_test(progress__durations_read_as_hours_minutes_seconds),
		cmocka_unit_test(progress__huge_figures_print_short),
		cmocka_unit_test(progress__a_sweep_queue_runs_cap_points_at_once),
		cmocka_unit_test(progress__a_sweep_without_a_pace_has_no_eta),
		cmocka_unit_test(progress__more_running_than_the_cap_keeps_their_slots),
		cmocka_unit_test(progress__finds_the_data_record_at_the_head_of_a_long_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
