/* data_env.h - where a rank finds the job's staged data on its node:
 * HPCTRAIN_DATA_<NAME> for each data.stage entry, the image launch
 * starts when container.stage, and the code snapshot's copy the ranks
 * run in when the code is staged.
 *
 * Core (data_env.c): the job, $TMPDIR and the uid in; each entry's path
 * in the node's cache (launcher/stage/stage_path.h) out.  The shell
 * (data_env_local.c) then looks on the node and falls back to an
 * entry's source where its copy is missing, as when a job is launched
 * by hand without its stage step.
 */
#ifndef HPT_DATA_ENV_H
#define HPT_DATA_ENV_H

#include "launcher/rank/env_list.h" // defines: struct env_list

#include <stdbool.h>
#include <stddef.h>

struct job;
struct sbuf;

struct data_env_entry {
	char *name;   /* the entry's name */
	char *var;    /* HPCTRAIN_DATA_<NAME> */
	char *src;    /* its source on the shared file system */
	char *staged; /* its copy in the cache; NULL when the entry is not pinned */
	const char *path; /* what the program gets: staged, or src after a fallback */
};

/* Invariants: v[i].path points at v[i].staged or v[i].src; cache is
 * NULL when n == 0; image points at the "image" entry's path when
 * container.stage, else is NULL; code at the "code" entry's path when
 * it is the code snapshot's (spec_code_is_stage_entry), else is NULL. */
struct data_env {
	struct data_env_entry *v;
	size_t n;
	char *cache;       /* the node's cache directory */
	const char *image; /* the image to start */
	const char *code;  /* the code snapshot to run in */
};

#define DATA_ENV_INIT { NULL, 0, NULL, NULL, NULL }

/* Fills out (DATA_ENV_INIT before) from job: the cache directory from
 * data.cache.dir, data.to, preflight.scratch and tmpdir (getenv("TMPDIR"),
 * or NULL), and each entry's copy in it.  Never fails. */
void data_env_plan(const struct job *job, const char *tmpdir, unsigned uid, struct data_env *out);

/* Checks each copy on this node (shell): where one is missing, the
 * entry's path becomes its source and its name is added to a note in
 * missing ("fmnist, image"); returns how many fell back. */
size_t data_env_local_check(struct data_env *d, struct sbuf *missing);

/* Sets each entry's variable to its path, in the entries' order. */
void data_env_add(const struct data_env *d, struct env_list *out);

/* Frees everything; d becomes DATA_ENV_INIT.  Accepts DATA_ENV_INIT. */
void data_env_release(struct data_env *d);

#endif
