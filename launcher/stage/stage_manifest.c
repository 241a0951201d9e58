/* stage_manifest.c - a data set's manifest: sealing (sort, check, hash)
 * and its JSON form (see stage_manifest.h); executables and links for a
 * tree staged as code.
 * Pure core: memory in, memory out; sha256 through libcrypto's EVP on
 * bytes already in memory. */
#include "launcher/stage/stage_manifest.h" // defines: struct stage_manifest, stage_manifest_*
#include "common/sbuf.h"                   // defines: struct sbuf, xrealloc, xstrdup

#include <inttypes.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#define LISTING_HEADER "hpctrain-stage-manifest 1\n"
#define LISTING_HEADER_TREE "hpctrain-stage-manifest 2\n"

void stage_manifest_release(struct stage_manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].path);
		free(m->v[i].link);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* A new zeroed entry at the end of m. */
static struct stage_file *grow(struct stage_manifest *m)
{
	struct stage_file *f;

	/* the struct has no capacity field (the agreed interface): grow to
	 * the next power of two when n reaches one, so adding stays
	 * amortised O(1) for a data set of millions of files */
	if (m->n < 8 ? !m->v : !(m->n & (m->n - 1)))
		m->v = xrealloc(m->v, (m->n < 8 ? 8 : 2 * m->n) * sizeof(*m->v));
	f = &m->v[m->n++];
	memset(f, 0, sizeof(*f));
	return f;
}

void stage_manifest_add(struct stage_manifest *m, const char *path, uint64_t size,
			int64_t mtime_ns, const unsigned char sha256[32])
{
	struct stage_file *f = grow(m);

	f->path = xstrdup(path);
	f->size = size;
	f->mtime_ns = mtime_ns;
	memcpy(f->sha256, sha256, 32);
}

void stage_manifest_add_link(struct stage_manifest *m, const char *path, const char *target)
{
	struct stage_file *f = grow(m);

	f->path = xstrdup(path);
	f->link = xstrdup(target);
}

void stage_manifest_hex_of(const unsigned char sha256[32], char out[65])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 32; i++) {
		out[2 * i] = digits[sha256[i] >> 4];
		out[2 * i + 1] = digits[sha256[i] & 15];
	}
	out[64] = '\0';
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int stage_manifest_parse_hex(const char *hex, unsigned char out[32])
{
	if (!hex || strlen(hex) != 64)
		return -1;
	for (int i = 0; i < 32; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

const char *stage_manifest_hex(const char *hash)
{
	unsigned char b[32];

	if (!hash || strncmp(hash, "sha256:", 7) || stage_manifest_parse_hex(hash + 7, b))
		return NULL;
	return hash + 7;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct stage_file *)a)->path, ((const struct stage_file *)b)->path);
}

bool stage_manifest_path_is_safe(const char *p)
{
	if (!*p || *p == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/' && !*++p)
			return false; /* a trailing slash */
	}
	return true;
}

/* A link's target as the engine keeps it: text a symlink(2) can hold
 * and JSON can carry.  Where it points is not checked: a link leaving
 * the tree is kept as one (the code snapshot's rule), and nothing of the
 * engine follows it. */
static int check_link(const struct stage_file *f, struct sbuf *err)
{
	size_t n = strlen(f->link);

	if (n && n <= STAGE_LINK_MAX && sbuf_is_utf8(f->link))
		return 0;
	sbuf_addf(err, "the link '%s' has ", SBUF_CLIP(f->path));
	if (!n) {
		sbuf_addstr(err, "an empty target");
	} else if (n > STAGE_LINK_MAX) {
		sbuf_addf(err, "a target of %zu bytes, more than %d", n, STAGE_LINK_MAX);
	} else {
		sbuf_addstr(err, "the target '");
		sbuf_add_printable(err, f->link);
		sbuf_addstr(err, "', which is not UTF-8 (its bytes shown as \\xHH)");
	}
	return -1;
}

/* Whether a proper prefix of f's path is a link of m (sorted): a copy
 * would write f through that link, wherever it points. */
static const struct stage_file *under_link(const struct stage_manifest *m,
					   const struct stage_file *f)
{
	char *p = xstrdup(f->path);
	const struct stage_file *hit = NULL;

	for (char *slash = strchr(p, '/'); slash && !hit; slash = strchr(slash + 1, '/')) {
		long k;

		*slash = '\0';
		k = stage_manifest_find(m, p);
		if (k >= 0 && m->v[k].link)
			hit = &m->v[k];
		*slash = '/';
	}
	free(p);
	return hit;
}

