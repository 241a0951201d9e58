/* data_pin.h - the spec's data.stage entries pinned by their manifests,
 * for validate, submit and rerun, as image_pin.h pins the image.
 * Prints: one line per problem or note, "hpctrain CMD: ..." (common/say.h), to stderr.
 */
#ifndef HPT_DATA_PIN_H
#define HPT_DATA_PIN_H

#include "common/spec/spec.h" // defines: struct job

#include <jansson.h>
#include <stddef.h>

/* Each entry's manifest, bytes and is_file set from its source now
 * (stage_scan), so that the resolved form and the run's hash name the
 * data's content.  files, when not NULL, has job->data.nstage slots and
 * gets each source's file count.  0, or the first failing scan's
 * status (HPT_EXIT_NO_INPUT for a missing or unreadable source), after
 * a line naming the entry and its source. */
int data_pin(struct job *job, size_t *files);

/* A run's entries must still name their data's content: 0 when they do
 * (or changed_ok, after a warning per changed entry naming both
 * manifests); HPT_EXIT_BAD_SPEC naming the entry and both manifests;
 * HPT_EXIT_NO_INPUT for a missing source.  The job is left as it is. */
int data_pin_unchanged(const struct job *job, int changed_ok);

/* What the stage step would copy, for submit --dry-run: as "# " comment
 * lines (entry, source, files, bytes, manifest) into text, or as a new
 * JSON array.  files as data_pin filled it.  NULL when a string cannot
 * be packed (out of memory; a name that is not UTF-8 was refused by
 * data_pin): never an array that leaves an entry out. */
void data_pin_describe(const struct job *job, const size_t *files, struct sbuf *text);
json_t *data_pin_json(const struct job *job, const size_t *files);

#endif
