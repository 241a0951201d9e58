/* stage_path.h - where staged things are on a node: the cache directory,
 * an entry's directory, the path a program is given, its variable's name.
 * Pure core (stage_path.c): strings in, new strings out (free() them);
 * the caller passes getenv's answers and the uid in. */
#ifndef HPT_STAGE_PATH_H
#define HPT_STAGE_PATH_H

#include <stdbool.h>

/* The node's cache directory: cache_dir when the spec set data.cache.dir; else
 * under `to` (a path, or "auto" or NULL: preflight_scratch if set, else $TMPDIR if set,
 * else /dev/shm): "<to>/hpctrain-cache-<uid>".  tmpdir is getenv("TMPDIR") passed in. */
char *stage_cache_dir(const char *cache_dir, const char *to, const char *preflight_scratch,
		      const char *tmpdir, unsigned uid);

struct job;
/* A job's node cache, as stage_cache_dir of its data.cache.dir, data.to
 * and preflight.scratch: the one place that picks them, for the stage
 * step, launch and doctor's preflight alike. */
char *stage_job_cache_dir(const struct job *job, const char *tmpdir, unsigned uid);

/* "<cache>/pycache": PYTHONPYCACHEPREFIX of the user's programs that
 * run from a code snapshot on the node (launcher/launch/launch_code.c),
 * so that Python's bytecode never lands in the snapshot or its staged
 * copy.  Node-local, private (the cache's), shared by the user's ranks
 * and jobs there: Python writes each .pyc by an atomic rename, and a
 * library's bytecode, compiled once on a node, serves every later job. */
char *stage_pycache_dir(const char *cache);

/* The entry's published directory "<cache>/<64 hex>"; NULL when
 * manifest_hash is not "sha256:<64 hex>". */
char *stage_entry_dir(const char *cache, const char *manifest_hash);

/* What a program gets in HPCTRAIN_DATA_<NAME>: the entry's directory for a
 * directory source, the one file inside it (named by the source's
 * basename) for a file source.  NULL as stage_entry_dir. */
char *stage_entry_data_path(const char *cache, const char *manifest_hash, const char *src,
			    bool is_file);

/* The last component of src, ignoring trailing slashes ("data" for
 * "/a/data/"; "/" alone gives "data", which no file source can be). */
char *stage_path_basename(const char *src);

/* pattern with "%n" replaced by node and "%%" by "%" (a cache or report
 * path per node, for several simulated nodes on one host); any other
 * '%' sequence is kept as it is. */
char *stage_path_expand(const char *pattern, const char *node);

#endif
