/* exitcode.c - the programs' last word (exitcode_finish, see exitcode.h). */
#include "common/exitcode.h" // defines: exitcode_finish, HPT_EXIT_IO

#include <errno.h>
#include <stdio.h>
#include <string.h>

int exitcode_finish(const char *who, int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "%s: error writing standard output: %s\n", who,
				strerror(errno));
		return status ? status : HPT_EXIT_IO;
	}
	return status;
}
