/* data_read.c - the trainer's data record read back (see data_read.h).
 * Pure core. */
#include "common/data_read.h" // defines: struct data_read, data_read_*
#include "common/sbuf.h"             // defines: struct sbuf, sbuf_add_number, sbuf_add_printable
#include "common/jsonb.h" // defines: jsonb_text

#include <math.h> /* isfinite: a macro, no libm */
#include <string.h>

static double figure(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	double x = json_is_number(v) ? json_number_value(v) : NAN;

	return isfinite(x) && x >= 0 ? x : NAN;
}

void data_read_take(struct data_read *d, json_t *record)
{
	const char *path = json_string_value(json_object_get(record, "path"));
	size_t n = path ? strlen(path) : 0;

	memset(d, 0, sizeof(*d));
	d->seen = true;
	d->staged = json_is_true(json_object_get(record, "staged"));
	d->bytes = figure(record, "bytes");
	d->seconds = figure(record, "seconds");
	if (n < sizeof(d->path)) {
		memcpy(d->path, path ? path : "", n + 1);
	} else { /* cut on a byte: sbuf_add_printable escapes a torn character */
		memcpy(d->path, path, sizeof(d->path) - 4);
		memcpy(d->path + sizeof(d->path) - 4, "...", 4);
	}
}

double data_read_rate(const struct data_read *d)
{
	if (!d->seen || !isfinite(d->bytes) || !isfinite(d->seconds) || d->seconds <= 0)
		return NAN;
	return d->bytes / d->seconds;
}

void data_read_format(const struct data_read *d, struct sbuf *out)
{
	double rate = data_read_rate(d);

	if (!d->seen)
		return;
	sbuf_addstr(out, "data read ");
	if (!isnan(rate)) {
		sbuf_addstr(out, "at ");
		sbuf_add_bytes(out, rate);
		sbuf_addstr(out, "/s ");
	}
	sbuf_addstr(out, "from ");
	sbuf_add_printable(out, *d->path ? d->path : "?");
	sbuf_addstr(out, d->staged ? " (staged): " : " (source): ");
	sbuf_add_bytes(out, d->bytes);
	sbuf_addstr(out, " in ");
	sbuf_add_number(out, d->seconds, 4);
	sbuf_addstr(out, " s");
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *data_read_json(const struct data_read *d)
{
	if (!d->seen)
		return json_null();
	/* a path is bytes (or cut): carried escaped when not UTF-8 */
	return json_pack("{s:o, s:b, s:o, s:o, s:o}", "path", jsonb_text(d->path), "staged",
			 d->staged, "bytes", num(d->bytes), "seconds", num(d->seconds),
			 "bytes_per_s", num(data_read_rate(d)));
}
