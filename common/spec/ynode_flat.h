/* ynode_flat.h - a YAML tree (a resolved spec) as flat dotted keys.
 *
 * Core (pure): hpctrain diff compares two runs' resolved.yaml key by
 * key, so a change deep in train.optimizer reads as one line
 * ("train.optimizer.lr: 0.05"), not as a diff of the text around it.
 */
#ifndef HPT_YNODE_FLAT_H
#define HPT_YNODE_FLAT_H

struct flatdoc;
struct ynode;

/* Adds each leaf of root to out: a map's keys joined by ".", a
 * sequence's items as KEY[i], the top level's keys bare.  A leaf's value
 * is its scalar as YAML writes it: a quoted scalar in double quotes
 * with JSON's escapes ("fm2"), a plain one as it stands (0.05, null),
 * an empty map "{}" and an empty sequence "[]".  A NULL root (an
 * empty document) adds nothing; a scalar root is the key "". */
void ynode_flat_add(const struct ynode *root, struct flatdoc *out);

#endif
