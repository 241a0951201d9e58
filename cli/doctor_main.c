/* doctor_main.c - bin/hpctrain-doctor, which `hpctrain doctor` execs: the
 * doctor links MPI, oneDNN and munge, which the login-node binary must not. */
#include "common/exitcode.h" // defines: HPT_EXIT_IO

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cmd_doctor(int argc, char **argv);

int main(int argc, char **argv)
{
	int status = cmd_doctor(argc, argv);

	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "hpctrain doctor: error writing standard output: %s\n",
				strerror(errno));
		return status ? status : HPT_EXIT_IO;
	}
	return status;
}
