/* stage_job.c - a staging step's entries and its record (see stage_job.h).
 * Pure core. */
#include "launcher/stage/stage_job.h" // defines: struct stage_job, stage_job_*
#include "common/exitcode.h"          // defines: HPT_EXIT_BAD_SPEC
#include "common/sbuf.h"              // defines: struct sbuf, xrealloc, xstrdup
#include "common/spec/spec.h"         // defines: struct job, struct job_data
#include "launcher/stage/stage_path.h" // defines: stage_cache_dir

#include <stdlib.h>
#include <string.h>

void stage_job_add(struct stage_job *j, const char *name, const char *src, const char *manifest,
		   bool is_file)
{
	struct stage_entry *e;

	j->v = xrealloc(j->v, (j->n + 1) * sizeof(*j->v));
	e = &j->v[j->n++];
	memset(e, 0, sizeof(*e));
	e->name = xstrdup(name);
	e->src = xstrdup(src);
	e->manifest = manifest ? xstrdup(manifest) : NULL;
	e->is_file = is_file;
}

static bool name_ok(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

int stage_job_parse_entry(struct stage_job *j, const char *arg, struct sbuf *err)
{
	const char *eq = strchr(arg, '='), *pin;
	char *name, *src;
	int rc = -1;

	if (!eq || !name_ok(arg, (size_t)(eq - arg))) {
		sbuf_addf(err, "--entry: expected NAME=SRC with NAME of [a-z0-9_-], got '%s'",
			  SBUF_CLIP(arg));
		return -1;
	}
	name = xstrndup(arg, (size_t)(eq - arg));
	pin = strstr(eq + 1, "@sha256:");
	while (pin && strstr(pin + 1, "@sha256:"))
		pin = strstr(pin + 1, "@sha256:");
	src = pin ? xstrndup(eq + 1, (size_t)(pin - eq - 1)) : xstrdup(eq + 1);
	if (pin && !stage_manifest_hex(pin + 1)) {
		sbuf_addf(err, "--entry %s: a pinned manifest is sha256: and 64 hex digits", name);
		goto out;
	}
	if (*src != '/') {
		sbuf_addf(err, "--entry %s: the source is an absolute path, got '%s'", name,
			  SBUF_CLIP(src));
		goto out;
	}
	for (size_t i = 0; i < j->n; i++)
		if (!strcmp(j->v[i].name, name)) {
			sbuf_addf(err, "--entry %s: the name is given twice", name);
			goto out;
		}
	stage_job_add(j, name, src, pin ? pin + 1 : NULL, false);
	rc = 0;
out:
	free(name);
	free(src);
	return rc;
}

void stage_job_release(struct stage_job *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++) {
		free(j->v[i].name);
		free(j->v[i].src);
		free(j->v[i].manifest);
		free(j->v[i].path);
	}
	free(j->v);
	free(j->cache);
	memset(j, 0, sizeof(*j));
}

json_t *stage_job_record(const struct stage_job *j, const char *node)
{
	json_t *entries = json_array();

	for (size_t i = 0; i < j->n; i++) {
		const struct stage_entry *e = &j->v[i];

		/* an entry left out would be a record that lies: none instead */
		if (json_array_append_new(entries, json_pack("{s:s, s:s, s:s?, s:b, s:I, s:f, s:i}",
							     "name", e->name, "manifest", e->hash,
							     "path", e->path, "hit", e->hit, "bytes",
							     (json_int_t)e->bytes, "seconds",
							     e->seconds, "refetched", e->refetched))) {
			json_decref(entries);
			return NULL;
		}
	}
	return json_pack("{s:s, s:s, s:f, s:I, s:I, s:I, s:I, s:o}", "node", node, "cache",
			 j->cache ? j->cache : "", "seconds", j->seconds, "bytes_read",
			 (json_int_t)j->bytes_read, "bytes_sent", (json_int_t)j->bytes_sent,
			 "bytes_received", (json_int_t)j->bytes_received, "proc_rchar",
			 (json_int_t)j->proc_rchar, "entries", entries);
}

/* A pure adapter: the spec side (common/spec: struct job_data) in. */
int stage_job_from_spec(const struct job *job, const char *tmpdir, unsigned uid,
			struct stage_job *out, struct sbuf *err)
{
	const struct job_data *d = &job->data;

	for (size_t i = 0; i < d->nstage; i++) {
		const struct job_stage *s = &d->stage[i];

		if (!s->manifest) {
			sbuf_addf(err, "data.stage %s: no pinned manifest; run the job through "
				  "hpctrain submit", s->name);
			return HPT_EXIT_BAD_SPEC;
		}
		stage_job_add(out, s->name, spec_stage_source(s), s->manifest, s->is_file);
		out->v[out->n - 1].tree = spec_code_is_stage_entry(job, s);
	}
	/* container.stage's image is one of the entries already: spec_load
	 * adds it as "image" (SPEC_STAGE_IMAGE), and submit pins it */
	out->cache = stage_job_cache_dir(job, tmpdir, uid);
	out->max_bytes = d->cache_max_gb > 0 ? (uint64_t)(d->cache_max_gb * 1e9) : 0;
	return 0;
}
