/* strfmt.h - text formatted into a fixed buffer, and whether it fit.
 *
 * snprintf cuts what does not fit and says so only in a return value
 * that is easy to ignore: a path or a command cut short names another
 * file or does another thing.  strfmt is snprintf whose answer must be
 * looked at (the compiler says so); a cut text is an error, and buf
 * then holds "" so a caller that goes on anyway opens nothing.
 * strfmt_label is for text only people read (a label, a reason, a
 * number for a table), where a cut costs nothing; it is the one place
 * that says so, instead of a comment at every call.
 * tests/lint-encode.sh refuses a bare snprintf whose result is ignored. */
#ifndef HPT_STRFMT_H
#define HPT_STRFMT_H

#include <stddef.h>

/* 0 when the whole text fit in buf (size bytes with its NUL); -1 when it
 * was cut or could not be formatted, with buf "". */
__attribute__((format(printf, 3, 4), warn_unused_result))
int strfmt(char *buf, size_t size, const char *fmt, ...);

/* snprintf for text that people read: cut to size, never an error. */
__attribute__((format(printf, 3, 4)))
void strfmt_label(char *buf, size_t size, const char *fmt, ...);

#endif
