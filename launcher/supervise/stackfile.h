/* stackfile.h - ranks' stacks on disk, and the autopsy made from them.
 *
 * Shell.  Each supervised rank that is found stalled, or that ignores the
 * preemption signal, writes RUN/ranks/rank-N.stacks.json (JSON through
 * jansson).  stackfile_autopsy() reads them all, merges them with
 * autopsy_report() and writes RUN/autopsy.txt.
 */
#ifndef HPT_STACKFILE_H
#define HPT_STACKFILE_H

#include <stddef.h>

/* A stacks file is at most this large: the capture is 1 MiB (supervise.c). */
#define STACKFILE_MAX_BYTES (16 << 20)

struct rank_stacks;
struct sbuf;

/* Writes r to path atomically.  0 or -1 with err. */
int stackfile_write(const char *path, const struct rank_stacks *r, struct sbuf *err);

/* Reads every DIR/rank-*.stacks.json.  0 (with *n possibly 0) or -1 with
 * err on a file that is not a stacks file; free with stackfile_free(). */
int stackfile_load_dir(const char *dir, struct rank_stacks **out, size_t *n, struct sbuf *err);
void stackfile_free(struct rank_stacks *r, size_t n);

/* The report for run directory RUN of world ranks (0 when unknown) into
 * text, and into RUN/autopsy.txt.  Returns 0, 1 when RUN/ranks holds no
 * stacks (err says so), or -1 with err. */
int stackfile_autopsy(const char *run, unsigned world, struct sbuf *text, struct sbuf *err);

#endif
