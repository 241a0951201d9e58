#!/usr/bin/env bats
# environment.bats - a spec's environment section (modules and venv) run
# for real: Debian's Lmod (the lmod package), module files of the test's
# own in a MODULEPATH it makes, and the local Slurm (tests/cluster, one
# node).  The batch script loads what the spec names before any step;
# MODULEPATH reaches it from the submitting environment, as it would
# from sbatch --export=ALL.  Validation and --dry-run need no cluster.

load common
load slurm_cluster

# Module files of the test's own, one Lua (Lmod's own format) and one
# Tcl (what Environment Modules sites have), each setting a variable.
make_modules() { # DIR
	mkdir -p "$1/hptlua" "$1/hpttcl"
	printf 'setenv("HPT_LUA_MOD", "lua 1.0 loaded")\n' >"$1/hptlua/1.0.lua"
	printf '#%%Module1.0\nsetenv HPT_TCL_MOD "tcl 2.0 loaded"\n' >"$1/hpttcl/2.0"
	export MODULEPATH=$1
}

need_lmod() {
	[ -r /usr/share/lmod/lmod/init/bash ] || skip "no Lmod (Debian package lmod)"
	# the test's own module system, not one the caller's shell defined
	unset -f module 2>/dev/null || true
	unset LMOD_PKG MODULESHOME
}

@test "validate refuses module names a shell or module could read as more than a name" {
	cd "$BATS_TEST_TMPDIR"
	printf 'version: 1\nname: m\nenvironment:\n  modules: [gcc, "$(touch x)"]\n' >a.yaml
	run -3 --separate-stderr "$HPT" validate a.yaml
	[ "${stderr_lines[0]}" = "a.yaml:4:18: environment.modules: item 2, \"\$(touch x)\", must start with a letter or digit" ]
	printf 'version: 1\nname: m\nenvironment: {modules: ["gcc\\nid"], venv: rel/v}\n' >b.yaml
	run -3 --separate-stderr "$HPT" validate b.yaml
	[ "${stderr_lines[0]}" = "b.yaml:3:25: environment.modules: item 1, \"gcc\\nid\", may hold only letters, digits and . _ + - / @ :" ]
	[ "${stderr_lines[1]}" = "b.yaml:3:43: environment.venv: \"rel/v\" must be an absolute path" ]
	# pasted into PATH: /opt/a and a relative b/bin
	printf 'version: 1\nname: m\nenvironment: {venv: "/opt/a:b"}\n' >c.yaml
	run -3 --separate-stderr "$HPT" validate c.yaml
	[ "${stderr_lines[0]}" = "c.yaml:3:21: environment.venv: \"/opt/a:b\" must not hold ':', which splits PATH, PYTHONPATH and a container's binds" ]
	[ ! -e x ]
}

# fake_venv DIR NAME=VERSION...: a venv as its metadata says it is: one
# *.dist-info/METADATA a package (what pip writes; no pip needed to read it).
fake_venv() {
	local dir=$1 p site
	shift
	site=$dir/lib/python3.11/site-packages
	mkdir -p "$dir/bin" "$site"
	for p in "$@"; do
		mkdir -p "$site/${p%%=*}-${p#*=}.dist-info"
		printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n\nName: body\n' "${p%%=*}" "${p#*=}" \
			>"$site/${p%%=*}-${p#*=}.dist-info/METADATA"
	done
}

@test "submit --dry-run shows each module load and the venv on PATH before the step" {
	cd "$BATS_TEST_TMPDIR"
	local venv="$BATS_TEST_TMPDIR/it's venv"
	fake_venv "$venv"
	write_spec job.yaml env 1 1 '[true]' \
		"environment: {modules: [hptlua/1.0, \"hpttcl/2.0\"], venv: \"$venv\"}"
	run -0 "$HPT" submit --dry-run job.yaml
	printf '%s\n' "$output" | bash -n
	printf '%s\n' "$output" | grep -qxF "module load 'hptlua/1.0' && module is-loaded 'hptlua/1.0' || {"
	printf '%s\n' "$output" | grep -qxF "module load 'hpttcl/2.0' && module is-loaded 'hpttcl/2.0' || {"
	printf '%s\n' "$output" | grep -qxF "export VIRTUAL_ENV='$BATS_TEST_TMPDIR/it'\\''s venv'"
	printf '%s\n' "$output" | grep -qxF 'export PATH="$VIRTUAL_ENV/bin:$PATH"'
	[ "$(printf '%s\n' "$output" | grep -n -m1 '^module load' | cut -d: -f1)" -lt \
	  "$(printf '%s\n' "$output" | grep -n -m1 '^[[:space:]]*srun' | cut -d: -f1)" ]
	run -0 "$HPT" validate --print-resolved job.yaml
	[[ "$output" == *$'environment:\n  modules:\n  - "hptlua/1.0"\n  - "hpttcl/2.0"\n  venv: "'"$venv"$'"\n  venv_digest: "sha256:'* ]]
}

