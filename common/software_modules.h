/* software_modules.h - the environment modules loaded, as the software
 * record (software.h) keeps them: from LOADEDMODULES and _LMFILES_, the
 * colon-separated lists Lmod and Environment Modules both keep of what
 * is loaded (full names, NAME/VERSION, with the default version a bare
 * `module load NAME` picked already resolved; and the files).  Read from
 * the environment rather than by running `module list`: that needs a
 * shell with the module function defined, prints for people (to
 * stderr, in columns), and says the same.
 * Pure core: two strings in, JSON out. */
#ifndef HPT_SOFTWARE_MODULES_H
#define HPT_SOFTWARE_MODULES_H

#include <jansson.h>

/* [{"name", "version", "file"}] in load order (a new reference; NULL
 * out of memory or on bytes that are not UTF-8): NAME/VERSION split at
 * the last '/' (py-torch/2.1+cuda: py-torch, 2.1+cuda; a module without
 * one has a null version), file the same place of files when both lists
 * have as many entries (else null).  loaded NULL or empty: []. */
json_t *software_modules_json(const char *loaded, const char *files);

#endif
