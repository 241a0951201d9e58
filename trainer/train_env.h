/* train_env.h - the trainer's environment variables, checked before
 * anything starts, and the thread count OpenMP gets.
 *
 *   HPCTRAIN_MAX_CPU_ISA  one of CPU_ISA_NAMES, case ignored (cpu_isa.h)
 *   HPCTRAIN_KERNELS      tune or fixed (tune.h)
 *   HPCTRAIN_GPU_SHARE    0 or 1
 *   OMP_NUM_THREADS       an integer >= 1, as --threads takes; inherited
 *                         from outside, so a value above the CPUs this
 *                         process may run on (and above 4096, --threads's
 *                         bound) is clamped to them, with a warning
 * Anything else in them is a usage error naming the variable; an empty
 * one counts as unset, as libgomp and oneDNN read them.
 */
#ifndef HPT_TRAIN_ENV_H
#define HPT_TRAIN_ENV_H

#include <stdint.h>

struct sbuf;

/* --threads's bound, which OMP_NUM_THREADS is clamped to as well. */
#define TRAIN_ENV_MAX_THREADS 4096

/* Checks the variables above; *threads becomes the thread count to use
 * (threads_flag when > 0, else OMP_NUM_THREADS clamped, else 0: OpenMP's
 * default, one per CPU this process may run on), and OpenMP gets it now,
 * before any parallel region: libgomp read OMP_NUM_THREADS when it was
 * loaded and would start that many threads at the first one, however
 * many.  0, with a warning in warn when a value was clamped; or -1 with
 * err (a usage error). */
int train_env_check(int64_t threads_flag, int *threads, struct sbuf *err, struct sbuf *warn);

#endif
