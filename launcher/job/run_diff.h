/* run_diff.h - what differs between two runs, section by section: the
 * document `hpctrain diff` prints, as text (run_diff_text.h) or as JSON.
 *
 * Shell: reads each run's resolved.yaml, code.json, software.json,
 * nodes.json and the tail of its metrics.jsonl.  The document:
 *
 *   {"a": DIR_A, "b": DIR_B, "same": BOOL,
 *    "spec":     [{"key", "a", "b"}]  resolved spec keys that differ, in the
 *                spec's order, as flat keys (train.optimizer.lr) and their
 *                YAML text; a or b null where that run lacks the key.
 *                Keys a later section shows are left out (container.digest,
 *                data.stage[i]'s pinned manifest, bytes, is_file, packed;
 *                code.digest, environment.venv_digest).
 *    "code":     code_diff.h's section, or null
 *    "venv":     [{"key": NAME, "a", "b"}]: environment.venv's packages
 *                whose versions differ (software.json's venv.packages; a
 *                or b null: installed in one run only)
 *    "image":    {"a", "b"}: container.digest, when it differs; else null
 *    "data":     [{"entry", "a", "b"}]: data.stage entries whose manifests
 *                differ (a or b null: the entry is only in one run;
 *                "(not pinned)": an entry no validate or submit pinned)
 *    "versions": [{"key", "a", "b"}]: versions that differ, from
 *                software.json: "hpctrain", "onednn" (null: no record,
 *                or not the bundled trainer), "module NAME" for each
 *                module loaded at job start
 *    "shape":    [{"key", "a", "b"}]: nodes, ranks_per_node, world_size and
 *                global_batch that differ (what nodes.json says the attempt
 *                got, else the spec)
 *    "kernels":  [{"key", "a", "b"}]: "isa" and "kernels" from software.json
 *                when they differ (what the trainer ran)
 *    "metrics":  [{"key", "a", "b"}]: every figure of each run's final
 *                summary record, side by side; [] when neither has one}
 *
 * Every value is text (a or b, null when absent).  "same" is true when
 * no section but kernels and metrics has anything: they are results, not
 * inputs (tuning by measurement may pick other kernels, and two runs of
 * the same inputs differ in their timings).
 */
#ifndef HPT_RUN_DIFF_H
#define HPT_RUN_DIFF_H

#include <jansson.h>

struct sbuf;

/* Compares the run (or attempt) directories dir_a and dir_b, absolute
 * paths as runref resolves them.  0 with *out (a new reference), or
 * HPT_EXIT_NO_INPUT (a resolved.yaml missing or unreadable) or
 * HPT_EXIT_BAD_SPEC (one that is no YAML) with err naming the file. */
int run_diff(const char *dir_a, const char *dir_b, json_t **out, struct sbuf *err);

#endif
