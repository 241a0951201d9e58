/* envvar.c - strict numbers and choices from environment variables
 * (see envvar.h).  Core: the caller reads the environment. */
#include "common/envvar.h" // defines: envvar_int, envvar_choice
#include "common/sbuf.h"   // defines: struct sbuf, sbuf_clip

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void expected_int(const char *name, const char *value, int64_t min, int64_t max,
			 struct sbuf *err)
{
	char clip[SBUF_CLIP_SIZE];

	sbuf_addf(err, "%s: expected an integer %lld..%lld, got \"%s\"", name, (long long)min,
		  (long long)max, value ? sbuf_clip(value, clip) : "");
}

enum envvar_status envvar_int(const char *name, const char *value, int64_t min, int64_t max,
			      int64_t *out, struct sbuf *err)
{
	const char *digits = value && *value == '-' && min < 0 ? value + 1 : value;
	char *end;
	long long v;

	if (!digits || !*digits || strspn(digits, "0123456789") != strlen(digits)) {
		expected_int(name, value, min, max, err);
		return ENVVAR_BAD;
	}
	errno = 0;
	v = strtoll(value, &end, 10);
	if (v < min) { /* LLONG_MIN on a negative overflow */
		expected_int(name, value, min, max, err);
		return ENVVAR_BAD;
	}
	if (errno == ERANGE || v > max) {
		expected_int(name, value, min, max, err);
		*out = max;
		return ENVVAR_ABOVE;
	}
	*out = v;
	return ENVVAR_OK;
}

int envvar_choice(const char *name, const char *value, const char *const *names, int *idx,
		  struct sbuf *err)
{
	char clip[SBUF_CLIP_SIZE];

	for (int i = 0; value && names[i]; i++)
		if (!strcmp(value, names[i])) {
			*idx = i;
			return 0;
		}
	sbuf_addf(err, "%s: expected one of ", name);
	for (int i = 0; names[i]; i++)
		sbuf_addf(err, "%s%s", i ? ", " : "", names[i]);
	sbuf_addf(err, ", got \"%s\"", value ? sbuf_clip(value, clip) : "");
	return -1;
}