/* Whether m holds a link (*links) or an executable: then the listing is
 * the second form (stage_manifest.h). */
static bool is_tree(const struct stage_manifest *m, bool *links)
{
	bool exec = false;

	*links = false;
	for (size_t i = 0; i < m->n; i++) {
		exec |= m->v[i].exec;
		*links |= m->v[i].link != NULL;
	}
	return exec || *links;
}

static void list_entry(struct sbuf *listing, const struct stage_file *f, bool tree)
{
	char hex[65];

	if (f->link) {
		sbuf_addstr(listing, "l ");
		sbuf_add(listing, f->link, strlen(f->link) + 1); /* with its NUL */
	} else {
		stage_manifest_hex_of(f->sha256, hex);
		if (tree)
			sbuf_addstr(listing, f->exec ? "x " : "f ");
		sbuf_addf(listing, "%" PRIu64 " %s ", f->size, hex);
	}
	sbuf_add(listing, f->path, strlen(f->path) + 1); /* with its NUL */
}

/* The checks of one entry of a sorted manifest (stage_manifest.h);
 * links: whether it holds any (else none can lie above a path: a data
 * set of millions of files pays nothing for the search). */
static int check_entry(const struct stage_manifest *m, size_t i, bool links, struct sbuf *err)
{
	const struct stage_file *f = &m->v[i], *l;

	if (!sbuf_is_utf8(f->path)) {
		/* jansson packs UTF-8 only: such a name would drop out
		 * of the manifest's JSON, and the copy never check */
		sbuf_addstr(err, "the file name '");
		sbuf_add_printable(err, f->path);
		sbuf_addstr(err, "' is not UTF-8 (its bytes shown as \\xHH); rename it, "
			    "a data set's names must be UTF-8");
		return -1;
	}
	if (!m->is_file && !stage_manifest_path_is_safe(f->path)) {
		sbuf_addf(err, "unsafe path in a manifest: '%s'", SBUF_CLIP(f->path));
		return -1;
	}
	if (i && !strcmp(f->path, m->v[i - 1].path)) {
		sbuf_addf(err, "the path '%s' is listed twice", SBUF_CLIP(f->path));
		return -1;
	}
	if (f->link && check_link(f, err))
		return -1;
	if (links && (l = under_link(m, f))) {
		sbuf_addf(err, "the path '%s' lies under the link '%s'", SBUF_CLIP(f->path),
			  SBUF_CLIP(l->path));
		return -1;
	}
	return 0;
}

int stage_manifest_seal(struct stage_manifest *m, struct sbuf *err)
{
	struct sbuf listing = SBUF_INIT;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char hex[65];
	bool tree, links;

	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), by_path);
	if (m->is_file && (m->n != 1 || *m->v[0].path || m->v[0].link)) {
		sbuf_addstr(err, "a file source has one file, with the path \"\"");
		return -1;
	}
	tree = is_tree(m, &links);
	m->bytes = 0;
	sbuf_addstr(&listing, tree ? LISTING_HEADER_TREE : LISTING_HEADER);
	for (size_t i = 0; i < m->n; i++) {
		const struct stage_file *f = &m->v[i];

		if (check_entry(m, i, links, err))
			goto fail;
		if (m->bytes + f->size < m->bytes) {
			sbuf_addstr(err, "the sizes in a manifest overflow");
			goto fail;
		}
		m->bytes += f->size;
		list_entry(&listing, f, tree);
	}
	EVP_Digest(listing.buf, listing.len, md, &mdlen, EVP_sha256(), NULL);
	stage_manifest_hex_of(md, hex);
	/* encode-ok: 7 + 64 hex digits, the size of hash */
	snprintf(m->hash, sizeof(m->hash), "sha256:%s", hex);
	sbuf_release(&listing);
	return 0;
fail:
	sbuf_release(&listing);
	return -1;
}

long stage_manifest_find(const struct stage_manifest *m, const char *path)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->v[mid].path, path);

		if (!c)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void name_file(const char *prefix, const char *path, const char *how, size_t k,
		      size_t max, struct sbuf *out)
{
	if (k > max)
		return;
	if (k > 1)
		sbuf_addstr(out, ", ");
	sbuf_addstr(out, prefix);
	if (*path)
		sbuf_addf(out, "/%s", path);
	sbuf_addf(out, " (%s)", how);
}

