/* testlib.h - helpers shared by the cmocka unit tests: a spec loaded
 * from a string with its diagnostics checked by their exact text, and a
 * fresh temporary directory for the tests that write files. */
#ifndef HPT_TESTLIB_H
#define HPT_TESTLIB_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "common/diag.h"
#include "common/sbuf.h"
#include "common/spec/spec.h"

struct loaded {
	int rc;
	struct job job;
	struct diag_list dl;
	struct sbuf text; /* every diagnostic, one per line */
};

static inline void loaded_release(struct loaded *l)
{
	job_release(&l->job);
	diag_list_release(&l->dl);
	sbuf_release(&l->text);
}

/* Loads text as "job.yaml" with up to 8 --set overrides (NULL-ended). */
static inline void load_sets(struct loaded *l, const char *text, size_t len,
			     const char *const *sets)
{
	struct spec_override ov[8];
	size_t n = 0;

	memset(l, 0, sizeof(*l));
	sbuf_init(&l->text);
	for (; sets && sets[n] && n < 8; n++)
		ov[n] = (struct spec_override){ .arg = sets[n] };
	l->rc = spec_load("job.yaml", text, len, ov, n, &l->job, &l->dl);
	for (size_t i = 0; i < l->dl.n; i++) {
		diag_format(&l->dl.v[i], &l->text);
		sbuf_addch(&l->text, '\n');
	}
}

static inline void load(struct loaded *l, const char *text)
{
	load_sets(l, text, strlen(text), NULL);
}

/* Asserts that one diagnostic line is exactly want. */
static inline void assert_diag(const struct loaded *l, const char *want)
{
	for (const char *p = l->text.buf; *p;) {
		size_t len = strcspn(p, "\n");

		if (len == strlen(want) && !strncmp(p, want, len))
			return;
		p += len + (p[len] == '\n');
	}
	fail_msg("no diagnostic\n  %s\namong\n%s", want, l->text.buf);
}

#define MINIMAL "version: 1\nname: t\n"

/* --- a temporary directory per test file --- */

/* Its absolute path, once testlib_tmp_setup made it. */
static char testlib_tmp[4096] __attribute__((unused));

/* Makes $TMPDIR (or /tmp)/NAME.XXXXXX: a group setup's body. */
static inline int testlib_tmp_setup(const char *name)
{
	const char *t = getenv("TMPDIR");

	snprintf(testlib_tmp, sizeof(testlib_tmp), "%s/%s.XXXXXX", t && *t ? t : "/tmp", name);
	return mkdtemp(testlib_tmp) ? 0 : -1;
}

static inline int testlib_tmp_remove_one(const char *path, const struct stat *st, int flag,
					 struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	chmod(path, 0700); /* a test may have taken its permissions away */
	return remove(path);
}

/* Removes the directory and everything in it: a group teardown's body. */
static inline int testlib_tmp_teardown(void)
{
	return nftw(testlib_tmp, testlib_tmp_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* testlib_tmp + "/" + rel, malloc'd. */
static inline char *testlib_tmp_at(const char *rel)
{
	return xasprintf("%s/%s", testlib_tmp, rel);
}

#endif
