/* stage_evict.c - list a node cache, evict the least recently used
 * entries no one uses, clear it (see stage_evict.h).
 * Shell: readdir, the entry records, locks (stage_cache.c). */
#include "launcher/stage/stage_evict.h"    // defines: struct stage_evict_list, stage_evict_*
#include "launcher/stage/stage_cache.h"    // defines: stage_cache_lock, stage_cache_remove
#include "launcher/stage/stage_manifest.h" // defines: stage_manifest_parse_hex
#include "common/fileio.h"                 // defines: FILEIO_NOFOLLOW, FILEIO_OWNED
#include "common/fileremove.h"             // defines: fileremove_tree
#include "common/isotime.h"                // defines: isotime_format
#include "common/jsonfile.h"               // defines: jsonfile_load
#include "common/sbuf.h"                   // defines: struct sbuf, xasprintf

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_MAX (256u << 20)

/* A name of 64 hex digits and then suffix exactly. */
static bool is_hex_name(const char *name, const char *suffix)
{
	unsigned char b[32];
	char hex[65];

	if (strlen(name) != 64 + strlen(suffix) || strcmp(name + 64, suffix))
		return false;
	memcpy(hex, name, 64);
	hex[64] = '\0';
	return !stage_manifest_parse_hex(hex, b);
}

static void load_entry(const char *cache, struct stage_evict_entry *e)
{
	char *rec = xasprintf("%s/%s.json", cache, e->hex);
	struct sbuf err = SBUF_INIT;
	json_t *doc = jsonfile_load(rec, RECORD_MAX, FILEIO_NOFOLLOW | FILEIO_OWNED, &err);
	const char *name = NULL, *src = NULL;
	json_int_t bytes = 0;
	struct stat st;
	int fd;

	if (doc && !json_unpack(doc, "{s:s, s:s, s:{s:I}}", "name", &name, "src", &src, "manifest",
				"bytes", &bytes)) {
		e->name = xstrdup(name);
		e->src = xstrdup(src);
		e->bytes = bytes > 0 ? (uint64_t)bytes : 0;
	}
	if (!lstat(rec, &st))
		e->last_use = st.st_mtime;
	/* in use: the use lock cannot be had exclusive right now */
	fd = stage_cache_lock(cache, e->hex, ".lock", LOCK_EX | LOCK_NB, false);
	e->in_use = fd < 0 && errno == EWOULDBLOCK;
	if (fd >= 0)
		close(fd);
	json_decref(doc);
	sbuf_release(&err);
	free(rec);
}

static int by_last_use(const void *a, const void *b)
{
	const struct stage_evict_entry *x = a, *y = b;

	if (x->last_use != y->last_use)
		return x->last_use < y->last_use ? -1 : 1;
	return strcmp(x->hex, y->hex);
}

int stage_evict_list(const char *cache, struct stage_evict_list *l, struct sbuf *err)
{
	DIR *d = opendir(cache);
	struct dirent *de;

	memset(l, 0, sizeof(*l));
	if (!d) {
		if (errno == ENOENT)
			return 0;
		sbuf_addf(err, "cannot read %s: %s", cache, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		struct stage_evict_entry *e;

		if (!is_hex_name(de->d_name, ".json"))
			continue;
		l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
		e = &l->v[l->n++];
		memset(e, 0, sizeof(*e));
		memcpy(e->hex, de->d_name, 64);
		load_entry(cache, e);
		l->bytes += e->bytes;
	}
	closedir(d);
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_last_use);
	return 0;
}

void stage_evict_list_release(struct stage_evict_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].src);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

json_t *stage_evict_list_json(const char *cache, const struct stage_evict_list *l)
{
	json_t *a = json_array();

	for (size_t i = 0; i < l->n; i++) {
		const struct stage_evict_entry *e = &l->v[i];
		char when[ISOTIME_SIZE], hash[80];

		isotime_format(e->last_use, when);
		/* encode-ok: 7 + 64 hex digits in 80 */
		snprintf(hash, sizeof(hash), "sha256:%s", e->hex);
		/* a record another version wrote may hold anything: an
		 * entry left out would make the list lie, so none at all */
		if (json_array_append_new(a, json_pack("{s:s, s:s?, s:s?, s:I, s:s, s:b}", "hash",
						       hash, "name", e->name, "src", e->src,
						       "bytes", (json_int_t)e->bytes, "last_use",
						       when, "in_use", e->in_use))) {
			json_decref(a);
			return NULL;
		}
	}
	return json_pack("{s:s, s:I, s:o}", "cache", cache, "bytes", (json_int_t)l->bytes,
			 "entries", a);
}

