/* cpu_tune.c - the CPU backend's measured kernel choices (cpu_internal.h
 * cpu_tune_*, backend.h be_tune_*): which candidate won for a layer,
 * keyed by cache version, CPU model, oneDNN version, ISA as capped,
 * threads, op, precision and shape (tune_key_format).
 *
 * Three lists of lines "KEY<TAB>INDEX<TAB>MEASURED", looked up in this
 * order:
 * - adopted: another process's choices (be_tune_adopt), so that every
 *   rank of a data-parallel job runs rank 0's kernels;
 * - the cache, so a rerun on the same kind of node plans without timing
 *   again and every run there makes the same choice;
 * and, written only, chosen: every choice this process made, timed or
 *   looked up, for be_tune_export.
 *
 * Shell: cpuid, the environment and one file.  The file is
 * HPCTRAIN_KERNEL_CACHE (empty: no cache), else
 * $XDG_CACHE_HOME/hpctrain/kernels, else ~/.cache/hpctrain/kernels,
 * rewritten atomically (fileio_write_atomic) when a choice is added.  A
 * cache is a help, not a need: one that cannot be read or written is
 * ignored.  The start line shows MEASURED with "; cached" or "; rank
 * 0's" after it. */
#include "trainer/cpu/cpu_internal.h" // defines: cpu_isa_in_use
#include "trainer/cpu/tune.h"         // defines: struct tune_key, tune_key_format
#include "common/fileio.h"        // defines: fileio_read, fileio_write_atomic, fileio_private_dir
#include "common/strfmt.h" // defines: strfmt_label

#include <cpuid.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_MAX (1u << 20)

static struct sbuf cache = SBUF_INIT, adopted = SBUF_INIT, chosen = SBUF_INIT;
static char cache_path[512];
static bool cache_loaded;

/* Vendor, family/model/stepping and brand string, from cpuid. */
static void cpu_model(char *buf, size_t size)
{
	unsigned r[12] = { 0 }, a, b, c, d;
	char vendor[13] = "", brand[49] = "";

	if (__get_cpuid(0, &a, &b, &c, &d)) {
		memcpy(vendor, &b, 4), memcpy(vendor + 4, &d, 4), memcpy(vendor + 8, &c, 4);
		vendor[12] = '\0';
	}
	if (!__get_cpuid(1, &a, &b, &c, &d))
		a = 0;
	for (unsigned i = 0; i < 3; i++)
		if (!__get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2],
				 &r[4 * i + 3]))
			break;
	memcpy(brand, r, 48);
	brand[48] = '\0';
	strfmt_label(buf, size, "%s %u/%u/%u %s", vendor,
		 ((a >> 8) & 0xf) + ((a >> 20) & 0xff), ((a >> 4) & 0xf) | ((a >> 12) & 0xf0),
		 a & 0xf, brand);
}

static void cache_load(void)
{
	const char *env = getenv("HPCTRAIN_KERNEL_CACHE"), *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");
	struct sbuf err = SBUF_INIT;
	int rc = 0;

	cache_loaded = true;
	/* a path too long for cache_path is no cache (strfmt leaves ""),
	 * never a cut one: that would read and write another file */
	if (env)
		rc = strfmt(cache_path, sizeof(cache_path), "%s", env);
	else if (xdg && *xdg)
		rc = strfmt(cache_path, sizeof(cache_path), "%s/hpctrain/kernels", xdg);
	else if (home && *home)
		rc = strfmt(cache_path, sizeof(cache_path), "%s/.cache/hpctrain/kernels", home);
	if (!rc && cache_path[0] && fileio_exists(cache_path) &&
	    (fileio_read(cache_path, CACHE_MAX, &cache, &err) || cache.len > CACHE_MAX))
		sbuf_reset(&cache);
	sbuf_release(&err);
}

void cpu_tune_key(const char *op, enum be_precision prec, const int *shape, size_t n,
		  char *buf, size_t size)
{
	char cpu[128], ver[32];
	const dnnl_version_t *v = dnnl_version();
	struct tune_key k;

	cpu_model(cpu, sizeof(cpu));
	strfmt_label(ver, sizeof(ver), "%d.%d.%d", v->major, v->minor, v->patch);
	k = (struct tune_key){ cpu, ver, cpu_isa_in_use(), omp_get_max_threads(), op,
			       be_precision_name(prec), shape, n };
	tune_key_format(&k, buf, size);
}

/* The line for key in lines: its index, with MEASURED and then the
 * words from in tuned; -1 when there is none or it is malformed. */
static int find(const char *lines, const char *key, const char *from, char *tuned, size_t size)
{
	size_t klen = strlen(key);
	const char *p;

	for (p = lines; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *eol = strchr(p, '\n'), *t;
		char *end;
		long i;

		if (strncmp(p, key, klen) || p[klen] != '\t')
			continue;
		i = strtol(p + klen + 1, &end, 10);
		if (end == p + klen + 1 || *end != '\t' || i < 0 || i > 8)
			return -1;
		t = end + 1;
		strfmt_label(tuned, size, "%.*s; %s", (int)((eol ? eol : t + strlen(t)) - t), t, from);
		return (int)i;
	}
	return -1;
}

int cpu_tune_lookup(const char *key, char *tuned, size_t size)
{
	int i = find(adopted.buf, key, "rank 0's", tuned, size);

	if (i >= 0)
		return i;
	if (!cache_loaded)
		cache_load();
	return find(cache.buf, key, "cached", tuned, size);
}

/* Appends the line; a MEASURED that came from a lookup loses the
 * words find() put after it. */
static void add_line(struct sbuf *to, const char *key, int choice, const char *tuned)
{
	const char *from[] = { "; rank 0's", "; cached" };
	size_t n = strlen(tuned);

	for (size_t i = 0; i < sizeof(from) / sizeof(*from); i++)
		if (n >= strlen(from[i]) && !strcmp(tuned + n - strlen(from[i]), from[i]))
			n -= strlen(from[i]);
	sbuf_addf(to, "%s\t%d\t%.*s\n", key, choice, (int)n, tuned);
}

void cpu_tune_record(const char *key, int choice, const char *tuned, bool cache_it)
{
	struct sbuf err = SBUF_INIT;
	char dir[sizeof(cache_path)], *slash;

	add_line(&chosen, key, choice, tuned);
	if (!cache_it)
		return;
	if (!cache_loaded)
		cache_load();
	if (!cache_path[0] || cache.len > CACHE_MAX)
		return;
	add_line(&cache, key, choice, tuned);
	/* encode-ok: cache_path into a buffer of its size */
	snprintf(dir, sizeof(dir), "%s", cache_path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	/* the default place is made private; a named file's folder is the
	 * user's business (the write never follows a link there) */
	if ((getenv("HPCTRAIN_KERNEL_CACHE") || !slash || slash == dir ||
	     !fileio_private_dir(dir, &err)) &&
	    fileio_write_atomic(cache_path, cache.buf, cache.len, 0600, 0, &err)) {
		/* no cache then: the choice is made again next time */
	}
	sbuf_release(&err);
}

void be_tune_export(struct sbuf *out)
{
	sbuf_add(out, chosen.buf, chosen.len);
}

void be_tune_off(void)
{
	cpu_tune_on = false;
}

void be_tune_adopt(const char *lines)
{
	sbuf_reset(&adopted);
	sbuf_addstr(&adopted, lines ? lines : "");
}
