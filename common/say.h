/* say.h - the one printer of what a command tells its user on stderr:
 * "hpctrain submit: what failed: why".  The prefix is the command's, set
 * once by the program's main (cli/main.c for each command of the
 * table, and each program hpctrain execs), so no library file needs to
 * know which command it serves to speak in its name.  Results go to
 * stdout; this is for problems, warnings and progress.
 */
#ifndef HPT_SAY_H
#define HPT_SAY_H

/* The prefix, "hpctrain" until a main sets "hpctrain CMD"; who must
 * outlive the program's use of it (a literal). */
void say_set_prefix(const char *who);
const char *say_prefix(void);

/* "PREFIX: " fmt "\n" on stderr, in one write. */
__attribute__((format(printf, 1, 2)))
void say(const char *fmt, ...);

/* say() of each non-empty line of text: a library's notes, returned
 * in a buffer one line each, spoken in the command's name. */
void say_lines(const char *text);

#endif
