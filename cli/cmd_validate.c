/* cmd_validate.c - `hpctrain validate`: check specs, print resolved form and hash.
 * Shell: reads files, calls the spec core, reports. */
#include "common/json_print.h" // defines: json_print
#include "cli/builtin.h"      // defines: cmd_validate
#include "launcher/job/job_prepare.h" // defines: job_prepare
#include "common/diag.h"         // defines: struct diag_list, diag_report
#include "common/exitcode.h"     // defines: enum hpt_exit
#include "common/opt.h"          // defines: struct opt, opt_next
#include "common/sbuf.h"         // defines: struct sbuf, SBUF_CLIP
#include "common/spec/spec.h"         // defines: spec_emit_resolved, spec_hash
#include "common/spec/template.h" // defines: TEMPLATE_OVERRIDE_FORM
#include "common/spec/specfile.h"     // defines: specfile_read, specfile_overrides_*
#include "common/jsonb.h" // defines: jsonb_set, jsonb_append, jsonb_text

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_PRINT_RESOLVED = 256, OPT_FIELDS };

static const char *const validate_usage[] = {
	"hpctrain validate [--set <key>=<value>]... [--print-resolved] [--json] <spec>...",
	"hpctrain validate --fields",
	NULL,
};

static const struct opt validate_opts[] = {
	{ "set", required_argument, NULL, 's', "KEY=VALUE",
	  "override a spec key or template parameter (params.NAME=VALUE)" },
	{ "print-resolved", no_argument, NULL, OPT_PRINT_RESOLVED, NULL,
	  "print each spec's canonical resolved form" },
	{ "json", no_argument, NULL, 'j', NULL, "print the result as JSON" },
	{ "quiet", no_argument, NULL, 'q', NULL, "print nothing on success" },
	{ "fields", no_argument, NULL, OPT_FIELDS, NULL,
	  "list every spec key with its type, default and meaning" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd validate_cmd = {
	.name = "validate",
	.usage = validate_usage,
	.summary = "Check job specs or templates (a <spec> is a file, - for stdin, or a template name).",
	.opts = validate_opts,
};

static json_t *diags_json(const struct diag_list *dl, enum diag_severity sev)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < dl->n; i++) {
		const struct diag *d = &dl->v[i];
		struct sbuf text = SBUF_INIT;

		if (d->severity != sev)
			continue;
		diag_format(d, &text);
		/* a file name, and a message quoting one, are bytes */
		jsonb_append(&arr, json_pack("{s:o, s:i, s:i, s:o, s:o, s:o}", "file",
					     jsonb_text(d->where), "line", d->line, "column", d->col,
					     "path", jsonb_text(d->path), "message", jsonb_text(d->msg),
					     "text", jsonb_text(text.buf)));
		sbuf_release(&text);
	}
	return arr;
}

/* File names are bytes; JSON strings are UTF-8.  A name that is not
 * UTF-8 is shown with '?' for each byte outside ASCII. */
static json_t *json_file_name(const char *name)
{
	json_t *s = json_string(name);
	char *copy;

	if (s)
		return s;
	copy = xstrdup(name);
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	s = json_string(copy);
	free(copy);
	return s;
}

struct validate_opts {
	struct specfile_overrides sets;
	int print_resolved, json, quiet;
};

