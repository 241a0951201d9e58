/* fuzz_spec.c - libFuzzer target for the job spec core.
 *
 * Beyond "no crash, no leak, no UB", it checks the property the run hash
 * rests on: a spec that loads resolves to text that loads again to the
 * same text.  Build and run with `make fuzz`; `make check` replays the
 * seed corpus in tests/fuzz/corpus. */
#include "common/diag.h" // defines: struct diag_list
#include "common/sbuf.h" // defines: struct sbuf
#include "common/spec/spec.h" // defines: spec_load, spec_emit_resolved

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf first = SBUF_INIT, second = SBUF_INIT;
	struct job job, again;

	if (!spec_load("fuzz.yaml", (const char *)data, size, NULL, 0, &job, &dl)) {
		if (spec_emit_resolved(&job, &first))
			abort();
		if (spec_load("resolved.yaml", first.buf, first.len, NULL, 0, &again, &dl))
			abort();
		if (spec_emit_resolved(&again, &second) || strcmp(first.buf, second.buf))
			abort();
		job_release(&again);
	}
	job_release(&job);
	diag_list_release(&dl);
	sbuf_release(&first);
	sbuf_release(&second);
	return 0;
}
