/* report_manifest.h - DIR/.hpctrain-report.json: the charts `hpctrain
 * report` wrote in its output directory, so that it removes only those.
 *
 * Shell.  A chart not drawn this time (a single-rank run has no comm.png)
 * must not linger from an earlier report, yet the output directory (-o)
 * may be shared and hold a user's own comm.png.  So a file is removed
 * only when the manifest lists it and it is still the file report wrote:
 * a regular file of this user with the inode, size and modification time
 * recorded when it was written.  A manifest that is a link, is not a
 * regular file or belongs to another user is ignored, as if there were
 * none: nothing is removed on its word.
 *
 *   {"written_by": "hpctrain report",
 *    "files": [{"name": "comm.png", "ino": 1234, "size": 5678,
 *               "mtime_ns": 1700000000123456789}, ...]}
 *
 * Names are single path components ("comm.png"); an entry with a '/' or
 * a leading '.' is dropped when the manifest is read.
 */
#ifndef HPT_REPORT_MANIFEST_H
#define HPT_REPORT_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>

struct sbuf;

#define REPORT_MANIFEST_NAME ".hpctrain-report.json"

struct report_manifest {
	char *dir;     /* owned; NULL until loaded */
	json_t *files; /* owned: entries as above, one per name */
};

/* Reads DIR's manifest into m (an empty one when there is none, or it
 * cannot be trusted or parsed). */
void report_manifest_load(struct report_manifest *m, const char *dir);
/* Records DIR/name as written by report, as it is now on disk (call it
 * right after writing).  0, or -1 when the file cannot be examined. */
int report_manifest_add(struct report_manifest *m, const char *name);
/* Removes DIR/name when the manifest lists it and it is unchanged since;
 * forgets the entry either way.  True when a file was removed. */
bool report_manifest_remove(struct report_manifest *m, const char *name);
/* Writes the manifest atomically (mode 0600), keeping the entries whose
 * files are still as recorded.  0, or -1 with err. */
int report_manifest_save(struct report_manifest *m, struct sbuf *err);
/* Frees m's contents; accepts a zeroed struct. */
void report_manifest_release(struct report_manifest *m);

#endif
