/* run_diff_text.h - run_diff's document as the text `hpctrain diff`
 * prints: a header per section that has something, in run_diff.h's
 * order, each change as "- KEY: OLD" and "+ KEY: NEW" lines.
 *
 * Core (pure): a JSON document in, text out.  Values are shown through
 * sbuf_add_printable, so what a run recorded cannot move the terminal's
 * cursor; a unified diff's lines are kept as they are but for that.
 */
#ifndef HPT_RUN_DIFF_TEXT_H
#define HPT_RUN_DIFF_TEXT_H

#include <jansson.h>

struct sbuf;

enum run_diff_text_flags {
	RUN_DIFF_TEXT_STAT = 1 << 0, /* the code section's counts, not its diffs */
};

/* Appends doc's text to out; nothing when doc says the runs are the
 * same (then the metrics are not shown either: nothing differs to
 * explain them). */
void run_diff_text(const json_t *doc, unsigned flags, struct sbuf *out);

#endif
