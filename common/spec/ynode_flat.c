/* ynode_flat.c - a YAML tree as flat dotted keys.  Core (pure); see
 * ynode_flat.h. */
#include "common/spec/ynode_flat.h" // defines: ynode_flat_add
#include "common/flatdoc.h"         // defines: flatdoc_set
#include "common/sbuf.h"            // defines: struct sbuf
#include "common/spec/ynode.h"      // defines: struct ynode

#include <jansson.h>
#include <stdlib.h>

/* A quoted scalar in double quotes; jansson's escapes are YAML's too.
 * ynode_parse refused text that is not UTF-8, so json_string takes it. */
static void add_scalar(struct flatdoc *out, const char *key, const struct ynode *n)
{
	json_t *s;
	char *text;

	if (!n->quoted) {
		flatdoc_set(out, key, n->str);
		return;
	}
	s = json_stringn(n->str, n->len);
	text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	flatdoc_set(out, key, text ? text : "\"\"");
	free(text);
	json_decref(s);
}

static void add(const struct ynode *n, struct sbuf *key, struct flatdoc *out)
{
	size_t len = key->len;

	if (n->kind == YNODE_SCALAR) {
		add_scalar(out, key->buf, n);
		return;
	}
	if (!n->nkids) {
		flatdoc_set(out, key->buf, n->kind == YNODE_MAP ? "{}" : "[]");
		return;
	}
	for (size_t i = 0; i < n->nkids; i += n->kind == YNODE_MAP ? 2 : 1) {
		if (n->kind == YNODE_MAP)
			sbuf_addf(key, "%s%s", len ? "." : "", n->kids[i]->str);
		else
			sbuf_addf(key, "[%zu]", i);
		add(n->kind == YNODE_MAP ? n->kids[i + 1] : n->kids[i], key, out);
		key->len = len;
		key->buf[len] = '\0';
	}
}

void ynode_flat_add(const struct ynode *root, struct flatdoc *out)
{
	struct sbuf key = SBUF_INIT;

	if (!root)
		return;
	add(root, &key, out);
	sbuf_release(&key);
}
