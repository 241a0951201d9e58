/* jsonfile.h - a JSON document from a file: read as fileio reads (a
 * regular file only, never blocking on a FIFO, bounded), then parsed
 * with jansson.
 * Shell.  jansson's json_load_file() fopen()s the path itself, so a FIFO
 * named like submit.json or a liveness file hangs the reader forever;
 * every JSON file the commands read goes through here instead. */
#ifndef HPT_JSONFILE_H
#define HPT_JSONFILE_H

#include <jansson.h>
#include <stddef.h>

struct sbuf;

/* The document in path (at most max bytes; flags as fileio_read_flags),
 * a new reference; NULL with err ("cannot open x: ...", "x: line 3
 * column 1: ...", "x is larger than 1048576 bytes"). */
json_t *jsonfile_load(const char *path, size_t max, unsigned flags, struct sbuf *err);

#endif
