/* spec_emit.c - the canonical resolved form of a job and its SHA-256.
 * Core: struct job in, YAML text out (libyaml's emitter into memory).
 *
 * Canonical means: keys in schema order, every default present, times as
 * [D-]HH:MM:SS, sizes in the largest exact unit, numbers in the shortest
 * text that reads back exactly, strings always double-quoted (so "1" and
 * "yes" stay strings for any YAML reader) with ${ escaped as $${, env
 * sorted by name.  Loading
 * the output again gives the same job, hence the same bytes and hash. */
#include "common/spec/spec.h"        // defines: struct job, spec_emit_resolved, spec_hash
#include "common/sbuf.h"        // defines: struct sbuf
#include "common/spec/spec_schema.h" // defines: spec_fields
#include "common/spec/spec_scalar.h" // defines: spec_format_*

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

struct emit {
	yaml_emitter_t em;
	int failed;
};

static int write_sbuf(void *data, unsigned char *buf, size_t size)
{
	sbuf_add(data, buf, size);
	return 1;
}

static void emit(struct emit *e, yaml_event_t *ev)
{
	if (!e->failed && !yaml_emitter_emit(&e->em, ev))
		e->failed = 1;
}

static void scalar(struct emit *e, const char *s, yaml_scalar_style_t style)
{
	yaml_event_t ev;

	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1, style);
	emit(e, &ev);
}

static void plain(struct emit *e, const char *s)
{
	scalar(e, s, YAML_PLAIN_SCALAR_STYLE);
}

/* Strings are written so that loading them gives them back: loading
 * turns $${ into ${ and ${p} into a parameter, so every ${ is escaped. */
static void quoted(struct emit *e, const char *s)
{
	struct sbuf esc = SBUF_INIT;

	for (; *s; s++) {
		if (s[0] == '$' && s[1] == '{')
			sbuf_addch(&esc, '$');
		sbuf_addch(&esc, *s);
	}
	scalar(e, esc.buf, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	sbuf_release(&esc);
}

static void map_start(struct emit *e, yaml_mapping_style_t style)
{
	yaml_event_t ev;

	yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, style);
	emit(e, &ev);
}

static void map_end(struct emit *e)
{
	yaml_event_t ev;

	yaml_mapping_end_event_initialize(&ev);
	emit(e, &ev);
}

/* data.stage: one block mapping per entry, name and src always, the
 * pinned fields only once pinned, so a spec's form before validate or
 * submit pin it reads as the user wrote it. */
static void emit_stage(struct emit *e, const struct job_data *d)
{
	struct sbuf t = SBUF_INIT;
	yaml_event_t ev;

	yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
					     d->nstage ? YAML_BLOCK_SEQUENCE_STYLE
						       : YAML_FLOW_SEQUENCE_STYLE);
	emit(e, &ev);
	for (size_t i = 0; i < d->nstage; i++) {
		const struct job_stage *s = &d->stage[i];

		map_start(e, YAML_BLOCK_MAPPING_STYLE);
		plain(e, "name");
		quoted(e, s->name);
		plain(e, "src");
		quoted(e, s->src);
		if (s->manifest) {
			plain(e, "manifest");
			quoted(e, s->manifest);
			sbuf_reset(&t);
			sbuf_addf(&t, "%llu", (unsigned long long)s->bytes);
			plain(e, "bytes");
			plain(e, t.buf);
			plain(e, "is_file");
			plain(e, s->is_file ? "true" : "false");
			if (s->packed) {
				plain(e, "packed");
				quoted(e, s->packed);
			}
		}
		map_end(e);
	}
	yaml_sequence_end_event_initialize(&ev);
	emit(e, &ev);
	sbuf_release(&t);
}

