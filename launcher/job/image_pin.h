/* image_pin.h - the spec's container image pinned by its content, for
 * validate, submit and rerun.
 * Prints: one line per problem or note, "hpctrain CMD: ..." (common/say.h), to stderr.
 */
#ifndef HPT_IMAGE_PIN_H
#define HPT_IMAGE_PIN_H

#include "common/spec/spec.h"                     // defines: struct job
#include "launcher/container/container_digest.h"  // defines: CONTAINER_DIGEST_SIZE

/* The digest of job's image now (container_digest), into out.  A job
 * without an image: 0 and "".  HPT_EXIT_NO_INPUT when the image is
 * missing or unreadable (the line names it). */
int image_pin_digest(const struct job *job, char out[CONTAINER_DIGEST_SIZE]);

/* image_pin_digest, then job->container.digest set to it, so that the
 * resolved form and the run's hash name the image's content.  A runtime
 * the spec names that cannot start the image is HPT_EXIT_BAD_SPEC.  With
 * check_runtime (validate), also looks for the runtime in PATH and says
 * what it could not check here: a runtime this host lacks, a reference
 * it cannot pull. */
int image_pin(struct job *job, int check_runtime);

/* A run's job must still name its image's content: 0 when it does (or
 * has no image, or changed_ok, after a warning naming both digests);
 * HPT_EXIT_BAD_SPEC naming both; HPT_EXIT_NO_INPUT for a missing
 * image.  The job's recorded digest is left as it is. */
int image_pin_unchanged(const struct job *job, int changed_ok);

#endif
