/* json_print.h - how every command prints a JSON document (--json): two-
 * space indents, ASCII with \u escapes (a job name may hold any UTF-8),
 * keys in the order they were built, a final newline. */
#ifndef HPT_JSON_PRINT_H
#define HPT_JSON_PRINT_H

#include <jansson.h>

/* Prints doc to stdout and drops the reference to it.  Returns 0, 70
 * (HPT_EXIT_INTERNAL) for a NULL doc (jansson's answer to running out of
 * memory or to a string that is not UTF-8; said on stderr), or 8 (HPT_EXIT_IO) when stdout cannot take it. */
int json_print(json_t *doc);

#endif
