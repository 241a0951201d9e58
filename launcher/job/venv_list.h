/* venv_list.h - a Python virtualenv's installed distributions, as the
 * run's identity and record hold them: each one's name and version from
 * its metadata (a *.dist-info's METADATA, an *.egg-info's PKG-INFO, the
 * "Name:" and "Version:" headers of core metadata), sorted, digested.
 * Pure core: metadata text in, a list and its digest out; the reading
 * of the venv is venv_pin.h's.  No pip call: pip may be absent, slow
 * (hundreds of ms to start) or another venv's, and it reads the same
 * files. */
#ifndef HPT_VENV_LIST_H
#define HPT_VENV_LIST_H

#include <jansson.h>
#include <stddef.h>

struct venv_package {
	char *name, *version;
};

/* Packages in the order added until venv_list_finish sorts them. */
struct venv_list {
	struct venv_package *v;
	size_t n, alloc;
	char digest[72]; /* "sha256:" and 64 hex digits, after venv_list_finish */
};

void venv_list_release(struct venv_list *l);

/* Adds the distribution whose core metadata is text (len bytes): the
 * first Name: and Version: headers, before the first blank line.  0, or
 * -1 when either is missing or empty (the caller names the file). */
int venv_list_add_metadata(struct venv_list *l, const char *text, size_t len);

/* Sorts by name (bytewise, then version) and digests the listing, one
 * "NAME==VERSION\n" line a package: the same packages give the same
 * digest whatever order the directory listed them in. */
void venv_list_finish(struct venv_list *l);

/* {"path": venv, "digest": l->digest, "packages": {NAME: VERSION, ...}}
 * (a new reference; NULL out of memory or on a name that is not UTF-8);
 * a name listed twice keeps its last version. */
json_t *venv_list_json(const struct venv_list *l, const char *venv);

#endif
