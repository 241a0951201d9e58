#!/usr/bin/env bats
# lint.bats - `make lint` fails where it should: an include against the
# layers (tests/lint-layers.sh), inside launcher/ from concern to concern
# as well, and a source its folder's build.mk does not list
# (tests/lint-build.sh).  Each case plants one offence in a copy of the
# tree and checks the offence is named.

load common

ROOT=$BATS_TEST_DIRNAME/../..

setup() {
	T=$BATS_TEST_TMPDIR/tree
	mkdir -p "$T"
	cp -r "$ROOT"/cli "$ROOT"/common "$ROOT"/launcher "$ROOT"/topology "$ROOT"/trainer "$T"
}

@test "the tree as it is passes both checks" {
	run -0 sh "$ROOT/tests/lint-layers.sh" "$T"
	run -0 sh "$ROOT/tests/lint-build.sh" "$T"
}

@test "slurm/ may not include runs/, nor runs/ doctor/: the concerns of launcher/ point one way" {
	sed -i '1a #include "launcher/runs/rundir.h"' "$T/launcher/slurm/render.c"
	run -1 sh "$ROOT/tests/lint-layers.sh" "$T"
	[ "$output" = "launcher/slurm/render.c:2: launcher/slurm/render.c may not include launcher/runs/rundir.h (a higher layer)" ]
	cp "$ROOT/launcher/slurm/render.c" "$T/launcher/slurm/render.c"
	sed -i '1a #include "launcher/doctor/ledger.h"' "$T/launcher/runs/progress.c"
	run -1 sh "$ROOT/tests/lint-layers.sh" "$T"
	[[ "$output" == *"launcher/runs/progress.c:2: launcher/runs/progress.c may not include launcher/doctor/ledger.h"* ]]
}

@test "supervise/ and report/ stand apart; rank/ may use topology/, slurm/ may not" {
	sed -i '1a #include "launcher/report/chart.h"' "$T/launcher/supervise/liveness.c"
	sed -i '1a #include "launcher/rank/rank.h"' "$T/launcher/report/chart.c"
	sed -i '1a #include "topology/plan.h"' "$T/launcher/slurm/slurm.c"
	run -1 sh "$ROOT/tests/lint-layers.sh" "$T"
	[ "${#lines[@]}" -eq 3 ]
	[[ "$output" == *"launcher/supervise/liveness.c:2: "* ]]
	[[ "$output" == *"launcher/report/chart.c:2: "* ]]
	[[ "$output" == *"launcher/slurm/slurm.c:2: "* ]]
}

@test "a file left in launcher/ itself, outside every concern, is refused" {
	printf '#include "common/sbuf.h"\n' >"$T/launcher/loose.c"
	run -1 sh "$ROOT/tests/lint-layers.sh" "$T"
	[ "$output" = "launcher/loose.c:1: launcher/loose.c may not include common/sbuf.h (a higher layer)" ]
}

@test "a source its folder's build.mk does not list, or a listed one that is gone, is named" {
	touch "$T/launcher/runs/orphan.c"
	rm "$T/launcher/runs/progress.c"
	run -1 sh "$ROOT/tests/lint-build.sh" "$T"
	[[ "$output" == *"launcher/runs/orphan.c: not listed in launcher/runs/build.mk"* ]]
	[[ "$output" == *"launcher/runs/build.mk: names launcher/runs/progress.c, which does not exist"* ]]
}
