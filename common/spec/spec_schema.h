/* spec_schema.h - the field table behind struct job (private to spec*.c).
 *
 * One row per key, in the order of the canonical form.  A SECTION row
 * precedes the rows of its keys.  Defaults are YAML text converted by the
 * same code as user input, so a default can never bypass validation.
 */
#ifndef HPT_SPEC_SCHEMA_H
#define HPT_SPEC_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct job;
struct sbuf;
struct ynode;

enum spec_type {
	SPEC_SECTION, /* a mapping of further keys */
	SPEC_INT,     /* int64_t in [imin, imax] */
	SPEC_AUTO_INT,/* int64_t in [imin, imax], or "auto" stored as 0 */
	SPEC_NUM,     /* finite double in [dmin, dmax], ends per F_*_EXCL;
		       * F_NULLABLE: null stored as 0, so 0 must be out of range */
	SPEC_BOOL,    /* bool: true or false */
	SPEC_ENUM,    /* int index into names */
	SPEC_STR,     /* char *, checked by check(); NULL if F_NULLABLE and null */
	SPEC_TIME,    /* int64_t seconds, Slurm time syntax */
	SPEC_MEM,     /* int64_t MiB, Slurm size syntax; 0 = null */
	SPEC_ENV,     /* struct job_env */
	SPEC_ARGV,    /* struct job_argv; n == 0 = null */
	SPEC_LIST,    /* struct job_argv, each item passing check(); n == 0 = [] */
	SPEC_STAGE,   /* struct job_data's stage list (data.stage); off is O(data) */
	SPEC_RANGE,   /* int64_t N or MIN-MAX, both in [imin, imax], MIN <= MAX:
		       * MAX at off, MIN at off_min (N: both N) */
};

enum spec_field_flags {
	F_REQUIRED = 1 << 0,
	F_NULLABLE = 1 << 1,
	F_MIN_EXCL = 1 << 2,
	F_MAX_EXCL = 1 << 3,
};

struct spec_field {
	const char *path;
	enum spec_type type;
	size_t off;
	size_t off_min;           /* SPEC_RANGE: where MIN goes */
	int64_t imin, imax;
	double dmin, dmax;
	unsigned flags;
	const char *const *names; /* SPEC_ENUM, NULL-terminated */
	const char *def;          /* default as YAML text; NULL for sections */
	/* SPEC_STR, SPEC_LIST items: returns NULL if s is acceptable, else why not. */
	const char *(*check)(const char *s);
	const char *help;
	/* true when the resolved form leaves the section (or the key) out:
	 * it holds only defaults; NULL: always written */
	bool (*omit)(const struct job *job);
};

extern const struct spec_field spec_fields[];
extern const size_t spec_nfields;

const struct spec_field *spec_field_find(const char *path);

/* Converts n into the field's storage at dst (a struct job member), or
 * returns -1 with the reason in why ("expected ..., got ...") and, when
 * at is not NULL, the node to blame in *at (n, or the bad env key or
 * argument inside it).  Old contents of dst are released first, so
 * defaults can be overwritten. */
int spec_value_set(const struct spec_field *f, const struct ynode *n, void *dst,
		   struct sbuf *why, const struct ynode **at);
void spec_value_release(const struct spec_field *f, void *dst);

/* data.stage's setter (spec_stage.c), as spec_value_set for the rest:
 * d's list released first; -1 with why (naming the item) and *at. */
struct job_data;
int spec_stage_set(const struct ynode *n, struct job_data *d, struct sbuf *why,
		   const struct ynode **at);
void spec_stage_release(struct job_data *d);
/* code.include and code.exclude items, code.digest (spec_code.c):
 * NULL when acceptable, else why not. */
const char *spec_code_check_glob(const char *s);
const char *spec_code_check_digest(const char *s);

/* NULL when name is a valid data.stage name, else why not. */
const char *spec_stage_check_name(const char *name);

#endif
