/* grow_on_read.c - a fault for the tests, kept out of the programs: an
 * LD_PRELOAD shim whose read(2), the first time it is given a file whose
 * name is $GROW_ON_READ, appends a byte to that file before it reads, as
 * a writer racing the reader would.  Deterministic: the file grows once,
 * between the reader's open and its first read, so a reader that compares
 * the file's stat before and after (code_scan, stage_scan_hash_fd) sees
 * it change every time.
 *
 *   cc -shared -fPIC -o grow_on_read.so grow_on_read.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);
	static int done;
	const char *want = getenv("GROW_ON_READ");
	char link[64], path[PATH_MAX];
	ssize_t len;

	if (!real)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	if (want && !done) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		len = readlink(link, path, sizeof(path) - 1);
		if (len > 0) {
			const char *base;

			path[len] = '\0';
			base = strrchr(path, '/');
			if (base && !strcmp(base + 1, want)) {
				int w = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

				done = 1;
				if (w >= 0) {
					if (write(w, "x", 1) != 1)
						done = 1;
					close(w);
				}
			}
		}
	}
	return real(fd, buf, n);
}
