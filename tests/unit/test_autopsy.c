/* test_autopsy.c - launcher/supervise/autopsy: faulthandler parsing, grouping, the report. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/sbuf.h"         // defines: struct sbuf
#include "launcher/supervise/autopsy.h" // defines: autopsy_report, autopsy_parse_faulthandler

#include <stdlib.h>
#include <string.h>

#define EXE "/home/u/allreduce"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LIBMPI "/lib/x86_64-linux-gnu/libmpi.so.40"

/* A C MPI rank: poll() deep inside MPI_Allreduce, called from main at
 * line `line`; inner varies the innermost frame as busy-polling does. */
static void mpi_rank(struct rank_stacks *r, unsigned rank, const char *inner, unsigned line)
{
	struct stack_thread *t;

	memset(r, 0, sizeof(*r));
	r->rank = rank;
	r->host = strdup("n1");
	r->pid = 100 + rank;
	r->exe = strdup(EXE);
	r->reason = strdup("stalled");
	r->native = calloc(2, sizeof(*r->native));
	r->n_native = 2;
	t = &r->native[0];
	t->tid = r->pid;
	t->is_main = true;
	stack_thread_push(t, inner, NULL, 0, LIBC);
	stack_thread_push(t, "opal_progress", NULL, 0, "/lib/libopen-pal.so.40");
	stack_thread_push(t, "PMPI_Allreduce", NULL, 0, LIBMPI);
	stack_thread_push(t, "main", "/home/u/allreduce.c", line, EXE);
	stack_thread_push(t, "__libc_start_main", NULL, 0, LIBC);
	t = &r->native[1];
	t->tid = r->pid + 1000;
	stack_thread_push(t, "epoll_wait", NULL, 0, LIBC);
}

static void sleeping_rank(struct rank_stacks *r, unsigned rank)
{
	struct stack_thread *t;

	memset(r, 0, sizeof(*r));
	r->rank = rank;
	r->host = strdup("n2");
	r->pid = 200;
	r->exe = strdup(EXE);
	r->reason = strdup("stalled");
	r->native = calloc(1, sizeof(*r->native));
	r->n_native = 1;
	t = &r->native[0];
	t->is_main = true;
	stack_thread_push(t, "clock_nanosleep", NULL, 0, LIBC);
	stack_thread_push(t, "sleep", NULL, 0, LIBC);
	stack_thread_push(t, "main", "/home/u/allreduce.c", 17, EXE);
}

static void release_all(struct rank_stacks *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rank_stacks_release(&r[i]);
}

static void autopsy__groups_ranks_waiting_in_one_place_and_names_the_outlier(void **state)
{
	struct rank_stacks r[4];
	struct sbuf out = SBUF_INIT;

	(void)state;
	mpi_rank(&r[0], 0, "poll", 20);
	sleeping_rank(&r[1], 1);
	mpi_rank(&r[2], 3, "sched_yield", 20); /* busy-polling: another innermost frame */
	mpi_rank(&r[3], 2, "poll", 20);
	autopsy_report(r, 4, 4, &out);
	assert_non_null(strstr(out.buf, "hpctrain autopsy: 4 ranks, 2 groups of stacks\n"
					"ranks 0,2,3 in PMPI_Allreduce from allreduce.c:20\n"
					"rank 1 in sleep from allreduce.c:17\n"
					"outlier: rank 1\n"));
	assert_non_null(strstr(out.buf, "== ranks 0,2,3 (shown: rank 0, pid 100 on n1; stalled)\n"));
	assert_non_null(strstr(out.buf, "    #3  main at /home/u/allreduce.c:20 [allreduce]\n"));
	assert_null(strstr(out.buf, "no stacks from"));
	sbuf_release(&out);
	release_all(r, 4);
}

static void autopsy__a_different_line_is_a_different_group(void **state)
{
	struct rank_stacks r[3];
	struct sbuf out = SBUF_INIT;

	(void)state;
	mpi_rank(&r[0], 0, "poll", 20);
	mpi_rank(&r[1], 1, "poll", 20);
	mpi_rank(&r[2], 2, "poll", 31);
	autopsy_report(r, 3, 5, &out);
	assert_non_null(strstr(out.buf, "ranks 0,1 in PMPI_Allreduce from allreduce.c:20\n"
					"rank 2 in PMPI_Allreduce from allreduce.c:31\n"
					"outlier: rank 2\n"
					"no stacks from ranks 3,4\n"));
	sbuf_release(&out);
	release_all(r, 3);
}

