/* container_verify.h - an image a runtime reads by itself, checked
 * against its pin before the program starts.
 *
 * ch-run and podman start a directory image in place, apptainer a SIF,
 * SquashFS or directory, enroot a SquashFS file: nothing between the pin
 * (container.digest, taken at validate and submit) and the runtime
 * looked at the image again, so an image replaced after validate ran
 * unseen, in a requeue too.  (A SquashFS image mounted for ch-run or
 * podman is checked where it is mounted, container_squash.c.)
 *
 * The digest comes through container_digest's cache, keyed by every
 * entry's statkey: a stat walk for a tree that did not change since it
 * was hashed, a re-hash when it did.  The ranks of a node take one lock
 * around it, so a changed tree is hashed by one rank and the others find
 * its answer: a re-hash on every rank would read a big tree N times.
 * A digest that disagrees with the pin is asked again without the cache
 * (container_digest_fresh), whose answer replaces the cache's entry: a
 * wrong entry is dropped, never trusted twice.
 *
 * Shell: reads the image, the cache and its lock. */
#ifndef HPT_CONTAINER_VERIFY_H
#define HPT_CONTAINER_VERIFY_H

#include "launcher/container/container_argv.h" // defines: enum container_image_kind

#include <stdbool.h>

struct sbuf;

/* Does the runtime read this image itself, so that launch must check it?
 * A directory under any runtime; a SquashFS or SIF file under apptainer
 * or enroot.  Not a reference (pulled by the runtime, by its digest when
 * pinned), nor a writable image (the program changes it on purpose). */
bool container_verify_is_needed(int runtime, enum container_image_kind kind, bool writable);

/* Checks image (of kind) against pin: 0 when its digest is pin, or pin
 * is no "sha256:" digest (nothing pinned: nothing to hold it to); 1 when
 * it is another image ("the image X is not the one pinned (pinned
 * sha256:..., now sha256:...)" in err); -1 when it cannot be read. */
int container_verify(const char *image, enum container_image_kind kind, const char *pin,
		     struct sbuf *err);

#endif
