/* job_prepare.h - a job made ready to be a run, the one way: its spec's
 * text loaded with the --set flags (and a sweep point's), then shaped
 * (submit --shape auto), its container image and data sets pinned by
 * their content, its resolved form emitted and hashed.  validate,
 * submit, each point of a sweep and rerun prepare their jobs here, so
 * the same spec gives the same hash whichever command asks.  Nothing changes the
 * job after its hash: attempt_render renders the idle-nodes size from a
 * copy.
 *
 * Shell: pinning reads the image and the data sets; problems are said
 * on stderr as "hpctrain CMD: ..." (common/say.h) (image_pin.h, data_pin.h), spec
 * diagnostics go into the caller's list.
 */
#ifndef HPT_JOB_PREPARE_H
#define HPT_JOB_PREPARE_H

#include "launcher/runs/attempt.h" // defines: struct attempt

#include <stdbool.h>
#include <stddef.h>

struct diag_list;
struct rundir;
struct spec_override;

enum job_prepare_flags {
	/* validate: also look for the image's runtime in PATH and say what
	 * cannot be checked on this host */
	JOB_PREPARE_CHECK_RUNTIME = 1 << 0,
	/* rerun: the text is a run's resolved.yaml.  Its pins must still
	 * hold (the image's and each data.stage source's content as
	 * pinned, unless the next two flags allow a change, said as a
	 * warning), and it must resolve to itself: an edited one, or one
	 * from another hpctrain, is HPT_EXIT_BAD_SPEC. */
	JOB_PREPARE_RUN = 1 << 1,
	JOB_PREPARE_IMAGE_CHANGED_OK = 1 << 2,
	JOB_PREPARE_DATA_CHANGED_OK = 1 << 3,
	/* submit: store the code's snapshot under OUTPUT.DIR/.code/
	 * (validate and a dry run only pin its digest) */
	JOB_PREPARE_STORE_CODE = 1 << 4,
};

struct job_prepare_request {
	const char *where;                /* the spec's name, for diagnostics */
	const char *text;                 /* its bytes, read once (it may be stdin) */
	size_t len;
	const struct spec_override *sets; /* --set flags, then a sweep point's */
	size_t nsets;
	unsigned flags;                   /* enum job_prepare_flags */
	/* After the load, before pinning: may replace at->job (submit
	 * --shape auto loads it at the shape it picks).  0 or a status. */
	int (*shape)(struct attempt *at, struct diag_list *dl, void *arg);
	void *shape_arg;
	/* JOB_PREPARE_RUN: the run's first directory, whose code.json
	 * names the snapshot the run's code is in (job_prepare_run sets it) */
	const char *run;
	/* Not NULL: *files gets a malloc'd array of each data.stage
	 * source's file count (data_pin), for submit --dry-run. */
	size_t **files;
};

/* Loads, shapes, pins, resolves and hashes into at (attempt_init'ed):
 * at->job, at->resolved and at->sha256.  0, or the exit status:
 * HPT_EXIT_BAD_SPEC (diagnostics in dl), HPT_EXIT_NO_INPUT (an image or
 * source missing), what shape returned, HPT_EXIT_INTERNAL.  Release at
 * either way. */
int job_prepare(const struct job_prepare_request *r, struct attempt *at, struct diag_list *dl);

/* job_prepare of the run whose attempt directory is rd, from its
 * resolved.yaml, with JOB_PREPARE_RUN and the *_CHANGED_OK flags that
 * --image-changed-ok and --data-changed-ok ask for.  The same statuses;
 * HPT_EXIT_NO_INPUT when resolved.yaml cannot be read. */
int job_prepare_run(const struct rundir *rd, bool image_changed_ok, bool data_changed_ok,
		    struct attempt *at, struct diag_list *dl);

#endif