static void autopsy__names_no_outlier_when_no_group_is_largest(void **state)
{
	struct rank_stacks r[2];
	struct sbuf out = SBUF_INIT;

	(void)state;
	mpi_rank(&r[0], 0, "poll", 20);
	sleeping_rank(&r[1], 1);
	autopsy_report(r, 2, 2, &out);
	assert_non_null(strstr(out.buf, "rank 0 in PMPI_Allreduce from allreduce.c:20\n"
					"rank 1 in sleep from allreduce.c:17\n\n== rank 0"));
	assert_null(strstr(out.buf, "outlier"));
	sbuf_release(&out);
	release_all(r, 2);
}

static const char dump[] =
	"some output of the program\n"
	"Fatal Python error: Aborted\n"
	"\n"
	"Thread 0x00007f3b8b7fe640 (most recent call first):\n"
	"  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
	"  File \"/usr/lib/python3.11/threading.py\", line 1002 in _bootstrap\n"
	"\n"
	"Current thread 0x00007f3b9c7b9740 (most recent call first):\n"
	"  File \"/w/stall.py\", line 9 in wait_for_peers\n"
	"  File \"/w/stall.py\", line 14 in <module>\n"
	"\n"
	"Extension modules: numpy.core._multiarray_umath (total: 1)\n";

static void autopsy__parses_faulthandler_and_marks_the_main_thread(void **state)
{
	struct stack_thread *t;
	size_t n;

	(void)state;
	n = autopsy_parse_faulthandler(dump, strlen(dump), &t);
	assert_int_equal(n, 2);
	assert_int_equal(t[0].n, 2);
	assert_false(t[0].is_main);
	assert_string_equal(t[0].f[0].func, "wait");
	assert_true(t[1].is_main);
	assert_int_equal(t[1].n, 2);
	assert_string_equal(t[1].f[0].file, "/w/stall.py");
	assert_int_equal(t[1].f[0].line, 9);
	assert_string_equal(t[1].f[0].func, "wait_for_peers");
	assert_string_equal(t[1].f[1].func, "<module>");
	for (size_t i = 0; i < n; i++)
		stack_thread_release(&t[i]);
	free(t);
	assert_int_equal(autopsy_parse_faulthandler("no dump here\n", 13, &t), 0);
	free(t);
}

/* A Python rank: the native stack ends in the interpreter, the place is
 * its innermost Python line, and that line's text is shown. */
static void python_rank(struct rank_stacks *r, unsigned rank, unsigned line, const char *text,
			const char *inner, const char *inner_module, const char *lib_func)
{
	struct stack_thread *t;

	memset(r, 0, sizeof(*r));
	r->rank = rank;
	r->exe = strdup("/usr/bin/python3.11");
	r->native = calloc(1, sizeof(*r->native));
	r->n_native = 1;
	r->native[0].is_main = true;
	stack_thread_push(&r->native[0], inner, NULL, 0, inner_module);
	stack_thread_push(&r->native[0], "pysleep", NULL, 0, "/usr/bin/python3.11");
	r->python = calloc(1, sizeof(*r->python));
	r->n_python = 1;
	t = &r->python[0];
	t->is_main = true;
	if (lib_func) /* a call into a package: torch's all_reduce */
		stack_thread_push(t, lib_func, "/usr/lib/python3/dist-packages/torch/c10d.py",
				  1541 + rank, NULL);
	stack_thread_push(t, "<module>", "/w/stall.py", line, NULL);
	t->f[t->n - 1].text = strdup(text);
}

static void autopsy__places_python_ranks_by_their_python_line(void **state)
{
	struct rank_stacks r[3];
	struct sbuf out = SBUF_INIT;

	(void)state;
	python_rank(&r[0], 0, 12, "dist.all_reduce(x)", "poll", LIBC, "all_reduce");
	python_rank(&r[1], 1, 9, "time.sleep(600)", "clock_nanosleep", LIBC, NULL);
	python_rank(&r[2], 2, 12, "dist.all_reduce(x)", "futex_wait", LIBC, "all_reduce");
	autopsy_report(r, 3, 3, &out);
	assert_non_null(strstr(out.buf, "ranks 0,2 in all_reduce from stall.py:12 (dist.all_reduce(x))\n"
					"rank 1 in clock_nanosleep from stall.py:9 (time.sleep(600))\n"
					"outlier: rank 1\n"));
	sbuf_release(&out);
	release_all(r, 3);
}

