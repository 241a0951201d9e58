/* container_image.h - what container.image names, and which runtime a
 * node has.
 * Shell: stats and reads the first bytes of the image, searches PATH.
 * launch, validate and submit ask the same questions the same way, so a
 * missing image or runtime reads alike wherever it is found.
 */
#ifndef HPT_CONTAINER_IMAGE_H
#define HPT_CONTAINER_IMAGE_H

#include "launcher/container/container_argv.h" // defines: enum container_image_kind

struct sbuf;

/* The kind of image: not an absolute path is a reference (nothing to
 * look at here); a directory; a file by its magic (SquashFS "hsqs" at 0,
 * SIF "SIF_MAGIC" at 32).  0, or -1 with err naming the image (missing,
 * unreadable, or neither kind of file). */
int container_image_kind(const char *image, enum container_image_kind *kind, struct sbuf *err);

/* The program a runtime is started by ("ch-run", "apptainer", ...). */
const char *container_image_program(int runtime);

/* 1 when prog is an executable in PATH as execvp(3) searches it (an
 * empty entry is the current directory), else 0. */
int container_image_in_path(const char *prog);

/* wanted (enum container_runtime) as this node has it: auto is the first
 * of charliecloud, apptainer, enroot and podman whose program is in
 * PATH.  0 and *got, or -1 with err saying which program was not found. */
int container_image_runtime(int wanted, int *got, struct sbuf *err);

#endif
