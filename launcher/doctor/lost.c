/* lost.c - a failed step's nodes and its program's failure (lost.h).  Core. */
#include "launcher/doctor/lost.h" // defines: lost_program_failure, lost_record_nodes, lost_has_node
#include "common/sbuf.h"          // defines: struct sbuf, xcalloc
#include "common/exitcode.h"      // defines: HPT_EXIT_STALLED, HPT_EXIT_NOSTART

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define NAMED 3 /* failed ranks named in one line; the rest are counted */

bool lost_has_node(const char *const *nodes, size_t k, const char *node)
{
	for (size_t j = 0; j < k; j++)
		if (!strcmp(nodes[j], node))
			return true;
	return false;
}

size_t lost_record_nodes(json_t *const *ranks, size_t n, const char **nodes)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const char *node = json_string_value(json_object_get(ranks[i], "node"));

		if (node && *node && !lost_has_node(nodes, k, node))
			nodes[k++] = node;
	}
	return k;
}

static bool failed(json_t *r)
{
	const char *state = json_string_value(json_object_get(r, "state"));

	return json_integer_value(json_object_get(r, "exit_status")) > 0 ||
	       (state && !strcmp(state, "stalled"));
}

/* First failed first; a tie by rank. */
static int by_update(const void *a, const void *b)
{
	json_t *ra = *(json_t *const *)a, *rb = *(json_t *const *)b;
	double x = json_number_value(json_object_get(ra, "updated"));
	double y = json_number_value(json_object_get(rb, "updated"));
	json_int_t i = json_integer_value(json_object_get(ra, "rank"));
	json_int_t j = json_integer_value(json_object_get(rb, "rank"));

	return x != y ? (x > y) - (x < y) : (i > j) - (i < j);
}

static void describe(json_t *r, struct sbuf *why);

static bool crash_signal(json_int_t sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGILL ||
	       sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS;
}

bool lost_startup_crash(json_t *const *ranks, size_t n, struct sbuf *why)
{
	json_t *crashed = NULL;

	for (size_t i = 0; i < n; i++) {
		const char *state = json_string_value(json_object_get(ranks[i], "state"));

		if (json_is_number(json_object_get(ranks[i], "last_heartbeat")))
			return false;
		/* the supervisors ended the step themselves (their SIGABRT
		 * for a Python traceback is no crash): a stall, or no start */
		if (state && (!strcmp(state, "stalled") || !strcmp(state, "unstarted")))
			return false;
		if (!crashed && crash_signal(json_integer_value(json_object_get(ranks[i], "signal"))))
			crashed = ranks[i];
	}
	if (crashed)
		describe(crashed, why);
	return crashed != NULL;
}

/* "rank 1 on node2 killed by the OOM killer (signal 9)" */
static void describe(json_t *r, struct sbuf *why)
{
	json_int_t sig = json_integer_value(json_object_get(r, "signal"));
	json_int_t oom = json_integer_value(json_object_get(r, "oom_kills"));
	const char *node = json_string_value(json_object_get(r, "node"));
	const char *state = json_string_value(json_object_get(r, "state"));

	sbuf_addf(why, "rank %lld on ", (long long)json_integer_value(json_object_get(r, "rank")));
	sbuf_add_printable(why, node ? node : "?");
	if (state && !strcmp(state, "stalled"))
		sbuf_addstr(why, " stalled");
	else if (sig == SIGKILL && oom > 0)
		sbuf_addstr(why, " killed by the OOM killer (signal 9)");
	else if (sig == SIGKILL)
		sbuf_addstr(why, " killed by signal 9, not by the OOM killer");
	else if (sig)
		sbuf_addf(why, " killed by signal %lld (SIG%s)", (long long)sig,
			  sigabbrev_np((int)sig) ? sigabbrev_np((int)sig) : "?");
	else
		sbuf_addf(why, " exited %lld",
			  (long long)json_integer_value(json_object_get(r, "exit_status")));
}

/* The failed ranks of ranks[0..n), first failed first, into *k; free
 * the array (the records stay borrowed). */
static json_t **failed_first(json_t *const *ranks, size_t n, size_t *k)
{
	json_t **bad = xcalloc(n + 1, sizeof(*bad));

	*k = 0;
	for (size_t i = 0; i < n; i++)
		if (failed(ranks[i]))
			bad[(*k)++] = ranks[i];
	qsort(bad, *k, sizeof(*bad), by_update);
	return bad;
}

/* What the rank's launcher exited with: after a stall or no start its
 * own status (the program's, killed by it, is in exit_status), else the
 * program's. */
static int launcher_status(json_t *r)
{
	const char *state = json_string_value(json_object_get(r, "state"));
	json_t *st = json_object_get(r, "exit_status");

	if (state && !strcmp(state, "stalled"))
		return HPT_EXIT_STALLED;
	if (state && !strcmp(state, "unstarted"))
		return HPT_EXIT_NOSTART;
	return json_is_integer(st) && json_integer_value(st) > 0 && json_integer_value(st) < 256
		       ? (int)json_integer_value(st) : -1;
}

int lost_first_status(json_t *const *ranks, size_t n)
{
	size_t k;
	json_t **bad = failed_first(ranks, n, &k);
	int status = k ? launcher_status(bad[0]) : -1;

	free(bad);
	return status;
}

size_t lost_program_failure(json_t *const *ranks, size_t n, struct sbuf *why)
{
	size_t k;
	json_t **bad = failed_first(ranks, n, &k);

	for (size_t i = 0; i < k && i < NAMED; i++) {
		sbuf_addstr(why, i ? "; " : "");
		describe(bad[i], why);
	}
	if (k > NAMED)
		sbuf_addf(why, "; %zu more rank%s", k - NAMED, k - NAMED == 1 ? "" : "s");
	free(bad);
	return k;
}
