/* stage_source.c - read a data set once, as one stream, checking every
 * file (and a code tree's every link) against its manifest (see
 * stage_source.h).
 * Shell: open, read, fstat, readlink. */
#include "launcher/stage/stage_source.h"   // defines: struct stage_source, stage_source_*
#include "launcher/stage/stage_manifest.h" // defines: struct stage_manifest
#include "launcher/stage/stage_scan.h"     // defines: stage_scan_link_is
#include "common/exitcode.h"               // defines: HPT_EXIT_*
#include "common/sbuf.h"                   // defines: struct sbuf, xasprintf
#include "common/statkey.h"                // defines: struct statkey, statkey_*

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void stage_source_open(struct stage_source *s, const char *src, const struct stage_manifest *m)
{
	size_t n = strlen(src);

	memset(s, 0, sizeof(*s));
	while (n > 1 && src[n - 1] == '/')
		n--;
	s->root = xstrndup(src, n);
	s->m = m;
	s->fd = -1;
	s->ctx = EVP_MD_CTX_new();
}

static char *path_of(const struct stage_source *s)
{
	const char *rel = s->m->v[s->fi].path;

	return *rel ? xasprintf("%s/%s", s->root, rel) : xstrdup(s->root);
}

/* A link of the manifest: no bytes in the stream, its target read
 * again (never followed) and compared, as a file's sha256 is. */
static int check_link(struct stage_source *s, struct sbuf *err)
{
	const struct stage_file *f = &s->m->v[s->fi];
	char *path = path_of(s);
	int status = 0;

	if (!stage_scan_link_is(AT_FDCWD, path, f->link)) {
		sbuf_addf(err, "%s changed since it was scanned (it is no longer a link to %s)",
			  path, f->link);
		status = HPT_EXIT_FAILURE;
	}
	free(path);
	s->fi++;
	return status;
}

static int begin_file(struct stage_source *s, struct sbuf *err)
{
	const struct stage_file *f = &s->m->v[s->fi];
	char *path = path_of(s);
	int status = 0;

	/* open-ok: O_NONBLOCK, then fstat: a regular file of the manifest's size */
	s->fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (s->fd < 0) {
		sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
		status = HPT_EXIT_NO_INPUT;
	} else if (fstat(s->fd, &s->st) || !S_ISREG(s->st.st_mode) ||
		   (uint64_t)s->st.st_size != f->size) {
		sbuf_addf(err, "%s changed since it was scanned (it is no longer a regular file "
			  "of %llu bytes)", path, (unsigned long long)f->size);
		status = HPT_EXIT_FAILURE;
	} else if (!s->ctx || !EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL)) {
		sbuf_addstr(err, "cannot set up sha256 (libcrypto)");
		status = HPT_EXIT_INTERNAL;
	} else {
		posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	s->off = 0;
	free(path);
	return status;
}

static int end_file(struct stage_source *s, struct sbuf *err)
{
	const struct stage_file *f = &s->m->v[s->fi];
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	struct stat after;
	struct statkey kb, ka = { 0 };
	char extra;
	int status = 0;

	EVP_DigestFinal_ex(s->ctx, md, &len);
	statkey_of(&s->st, &kb);
	if (read(s->fd, &extra, 1) != 0 || fstat(s->fd, &after) ||
	    (statkey_of(&after, &ka), !statkey_is_equal(&kb, &ka)) || memcmp(md, f->sha256, 32)) {
		char *path = path_of(s);

		sbuf_addf(err, "%s changed while it was staged (its size, mtime, ctime or sha256 is "
			  "not the manifest's); stage it when nothing writes it", path);
		free(path);
		status = HPT_EXIT_FAILURE;
	}
	close(s->fd);
	s->fd = -1;
	s->fi++;
	return status;
}

int stage_source_read(struct stage_source *s, void *buf, size_t n, struct sbuf *err)
{
	unsigned char *p = buf;
	int status;

	for (;;) {
		const struct stage_file *f;

		if (s->fi == s->m->n) {
			if (!n)
				return 0;
			sbuf_addstr(err, "read past the end of the manifest");
			return HPT_EXIT_INTERNAL;
		}
		if (s->fd < 0 && s->m->v[s->fi].link) {
			if ((status = check_link(s, err)))
				return status;
			continue;
		}
		if (s->fd < 0 && (status = begin_file(s, err)))
			return status;
		f = &s->m->v[s->fi];
		if (s->off == f->size) {
			if ((status = end_file(s, err)))
				return status;
			continue;
		}
		if (!n)
			return 0;
		while (n && s->off < f->size) {
			size_t want = f->size - s->off < n ? (size_t)(f->size - s->off) : n;
			ssize_t r = read(s->fd, p, want);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				char *path = path_of(s);

				if (r < 0)
					sbuf_addf(err, "cannot read %s: %s", path, strerror(errno));
				else
					sbuf_addf(err, "%s changed while it was staged (it ended "
						  "early)", path);
				free(path);
				return r < 0 ? HPT_EXIT_NO_INPUT : HPT_EXIT_FAILURE;
			}
			EVP_DigestUpdate(s->ctx, p, (size_t)r);
			s->off += (uint64_t)r;
			s->bytes_read += (uint64_t)r;
			p += r;
			n -= (size_t)r;
		}
	}
}

void stage_source_release(struct stage_source *s)
{
	if (!s || !s->m)
		return;
	if (s->fd >= 0)
		close(s->fd);
	EVP_MD_CTX_free(s->ctx);
	free(s->root);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}
