/* spec_code.c - the code: section's rules that are more than a row of
 * the schema: when a job snapshots its code, when the section holds
 * only defaults (and is left out of the resolved form), the checks of
 * its globs and digest, whether a data.stage entry is its snapshot's
 * (launcher/job/code_stage.h adds it); and the same leaving-out for the venv's digest
 * (a pin like code.digest).  Core: struct job in, answers out. */
#include "common/spec/spec.h"        // defines: struct job, spec_code_is_on, spec_code_is_default,
                                     //          spec_code_is_stage_entry, spec_venv_digest_is_unset
#include "common/spec/spec_schema.h" // defines: spec_code_check_glob, spec_code_check_digest

#include <string.h>

bool spec_code_is_on(const struct job *job)
{
	return job->code.enabled == CODE_ON || (job->code.enabled == CODE_AUTO && job->command.n);
}

/* A spec written before code: existed resolves to the bytes it did, so
 * its run keeps its hash; a pinned job (digest set) always shows it. */
bool spec_code_is_default(const struct job *job)
{
	const struct job_code *c = &job->code;

	return c->enabled == CODE_AUTO && !c->dir && !c->include.n && !c->exclude.n &&
	       c->max_bytes == SPEC_CODE_MAX_BYTES && c->max_files == SPEC_CODE_MAX_FILES &&
	       !c->digest;
}

/* The path is checked, not only the name: a spec of one's own may hold
 * an entry called "code", which must not pass for the snapshot. */
bool spec_code_is_stage_entry(const struct job *job, const struct job_stage *e)
{
	static const char dir[] = "/.code/";
	const char *d = job->code.digest;
	size_t n = strlen(e->src), h = d ? strlen(d) - 7 : 0;

	return !strcmp(e->name, SPEC_STAGE_CODE) && spec_code_is_on(job) && d &&
	       !spec_code_check_digest(d) && n > h + sizeof(dir) - 1 &&
	       !strcmp(e->src + n - h, d + 7) &&
	       !strncmp(e->src + n - h - (sizeof(dir) - 1), dir, sizeof(dir) - 1);
}

bool spec_venv_digest_is_unset(const struct job *job)
{
	return !job->environment.venv_digest;
}

/* A glob is matched with fnmatch(3) against paths of the tree; it is
 * never expanded by a shell.  Control characters have no place in a
 * file name a user means, and would garble the messages that quote it. */
const char *spec_code_check_glob(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 1024)
		return "must be a glob of 1 to 1024 bytes";
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return "must not hold control characters";
	return NULL;
}

const char *spec_code_check_digest(const char *s)
{
	if (strncmp(s, "sha256:", 7) || strlen(s) != 71 || strspn(s + 7, "0123456789abcdef") != 64)
		return "must be sha256: and 64 lowercase hex digits";
	return NULL;
}
