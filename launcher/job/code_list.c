/* code_list.c - a program's code as a sealed listing and its digest;
 * code.json's shape (see code_list.h).  Pure core. */
#include "launcher/job/code_list.h"        // defines: struct code_list, code_list_*
#include "launcher/stage/stage_manifest.h" // defines: stage_manifest_hex_of, stage_manifest_path_is_safe
#include "common/sbuf.h"                   // defines: struct sbuf, xstrdup, xrealloc

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LISTING_HEADER "hpctrain-code 1\n"

void code_list_release(struct code_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].link);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static struct code_entry *push(struct code_list *l, const char *path)
{
	struct code_entry *e;

	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->path = xstrdup(path);
	return e;
}

void code_list_add_file(struct code_list *l, const char *path, unsigned mode, uint64_t size,
			const unsigned char sha256[32], const struct statkey *key)
{
	struct code_entry *e = push(l, path);

	e->mode = (mode & 0100) ? CODE_MODE_EXEC : CODE_MODE_FILE;
	e->size = size;
	memcpy(e->sha256, sha256, 32);
	if (key)
		e->key = *key;
}

void code_list_add_link(struct code_list *l, const char *path, const char *target)
{
	struct code_entry *e = push(l, path);

	e->mode = CODE_MODE_LINK;
	e->link = xstrdup(target);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct code_entry *)a)->path, ((const struct code_entry *)b)->path);
}

static int refuse(struct sbuf *err, const char *path, const char *why)
{
	sbuf_addstr(err, "the code's file name '");
	sbuf_add_printable(err, path);
	sbuf_addf(err, "' %s", why);
	return -1;
}

int code_list_seal(struct code_list *l, struct sbuf *err)
{
	struct sbuf listing = SBUF_INIT;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char hex[65];
	int rc = -1;

	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_path);
	l->bytes = 0;
	sbuf_addstr(&listing, LISTING_HEADER);
	for (size_t i = 0; i < l->n; i++) {
		const struct code_entry *e = &l->v[i];

		/* jansson packs UTF-8 only: such a name would drop out of
		 * code.json, as stage_manifest_seal says for a data set */
		if (!sbuf_is_utf8(e->path) || (e->link && !sbuf_is_utf8(e->link))) {
			refuse(err, e->link && sbuf_is_utf8(e->path) ? e->link : e->path,
			       "is not UTF-8 (its bytes shown as \\xHH); rename it");
			goto out;
		}
		if (!stage_manifest_path_is_safe(e->path)) {
			refuse(err, e->path, "is not a relative path inside the tree");
			goto out;
		}
		if (i && !strcmp(e->path, l->v[i - 1].path)) {
			refuse(err, e->path, "is listed twice");
			goto out;
		}
		if (e->link) {
			sbuf_addf(&listing, "777 link %s %s", e->link, e->path);
		} else {
			stage_manifest_hex_of(e->sha256, hex);
			sbuf_addf(&listing, "%o %llu %s %s", e->mode, (unsigned long long)e->size,
				  hex, e->path);
			l->bytes += e->size;
		}
		sbuf_addch(&listing, '\0');
	}
	EVP_Digest(listing.buf, listing.len, md, &mdlen, EVP_sha256(), NULL);
	stage_manifest_hex_of(md, hex);
	/* encode-ok: 7 + 64 hex digits, the size of digest */
	snprintf(l->digest, sizeof(l->digest), "sha256:%s", hex);
	rc = 0;
out:
	sbuf_release(&listing);
	return rc;
}

long code_list_find(const struct code_list *l, const char *path)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->v[mid].path, path);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

bool code_list_link_escapes(const char *path, const char *target)
{
	long depth = 0; /* directories above the link, inside the tree */

	if (target[0] == '/')
		return true;
	for (const char *p = path; (p = strchr(p, '/')); p++)
		depth++;
	while (*target) {
		size_t n = strcspn(target, "/");

		if (n == 2 && target[0] == '.' && target[1] == '.')
			depth--;
		else if (n && !(n == 1 && target[0] == '.'))
			depth++;
		if (depth < 0)
			return true;
		target += n;
		target += *target == '/';
	}
	return false;
}

static json_t *entry_json(const struct code_entry *e)
{
	char hex[65];

	if (e->link)
		return json_pack("{s:s, s:i, s:s}", "path", e->path, "mode", (int)e->mode, "link",
				 e->link);
	stage_manifest_hex_of(e->sha256, hex);
	return json_pack("{s:s, s:i, s:I, s:s}", "path", e->path, "mode", (int)e->mode, "size",
			 (json_int_t)e->size, "sha256", hex);
}

json_t *code_list_json(const struct code_list *l, const char *dir, const char *snapshot,
		       json_t *git)
{
	json_t *files = json_array(), *doc = NULL;
	if (!files)
		goto out;
	for (size_t i = 0; i < l->n; i++) {
		if (json_array_append_new(files, entry_json(&l->v[i])))
			goto out;
	}
	doc = json_pack("{s:s, s:s, s:s, s:O, s:I, s:I, s:O}", "digest", l->digest, "dir", dir,
			"snapshot", snapshot, "files", files, "file_count", (json_int_t)l->n,
			"bytes", (json_int_t)l->bytes, "git", git ? git : json_null());
out:
	json_decref(files);
	json_decref(git);
	return doc;
}
