/* program_module.h - hpctrain's Python module (import hpctrain), for the
 * program a rank runs.
 *
 * The module (launcher/python/hpctrain; make install puts it in Python's
 * path) is the program's side of hpctrain-program(7): its environment,
 * batches at any world size, checkpoints, preemption and metrics.
 * Submit copies it into each attempt's directory (RUN/python), so a rank
 * imports the module its attempt was submitted with, inside a container
 * too, where the run directory is bound and the install is not; launch
 * puts that copy first on PYTHONPATH.  Shell: reads and writes files.
 */
#ifndef HPT_PROGRAM_MODULE_H
#define HPT_PROGRAM_MODULE_H

struct sbuf;

/* The directory holding this hpctrain's hpctrain/ package into out:
 * beside the binary in the source tree it was built in, else where make
 * install put it.  0, or -1 when neither has it. */
int program_module_dir(struct sbuf *out);

/* Copies the package into DIR/python/hpctrain (0700, files 0600),
 * published whole by one rename; an attempt that has one keeps it.  0,
 * or -1 with err (no package found, or a write failed). */
int program_module_publish(const char *dir, struct sbuf *err);

/* Removes the copy from DIR, for an attempt abandoned unsubmitted. */
void program_module_remove(const char *dir);

/* What PYTHONPATH starts with for a rank: the attempt's copy in DIR (a
 * run's attempt directory, or NULL), else program_module_dir.  0, or -1
 * when there is neither. */
int program_module_path(const char *dir, struct sbuf *out);

#endif
