/* test_report_timeline.c - launcher/report/report_timeline, through
 * report_data as report reads a run: several attempts' records as one
 * timeline, and the requeues, attempts and resizes along it (events,
 * counts, chart labels, text and JSON); no file is read or drawn. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/sbuf.h"                     // defines: struct sbuf
#include "launcher/report/report_data.h"     // defines: struct report_run, report_run_attempt
#include "launcher/report/report_timeline.h" // defines: report_timeline_*

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Adds text's lines to r as attempt's file (attempt 0: no boundary, as
 * when one file is read). */
static void add_file(struct report_run *r, int64_t attempt, const char *text)
{
	if (attempt)
		report_run_attempt(r, attempt);
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		report_add_line(r, line, n);
		line += n + (nl ? 1 : 0);
	}
}

static void assert_event(const struct report_run *r, size_t i, int64_t step, int kind,
			 int64_t attempt, int64_t world_size)
{
	const struct report_event *e;

	assert_true(i < r->timeline.nevents);
	e = &r->timeline.events[i];
	assert_int_equal(e->step, step);
	assert_int_equal(e->kind, kind);
	assert_int_equal(e->attempt, attempt);
	assert_int_equal(e->world_size, world_size);
}

static void report_timeline__a_later_attempt_goes_on_in_the_same_timeline(void **state)
{
	/* a node lost after step 130; attempt 2 resumes from the checkpoint
	 * at 100 and logs again from 110 */
	struct report_run r;

	(void)state;
	report_run_init(&r);
	add_file(&r, 1, "{\"event\":\"step\",\"step\":10,\"loss\":2.0}\n"
			"{\"event\":\"step\",\"step\":110,\"loss\":1.1}\n"
			"{\"event\":\"step\",\"step\":120,\"loss\":1.0}\n"
			"{\"event\":\"step\",\"step\":130,\"loss\":0.9}\n");
	add_file(&r, 2, "{\"event\":\"step\",\"step\":110,\"loss\":1.05}\n"
			"{\"event\":\"step\",\"step\":140,\"loss\":0.8}\n"
			"{\"event\":\"summary\",\"test_accuracy\":0.9,\"ranks\":4}\n");
	assert_int_equal(r.nsteps, 3);
	assert_int_equal(r.steps[0].step, 10); /* attempt 1's start is kept */
	assert_true(r.steps[1].loss == 1.05);  /* the later record of a step wins */
	assert_int_equal(r.steps[2].step, 140);
	assert_int_equal(r.superseded, 3);
	assert_int_equal(r.restarts, 0); /* a resubmission is not a requeue */
	assert_int_equal(r.timeline.nevents, 1);
	assert_event(&r, 0, 110, REPORT_EVENT_ATTEMPT, 2, 0);
	assert_int_equal(report_timeline_count(&r.timeline, REPORT_EVENT_ATTEMPT), 1);
	assert_true(r.summary && r.test_accuracy == 0.9);
	report_run_release(&r);
}

static void report_timeline__a_requeue_is_steps_going_back_or_a_new_restart(void **state)
{
	struct report_run r;

	(void)state;
	report_run_init(&r);
	add_file(&r, 1, "{\"event\":\"step\",\"step\":10,\"restart\":0}\n"
			"{\"event\":\"step\",\"step\":20,\"restart\":0}\n"
			/* preempted at 20, resumed from the checkpoint at 10 */
			"{\"event\":\"step\",\"step\":15,\"restart\":1}\n"
			/* preempted right after a checkpoint: the steps go on */
			"{\"event\":\"step\",\"step\":30,\"restart\":2}\n"
			"{\"event\":\"step\",\"step\":40}\n");
	assert_int_equal(r.restarts, 2);
	assert_int_equal(r.timeline.nevents, 2);
	assert_event(&r, 0, 15, REPORT_EVENT_REQUEUE, 1, 0);
	assert_event(&r, 1, 30, REPORT_EVENT_REQUEUE, 1, 0);
	assert_int_equal(r.nsteps, 4);
	report_run_release(&r);
}

static void report_timeline__a_resize_is_a_new_world_size_said_or_counted_in_rates(void **state)
{
	struct report_run r;
	char label[64];

	(void)state;
	report_run_init(&r);
	add_file(&r, 1, "{\"event\":\"step\",\"step\":1,\"world_size\":4}\n"
			"{\"event\":\"step\",\"step\":2}\n" /* says nothing: no change */
			"{\"event\":\"step\",\"step\":3,\"world_size\":4}\n");
	add_file(&r, 2, "{\"event\":\"step\",\"step\":3,\"rank_samples_per_s\":[1,2]}\n"
			"{\"event\":\"step\",\"step\":4,\"rank_samples_per_s\":[1,2]}\n");
	assert_int_equal(r.timeline.nevents, 2);
	/* a new attempt at another size: both, at its first step */
	assert_event(&r, 0, 3, REPORT_EVENT_ATTEMPT, 2, 2);
	assert_event(&r, 1, 3, REPORT_EVENT_RESIZE, 2, 2);
	assert_int_equal(r.timeline.events[1].from_world_size, 4);
	assert_int_equal(report_timeline_count(&r.timeline, REPORT_EVENT_RESIZE), 1);
	report_timeline_label(&r.timeline, 0, label, sizeof(label));
	assert_string_equal(label, "attempt 2");
	report_timeline_label(&r.timeline, 1, label, sizeof(label));
	assert_string_equal(label, "resize 4->2");
	report_run_release(&r);
}

