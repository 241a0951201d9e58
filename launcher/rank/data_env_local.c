/* data_env_local.c - the staged copies as this node has them: a copy
 * that is not there (no stage step ran: a job launched by hand, or one
 * rendered before it staged) leaves the rank on the entry's source.
 * Shell: looks at the file system. */
#include "launcher/rank/data_env.h" // defines: data_env_local_check
#include "common/sbuf.h"            // defines: struct sbuf
#include "common/spec/spec.h"       // defines: SPEC_STAGE_IMAGE

#include <string.h>
#include <unistd.h>

size_t data_env_local_check(struct data_env *d, struct sbuf *missing)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++) {
		struct data_env_entry *e = &d->v[i];

		if (e->staged && !access(e->staged, F_OK))
			continue;
		if (d->image == e->path)
			d->image = e->src;
		if (d->code == e->path)
			d->code = e->src;
		e->path = e->src;
		sbuf_addf(missing, "%s%s", n++ ? ", " : "", e->name);
	}
	return n;
}
