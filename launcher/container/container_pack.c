/* container_pack.c - a directory image packed once into a SquashFS file:
 * see container_pack.h.  Shell: mksquashfs, a lock, a rename. */
#include "launcher/container/container_pack.h" // defines: container_pack, container_pack_dir
#include "launcher/container/container_proc.h" // defines: container_proc_run
#include "common/fileio.h" // defines: fileio_private_dir, fileio_read
#include "common/sbuf.h"   // defines: struct sbuf, xasprintf

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SQUASH_SUPER 96          /* bytes of a SquashFS 4 superblock */
#define SQUASH_BYTES_USED 40     /* offset of its little-endian u64 bytes_used */
#define ERR_TAIL 600             /* of mksquashfs's words, at most */

char *container_pack_dir(const char *output_dir)
{
	char cwd[4096];

	if (output_dir[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return xasprintf("%s/.images", output_dir);
	return xasprintf("%s/%s/.images", cwd, output_dir);
}

/* 1 when path is our regular file holding a whole SquashFS image (its
 * superblock's magic, and as many bytes as it says it uses), else 0: a
 * pack cut short by a full disk or a crash before the rename is never
 * there, but one truncated since is found here and made again. */
static int pack_whole(const char *path)
{
	unsigned char sb[SQUASH_SUPER];
	uint64_t used = 0;
	struct sbuf ignored = SBUF_INIT;
	struct stat st;
	/* a FIFO planted in the packs folder must not hang submit */
	int fd = fileio_open_regular(path, FILEIO_NOFOLLOW, &ignored);
	int ok;

	sbuf_release(&ignored);
	if (fd < 0)
		return 0;
	ok = !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	     pread(fd, sb, sizeof(sb), 0) == (ssize_t)sizeof(sb) && !memcmp(sb, "hsqs", 4);
	for (int i = 7; ok && i >= 0; i--)
		used = used << 8 | sb[SQUASH_BYTES_USED + i];
	close(fd);
	return ok && used <= (uint64_t)st.st_size;
}

/* mksquashfs dir out, its stderr into errpath; its exit status, or -1. */
static int run_mksquashfs(const char *dir, const char *out, const char *errpath)
{
	/* zstd at level 3 packs at about the speed of lz4 and as small as
	 * the default gzip (30x faster here), and squashfuse reads it */
	char *const argv[] = { "mksquashfs", (char *)dir, (char *)out, "-noappend", "-reproducible",
			       "-mkfs-time", "0", "-no-xattrs", "-comp", "zstd",
			       "-Xcompression-level", "3", "-quiet", "-no-progress", NULL };
	/* open-ok: made in pack()'s own fresh mkdtemp folder */
	int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = container_proc_run(argv, e, false);

	if (e >= 0)
		close(e);
	return rc;
}

/* The end of what mksquashfs said, on one line. */
static void add_words(struct sbuf *err, const char *errpath)
{
	struct sbuf words = SBUF_INIT, ignored = SBUF_INIT;

	if (!fileio_read(errpath, 1 << 20, &words, &ignored) && words.len) {
		const char *s = words.buf + (words.len > ERR_TAIL ? words.len - ERR_TAIL : 0);

		sbuf_addstr(err, ": ");
		for (; *s; s++)
			sbuf_addch(err, *s == '\n' ? (s[1] ? ' ' : '\0') : *s);
		err->len = strlen(err->buf);
	}
	sbuf_release(&words);
	sbuf_release(&ignored);
}

static int sync_path(const char *path)
{
	/* open-ok: the image mksquashfs just wrote in our own mkdtemp folder */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc = fd < 0 || fsync(fd) ? -1 : 0;

	if (fd >= 0)
		close(fd);
	return rc;
}

/* Packs dir into a fresh temporary folder beside target, then renames
 * the image over target.  0, or -1 with err. */
static int pack(const char *dir, const char *packs_dir, const char *target, const char *hex,
		struct sbuf *err)
{
	char *tmp = xasprintf("%s/.tmp-%s-XXXXXX", packs_dir, hex);
	char *img = NULL, *errpath = NULL;
	int rc = -1, status;

	if (!mkdtemp(tmp)) {
		sbuf_addf(err, "cannot make a folder in %s: %s", packs_dir, strerror(errno));
		goto out;
	}
	img = xasprintf("%s/image.sqfs", tmp);
	errpath = xasprintf("%s/mksquashfs.err", tmp);
	status = run_mksquashfs(dir, img, errpath);
	if (status == 127) {
		sbuf_addf(err, "packing the directory image %s needs mksquashfs (squashfs-tools), "
			  "which is not in PATH", dir);
	} else if (status) {
		sbuf_addf(err, "packing the directory image %s failed (mksquashfs exited %d)", dir,
			  status);
		add_words(err, errpath);
	} else if (chmod(img, 0600) || sync_path(img) || rename(img, target) ||
		   sync_path(packs_dir)) {
		sbuf_addf(err, "cannot publish the packed image %s: %s", target, strerror(errno));
	} else {
		rc = 0;
	}
	unlink(img);
	unlink(errpath);
	rmdir(tmp);
out:
	free(tmp);
	free(img);
	free(errpath);
	return rc;
}

int container_pack(const char *dir, const char *digest, const char *packs_dir, char **packed,
		   bool *made, struct sbuf *err)
{
	const char *hex = strncmp(digest, "sha256:", 7) ? NULL : digest + 7;
	char *lock = NULL;
	int fd = -1, rc = -1;

	*packed = NULL;
	*made = false;
	if (!hex || strlen(hex) != 64) {
		sbuf_addf(err, "the directory image %s has no digest to name its pack", dir);
		return -1;
	}
	if (fileio_private_dir(packs_dir, err))
		return -1;
	*packed = xasprintf("%s/%s.sqfs", packs_dir, hex);
	if (pack_whole(*packed))
		return 0;
	lock = xasprintf("%s/%s.lock", packs_dir, hex);
	/* open-ok: a lock, never read; O_RDWR does not block on a FIFO */
	fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		sbuf_addf(err, "cannot lock %s: %s", lock, strerror(errno));
		goto out;
	}
	/* another submit may have packed it while this one waited */
	if (pack_whole(*packed)) {
		rc = 0;
	} else if (!pack(dir, packs_dir, *packed, hex, err)) {
		*made = true;
		rc = pack_whole(*packed) ? 0 : -1;
		if (rc)
			sbuf_addf(err, "mksquashfs left %s incomplete", *packed);
	}
out:
	if (fd >= 0)
		close(fd);
	free(lock);
	if (rc) {
		free(*packed);
		*packed = NULL;
	}
	return rc;
}
