/* stage_sink.c - write a data set's byte stream into a temporary copy in
 * the node cache and verify it as it goes (see stage_sink.h).
 * Shell: mkdtemp, openat, write, syncfs.
 *
 * The sha256 is of the bytes as they were written, not of a re-read: a
 * re-read right after the write comes from the page cache and proves no
 * more.  A damaged disk is what the reuse checks (sizes, and hashes of
 * files whose statkey moved) are for. */
#include "launcher/stage/stage_sink.h"     // defines: struct stage_sink, stage_sink_*
#include "launcher/stage/stage_cache.h"    // defines: struct stage_claim
#include "common/fileremove.h"             // defines: fileremove_tree
#include "launcher/stage/stage_manifest.h" // defines: struct stage_manifest, stage_manifest_hex
#include "launcher/stage/stage_scan.h"     // defines: stage_scan_link_is

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(struct stage_sink *s, const char *what, const char *path)
{
	if (!s->failed) {
		sbuf_addf(&s->err, "%s %s/%s: %s", what, s->tmp, path, strerror(errno));
		s->io_error = true;
	}
	s->failed = true;
	return -1;
}

static const char *rel_of(const struct stage_sink *s)
{
	return s->m->is_file ? s->file_name : s->m->v[s->fi].path;
}

int stage_sink_open(struct stage_sink *s, const char *cache, const struct stage_manifest *m,
		    const char *file_name, struct sbuf *err)
{
	memset(s, 0, sizeof(*s));
	s->dfd = s->fd = -1;
	sbuf_init(&s->err);
	s->m = m;
	s->file_name = xstrdup(file_name ? file_name : "data");
	s->keys = xcalloc(m->n ? m->n : 1, sizeof(*s->keys));
	s->tmp = xasprintf("%s/.tmp-%s-XXXXXX", cache, stage_manifest_hex(m->hash));
	s->ctx = EVP_MD_CTX_new();
	if (!mkdtemp(s->tmp)) {
		sbuf_addf(err, "cannot make a directory %s: %s", s->tmp, strerror(errno));
		free(s->tmp);
		s->tmp = NULL;
		return -1;
	}
	s->dfd = open(s->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dfd < 0 || !s->ctx) {
		sbuf_addf(err, "cannot open %s: %s", s->tmp, strerror(errno));
		return -1;
	}
	return 0;
}

/* mkdir -p of path's parents inside tmp; the manifest's paths are safe
 * and none lies under a link of it (stage_manifest.h), and tmp is ours,
 * so no link is met: not even one this copy made. */
static int make_parents(struct stage_sink *s, const char *path)
{
	char *p = xstrdup(path);

	for (char *slash = strchr(p, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdirat(s->dfd, p, 0700) && errno != EEXIST) {
			fail(s, "cannot make", p);
			free(p);
			return -1;
		}
		*slash = '/';
	}
	free(p);
	return 0;
}

static int begin_file(struct stage_sink *s)
{
	const char *rel = rel_of(s);

	if (make_parents(s, rel))
		return -1;
	/* open-ok: created here (O_EXCL), in the sink's own temporary folder */
	s->fd = openat(s->dfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->fd < 0)
		return fail(s, "cannot create", rel);
	s->off = 0;
	if (!EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL))
		return fail(s, "cannot hash", rel);
	return 0;
}

/* A link of a code tree: made as the text it is (symlinkat never
 * follows or checks its target), then read back and checked as a file's
 * bytes are; its statkey (lstat) is the one the reuse checks keep. */
static int make_link(struct stage_sink *s)
{
	const struct stage_file *f = &s->m->v[s->fi];
	struct stat st;

	if (make_parents(s, f->path))
		return -1;
	if (symlinkat(f->link, s->dfd, f->path) ||
	    fstatat(s->dfd, f->path, &st, AT_SYMLINK_NOFOLLOW))
		return fail(s, "cannot make the link", f->path);
	if (!S_ISLNK(st.st_mode) || !stage_scan_link_is(s->dfd, f->path, f->link)) {
		sbuf_addf(&s->err, "the copy of the link %s does not match the manifest", f->path);
		s->failed = true;
		return -1;
	}
	statkey_of(&st, &s->keys[s->fi++]);
	return 0;
}

