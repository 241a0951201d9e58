/* doctor_main.c - bin/hpctrain-doctor, which `hpctrain doctor` execs: the
 * doctor links MPI, oneDNN and munge, which the login-node binary must not. */
#include "common/exitcode.h" // defines: exitcode_finish
#include "common/say.h"      // defines: say_set_prefix, say_prefix
#include "launcher/slurm/slurm.h" // defines: hpt_slurm_fini

int cmd_doctor(int argc, char **argv);

int main(int argc, char **argv)
{
	int status;

	say_set_prefix("hpctrain doctor");
	status = cmd_doctor(argc, argv);
	hpt_slurm_fini(); /* the one end of what any part of it read of Slurm */
	return exitcode_finish(say_prefix(), status);
}
