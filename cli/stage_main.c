/* stage_main.c - bin/hpctrain-stage, which `hpctrain stage` execs: the
 * staging step links MPI, which the login-node binary must not. */
#include "common/exitcode.h" // defines: HPT_EXIT_IO

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cmd_stage(int argc, char **argv);

int main(int argc, char **argv)
{
	int status = cmd_stage(argc, argv);

	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "hpctrain stage: error writing standard output: %s\n",
				strerror(errno));
		return status ? status : HPT_EXIT_IO;
	}
	return status;
}
