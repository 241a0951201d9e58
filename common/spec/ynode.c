/* ynode.c - libyaml events -> bounded struct ynode tree.
 * Core: works on a buffer; see ynode.h for what is refused and why. */
#include "common/spec/ynode.h" // defines: struct ynode, ynode_*
#include "common/diag.h"     // defines: diag_add
#include "common/sbuf.h"     // defines: x* allocators

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define STR(x) #x
#define XSTR(x) STR(x)
#define STR_TAG "tag:yaml.org,2002:str"

struct ynode *ynode_new(enum ynode_kind kind, const char *where, int line, int col)
{
	struct ynode *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	n->where = where;
	n->line = line;
	n->col = col;
	return n;
}

struct ynode *ynode_new_scalar(const char *where, int line, int col,
			       const char *s, size_t len, bool quoted)
{
	struct ynode *n = ynode_new(YNODE_SCALAR, where, line, col);

	n->str = xstrndup(s, len);
	n->len = len;
	n->quoted = quoted;
	return n;
}

void ynode_free(struct ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		ynode_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

void ynode_append(struct ynode *parent, struct ynode *kid)
{
	if (parent->nkids == parent->alloc) {
		parent->alloc = parent->alloc ? parent->alloc * 2 : 4;
		parent->kids = xrealloc(parent->kids, parent->alloc * sizeof(*parent->kids));
	}
	parent->kids[parent->nkids++] = kid;
}

struct ynode *ynode_get(const struct ynode *map, const char *key)
{
	if (!map || map->kind != YNODE_MAP)
		return NULL;
	for (size_t i = 0; i + 1 < map->nkids; i += 2)
		if (!strcmp(map->kids[i]->str, key))
			return map->kids[i + 1];
	return NULL;
}

bool ynode_is_null(const struct ynode *n)
{
	if (!n)
		return true;
	if (n->kind != YNODE_SCALAR || n->quoted)
		return false;
	return !strcmp(n->str, "") || !strcmp(n->str, "~") || !strcmp(n->str, "null") ||
	       !strcmp(n->str, "Null") || !strcmp(n->str, "NULL");
}

const char *ynode_kind_name(const struct ynode *n)
{
	if (!n || ynode_is_null(n))
		return "null";
	switch (n->kind) {
	case YNODE_MAP:
		return "a mapping";
	case YNODE_SEQ:
		return "a list";
	default:
		return "a scalar";
	}
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid:
 * overlong forms, surrogates and code points past U+10FFFF are refused. */
static size_t utf8_seq_len(const unsigned char *s, size_t left)
{
	unsigned c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (left < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Rejects NUL bytes and invalid UTF-8 up front, with the position of the
 * first of each, because libyaml reports them by byte offset only. */
static int check_bytes(const char *where, const char *text, size_t len,
		       struct diag_list *dl)
{
	const unsigned char *s = (const unsigned char *)text;
	int line = 1, col = 1, bad = 0;
	bool seen_nul = false, seen_utf8 = false;

	for (size_t i = 0; i < len && !(seen_nul && seen_utf8);) {
		size_t n = s[i] ? utf8_seq_len(s + i, len - i) : 1;

		if (!s[i] && !seen_nul) {
			diag_add(dl, DIAG_ERROR, where, line, col, "",
				 "NUL byte in input; a job spec is UTF-8 text");
			seen_nul = true;
			bad = -1;
		} else if (!n) {
			if (!seen_utf8)
				diag_add(dl, DIAG_ERROR, where, line, col, "",
					 "invalid UTF-8 byte 0x%02x; a job spec is UTF-8 text",
					 s[i]);
			seen_utf8 = true;
			bad = -1;
			n = 1;
		}
		if (s[i] == '\n')
			line++, col = 1;
		else
			col++;
		i += n;
	}
	return bad;
}

static void position_of(const char *text, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off; i++) {
		if (text[i] == '\n')
			++*line, *col = 1;
		else if (((unsigned char)text[i] & 0xc0) != 0x80)
			++*col;
	}
}

struct builder {
	const char *where;
	struct diag_list *dl;
	struct ynode *root;
	struct ynode *stack[YNODE_MAX_DEPTH + 1];
	int depth;
	size_t nodes;
	int docs;
};

__attribute__((format(printf, 3, 4)))
static int fail_at(struct builder *b, const yaml_mark_t *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vadd(b->dl, DIAG_ERROR, b->where, (int)m->line + 1, (int)m->column + 1, "", fmt, ap);
	va_end(ap);
	return -1;
}

/* Refuses anchors and non-string tags on a node-starting event. */
static int check_props(struct builder *b, const yaml_event_t *ev, const yaml_char_t *anchor,
		       const yaml_char_t *tag, bool *quoted)
{
	if (anchor)
		return fail_at(b, &ev->start_mark,
			       "anchors and aliases are not allowed in a job spec (found &%s)",
			       (const char *)anchor);
	if (!tag)
		return 0;
	if (!strcmp((const char *)tag, STR_TAG) || !strcmp((const char *)tag, "!")) {
		if (quoted)
			*quoted = true;
		return 0;
	}
	return fail_at(b, &ev->start_mark, "tag '%s' is not supported in a job spec",
		       (const char *)tag);
}

static int attach(struct builder *b, struct ynode *n, const yaml_mark_t *m)
{
	struct ynode *parent = b->depth ? b->stack[b->depth - 1] : NULL;

	if (++b->nodes > YNODE_MAX_NODES) {
		ynode_free(n);
		diag_add(b->dl, DIAG_ERROR, b->where, (int)m->line + 1, (int)m->column + 1, "",
			 "more than %d YAML nodes; a job spec is far smaller",
			 YNODE_MAX_NODES);
		return -1;
	}
	if (!parent) {
		b->root = n;
		return 0;
	}
	ynode_append(parent, n);
	if (parent->kind == YNODE_MAP && parent->nkids % 2 && n->kind != YNODE_SCALAR)
		return fail_at(b, m, "a mapping key must be a plain string, not %s",
			       n->kind == YNODE_MAP ? "a mapping" : "a list");
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct ynode *x = *(struct ynode *const *)a, *y = *(struct ynode *const *)b;
	int c = strcmp(x->str, y->str);

	if (c)
		return c;
	return x->line != y->line ? (x->line > y->line ? 1 : -1) : (x->col > y->col) - (x->col < y->col);
}

/* Reports every duplicate key and drops the later pairs, so validation
 * sees each key once.  O(k log k) in the number of keys, since a hostile
 * map can hold tens of thousands. */
static void drop_duplicate_keys(struct builder *b, struct ynode *map)
{
	size_t k = map->nkids / 2, out = 0;
	struct ynode **keys;

	if (k < 2)
		return;
	keys = xmalloc(k * sizeof(*keys));
	for (size_t i = 0; i < k; i++)
		keys[i] = map->kids[2 * i];
	qsort(keys, k, sizeof(*keys), key_cmp);
	for (size_t i = 1; i < k; i++) {
		size_t first = i - 1;

		while (first > 0 && !strcmp(keys[first - 1]->str, keys[i]->str))
			first--;
		if (strcmp(keys[first]->str, keys[i]->str))
			continue;
		diag_add(b->dl, DIAG_ERROR, b->where, keys[i]->line, keys[i]->col, "",
			 "duplicate key \"%s\" (first at %d:%d)", keys[i]->str,
			 keys[first]->line, keys[first]->col);
		keys[i]->len = SIZE_MAX; /* mark for removal */
	}
	free(keys);
	for (size_t i = 0; i < map->nkids; i += 2) {
		if (map->kids[i]->len == SIZE_MAX) {
			ynode_free(map->kids[i]);
			ynode_free(map->kids[i + 1]);
			continue;
		}
		map->kids[out++] = map->kids[i];
		map->kids[out++] = map->kids[i + 1];
	}
	map->nkids = out;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
	const char *v = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	bool quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;

	if (check_props(b, ev, ev->data.scalar.anchor, ev->data.scalar.tag, &quoted))
		return -1;
	if (memchr(v, '\0', len))
		return fail_at(b, &ev->start_mark, "NUL character in a string");
	return attach(b, ynode_new_scalar(b->where, (int)ev->start_mark.line + 1,
					  (int)ev->start_mark.column + 1, v, len, quoted),
		      &ev->start_mark);
}

static int on_start(struct builder *b, const yaml_event_t *ev, enum ynode_kind kind)
{
	const yaml_char_t *anchor = kind == YNODE_MAP ? ev->data.mapping_start.anchor
						      : ev->data.sequence_start.anchor;
	const yaml_char_t *tag = kind == YNODE_MAP ? ev->data.mapping_start.tag
						   : ev->data.sequence_start.tag;
	struct ynode *n;

	if (anchor || (tag && strcmp((const char *)tag, "!")))
		return check_props(b, ev, anchor, tag, NULL) ? -1 : fail_at(b, &ev->start_mark,
			"tags are not supported on a %s", kind == YNODE_MAP ? "mapping" : "list");
	if (b->depth >= YNODE_MAX_DEPTH)
		return fail_at(b, &ev->start_mark, "nesting deeper than %s levels",
			       XSTR(YNODE_MAX_DEPTH));
	n = ynode_new(kind, b->where, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1);
	if (attach(b, n, &ev->start_mark))
		return -1;
	b->stack[b->depth++] = n;
	return 0;
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1)
			return fail_at(b, &ev->start_mark,
				       "a second YAML document; a job spec is one document");
		return 0;
	case YAML_ALIAS_EVENT:
		return fail_at(b, &ev->start_mark,
			       "anchors and aliases are not allowed in a job spec (found *%s)",
			       (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		return on_scalar(b, ev);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, ev, YNODE_SEQ);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, ev, YNODE_MAP);
	case YAML_MAPPING_END_EVENT:
		drop_duplicate_keys(b, b->stack[b->depth - 1]);
		b->depth--;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
		b->depth--;
		return 0;
	default:
		return 0;
	}
}

static void report_parser_error(struct builder *b, const yaml_parser_t *p, const char *text)
{
	int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;

	if (p->error == YAML_READER_ERROR)
		position_of(text, p->problem_offset, &line, &col);
	if (p->context)
		diag_add(b->dl, DIAG_ERROR, b->where, line, col, "",
			 "invalid YAML: %s (%s that starts at %d:%d)", p->problem,
			 p->context, (int)p->context_mark.line + 1,
			 (int)p->context_mark.column + 1);
	else
		diag_add(b->dl, DIAG_ERROR, b->where, line, col, "", "invalid YAML: %s",
			 p->problem ? p->problem : "unknown error");
}

int ynode_parse(const char *where, const char *text, size_t len,
		   struct ynode **root, struct diag_list *dl)
{
	struct builder b = { .where = where, .dl = dl };
	yaml_parser_t parser;
	yaml_event_t ev;
	int rc = 0;

	*root = NULL;
	if (len > YNODE_MAX_BYTES) {
		int line, col;

		position_of(text, YNODE_MAX_BYTES, &line, &col);
		diag_add(dl, DIAG_ERROR, where, line, col, "",
			 "input is larger than %u bytes, the limit for a job spec",
			 YNODE_MAX_BYTES);
		return -1;
	}
	if (check_bytes(where, text, len, dl))
		return -1;
	if (!yaml_parser_initialize(&parser)) {
		diag_add(dl, DIAG_ERROR, where, 0, 0, "", "cannot initialise the YAML parser");
		return -1;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	for (;;) {
		if (!yaml_parser_parse(&parser, &ev)) {
			report_parser_error(&b, &parser, text);
			rc = -1;
			break;
		}
		rc = on_event(&b, &ev);
		if (rc || ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	if (rc) {
		ynode_free(b.root);
		return -1;
	}
	*root = b.root;
	return 0;
}
