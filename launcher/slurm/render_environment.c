/* render_environment.c - the batch script lines that set up a job's site
 * software: environment modules and a Python virtualenv (spec section
 * environment, documented in SITE SOFTWARE of hpctrain-job(5)).
 * Pure core: struct job in, script text out.
 *
 * The lines run once, in the batch script, before its first step: srun
 * hands the script's environment to every step, so the preflight's
 * doctor and every rank see the same compilers, libraries and Python as
 * the program, and a module that does not load ends the job before
 * anything is started on any node. */
#include "launcher/slurm/render.h" // defines: render_environment
#include "common/diag.h"        // defines: diag_add
#include "common/exitcode.h"    // defines: HPT_EXIT_UNAVAILABLE, HPT_EXIT_NO_INPUT
#include "common/sbuf.h"        // defines: struct sbuf, sbuf_add_shell_quoted
#include "common/spec/spec.h"        // defines: struct job

#include <string.h>

/* Debian's Lmod, where neither LMOD_PKG nor MODULESHOME is set yet. */
#define RENDER_LMOD_INIT "/usr/share/lmod/lmod/init/bash"

/* A `module` function already defined (exported by the submitting
 * shell, or by the node's profile) wins: it is the site's own.  Else the
 * init script of the module system the environment names (Lmod sets
 * LMOD_PKG, both Lmod and Environment Modules set MODULESHOME), else
 * Debian's Lmod.  Without one the job cannot have its modules: it ends
 * here with one line, never a trail of "module: command not found". */
static void add_module_init(struct sbuf *s)
{
	sbuf_addf(s,
		  "if ! declare -F module >/dev/null; then\n"
		  "\tfor init in \"${LMOD_PKG:+$LMOD_PKG/init/bash}\""
		  " \"${MODULESHOME:+$MODULESHOME/init/bash}\" \\\n"
		  "\t\t%s; do\n"
		  "\t\t[ -n \"$init\" ] && [ -r \"$init\" ] && . \"$init\" && break\n"
		  "\tdone\n"
		  "fi\n"
		  "if ! declare -F module >/dev/null; then\n"
		  "\techo 'hpctrain: environment.modules is set but this node has no module command' >&2\n"
		  "\texit %d\n"
		  "fi\n",
		  RENDER_LMOD_INIT, HPT_EXIT_UNAVAILABLE);
}

/* One load per module, so the message names the one that failed.  Some
 * Lmod versions return 0 from `module load` of a module they could not
 * find (8.6, Debian 12's, returns 1), so is-loaded confirms it. */
static void add_module_load(struct sbuf *s, const char *name)
{
	sbuf_addstr(s, "module load ");
	sbuf_add_shell_quoted(s, name);
	sbuf_addstr(s, " && module is-loaded ");
	sbuf_add_shell_quoted(s, name);
	sbuf_addstr(s, " || {\n\tprintf 'hpctrain: module %s did not load\\n' ");
	sbuf_add_shell_quoted(s, name);
	sbuf_addf(s, " >&2\n\texit %d\n}\n", HPT_EXIT_NO_INPUT);
}

/* What an activate script does that matters, and no more: VIRTUAL_ENV,
 * its bin first on PATH (after the modules, so ahead of what they
 * added), no PYTHONHOME.  Nothing of the virtualenv is sourced, so it
 * cannot run code in the batch shell. */
static void add_venv(struct sbuf *s, const char *venv)
{
	sbuf_addstr(s, "export VIRTUAL_ENV=");
	sbuf_add_shell_quoted(s, venv);
	sbuf_addf(s,
		  "\nif [ ! -d \"$VIRTUAL_ENV/bin\" ]; then\n"
		  "\tprintf 'hpctrain: environment.venv %%s has no bin directory\\n'"
		  " \"$VIRTUAL_ENV\" >&2\n"
		  "\texit %d\n"
		  "fi\n"
		  "export PATH=\"$VIRTUAL_ENV/bin:$PATH\"\n"
		  "unset PYTHONHOME\n",
		  HPT_EXIT_NO_INPUT);
}

/* The spec core refused these already; the renderer checks again what
 * would change the meaning of a line, not just its quoting: a name
 * read as an option of `module`, a venv relative to the node's cwd or
 * holding ':', which would add a second, relative entry to PATH. */
static int check_environment(const struct job_environment *e, struct diag_list *err)
{
	for (size_t i = 0; i < e->modules.n; i++)
		if (!e->modules.v[i][0] || e->modules.v[i][0] == '-') {
			diag_add(err, DIAG_ERROR, "render", 0, 0, "environment.modules",
				 "a module name must not be empty or start with '-'");
			return -1;
		}
	if (e->venv && (e->venv[0] != '/' || strchr(e->venv, ':'))) {
		diag_add(err, DIAG_ERROR, "render", 0, 0, "environment.venv",
			 "the virtualenv path must be absolute, without ':' (it goes on PATH)");
		return -1;
	}
	return 0;
}

int render_environment(const struct job *job, struct sbuf *s, struct diag_list *err)
{
	const struct job_environment *e = &job->environment;

	if (!e->modules.n && !e->venv)
		return 0;
	if (check_environment(e, err))
		return -1;
	/* Module init scripts and functions read variables that may be
	 * unset; the script's set -u would end the job inside them. */
	sbuf_addstr(s, "\n# environment: site software for every step (preflight and ranks)\n"
		       "set +u\n");
	if (e->modules.n)
		add_module_init(s);
	for (size_t i = 0; i < e->modules.n; i++)
		add_module_load(s, e->modules.v[i]);
	if (e->venv)
		add_venv(s, e->venv);
	sbuf_addstr(s, "set -u\n");
	return 0;
}