static int end_file(struct stage_sink *s)
{
	const struct stage_file *f = &s->m->v[s->fi];
	const char *rel = rel_of(s);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	struct stat st;

	EVP_DigestFinal_ex(s->ctx, md, &len);
	if (fchmod(s->fd, f->exec ? 0555 : 0444) || fstat(s->fd, &st))
		return fail(s, "cannot finish", rel);
	close(s->fd);
	s->fd = -1;
	if ((uint64_t)st.st_size != f->size || (!s->verified && memcmp(md, f->sha256, 32))) {
		sbuf_addf(&s->err, "the copy of %s does not match the manifest (size or sha256)",
			  *f->path ? f->path : s->file_name);
		s->failed = true;
		return -1;
	}
	statkey_of(&st, &s->keys[s->fi++]);
	return 0;
}

int stage_sink_write(struct stage_sink *s, const void *buf, size_t n)
{
	const unsigned char *p = buf;

	if (s->failed)
		return -1;
	for (;;) {
		const struct stage_file *f;
		size_t k;

		if (s->fi == s->m->n) {
			if (!n)
				return 0;
			sbuf_addstr(&s->err, "more bytes arrived than the manifest lists");
			s->failed = true;
			return -1;
		}
		if (s->fd < 0 && s->m->v[s->fi].link) {
			if (make_link(s))
				return -1;
			continue;
		}
		if (s->fd < 0 && begin_file(s))
			return -1;
		f = &s->m->v[s->fi];
		if (s->off == f->size) {
			if (end_file(s))
				return -1;
			continue;
		}
		if (!n)
			return 0;
		k = f->size - s->off < n ? (size_t)(f->size - s->off) : n;
		if (s->damage && k) {
			/* a fault the tests inject: the byte as a bad disk or
			 * link would have it, hashed as written */
			unsigned char bad = p[0] ^ 1;

			s->damage = false;
			if (write(s->fd, &bad, 1) != 1)
				return fail(s, "cannot write", rel_of(s));
			EVP_DigestUpdate(s->ctx, &bad, 1);
			s->off++;
			s->bytes++;
			p++;
			n--;
			k--;
		}
		if (!s->verified)
			EVP_DigestUpdate(s->ctx, p, k);
		s->off += k;
		s->bytes += k;
		n -= k;
		while (k) {
			ssize_t w = write(s->fd, p, k);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return fail(s, "cannot write", rel_of(s));
			p += w;
			k -= (size_t)w;
		}
	}
}

int stage_sink_finish(struct stage_sink *s)
{
	if (stage_sink_write(s, NULL, 0))
		return -1;
	if (s->fi != s->m->n) {
		sbuf_addf(&s->err, "the stream ended %llu bytes short of the manifest",
			  (unsigned long long)(s->m->bytes - s->bytes));
		s->failed = true;
		return -1;
	}
	/* one syncfs for the whole copy: an fsync per file costs a disk
	 * flush for each of thousands of small files */
	if (syncfs(s->dfd)) {
		sbuf_addf(&s->err, "cannot sync %s: %s", s->tmp, strerror(errno));
		s->io_error = true;
		s->failed = true;
		return -1;
	}
	return 0;
}

void stage_sink_take(struct stage_sink *s)
{
	free(s->tmp);
	s->tmp = NULL;
}

void stage_sink_release(struct stage_sink *s)
{
	struct sbuf err = SBUF_INIT;

	if (!s->m)
		return; /* zeroed, never opened */
	if (s->fd >= 0)
		close(s->fd);
	if (s->dfd >= 0)
		close(s->dfd);
	if (s->tmp)
		fileremove_tree(s->tmp, &err); /* best effort: eviction removes leftovers */
	sbuf_release(&err);
	EVP_MD_CTX_free(s->ctx);
	free(s->tmp);
	free(s->file_name);
	free(s->keys);
	sbuf_release(&s->err);
	memset(s, 0, sizeof(*s));
	s->dfd = s->fd = -1;
}
