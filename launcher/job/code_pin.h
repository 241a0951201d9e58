/* code_pin.h - the program's code pinned by its content, for validate,
 * submit and rerun, as image_pin.h pins the image: the tree listed and
 * hashed (code_scan.h), its snapshot stored once under
 * OUTPUT.DIR/.code/<hex>/ (code_store.h), and the record each run
 * directory keeps as code.json (code_list.h gives its shape).
 * Prints: warnings and problems, "hpctrain CMD: ..." (common/say.h), to stderr.
 */
#ifndef HPT_CODE_PIN_H
#define HPT_CODE_PIN_H

#include "common/spec/spec.h" // defines: struct job

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* OUTPUT.DIR/.code for job, absolute against the current directory
 * (malloc'd). */
char *code_pin_codes_dir(const struct job *job);

/* The directory job's code is in when code.dir is null: the git work
 * tree holding the program (command[0] when it names a path, else the
 * first argument naming an existing file here), else the current
 * directory.  Malloc'd, absolute, resolved; NULL when even the current
 * directory cannot be named. */
char *code_pin_default_dir(const struct job *job);

/* For a job whose code is on (spec_code_is_on): job->code.dir set (the
 * default's absolute path when it was null) and job->code.digest to the
 * tree's digest, so that the resolved form and the run's hash name the
 * code; with store, the snapshot published; *record gets code.json's
 * document, to write into each run directory (NULL when code is off).
 * record NULL: no document, and no git state (git status) is asked for
 * (validate, a dry run: they write no run directory).  With data.stage
 * staging anything, the snapshot becomes its entry "code"
 * (code_stage.h; a warning when the tree cannot be staged as it is);
 * files, when not NULL, is data_pin's count per entry with a slot
 * more, and gets that entry's count in its slot.  0, or
 * HPT_EXIT_NO_INPUT, _FAILURE, _IO as code_scan and code_store say,
 * after a line naming the problem. */
int code_pin(struct job *job, bool store, json_t **record, size_t *files);

/* A run's code must still be there: the snapshot its code.json in run
 * (the run's first directory) names.  0 with *record its code.json (a
 * new attempt's copy), or 0 and NULL for a run without code;
 * HPT_EXIT_NO_INPUT naming the snapshot (or code.json) when gone. */
int code_pin_unchanged(const struct job *job, const char *run, json_t **record);

#endif
