/* autopsy.h - the stacks of a stalled job's ranks, merged into groups.
 *
 * Core (pure): parsed stacks in, text out.  Ranks whose main threads
 * stand in the same place form one group, as LLNL's STAT merges stack
 * traces into equivalence classes, so the one rank that is elsewhere
 * stands out:
 *
 *   ranks 0,2 in PMPI_Allreduce from allreduce.c:20
 *   rank 1 in clock_nanosleep from stall.py:9 (time.sleep(600))
 *
 * "In F" is the library function the program called last (the frame
 * just inside the program's own code); "from" is the program's innermost
 * line: its innermost Python frame in the program's own files (not in
 * the standard library or site-packages) when there is one, else its
 * innermost native frame in the executable.  For such a Python frame, F
 * is the Python function it called (torch's all_reduce), or the native
 * F when it called into C directly (time.sleep).  Frames inside F are left out of the
 * comparison: a rank busy-polling inside MPI_Allreduce is in a different
 * innermost frame at every sample, yet waits in the same place.
 *
 * The shell (launcher/stackfile.c) captures the stacks and reads and
 * writes them as JSON; this file neither reads nor writes anything.
 */
#ifndef HPT_AUTOPSY_H
#define HPT_AUTOPSY_H

#include <stdbool.h>
#include <stddef.h>

struct sbuf;

struct stack_frame {
	char *func;   /* symbol or Python function; NULL when unknown */
	char *file;   /* source file; NULL when unknown */
	unsigned line;/* 0 when unknown */
	char *module; /* native: the ELF file holding the code; NULL for Python */
	char *text;   /* Python: the source line, stripped; NULL when unread */
};

/* Frames innermost first. */
struct stack_thread {
	long tid;     /* native: the kernel's thread id; Python: 0 */
	bool is_main; /* the thread the program started in */
	struct stack_frame *f;
	size_t n;
};

struct rank_stacks {
	unsigned rank;
	char *host;
	long pid;
	char *exe;    /* the program's executable, to tell its frames from libraries' */
	char *reason; /* why the stacks were taken ("stalled", "ignored the preemption signal") */
	char *error;  /* why native stacks are missing, or NULL */
	bool complete;/* every kind of stack this rank will give is in */
	struct stack_thread *native, *python;
	size_t n_native, n_python;
};

void stack_thread_release(struct stack_thread *t);
void rank_stacks_release(struct rank_stacks *r);

/* Appends a copy-owned frame to t; any string may be NULL. */
void stack_thread_push(struct stack_thread *t, const char *func, const char *file, unsigned line,
		       const char *module);

/* Parses faulthandler's dump ("Current thread 0x... (most recent call
 * first):" and its "  File "x.py", line 9 in f" lines) from text.  Takes
 * the last dump in text.  *out gets the threads; the one whose outermost
 * frame is <module> (else the current one) is marked main.  Without a
 * dump, the last Python traceback in text ("Traceback (most recent call
 * last):", printed by a rank that died of an exception before its dump
 * was asked for) gives one main thread.  Returns the number of threads,
 * 0 when text holds neither. */
size_t autopsy_parse_faulthandler(const char *text, size_t len, struct stack_thread **out);

/* Writes the report for n ranks out of world (0 when unknown): a
 * summary line per group, largest first, the outliers named, the ranks
 * that left no stacks, then each group's stacks in full. */
void autopsy_report(const struct rank_stacks *r, size_t n, unsigned world, struct sbuf *out);

/* "0,2,5-9": ranks ascending, runs of three or more as ranges. */
void autopsy_format_ranks(const unsigned *ranks, size_t n, struct sbuf *out);

#endif
