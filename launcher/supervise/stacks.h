/* stacks.h - capture a running program's stacks, native and Python.
 *
 * Shell.  Native stacks of every thread come from elfutils' libdwfl,
 * which ptrace-attaches to the process (a parent may trace its child
 * under Yama's default scope) and unwinds through the CFI of each ELF
 * file; symbols come from the symbol tables, file:line from DWARF where
 * the program has it.  Python stacks come from faulthandler's dump on
 * SIGABRT (the supervisor sets PYTHONFAULTHANDLER), which the caller
 * collects from the program's standard error and hands to
 * stacks_add_python().
 */
#ifndef HPT_STACKS_H
#define HPT_STACKS_H

#include "launcher/supervise/autopsy.h" // defines: struct rank_stacks

#include <stddef.h>
#include <sys/types.h>

/* Fills r->native and r->exe for process pid (r->error says why when it
 * cannot).  The process is stopped while being read and resumed after.
 * Returns 0 or -1. */
int stacks_capture_native(pid_t pid, struct rank_stacks *r);

/* True when pid runs a Python interpreter, whose stacks faulthandler can
 * add. */
int stacks_is_python(pid_t pid);

/* Parses a faulthandler dump from the program's stderr text into
 * r->python and reads each frame's source line, an absolute file under
 * root when root is not NULL (the program's root directory, e.g. a
 * container's, held open as "/proc/self/fd/N" since the program is gone
 * by now).  Returns the number of Python threads found. */
size_t stacks_add_python(struct rank_stacks *r, const char *text, size_t len, const char *root);

#endif
