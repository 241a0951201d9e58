/* cpufeat.c - CPU features from /proc/cpuinfo flags: parse, intersect,
 * name.  Core (pure): strings in, bitmask or string out. */
#include "topology/cpufeat.h" // defines: cpufeat_*
#include "common/sbuf.h"         // defines: struct sbuf, xmalloc

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const struct cpufeat_desc cpufeat_descs[CPUFEAT_COUNT] = {
	{ CPUFEAT_AVX2, "avx2", "AVX2" },
	{ CPUFEAT_FMA, "fma", "FMA" },
	{ CPUFEAT_AVX512F, "avx512f", "AVX-512F" },
	{ CPUFEAT_AVX512_BF16, "avx512_bf16", "AVX512-BF16" },
	{ CPUFEAT_AVX512_FP16, "avx512_fp16", "AVX512-FP16" },
	{ CPUFEAT_AMX_TILE, "amx_tile", "AMX-TILE" },
	{ CPUFEAT_AMX_BF16, "amx_bf16", "AMX-BF16" },
	{ CPUFEAT_AMX_FP16, "amx_fp16", "AMX-FP16" },
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The next word of s at or after *pos, as start and length; false at the end. */
static bool next_word(const char *s, size_t len, size_t *pos, size_t *start, size_t *wlen)
{
	size_t i = *pos;

	while (i < len && is_space(s[i]))
		i++;
	if (i == len)
		return false;
	*start = i;
	while (i < len && !is_space(s[i]))
		i++;
	*wlen = i - *start;
	*pos = i;
	return true;
}

unsigned cpufeat_parse(const char *flags)
{
	size_t len = flags ? strlen(flags) : 0, pos = 0, start, wlen;
	unsigned mask = 0;

	while (next_word(flags, len, &pos, &start, &wlen))
		for (size_t i = 0; i < CPUFEAT_COUNT; i++)
			if (strlen(cpufeat_descs[i].flag) == wlen &&
			    !memcmp(flags + start, cpufeat_descs[i].flag, wlen))
				mask |= cpufeat_descs[i].bit;
	return mask;
}

static bool has_word(const char *s, size_t len, const char *w, size_t wlen)
{
	size_t pos = 0, start, n;

	while (next_word(s, len, &pos, &start, &n))
		if (n == wlen && !memcmp(s + start, w, wlen))
			return true;
	return false;
}

/* The value of the "flags : ..." line starting at line, or NULL when the
 * line is another one (such as "vmx flags" or "bugs"). */
static const char *flags_value(const char *line, const char *eol, size_t *len)
{
	const char *p = line + 5;

	if (eol - line < 5 || memcmp(line, "flags", 5))
		return NULL;
	while (p < eol && (*p == ' ' || *p == '\t'))
		p++;
	if (p == eol || *p != ':')
		return NULL;
	*len = (size_t)(eol - p - 1);
	return p + 1;
}

/* Clears keep[i] for each word of first (by index) missing from other. */
static void intersect(const char *first, size_t first_len, const char *other, size_t other_len,
		      bool *keep)
{
	size_t pos = 0, start, wlen, i = 0;

	if (other_len == first_len && !memcmp(first, other, first_len))
		return; /* the usual case: every CPU the same */
	while (next_word(first, first_len, &pos, &start, &wlen)) {
		if (keep[i] && !has_word(other, other_len, first + start, wlen))
			keep[i] = false;
		i++;
	}
}

char *cpufeat_common_flags(const char *cpuinfo)
{
	const char *first = NULL, *line = cpuinfo;
	size_t first_len = 0, pos = 0, start, wlen, n = 0, i = 0;
	struct sbuf out = SBUF_INIT;
	bool *keep = NULL;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		const char *v;
		size_t vlen;

		if (!eol)
			eol = line + strlen(line);
		v = flags_value(line, eol, &vlen);
		if (v && !first) {
			first = v;
			first_len = vlen;
			while (next_word(first, first_len, &pos, &start, &wlen))
				n++;
			keep = xmalloc((n ? n : 1) * sizeof(*keep));
			memset(keep, 1, (n ? n : 1) * sizeof(*keep));
		} else if (v) {
			intersect(first, first_len, v, vlen, keep);
		}
		line = *eol ? eol + 1 : eol;
	}
	if (!first)
		return NULL;
	pos = 0;
	while (next_word(first, first_len, &pos, &start, &wlen)) {
		if (keep[i++]) {
			if (out.len)
				sbuf_addch(&out, ' ');
			sbuf_add(&out, first + start, wlen);
		}
	}
	free(keep);
	return sbuf_detach(&out, NULL);
}

unsigned cpufeat_native_for(const char *precision)
{
	if (!precision)
		return 0;
	if (!strcmp(precision, "bf16"))
		return CPUFEAT_AVX512_BF16 | CPUFEAT_AMX_BF16;
	if (!strcmp(precision, "fp16"))
		return CPUFEAT_AVX512_FP16;
	return 0;
}

void cpufeat_format(unsigned mask, const char *sep, struct sbuf *out)
{
	bool any = false;

	for (size_t i = 0; i < CPUFEAT_COUNT; i++) {
		if (!(mask & cpufeat_descs[i].bit))
			continue;
		sbuf_addf(out, "%s%s", any ? sep : "", cpufeat_descs[i].name);
		any = true;
	}
}

enum cpufeat_bf16_speed cpufeat_bf16_speed(const char *flags)
{
	unsigned f = cpufeat_parse(flags);

	if ((f & CPUFEAT_AMX_BF16) && (f & CPUFEAT_AMX_TILE))
		return CPUFEAT_BF16_AMX;
	if (!(f & CPUFEAT_AVX512_BF16))
		return CPUFEAT_BF16_EMULATED;
	/* sse4a: AMD's since K10, never Intel's */
	return has_word(flags, flags ? strlen(flags) : 0, "sse4a", 5) ? CPUFEAT_BF16_DOT_2X
							   : CPUFEAT_BF16_SAME_RATE;
}

static const char *const speed_keys[] = { "emulated", "same_rate", "dot_2x", "amx" };
static const char *const speed_texts[] = {
	"emulated (fp32 kernels on bf16-rounded inputs, no bf16 arithmetic)",
	"native dot product at the fp32 FMA rate (Intel AVX512-BF16 without AMX)",
	"native dot product at 2x the fp32 FMA rate (AVX512-BF16, AMD Zen 4/5)",
	"AMX (AMX-BF16 tiles, several times the fp32 FMA rate)",
};

const char *cpufeat_bf16_speed_key(enum cpufeat_bf16_speed s)
{
	return speed_keys[s];
}

const char *cpufeat_bf16_speed_text(enum cpufeat_bf16_speed s)
{
	return speed_texts[s];
}

bool cpufeat_bf16_can_win(enum cpufeat_bf16_speed s)
{
	return s == CPUFEAT_BF16_DOT_2X || s == CPUFEAT_BF16_AMX;
}
