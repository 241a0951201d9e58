/* isotime.h - a time as the records write it: ISO 8601 in UTC,
 * "2026-11-26T09:59:42Z" (submit.json, sweep records, status --json). */
#ifndef HPT_ISOTIME_H
#define HPT_ISOTIME_H

#include <time.h>

/* Characters of the text, with its NUL. */
#define ISOTIME_SIZE 21

/* Writes t as "YYYY-MM-DDTHH:MM:SSZ" into out. */
void isotime_format(time_t t, char out[ISOTIME_SIZE]);

#endif
