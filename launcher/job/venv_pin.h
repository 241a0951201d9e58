/* venv_pin.h - a job's virtualenv pinned by what is installed in it, as
 * code_pin.h pins the code: environment.venv_digest in the resolved
 * form (so a changed package version is another run), and the list of
 * packages for the run's software record (common/software.h).
 * Shell: reads VENV/lib/python*\/site-packages/ (venv_list.h parses).
 * Prints: problems, "hpctrain CMD: ..." (common/say.h), to stderr.
 */
#ifndef HPT_VENV_PIN_H
#define HPT_VENV_PIN_H

#include "common/spec/spec.h" // defines: struct job

#include <jansson.h>

/* For a job with environment.venv: its packages read, digested into
 * job->environment.venv_digest, and *record (venv_list_json's document)
 * set; *record NULL and nothing else for a job without one.  0, or
 * HPT_EXIT_NO_INPUT after a line naming the venv or the file that is
 * not a directory or cannot be read.  A distribution's metadata without
 * a Name: or Version: is left out with a warning (pip leaves such
 * half-removed ~name.dist-info directories behind). */
int venv_pin(struct job *job, json_t **record);

/* A run's venv must hold what it held at submit: the packages read
 * again and digested (a run from before venvs were pinned: not
 * checked).  0 with *record (a new attempt's copy), or
 * HPT_EXIT_NO_INPUT naming the venv when it is gone or its packages
 * changed (which package is not said: `hpctrain diff` of the new
 * submit against the run shows it). */
int venv_pin_unchanged(struct job *job, json_t **record);

#endif
