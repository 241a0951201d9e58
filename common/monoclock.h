/* monoclock.h - the monotonic clock in seconds, for timing steps, layers
 * and waits: never the wall clock, which NTP may step mid-run. */
#ifndef HPT_MONOCLOCK_H
#define HPT_MONOCLOCK_H

#include <time.h>

static inline double monoclock_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
