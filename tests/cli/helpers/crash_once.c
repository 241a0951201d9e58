/* crash_once.c - a fault for the tests, kept out of the programs: an
 * LD_PRELOAD shim whose MPI_Init calls Open MPI's, then makes the first
 * process of a job to create $CRASH_ONCE_FILE (on a file system the
 * nodes share) die of SIGSEGV, as a task that crashed inside Open MPI's
 * start-up under Slurm's PMIx plugin does (see add_stage in
 * launcher/slurm/render.c).  The file then exists, so every later
 * process, the step's second try included, runs on.
 *
 *   cc -shared -fPIC -o crash_once.so crash_once.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int MPI_Init(int *argc, char ***argv)
{
	int (*real)(int *, char ***) = (int (*)(int *, char ***))dlsym(RTLD_NEXT, "MPI_Init");
	const char *path = getenv("CRASH_ONCE_FILE");
	int rc, fd;

	if (!real)
		abort();
	rc = real(argc, argv);
	if (rc || !path || !*path)
		return rc;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return rc;
	close(fd);
	fprintf(stderr, "crash_once: crashing as asked\n");
	fflush(stderr);
	raise(SIGSEGV);
	return rc;
}
