/* data_read.h - how fast a run's trainer read its data set: the "data"
 * record of metrics.jsonl, for hpctrain status and report.
 *
 * Core (data_read.c): a parsed record in, figures and text out.  The
 * trainer writes, once per start, before its first step:
 *   {"event":"data","dataset":D,"path":P,"staged":B,"bytes":N,
 *    "seconds":S,"bytes_per_s":R}
 * (see hpctrain-train(1), OUTPUT); any program may write it, so every
 * figure is checked: a count or time that is not a finite number >= 0
 * is NAN, and no rate is said without both.
 */
#ifndef HPT_DATA_READ_H
#define HPT_DATA_READ_H

#include <jansson.h>
#include <stdbool.h>

struct sbuf;

/* Longer paths are cut, ending in "...": a fixed size keeps struct
 * run_progress free of owned memory. */
#define DATA_READ_PATH_MAX 512

struct data_read {
	bool seen;               /* a data record was read */
	bool staged;             /* the path is the node's staged copy, not the source */
	double bytes, seconds;   /* NAN when not said */
	char path[DATA_READ_PATH_MAX];
};

/* Takes a {"event":"data"} record into d (a later one replaces it: a
 * resumed run read its data again). */
void data_read_take(struct data_read *d, json_t *record);

/* Bytes per second, or NAN when the record does not say both figures or
 * the time is 0. */
double data_read_rate(const struct data_read *d);

/* "data read at 812.3 MB/s from /tmp/c/ab12 (staged)": 41.2 MB in
 * 0.05 s; control characters in the path escaped.  Nothing unless seen. */
void data_read_format(const struct data_read *d, struct sbuf *out);

/* {"path", "staged", "bytes", "seconds", "bytes_per_s"} (null for a
 * figure not said), or JSON null unless seen. */
json_t *data_read_json(const struct data_read *d);

#endif
