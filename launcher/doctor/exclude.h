/* exclude.h - the nodes a submission leaves out: the user's --exclude
 * and the nodes of this cluster that the node ledger holds in cooldown.
 *
 * Shell: reads the ledger file and asks the controller (the cluster's
 * name and, when the ledger holds nodes in cooldown, its node names;
 * hpt_slurm_init first).  submit, rerun and a sweep build the list
 * once, before they render, so every attempt's script and options carry
 * it from their one render.
 */
#ifndef HPT_EXCLUDE_H
#define HPT_EXCLUDE_H

#include <stdbool.h>
#include <stdint.h>

struct sbuf;

/* Appends to list the Slurm hostlist of user's hosts (a hostlist, or
 * NULL, passed on as given) and, with ledger, of the nodes the ledger
 * holds in cooldown on this cluster that the controller has; nothing
 * when there are none.  notes gets one line per node left out and why
 * (for say_lines: no prefix),
 * a warning per ledger node the controller does not have (left out of
 * the list: Slurm would refuse the job over it), and a warning when the
 * ledger could not be read (not a failure).  0, or HPT_EXIT_USAGE with
 * err when the lists do not merge into a hostlist. */
int exclude_build(const char *user, bool ledger, struct sbuf *list, struct sbuf *notes,
		  struct sbuf *err);

/* How many of the controller's nodes (every partition's) the hostlist
 * exclude leaves in: what a resubmission without them can have at most.
 * -1 when the controller's node list cannot be read. */
int64_t exclude_nodes_left(const char *exclude);

#endif
