/* spec_scalar.h - the spec's scalars as text (spec_scalar.c): parsers
 * shared by spec fields and template parameters, formatters that read
 * back as the same value, and quoting for messages. */
#ifndef HPT_SPEC_SCALAR_H
#define HPT_SPEC_SCALAR_H

#include <stdbool.h>
#include <stdint.h>

struct sbuf;
struct ynode;

/* Quotes scalar text for a message: "four", clipped and escaped. */
void spec_quote_got(const struct ynode *n, struct sbuf *out);

/* Parsers, 0 on success. */
int spec_parse_int(const char *s, int64_t *out, bool *overflow);
int spec_parse_num(const char *s, double *out);
int spec_parse_bool(const char *s, bool *out);
/* Slurm's --time forms (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S), seconds. */
int spec_parse_time(const char *s, int64_t *out);
/* Slurm's --mem forms: an integer (MiB) with an optional K, M, G or T. */
int spec_parse_mem(const char *s, int64_t *out);

/* Shortest text that reads back as exactly x. */
void spec_format_num(double x, struct sbuf *out);
void spec_format_time(int64_t s, struct sbuf *out);
void spec_format_mem(int64_t mb, struct sbuf *out);

/* Checks of a path's text, NULL when it passes, else why not: a path
 * of 1 to 4096 bytes without control characters; spec_check_abs_path
 * also absolute, for a path named by where it is on the compute nodes
 * (a virtualenv, a directory inside an image, a data set), where a
 * relative one would mean the run directory, not where the spec was
 * written.  Shared by the schema's rows and data.stage's entries. */
const char *spec_check_path(const char *s);
const char *spec_check_abs_path(const char *s);

/* The one check of a path pasted into a list that another program
 * splits: PATH (environment.venv's bin), PYTHONPATH (the run's
 * directory, under output.dir), a container runtime's binds of the run
 * and the data (SRC:DST; apptainer also splits on ',').  "/opt/a:b" as
 * a venv would put /opt/a and a relative b/bin on PATH.  Like
 * spec_check_path, and then: no ':', no ',' when bound is set (a
 * directory a runtime binds), absolute when absolute is set.
 * container.mounts (SRC:DST itself) holds to the same rule in the
 * schema's check_mount. */
const char *spec_check_list_path(const char *s, bool absolute, bool bound);

#endif
