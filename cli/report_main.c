/* report_main.c - bin/hpctrain-report, which `hpctrain report` execs: the
 * charts link cairo, which the login-node binary need not. */
#include "common/exitcode.h" // defines: exitcode_finish

int cmd_report(int argc, char **argv);

int main(int argc, char **argv)
{
	return exitcode_finish("hpctrain report", cmd_report(argc, argv));
}
