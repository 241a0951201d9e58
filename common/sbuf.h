/* sbuf.h - a growable, always NUL-terminated byte buffer.
 *
 * Modelled on git's strbuf: cores build text (resolved specs, batch
 * scripts, JSON) into a caller-owned sbuf and never print it themselves.
 *
 * Invariants: buf is never NULL once initialised (it points at a shared
 * empty string until the first append), buf[len] == '\0', len < alloc
 * whenever alloc != 0.  A zeroed struct sbuf is a valid empty buffer for
 * sbuf_release(), but must go through sbuf_init() before appending.
 */
#ifndef HPT_SBUF_H
#define HPT_SBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct sbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

#define SBUF_INIT { sbuf_empty, 0, 0 }
extern char sbuf_empty[];

void sbuf_init(struct sbuf *sb);
/* Frees the contents; the buffer is left as after sbuf_init(). */
void sbuf_release(struct sbuf *sb);
/* Hands the contents to the caller (free() them) and re-initialises. */
char *sbuf_detach(struct sbuf *sb, size_t *len);

void sbuf_grow(struct sbuf *sb, size_t extra);
void sbuf_add(struct sbuf *sb, const void *data, size_t len);
void sbuf_addstr(struct sbuf *sb, const char *s);
void sbuf_addch(struct sbuf *sb, int c);
__attribute__((format(printf, 2, 3)))
void sbuf_addf(struct sbuf *sb, const char *fmt, ...);
void sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap);
void sbuf_reset(struct sbuf *sb);

/* Text from outside (job names, reasons, file contents, values) for a
 * terminal: control characters (C0, DEL, C1) and bytes that are not
 * UTF-8 become \xHH (\n, \t and \r as such), so a table cannot be
 * redrawn or recoloured by what it shows; the rest is kept. */
void sbuf_add_printable(struct sbuf *sb, const char *s);

/* Is s valid UTF-8 (no stray, overlong or cut sequence, nothing above
 * U+10FFFF)?  What jansson requires of every string it packs: a name
 * that is not is refused where it enters, never dropped later. */
bool sbuf_is_utf8(const char *s);

/* s as one bash word that expands to exactly s: 'abc', with each ' as
 * '\'' ; the empty string becomes ''.  Every string of a job spec that
 * reaches a script goes through here. */
void sbuf_add_shell_quoted(struct sbuf *sb, const char *s);

/* A number for a text summary: "-" when not finite (NAN: not logged),
 * %.*f with decimals places below 1e12, %.4g above, so 1e308 is
 * "1e+308", not 309 digits. */
void sbuf_add_number(struct sbuf *sb, double v, int decimals);
/* A byte count for people, in decimal units: "512 B", "10.7 kB",
 * "1.2 GB" (up to EB); "-" when not finite or negative. */
void sbuf_add_bytes(struct sbuf *sb, double bytes);

/* User input quoted in a message, at most SBUF_CLIP_MAX bytes of it:
 * returns s when it is that short, else buf holding its first bytes
 * (cut at a character boundary), "..." and its length in bytes, so a
 * refused 100 KB argument is not echoed whole. */
#define SBUF_CLIP_MAX 80
#define SBUF_CLIP_SIZE (SBUF_CLIP_MAX + 40)
const char *sbuf_clip(const char *s, char buf[SBUF_CLIP_SIZE]);
/* The same with a buffer of the enclosing block's, for one message:
 * fprintf(stderr, "got '%s'", SBUF_CLIP(optarg)). */
#define SBUF_CLIP(s) sbuf_clip((s), (char[SBUF_CLIP_SIZE]){ 0 })

/* Out-of-memory is not a recoverable condition for a CLI: these print
 * and exit with the internal-error status instead of returning NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
__attribute__((format(printf, 1, 2)))
char *xasprintf(const char *fmt, ...);

#endif
