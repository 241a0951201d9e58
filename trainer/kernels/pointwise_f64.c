/* pointwise_f64.c - the pointwise kernels in double (the finite-difference checks).
 * Core.  The code is in pointwise.inc; see there. */
#include "trainer/kernels/kernels.h" // defines: the *_f64 declarations
#include "trainer/model/rng.h"             // defines: rng_hash_uniform

#include <math.h>

#define T double
#define FN(name) name##_f64
#include "trainer/kernels/pointwise.inc"
