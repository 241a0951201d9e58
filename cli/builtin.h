/* builtin.h - the subcommands of hpctrain, one cmd_<name>.c each.
 *
 * Adding a subcommand takes: cli/cmd_<name>.c exporting
 * int cmd_<name>(int argc, char **argv) (argv[0] is the command name, the
 * return value is the exit status from common/exitcode.h); a row in the
 * table of cli/main.c; man/hpctrain-<name>.1; tests/cli/<name>.bats.
 * tests/cli/docs.bats checks that the last three agree.
 */
#ifndef HPT_BUILTIN_H
#define HPT_BUILTIN_H

#include <stddef.h>

int cmd_validate(int argc, char **argv);
int cmd_template(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_launch(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_rerun(int argc, char **argv);
int cmd_autopsy(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
