/* doctor_self.h - the checks each task of `hpctrain doctor` makes of its
 * own node: GPUs, NICs, binding, files, munge, a one-core GEMM and the
 * job's container, into
 * one struct doctor_node that the exchange between nodes then carries.
 *
 * Shell (doctor_self.c): hwloc, the kernel's binding calls, sysfs and
 * /proc below a root, oneDNN and libmunge (the last three through
 * doctor_probe.c), so only bin/hpctrain-doctor links it.  The checks
 * themselves grade with doctor_check.c and doctor_grade.c.
 */
#ifndef HPT_DOCTOR_SELF_H
#define HPT_DOCTOR_SELF_H

#include "launcher/doctor/doctor.h" // defines: struct doctor_node
#include "topology/plan.h"          // defines: struct plan
#include "topology/topo.h"          // defines: struct node_topo

#include <stdbool.h>

struct job;

/* What the checks are asked to look at (the command's options). */
struct doctor_self_opts {
	const struct job *job; /* the spec checked for, or NULL without one */
	const char *root;      /* read sysfs and /proc below it; NULL or "": this machine */
	const char *run;       /* the run directory (--preflight), or NULL */
	const char *scratch;   /* node-local scratch, or NULL: the spec's, $TMPDIR, /tmp */
	double min_free_gb;    /* less free space fails the files check */
	long ranks_per_node;   /* binding slots to check; <= 0: the spec's, else 1 */
	double timeout_s;      /* the container probe is killed after it */
};

/* This node: its result and what the checks found on the way.  me is
 * graded in place; munge_socket is what the exchange between nodes
 * decodes the first node's credential with. */
struct doctor_self {
	struct doctor_node me;  /* this node's result */
	char *munge_socket;     /* Slurm's AuthInfo socket, or NULL: munge's default */
	struct node_topo topo;  /* as hwloc saw it */
	void *hwloc;            /* probe_load_live's topology, kept while topo is */
	struct plan plan;       /* the binding planned for the job's ranks */
	bool have_plan;
};

void doctor_self_init(struct doctor_self *s);
/* Frees what the checks left; accepts an initialised, unchecked struct. */
void doctor_self_release(struct doctor_self *s);

/* Runs every check of this node into s->me (named after the node): a
 * problem is a graded cell, never a return value.  s must be fresh from
 * doctor_self_init. */
void doctor_self_check(struct doctor_self *s, const struct doctor_self_opts *o);

#endif
