#!/usr/bin/env bats
# report.bats - `hpctrain report` on runs the trainer makes here (one rank,
# and two under mpirun) and on a sweep record of them: the PNGs, their
# size, report.md and the summary; and its errors.

load common

setup() {
	W=$BATS_TEST_TMPDIR
	export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

# A finished run of the trainer: DIR LR [RANKS]
train_run() {
	cat >"$W/s-$2.yaml" <<SPEC
version: 1
name: rep
resources: {ranks_per_node: ${3:-1}}
train: {model: cnn, dataset: synthetic, epochs: 1, max_steps: 40, batch_per_rank: 16,
        optimizer: {name: sgd, lr: $2}}
output: {log_every_steps: 2}
SPEC
	if [ "${3:-1}" -gt 1 ]; then
		command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin)"
		mpirun --oversubscribe --bind-to none -np "$3" "$HPT" train -q --run "$1" "$W/s-$2.yaml" >/dev/null
	else
		"$HPT" train -q --run "$1" "$W/s-$2.yaml" >/dev/null
	fi
}

# WIDTHxHEIGHT of a PNG, from its IHDR chunk; fails for anything else.
png_size() {
	[ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
	od -An -tu1 -j16 -N8 "$1" |
		awk '{ print $1*16777216 + $2*65536 + $3*256 + $4 "x" $5*16777216 + $6*65536 + $7*256 + $8 }'
}

@test "report of a two-rank run draws loss, accuracy, each rank's samples/s, communication and lr at the stated size" {
	train_run "$W/run" 0.05 2
	run -0 "$HPT" report --size 800x450 "$W/run"
	[ "${lines[0]}" = "run $W/run" ]
	[[ "$output" == *"samples/s of each of 2 ranks at every logged step"* ]]
	[[ "$output" == *"final: test accuracy "* ]]
	for c in loss accuracy throughput comm lr; do
		[ "$(png_size "$W/run/report/$c.png")" = 800x450 ]
		grep -q "($c.png)" "$W/run/report/report.md"
	done
}

@test "report of a one-rank run by its run directory; -o puts the files elsewhere" {
	train_run "$W/one" 0.05
	run -0 "$HPT" report -o "$W/out" "$W/one"
	[ "$(png_size "$W/out/loss.png")" = 960x540 ]
	[ -s "$W/out/report.md" ]
	[ ! -e "$W/one/report" ]
}

@test "report of a sweep record draws the final metrics per parameter and the scaling against ranks" {
	mkdir -p "$W/runs/rep"
	train_run "$W/runs/rep/aaaaaaaaaaaa" 0.05 1
	train_run "$W/runs/rep/bbbbbbbbbbbb" 0.05 2
	train_run "$W/runs/rep/cccccccccccc" 0.1 1
	cat >"$W/runs/rep/sweep-0123456789ab.json" <<'REC'
{"sweep": "sweep-0123456789ab", "name": "rep", "mode": "grid",
 "axes": [{"key": "train.optimizer.lr", "values": [0.05, 0.1]},
          {"key": "resources.ranks_per_node", "values": [1, 2]}],
 "points": [
  {"params": {"train.optimizer.lr": 0.05, "resources.ranks_per_node": 1}, "run": "aaaaaaaaaaaa"},
  {"params": {"train.optimizer.lr": 0.05, "resources.ranks_per_node": 2}, "run": "bbbbbbbbbbbb"},
  {"params": {"train.optimizer.lr": 0.1, "resources.ranks_per_node": 1}, "run": "cccccccccccc"}],
 "arrays": []}
REC
	cd "$W"
	run -0 "$HPT" report rep
	[[ "${lines[1]}" == '  0 {"train.optimizer.lr":0.05,"resources.ranks_per_node":1}: test accuracy '*", 1 ranks" ]]
	[[ "${lines[2]}" == *", 2 ranks" ]]
	d=runs/rep/sweep-0123456789ab-report
	for c in final_accuracy_train_optimizer_lr final_loss_resources_ranks_per_node scaling efficiency loss; do
		[ "$(png_size "$d/$c.png")" = 960x540 ]
		grep -q "($c.png)" "$d/report.md"
	done
}

@test "report refuses a missing run, a bad --size and a directory it cannot write" {
	run -4 --separate-stderr "$HPT" report "$W/nothing"
	[[ "$stderr" == "hpctrain report: no run, sweep or job $W/nothing"* ]]
	mkdir -p "$W/empty" && touch "$W/empty/resolved.yaml"
	run -4 --separate-stderr "$HPT" report "$W/empty"
	[ "$stderr" = "hpctrain report: cannot open $W/empty/metrics.jsonl: No such file or directory" ]
	for s in 10x10 9000x100 800 800x abcxdef 800x450x2; do
		run -2 --separate-stderr "$HPT" report --size "$s" "$W/empty"
		[ "${stderr_lines[0]}" = "hpctrain report: --size: expected WxH, 200x150 to 8000x8000, got '$s'" ]
	done
	train_run "$W/ok" 0.05
	touch "$W/file"
	run -8 --separate-stderr "$HPT" report -o "$W/file/sub" "$W/ok"
	[[ "$stderr" == "hpctrain report: cannot create $W/file/sub"* ]]
}
