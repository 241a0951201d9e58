/* resize.c - the next attempt's largest size (resize.h).  Core. */
#include "launcher/runs/resize.h" // defines: resize_next
#include "common/sbuf.h"          // defines: struct sbuf

int resize_next(int64_t min, int64_t max, int64_t left, int64_t *next, struct sbuf *why)
{
	if (min < 1)
		min = 1;
	if (max < min)
		max = min;
	if (left >= 0 && left < min) {
		sbuf_addf(why, "%lld node%s left, resources.nodes needs at least %lld",
			  (long long)left, left == 1 ? "" : "s", (long long)min);
		return -1;
	}
	*next = left >= 0 && left < max ? left : max;
	return 0;
}
