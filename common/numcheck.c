/* numcheck.c - checked conversions of a double (numcheck.h).  Core. */
#include "common/numcheck.h" // defines: numcheck_int64, numcheck_time_add

#include <math.h>

int numcheck_int64(double v, int64_t *out)
{
	/* 2^63 is exact in a double; INT64_MAX is not (it rounds up to it) */
	if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
		return -1;
	*out = (int64_t)v;
	return 0;
}

int numcheck_time_add(time_t t, double s, time_t *out)
{
	int64_t whole, sum;

	if (!(s >= 0) || numcheck_int64(ceil(s), &whole) ||
	    __builtin_add_overflow((int64_t)t, whole, &sum) || (time_t)sum != sum)
		return -1;
	*out = (time_t)sum;
	return 0;
}
