/* report_main.c - bin/hpctrain-report, which `hpctrain report` execs: the
 * charts link cairo, which the login-node binary need not. */
#include "common/exitcode.h" // defines: exitcode_finish
#include "common/say.h"      // defines: say_set_prefix, say_prefix
#include "launcher/slurm/slurm.h" // defines: hpt_slurm_fini

int cmd_report(int argc, char **argv);

int main(int argc, char **argv)
{
	int status;

	say_set_prefix("hpctrain report");
	status = cmd_report(argc, argv);
	hpt_slurm_fini(); /* the one end of what any part of it read of Slurm */
	return exitcode_finish(say_prefix(), status);
}