static void report_timeline__an_attempt_that_logged_nothing_leaves_no_mark(void **state)
{
	struct report_run r;

	(void)state;
	report_run_init(&r);
	add_file(&r, 1, "{\"event\":\"step\",\"step\":5}\n"
			"{\"event\":\"summary\",\"test_accuracy\":0.5}\n");
	add_file(&r, 2, ""); /* its preflight failed */
	add_file(&r, 3, "{\"event\":\"step\",\"step\":1}\n");
	assert_int_equal(r.timeline.nevents, 1);
	assert_event(&r, 0, 1, REPORT_EVENT_ATTEMPT, 3, 0);
	/* attempt 3 trained again: attempt 1's summary is not the run's end */
	assert_false(r.summary);
	assert_true(isnan(r.test_accuracy));
	report_run_release(&r);
}

static void report_timeline__one_file_across_attempts_by_the_records_attempt(void **state)
{
	/* a program that appends to one file wherever it runs */
	struct report_run r;

	(void)state;
	report_run_init(&r);
	add_file(&r, 0, "{\"event\":\"step\",\"step\":10,\"attempt\":1}\n"
			"{\"event\":\"step\",\"step\":20,\"attempt\":1}\n"
			"{\"event\":\"step\",\"step\":15,\"attempt\":2}\n"
			"{\"event\":\"step\",\"step\":12,\"attempt\":2}\n");
	assert_int_equal(r.timeline.nevents, 2);
	assert_event(&r, 0, 15, REPORT_EVENT_ATTEMPT, 2, 0);
	assert_event(&r, 1, 12, REPORT_EVENT_REQUEUE, 2, 0);
	assert_int_equal(r.restarts, 1);
	report_run_release(&r);
}

static void report_timeline__says_its_events_in_text_and_json(void **state)
{
	struct report_run r;
	struct sbuf out = SBUF_INIT;
	json_t *j;
	char *dump;

	(void)state;
	report_run_init(&r);
	add_file(&r, 1, "{\"event\":\"step\",\"step\":10,\"world_size\":4}\n"
			"{\"event\":\"step\",\"step\":5,\"world_size\":4}\n");
	add_file(&r, 2, "{\"event\":\"step\",\"step\":8,\"world_size\":2}\n");
	report_timeline_format(&r.timeline, &out);
	assert_string_equal(out.buf, "  requeued at step 5 (attempt 1), 4 ranks\n"
				     "  attempt 2 went on at step 8, 2 ranks\n"
				     "  resized from 4 to 2 ranks at step 8 (attempt 2)\n");
	j = report_timeline_json(&r.timeline);
	dump = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_string_equal(dump, "[{\"step\":5,\"kind\":\"requeue\",\"attempt\":1,\"world_size\":4},"
				  "{\"step\":8,\"kind\":\"attempt\",\"attempt\":2,\"world_size\":2},"
				  "{\"step\":8,\"kind\":\"resize\",\"attempt\":2,\"world_size\":2,"
				  "\"from_world_size\":4}]");
	free(dump);
	json_decref(j);
	sbuf_release(&out);
	report_run_release(&r);
}

static void report_timeline__a_run_without_breaks_has_no_events(void **state)
{
	struct report_run r;
	struct sbuf out = SBUF_INIT;
	json_t *j;

	(void)state;
	report_run_init(&r);
	add_file(&r, 1, "{\"event\":\"step\",\"step\":1,\"world_size\":2,\"restart\":0}\n"
			"{\"event\":\"step\",\"step\":2,\"world_size\":2,\"restart\":0}\n");
	assert_int_equal(r.timeline.nevents, 0);
	report_timeline_format(&r.timeline, &out);
	assert_int_equal(out.len, 0);
	j = report_timeline_json(&r.timeline);
	assert_int_equal(json_array_size(j), 0);
	json_decref(j);
	sbuf_release(&out);
	report_run_release(&r);
	/* a released run is a zeroed one: releasing again is harmless */
	report_run_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_timeline__a_later_attempt_goes_on_in_the_same_timeline),
		cmocka_unit_test(report_timeline__a_requeue_is_steps_going_back_or_a_new_restart),
		cmocka_unit_test(report_timeline__a_resize_is_a_new_world_size_said_or_counted_in_rates),
		cmocka_unit_test(report_timeline__an_attempt_that_logged_nothing_leaves_no_mark),
		cmocka_unit_test(report_timeline__one_file_across_attempts_by_the_records_attempt),
		cmocka_unit_test(report_timeline__says_its_events_in_text_and_json),
		cmocka_unit_test(report_timeline__a_run_without_breaks_has_no_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