@test "validate pins the venv's packages: one version changed is another hash; a missing venv is refused" {
	cd "$BATS_TEST_TMPDIR"
	fake_venv v1 numpy=1.24.2 torch=2.1.0
	fake_venv v2 numpy=1.24.3 torch=2.1.0
	write_spec a.yaml v 1 1 '[true]' "environment: {venv: $PWD/v1}"
	write_spec b.yaml v 1 1 '[true]' "environment: {venv: $PWD/v2}"
	run -0 "$HPT" validate a.yaml
	local first=${output##* }
	run -0 --separate-stderr "$HPT" validate --print-resolved a.yaml
	[ "$(grep -c venv_digest <<<"$output")" = 1 ]
	local digest_a=$(sed -n 's/^  venv_digest: //p' <<<"$output")
	run -0 --separate-stderr "$HPT" validate --print-resolved b.yaml
	[ "$(sed -n 's/^  venv_digest: //p' <<<"$output")" != "$digest_a" ]
	# v1 made like v2: a.yaml's hash changes with it
	mv v1/lib/python3.11/site-packages/numpy-1.24.2.dist-info v1/lib/python3.11/site-packages/numpy-1.24.3.dist-info
	sed -i 's/^Version: 1.24.2$/Version: 1.24.3/' v1/lib/python3.11/site-packages/numpy-1.24.3.dist-info/METADATA
	run -0 "$HPT" validate a.yaml
	[ "${output##* }" != "$first" ]
	write_spec c.yaml v 1 1 '[true]' "environment: {venv: $PWD/gone}"
	run -4 --separate-stderr "$HPT" validate c.yaml
	[ "$stderr" = "hpctrain validate: cannot read environment.venv $PWD/gone: No such file or directory" ]
}

@test "modules of the test's own load in the batch script and their variables reach every rank" {
	need_slurm
	need_lmod
	make_modules "$BATS_TEST_TMPDIR/modules"
	write_spec job.yaml mods 1 2 '[sh, -c, "echo \"$SLURM_PROCID: $HPT_LUA_MOD, $HPT_TCL_MOD\""]' \
		'environment: {modules: [hptlua/1.0, hpttcl]}'
	submit_json job.yaml
	run "$HPT" status --wait "$JOB"
	[ "$status" -eq 0 ] || { cat "$DIR"/logs/*; false; }
	[ "$(grep -v warning "$DIR/logs/rank-0.out")" = "0: lua 1.0 loaded, tcl 2.0 loaded" ]
	[ "$(grep -v warning "$DIR/logs/rank-1.out")" = "1: lua 1.0 loaded, tcl 2.0 loaded" ]
	# the versions module list names, hpttcl's default resolved, in the attempt's record
	jq -e --arg m "$BATS_TEST_TMPDIR/modules" '.modules == [
		{"name": "hptlua", "version": "1.0", "file": ($m + "/hptlua/1.0.lua")},
		{"name": "hpttcl", "version": "2.0", "file": ($m + "/hpttcl/2.0")}]' "$DIR/software.json"
}

@test "a module that does not load fails the job at the start, named in the batch log, and nothing runs" {
	need_slurm
	need_lmod
	make_modules "$BATS_TEST_TMPDIR/modules"
	write_spec job.yaml nomod 1 1 '[sh, -c, "echo ran"]' \
		'environment: {modules: [hptlua/1.0, nosuch/9.9, hpttcl/2.0]}'
	submit_json job.yaml
	run -1 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "FAILED" and .jobs[0].exit_code == 4' <<<"$output"
	grep -qxF 'hpctrain: module nosuch/9.9 did not load' "$DIR"/logs/batch-*.out
	run ! grep -q 'hptlua/1.0 did not load\|hpttcl' "$DIR"/logs/batch-*.out
	[ ! -e "$DIR/logs/rank-0.out" ]
}

@test "a venv's bin comes first on PATH in every rank, with VIRTUAL_ENV set and nothing sourced" {
	need_slurm
	venv="$BATS_TEST_TMPDIR/my venv"
	fake_venv "$venv" hptpkg=0.1
	printf '#!/bin/sh\necho "probe from the venv"\n' >"$venv/bin/hpt-venv-probe"
	chmod +x "$venv/bin/hpt-venv-probe"
	# an activate script that would leave a mark if anything sourced it
	printf 'touch "%s/sourced"\n' "$BATS_TEST_TMPDIR" >"$venv/bin/activate"
	write_spec job.yaml venv 1 2 \
		'[sh, -c, "echo \"$VIRTUAL_ENV|$${PATH%%:*}|$${PYTHONHOME-unset}\"; hpt-venv-probe"]' \
		"environment: {venv: \"$venv\"}"
	PYTHONHOME=/nowhere submit_json job.yaml
	# the packages, recorded at submit beside the version that submitted
	jq -e --arg v "$venv" '.venv.path == $v and .venv.packages == {"hptpkg": "0.1"} and
		(.hpctrain | length > 0)' "$DIR/software.json"
	run "$HPT" status --wait "$JOB"
	[ "$status" -eq 0 ] || { cat "$DIR"/logs/*; false; }
	for r in 0 1; do
		[ "$(grep -v warning "$DIR/logs/rank-$r.out")" = "$venv|$venv/bin|unset"$'\n'"probe from the venv" ] ||
			{ cat "$DIR/logs/rank-$r.out"; false; }
	done
	[ ! -e "$BATS_TEST_TMPDIR/sourced" ]
}

@test "a venv without a bin directory fails the job at the start, naming it" {
	need_slurm
	mkdir -p "$BATS_TEST_TMPDIR/empty"
	write_spec job.yaml novenv 1 1 '[sh, -c, "echo ran"]' \
		"environment: {venv: \"$BATS_TEST_TMPDIR/empty\"}"
	submit_json job.yaml
	run -1 "$HPT" status --wait --json "$JOB"
	jq -e '.jobs[0].state == "FAILED" and .jobs[0].exit_code == 4' <<<"$output"
	grep -qxF "hpctrain: environment.venv $BATS_TEST_TMPDIR/empty has no bin directory" "$DIR"/logs/batch-*.out
	[ ! -e "$DIR/logs/rank-0.out" ]
}

# env_block FILE: the environment lines of FILE's --dry-run script, into
# block.sh, to run without Slurm.
env_block() {
	"$HPT" submit --dry-run "$1" | sed -n '/^# environment:/,/^set -u$/p' >block.sh
	[ -s block.sh ]
}

@test "a node without a module command ends the script with status 5 and one line" {
	[ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null || skip "needs root and unshare"
	cd "$BATS_TEST_TMPDIR"
	write_spec job.yaml nocmd 1 1 '[true]' 'environment: {modules: [hptlua/1.0]}'
	env_block job.yaml
	mkdir empty
	# Debian's Lmod hidden in a mount namespace of this test's own
	run -5 --separate-stderr unshare -m bash -c \
		'mount --bind empty /usr/share/lmod && env -i PATH=/usr/bin:/bin bash -c "set -u; . ./block.sh"'
	[ "$stderr" = "hpctrain: environment.modules is set but this node has no module command" ]
}

@test "the site's own module function is used first, then the init script of LMOD_PKG" {
	cd "$BATS_TEST_TMPDIR"
	write_spec job.yaml site 1 1 '[true]' 'environment: {modules: [gcc/12.2]}'
	env_block job.yaml
	module() { echo "site module $*"; }
	export -f module
	# an init script that exists would be sourced only without the function
	mkdir -p lmod/init
	printf 'module() { echo "init module $*"; }\n' >lmod/init/bash
	LMOD_PKG=$PWD/lmod run -0 --separate-stderr bash -c 'set -u; . ./block.sh'
	[ "$output" = $'site module load gcc/12.2\nsite module is-loaded gcc/12.2' ]
	# without it, $LMOD_PKG's init script before Debian's
	unset -f module
	LMOD_PKG=$PWD/lmod run -0 --separate-stderr bash -c 'set -u; . ./block.sh'
	[ "$output" = $'init module load gcc/12.2\ninit module is-loaded gcc/12.2' ]
}
