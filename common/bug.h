/* bug.h - BUG(): a state our own code made impossible, as git's BUG()
 * (usage.c) and Redis's serverAssert: it prints "BUG: FILE:LINE: what"
 * on stderr and aborts, so the core file shows where.  Nothing a user
 * types or a peer rank sends may reach it; bad input gets a diagnostic
 * and an exit status instead.
 *
 * BUG_NOTE() is the same text into a caller's struct sbuf, for the few
 * checks whose caller refuses with HPT_EXIT_INTERNAL instead of
 * aborting (a unit test reaches them on purpose). */
#ifndef HPT_BUG_H
#define HPT_BUG_H

struct sbuf;

#define BUG(...) bug_fl(__FILE__, __LINE__, __VA_ARGS__)
#define BUG_NOTE(err, ...) bug_note_fl((err), __FILE__, __LINE__, __VA_ARGS__)

__attribute__((noreturn, format(printf, 3, 4)))
void bug_fl(const char *file, int line, const char *fmt, ...);
__attribute__((format(printf, 4, 5)))
void bug_note_fl(struct sbuf *err, const char *file, int line, const char *fmt, ...);

#endif
