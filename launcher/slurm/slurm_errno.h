/* slurm_errno.h - the exit status of a libslurm call that failed, from
 * its errno: could Slurm not be reached (5), did it say no (6), or is
 * the job unknown (4).
 * Core: a function of the number alone, so each group has a tested
 * answer (tests/unit/test_slurm_errno.c).  Every libslurm call of
 * hpctrain (submit, will-run, status, cancel, doctor's and stage's
 * queries) fails through launcher/slurm/slurm.c's failure(), which asks
 * here.  A stopped (SIGSTOPped, hung) slurmctld accepts the connection
 * and never answers: libslurm gives up after MessageTimeout with a
 * socket timeout, which is the controller not answering, as a down one
 * (connection refused) is; it was taken for a refusal (6).
 */
#ifndef HPT_SLURM_ERRNO_H
#define HPT_SLURM_ERRNO_H

/* HPT_EXIT_UNAVAILABLE for every failure to reach or hear from the
 * controller (connection, send, receive, a socket timeout or a message
 * cut short, authentication, standby; ETIMEDOUT, ECONNREFUSED),
 * HPT_EXIT_NO_INPUT for ESLURM_INVALID_JOB_ID, else HPT_EXIT_REJECTED. */
int hpt_slurm_errno_status(int e);

#endif
