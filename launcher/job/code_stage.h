/* code_stage.h - the code snapshot staged to node-local storage like a
 * data set: with the code on and data.stage staging anything, submit
 * adds the snapshot as one more data.stage entry, "code"
 * (SPEC_STAGE_CODE), so the stage step copies it once from the shared
 * file system to every node's cache, by its manifest, and launch runs
 * each rank in its node's copy (launcher/launch/launch_code.c).
 *
 * Pure core (code_stage.c): the job and the code's sealed listing in,
 * the entry out.  Its manifest is computed from the listing, not by
 * reading the snapshot: the listing holds each file's path, size and
 * sha256, all a stage manifest is made of, so validate (which stores
 * no snapshot) and submit pin the same entry and the same hash.
 */
#ifndef HPT_CODE_STAGE_H
#define HPT_CODE_STAGE_H

#include <stddef.h>

struct code_list;
struct job;
struct sbuf;

/* For a job whose code is on, with l its code's sealed listing and
 * snapshot where code_store puts it: when data.stage holds an entry
 * other than "code", the entry "code" (added, or replaced) names
 * snapshot with the manifest of l's files, and 0; *files gets their
 * number.  The manifest keeps each file's executable bit (the copy is
 * 0555, else 0444) and each link as a link (stage_manifest.h).  When
 * data.stage holds no other entry, no entry, and 0.  -1 when the stage
 * engine cannot copy the tree as it is (no file at all, or a listing
 * its manifest refuses), with why saying so, or when data.stage is full
 * (64 entries); the job is then left without the entry, and its ranks
 * run the shared snapshot. */
int code_stage_pin(struct job *job, const struct code_list *l, const char *snapshot,
		   size_t *files, struct sbuf *why);

#endif
