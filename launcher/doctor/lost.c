/* lost.c - the nodes a failed step lost (lost.h).  Core. */
#include "launcher/doctor/lost.h" // defines: lost_nodes
#include "common/sbuf.h"          // defines: struct sbuf

#include <signal.h>
#include <string.h>

size_t lost_nodes(json_t *const *ranks, size_t n, const char **nodes, struct sbuf *why)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const char *node = json_string_value(json_object_get(ranks[i], "node"));
		json_int_t sig = json_integer_value(json_object_get(ranks[i], "signal"));
		size_t j;

		if (!node || !*node || (sig != SIGKILL && sig != SIGBUS))
			continue;
		sbuf_addf(why, "%srank %lld on ", why->len ? "; " : "",
			  (long long)json_integer_value(json_object_get(ranks[i], "rank")));
		sbuf_add_printable(why, node);
		sbuf_addf(why, " killed by signal %lld", (long long)sig);
		for (j = 0; j < k && strcmp(nodes[j], node); j++)
			;
		if (j == k)
			nodes[k++] = node;
	}
	return k;
}
