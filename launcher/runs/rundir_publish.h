/* rundir_publish.h - directories published whole: made complete in a
 * temporary sibling, then renamed into place, under a lock that also
 * clears what a killed writer left.
 *
 * Shell (flock, mkdtemp, rename).  Used for a run R, its later attempts
 * and a sweep's array directories: a reader (status, launch, a second
 * submit) sees either no directory or a complete one, never the moment
 * between mkdir and the first file.  The lock is OUTPUT/<name>/.lock,
 * held only while a directory is made and filled (milliseconds), so a
 * submit killed at any point leaves at worst a temporary ".*.tmp-*" that
 * the next holder of the lock removes: while one holds the lock, every
 * temporary found is an orphan.
 */
#ifndef HPT_RUNDIR_PUBLISH_H
#define HPT_RUNDIR_PUBLISH_H

struct sbuf;

/* Opens (creating it 0600, never through a link) and flocks
 * parent/.lock exclusively: the descriptor, or -1 with err.  Release it
 * with rundir_publish_unlock. */
int rundir_publish_lock(const char *parent, struct sbuf *err);
void rundir_publish_unlock(int fd);

/* For writers that fill their temporaries for long (a code snapshot of
 * a large tree) and must not wait for one another: parent/.lock held
 * shared while a temporary is made and filled.  When no writer holds it
 * (an exclusive flock succeeds at once), the temporaries under parent
 * are orphans of writers killed mid-fill and are swept first; else the
 * next writer to find the lock free sweeps them.  The descriptor, or -1
 * with err; release it with rundir_publish_unlock. */
int rundir_publish_lock_shared(const char *parent, struct sbuf *err);

/* Removes the orphaned temporaries ".*.tmp-*" directly under dir, with
 * whatever they hold (files, links, logs/): only under the lock.  Best
 * effort; a missing dir is nothing to do. */
void rundir_publish_sweep(const char *dir);

/* Removes tmp and everything in it, links not followed.  Best effort. */
void rundir_publish_discard(const char *tmp);

/* A fresh private temporary directory dir/.<stem>.tmp-XXXXXX (0700),
 * NULL with err. */
char *rundir_publish_tmp(const char *dir, const char *stem, struct sbuf *err);

/* Publishes tmp as base/<n> for the first free n >= first: mkdir claims
 * n (so a writer that only mkdirs, as an older hpctrain does, still never
 * shares a number), and rename(2) puts the full tmp onto the empty
 * claimed directory in one step.  n, or -1 with err (tmp left to the
 * caller). */
int rundir_publish_numbered(const char *tmp, const char *base, int first, int max,
			    struct sbuf *err);

#endif
