/* pointwise_f32.c - the pointwise kernels in float (the training path).
 * Core.  The code is in pointwise.inc; see there. */
#include "trainer/kernels/kernels.h" // defines: the *_f32 declarations
#include "trainer/model/rng.h"             // defines: rng_hash_uniform

#include <math.h>

#define T float
#define FN(name) name##_f32
#include "trainer/kernels/pointwise.inc"
