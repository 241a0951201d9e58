/* spec_scalar.c - the spec's scalars as text: parsing integers, numbers,
 * booleans, Slurm time limits and memory sizes, formatting them back,
 * and quoting a scalar for a message.  Core: no I/O.
 *
 * Scalars follow YAML 1.2's core schema, strictly: a quoted "4" is a
 * string, not an integer; yes/no/on/off are not booleans (the "Norway
 * problem" of YAML 1.1); numbers must be finite. */
#include "common/spec/spec_scalar.h" // defines: spec_parse_*, spec_format_*, spec_quote_got
#include "common/sbuf.h"        // defines: struct sbuf, sbuf_addf
#include "common/spec/ynode.h"    // defines: struct ynode

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spec_quote_got(const struct ynode *n, struct sbuf *out)
{
	size_t shown = 0;

	if (!n || ynode_is_null(n)) {
		sbuf_addstr(out, "null");
		return;
	}
	if (n->kind != YNODE_SCALAR) {
		sbuf_addstr(out, ynode_kind_name(n));
		return;
	}
	sbuf_addch(out, '"');
	for (size_t i = 0; i < n->len && shown < 40; i++, shown++) {
		unsigned char c = (unsigned char)n->str[i];

		if (c == '"' || c == '\\')
			sbuf_addf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			sbuf_addf(out, "\\x%02x", c);
		else
			sbuf_addch(out, c);
	}
	if (shown < n->len)
		sbuf_addstr(out, "...");
	sbuf_addch(out, '"');
}

int spec_parse_int(const char *s, int64_t *out, bool *overflow)
{
	const char *p = s;
	int base = 10;
	bool neg = false;
	uint64_t v = 0, limit;

	*overflow = false;
	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o') && p[2] && p == s)
		base = p[1] == 'x' ? 16 : 8, p += 2;
	if (!*p)
		return -1;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *p; p++) {
		int d;

		if (isdigit((unsigned char)*p))
			d = *p - '0';
		else if (base == 16 && isxdigit((unsigned char)*p))
			d = tolower((unsigned char)*p) - 'a' + 10;
		else
			return -1;
		if (d >= base)
			return -1;
		if (v > (limit - (uint64_t)d) / (uint64_t)base)
			*overflow = true; /* keep scanning: "9999x" is not an integer at all */
		else
			v = v * (uint64_t)base + (uint64_t)d;
	}
	if (*overflow)
		return -1;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int spec_parse_num(const char *s, double *out)
{
	char *end;
	double v;

	/* strtod alone would take hex floats, "nan", "infinity" and spaces. */
	if (!*s || strspn(s, "0123456789+-.eE") != strlen(s) || !strpbrk(s, "0123456789"))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int spec_parse_bool(const char *s, bool *out)
{
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		*out = true;
	else if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		*out = false;
	else
		return -1;
	return 0;
}

void spec_format_num(double x, struct sbuf *out)
{
	char buf[40];

	if (x == (double)(int64_t)x && x > -1e15 && x < 1e15) {
		sbuf_addf(out, "%lld", (long long)x);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		/* encode-ok: %.17g is at most 24 characters, in 40 */
		snprintf(buf, sizeof(buf), "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	sbuf_addstr(out, buf);
}

void spec_format_time(int64_t s, struct sbuf *out)
{
	int64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;

	if (d)
		sbuf_addf(out, "%lld-%02lld:%02lld:%02lld", (long long)d, (long long)h,
			  (long long)m, (long long)sec);
	else
		sbuf_addf(out, "%02lld:%02lld:%02lld", (long long)h, (long long)m, (long long)sec);
}

void spec_format_mem(int64_t mb, struct sbuf *out)
{
	if (mb % (1024 * 1024) == 0)
		sbuf_addf(out, "%lldT", (long long)(mb / (1024 * 1024)));
	else if (mb % 1024 == 0)
		sbuf_addf(out, "%lldG", (long long)(mb / 1024));
	else
		sbuf_addf(out, "%lldM", (long long)mb);
}

/* Reads up to 3 ':'-separated unsigned fields; returns how many, or -1. */
static int time_fields(const char *s, int64_t f[3])
{
	int n = 0;

	while (n < 3) {
		bool of;
		size_t len = strspn(s, "0123456789");
		char digits[12];

		if (!len || len > 9)
			return -1;
		memcpy(digits, s, len);
		digits[len] = '\0';
		if (spec_parse_int(digits, &f[n++], &of))
			return -1;
		s += len;
		if (!*s)
			return n;
		if (*s++ != ':')
			return -1;
	}
	return -1;
}

/* Slurm's --time forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. */
int spec_parse_time(const char *s, int64_t *out)
{
	int64_t f[3], days = 0;
	const char *dash = strchr(s, '-');
	int n;

	if (dash) {
		bool of;
		char digits[12];
		size_t len = (size_t)(dash - s);

		if (!len || len > 4 || strspn(s, "0123456789") != len)
			return -1;
		memcpy(digits, s, len);
		digits[len] = '\0';
		if (spec_parse_int(digits, &days, &of))
			return -1;
		n = time_fields(dash + 1, f);
		if (n < 1)
			return -1;
		if ((n >= 2 && f[1] >= 60) || (n == 3 && f[2] >= 60) || f[0] >= 24)
			return -1;
		*out = days * 86400 + f[0] * 3600 + (n >= 2 ? f[1] * 60 : 0) + (n == 3 ? f[2] : 0);
		return 0;
	}
	n = time_fields(s, f);
	if (n == 1)
		*out = f[0] * 60;
	else if (n == 2 && f[1] < 60)
		*out = f[0] * 60 + f[1];
	else if (n == 3 && f[1] < 60 && f[2] < 60)
		*out = f[0] * 3600 + f[1] * 60 + f[2];
	else
		return -1;
	return 0;
}

/* Slurm's --mem forms: an integer (MiB) with an optional K, M, G or T. */
int spec_parse_mem(const char *s, int64_t *out)
{
	size_t len = strspn(s, "0123456789");
	int64_t v, mul = 1;
	char digits[16];
	bool of;

	if (!len || len > 12)
		return -1;
	memcpy(digits, s, len);
	digits[len] = '\0';
	if (spec_parse_int(digits, &v, &of))
		return -1;
	switch (toupper((unsigned char)s[len])) {
	case '\0':
	case 'M':
		break;
	case 'G':
		mul = 1024;
		break;
	case 'T':
		mul = 1024 * 1024;
		break;
	case 'K':
		if (v % 1024)
			return -1;
		v /= 1024;
		break;
	default:
		return -1;
	}
	if (s[len] && s[len + 1] && strcasecmp(s + len + 1, "B"))
		return -1;
	*out = v * mul;
	return 0;
}

const char *spec_check_path(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 4096)
		return "must be a path of 1 to 4096 bytes";
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return "must not hold control characters such as newlines";
	return NULL;
}

const char *spec_check_abs_path(const char *s)
{
	const char *bad = spec_check_path(s);

	if (bad)
		return bad;
	return s[0] == '/' ? NULL : "must be an absolute path";
}

const char *spec_check_list_path(const char *s, bool absolute, bool bound)
{
	const char *bad = absolute ? spec_check_abs_path(s) : spec_check_path(s);

	if (bad)
		return bad;
	if (strchr(s, ':'))
		return "must not hold ':', which splits PATH, PYTHONPATH and a container's binds";
	if (bound && strchr(s, ','))
		return "must not hold ',', which splits a container runtime's binds";
	return NULL;
}
