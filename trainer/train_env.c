/* train_env.c - the trainer's environment variables, strictly, and
 * OpenMP's thread count clamped to the machine (see train_env.h).
 * Shell: getenv, sched_getaffinity, omp_set_num_threads. */
#include "trainer/train_env.h"        // defines: train_env_check
#include "common/envvar.h"            // defines: envvar_int, envvar_choice
#include "common/sbuf.h"              // defines: struct sbuf, sbuf_clip
#include "trainer/cuda/gpu_plan.h"         // defines: GPU_SHARE_ENV
#include "trainer/kernels/cpu_isa.h"  // defines: cpu_isa_parse, CPU_ISA_NAMES
#include "trainer/cpu/tune.h"             // defines: tune_parse_mode

#include <omp.h>
#include <sched.h>
#include <stdlib.h>

/* An unset or empty variable: the libraries read both as unset. */
static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static int check_isa(struct sbuf *err)
{
	const char *cap = env("HPCTRAIN_MAX_CPU_ISA");
	char clip[SBUF_CLIP_SIZE];
	enum cpu_isa isa;

	if (!cap || !cpu_isa_parse(cap, &isa))
		return 0;
	sbuf_addf(err, "HPCTRAIN_MAX_CPU_ISA: unknown instruction set \"%s\"; expected one of %s",
		  sbuf_clip(cap, clip), CPU_ISA_NAMES);
	return -1;
}

static int check_kernels(struct sbuf *err)
{
	const char *v = env("HPCTRAIN_KERNELS");
	char clip[SBUF_CLIP_SIZE];
	bool tune;

	if (!tune_parse_mode(v, &tune))
		return 0;
	sbuf_addf(err, "HPCTRAIN_KERNELS: expected one of tune, fixed, got \"%s\"",
		  sbuf_clip(v, clip));
	return -1;
}

static int check_gpu_share(struct sbuf *err)
{
	static const char *const values[] = { "0", "1", NULL };
	const char *v = env(GPU_SHARE_ENV);
	int i;

	return v && envvar_choice(GPU_SHARE_ENV, v, values, &i, err) ? -1 : 0;
}

/* The CPUs this process may run on (its affinity mask), at most
 * TRAIN_ENV_MAX_THREADS. */
static int64_t cpus_allowed(void)
{
	cpu_set_t set;
	int n = sched_getaffinity(0, sizeof(set), &set) ? 0 : CPU_COUNT(&set);

	if (n < 1) /* a mask wider than cpu_set_t: the bound alone */
		return TRAIN_ENV_MAX_THREADS;
	return n < TRAIN_ENV_MAX_THREADS ? n : TRAIN_ENV_MAX_THREADS;
}

/* OMP_NUM_THREADS: 0 when unset, the count clamped, or -1 with err.
 * A list ("4,2", nested levels) is refused as --threads would refuse it:
 * the trainer has no nested parallel regions. */
static int threads_from_env(int64_t *threads, struct sbuf *err, struct sbuf *warn)
{
	const char *v = env("OMP_NUM_THREADS");
	struct sbuf why = SBUF_INIT;
	int64_t limit = cpus_allowed();
	char clip[SBUF_CLIP_SIZE];
	enum envvar_status st;

	*threads = 0;
	if (!v)
		return 0;
	st = envvar_int("OMP_NUM_THREADS", v, 1, TRAIN_ENV_MAX_THREADS, threads, &why);
	if (st == ENVVAR_BAD)
		sbuf_addstr(err, why.buf);
	else if (st == ENVVAR_ABOVE || *threads > limit)
		sbuf_addf(warn, "OMP_NUM_THREADS: %s is more than the %lld CPUs this process may run "
			  "on; using %lld threads", sbuf_clip(v, clip), (long long)limit,
			  (long long)limit);
	if (*threads > limit)
		*threads = limit;
	sbuf_release(&why);
	return st == ENVVAR_BAD ? -1 : 0;
}

int train_env_check(int64_t threads_flag, int *threads, struct sbuf *err, struct sbuf *warn)
{
	struct sbuf clamped = SBUF_INIT;
	int64_t from_env;

	/* the variable is checked even under --threads, which makes it moot:
	 * a malformed one is a mistake either way */
	if (check_isa(err) || check_kernels(err) || check_gpu_share(err) || threads_from_env(&from_env, err, &clamped)) {
		sbuf_release(&clamped);
		return -1;
	}
	if (threads_flag <= 0)
		sbuf_addstr(warn, clamped.buf);
	sbuf_release(&clamped);
	*threads = (int)(threads_flag > 0 ? threads_flag : from_env);
	if (*threads > 0)
		omp_set_num_threads(*threads);
	return 0;
}
