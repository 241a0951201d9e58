/* doctor_container_grade.c - grades what doctor's container probe saw
 * (see doctor_container.h).  Pure core: the probe's exit, its output
 * and what it was asked to look for in; one cell out. */
#include "launcher/doctor/doctor_container.h" // defines: doctor_container_grade, doctor_container_script
#include "common/sbuf.h"                      // defines: struct sbuf

#include <string.h>

/* For each argument: "env:NAME" is looked up with ${NAME+set} (the
 * shell checks NAME is [A-Za-z0-9_]: doctor passes only such names),
 * anything else with test -e.  Only the shell's builtins: a minimal
 * image may have nothing else. */
const char doctor_container_script[] =
	"for a; do case $a in "
	"env:*) n=${a#env:}; case $n in *[!A-Za-z0-9_]*|'') echo \"-$a\"; continue;; esac; "
	"eval \"v=\\${$n+set}\"; if [ \"$v\" = set ]; then echo \"+$a\"; else echo \"-$a\"; fi;; "
	"*) if [ -e \"$a\" ]; then echo \"+$a\"; else echo \"-$a\"; fi;; "
	"esac; done";

/* The line "<mark>ARG" in output, exactly. */
static bool has_line(const char *output, char mark, const char *arg)
{
	size_t n = strlen(arg);

	for (const char *p = output; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (p[0] == mark && !strncmp(p + 1, arg, n) && (p[1 + n] == '\n' || !p[1 + n]))
			return true;
	return false;
}

/* What a missing argument is, for the reason. */
static void say_missing(struct doctor_cell *out, const struct doctor_container_run *r,
			const char *arg, bool unanswered)
{
	const char *how = unanswered ? "the probe said nothing of" : "not visible inside:";

	if (!strncmp(arg, "env:", 4))
		doctor_note(out, DOCTOR_FAIL, "%s PMIx variable %s (the runtime does not pass "
			    "the environment)", how, arg + 4);
	else if (!strncmp(arg, "/dev/", 5))
		doctor_note(out, DOCTOR_FAIL, "%s device %s of this node (the %s container "
			    "does not see it)", how, arg, r->runtime);
	else
		doctor_note(out, DOCTOR_FAIL, "%s PMIx rendezvous directory %s (bind it: "
			    "container.mounts)", how, arg);
}

void doctor_container_grade(const struct doctor_container_run *r, struct doctor_cell *out)
{
	const char *out_text = r->output ? r->output : "";
	size_t ndev = 0, npmix = 0, first_len = strcspn(out_text, "\n");
	enum doctor_grade before = out->grade;

	if (r->timed_out) {
		doctor_note(out, DOCTOR_FAIL, "%s did not finish /bin/sh in %s within %g s: "
			    "killed at --timeout", r->runtime, r->image, r->timeout_s);
		return;
	}
	if (r->status) {
		doctor_note(out, DOCTOR_FAIL, "%s could not run /bin/sh in %s (exit %d)%s%.*s",
			    r->runtime, r->image, r->status, first_len ? ": " : "",
			    (int)(first_len > 200 ? 200 : first_len), out_text);
		return;
	}
	for (size_t i = 0; i < r->n_want; i++) {
		const char *a = r->want[i];

		if (has_line(out_text, '+', a)) {
			if (!strncmp(a, "/dev/", 5))
				ndev++;
			else
				npmix++;
		} else {
			say_missing(out, r, a, !has_line(out_text, '-', a));
		}
	}
	if (out->grade > before && out->grade == DOCTOR_FAIL)
		return;
	doctor_note(out, DOCTOR_OK, "%s started /bin/sh in %s; %zu device(s)%s visible inside",
		    r->runtime, r->image, ndev, npmix ? " and PMIx" : "");
}