/* Validates one spec; returns its exit status. */
static int validate_one(const char *arg, const struct validate_opts *o, int many,
			json_t *files)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT, text = SBUF_INIT;
	struct attempt at;
	const struct sbuf *resolved = &at.resolved;
	const char *hash = "";
	int status = specfile_read(arg, &text, &where, &dl);

	attempt_init(&at);
	if (!status) {
		struct job_prepare_request r = { .where = where.buf,
						 .text = text.buf, .len = text.len,
						 .sets = o->sets.v, .nsets = o->sets.n,
						 .flags = JOB_PREPARE_CHECK_RUNTIME };

		status = job_prepare(&r, &at, &dl);
		if (status == HPT_EXIT_INTERNAL)
			diag_add(&dl, DIAG_ERROR, where.buf, 0, 0, "", "cannot emit the resolved form");
		if (!status)
			hash = at.sha256;
	}
	if (o->json) {
		json_t *f = json_pack("{s:o, s:b, s:s?, s:o, s:o}", "file", json_file_name(where.buf),
				      "valid", !status, "sha256", *hash ? hash : NULL,
				      "errors", diags_json(&dl, DIAG_ERROR),
				      "warnings", diags_json(&dl, DIAG_WARNING));
		if (!status && o->print_resolved)
			jsonb_set(&f, "resolved", json_string(resolved->buf));
		/* files is the caller's: a file's entry it did not take fails this file */
		if (!f || json_array_append_new(files, f)) {
			fprintf(stderr, "hpctrain validate: %s: cannot build its JSON entry (out of "
				"memory)\n", where.buf);
			status = HPT_EXIT_INTERNAL;
		}
	} else {
		diag_report(stderr, &dl);
		if (!status && o->print_resolved) {
			if (many)
				printf("# %s sha256:%s\n", where.buf, hash);
			fputs(resolved->buf, stdout);
		} else if (!status && !o->quiet) {
			printf("%s: ok sha256:%s\n", where.buf, hash);
		}
	}
	attempt_release(&at);
	diag_list_release(&dl);
	sbuf_release(&where);
	sbuf_release(&text);
	return status;
}

static int print_fields(void)
{
	struct sbuf out = SBUF_INIT;

	spec_describe_fields(&out);
	fputs(out.buf, stdout);
	sbuf_release(&out);
	return HPT_EXIT_OK;
}

/* The worst status wins: a missing file hides nothing a bad spec shows. */
static int worse(int a, int b)
{
	static const int rank[] = { HPT_EXIT_OK, HPT_EXIT_BAD_SPEC, HPT_EXIT_NO_INPUT,
				    HPT_EXIT_INTERNAL };

	/* down to rank[1]: OK is no status to win, and a status not
	 * ranked (a file that changed, an I/O error) must not lose to it */
	for (size_t i = sizeof(rank) / sizeof(rank[0]); i-- > 1;)
		if (a == rank[i] || b == rank[i])
			return rank[i];
	return a ? a : b;
}

int cmd_validate(int argc, char **argv)
{
	struct validate_opts o = { .sets = SPECFILE_OVERRIDES_INIT };
	int c, status = HPT_EXIT_OK, fields = 0;
	json_t *files = NULL;

	opt_reset();
	while ((c = opt_next(&validate_cmd, argc, argv)) != -1) {
		switch (c) {
		case 's':
			if (!specfile_overrides_add(&o.sets, optarg))
				break;
			specfile_overrides_release(&o.sets);
			return opt_error(&validate_cmd, "--set: expected " TEMPLATE_OVERRIDE_FORM
					 ", got '%s'", SBUF_CLIP(optarg));
		case OPT_PRINT_RESOLVED:
			o.print_resolved = 1;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case OPT_FIELDS:
			fields = 1;
			break;
		case 'h':
			opt_usage(stdout, &validate_cmd);
			specfile_overrides_release(&o.sets);
			return HPT_EXIT_OK;
		default:
			specfile_overrides_release(&o.sets);
			return HPT_EXIT_USAGE;
		}
	}
	if (fields) {
		specfile_overrides_release(&o.sets);
		return print_fields();
	}
	if (optind >= argc || opt_check_operands(&validate_cmd, argc, argv, optind)) {
		specfile_overrides_release(&o.sets);
		return optind >= argc ? opt_error(&validate_cmd, "no job spec given") : HPT_EXIT_USAGE;
	}
	if (o.json)
		files = json_array();
	for (int i = optind; i < argc; i++)
		status = worse(status, validate_one(argv[i], &o, argc - optind > 1, files));
	if (o.json) {
		int printed = json_print(json_pack("{s:b, s:o}", "valid", !status, "files", files));

		status = worse(status, printed);
	}
	specfile_overrides_release(&o.sets);
	return status;
}
