/* metrics_line.c - one line of metrics.jsonl as a record (see
 * metrics_line.h). */
#include "common/metrics_line.h" // defines: metrics_line_load

#include <string.h>

/* Where a record glued to a torn line begins: every record the trainer
 * and the recipes write opens with its event. */
#define GLUE "{\"event\""

json_t *metrics_line_load(const char *line, size_t n, size_t *bad)
{
	const char *end = line + n;

	for (const char *p = line; p;) {
		json_t *o = json_loadb(p, (size_t)(end - p), JSON_REJECT_DUPLICATES, NULL);

		if (p == line && !json_is_object(o))
			(*bad)++;
		if (json_is_object(o))
			return o;
		json_decref(o);
		p = end - p > 1 ? memmem(p + 1, (size_t)(end - p - 1), GLUE, sizeof(GLUE) - 1) : NULL;
	}
	return NULL;
}
