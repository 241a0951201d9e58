/* test_run_state.c - launcher/runs/run_state: the state status shows for
 * each run of a sweep, an array's cap, the sweep's ETA and its --wait
 * line, from rows filled by hand (no Slurm, no files). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/sbuf.h"             // defines: struct sbuf
#include "launcher/runs/run_state.h" // defines: struct run_state, run_state_*
#include "launcher/runs/runref.h"    // defines: struct runref

#include <jansson.h>

#define RUN_DIR "/scratch/runs/fmnist/0a1b2c3d4e5f"

/* A sweep of two arrays: 100 runs 4 points two at a time, 200 runs 3 one
 * at a time. */
#define RECORD "{\"sweep\":\"sweep-0a1b.json\",\"arrays\":[" \
	"{\"job_id\":100,\"spec\":\"0-3%2\"},{\"job_id\":200,\"spec\":\"0-2%1\"}]}"

struct sweep {
	struct runref ref[7];
	struct run_state_row rows[7];
	struct run_progress none;
	struct run_state w;
};

/* A run of 100 steps at 100 ms (10 s), at step. */
static void paced(struct run_progress *p, int64_t step)
{
	memset(p, 0, sizeof(*p));
	p->step_seen = true;
	p->step = step;
	p->total_steps = 100;
	p->step_ms = 100;
	p->samples_per_s = 1000;
}

static void row(struct sweep *s, size_t i, unsigned long job_id, int64_t task, const char *state)
{
	s->ref[i] = (struct runref)RUNREF_INIT;
	s->ref[i].rd.dir = (char *)RUN_DIR;
	s->ref[i].job_id = job_id;
	s->ref[i].task = task;
	memset(&s->rows[i], 0, sizeof(s->rows[i]));
	s->rows[i].ref = &s->ref[i];
	s->rows[i].known = state != NULL;
	s->rows[i].job.state = (char *)state;
	s->rows[i].job.pending = state && !strcmp(state, "PENDING");
}

/* Array 100: two RUNNING half-way (5 s left), two PENDING; array 200: one
 * RUNNING with 2 s left, two PENDING. */
static void sweep_init(struct sweep *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < 4; i++) {
		row(s, i, 100, (int64_t)i, i < 2 ? "RUNNING" : "PENDING");
		if (i < 2)
			paced(&s->rows[i].prog, 50);
	}
	for (size_t i = 4; i < 7; i++)
		row(s, i, 200, (int64_t)i - 4, i == 4 ? "RUNNING" : "PENDING");
	paced(&s->rows[4].prog, 80);
	s->w = (struct run_state){ s->rows, 7, "sweep-0a1b.json", json_loads(RECORD, 0, NULL),
				   NULL };
	assert_non_null(s->w.doc);
}

static void run_state__names_a_rows_state_from_slurm_or_the_runs_files(void **state)
{
	struct sweep s;

	(void)state;
	sweep_init(&s);
	/* Slurm knows the job: its state */
	assert_string_equal(run_state_name(&s.rows[0]), "RUNNING");
	assert_false(run_state_row_is_done(&s.rows[0]));
	s.rows[0].job.state = (char *)"COMPLETED";
	s.rows[0].job.finished = true;
	assert_string_equal(run_state_name(&s.rows[0]), "COMPLETED");
	assert_true(run_state_row_is_done(&s.rows[0]));
	/* Slurm does not: what the files say */
	s.rows[1].known = false;
	s.rows[1].prog.summary_seen = true;
	assert_string_equal(run_state_name(&s.rows[1]), "ENDED");
	assert_true(run_state_row_is_done(&s.rows[1]));
	s.rows[1].prog.summary_seen = false;
	assert_string_equal(run_state_name(&s.rows[1]), "FORGOTTEN");
	s.ref[1].job_id = 0;
	assert_string_equal(run_state_name(&s.rows[1]), "UNSUBMITTED");
	s.ref[1].rd.dir = NULL;
	assert_string_equal(run_state_name(&s.rows[1]), "NO-RUN");
	json_decref(s.w.doc);
}

