#!/usr/bin/env bats
# lint.bats - `make lint` fails where it should: an include against the
# layers (tests/lint-layers.sh), inside launcher/ from concern to concern
# as well, a call against them between the per-folder archives, and a
# source the build would leave unbuilt or list by hand
# (tests/lint-build.sh), and a file in cli/ that is no command, or a
# command grown too long (tests/lint-cli.sh), a file opened past
# common/fileio.c's checked opener (tests/lint-open.sh), and an encoder
# whose failure is dropped (tests/lint-encode.sh).  Each case
# plants one offence in a copy of the tree and checks the offence is
# named.

load common

ROOT=$BATS_TEST_DIRNAME/../..

setup() {
	T=$BATS_TEST_TMPDIR/tree
	mkdir -p "$T"
	cp -r "$ROOT"/cli "$ROOT"/common "$ROOT"/launcher "$ROOT"/topology "$ROOT"/trainer "$T"
}

@test "the tree as it is passes both checks, and so do its built archives" {
	run -0 sh "$ROOT/tests/lint-layers.sh" "$T"
	run -0 sh "$ROOT/tests/lint-build.sh" "$T"
	run -0 sh "$ROOT/tests/lint-cli.sh" "$T"
	run -0 sh "$ROOT/tests/lint-open.sh" "$T"
	run -0 sh "$ROOT/tests/lint-encode.sh" "$T"
	[ -d "$ROOT/build/lib" ] || skip "the archives are not built"
	run -0 sh "$ROOT/tests/lint-layers.sh" "$ROOT"
	[ -z "$output" ]
}

@test "a call against the layers between two archives is named, as an include is" {
	mkdir -p "$T/build/lib" "$T/o"
	printf 'int rundir_planted(void) { return 1; }\n' >"$T/o/rundir_planted.c"
	printf 'int rundir_planted(void);\nint render_planted(void) { return rundir_planted(); }\n' \
		>"$T/o/render_planted.c"
	cc -c -o "$T/o/rundir_planted.o" "$T/o/rundir_planted.c"
	cc -c -o "$T/o/render_planted.o" "$T/o/render_planted.c"
	ar rcs "$T/build/lib/launcher_runs.a" "$T/o/rundir_planted.o"
	ar rcs "$T/build/lib/launcher_slurm.a" "$T/o/render_planted.o"
	run -1 sh "$ROOT/tests/lint-layers.sh" "$T"
	[ "$output" = "build/lib/launcher_slurm.a(render_planted.o): calls rundir_planted of launcher/runs/rundir_planted.o (a higher layer)" ]
	# the other way round is the layers' own direction
	rm "$T"/build/lib/*.a
	ar rcs "$T/build/lib/launcher_slurm.a" "$T/o/rundir_planted.o"
	ar rcs "$T/build/lib/launcher_runs.a" "$T/o/render_planted.o"
	run -0 sh "$ROOT/tests/lint-layers.sh" "$T"
}

@test "two files that call each other are named, as an include circle is" {
	mkdir -p "$T/build/lib" "$T/o"
	printf 'int ping_b(int);\nint ping_a(int n) { return n ? ping_b(n - 1) : 0; }\n' >"$T/o/ping_a.c"
	printf 'int ping_a(int);\nint ping_b(int n) { return n ? ping_a(n - 1) : 1; }\n' >"$T/o/ping_b.c"
	cc -c -o "$T/o/ping_a.o" "$T/o/ping_a.c"
	cc -c -o "$T/o/ping_b.o" "$T/o/ping_b.c"
	ar rcs "$T/build/lib/launcher_runs.a" "$T/o/ping_a.o" "$T/o/ping_b.o"
	run -1 sh "$ROOT/tests/lint-layers.sh" "$T"
	[[ "$output" == "call circle through launcher/runs/ping_"[ab]".o" ]]
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

@test "a source left out of the archives and unbuilt, a gone one, or one listed by hand is named" {
	touch "$T/launcher/runs/bench_orphan.c"
	rm "$T/trainer/cuda/model_cuda.c"
	echo 'UNIT_SRC_test_x = launcher/runs/progress.c' >>"$T/launcher/runs/build.mk"
	run -1 sh "$ROOT/tests/lint-build.sh" "$T"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = 'launcher/runs/bench_orphan.c: out of the archives, and launcher/runs/build.mk builds no $(OBJ)/launcher/runs/bench_orphan.o' ]
	[ "${lines[1]}" = "launcher/runs/build.mk: names launcher/runs/progress.c, which its folder's archive holds: link the archives instead" ]
	[ "${lines[2]}" = "trainer/build.mk: names trainer/cuda/model_cuda.c, which does not exist" ]
}

@test "cli/ refuses a helper file beside the commands, and a command over 450 lines" {
	printf '/* a helper */\n' >"$T/cli/submit_helper.c"
	printf '/* a header */\n' >"$T/cli/submit_helper.h"
	yes '/* padding */' | head -n 451 >>"$T/cli/cmd_cancel.c"
	run -1 sh "$ROOT/tests/lint-cli.sh" "$T"
	[ "${#lines[@]}" -eq 3 ]
	[[ "${lines[0]}" == "cli/cmd_cancel.c: "*" lines, over 450: move its logic to a library folder" ]]
	[ "${lines[1]}" = "cli/submit_helper.c: cli/ holds commands only (cmd_*.c, main.c, *_main.c): move it to a library folder" ]
	[ "${lines[2]}" = "cli/submit_helper.h: cli/ holds commands only (cmd_*.c, main.c, *_main.c): move it to a library folder" ]
}

