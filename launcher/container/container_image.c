/* container_image.c - the image's kind and the node's runtime.
 * Shell: see container_image.h. */
#include "launcher/container/container_image.h" // defines: container_image_kind, container_image_runtime, container_image_in_path
#include "common/fileio.h" // defines: fileio_open_regular, fileio_read_fd
#include "common/sbuf.h"   // defines: struct sbuf

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const programs[] = {
	[CONTAINER_CHARLIECLOUD] = "ch-run", [CONTAINER_APPTAINER] = "apptainer",
	[CONTAINER_ENROOT] = "enroot", [CONTAINER_PODMAN] = "podman",
};

const char *container_image_program(int runtime)
{
	return runtime > CONTAINER_AUTO && runtime < CONTAINER_NRUNTIMES ? programs[runtime] : NULL;
}

#define SQUASH_SUPER 96      /* bytes of a SquashFS 4 superblock */
#define SQUASH_BYTES_USED 40 /* its bytes_used: le64, the image's length */

/* A SquashFS file holds its whole superblock and at least the bytes its
 * superblock says the image uses: the magic alone passes a 4-byte "hsqs"
 * file, or an image cut short by a full disk or an interrupted copy,
 * which would then fail on some node at mount time, or in the middle of
 * a run when squashfuse reads past the end. */
static int squash_whole(int fd, const char *image, const struct sbuf *head, struct sbuf *err)
{
	const unsigned char *sb = (const unsigned char *)head->buf;
	uint64_t used = 0;
	struct stat st;

	if (head->len < SQUASH_SUPER || fstat(fd, &st)) {
		sbuf_addf(err, "container image %s is a truncated SquashFS image (%zu bytes, less "
			  "than its superblock)", image, head->len);
		return -1;
	}
	for (int i = 7; i >= 0; i--)
		used = used << 8 | sb[SQUASH_BYTES_USED + i];
	if (used < SQUASH_SUPER || used > (uint64_t)st.st_size) {
		sbuf_addf(err, "container image %s is a truncated SquashFS image: its superblock "
			  "says it uses %llu bytes, the file has %lld", image,
			  (unsigned long long)used, (long long)st.st_size);
		return -1;
	}
	return 0;
}

static int file_kind(const char *image, enum container_image_kind *kind, struct sbuf *err)
{
	struct sbuf head = SBUF_INIT;
	int fd = fileio_open_regular(image, 0, err), rc = -1;

	if (fd < 0)
		return -1;
	/* up to SQUASH_SUPER bytes: the superblock; a SIF's magic is at 32 */
	if (!fileio_read_fd(fd, image, SQUASH_SUPER - 1, &head, err)) {
		if (head.len >= 4 && !memcmp(head.buf, "hsqs", 4)) {
			if (!squash_whole(fd, image, &head, err)) {
				*kind = CONTAINER_IMAGE_SQUASHFS;
				rc = 0;
			}
		} else if (head.len >= 41 && !memcmp(head.buf + 32, "SIF_MAGIC", 9)) {
			*kind = CONTAINER_IMAGE_SIF;
			rc = 0;
		} else {
			sbuf_addf(err, "container image %s is neither a directory, a SquashFS "
				  "nor a SIF file", image);
		}
	}
	close(fd);
	sbuf_release(&head);
	return rc;
}

int container_image_kind(const char *image, enum container_image_kind *kind, struct sbuf *err)
{
	struct stat st;

	if (image[0] != '/') {
		*kind = CONTAINER_IMAGE_REF;
		return 0;
	}
	if (stat(image, &st)) {
		sbuf_addf(err, "container image %s: %s", image, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		*kind = CONTAINER_IMAGE_DIR;
		return 0;
	}
	return file_kind(image, kind, err);
}

int container_image_in_path(const char *prog)
{
	const char *path = getenv("PATH"), *p;
	struct sbuf f = SBUF_INIT;
	int found = 0;

	for (p = path ? path : "/usr/bin:/bin"; !found; p++) {
		size_t n = strcspn(p, ":");

		sbuf_reset(&f);
		sbuf_addf(&f, "%.*s%s%s", (int)n, p, n ? "/" : "", prog);
		found = !access(f.buf, X_OK);
		p += n;
		if (!*p)
			break;
	}
	sbuf_release(&f);
	return found;
}

int container_image_runtime(int wanted, int *got, struct sbuf *err)
{
	if (wanted != CONTAINER_AUTO) {
		if (container_image_in_path(programs[wanted])) {
			*got = wanted;
			return 0;
		}
		sbuf_addf(err, "container runtime %s: %s not found in PATH",
			  container_runtime_names[wanted], programs[wanted]);
		return -1;
	}
	for (int r = CONTAINER_AUTO + 1; r < CONTAINER_NRUNTIMES; r++)
		if (container_image_in_path(programs[r])) {
			*got = r;
			return 0;
		}
	sbuf_addstr(err, "no container runtime found in PATH (tried ch-run, apptainer, enroot, "
		    "podman)");
	return -1;
}
