/* doctor_slow.c - slow nodes into the node ledger (doctor_slow.h).
 * Shell: reads RUN/metrics.jsonl, writes the ledger. */
#include "launcher/doctor/doctor_slow.h"   // defines: doctor_slow_record
#include "common/fileio.h"                 // defines: fileio_open_regular
#include "common/metrics_line.h"           // defines: metrics_line_load
#include "common/runfile.h"                // defines: RUNFILE_METRICS
#include "common/say.h"                    // defines: say
#include "common/sbuf.h"                   // defines: struct sbuf, xasprintf, xcalloc
#include "common/spec/spec.h"              // defines: struct job, STRAGGLER_EXCLUDE
#include "launcher/doctor/doctor_record.h" // defines: doctor_record_ledger
#include "launcher/doctor/ledger.h"        // defines: struct ledger_event

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The node of record o when it is an exclude straggler not yet in
 * nodes[0..n), else NULL (borrowed from o). */
static const char *new_slow_node(json_t *o, char **nodes, size_t n)
{
	const char *ev = json_string_value(json_object_get(o, "event"));
	const char *act = json_string_value(json_object_get(o, "action"));
	const char *node = json_string_value(json_object_get(o, "node"));

	if (!ev || strcmp(ev, "straggler") || !act || strcmp(act, "exclude") || !node || !*node)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(nodes[i], node))
			return NULL;
	return node;
}

size_t doctor_slow_record(const char *dir, const struct job *job, struct sbuf *warn)
{
	char *path = xasprintf("%s/" RUNFILE_METRICS, dir), *line = NULL, **nodes = NULL;
	char **why = NULL;
	struct sbuf err = SBUF_INIT;
	struct ledger_event *ev;
	size_t n = 0, cap = 0, bad = 0, len = 0, recorded;
	ssize_t got;
	FILE *fp = NULL;
	int fd = -1;

	if (job->straggler.action == STRAGGLER_EXCLUDE)
		fd = fileio_open_regular(path, 0, &err);
	if (fd >= 0 && !(fp = fdopen(fd, "r")))
		close(fd);
	while (fp && (got = getline(&line, &len, fp)) > 0) {
		json_t *o = metrics_line_load(line, (size_t)got, &bad);
		const char *node = o ? new_slow_node(o, nodes, n) : NULL;

		if (node) {
			if (n == cap) {
				cap = cap ? 2 * cap : 4;
				nodes = xrealloc(nodes, cap * sizeof(*nodes));
				why = xrealloc(why, cap * sizeof(*why));
			}
			nodes[n] = xstrdup(node);
			why[n++] = xasprintf("slow: rank %d was %.2fx the median's time per step "
					     "over steps %lld-%lld (straggler.action: exclude)",
					     (int)json_integer_value(json_object_get(o, "rank")),
					     json_number_value(json_object_get(o, "slower")),
					     (long long)json_integer_value(json_object_get(o, "from_step")),
					     (long long)json_integer_value(json_object_get(o, "step")));
		}
		json_decref(o);
	}
	if (fp)
		fclose(fp);
	ev = xcalloc(n + 1, sizeof(*ev));
	for (size_t i = 0; i < n; i++) {
		ev[i] = (struct ledger_event){ .node = nodes[i], .failed = true, .reason = why[i],
					       .score = -1 };
		say("slow node %s: %s; recorded in the node ledger", nodes[i], why[i]);
	}
	recorded = n && !doctor_record_ledger(ev, n, warn) ? n : 0;
	for (size_t i = 0; i < n; i++) {
		free(nodes[i]);
		free(why[i]);
	}
	free(nodes);
	free(why);
	free(ev);
	free(line);
	free(path);
	sbuf_release(&err);
	return recorded;
}
