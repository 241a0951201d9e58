#!/bin/sh
# lint-layers.sh - the include rule of the tree, checked: dependencies
# point one way, commands -> launcher/topology/trainer -> spec -> base,
# and inside launcher/ from concern to concern (doctor -> runs -> slurm,
# doctor -> rank -> topology, doctor -> container; supervise, report and
# container stand apart from the rest; so does stage); and no
# header includes itself through others.  Prints each offence as
# FILE:LINE and exits 1 when there is one.
#
#   cli/                 may include anything
#   launcher/job/        common/, topology/, launcher/ (what the login-node
#                        commands do across the concerns below)
#   launcher/launch/     common/, topology/,
#                        launcher/{rank,runs,slurm,container,supervise,stage,launch}/
#   launcher/doctor/     common/, topology/, launcher/{rank,runs,slurm,container,doctor}/,
#                        launcher/stage/stage_path.h, launcher/supervise/liveness.h
#   launcher/runs/       common/, launcher/{slurm,runs}/
#   launcher/slurm/      common/, launcher/slurm/
#   launcher/rank/       common/, topology/, launcher/rank/, launcher/stage/stage_path.h
#   launcher/supervise/  common/, launcher/supervise/
#   launcher/report/     common/, launcher/report/
#   launcher/container/  common/, launcher/container/
#   launcher/stage/      common/, launcher/stage/
#   launcher/shape/      common/, launcher/shape/, launcher/report/report_data.h,
#                        launcher/runs/attempt_size.h
#   trainer/             common/, trainer/
#   topology/            common/, topology/
#   common/spec/         common/, common/spec/
#   common/              common/ (not common/spec/)
# (common/ above includes common/spec/.)  Nothing sits in launcher/ itself.
# launcher/stage/stage_path.h is the one header of the stage engine that
# a rank and doctor's preflight read: pure, it says where a staged entry
# is on a node, so neither can disagree with the stage step that put it
# there.  The variable that names the entry is the spec's
# (spec_stage_env_name), so the bundled trainer reads it without them.
# launcher/shape/ (hpctrain plan's model) reads past runs' metrics.jsonl
# through report's parser, pure, so plan and report read it alike, and
# the nodes an attempt ran on through attempt_size.h, so plan files a
# shrunk attempt under the shape status shows for it.
#
# The same rule holds for links: where the per-folder archives are built
# (ROOT/build/lib, see the Makefile), each archive's undefined symbols
# are looked up in the others' definitions (nm), and a member that calls
# into a folder it may not include is named as
#   build/lib/A.a(member.o): calls SYMBOL of folder/file.o (a higher layer)
# A symbol defined in a file counts as that file's header: rank/ may
# call launcher/stage/stage_path.o, as it may include stage_path.h.  And
# no two files call each other, directly or around a circle:
#   call circle through folder/file.o
#
# Usage: sh tests/lint-layers.sh [ROOT]   (ROOT defaults to .)
cd "${1:-.}" || exit 2
LAYERS='
function layer_allows(file, inc) {
	if (file ~ /^cli\//) return 1
	if (file ~ /^common\/spec\//) return inc ~ /^common\//
	if (file ~ /^common\//) return inc ~ /^common\// && inc !~ /^common\/spec\//
	if (file ~ /^topology\//) return inc ~ /^(common|topology)\//
	if (file ~ /^trainer\//) return inc ~ /^(common|trainer)\//
	if (file ~ /^launcher\/job\//) return inc ~ /^(common|topology|launcher)\//
	if (file ~ /^launcher\/launch\//)
		return inc ~ /^(common|topology|launcher\/(rank|runs|slurm|container|supervise|stage|launch))\//
	if (file ~ /^launcher\/doctor\//)
		return inc ~ /^(common|topology|launcher\/(rank|runs|slurm|container|doctor))\// ||
		       inc == "launcher/stage/stage_path.h" || inc == "launcher/supervise/liveness.h"
	if (file ~ /^launcher\/runs\//) return inc ~ /^(common|launcher\/(slurm|runs))\//
	if (file ~ /^launcher\/slurm\//) return inc ~ /^(common|launcher\/slurm)\//
	if (file ~ /^launcher\/rank\//)
		return inc ~ /^(common|topology|launcher\/rank)\// || inc == "launcher/stage/stage_path.h"
	if (file ~ /^launcher\/supervise\//) return inc ~ /^(common|launcher\/supervise)\//
	if (file ~ /^launcher\/report\//) return inc ~ /^(common|launcher\/report)\//
	if (file ~ /^launcher\/container\//) return inc ~ /^(common|launcher\/container)\//
	if (file ~ /^launcher\/stage\//) return inc ~ /^(common|launcher\/stage)\//
	if (file ~ /^launcher\/shape\//)
		return inc ~ /^(common|launcher\/shape)\// || inc == "launcher/report/report_data.h" ||
		       inc == "launcher/runs/attempt_size.h"
	return 0
}
# Depth-first search over edges[node] (the nodes it points to, space-
# separated): a grey node met again closes a circle, named as
# "KIND circle through NODE".
function visit(h, kind,    n, i, list) {
	if (color[h] == 2) return
	if (color[h] == 1) {
		printf "%s circle through %s\n", kind, h
		bad = 1
		return
	}
	color[h] = 1
	n = split(edges[h], list, " ")
	for (i = 1; i <= n; i++) visit(list[i], kind)
	color[h] = 2
}
'

find common cli launcher topology trainer -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' | sort |
xargs awk "$LAYERS"'
/^[ \t]*#[ \t]*include[ \t]*"/ {
	inc = $0
	sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
	if (inc !~ /\//) next              # a system or sibling-less header
	if (!layer_allows(FILENAME, inc)) {
		printf "%s:%d: %s may not include %s (a higher layer)\n", FILENAME, FNR, FILENAME, inc
		bad = 1
	}
	if (FILENAME ~ /\.h$/) edges[FILENAME] = edges[FILENAME] " " inc
}
END {
	for (k in edges) visit(k, "include")
	exit bad
}' || exit 1

# Links: "archive:member:address type symbol" from nm -A, definitions
# first, then each archive's undefined symbols.
[ -d build/lib ] || exit 0
set -- build/lib/*.a
[ -f "$1" ] || exit 0
{ nm -A --defined-only -g "$@" 2>/dev/null | sed 's/^/D /'
  nm -A -u "$@" 2>/dev/null | sed 's/^/U /'; } |
awk "$LAYERS"'
# The folder of an archive: build/lib/launcher_runs.a -> launcher/runs.
function folder(a) {
	sub(/^build\/lib\//, "", a); sub(/\.a$/, "", a); gsub(/_/, "/", a)
	return a
}
{
	split($2, at, ":")               # archive, member, (address)
	sym = $NF
	if ($1 == "D") {
		if ($(NF - 1) ~ /^[VvWw]$/) next    # weak: no owner
		if (!(sym in owner)) owner[sym] = folder(at[1]) "/" at[2]
		next
	}
	if (!(sym in owner)) next              # a library outside the tree
	user = folder(at[1]) "/" at[2]
	def = owner[sym]
	if (def != user && !((user, def) in calls)) {
		calls[user, def] = 1
		edges[user] = edges[user] " " def
	}
	ddir = def; sub(/\/[^\/]*$/, "", ddir)
	if (ddir == folder(at[1])) next        # within its own folder
	hdr = def; sub(/\.o$/, ".h", hdr)
	src = user; sub(/\.o$/, ".c", src)
	if (!layer_allows(src, hdr)) {
		printf "%s(%s): calls %s of %s (a higher layer)\n", at[1], at[2], sym, def
		bad = 1
	}
}
# No circle of calls between files either, as between headers: each
# file calls down, never back into one that calls it.
END {
	for (f in edges) visit(f, "call")
	exit bad
}'
