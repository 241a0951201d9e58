/* doctor_main.c - bin/hpctrain-doctor, which `hpctrain doctor` execs: the
 * doctor links MPI, oneDNN and munge, which the login-node binary must not. */
#include "common/exitcode.h" // defines: exitcode_finish

int cmd_doctor(int argc, char **argv);

int main(int argc, char **argv)
{
	return exitcode_finish("hpctrain doctor", cmd_doctor(argc, argv));
}
