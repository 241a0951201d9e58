/* sweep.h - a sweep: one job spec, many points, each the spec with overrides.
 *
 *     sweep:
 *       mode: grid              # every combination (default), or zip: the
 *                               # i-th value of every list together
 *       max_parallel: 2         # array tasks running at once; 0: no cap
 *       train.optimizer.lr: [0.01, 0.05, 0.1]
 *       params.nodes: [2, 4]    # a template parameter
 *
 * Every key but mode and max_parallel is a spec key or params.NAME with a
 * non-empty list of scalars; `submit --sweep KEY=V1,V2` adds an axis (or
 * replaces the file's axis of that KEY).  A point is the spec loaded with
 * one override per axis, each carrying its value's position, so spec_load
 * reports a bad value at FILE:LINE:COL.  Grid points are numbered as nested
 * loops with the first axis outermost.  Core: no I/O.
 */
#ifndef HPT_SWEEP_H
#define HPT_SWEEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct diag_list;
struct sbuf;
struct spec_override;
struct ynode;

enum sweep_mode { SWEEP_GRID, SWEEP_ZIP };
extern const char *const sweep_mode_names[];

/* More points than this is a mistake, not a sweep (Slurm's default
 * MaxArraySize is 1001). */
#define SWEEP_MAX_POINTS 10000

struct sweep_axis {
	char *key;                   /* "train.optimizer.lr", "params.nodes" */
	const struct ynode *key_at;  /* the key as written (file or flag) */
	const struct ynode *const *values; /* scalars, positions kept */
	size_t n;
};

struct sweep {
	int mode;               /* enum sweep_mode */
	int64_t max_parallel;   /* 0: no cap */
	struct sweep_axis *axes;
	size_t naxes;           /* 0: the spec is no sweep */
	struct ynode **trees;   /* owned: the parsed file and flags */
	char **flags;           /* owned: "--sweep ARG", the flags' names */
	size_t ntrees, nflags;
};

#define SWEEP_INIT { SWEEP_GRID, 0, NULL, 0, NULL, NULL, 0, 0 }

/* Reads the sweep: section of a spec's text (where names it; it must
 * outlive out) and the --sweep flags (KEY=V1,V2,... or KEY=[YAML list]).
 * zip, when set, asks for zip mode whatever the file says; max_parallel
 * >= 0 replaces the file's.  Returns 0 (naxes 0 when nothing sweeps), or
 * -1 after recording every problem, positioned, in dl; SWEEP_BAD_FLAG
 * when a --sweep flag is malformed (a usage error, not a bad spec): no
 * '=', an empty key, value or list ("a=", "a=1,,2", "a=1,", "a=[]"), a
 * key that is no key path, a list YAML cannot read, or the same key
 * swept by two flags (the later would win unseen).  A well-formed flag
 * the spec's rules refuse (a key every point shares, a value that is no
 * scalar, too many points) is -1, as a --set of a bad value is.  A flag
 * still replaces the file's axis of its key. */
#define SWEEP_BAD_FLAG (-2)
int sweep_parse(const char *where, const char *text, size_t len, const char *const *flags,
		size_t nflags, int zip, int64_t max_parallel, struct sweep *out,
		struct diag_list *dl);
void sweep_release(struct sweep *s);

/* How many points; the axes' product (grid) or their common length (zip). */
size_t sweep_count(const struct sweep *s);

/* The value of axis k at point i. */
const struct ynode *sweep_value(const struct sweep *s, size_t i, size_t k);

/* Point i as overrides for spec_load, one per axis; their strings live in
 * *args (free with sweep_point_release). */
struct sweep_point {
	struct spec_override *v;
	size_t n;
};
void sweep_point(const struct sweep *s, size_t i, struct sweep_point *out);
void sweep_point_release(struct sweep_point *p);

/* "lr=0.01 nodes=2": the point's values, each key shortened to its last
 * part, for tables and messages. */
void sweep_point_label(const struct sweep *s, size_t i, struct sbuf *out);

/* The same label of a point as a sweep record keeps it (its "params", a
 * JSON object of typed values): strings bare, numbers to 9 significant
 * digits, keys for which skip (when not NULL) says true left out.  The
 * one form status tables and report legends share. */
void sweep_params_label(const json_t *params, bool (*skip)(const char *key, const void *arg),
			const void *arg, struct sbuf *out);

#endif
