/* sbuf.c - growable byte buffer and the x* allocation wrappers.
 * Core: no I/O except the out-of-memory message. */
#include "common/sbuf.h"     // defines: struct sbuf, sbuf_*, x* allocators
#include "common/exitcode.h" // defines: HPT_EXIT_INTERNAL
#include "common/strfmt.h" // defines: strfmt_label

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char sbuf_empty[1];

static void die_oom(size_t n)
{
	fprintf(stderr, "hpctrain: out of memory allocating %zu bytes\n", n);
	exit(HPT_EXIT_INTERNAL);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die_oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die_oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct sbuf sb = SBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return sbuf_detach(&sb, NULL);
}

void sbuf_init(struct sbuf *sb)
{
	sb->buf = sbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
}

void sbuf_release(struct sbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	sbuf_init(sb);
}

char *sbuf_detach(struct sbuf *sb, size_t *len)
{
	char *p;

	if (!sb->alloc)
		sbuf_grow(sb, 0);
	p = sb->buf;
	if (len)
		*len = sb->len;
	sbuf_init(sb);
	return p;
}

void sbuf_grow(struct sbuf *sb, size_t extra)
{
	size_t want = sb->len + extra + 1;
	int fresh = !sb->alloc;

	if (want < sb->len)
		die_oom(SIZE_MAX);
	if (want <= sb->alloc)
		return;
	sb->alloc = sb->alloc ? sb->alloc : 64;
	while (sb->alloc < want)
		sb->alloc = sb->alloc * 3 / 2 + 16;
	sb->buf = xrealloc(fresh ? NULL : sb->buf, sb->alloc);
	if (fresh)
		sb->buf[0] = '\0';
}

void sbuf_add(struct sbuf *sb, const void *data, size_t len)
{
	sbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void sbuf_addstr(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void sbuf_addch(struct sbuf *sb, int c)
{
	sbuf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
}

void sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	sbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void sbuf_reset(struct sbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

/* The length of the UTF-8 character at s (1..4) and its code point, or
 * 0 when s does not start one (a stray continuation byte, an overlong or
 * cut sequence). */
static size_t utf8_len(const unsigned char *s, unsigned *cp)
{
	size_t n = s[0] < 0x80 ? 1 : s[0] < 0xc2 ? 0 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3
		 : s[0] < 0xf5 ? 4 : 0;

	*cp = s[0];
	if (n < 2)
		return n;
	*cp = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* the NUL of a cut sequence stops here too */
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && *cp < 0x800) || (n == 4 && (*cp < 0x10000 || *cp > 0x10ffff)))
		return 0;
	return n;
}

void sbuf_add_shell_quoted(struct sbuf *sb, const char *s)
{
	sbuf_addch(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sbuf_addstr(sb, "'\\''");
		else
			sbuf_addch(sb, *s);
	}
	sbuf_addch(sb, '\'');
}

void sbuf_add_printable(struct sbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned cp;
		size_t n = utf8_len(p, &cp);

		if (n && cp >= 0x20 && cp != 0x7f && (cp < 0x80 || cp > 0x9f)) {
			sbuf_add(sb, p, n);
			p += n;
			continue;
		}
		if (*p == '\n' || *p == '\t' || *p == '\r')
			sbuf_addf(sb, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
		else
			sbuf_addf(sb, "\\x%02x", *p);
		p++;
	}
}

bool sbuf_is_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned cp;
		size_t n = utf8_len(p, &cp);

		if (!n || (cp >= 0xd800 && cp <= 0xdfff)) /* jansson refuses surrogates too */
			return false;
		p += n;
	}
	return true;
}

void sbuf_add_number(struct sbuf *sb, double v, int decimals)
{
	if (!isfinite(v))
		sbuf_addch(sb, '-');
	else if (v > -1e12 && v < 1e12)
		sbuf_addf(sb, "%.*f", decimals, v);
	else
		sbuf_addf(sb, "%.4g", v);
}

void sbuf_add_bytes(struct sbuf *sb, double bytes)
{
	static const char *const unit[] = { "kB", "MB", "GB", "TB", "PB", "EB" };
	size_t u = 0;

	if (!isfinite(bytes) || bytes < 0) {
		sbuf_addch(sb, '-');
		return;
	}
	if (bytes < 1000) {
		sbuf_addf(sb, "%.0f B", bytes);
		return;
	}
	bytes /= 1000;
	while (bytes >= 999.95 && u + 1 < sizeof(unit) / sizeof(*unit)) {
		bytes /= 1000;
		u++;
	}
	sbuf_add_number(sb, bytes, 1);
	sbuf_addf(sb, " %s", unit[u]);
}

const char *sbuf_clip(const char *s, char buf[SBUF_CLIP_SIZE])
{
	size_t len = strlen(s), cut = SBUF_CLIP_MAX;

	if (len <= SBUF_CLIP_MAX)
		return s;
	while (cut && ((unsigned char)s[cut] & 0xc0) == 0x80) /* not inside a character */
		cut--;
	strfmt_label(buf, SBUF_CLIP_SIZE, "%.*s... (%zu bytes)", (int)cut, s, len);
	return buf;
}
