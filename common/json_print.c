/* json_print.c - how every command prints a JSON document (json_print.h). */
#include "common/json_print.h" // defines: json_print
#include "common/exitcode.h"   // defines: HPT_EXIT_*

#include <stdio.h>

int json_print(json_t *doc)
{
	int rc;

	if (!doc) {
		fputs("hpctrain: cannot build the JSON output (a string that is not UTF-8, or "
		      "out of memory)\n", stderr);
		return HPT_EXIT_INTERNAL;
	}
	rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	json_decref(doc);
	if (rc || putchar('\n') == EOF || fflush(stdout)) {
		perror("hpctrain: writing the JSON output");
		return HPT_EXIT_IO;
	}
	return HPT_EXIT_OK;
}
