/* strfmt.c - text formatted into a fixed buffer, and whether it fit
 * (strfmt.h). */
#include "common/strfmt.h" // defines: strfmt, strfmt_label

#include <stdarg.h>
#include <stdio.h>

int strfmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < size)
		return 0;
	if (size)
		buf[0] = '\0';
	return -1;
}

void strfmt_label(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}
