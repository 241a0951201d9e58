/* code_store.c - a code tree's snapshot published once, content-
 * addressed, under OUTPUT.DIR/.code/ (see code_store.h).
 * Shell: mkdtemp, open/read/write, symlink, rename. */
#include "launcher/job/code_store.h"       // defines: code_store, code_store_path
#include "launcher/job/code_list.h"        // defines: struct code_list
#include "launcher/runs/rundir_publish.h"  // defines: rundir_publish_tmp, _discard, _lock_shared
#include "launcher/stage/stage_manifest.h" // defines: stage_manifest_hex
#include "common/exitcode.h"               // defines: HPT_EXIT_*
#include "common/fileio.h"                 // defines: fileio_private_dir, fileio_check_owned
#include "common/sbuf.h"                   // defines: struct sbuf, xasprintf
#include "common/statkey.h"                // defines: statkey_of, statkey_is_equal

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_BUF (1u << 20)

char *code_store_path(const char *codes, const char *digest)
{
	const char *hex = stage_manifest_hex(digest);

	return hex ? xasprintf("%s/%s", codes, hex) : NULL;
}

/* The directories above rel inside tmp, 0700. */
static int make_parents(const char *tmp, const char *rel, struct sbuf *err)
{
	const char *slash = strrchr(rel, '/');
	char *dir;
	int rc;

	if (!slash)
		return 0;
	dir = xasprintf("%s/%.*s", tmp, (int)(slash - rel), rel);
	rc = fileio_mkdirs(dir, 0700, err);
	free(dir);
	return rc;
}

/* src's bytes into a new dst (mode), hashed on the way: 0, or a status
 * with err.  The source must still be the file listed: its key, then
 * its hash. */
static int copy_file(const struct code_entry *e, const char *src, const char *dst,
		     struct sbuf *err)
{
	unsigned char *buf = NULL, md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = NULL;
	struct statkey now = { 0 };
	struct stat st;
	int in, out = -1, status = HPT_EXIT_OK;
	ssize_t r;

	/* open-ok: O_NONBLOCK, then fstat: the regular file listed */
	in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0) {
		sbuf_addf(err, "cannot read %s: %s", src, strerror(errno));
		return HPT_EXIT_NO_INPUT;
	}
	if (!fstat(in, &st) && S_ISREG(st.st_mode))
		statkey_of(&st, &now);
	if (!statkey_is_equal(&now, &e->key)) {
		sbuf_addf(err, "%s changed while the code was snapshotted; submit again when "
			  "nothing writes it", src);
		status = HPT_EXIT_FAILURE;
		goto out;
	}
	/* open-ok: a file this code creates (O_EXCL) in its own temporary */
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		   e->mode == CODE_MODE_EXEC ? 0700 : 0600);
	ctx = EVP_MD_CTX_new();
	buf = xmalloc(COPY_BUF);
	if (out < 0 || !ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		sbuf_addf(err, "cannot write %s: %s", dst, out < 0 ? strerror(errno) : "libcrypto");
		status = HPT_EXIT_IO;
		goto out;
	}
	while ((r = read(in, buf, COPY_BUF)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			sbuf_addf(err, "cannot read %s: %s", src, strerror(errno));
			status = HPT_EXIT_NO_INPUT;
			goto out;
		}
		EVP_DigestUpdate(ctx, buf, (size_t)r);
		for (ssize_t w, done = 0; done < r; done += w) {
			w = write(out, buf + done, (size_t)(r - done));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w < 0) {
				sbuf_addf(err, "cannot write %s: %s", dst, strerror(errno));
				status = HPT_EXIT_IO;
				goto out;
			}
		}
	}
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	if (memcmp(md, e->sha256, 32)) {
		sbuf_addf(err, "%s changed while the code was snapshotted (its bytes no longer "
			  "match the hash taken); submit again when nothing writes it", src);
		status = HPT_EXIT_FAILURE;
	} else if (fchmod(out, e->mode == CODE_MODE_EXEC ? 0700 : 0600) || close(out)) {
		out = -1;
		sbuf_addf(err, "cannot write %s: %s", dst, strerror(errno));
		status = HPT_EXIT_IO;
	} else {
		out = -1;
	}
out:
	if (out >= 0)
		close(out);
	close(in);
	EVP_MD_CTX_free(ctx);
	free(buf);
	return status;
}

static int fill(const struct code_list *l, const char *dir, const char *tmp, struct sbuf *err)
{
	int status = HPT_EXIT_OK;

	for (size_t i = 0; i < l->n && !status; i++) {
		const struct code_entry *e = &l->v[i];
		char *dst = xasprintf("%s/%s", tmp, e->path), *src = xasprintf("%s/%s", dir, e->path);

		if (make_parents(tmp, e->path, err)) {
			status = HPT_EXIT_IO;
		} else if (e->link) {
			if (symlink(e->link, dst)) {
				sbuf_addf(err, "cannot make the link %s: %s", dst, strerror(errno));
				status = HPT_EXIT_IO;
			}
		} else {
			status = copy_file(e, src, dst, err);
		}
		free(dst);
		free(src);
	}
	return status;
}

int code_store(const struct code_list *l, const char *dir, const char *codes, struct sbuf *err)
{
	char *final = code_store_path(codes, l->digest), *tmp = NULL;
	struct stat st;
	int status = HPT_EXIT_OK, lock = -1;

	if (!final) {
		sbuf_addf(err, "the code's digest %s is not sha256:<hex>", l->digest);
		return HPT_EXIT_INTERNAL;
	}
	if (fileio_private_dir(codes, err)) {
		status = HPT_EXIT_IO;
		goto out;
	}
	if (!lstat(final, &st)) {
		/* content-addressed: there already, it holds these bytes */
		if (!S_ISDIR(st.st_mode) || fileio_check_owned(final, err)) {
			if (!err->len)
				sbuf_addf(err, "%s is not a directory", final);
			status = HPT_EXIT_IO;
		}
		goto out;
	}
	/* shared: concurrent submits of other trees copy side by side; a
	 * submit killed mid-copy leaves its temporary to the next one that
	 * finds no copy under way */
	lock = rundir_publish_lock_shared(codes, err);
	if (lock < 0) {
		status = HPT_EXIT_IO;
		goto out;
	}
	tmp = rundir_publish_tmp(codes, stage_manifest_hex(l->digest), err);
	if (!tmp) {
		status = HPT_EXIT_IO;
		goto out;
	}
	if ((status = fill(l, dir, tmp, err)))
		goto out_discard;
	if (rename(tmp, final)) {
		if (errno == EEXIST || errno == ENOTEMPTY)
			goto out_discard; /* a concurrent publisher of the same tree won */
		sbuf_addf(err, "cannot publish %s: %s", final, strerror(errno));
		status = HPT_EXIT_IO;
		goto out_discard;
	}
	goto out;
out_discard:
	rundir_publish_discard(tmp);
out:
	rundir_publish_unlock(lock);
	free(tmp);
	free(final);
	return status;
}
