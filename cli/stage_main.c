/* stage_main.c - bin/hpctrain-stage, which `hpctrain stage` execs: the
 * staging step links MPI, which the login-node binary must not. */
#include "common/exitcode.h" // defines: exitcode_finish
#include "common/say.h"      // defines: say_set_prefix, say_prefix

int cmd_stage(int argc, char **argv);

int main(int argc, char **argv)
{
	say_set_prefix("hpctrain stage");
	return exitcode_finish(say_prefix(), cmd_stage(argc, argv));
}
