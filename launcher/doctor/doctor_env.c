/* doctor_env.c - this node's name, the job's view of an env variable,
 * and libslurm set up once (see doctor_env.h).
 * Shell: getenv, gethostname, libslurm. */
#include "launcher/doctor/doctor_env.h" // defines: doctor_env_node_name, doctor_env_get
#include "common/nodename.h"            // defines: nodename_self
#include "common/sbuf.h"                // defines: struct sbuf, sbuf_addstr
#include "common/spec/spec.h"           // defines: struct job
#include "launcher/slurm/slurm.h"       // defines: hpt_slurm_init

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *doctor_env_node_name(void)
{
	return nodename_self();
}

const char *doctor_env_get(const struct job *job, const char *name)
{
	if (job)
		for (size_t i = 0; i < job->env.n; i++)
			if (!strcmp(job->env.v[i].name, name))
				return job->env.v[i].value;
	return getenv(name);
}

/* Once per process: the node check (munge's socket) and the ledger
 * record (the cluster's name) both need it. */
int doctor_env_slurm_ready(struct sbuf *err)
{
	static int status = -1;

	if (status < 0)
		status = hpt_slurm_init(err);
	else if (status)
		sbuf_addstr(err, "no Slurm configuration");
	return status;
}
