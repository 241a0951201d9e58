/* numcheck.h - a double made an integer or a time only when it fits.
 * Core.  Figures read from a record (a past run's step_ms, a plan's
 * predicted run) can be anything JSON holds, up to 1e308; a cast of a
 * double outside the target's range is undefined (C11 6.3.1.4) and gave
 * plan a run of -2562047788015215:-30:-8 and a finish of "now".  Every
 * double that becomes an integer or a time on its way to the user goes
 * through here, and the caller decides what an unrepresentable one
 * means (not runnable, "-", a bad record).
 */
#ifndef HPT_NUMCHECK_H
#define HPT_NUMCHECK_H

#include <stdint.h>
#include <time.h>

/* v truncated toward zero, as a cast would, into *out: 0, or -1 (and
 * *out untouched) when v is NaN, infinite or outside int64_t. */
int numcheck_int64(double v, int64_t *out);

/* t + s seconds, s rounded up to a whole second, into *out: 0, or -1
 * when s is NaN, infinite or negative, or the sum leaves time_t. */
int numcheck_time_add(time_t t, double s, time_t *out);

#endif
