/* probe_conv.c - the helpers of one topology conversion that probe.c
 * (packages, NUMA nodes, cores) and probe_pci.c (GPUs, NICs) share:
 * reporting its first failure, hwloc sets into struct bitmap, info
 * attributes copied.  Shell (hwloc types); calls nothing of probe.c or
 * probe_pci.c, so calls between the three go one way (probe_conv.h).
 */
#include "topology/probe_conv.h" // defines: struct probe_conv, probe_conv_*
#include "topology/bitmap.h"     // defines: struct bitmap, bitmap_*, BITMAP_MAX_BIT
#include "common/diag.h"         // defines: diag_vadd, DIAG_ERROR
#include "common/sbuf.h"         // defines: xstrdup

#include <hwloc.h>

#include <stdarg.h>

void probe_conv_fail(struct probe_conv *c, const char *fmt, ...)
{
	va_list ap;

	/* Report the first problem only: later ones are usually its echo. */
	if (c->failed)
		return;
	c->failed = true;
	va_start(ap, fmt);
	diag_vadd(c->err, DIAG_ERROR, c->where, 0, 0, "", fmt, ap);
	va_end(ap);
}

/* hwloc sets may be infinite ("all CPUs from here on"); ours are not, so
 * clip to what the machine has, and refuse absurd ids from hostile XML. */
static void conv_set(struct probe_conv *c, hwloc_const_bitmap_t src,
		     hwloc_const_bitmap_t clip, struct bitmap *dst)
{
	hwloc_bitmap_t tmp;
	int id;

	bitmap_zero(dst);
	if (!src)
		return;
	tmp = hwloc_bitmap_alloc();
	if (!tmp) {
		probe_conv_fail(c, "out of memory in hwloc");
		return;
	}
	if (clip)
		hwloc_bitmap_and(tmp, src, clip);
	else
		hwloc_bitmap_copy(tmp, src);
	for (id = hwloc_bitmap_first(tmp); id >= 0; id = hwloc_bitmap_next(tmp, id)) {
		if ((unsigned)id > BITMAP_MAX_BIT) {
			probe_conv_fail(c, "cpu or node id %d is larger than %u", id, BITMAP_MAX_BIT);
			break;
		}
		bitmap_set(dst, (unsigned)id);
	}
	hwloc_bitmap_free(tmp);
}

void probe_conv_cpuset(struct probe_conv *c, hwloc_const_bitmap_t src, struct bitmap *dst)
{
	conv_set(c, src, hwloc_get_root_obj(c->topo)->complete_cpuset, dst);
}

void probe_conv_nodeset(struct probe_conv *c, hwloc_const_bitmap_t src, struct bitmap *dst)
{
	conv_set(c, src, hwloc_get_root_obj(c->topo)->complete_nodeset, dst);
}

char *probe_conv_info_dup(hwloc_obj_t o, const char *name)
{
	const char *v = o ? hwloc_obj_get_info_by_name(o, name) : NULL;

	return v ? xstrdup(v) : NULL;
}