/* Copies in progress whose fetch lock is free were abandoned by a
 * process that died: ".tmp-<hex>-..." (see stage_evict.h) */
void stage_evict_abandoned(const char *cache, struct sbuf *log)
{
	DIR *d = opendir(cache);
	struct sbuf why = SBUF_INIT;
	struct dirent *de;

	/* another user's cache (root's --clear of it): nothing of it goes,
	 * not even a lock file made in it */
	if (d && fileio_check_owned(cache, &why)) {
		closedir(d);
		d = NULL;
	}
	sbuf_release(&why);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char hex[65], *path;
		struct sbuf err = SBUF_INIT;
		int fd;

		if (strncmp(de->d_name, ".tmp-", 5) || strlen(de->d_name) < 5 + 64 + 1 ||
		    de->d_name[5 + 64] != '-')
			continue;
		memcpy(hex, de->d_name + 5, 64);
		hex[64] = '\0';
		if (!is_hex_name(hex, ""))
			continue;
		fd = stage_cache_lock(cache, hex, ".fetch", LOCK_EX | LOCK_NB, true);
		if (fd < 0)
			continue; /* being fetched right now */
		path = xasprintf("%s/%s", cache, de->d_name);
		if (!fileremove_tree(path, &err))
			sbuf_addf(log, "removed the abandoned copy %s\n", path);
		close(fd);
		free(path);
		sbuf_release(&err);
	}
	closedir(d);
}

int stage_evict_lru(const char *cache, uint64_t max_bytes, struct sbuf *log, struct sbuf *err)
{
	struct stage_evict_list l;
	uint64_t total;
	int rc = 0;

	if (fileio_check_owned(cache, err))
		return -1;
	stage_evict_abandoned(cache, log);
	if (stage_evict_list(cache, &l, err))
		return -1;
	total = l.bytes;
	for (size_t i = 0; i < l.n && total > max_bytes; i++) {
		int r = stage_cache_remove(cache, l.v[i].hex, err);

		if (r < 0) {
			rc = -1;
			break;
		}
		if (r == 1) {
			sbuf_addf(log, "kept sha256:%s (%s): in use\n", l.v[i].hex,
				  l.v[i].name ? l.v[i].name : "?");
			continue;
		}
		total -= l.v[i].bytes;
		sbuf_addf(log, "evicted sha256:%s (%s, %llu bytes)\n", l.v[i].hex,
			  l.v[i].name ? l.v[i].name : "?", (unsigned long long)l.v[i].bytes);
	}
	stage_evict_list_release(&l);
	return rc;
}

int stage_evict_clear(const char *cache, const char *const *hexes, size_t n, struct sbuf *log,
		      struct sbuf *err)
{
	struct stage_evict_list l;
	int rc = 0;

	/* only the caller's own cache, even for root, who may read any:
	 * staging into another user's is refused alike (stage_cache_open) */
	if (!access(cache, F_OK) && fileio_check_owned(cache, err))
		return -1;
	if (!n)
		stage_evict_abandoned(cache, log);
	if (stage_evict_list(cache, &l, err))
		return -1;
	for (size_t k = 0; k < (n ? n : l.n); k++) {
		const char *hex = n ? hexes[k] : l.v[k].hex;
		bool known = false;
		int r;

		for (size_t i = 0; i < l.n && !known; i++)
			known = !strcmp(l.v[i].hex, hex);
		if (!known) {
			sbuf_addf(log, "sha256:%s is not in %s\n", hex, cache);
			rc = rc ? rc : 1;
			continue;
		}
		r = stage_cache_remove(cache, hex, err);
		if (r < 0) {
			rc = -1;
			break;
		}
		if (r == 1) {
			sbuf_addf(log, "kept sha256:%s: in use\n", hex);
			rc = 1;
		} else {
			sbuf_addf(log, "removed sha256:%s\n", hex);
		}
	}
	stage_evict_list_release(&l);
	return rc;
}
