/* main.c - hpctrain-train's entry point: `hpctrain train` execs it with
 * the same arguments (argv[1] is the spec or an option), and `hpctrain
 * data` with "data" first.  Shell: picks the command, flushes stdout.
 * A separate program so the login-node CLI never links oneDNN. */
#include "trainer/cmd.h"  // defines: cmd_train, cmd_data
#include "common/exitcode.h" // defines: exitcode_finish
#include "common/say.h"      // defines: say_set_prefix, say_prefix

#include <string.h>

int main(int argc, char **argv)
{
	int status;

	if (argc > 1 && !strcmp(argv[1], "data")) {
		say_set_prefix("hpctrain data");
		status = cmd_data(argc - 1, argv + 1);
	} else {
		say_set_prefix("hpctrain train");
		status = cmd_train(argc, argv);
	}
	return exitcode_finish(say_prefix(), status);
}