/* A PyTorch rank whose Python dump is missing: between the interpreter
 * and the demangled c10d::Work::wait sit libtorch_python's unnamed
 * bindings; the summary names the innermost named frame, without its
 * parameter list. */
static void autopsy__names_the_cxx_function_past_unnamed_frames(void **state)
{
	struct rank_stacks r;
	struct sbuf out = SBUF_INIT;
	struct stack_thread *t;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.exe = strdup("/usr/bin/python3.11");
	r.native = calloc(1, sizeof(*r.native));
	r.n_native = 1;
	t = &r.native[0];
	t->is_main = true;
	stack_thread_push(t, "pthread_cond_wait", NULL, 0, LIBC);
	stack_thread_push(t, "c10d::Work::wait(std::chrono::duration<long, std::ratio<1l, 1000l> >)",
			  NULL, 0, "/usr/lib/libtorch_cpu.so.1.13");
	stack_thread_push(t, NULL, NULL, 0, "/usr/lib/libtorch_python.so.1.13");
	stack_thread_push(t, "_PyObject_MakeTpCall", NULL, 0, "/usr/bin/python3.11");
	autopsy_report(&r, 1, 1, &out);
	assert_non_null(strstr(out.buf, "rank 0 in c10d::Work::wait from _PyObject_MakeTpCall\n"));
	assert_non_null(strstr(out.buf, "#1  c10d::Work::wait(std::chrono::duration<long, "));
	sbuf_release(&out);
	rank_stacks_release(&r);
}

/* A rank that died of gloo's "Connection closed by peer" before its
 * dump: its traceback gives the line it waited on. */
static void autopsy__falls_back_to_the_last_traceback(void **state)
{
	static const char text[] =
		"ready\n"
		"Traceback (most recent call last):\n"
		"  File \"/w/hang.py\", line 5, in <module>\n"
		"    dist.all_reduce(t)\n"
		"  File \"/usr/lib/python3/dist-packages/torch/distributed/c10d.py\", line 1536, in all_reduce\n"
		"    work.wait()\n"
		"    ^^^^^^^^^^^\n"
		"RuntimeError: Connection closed by peer\n";
	struct stack_thread *t = NULL;

	(void)state;
	assert_int_equal(autopsy_parse_faulthandler(text, sizeof(text) - 1, &t), 1);
	assert_true(t[0].is_main);
	assert_int_equal(t[0].n, 2);
	assert_string_equal(t[0].f[0].func, "all_reduce");
	assert_int_equal(t[0].f[0].line, 1536);
	assert_string_equal(t[0].f[1].file, "/w/hang.py");
	assert_int_equal(t[0].f[1].line, 5);
	stack_thread_release(&t[0]);
	free(t);
}

static void autopsy__formats_rank_lists_with_ranges(void **state)
{
	static const unsigned v[] = { 0, 1, 2, 3, 5, 7, 8, 10, 11, 12 };
	struct sbuf out = SBUF_INIT;

	(void)state;
	autopsy_format_ranks(v, 10, &out);
	assert_string_equal(out.buf, "0-3,5,7,8,10-12");
	sbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(autopsy__groups_ranks_waiting_in_one_place_and_names_the_outlier),
		cmocka_unit_test(autopsy__a_different_line_is_a_different_group),
		cmocka_unit_test(autopsy__names_no_outlier_when_no_group_is_largest),
		cmocka_unit_test(autopsy__parses_faulthandler_and_marks_the_main_thread),
		cmocka_unit_test(autopsy__places_python_ranks_by_their_python_line),
		cmocka_unit_test(autopsy__names_the_cxx_function_past_unnamed_frames),
		cmocka_unit_test(autopsy__falls_back_to_the_last_traceback),
		cmocka_unit_test(autopsy__formats_rank_lists_with_ranges),
	};

	return cmocka_run_group_tests_name("test_autopsy", tests, NULL, NULL);
}
