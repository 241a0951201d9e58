/* report_sweep.h - `hpctrain report` of a sweep record. */
#ifndef HPT_REPORT_SWEEP_H
#define HPT_REPORT_SWEEP_H

struct report_out;

/* Charts the points of the sweep record at path (absolute) into o: the
 * final test accuracy and loss against each axis, throughput and
 * efficiency against ranks, every point's training loss.  Returns the
 * exit status. */
int report_sweep(const char *path, struct report_out *o);

#endif
