/* isotime.c - times in the records' form (isotime.h).  Core. */
#include "common/isotime.h" // defines: isotime_format

void isotime_format(time_t t, char out[ISOTIME_SIZE])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, ISOTIME_SIZE, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
