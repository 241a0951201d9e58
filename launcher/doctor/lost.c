/* lost.c - the nodes a failed step lost (lost.h).  Core. */
#include "launcher/doctor/lost.h" // defines: lost_nodes, lost_record_nodes, lost_has_node
#include "common/sbuf.h"          // defines: struct sbuf

#include <signal.h>
#include <string.h>

bool lost_has_node(const char *const *nodes, size_t k, const char *node)
{
	for (size_t j = 0; j < k; j++)
		if (!strcmp(nodes[j], node))
			return true;
	return false;
}

static size_t add_once(const char **nodes, size_t k, const char *node)
{
	if (lost_has_node(nodes, k, node))
		return k;
	nodes[k] = node;
	return k + 1;
}

size_t lost_record_nodes(json_t *const *ranks, size_t n, const char **nodes)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const char *node = json_string_value(json_object_get(ranks[i], "node"));

		if (node && *node)
			k = add_once(nodes, k, node);
	}
	return k;
}

size_t lost_nodes(json_t *const *ranks, size_t n, const char **nodes, struct sbuf *why)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const char *node = json_string_value(json_object_get(ranks[i], "node"));
		json_int_t sig = json_integer_value(json_object_get(ranks[i], "signal"));

		if (!node || !*node || (sig != SIGKILL && sig != SIGBUS))
			continue;
		sbuf_addf(why, "%srank %lld on ", why->len ? "; " : "",
			  (long long)json_integer_value(json_object_get(ranks[i], "rank")));
		sbuf_add_printable(why, node);
		sbuf_addf(why, " killed by signal %lld", (long long)sig);
		k = add_once(nodes, k, node);
	}
	return k;
}