static void run_state__reads_an_arrays_cap_from_the_sweep_record(void **state)
{
	json_t *doc = json_loads("{\"arrays\":[{\"job_id\":100,\"spec\":\"0-5%2\"},"
				 "{\"job_id\":200,\"spec\":\"0-5\"},{\"job_id\":300}]}", 0, NULL);

	(void)state;
	assert_int_equal(run_state_array_cap(doc, 100), 2);
	assert_int_equal(run_state_array_cap(doc, 200), 0); /* no % */
	assert_int_equal(run_state_array_cap(doc, 300), 0); /* no spec */
	assert_int_equal(run_state_array_cap(doc, 400), 0); /* not in the record */
	assert_int_equal(run_state_array_cap(NULL, 100), 0);
	json_decref(doc);
}

static void run_state__a_sweeps_eta_is_its_slowest_array_under_its_cap(void **state)
{
	struct sweep s;

	(void)state;
	sweep_init(&s);
	/* 100: slots end at 5 and 5, then a 10 s point each: 15.
	 * 200: one slot, 2 s left, then two 10 s points in turn: 22. */
	assert_float_equal(run_state_eta_s(&s.w), 22.0, 1e-9);
	/* without 200's cap its two pending points start now: 100's 15 s */
	json_object_set_new(json_array_get(json_object_get(s.w.doc, "arrays"), 1), "spec",
			    json_string("0-2"));
	assert_float_equal(run_state_eta_s(&s.w), 15.0, 1e-9);
	/* a row never submitted has no queue; rows without a pace none */
	s.ref[4].job_id = 0;
	assert_float_equal(run_state_eta_s(&s.w), 15.0, 1e-9);
	for (size_t i = 0; i < 7; i++)
		s.rows[i].prog = s.none;
	assert_true(run_state_eta_s(&s.w) < 0);
	json_decref(s.w.doc);
}

static void run_state__a_sweeps_line_counts_states_steps_and_eta(void **state)
{
	struct sbuf line = SBUF_INIT, key = SBUF_INIT;
	struct sweep s;

	(void)state;
	sweep_init(&s);
	run_state_progress_line(&s.w, &line, &key);
	assert_string_equal(key.buf, " 3 RUNNING, 4 PENDING");
	assert_string_equal(line.buf,
			    "sweep-0a1b.json: 3 RUNNING, 4 PENDING  steps 180/300  ETA 22s");
	/* every job ended: no ETA */
	for (size_t i = 0; i < 7; i++) {
		s.rows[i].job.state = (char *)(i == 6 ? "FAILED" : "COMPLETED");
		s.rows[i].job.finished = true;
	}
	assert_true(run_state_is_done(&s.w));
	sbuf_reset(&line);
	sbuf_reset(&key);
	run_state_progress_line(&s.w, &line, &key);
	assert_string_equal(line.buf, "sweep-0a1b.json: 6 COMPLETED, 1 FAILED  steps 180/300");
	sbuf_release(&line);
	sbuf_release(&key);
	json_decref(s.w.doc);
}

static void run_state__one_runs_line_is_its_progress(void **state)
{
	struct sbuf line = SBUF_INIT, key = SBUF_INIT;
	struct sweep s;
	struct run_state one;

	(void)state;
	sweep_init(&s);
	one = (struct run_state){ s.rows, 1, NULL, NULL, NULL };
	run_state_progress_line(&one, &line, &key);
	assert_string_equal(key.buf, "RUNNING");
	assert_string_equal(line.buf, "RUNNING  step 50/100 (50%)  1000 samples/s per rank  ETA 5s");
	sbuf_release(&line);
	sbuf_release(&key);
	json_decref(s.w.doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(run_state__names_a_rows_state_from_slurm_or_the_runs_files),
		cmocka_unit_test(run_state__reads_an_arrays_cap_from_the_sweep_record),
		cmocka_unit_test(run_state__a_sweeps_eta_is_its_slowest_array_under_its_cap),
		cmocka_unit_test(run_state__a_sweeps_line_counts_states_steps_and_eta),
		cmocka_unit_test(run_state__one_runs_line_is_its_progress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
