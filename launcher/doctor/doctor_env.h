/* doctor_env.h - what `hpctrain doctor` reads of its surroundings: this
 * node's name, the environment the job's ranks will get, and libslurm,
 * set up once per process.
 * Shell (doctor_env.c): getenv, gethostname, Slurm's configuration.
 */
#ifndef HPT_DOCTOR_ENV_H
#define HPT_DOCTOR_ENV_H

struct job;
struct sbuf;

/* $SLURMD_NODENAME, else the host name up to its first dot, else
 * "localhost".  The string is static or the environment's: do not free
 * it; the next call may overwrite it. */
const char *doctor_env_node_name(void);

/* The value of an env variable as the job's ranks will see it: the
 * spec's (job not NULL), which the ranks get last, else the process's;
 * NULL when neither has it.  Borrowed. */
const char *doctor_env_get(const struct job *job, const char *name);

/* libslurm, set up on the first call (hpt_slurm_init), for the
 * cluster's name and munge's socket; later calls give the first's
 * answer: 0, or non-zero with err (the first call's reason, later
 * "no Slurm configuration"). */
int doctor_env_slurm_ready(struct sbuf *err);

#endif
