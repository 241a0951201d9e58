/* code_diff.h - the code section of hpctrain diff: the source trees two
 * runs ran, compared file by file, with a unified diff of each changed
 * text file.
 *
 * Shell: reads the files of the two stored snapshots.  A run records its
 * code in RUN/code.json (RUNFILE_CODE):
 *   {"digest": "sha256:<hex>", "dir": "<source dir>",
 *    "snapshot": "<absolute path of the stored tree>",
 *    "files": [{"path": "a.py", "mode": 420, "size": 12, "sha256": "<hex>"},
 *              {"path": "link", "mode": 511, "link": "target"}],
 *    "file_count": N, "bytes": N,
 *    "git": {"commit": "<hex>", "branch": "main", "dirty": true,
 *            "changed": ["a.py"]} or null}
 * with files sorted by path; a changed file's two versions are read
 * from <snapshot>/<path> of each side.
 */
#ifndef HPT_CODE_DIFF_H
#define HPT_CODE_DIFF_H

#include <jansson.h>

/* The code section for the code records a and b (either NULL when its
 * run has none), a new reference:
 *   null                      neither run recorded code, or both the same tree
 *   {"a": {"digest", "dir", "git"} or null, "b": likewise,
 *    "note": "no code recorded for the second run" (only one has code),
 *    "added": [PATH...], "removed": [PATH...],
 *    "changed": [{"path", "what": "content" | "mode" | "link" | "type",
 *                 "removed": N, "added": N, "diff": "--- a/PATH..."}
 *                or, in place of the counts and the diff,
 *                "note": "binary files differ" | "snapshot missing: DIR" | ...]}
 * A path that could climb out of its snapshot (absolute, or with a ".."
 * component) is never read: "note": "unsafe path, not read". */
json_t *code_diff(const json_t *a, const json_t *b);

#endif
