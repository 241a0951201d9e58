/* code_store.h - a code listing's files copied once into
 * OUTPUT.DIR/.code/<hex>/, shared by every run with the same tree.
 * Shell (code_store.c): mkdtemp, copies, rename. */
#ifndef HPT_CODE_STORE_H
#define HPT_CODE_STORE_H

struct code_list;
struct sbuf;

/* The snapshot directory of digest ("sha256:<hex>") under codes
 * (OUTPUT.DIR/.code): codes/<hex>, malloc'd; NULL for a digest of
 * another form. */
char *code_store_path(const char *codes, const char *digest);

/* Copies l's files from dir into code_store_path(codes, l->digest)
 * unless it is there already: directories 0700, files 0600 or 0700 as
 * they were executable, links as links.  The copy is made in a
 * temporary sibling (mkdtemp) and renamed into place, so the snapshot
 * appears whole or not at all; when a concurrent publisher of the same
 * digest renamed first, this copy is discarded.  The copy is made
 * holding codes/.lock shared (rundir_publish_lock_shared): a submit
 * killed mid-copy leaves a temporary that the next submit to find no
 * copy under way removes.  Each file is hashed
 * again as it is copied: one that no longer matches its listing fails.
 * 0, or HPT_EXIT_IO (a directory or file that cannot be made, with
 * err), HPT_EXIT_NO_INPUT (a source gone), HPT_EXIT_FAILURE (a file
 * changed since it was listed, named). */
int code_store(const struct code_list *l, const char *dir, const char *codes, struct sbuf *err);

#endif
