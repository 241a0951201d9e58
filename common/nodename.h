/* nodename.h - this node's name as Slurm knows it: SLURMD_NODENAME in a
 * job step (the netns cluster's nodes share one host name), else the
 * host's name up to its first dot.  Shell (getenv, gethostname); one
 * home for doctor's records and the trainer's straggler record. */
#ifndef HPT_NODENAME_H
#define HPT_NODENAME_H

/* A static buffer or the environment's string; "localhost" when the
 * host has no name. */
const char *nodename_self(void);

#endif
