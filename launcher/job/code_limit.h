/* code_limit.h - a code tree held to code.max_files and code.max_bytes,
 * and a refusal that says where the bulk is.
 * Pure core (code_limit.c): a listing in, a message out. */
#ifndef HPT_CODE_LIMIT_H
#define HPT_CODE_LIMIT_H

#include <stdint.h>

struct code_list;
struct sbuf;

/* 0 when l (its files' sizes known, hashes not needed) holds at most
 * max_files entries and max_bytes bytes; else -1 with err: the totals,
 * the limit passed, the three largest subdirectories of dir by the
 * measure that is over (files directly in dir count as "./"), and the
 * keys that leave files out or raise the limit.  Sorts l by path. */
int code_limit_check(struct code_list *l, const char *dir, int64_t max_bytes, int64_t max_files,
		     struct sbuf *err);

#endif
