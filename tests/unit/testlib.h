/* testlib.h - helpers shared by the cmocka unit tests of the spec core.
 * Loads a spec from a string and checks diagnostics by their exact text. */
#ifndef HPT_TESTLIB_H
#define HPT_TESTLIB_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

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

#endif
