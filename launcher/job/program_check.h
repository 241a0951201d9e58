/* program_check.h - the job's own program, as this host sees it, before
 * the job exists: the mistakes a rank would otherwise find at its start.
 *
 *   - command[0] given as a path must be absolute (the job runs in its
 *     run directory, not where it was submitted), and, where this host
 *     sees its directory (a shared file system), a file it may execute;
 *   - command[0] given as a name is looked up on this host's PATH; not
 *     found is a warning only (the nodes, a module or the venv may
 *     have it);
 *   - an argument that names a file or directory relative to here
 *     ("train.py") is refused with its absolute path as the fix, for the
 *     same reason.
 * A job in a container is skipped (its program is the image's), and so
 * is the bundled trainer.  Shell: stat(2), access(2), the cwd.
 */
#ifndef HPT_PROGRAM_CHECK_H
#define HPT_PROGRAM_CHECK_H

struct job;

/* Checks job's command; where is the spec's name for messages.  Says
 * each problem on stderr ("job.yaml: command[1] 'train.py': ...").
 * 0, or HPT_EXIT_BAD_SPEC when one is an error. */
int program_check(const struct job *job, const char *where);

#endif
