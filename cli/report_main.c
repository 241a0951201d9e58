/* report_main.c - bin/hpctrain-report, which `hpctrain report` execs: the
 * charts link cairo, which the login-node binary need not. */
#include "common/exitcode.h" // defines: exitcode_finish
#include "common/say.h"      // defines: say_set_prefix, say_prefix

int cmd_report(int argc, char **argv);

int main(int argc, char **argv)
{
	say_set_prefix("hpctrain report");
	return exitcode_finish(say_prefix(), cmd_report(argc, argv));
}
