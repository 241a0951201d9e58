/* duration.c - seconds as H:MM:SS (duration.h).  Core. */
#include "common/duration.h" // defines: duration_add_hms
#include "common/numcheck.h" // defines: numcheck_int64
#include "common/sbuf.h"     // defines: struct sbuf, sbuf_addf

#include <math.h>
#include <stdint.h>

void duration_add_hms(struct sbuf *out, double s)
{
	int64_t t = 0;

	if (!(s >= 0) || !isfinite(s)) {
		sbuf_addch(out, '-');
	} else if (s >= 1e12 || numcheck_int64(s + 0.5, &t)) {
		sbuf_addf(out, "%.3gh", s / 3600);
	} else {
		sbuf_addf(out, "%lld:%02lld:%02lld", (long long)(t / 3600),
			  (long long)(t / 60 % 60), (long long)(t % 60));
	}
}