size_t stage_manifest_diff(const struct stage_manifest *was, const struct stage_manifest *now,
			   const char *prefix, size_t max, struct sbuf *out)
{
	size_t i = 0, j = 0, k = 0;

	while (i < was->n || j < now->n) {
		const struct stage_file *a = i < was->n ? &was->v[i] : NULL;
		const struct stage_file *b = j < now->n ? &now->v[j] : NULL;
		int c = !a ? 1 : !b ? -1 : strcmp(a->path, b->path);

		if (c < 0) {
			name_file(prefix, a->path, "gone", ++k, max, out);
			i++;
		} else if (c > 0) {
			name_file(prefix, b->path, "new", ++k, max, out);
			j++;
		} else {
			if (a->size != b->size || memcmp(a->sha256, b->sha256, sizeof(a->sha256)) ||
			    a->exec != b->exec || !a->link != !b->link ||
			    (a->link && strcmp(a->link, b->link)))
				name_file(prefix, a->path, "changed", ++k, max, out);
			i++;
			j++;
		}
	}
	if (k > max)
		sbuf_addf(out, "%sand %zu more", max ? ", " : "", k - max);
	return k;
}

json_t *stage_manifest_to_json(const struct stage_manifest *m)
{
	json_t *files = json_array(), *j;
	char hex[65];

	for (size_t i = 0; i < m->n; i++) {
		const struct stage_file *f = &m->v[i];
		json_t *e;

		stage_manifest_hex_of(f->sha256, hex);
		if (f->link)
			e = json_pack("{s:s, s:s}", "path", f->path, "link", f->link);
		else
			e = json_pack("{s:s, s:I, s:I, s:s}", "path", f->path, "size",
				      (json_int_t)f->size, "mtime_ns", (json_int_t)f->mtime_ns,
				      "sha256", hex);
		/* "exec" only where true: a data set's JSON stays as it was */
		if (e && f->exec && json_object_set_new(e, "exec", json_true())) {
			json_decref(e);
			e = NULL;
		}
		/* a file left out would make a manifest whose listing and
		 * bytes disagree with its files: no manifest at all instead */
		if (!e || json_array_append_new(files, e)) {
			json_decref(files);
			return NULL;
		}
	}
	j = json_pack("{s:i, s:s, s:b, s:I, s:o}", "version", 1, "hash", m->hash, "is_file",
		      m->is_file, "bytes", (json_int_t)m->bytes, "files", files);
	return j;
}

/* One element of "files" appended to m: a file, or a link (exactly
 * "path" and "link"). */
static int file_from_json(const json_t *f, size_t i, struct stage_manifest *m, struct sbuf *err)
{
	const char *path, *hex, *link = NULL;
	json_int_t size, mtime;
	unsigned char sha[32];
	int exec = 0;

	if (!json_unpack((json_t *)f, "{s:s, s:s !}", "path", &path, "link", &link)) {
		stage_manifest_add_link(m, path, link);
		return 0;
	}
	if (json_unpack((json_t *)f, "{s:s, s:I, s:I, s:s, s?b}", "path", &path, "size", &size,
			"mtime_ns", &mtime, "sha256", &hex, "exec", &exec) ||
	    size < 0 || stage_manifest_parse_hex(hex, sha)) {
		sbuf_addf(err, "manifest file %zu: expected path and link, or path, size >= 0, "
			  "mtime_ns, a sha256 of 64 hex digits and maybe exec", i);
		return -1;
	}
	stage_manifest_add(m, path, (uint64_t)size, mtime, sha);
	m->v[m->n - 1].exec = exec;
	return 0;
}

int stage_manifest_from_json(const json_t *j, struct stage_manifest *m, struct sbuf *err)
{
	const char *hash = NULL;
	json_t *files = NULL, *f;
	json_int_t version = 0, bytes = 0;
	int is_file = 0;
	size_t i;

	stage_manifest_release(m);
	if (json_unpack((json_t *)j, "{s:I, s:s, s:b, s:I, s:o}", "version", &version, "hash", &hash,
			"is_file", &is_file, "bytes", &bytes, "files", &files) ||
	    version != 1 || !json_is_array(files)) {
		sbuf_addstr(err, "not a version 1 manifest (version, hash, is_file, bytes, files)");
		return -1;
	}
	m->is_file = is_file;
	json_array_foreach(files, i, f) {
		if (file_from_json(f, i, m, err))
			goto fail;
	}
	if (stage_manifest_seal(m, err))
		goto fail;
	if ((json_int_t)m->bytes != bytes || strcmp(m->hash, hash)) {
		sbuf_addf(err, "the manifest's hash or size does not match its files (says %s, is %s)",
			  SBUF_CLIP(hash), m->hash);
		goto fail;
	}
	return 0;
fail:
	stage_manifest_release(m);
	return -1;
}
