/* doctor_main.c - bin/hpctrain-doctor, which `hpctrain doctor` execs: the
 * doctor links MPI, oneDNN and munge, which the login-node binary must not. */
#include "common/exitcode.h" // defines: exitcode_finish
#include "common/say.h"      // defines: say_set_prefix, say_prefix

int cmd_doctor(int argc, char **argv);

int main(int argc, char **argv)
{
	say_set_prefix("hpctrain doctor");
	return exitcode_finish(say_prefix(), cmd_doctor(argc, argv));
}
