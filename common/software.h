/* software.h - the software a run ran with, in one record: each
 * attempt's software.json (RUNFILE_SOFTWARE), one JSON object whose
 * keys are written by whoever knows them, when they know them:
 *
 *   "hpctrain":  the version that submitted (submit, rerun, a sweep)
 *   "venv":      environment.venv's packages, {"path", "digest",
 *                "packages": {NAME: VERSION}} (launcher/job/venv_pin.h),
 *                or null
 *   "modules":   the modules loaded at job start, [{"name", "version",
 *                "file"}] (hpctrain launch, rank 0; launcher/launch)
 *   "onednn", "isa", "kernels": the bundled trainer's library version,
 *                the instruction set its kernels use and what each layer
 *                runs (the trainer, rank 0)
 *
 * and `hpctrain diff` reads them from here.  Every key goes through
 * software_record_add, the one writer.
 * Shell: reads and rewrites the file.
 */
#ifndef HPT_SOFTWARE_H
#define HPT_SOFTWARE_H

#include <jansson.h>

struct sbuf;

#define SOFTWARE_RECORD_MAX (16u << 20) /* a venv of thousands of packages, and room */

/* Merges the keys of fields (an object; the reference is stolen) into
 * DIR/software.json, creating it: read (a regular file this user owns,
 * never through a link), updated, written atomically (0600).  No lock:
 * the writers of one attempt run one after another (submit before the
 * job exists; launch before it execs the trainer).  0, or -1 with err. */
int software_record_add(const char *dir, json_t *fields, struct sbuf *err);

#endif
