/* specfile.h - a spec named on the command line: a file, "-" or a
 * template name, with its --set overrides.
 *
 * Shell: reads the file or looks the template up, then hands the text to
 * the spec core.  Every command that takes a spec (validate, submit,
 * rerun, launch --spec, hpctrain-train) loads it through here, so they
 * find templates, read stdin, bound the input and report the same way.
 */
#ifndef HPT_SPECFILE_H
#define HPT_SPECFILE_H

#include "common/runfile.h" // defines: RUNFILE_*

#include <stddef.h>

struct diag_list;
struct job;
struct sbuf;
struct spec_override;

/* The --set flags of one command line, in order. */
struct specfile_overrides {
	struct spec_override *v;
	size_t n;
};

#define SPECFILE_OVERRIDES_INIT { NULL, 0 }

/* Records one --set argument (arg must outlive the struct, as optarg
 * does); diagnostics will name it "--set ARG".  -1, recording nothing,
 * when arg is not KEY.PATH=VALUE (TEMPLATE_OVERRIDE_FORM): the caller
 * reports a usage error. */
int specfile_overrides_add(struct specfile_overrides *o, const char *arg);
void specfile_overrides_release(struct specfile_overrides *o);

/* Reads one spec argument's text (a file, "-" or a template name) into
 * text; *where receives the path read.  0 or HPT_EXIT_NO_INPUT. */
int specfile_read(const char *arg, struct sbuf *text, struct sbuf *where, struct diag_list *dl);

/* Loads one spec argument into *job, appending diagnostics to dl; *where
 * receives the path actually read (a template name is looked up).
 * Returns an exit status: 0, HPT_EXIT_NO_INPUT or HPT_EXIT_BAD_SPEC.
 * *job is always safe to release.  o may be NULL. */
int specfile_load(const char *arg, const struct specfile_overrides *o, struct job *job,
		  struct diag_list *dl, struct sbuf *where);

/* The spec a run (or attempt) directory holds: its resolved form. */
#define SPECFILE_RUN_SPEC RUNFILE_SPEC

/* Loads DIR/resolved.yaml, a run's spec, as specfile_load loads a file;
 * *where receives its path and, when text is not NULL, *text its bytes.
 * Every reader of a run's spec (launch --run, doctor --preflight,
 * rerun, autopsy, report, hpctrain-train --run) loads it here.  Returns
 * 0, HPT_EXIT_NO_INPUT or HPT_EXIT_BAD_SPEC; *job is always safe to
 * release. */
int specfile_load_run(const char *dir, struct job *job, struct diag_list *dl,
		      struct sbuf *where, struct sbuf *text);

#endif
