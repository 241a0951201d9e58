/* duration.h - seconds as H:MM:SS, the one formatter of a predicted or
 * measured run time that plan and plan --history print.  Core.  The
 * seconds come from records (a past run's pace, a plan's prediction):
 * a figure past any run (a year's worth of hours and more) is printed
 * short, not cast past long long (numcheck.h).
 */
#ifndef HPT_DURATION_H
#define HPT_DURATION_H

struct sbuf;

/* Appends s seconds, rounded, as H:MM:SS ("2:05:07"); "-" when s is NaN,
 * infinite or negative; "2.78e+08h" from 1e12 s on, where nobody counts
 * seconds. */
void duration_add_hms(struct sbuf *out, double s);

#endif
