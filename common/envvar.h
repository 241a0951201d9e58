/* envvar.h - numbers and choices read from environment variables, parsed
 * as strictly as the flags they stand for.
 *
 * Core: the caller reads the variable (getenv, or a callback in tests)
 * and passes its name and value; a refusal names the variable and quotes
 * the value, clipped (sbuf_clip), in the flags' words:
 *
 *     OMP_NUM_THREADS: expected an integer 1..4096, got "abc"
 *
 * Decimal digits only, with a '-' only where min < 0: no blanks, no '+',
 * no 0x, nothing after the digits, so what atoi or strtol would make of
 * " 12abc" or "-1" is refused rather than guessed.  The shell decides
 * what a refusal means (launch and train: the usage status, 2).
 */
#ifndef HPT_ENVVAR_H
#define HPT_ENVVAR_H

#include <stdint.h>

struct sbuf;

enum envvar_status {
	ENVVAR_OK,
	ENVVAR_BAD,   /* not a decimal integer, or below min; err says so */
	ENVVAR_ABOVE, /* an integer above max, overflow included: *out = max,
		       * and err says what a refusal would, for a caller that
		       * refuses; one that clamps (a value inherited from
		       * outside, OMP_NUM_THREADS) warns in words of its own */
};

/* value NULL is ENVVAR_BAD too: callers decide what unset means first. */
enum envvar_status envvar_int(const char *name, const char *value, int64_t min, int64_t max,
			      int64_t *out, struct sbuf *err);

/* value is one of names (NULL-terminated, compared exactly): *idx, 0;
 * else -1 with "NAME: expected one of A, B, got "V"" in err. */
int envvar_choice(const char *name, const char *value, const char *const *names, int *idx,
		  struct sbuf *err);

#endif
