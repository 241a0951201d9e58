/* stage_main.c - bin/hpctrain-stage, which `hpctrain stage` execs: the
 * staging step links MPI, which the login-node binary must not. */
#include "common/exitcode.h" // defines: exitcode_finish

int cmd_stage(int argc, char **argv);

int main(int argc, char **argv)
{
	return exitcode_finish("hpctrain stage", cmd_stage(argc, argv));
}
