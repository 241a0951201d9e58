/* code_git.h - what git knows about a code tree: its top, its files
 * (.gitignore applied), and its commit, branch and changes.
 * Shell (code_git.c): git is run as a program (fork, exec), with a
 * clean environment (PATH, HOME, LC_ALL=C; no GIT_* variable of the
 * caller's), never through a shell. */
#ifndef HPT_CODE_GIT_H
#define HPT_CODE_GIT_H

#include <jansson.h>

struct sbuf;

/* The top of the git work tree holding dir (an existing directory),
 * into top (reset first): 0, or -1 when dir is in none (or git is
 * missing).  Nothing is said. */
int code_git_toplevel(const char *dir, struct sbuf *top);

/* `git ls-files --cached --others --exclude-standard -z` in top: the
 * tracked and untracked files .gitignore keeps, NUL-separated, into
 * out (reset first).  0, or -1 with err. */
int code_git_ls_files(const char *top, struct sbuf *out, struct sbuf *err);

/* {"commit": HEX or null (no commit yet), "branch": NAME or null
 * (detached), "dirty": bool, "changed": [paths]} of the tree at top,
 * from `git status --porcelain=v1 -z` and `git rev-parse`.  A new
 * reference, or NULL when git fails (the caller records null). */
json_t *code_git_state(const char *top);

/* code_git_state in two halves, so that git status walks the tree while
 * the caller scans it (code_pin): start runs `git status` (0, or -1
 * when it could not, which finish then answers with NULL); finish reads
 * it, runs the rest and returns code_git_state's answer.  Every start
 * is finished, on every path, or git is left unreaped. */
struct code_git_pending {
	int pid; /* -1: none running */
	int fd;
};
int code_git_state_start(const char *top, struct code_git_pending *p);
json_t *code_git_state_finish(const char *top, struct code_git_pending *p);

#endif