@test "a bare fopen of a run's file is named, and one that says why it may is not" {
	sed -i '$a static FILE *planted(const char *p) { return fopen(p, "r"); }' \
		"$T/launcher/shape/shape_history.c"
	run -1 sh "$ROOT/tests/lint-open.sh" "$T"
	n=$(wc -l <"$T/launcher/shape/shape_history.c")
	[ "$output" = "launcher/shape/shape_history.c:$n: opens a file past common/fileio.c: use fileio_open_regular or fileio_read, or say why not in an open-ok: comment" ]
	sed -i '$s|$| /* open-ok: a test of the lint */|' "$T/launcher/shape/shape_history.c"
	run -0 sh "$ROOT/tests/lint-open.sh" "$T"
	# an open(2) in a comment is no call, nor is a directory's
	printf '/* open(2) of it */\nint d(void) { return open(".", O_RDONLY | O_DIRECTORY); }\n' \
		>>"$T/launcher/shape/shape_history.c"
	run -0 sh "$ROOT/tests/lint-open.sh" "$T"
}

@test "an encoder whose failure is dropped is named: a bare snprintf, an unchecked set of a json_pack" {
	f=$T/launcher/runs/runref.c
	printf 'static void planted(char *b, const char *d) {\n\tsnprintf(b, 8, "%%s/x", d);\n}\n' >>"$f"
	n=$(wc -l <"$f")
	printf 'static void planted2(json_t *o, const char *s) {\n\tjson_object_set_new(o, "k",\n\t\t\t    json_pack("{s:s}", "v", s));\n}\n' >>"$f"
	run -1 sh "$ROOT/tests/lint-encode.sh" "$T"
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "launcher/runs/runref.c:$((n - 1)): ignores whether snprintf fit: use strfmt (a path, a command, a record) or strfmt_label (text for people), or say why in an encode-ok: comment" ]
	[ "${lines[1]}" = "launcher/runs/runref.c:$((n + 2)): ignores whether json_object_set_new took its value (a json_pack or json_string that fails on a string that is not UTF-8): use jsonb_set or jsonb_append, or say why in an encode-ok: comment" ]
	# said why, checked, or a value that cannot fail: none is named
	cp "$ROOT/launcher/runs/runref.c" "$f"
	printf 'static int ok(char *b, json_t *o, const char *d) {\n\t/* encode-ok: a test of the lint */\n\tsnprintf(b, 8, "%%s", d);\n\tjson_object_set_new(o, "n", json_integer(1));\n\tif (snprintf(b, 8, "%%s", d) >= 8)\n\t\treturn -1;\n\treturn json_object_set_new(o, "k", json_string(d));\n}\n' >>"$f"
	run -0 sh "$ROOT/tests/lint-encode.sh" "$T"
}
