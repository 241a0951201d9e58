/* cmd_template.c - `hpctrain template list|show|init`: the bundled job templates.
 * Shell: finds templates on the search path, prints or copies them. */
#include "common/json_print.h" // defines: json_print
#include "common/say.h" // defines: say
#include "cli/builtin.h"      // defines: cmd_template
#include "common/exitcode.h"     // defines: enum hpt_exit
#include "common/fileio.h"       // defines: fileio_read, fileio_write_atomic
#include "common/opt.h"          // defines: struct opt, opt_next
#include "common/sbuf.h"         // defines: struct sbuf, SBUF_CLIP
#include "common/suggest.h"      // defines: suggest_best
#include "common/spec/template_dir.h" // defines: template_dir_find, template_dir_list
#include "common/spec/ynode.h"     // defines: YNODE_MAX_BYTES
#include "common/jsonb.h" // defines: jsonb_append, jsonb_text

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const template_usage[] = {
	"hpctrain template list [--json]",
	"hpctrain template show <name>",
	"hpctrain template init <name> [-o <file>] [--force]",
	NULL,
};

static const struct opt template_opts[] = {
	{ "output", required_argument, NULL, 'o', "FILE",
	  "init: write to FILE instead of ./<name>.yaml (- for stdout)" },
	{ "force", no_argument, NULL, 'f', NULL, "init: replace FILE if it exists" },
	{ "json", no_argument, NULL, 'j', NULL, "list: print JSON" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd template_cmd = {
	.name = "template",
	.usage = template_usage,
	.summary = "Job templates are specs with typed params; validate, submit and --set use them by name.",
	.opts = template_opts,
};

static int no_such_template(const char *name)
{
	struct template_list list;
	const char **names;
	const char *best;

	template_dir_list(&list);
	names = xmalloc((list.n + 1) * sizeof(*names));
	for (size_t i = 0; i < list.n; i++)
		names[i] = list.v[i].name;
	best = suggest_best(name, names, list.n);
	fprintf(stderr, "hpctrain template: no template named '%s'", name);
	if (best)
		fprintf(stderr, "; did you mean '%s'?", best);
	fputs("\nsee 'hpctrain template list'\n", stderr);
	free(names);
	template_list_release(&list);
	return HPT_EXIT_NO_INPUT;
}

static int template_list(int json)
{
	struct template_list list;
	int status = HPT_EXIT_OK;

	template_dir_list(&list);
	if (json) {
		json_t *arr = json_array();

		for (size_t i = 0; i < list.n; i++)
			jsonb_append(&arr, json_pack("{s:o, s:o, s:o}", "name",
						     jsonb_text(list.v[i].name), "path",
						     jsonb_text(list.v[i].path), "summary",
						     jsonb_text(list.v[i].summary)));
		status = json_print(arr);
	} else {
		for (size_t i = 0; i < list.n; i++)
			printf("%-20s %s\n", list.v[i].name, list.v[i].summary);
	}
	template_list_release(&list);
	return status;
}

static int read_template(const char *name, struct sbuf *text)
{
	struct sbuf path = SBUF_INIT, err = SBUF_INIT;
	int status = HPT_EXIT_OK;

	if (template_dir_find(name, &path)) {
		status = no_such_template(name);
	} else if (fileio_read(path.buf, YNODE_MAX_BYTES, text, &err)) {
		say("%s", err.buf);
		status = HPT_EXIT_NO_INPUT;
	}
	sbuf_release(&path);
	sbuf_release(&err);
	return status;
}

static int template_show(const char *name)
{
	struct sbuf text = SBUF_INIT;
	int status = read_template(name, &text);

	if (!status)
		fwrite(text.buf, 1, text.len, stdout);
	sbuf_release(&text);
	return status;
}

/* Copies the template verbatim, comments included: it is meant to be
 * edited.  The file is created 0644 and never half-written. */
static int template_init(const char *name, const char *output, int force)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT, path = SBUF_INIT;
	int status = read_template(name, &text);

	if (status)
		goto out;
	if (output && !strcmp(output, "-")) {
		fwrite(text.buf, 1, text.len, stdout);
		goto out;
	}
	if (output)
		sbuf_addstr(&path, output);
	else
		sbuf_addf(&path, "%s.yaml", name);
	if (fileio_write_atomic(path.buf, text.buf, text.len, 0644, !force, &err)) {
		say("%s%s", err.buf,
			fileio_exists(path.buf) && !force ? " (use --force to replace it)" : "");
		status = HPT_EXIT_IO;
		goto out;
	}
	say("wrote %s; check it with 'hpctrain validate %s'",
		path.buf, path.buf);
out:
	sbuf_release(&text);
	sbuf_release(&err);
	sbuf_release(&path);
	return status;
}

int cmd_template(int argc, char **argv)
{
	static const char *const actions[] = { "list", "show", "init" };
	const char *output = NULL, *action, *best;
	int c, force = 0, json = 0;

	opt_reset();
	while ((c = opt_next(&template_cmd, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			opt_usage(stdout, &template_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return opt_error(&template_cmd, "expected list, show or init");
	action = argv[optind++];
	if (!strcmp(action, "list")) {
		if (optind < argc)
			return opt_error(&template_cmd, "list takes no arguments");
		return template_list(json);
	}
	if (!strcmp(action, "show") || !strcmp(action, "init")) {
		if (optind + 1 != argc)
			return opt_error(&template_cmd, "%s needs exactly one template name", action);
		if (opt_check_operands(&template_cmd, argc, argv, optind))
			return HPT_EXIT_USAGE;
		if (*action == 's')
			return template_show(argv[optind]);
		return template_init(argv[optind], output, force);
	}
	best = suggest_best(action, actions, 3);
	if (best)
		return opt_error(&template_cmd, "unknown action '%s'; did you mean '%s'?",
				 SBUF_CLIP(action), best);
	return opt_error(&template_cmd, "unknown action '%s'", SBUF_CLIP(action));
}
