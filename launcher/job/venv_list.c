/* venv_list.c - a virtualenv's distributions, parsed, sorted and
 * digested: see venv_list.h.  Pure core. */
#include "launcher/job/venv_list.h" // defines: struct venv_list, venv_list_*
#include "common/sbuf.h"            // defines: struct sbuf, xstrndup, xrealloc

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

void venv_list_release(struct venv_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].version);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* The value of header name (with its colon) on the line at p, trimmed;
 * NULL when the line is another header. */
static char *header_value(const char *p, const char *end, const char *name)
{
	size_t k = strlen(name);
	const char *v, *e;

	if ((size_t)(end - p) < k || strncasecmp(p, name, k))
		return NULL;
	for (v = p + k; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	for (e = v; e < end && *e != '\n' && *e != '\r'; e++)
		;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return xstrndup(v, (size_t)(e - v));
}

int venv_list_add_metadata(struct venv_list *l, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	char *name = NULL, *version = NULL;

	/* headers end at the first blank line; the body is the README */
	while (p < end && *p != '\n' && !(*p == '\r' && p + 1 < end && p[1] == '\n')) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!name)
			name = header_value(p, nl ? nl : end, "Name:");
		if (!version)
			version = header_value(p, nl ? nl : end, "Version:");
		p = nl ? nl + 1 : end;
	}
	if (!name || !version || !*name || !*version) {
		free(name);
		free(version);
		return -1;
	}
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 64;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	l->v[l->n++] = (struct venv_package){ name, version };
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct venv_package *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->version, y->version);
}

void venv_list_finish(struct venv_list *l)
{
	struct sbuf listing = SBUF_INIT;
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_name);
	for (size_t i = 0; i < l->n; i++)
		sbuf_addf(&listing, "%s==%s\n", l->v[i].name, l->v[i].version);
	EVP_Digest(listing.buf ? listing.buf : "", listing.len, md, &mdlen, EVP_sha256(), NULL);
	memcpy(l->digest, "sha256:", 7);
	for (unsigned int i = 0; i < mdlen && i < 32; i++)
		/* encode-ok: two hex digits and a NUL in 3 bytes */
		snprintf(l->digest + 7 + 2 * i, 3, "%02x", md[i]);
	sbuf_release(&listing);
}

json_t *venv_list_json(const struct venv_list *l, const char *venv)
{
	json_t *pkgs = json_object();

	for (size_t i = 0; pkgs && i < l->n; i++)
		if (json_object_set_new(pkgs, l->v[i].name, json_string(l->v[i].version))) {
			json_decref(pkgs);
			return NULL;
		}
	return pkgs ? json_pack("{s:s, s:s, s:o}", "path", venv, "digest", l->digest, "packages",
				pkgs)
		    : NULL;
}