static void emit_value(struct emit *e, const struct spec_field *f, const void *p)
{
	struct sbuf t = SBUF_INIT;

	switch (f->type) {
	case SPEC_INT:
		sbuf_addf(&t, "%lld", (long long)*(const int64_t *)p);
		plain(e, t.buf);
		break;
	case SPEC_RANGE: {
		int64_t hi = *(const int64_t *)p;
		int64_t lo = *(const int64_t *)((const char *)p - f->off + f->off_min);

		if (lo != hi)
			sbuf_addf(&t, "%lld-", (long long)lo);
		sbuf_addf(&t, "%lld", (long long)hi);
		plain(e, t.buf);
		break;
	}
	case SPEC_AUTO_INT:
		if (*(const int64_t *)p)
			sbuf_addf(&t, "%lld", (long long)*(const int64_t *)p);
		else
			sbuf_addstr(&t, "auto");
		plain(e, t.buf);
		break;
	case SPEC_NUM:
		if ((f->flags & F_NULLABLE) && *(const double *)p == 0) {
			plain(e, "null");
			break;
		}
		spec_format_num(*(const double *)p, &t);
		plain(e, t.buf);
		break;
	case SPEC_BOOL:
		plain(e, *(const bool *)p ? "true" : "false");
		break;
	case SPEC_ENUM:
		plain(e, f->names[*(const int *)p]);
		break;
	case SPEC_STR:
		if (*(char *const *)p)
			quoted(e, *(char *const *)p);
		else
			plain(e, "null");
		break;
	case SPEC_TIME:
		spec_format_time(*(const int64_t *)p, &t);
		quoted(e, t.buf);
		break;
	case SPEC_MEM:
		if (*(const int64_t *)p) {
			spec_format_mem(*(const int64_t *)p, &t);
			quoted(e, t.buf);
		} else {
			plain(e, "null");
		}
		break;
	case SPEC_ENV: {
		const struct job_env *env = p;

		map_start(e, env->n ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE);
		for (size_t i = 0; i < env->n; i++) {
			plain(e, env->v[i].name);
			quoted(e, env->v[i].value);
		}
		map_end(e);
		break;
	}
	case SPEC_ARGV:
	case SPEC_LIST: {
		const struct job_argv *a = p;
		yaml_event_t ev;

		/* an empty SPEC_LIST is [], never null: one spelling, one hash */
		if (!a->n && f->type == SPEC_ARGV) {
			plain(e, "null");
			break;
		}
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
						     a->n ? YAML_BLOCK_SEQUENCE_STYLE
							  : YAML_FLOW_SEQUENCE_STYLE);
		emit(e, &ev);
		for (size_t i = 0; i < a->n; i++)
			quoted(e, a->v[i]);
		yaml_sequence_end_event_initialize(&ev);
		emit(e, &ev);
		break;
	}
	case SPEC_STAGE:
		emit_stage(e, p);
		break;
	case SPEC_SECTION:
		break;
	}
	sbuf_release(&t);
}

/* Depth of a dotted path: "train.optimizer.lr" is 2. */
static int depth_of(const char *path)
{
	int d = 0;

	for (; *path; path++)
		d += *path == '.';
	return d;
}

/* The index of the first row after section i's keys. */
static size_t section_end(size_t i)
{
	const char *p = spec_fields[i].path;
	size_t n = strlen(p), j = i + 1;

	while (j < spec_nfields && !strncmp(spec_fields[j].path, p, n) && spec_fields[j].path[n] == '.')
		j++;
	return j;
}

int spec_emit_resolved(const struct job *job, struct sbuf *out)
{
	struct emit e = { .failed = 0 };
	yaml_event_t ev;
	int open = 0; /* sections currently open */

	if (!yaml_emitter_initialize(&e.em))
		return -1;
	yaml_emitter_set_output(&e.em, write_sbuf, out);
	yaml_emitter_set_unicode(&e.em, 1);
	yaml_emitter_set_width(&e.em, -1);
	yaml_emitter_set_indent(&e.em, 2);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	emit(&e, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	emit(&e, &ev);
	map_start(&e, YAML_BLOCK_MAPPING_STYLE);
	for (size_t i = 0; i < spec_nfields; i++) {
		const struct spec_field *f = &spec_fields[i];
		const char *key = strrchr(f->path, '.');
		int d = depth_of(f->path);

		/* The table lists a section's keys right after it, so a
		 * shallower path closes the sections opened since. */
		for (; open > d; open--)
			map_end(&e);
		if (f->omit && f->omit(job)) {
			if (f->type == SPEC_SECTION)
				i = section_end(i) - 1; /* its keys are left out with it */
			continue;
		}
		if (f->omit && f->omit(job))
			continue;
		plain(&e, key ? key + 1 : f->path);
		if (f->type == SPEC_SECTION) {
			map_start(&e, YAML_BLOCK_MAPPING_STYLE);
			open++;
			continue;
		}
		emit_value(&e, f, (const char *)job + f->off);
	}
	for (; open > 0; open--)
		map_end(&e);
	map_end(&e);
	yaml_document_end_event_initialize(&ev, 1);
	emit(&e, &ev);
	yaml_stream_end_event_initialize(&ev);
	emit(&e, &ev);
	yaml_emitter_delete(&e.em);
	return e.failed ? -1 : 0;
}

void spec_hash(const char *text, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_Digest(text, len, md, &n, EVP_sha256(), NULL);
	for (unsigned int i = 0; i < n && i < 32; i++)
		/* encode-ok: two hex digits and the NUL: always 3 */
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[64] = '\0';
}
