/* nodename.c - this node's name (nodename.h).  Shell. */
#include "common/nodename.h" // defines: nodename_self

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *nodename_self(void)
{
	static char host[256];
	const char *n = getenv("SLURMD_NODENAME");

	if (n && *n)
		return n;
	if (gethostname(host, sizeof(host) - 1))
		return "localhost";
	host[strcspn(host, ".")] = '\0';
	return host;
}
