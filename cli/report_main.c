/* report_main.c - bin/hpctrain-report, which `hpctrain report` execs: the
 * charts link cairo, which the login-node binary need not. */
#include "common/exitcode.h" // defines: HPT_EXIT_IO

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cmd_report(int argc, char **argv);

int main(int argc, char **argv)
{
	int status = cmd_report(argc, argv);

	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "hpctrain report: error writing standard output: %s\n",
				strerror(errno));
		return status ? status : HPT_EXIT_IO;
	}
	return status;
}
