/* program_check.c - the job's program as this host sees it (program_check.h). */
#include "launcher/job/program_check.h" // defines: program_check
#include "common/exitcode.h"            // defines: HPT_EXIT_BAD_SPEC
#include "common/say.h"                 // defines: say
#include "common/sbuf.h"                // defines: struct sbuf
#include "common/spec/spec.h"           // defines: struct job, spec_code_is_on
#include "launcher/job/code_pin.h"      // defines: code_pin_default_dir

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "here/arg", for the fix a message gives. */
static void absolute(const char *arg, struct sbuf *out)
{
	char cwd[PATH_MAX];

	while (!strncmp(arg, "./", 2))
		arg += 2;
	if (getcwd(cwd, sizeof(cwd)))
		sbuf_addf(out, "%s/%s", strcmp(cwd, "/") ? cwd : "", arg);
	else
		sbuf_addstr(out, "an absolute path");
}

/* Whether name is an executable file in a directory of PATH. */
static bool on_path(const char *name)
{
	const char *path = getenv("PATH");
	struct sbuf file = SBUF_INIT;
	bool found = false;

	for (const char *p = path ? path : ""; *p && !found;) {
		size_t n = strcspn(p, ":");

		sbuf_reset(&file);
		sbuf_addf(&file, "%.*s/%s", (int)n, n ? p : ".", name);
		found = !access(file.buf, X_OK);
		p += n + (p[n] == ':');
	}
	sbuf_release(&file);
	return found;
}

/* Whether rel names a file (executable, with exec) or a directory
 * inside the code directory code, which the snapshot holds at the same
 * relative path (an empty directory aside: only files are copied). */
static bool in_code(const char *code, const char *rel, bool exec)
{
	struct sbuf p = SBUF_INIT;
	struct stat st;
	bool yes;

	if (!code)
		return false;
	sbuf_addf(&p, "%s/%s", code, rel);
	yes = !stat(p.buf, &st) &&
	      (exec ? S_ISREG(st.st_mode) && !access(p.buf, X_OK)
		    : S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
	sbuf_release(&p);
	return yes;
}

/* command[0]: 0, or -1 after saying why it cannot run.  With code on
 * (code not NULL), the job runs in the code's snapshot, so a path
 * relative to the code's directory is the program it runs. */
static int check_program(const struct job *job, const char *where, const char *code)
{
	const char *prog = job->command.v[0];
	struct sbuf fix = SBUF_INIT, dir = SBUF_INIT;
	struct stat st;
	int rc = 0;

	if (!strchr(prog, '/')) {
		if (!job->environment.modules.n && !job->environment.venv && !on_path(prog))
			say("%s: warning: command[0] '%s' is not on this host's PATH; the nodes must "
			    "have it", where, prog);
		return 0;
	}
	if (prog[0] != '/' && in_code(code, prog, true)) {
		return 0;
	} else if (prog[0] != '/' && in_code(code, prog, false)) {
		say("%s: command[0] '%s' is not an executable file in the code's directory %s "
		    "(chmod +x it, or run it through its interpreter)", where, prog, code);
		rc = -1;
	} else if (prog[0] != '/') {
		absolute(prog, &fix);
		say("%s: command[0] '%s' is a relative path, and the job runs in its run directory, "
		    "not here: give %s", where, prog, fix.buf);
		rc = -1;
	} else if (!stat(prog, &st)) {
		if (!S_ISREG(st.st_mode) || access(prog, X_OK)) {
			say("%s: command[0] '%s' is %s", where, prog,
			    S_ISDIR(st.st_mode) ? "a directory" : "not executable (chmod +x it, or "
			    "run it through its interpreter)");
			rc = -1;
		}
	} else {
		/* seen from here only where its directory is (a shared file system) */
		sbuf_addstr(&dir, prog);
		*strrchr(dir.buf, '/') = '\0';
		if (!stat(dir.buf[0] ? dir.buf : "/", &st)) {
			say("%s: command[0] '%s' does not exist", where, prog);
			rc = -1;
		}
	}
	sbuf_release(&fix);
	sbuf_release(&dir);
	return rc;
}

/* command[1..]: 0, or -1 after naming each argument that is a path
 * relative to here. */
static int check_arguments(const struct job *job, const char *where, const char *code)
{
	struct sbuf fix = SBUF_INIT;
	struct stat st;
	int rc = 0;

	for (size_t i = 1; i < job->command.n; i++) {
		const char *arg = job->command.v[i];

		if (!*arg || arg[0] == '/' || arg[0] == '-' || !strcmp(arg, ".") ||
		    !strcmp(arg, "..") || stat(arg, &st) || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			continue;
		if (in_code(code, arg, false))
			continue; /* the snapshot holds it at the same relative path */
		sbuf_reset(&fix);
		absolute(arg, &fix);
		say("%s: command[%zu] '%s' is a %s relative to this directory, and the job runs in "
		    "its run directory, not here: give %s", where, i, arg,
		    S_ISDIR(st.st_mode) ? "directory" : "file", fix.buf);
		rc = -1;
	}
	sbuf_release(&fix);
	return rc;
}

int program_check(const struct job *job, const char *where)
{
	char *code = NULL;
	int bad;

	if (!job->command.n || job->container.image)
		return HPT_EXIT_OK;
	if (spec_code_is_on(job))
		code = job->code.dir ? realpath(job->code.dir, NULL) : code_pin_default_dir(job);
	bad = check_program(job, where, code);
	bad |= check_arguments(job, where, code);
	free(code);
	return bad ? HPT_EXIT_BAD_SPEC : HPT_EXIT_OK;
}
